//! Drift and import against `brickform local serve` running as a separate process: objects
//! changed, deleted or made outside brickform (plain HTTP calls, as curl would make them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, every_kind, every_kind_objects, objects, run};
use serde_json::{Value, json};
use std::path::Path;

const TOKEN: (&str, &str) = ("DATABRICKS_TOKEN", "e2e-token");

/// Runs brickform against the served workspace.
fn bf(d: &Path, serve: &Serve, args: &[&str]) -> (i32, String, String) {
    let host = format!("host={}", serve.url);
    let mut a: Vec<&str> = args.to_vec();
    if !matches!(args.first(), Some(&"state") | Some(&"output")) {
        a.extend(["--var", &host]);
    }
    run(d, &a, &[TOKEN])
}

fn bf_ok(d: &Path, serve: &Serve, args: &[&str]) -> String {
    let (code, out, err) = bf(d, serve, args);
    assert_eq!(code, 0, "brickform {args:?}\n{out}\n{err}");
    out
}

fn put_file(serve: &Serve, path: &str, bytes: &[u8]) {
    let (s, body) = common::http(
        "PUT",
        &format!("{}/api/2.0/fs/files{path}?overwrite=true", serve.url),
        Some(bytes),
        "application/octet-stream",
    );
    assert!(
        s < 300,
        "PUT {path}: {s} {}",
        String::from_utf8_lossy(&body)
    );
}

fn b64(s: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn field<'a>(change: &'a Value, name: &str) -> &'a Value {
    change["change"]["fields"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["path"] == json!([name])))
        .unwrap_or_else(|| panic!("no field {name} in {change}"))
}

fn change<'a>(list: &'a Value, address: &str) -> &'a Value {
    list.as_array()
        .and_then(|l| l.iter().find(|c| c["address"] == address))
        .unwrap_or_else(|| panic!("{address} not in {list}"))
}

#[test]
fn changes_made_outside_are_shown_with_before_live_after_and_put_back() {
    let dir = config(&[("main.bf.hcl", &every_kind("drift"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let made = objects(&serve.dump());
    assert_eq!(made, every_kind_objects("drift"));
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // Outside brickform: a comment changed, a connection deleted, a volume file and a
    // notebook overwritten.
    serve.ok(
        "PATCH",
        "/api/2.1/unity-catalog/catalogs/drift_cat",
        Some(json!({"comment": "changed by hand"})),
    );
    serve.ok(
        "DELETE",
        "/api/2.1/unity-catalog/connections/drift_pg",
        None,
    );
    let file = "/Volumes/drift_cat/raw/landing/in/data.csv";
    put_file(&serve, file, b"id,name\n666,tampered\n");
    let notebook = "/Users/local-user@brickform.local/drift/etl";
    serve.ok(
        "POST",
        "/api/2.0/workspace/import",
        Some(
            json!({"path": notebook, "format": "SOURCE", "language": "PYTHON",
            "content": b64("print('hacked')\n"), "overwrite": true}),
        ),
    );

    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    let drift = plan.split("─────").next().unwrap_or_default().to_string();
    assert!(drift.contains("changed outside of brickform"), "{plan}");
    for a in [
        "databricks_catalog.c",
        "databricks_file.f",
        "databricks_notebook.nb",
    ] {
        assert!(drift.contains(&format!("# {a} has changed")), "{a}\n{plan}");
    }
    assert!(
        drift.contains("~ comment = \"one\" -> \"changed by hand\""),
        "{plan}"
    );
    assert!(
        drift.contains("# databricks_connection.pg has been deleted"),
        "{plan}"
    );
    assert!(
        plan.contains(
            "~ comment = \"changed by hand\" -> \"one\" # drift: changed outside brickform"
        ),
        "{plan}"
    );
    assert!(
        plan.contains("# databricks_connection.pg will be created (deleted outside brickform)"),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 1 to add, 3 to change, 0 to destroy."),
        "{plan}"
    );
    for a in ["databricks_file.f", "databricks_notebook.nb"] {
        assert!(
            plan.contains(&format!("# {a} will be updated in-place")),
            "{a}\n{plan}"
        );
    }

    // The JSON plan carries before (the value now), live and after for each drifted field.
    let (code, out, err) = bf(d, &serve, &["plan", "--json"]);
    assert_eq!(code, 0, "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    let c = change(&j["resource_changes"], "databricks_catalog.c");
    assert_eq!(c["change"]["actions"], json!(["update"]));
    let f = field(c, "comment");
    assert_eq!(
        (&f["before"], &f["live"], &f["after"], &f["reason"]),
        (
            &json!("changed by hand"),
            &json!("changed by hand"),
            &json!("one"),
            &json!("drift")
        ),
        "{c}"
    );
    let f = field(
        change(&j["resource_changes"], "databricks_file.f"),
        "content_sha256",
    );
    assert_eq!(f["reason"], "drift", "{f}");
    assert_ne!(f["live"], f["after"], "{f}");
    let pg = change(&j["resource_changes"], "databricks_connection.pg");
    assert_eq!(pg["change"]["actions"], json!(["create"]), "{pg}");
    let drifted: Vec<&str> = j["resource_drift"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["address"].as_str())
        .collect();
    for a in [
        "databricks_catalog.c",
        "databricks_connection.pg",
        "databricks_file.f",
        "databricks_notebook.nb",
    ] {
        assert!(
            drifted.contains(&a),
            "{a} not in resource_drift {drifted:?}"
        );
    }

    // Apply puts everything back, and then nothing is left to do.
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(
        out.contains("Resources: 1 added, 3 changed, 0 destroyed."),
        "{out}"
    );
    let dump = serve.dump();
    assert_eq!(dump["catalogs"]["drift_cat"]["comment"], "one");
    assert_eq!(dump["files"][file]["content"], b64("id,name\n1,a\n"));
    assert_eq!(
        dump["workspace"][notebook]["content"],
        b64("print('etl')\n")
    );
    assert_eq!(objects(&dump), made, "no duplicate, nothing missing");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

fn uc_config() -> String {
    r#"variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "c" {
  name    = "imp_cat"
  comment = "made outside"
}

resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}

resource "databricks_volume" "v" {
  catalog_name = databricks_schema.s.catalog_name
  schema_name  = databricks_schema.s.name
  name         = "landing"
  volume_type  = "MANAGED"
}
"#
    .to_string()
}

fn make_uc_outside(serve: &Serve) {
    let uc = "/api/2.1/unity-catalog";
    serve.ok(
        "POST",
        &format!("{uc}/catalogs"),
        Some(json!({"name": "imp_cat", "comment": "made outside"})),
    );
    // Like brickform's own creates, without the auto-made `default` schema.
    serve.ok(
        "DELETE",
        &format!("{uc}/schemas/imp_cat.default?force=true"),
        None,
    );
    serve.ok(
        "POST",
        &format!("{uc}/schemas"),
        Some(json!({"catalog_name": "imp_cat", "name": "raw"})),
    );
    serve.ok(
        "POST",
        &format!("{uc}/volumes"),
        Some(json!({"catalog_name": "imp_cat", "schema_name": "raw", "name": "landing", "volume_type": "MANAGED"})),
    );
}

#[test]
fn import_blocks_adopt_existing_catalog_schema_and_volume() {
    let blocks = r#"
import {
  to = databricks_catalog.c
  id = "imp_cat"
}

import {
  to = databricks_schema.s
  id = "imp_cat.raw"
}

import {
  to = databricks_volume.v
  id = "imp_cat.raw.landing"
}
"#;
    let dir = config(&[("main.bf.hcl", &uc_config()), ("imports.bf.hcl", blocks)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    make_uc_outside(&serve);
    let before = objects(&serve.dump());

    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    for a in [
        "databricks_catalog.c",
        "databricks_schema.s",
        "databricks_volume.v",
    ] {
        assert!(
            plan.contains(&format!("# {a} will be imported")),
            "{a}\n{plan}"
        );
    }
    assert!(
        plan.contains("Plan: 3 to import, 0 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(
        out.contains("Apply complete! Resources: 3 imported, 0 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert_eq!(objects(&serve.dump()), before, "import made nothing new");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let list = bf_ok(d, &serve, &["state", "list"]);
    assert_eq!(
        list.lines().collect::<Vec<_>>(),
        [
            "databricks_catalog.c",
            "databricks_schema.s",
            "databricks_volume.v"
        ]
    );

    // Managed now: destroy removes them.
    std::fs::remove_file(d.join("imports.bf.hcl")).unwrap();
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

#[test]
fn import_command_adopts_every_kind() {
    let dir = config(&[("main.bf.hcl", &every_kind("imp"))]);
    let d = dir.path();
    // The objects are made by a first configuration in another directory, sharing the
    // workspace, then forgotten there: they exist, and no state knows them.
    let maker = config(&[("main.bf.hcl", &every_kind("imp"))]);
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(maker.path(), &serve, &["apply", "--auto-approve"]);
    let made = objects(&serve.dump());
    assert_eq!(made, every_kind_objects("imp"));

    let ids = [
        ("databricks_catalog.c", "imp_cat"),
        ("databricks_schema.s", "imp_cat.raw"),
        ("databricks_volume.v", "imp_cat.raw.landing"),
        (
            "databricks_file.f",
            "/Volumes/imp_cat/raw/landing/in/data.csv",
        ),
        ("databricks_connection.pg", "imp_pg"),
        (
            "databricks_notebook.nb",
            "/Users/local-user@brickform.local/imp/etl",
        ),
        ("databricks_workspace_file.wf", "/Shared/imp/conf.json"),
        ("databricks_secret_scope.sc", "imp-scope"),
        // The Terraform provider's form of a secret's import id.
        ("databricks_secret.k", "imp-scope|||api-key"),
    ];
    // An id not in the kind's form says which form it takes; a connection qualified by
    // another metastore is refused.
    for (addr, id, says) in [
        (
            "databricks_schema.s",
            "raw",
            "a databricks_schema is imported by its full name, CATALOG.NAME; got \"raw\"",
        ),
        (
            "databricks_secret.k",
            "imp-scope",
            "a secret is imported as SCOPE|KEY (or the Terraform provider's SCOPE|||KEY)",
        ),
        (
            "databricks_connection.pg",
            "00000000-0000-0000-0000-000000000000|imp_pg",
            "imp_pg is in metastore ",
        ),
    ] {
        let (code, out, err) = bf(d, &serve, &["import", addr, id]);
        assert_eq!(code, 1, "{addr}: {out}{err}");
        assert!(err.contains(says), "{addr}: {err}");
    }
    let metastore = made_metastore(&serve);
    let (code, out, err) = bf(
        d,
        &serve,
        &[
            "import",
            "databricks_connection.pg",
            &format!("{metastore}|imp_pg"),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    bf_ok(d, &serve, &["state", "rm", "databricks_connection.pg"]);
    for (addr, id) in ids {
        let out = bf_ok(d, &serve, &["import", addr, id]);
        assert!(out.contains("Import successful!"), "{addr}: {out}");
    }
    // A second import of the same address is refused; an unknown id is an error.
    let (code, _, err) = bf(d, &serve, &["import", "databricks_catalog.c", "imp_cat"]);
    assert_eq!(code, 1);
    assert!(err.contains("already managed"), "{err}");

    let list = bf_ok(d, &serve, &["state", "list"]);
    let shown = bf_ok(d, &serve, &["state", "show", "databricks_secret.k"]);
    assert!(
        shown
            .lines()
            .any(|l| l.trim_start().starts_with("id ") && l.ends_with("= \"imp-scope|api-key\"")),
        "the secret keeps brickform's id form: {shown}"
    );
    let mut listed: Vec<&str> = list.lines().collect();
    listed.sort_unstable();
    let mut want: Vec<&str> = ids.iter().map(|(a, _)| *a).collect();
    want.sort_unstable();
    assert_eq!(listed, want);

    // Nothing is created; the UC objects, the scope and the volume file's place match
    // their configuration. Content and write-only values cannot be compared with what was
    // imported, so those are written once. Nothing is replaced: the connection's
    // server-filled read_only is not a change, and a notebook configured as `etl.py` is the
    // notebook `etl` it was imported as.
    let (_, plan, err) = bf(d, &serve, &["plan"]);
    assert!(plan.contains("Plan: 0 to add"), "{plan}\n{err}");
    assert!(!plan.contains("must be replaced"), "{plan}");
    for a in [
        "databricks_catalog.c",
        "databricks_schema.s",
        "databricks_volume.v",
        "databricks_secret_scope.sc",
    ] {
        assert!(!plan.contains(&format!("# {a} ")), "{a}\n{plan}");
    }
    for a in [
        "databricks_file.f",
        "databricks_workspace_file.wf",
        "databricks_secret.k",
    ] {
        assert!(
            plan.contains(&format!("# {a} will be updated in-place")),
            "{a}\n{plan}"
        );
    }
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(objects(&serve.dump()), made, "no duplicate");

    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

/// The metastore the served workspace's catalogs are in.
fn made_metastore(serve: &Serve) -> String {
    let (status, body) = common::http_auth(
        "GET",
        &format!("{}/api/2.1/unity-catalog/catalogs/imp_cat", serve.url),
        None,
        "application/json",
        "e2e-token",
    );
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    v["metastore_id"].as_str().unwrap().to_string()
}

/// A notebook whose content `ignore_changes` covers, changed outside brickform: the plan
/// shows nothing (the hash derived from the content is kept with it), and an apply of an
/// unrelated change leaves the content as it was made outside.
#[test]
fn content_ignored_and_changed_outside_is_neither_shown_nor_written_back() {
    let src = |language: &str| {
        format!(
            r#"
variable "host" {{}}
provider "databricks" {{ host = var.host }}
resource "databricks_notebook" "nb" {{
  path           = "/Shared/ignored/etl"
  language       = "{language}"
  content_base64 = base64encode("print(1)\n")
  lifecycle {{
    ignore_changes = [content_base64]
  }}
}}
"#
        )
    };
    let dir = config(&[("main.bf.hcl", &src("PYTHON"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    serve.ok(
        "POST",
        "/api/2.0/workspace/import",
        Some(
            json!({"path": "/Shared/ignored/etl", "format": "SOURCE", "language": "PYTHON",
            "content": b64("print(48)\n"), "overwrite": true}),
        ),
    );
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "nothing to show\n{plan}\n{err}");
    let content = |serve: &Serve| {
        let (s, body) = serve.call(
            "GET",
            "/api/2.0/workspace/export?path=/Shared/ignored/etl&format=SOURCE",
            None,
        );
        assert_eq!(s, 200);
        body["content"].as_str().unwrap().to_string()
    };
    assert_eq!(content(&serve), b64("print(48)\n"));
    // Another change of the configuration (its content too) writes none of the content.
    std::fs::write(
        d.join("main.bf.hcl"),
        src("PYTHON").replace("print(1)", "print(2)"),
    )
    .unwrap();
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the content is ignored\n{plan}\n{err}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(content(&serve), b64("print(48)\n"));
}
