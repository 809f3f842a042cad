//! `brickform flows import`: an existing onboarding file becomes `sdp_meta_flow`
//! configuration, and applying that configuration renders an onboarding file set that says
//! the same thing (the round trip), for a file covering every key family.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{file_text, local_dump, run_ok};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

const ORIGINAL_ROOT: &str = "/Volumes/shop/conf/files/conf";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/flows_import/conf")
}

/// The rows with what their file references point at inlined, and unset keys dropped: what
/// sdp-meta makes of them, whatever the files are called.
fn meaning(rows: &[Value], read: &dyn Fn(&str) -> String) -> Vec<Value> {
    rows.iter()
        .map(|row| {
            let mut out = Map::new();
            for (k, v) in row.as_object().unwrap() {
                if v.is_null() {
                    continue;
                }
                let v = if k.contains("_data_quality_expectations_json_") {
                    serde_json::from_str(&read(v.as_str().unwrap())).unwrap()
                } else if k.starts_with("silver_transformation_json_") {
                    let entries: Vec<Value> =
                        serde_json::from_str(&read(v.as_str().unwrap())).unwrap();
                    let mut entry = entries
                        .into_iter()
                        .find(|e| e["target_table"] == row["silver_table"])
                        .unwrap_or(Value::Null);
                    if let Some(o) = entry.as_object_mut() {
                        o.remove("target_table");
                    }
                    entry
                } else {
                    v.clone()
                };
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        })
        .collect()
}

#[test]
fn an_imported_onboarding_file_applies_back_to_the_same_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let original = fixture().join("onboarding.json");
    let target = d.join("flows.bf.hcl");
    let out = run_ok(
        d,
        &[
            "flows",
            "import",
            original.to_str().unwrap(),
            "--out",
            target.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.is_empty(), "nothing on stdout with --out: {out}");
    let hcl = std::fs::read_to_string(d.join("flows.bf.hcl")).unwrap();
    // The expectations and transformations were found next to the file and inlined.
    assert!(hcl.contains("expect_or_quarantine"), "{hcl}");
    assert!(hcl.contains("select_exp"), "{hcl}");
    assert!(!hcl.contains("expectations_file"), "{hcl}");
    let names: Vec<&str> = hcl
        .lines()
        .filter_map(|l| l.strip_prefix("resource \"sdp_meta_flow\" \""))
        .map(|l| l.trim_end_matches("\" {"))
        .collect();
    assert_eq!(names.len(), 5, "{hcl}");

    let flows: Vec<String> = names.iter().map(|n| format!("sdp_meta_flow.{n}")).collect();
    std::fs::write(
        d.join("main.bf.hcl"),
        format!(
            r#"
provider "databricks" {{
  host = "local"
}}
resource "databricks_catalog" "shop" {{
  name          = "shop"
  force_destroy = true
}}
resource "databricks_schema" "conf" {{
  catalog_name = databricks_catalog.shop.name
  name         = "conf"
}}
resource "databricks_volume" "files" {{
  catalog_name = databricks_catalog.shop.name
  schema_name  = databricks_schema.conf.name
  name         = "files"
  volume_type  = "MANAGED"
}}
resource "sdp_meta_onboarding" "shop" {{
  volume_path      = databricks_volume.files.volume_path
  env              = "prod"
  database         = "shop.specs"
  flows            = [{}]
  sdp_meta_version = "0.1.0+pr267"
}}
"#,
            flows.join(", ")
        ),
    )
    .unwrap();
    let out = run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(out.contains("Apply complete!"), "{out}");

    let dump = local_dump(d);
    let rendered_path = format!("{ORIGINAL_ROOT}/onboarding.json");
    let rendered: Vec<Value> = serde_json::from_str(&file_text(&dump, &rendered_path)).unwrap();
    let before: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&original).unwrap()).unwrap();
    let read_original = |p: &str| {
        let rel = p
            .strip_prefix(ORIGINAL_ROOT)
            .unwrap()
            .trim_start_matches('/');
        std::fs::read_to_string(fixture().join(rel)).unwrap()
    };
    let read_rendered = |p: &str| file_text(&dump, p);
    let (a, b) = (
        meaning(&before, &read_original),
        meaning(&rendered, &read_rendered),
    );
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "flow {}", x["data_flow_id"]);
    }
    assert_eq!(a.len(), b.len());
}
