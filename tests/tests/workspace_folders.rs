//! Folders a notebook's or workspace file's create makes (its parent folders that did not
//! exist) are removed by destroy when nothing else is in them, so "0 left behind" is true;
//! folders that were there before stay, and a made folder that holds something else now is
//! kept and named.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use common::{served as bf, served_ok as bf_ok};

const CONFIG: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_notebook" "deep" {
  path           = "/Shared/bf_made/a/b/deep"
  language       = "PYTHON"
  content_base64 = base64encode("print(1)")
}
resource "databricks_notebook" "beside" {
  path           = "/Shared/bf_made/a/beside"
  language       = "PYTHON"
  content_base64 = base64encode("print(2)")
}
resource "databricks_workspace_file" "existing_folder" {
  path           = "/Shared/kept.txt"
  content_base64 = base64encode("x")
}
"#;

fn folders(serve: &Serve) -> Vec<String> {
    let dump = serve.dump();
    let mut out: Vec<String> = dump["workspace"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, o)| o["object_type"] == "DIRECTORY")
        .map(|(p, _)| p.clone())
        .filter(|p| p.starts_with("/Shared"))
        .collect();
    out.sort();
    out
}

#[test]
fn destroy_removes_the_folders_a_create_made_and_keeps_the_others() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let before = folders(&serve);
    assert!(before.contains(&"/Shared".to_string()), "{before:?}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        folders(&serve),
        [
            "/Shared",
            "/Shared/bf_made",
            "/Shared/bf_made/a",
            "/Shared/bf_made/a/b"
        ]
    );
    // An update of the content keeps what the create recorded. Its plan knows the
    // fingerprint of what the service will hold only after apply.
    std::fs::write(
        d.join("main.bf.hcl"),
        CONFIG.replace("print(1)", "print(10)"),
    )
    .unwrap();
    let plan: serde_json::Value =
        serde_json::from_str(&bf_ok(d, &serve, &["plan", "--json"])).unwrap();
    let change = plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "databricks_notebook.deep")
        .unwrap();
    assert_eq!(change["change"]["actions"], serde_json::json!(["update"]));
    assert_eq!(
        change["change"]["after_unknown"]["remote_fingerprint"], true,
        "{change}"
    );
    assert!(
        change["change"]["after"]
            .get("remote_fingerprint")
            .is_none(),
        "{change}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("3 destroyed, 0 left behind"), "{out}");
    assert_eq!(folders(&serve), before);
}

/// A create climbs from its folder up to the first folder that exists, asking for each, and
/// stops at the special folders every workspace has (`/Shared`, `/Users`) without asking.
#[test]
fn the_climb_stops_at_the_special_folders_without_asking() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let log = serve.ok("GET", "/__emulator/requests?method=GET", None);
    let mut asked: Vec<String> = log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "/api/2.0/workspace/get-status")
        .map(|r| r["query"].as_str().unwrap_or_default().replace("%2F", "/"))
        .filter(|q| !q.contains(".txt") && !q.ends_with("deep") && !q.ends_with("beside"))
        .collect();
    asked.sort();
    asked.dedup();
    assert!(!asked.is_empty(), "{log}");
    assert!(
        asked.iter().all(|q| q.starts_with("path=/Shared/bf_made")),
        "{asked:?}"
    );
}

/// A create into a folder that is there already makes none: the climb finds it at once,
/// and no `mkdirs` precedes the import.
#[test]
fn a_create_in_a_folder_that_exists_makes_no_folder() {
    const THERE: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_workspace_file" "in_team" {
  path           = "/Shared/team/x.txt"
  content_base64 = base64encode("x")
}
resource "databricks_workspace_file" "in_shared" {
  path           = "/Shared/y.txt"
  content_base64 = base64encode("y")
}
"#;
    let dir = config(&[("main.bf.hcl", THERE)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.ok(
        "POST",
        "/api/2.0/workspace/mkdirs",
        Some(serde_json::json!({ "path": "/Shared/team" })),
    );
    serve.ok("DELETE", "/__emulator/requests", None);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let log = serve.ok("GET", "/__emulator/requests", None);
    let sent: Vec<&str> = log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["path"].as_str())
        .collect();
    assert_eq!(
        sent.iter()
            .filter(|p| **p == "/api/2.0/workspace/import")
            .count(),
        2,
        "{sent:?}"
    );
    assert!(
        !sent.contains(&"/api/2.0/workspace/mkdirs"),
        "a folder that exists is not made again: {sent:?}"
    );
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("2 destroyed, 0 left behind"), "{out}");
    assert!(folders(&serve).contains(&"/Shared/team".to_string()));
}

#[test]
fn a_made_folder_that_holds_something_else_is_kept_and_named() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // Someone puts a file of their own into a folder brickform made.
    serve.ok(
        "POST",
        "/api/2.0/workspace/import",
        Some(
            serde_json::json!({"path": "/Shared/bf_made/a/theirs.py", "format": "AUTO",
            "content": "eA==", "overwrite": true}),
        ),
    );
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(
        out.contains("kept folder /Shared/bf_made/a, made by this object's create: it holds other objects now"),
        "{out}"
    );
    // b, which only brickform's notebook was in, is gone; a and what is above it stay.
    assert_eq!(
        folders(&serve),
        ["/Shared", "/Shared/bf_made", "/Shared/bf_made/a"]
    );
}

/// A declared folder's create makes the folders above it too; its destroy removes those
/// again, as a notebook's does, and plans of it stay empty.
#[test]
fn a_declared_folder_takes_the_folders_its_create_made_with_it() {
    const DIRS: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_directory" "deep" {
  path = "/Shared/bf_dirs/x/y"
}
resource "databricks_notebook" "inside" {
  path           = "${databricks_directory.deep.path}/n"
  language       = "PYTHON"
  content_base64 = base64encode("print(1)")
}
"#;
    let dir = config(&[("main.bf.hcl", DIRS)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let before = folders(&serve);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        folders(&serve),
        [
            "/Shared",
            "/Shared/bf_dirs",
            "/Shared/bf_dirs/x",
            "/Shared/bf_dirs/x/y"
        ]
    );
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    let text = state.to_string();
    assert!(
        text.contains(r#""created_folders":["/Shared/bf_dirs","/Shared/bf_dirs/x"]"#),
        "{text}"
    );
    assert!(
        text.contains(r#""created_folders":[]"#),
        "the notebook made none: {text}"
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("2 destroyed, 0 left behind"), "{out}");
    assert_eq!(folders(&serve), before);
}
