//! Dependencies between the modules of a crate point one way. The Databricks provider's
//! top-level modules form no cycle (the kinds do not depend on the commands' feature
//! modules: adoption is a capability a kind offers through types that live with the kinds,
//! `resources/adoption.rs`); and core's top-level modules form no cycle either: values,
//! sources and diagnostics, the change types and the provider interface lie below the
//! language and the plan, which the engine uses.
//!
//! A module depends on another when its code (tests cut off, comments left out) names
//! `crate::OTHER`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's code: what comes before its tests, without comments.
fn code(text: &str) -> String {
    text.split("#[cfg(test)]")
        .next()
        .unwrap_or(text)
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules of the crate in `src` and the ones each names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let top = |p: &Path| -> Option<String> {
        let rel = p.strip_prefix(src).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?.to_string();
        let name = first.trim_end_matches(".rs").to_string();
        (name != "lib" && name != "main").then_some(name)
    };
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top(f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let re = regex::Regex::new(r"crate::([a-z_]+)").unwrap();
    for f in &files {
        let Some(from) = top(f) else { continue };
        let text = code(&std::fs::read_to_string(f).unwrap());
        let deps = graph.entry(from.clone()).or_default();
        for c in re.captures_iter(&text) {
            let to = c[1].to_string();
            if to != from && modules.contains(&to) {
                deps.insert(to);
            }
        }
    }
    graph
}

/// The groups of modules that depend on each other (Tarjan's strongly connected
/// components of more than one module).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        out: Vec<BTreeSet<String>>,
    }
    impl<'g> T<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.g.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.stack.contains(&w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    comp.insert(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn the_providers_modules_form_no_cycle() {
    let graph = module_graph(&root().join("providers/databricks/src"));
    assert!(graph["adopt"].contains("resources"), "{graph:?}");
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "modules that depend on each other: {found:?}"
    );
}

#[test]
fn cores_modules_form_no_cycle() {
    let graph = module_graph(&root().join("core/src"));
    // The language decodes by the providers' schemas, the plan diffs by them; neither the
    // provider interface nor the language may lean back on what stands above it.
    assert!(graph["lang"].contains("provider"), "{graph:?}");
    assert!(graph["plan"].contains("provider"), "{graph:?}");
    assert!(!graph["provider"].contains("lang"), "{graph:?}");
    assert!(!graph["provider"].contains("plan"), "{graph:?}");
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "modules that depend on each other: {found:?}"
    );
}

#[test]
fn a_cycle_is_found_and_one_way_dependencies_are_not() {
    let g = |edges: &[(&str, &str)]| {
        let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            m.entry(a.to_string()).or_default().insert(b.to_string());
            m.entry(b.to_string()).or_default();
        }
        m
    };
    assert!(cycles(&g(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    let found = cycles(&g(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].len(), 3);
    assert_eq!(
        code("use crate::x; // crate::y\n// crate::z\n#[cfg(test)]\nuse crate::w;"),
        "use crate::x; // crate::y"
    );
}
