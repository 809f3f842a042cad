//! The generated reference stays in step with the schemas it is generated from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[test]
fn resource_reference_is_current() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_ok(dir.path(), &["schema", "--markdown"], &[]);
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/resources.md"))
            .unwrap();
    assert!(
        out == committed,
        "docs/resources.md is out of date; regenerate it with `cargo run -- schema --markdown > docs/resources.md`"
    );
    assert!(out.contains("### `databricks_job`") && out.contains("matched by `task_key`"));
    assert!(
        out.contains(
            "`volume_type` (string; required; forces replacement; one of `MANAGED`, `EXTERNAL`)"
        ),
        "the reference lists allowed values"
    );
    assert!(out.contains("one of `CURRENT`, `PREVIEW` (any case)"));
}

#[test]
fn schema_json_lists_kinds_and_data_sources() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_ok(dir.path(), &["schema"], &[]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        j["resources"]["databricks_volume"]["attributes"]["volume_type"]["forces_replacement"],
        true
    );
    assert_eq!(
        j["resources"]["databricks_connection"]["attributes"]["options"]["sensitive"],
        true
    );
    assert_eq!(
        j["resources"]["databricks_volume"]["attributes"]["volume_type"]["allowed_values"],
        serde_json::json!(["MANAGED", "EXTERNAL"])
    );
    let task = &j["resources"]["databricks_job"]["blocks"]["task"]["block"];
    assert_eq!(
        task["attributes"]["run_if"]["allowed_values"][1], "ALL_DONE",
        "nested blocks list their values too"
    );
    assert!(j["resources"]["databricks_volume"]["attributes"]["name"]["allowed_values"].is_null());
    assert!(j["data_sources"]["databricks_current_user"].is_object());
    assert!(j["providers"]["databricks"]["attributes"]["host"].is_object());
}
