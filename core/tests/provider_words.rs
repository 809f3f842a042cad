//! `core` knows no provider: no word of a Databricks concept appears in its compiled code.
//!
//! The engine drives everything from the kinds' schemas and the provider interface; a
//! Databricks word in core's code means behaviour of one provider decided in the engine (a
//! type name matched, a setting read, an error message that only fits one provider's objects),
//! which belongs in the provider's own files. This test walks the module tree from
//! `src/lib.rs` as the compiler does, leaves out what only tests compile (`#[cfg(test)]`
//! items and the files of `#[cfg(test)] mod` declarations), and looks at every identifier and
//! every string literal, doc comments included (the compiler reads them as `#[doc = "…"]`
//! strings). Ordinary `//` comments are not part of the code and are not checked.

use std::path::{Path, PathBuf};

/// The words core has no use for, each a Databricks concept. Plurals count too.
const WORDS: &[(&str, &str)] = &[
    ("databricks", "the provider itself"),
    ("unity", "Unity Catalog, the provider's governance layer"),
    (
        "catalog",
        "a Unity Catalog securable (core's word for what it reads is configuration)",
    ),
    ("volume", "a Unity Catalog securable"),
    (
        "pipeline",
        "a Lakeflow declarative pipeline, a provider kind",
    ),
    ("lakeflow", "the provider's pipelines and jobs product"),
    ("notebook", "a workspace object the provider manages"),
    (
        "workspace",
        "the Databricks deployment the provider talks to",
    ),
    ("dbfs", "the provider's file system"),
    ("delta", "the provider's table format"),
    (
        "job",
        "a provider kind (core's concurrent units of work are nodes and instances)",
    ),
    ("cluster", "a provider's compute"),
    ("warehouse", "a SQL warehouse, a provider kind"),
    ("spark", "the provider's engine"),
    ("lakehouse", "the provider's product"),
    ("uc", "short for Unity Catalog"),
];

/// Where core uses one of the words for something generic, by file (relative to `src/`) and
/// word, with why. Keep it short: each entry is a place a reader has to check by hand.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "lang/functions/format.rs",
        "cluster",
        "grapheme clusters, the unit Unicode counts characters in",
    ),
    (
        "lang/functions/strings.rs",
        "cluster",
        "grapheme clusters, the unit Unicode counts characters in",
    ),
];

#[test]
fn core_code_names_no_databricks_concept() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut found = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    walk_module(
        &src.join("lib.rs"),
        true,
        &mut files,
        &mut |file, word, line, text| {
            let rel = file
                .strip_prefix(&src)
                .unwrap_or(file)
                .display()
                .to_string();
            if let Some(i) = ALLOWED.iter().position(|(f, w, _)| *f == rel && *w == word) {
                used[i] = true;
                return;
            }
            found.push(format!("src/{rel}:{line}: `{word}` in {text:?}"));
        },
    );
    // The walk reaches the engine, the language and the plan renderers; a broken walk that
    // reads nothing would pass vacuously.
    assert!(
        files.len() > 30,
        "only {} files walked: {files:?}",
        files.len()
    );
    for f in [
        "engine/planner/managed.rs",
        "lang/environment.rs",
        "provider.rs",
    ] {
        assert!(files.iter().any(|p| p.ends_with(f)), "{f} not walked");
    }
    // An entry nothing needs any more would let the word back in unnoticed.
    let stale: Vec<_> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(entry, _)| entry)
        .collect();
    assert!(
        stale.is_empty(),
        "allow-list entries no longer needed: {stale:?}"
    );
    assert!(
        found.is_empty(),
        "core's code names Databricks concepts; move the behaviour into the provider or use a generic word (TYPE.NAME in messages):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_sees_identifiers_strings_and_docs_but_not_tests_or_comments() {
    let src = r##"
/// Reads a Databricks job.
fn read_pipeline() {
    // a catalog, in an ordinary comment
    let s = r#"the warehouse"#;
    let _ = format!("{s} volume");
}
#[cfg(test)]
mod tests {
    fn notebook() { let _ = "cluster"; }
}
#[cfg(test)]
fn dbfs() {}
"##;
    let mut words = Vec::new();
    scan_source(src, &mut |w, _, _| words.push(w.to_string()));
    assert_eq!(
        words,
        ["databricks", "job", "pipeline", "warehouse", "volume"]
    );
}

/// Walks the module in `path` and the non-test modules it declares; `dir_owner` says whether
/// the file owns its directory (`lib.rs`, `mod.rs`), where its child modules are.
fn walk_module(
    path: &Path,
    dir_owner: bool,
    files: &mut Vec<PathBuf>,
    report: &mut dyn FnMut(&Path, &str, usize, &str),
) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    files.push(path.to_path_buf());
    let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dir = if dir_owner {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.with_extension("")
    };
    let mut children = Vec::new();
    let kept = strip_tests(file.items, &dir, &mut children);
    let stream = kept
        .iter()
        .map(|i| quote::quote!(#i))
        .chain(file.attrs.iter().map(|a| quote::quote!(#a)))
        .collect::<proc_macro2::TokenStream>();
    scan_tokens(stream, &mut |w, line, t| report(path, w, line, t));
    for (child, owner) in children {
        walk_module(&child, owner, files, report);
    }
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The items without `#[cfg(test)]` ones (also inside inline modules and impl blocks); the
/// files of the kept `mod NAME;` declarations go to `children`.
fn strip_tests(
    items: Vec<syn::Item>,
    dir: &Path,
    children: &mut Vec<(PathBuf, bool)>,
) -> Vec<syn::Item> {
    let mut kept = Vec::new();
    for item in items {
        match item {
            syn::Item::Mod(m) if is_test(&m.attrs) => {}
            syn::Item::Mod(mut m) => {
                let name = m.ident.to_string();
                let at = m
                    .attrs
                    .iter()
                    .find(|a| a.path().is_ident("path"))
                    .and_then(|a| match &a.meta {
                        syn::Meta::NameValue(nv) => match &nv.value {
                            syn::Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Str(s),
                                ..
                            }) => Some(s.value()),
                            _ => None,
                        },
                        _ => None,
                    });
                match m.content.take() {
                    Some((brace, inner)) => {
                        let inner = strip_tests(inner, &dir.join(&name), children);
                        m.content = Some((brace, inner));
                    }
                    None => {
                        let file = match at {
                            Some(p) => (dir.join(p), false),
                            None if dir.join(format!("{name}.rs")).exists() => {
                                (dir.join(format!("{name}.rs")), false)
                            }
                            None => (dir.join(&name).join("mod.rs"), true),
                        };
                        children.push(file);
                    }
                }
                kept.push(syn::Item::Mod(m));
            }
            syn::Item::Impl(mut i) if !is_test(&i.attrs) => {
                i.items.retain(|ii| match ii {
                    syn::ImplItem::Fn(f) => !is_test(&f.attrs),
                    syn::ImplItem::Const(c) => !is_test(&c.attrs),
                    syn::ImplItem::Type(t) => !is_test(&t.attrs),
                    _ => true,
                });
                kept.push(syn::Item::Impl(i));
            }
            other => {
                let attrs: &[syn::Attribute] = match &other {
                    syn::Item::Const(i) => &i.attrs,
                    syn::Item::Enum(i) => &i.attrs,
                    syn::Item::Fn(i) => &i.attrs,
                    syn::Item::Impl(i) => &i.attrs,
                    syn::Item::Macro(i) => &i.attrs,
                    syn::Item::Static(i) => &i.attrs,
                    syn::Item::Struct(i) => &i.attrs,
                    syn::Item::Trait(i) => &i.attrs,
                    syn::Item::Type(i) => &i.attrs,
                    syn::Item::Use(i) => &i.attrs,
                    _ => &[],
                };
                if !is_test(attrs) {
                    kept.push(other);
                }
            }
        }
    }
    kept
}

/// Scans a source text (for the scanner's own test).
fn scan_source(text: &str, report: &mut dyn FnMut(&str, usize, &str)) {
    let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{e}"));
    let mut children = Vec::new();
    let kept = strip_tests(file.items, Path::new("."), &mut children);
    let stream = kept
        .iter()
        .map(|i| quote::quote!(#i))
        .collect::<proc_macro2::TokenStream>();
    scan_tokens(stream, report);
}

/// Reports each forbidden word of each identifier and string literal, with its line.
fn scan_tokens(stream: proc_macro2::TokenStream, report: &mut dyn FnMut(&str, usize, &str)) {
    for tree in stream {
        match tree {
            proc_macro2::TokenTree::Group(g) => scan_tokens(g.stream(), report),
            proc_macro2::TokenTree::Ident(i) => {
                let text = i.to_string();
                check_text(&text, i.span().start().line, report);
            }
            proc_macro2::TokenTree::Literal(l) => {
                let text = match syn::parse_str::<syn::LitStr>(&l.to_string()) {
                    Ok(s) => s.value(),
                    Err(_) => continue,
                };
                check_text(&text, l.span().start().line, report);
            }
            proc_macro2::TokenTree::Punct(_) => {}
        }
    }
}

/// The words of a text: runs of letters and digits, split again at lower-to-upper case
/// changes (`DatabricksJob` is two words), lower-cased.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        let mut word = String::new();
        let mut prev_lower = false;
        for c in run.chars() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

fn check_text(text: &str, line: usize, report: &mut dyn FnMut(&str, usize, &str)) {
    for w in words(text) {
        let singular = w.strip_suffix('s').unwrap_or(&w);
        if let Some((word, _)) = WORDS
            .iter()
            .find(|(word, _)| *word == w || *word == singular)
        {
            report(word, line, text);
        }
    }
}
