//! Kinds tell themselves apart by what they declare, not by name: no code of this provider
//! (tests aside) compares a string literal with the type name of one of its resource kinds
//! or data sources (`== "databricks_job"`, a match arm `"databricks_catalog" =>`,
//! `.contains(&"databricks_schema")`). Shared code that needs to know which kind it holds
//! asks the kind (a field of its spec, a capability of `DatabricksKind`); a kind that needs
//! another's name uses the constant that kind declares.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use brickform_databricks::Shared;
use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Where `text` (tests cut off) compares a string literal with something, and the literal.
fn compared_literals(text: &str) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let re = Regex::new(
        r#"(?:==|!=)\s*"([a-z0-9_]+)"|"([a-z0-9_]+)"\s*(?:=>|==|!=|\|)|\.(?:contains|starts_with|ends_with|eq_ignore_ascii_case)\(&?"([a-z0-9_]+)""#,
    )
    .unwrap();
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for c in re.captures_iter(line) {
            let lit = c.get(1).or(c.get(2)).or(c.get(3)).unwrap().as_str();
            out.push((n + 1, lit.to_string()));
        }
    }
    out
}

#[test]
fn no_code_compares_a_literal_with_a_kinds_type_name() {
    let shared = Arc::new(Shared::default());
    let names: Vec<&'static str> = brickform_databricks::resources::all(&shared)
        .iter()
        .map(|k| k.type_name())
        .chain(
            brickform_databricks::data::all(&shared)
                .iter()
                .map(|d| d.type_name()),
        )
        .collect();
    assert!(names.contains(&"databricks_job") && names.contains(&"databricks_catalog"));
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut found = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, lit) in compared_literals(&text) {
            if names.contains(&lit.as_str()) {
                found.push(format!("{}:{line}: \"{lit}\"", f.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "code tells kinds apart by name; ask the kind instead (see the module comment):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_finds_each_form_of_comparison() {
    let text = r#"
        if k.type_name() == "databricks_job" {}
        match t { "databricks_catalog" => 1, _ => 2 };
        names.contains(&"databricks_schema");
        let fine = "databricks_volume";
        #[cfg(test)]
        mod tests { fn f() { assert!(x == "databricks_pipeline"); } }
    "#;
    let lits: Vec<String> = compared_literals(text)
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert_eq!(
        lits,
        ["databricks_job", "databricks_catalog", "databricks_schema"]
    );
}
