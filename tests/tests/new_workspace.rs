//! A new local workspace starts with what a new Databricks workspace has (the
//! `new_workspace_main` behaviour): the catalog `main` with its `default` schema, the user in
//! `users` and `admins`. Configurations use them without declaring them, destroy leaves them,
//! and `main` can be imported; a workspace asked for empty has none of it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, all_objects, built_ins, config, local_dump, objects, run, run_ok};
use serde_json::Value;

const USES_MAIN: &str = r#"
provider "databricks" {
  host = "local"
}

data "databricks_current_user" "me" {}

data "databricks_group" "admins" {
  display_name = "admins"
}

data "databricks_group" "users" {
  display_name = "users"
}

data "databricks_schemas" "main" {
  catalog_name = "main"
}

resource "databricks_schema" "raw" {
  catalog_name  = "main"
  name          = "raw"
  force_destroy = true
}

output "me" {
  value = data.databricks_current_user.me.id
}

output "admins" {
  value = data.databricks_group.admins.users
}

output "users" {
  value = data.databricks_group.users.users
}

# Whether the schemas a new `main` has are there; not the whole list, which `raw` changes
# once applied (so the next plan would show the output change).
output "main_has" {
  value = [
    contains(data.databricks_schemas.main.ids, "main.default"),
    contains(data.databricks_schemas.main.ids, "main.information_schema"),
  ]
}
"#;

fn outputs(dir: &std::path::Path) -> Value {
    serde_json::from_str(&run_ok(dir, &["output", "--json"], &[])).unwrap()
}

/// The output's value, whether `output --json` gives it bare or as `{value, ...}`.
fn value<'a>(outs: &'a Value, name: &str) -> &'a Value {
    let o = &outs[name];
    o.get("value").unwrap_or(o)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_new_workspace_has_main_and_its_admin_and_destroy_leaves_them() {
    let dir = config(&[("main.bf.hcl", USES_MAIN)]);
    let d = dir.path();
    run_ok(d, &["apply", "--auto-approve"], &[]);

    let dump = local_dump(d);
    let all = all_objects(&dump);
    for b in built_ins() {
        assert!(all.contains(&b), "a new workspace has {b}: {all:?}");
    }
    assert_eq!(dump["catalogs"]["main"]["catalog_type"], "MANAGED_CATALOG");
    assert_eq!(objects(&dump), ["schema:main.raw"]);

    let outs = outputs(d);
    let me = value(&outs, "me").as_str().unwrap().to_string();
    assert!(strings(value(&outs, "admins")).contains(&me), "{outs:#}");
    assert!(strings(value(&outs, "users")).contains(&me), "{outs:#}");
    assert_eq!(
        value(&outs, "main_has"),
        &serde_json::json!([true, true]),
        "main has default and information_schema"
    );

    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "the plan after apply is empty\n{out}{err}");

    run_ok(d, &["destroy", "--auto-approve"], &[]);
    let dump = local_dump(d);
    assert_eq!(objects(&dump), Vec::<String>::new());
    let all = all_objects(&dump);
    for b in built_ins() {
        assert!(all.contains(&b), "destroy left {b} alone: {all:?}");
    }
    assert!(dump["schemas"]["main.information_schema"].is_object());
}

#[test]
fn main_imports_by_its_name_and_plans_nothing() {
    let text = r#"
provider "databricks" {
  host = "local"
}

resource "databricks_catalog" "main" {
  name = "main"
}
"#;
    let dir = config(&[("main.bf.hcl", text)]);
    let d = dir.path();
    run_ok(d, &["import", "databricks_catalog.main", "main"], &[]);
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "the imported main has no changes\n{out}{err}");
}

/// `main` is made when the workspace is created, not whenever it is loaded: one dropped
/// stays dropped across restarts. And `--empty` creates a workspace without it.
#[test]
fn main_is_made_once_and_an_empty_workspace_is_asked_for() {
    let data = tempfile::tempdir().unwrap();
    {
        let serve = Serve::start(data.path(), &[]);
        let got = serve.ok("GET", "/api/2.1/unity-catalog/catalogs/main", None);
        assert_eq!(got["name"], "main");
        let assigned = serve.ok(
            "GET",
            "/api/2.1/unity-catalog/current-metastore-assignment",
            None,
        );
        assert_eq!(assigned["default_catalog_name"], "main");
        assert!(
            assigned["metastore_id"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        serve.ok(
            "DELETE",
            "/api/2.1/unity-catalog/catalogs/main?force=true",
            None,
        );
    }
    let serve = Serve::start(data.path(), &[]);
    let (status, _) = serve.call("GET", "/api/2.1/unity-catalog/catalogs/main", None);
    assert_eq!(status, 404, "a dropped main stays dropped after a restart");
    drop(serve);

    let empty = tempfile::tempdir().unwrap();
    let serve = Serve::start(empty.path(), &["--empty"]);
    let listed = serve.ok("GET", "/api/2.1/unity-catalog/catalogs", None);
    assert!(
        listed["catalogs"].as_array().is_none_or(Vec::is_empty),
        "{listed}"
    );
}
