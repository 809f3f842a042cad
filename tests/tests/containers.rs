//! A delete or replace of a container (a volume, a catalog or schema with force_destroy, a
//! folder deleted recursively) names everything it takes with it: the managed objects inside
//! are planned with it, the live objects this state does not manage are counted and listed,
//! and a saved plan is refused when those changed since it was made.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use serde_json::{Value, json};

use common::{served as bf, served_ok as bf_ok};

const CONFIG: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_catalog" "c" {
  name          = "cont_cat"
  force_destroy = true
}
resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}
resource "databricks_volume" "v" {
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s.name
  name         = "landing"
  volume_type  = "MANAGED"
}
# A literal path: the file lies in the volume without referring to it.
resource "databricks_file" "f" {
  content_base64 = base64encode("id\n1\n")
  path           = "/Volumes/cont_cat/raw/landing/in/x.csv"
}
"#;

fn put(serve: &Serve, path: &str) {
    let (s, body) = common::http_auth(
        "PUT",
        &format!("{}/api/2.0/fs/files{path}?overwrite=true", serve.url),
        Some(b"by hand"),
        "application/octet-stream",
        &serve.token,
    );
    assert!(s < 300, "{s} {}", String::from_utf8_lossy(&body));
}

fn resource<'a>(plan: &'a Value, address: &str) -> &'a Value {
    plan["resource_changes"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["address"] == address))
        .unwrap_or_else(|| panic!("{address} not in {plan}"))
}

#[test]
fn a_replaced_volume_takes_its_files_and_says_so() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    // The file is created after its volume although it does not refer to it.
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
    put(&serve, "/Volumes/cont_cat/raw/landing/notes.txt");

    let external = CONFIG.replace(
        "volume_type  = \"MANAGED\"",
        "volume_type  = \"EXTERNAL\"\n  storage_location = \"s3://bucket/landing\"",
    );
    std::fs::write(d.join("main.bf.hcl"), &external).unwrap();
    let out = bf_ok(d, &serve, &["plan"]);
    for line in [
        "# databricks_file.f must be replaced",
        "# (it lies in databricks_volume.v, which is replaced)",
        "# (deletes with it what lies inside: databricks_file.f)",
        "# (also deletes 1 object this state does not manage: /Volumes/cont_cat/raw/landing/notes.txt)",
        "Plan: 2 to add, 0 to change, 2 to destroy.",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    // What the service assigns the new volume changes from the old one's values, as in
    // Terraform; nothing the old volume has is shown as added.
    let lines: Vec<&str> = out.lines().map(str::trim).collect();
    assert!(
        lines.iter().any(|l| l.starts_with("~ id ")
            && l.ends_with("= \"cont_cat.raw.landing\" -> (known after apply)")),
        "{out}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("+ id ") || l.starts_with("+ full_name ")),
        "{out}"
    );
    let plan: Value = serde_json::from_str(&bf_ok(d, &serve, &["plan", "--json"])).unwrap();
    assert_eq!(
        resource(&plan, "databricks_volume.v")["change"]["deletes_contents"],
        json!({"managed": ["databricks_file.f"], "unmanaged": ["/Volumes/cont_cat/raw/landing/notes.txt"]})
    );
    let f = resource(&plan, "databricks_file.f");
    assert_eq!(
        f["action_reason"],
        json!("replace_because_container_replaced")
    );
    assert_eq!(f["change"]["container"], json!("databricks_volume.v"));

    // Something new in the volume after the plan: the saved plan no longer holds.
    let saved = d.join("replace.bin").display().to_string();
    bf_ok(d, &serve, &["plan", "-out", &saved]);
    put(&serve, "/Volumes/cont_cat/raw/landing/late.csv");
    let (code, out, err) = bf(d, &serve, &["apply", &saved]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("Saved plan is stale"), "{err}");
    assert!(err.contains("databricks_volume.v"), "{err}");
    let dump = serve.dump();
    assert!(dump.to_string().contains("late.csv"), "nothing was deleted");

    // Applied as planned anew: the managed file is there again, in the new volume.
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (s, _) = serve.call(
        "HEAD",
        "/api/2.0/fs/files/Volumes/cont_cat/raw/landing/in/x.csv",
        None,
    );
    assert_eq!(s, 200);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");

    // A targeted destroy of the volume takes the file that lies in it.
    let out = bf_ok(
        d,
        &serve,
        &[
            "destroy",
            "--target",
            "databricks_volume.v",
            "--auto-approve",
        ],
    );
    assert!(
        out.contains("Destroy complete! 2 destroyed, 2 left behind."),
        "{out}"
    );

    // Destroying the catalog (force_destroy) counts what it holds that nobody manages.
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    serve.ok(
        "POST",
        "/api/2.1/unity-catalog/schemas",
        Some(json!({"catalog_name": "cont_cat", "name": "scratch"})),
    );
    let out = bf_ok(d, &serve, &["plan", "--destroy"]);
    assert!(
        out.contains("# (also deletes 1 object this state does not manage: cont_cat.scratch)"),
        "{out}"
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

#[test]
fn a_secret_scope_delete_names_the_secrets_it_takes() {
    let dir = config(&[(
        "main.bf.hcl",
        r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_secret_scope" "app" {
  name = "app"
}
resource "databricks_secret" "pw" {
  scope        = databricks_secret_scope.app.name
  key          = "db_password"
  string_value = "s3cret"
}
"#,
    )]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // A secret put by hand is not this state's; the scope's delete takes it too.
    serve.ok(
        "POST",
        "/api/2.0/secrets/put",
        Some(json!({"scope": "app", "key": "by_hand", "string_value": "x"})),
    );
    let out = bf_ok(d, &serve, &["plan", "--destroy", "-no-color"]);
    assert!(
        out.contains("# (deletes with it what lies inside: databricks_secret.pw)"),
        "{out}"
    );
    assert!(
        out.contains(
            "# (also deletes 1 object this state does not manage: secret by_hand in scope app)"
        ),
        "{out}"
    );
    let json = bf_ok(d, &serve, &["plan", "--destroy", "--json"]);
    let plan: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        resource(&plan, "databricks_secret_scope.app")["change"]["deletes_contents"],
        json!({"managed": ["databricks_secret.pw"], "unmanaged": ["secret by_hand in scope app"]})
    );
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("2 destroyed"), "{out}");
}

#[test]
fn a_folder_that_holds_what_the_state_does_not_manage_says_what_and_how_to_go_on() {
    let src = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_directory" "d" {
  path = "/Shared/kept"
}
resource "databricks_notebook" "n" {
  path           = "${databricks_directory.d.path}/etl"
  language       = "PYTHON"
  content_base64 = base64encode("print(1)\n")
}
"#;
    let dir = config(&[("main.bf.hcl", src)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    serve.ok(
        "POST",
        "/api/2.0/workspace/import",
        Some(
            json!({"path": "/Shared/kept/handmade", "format": "SOURCE", "language": "PYTHON",
            "content": "cHJpbnQoMikK", "overwrite": true}),
        ),
    );
    let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("folder /Shared/kept is not empty: it holds what this state does not manage (/Shared/kept/handmade)"),
        "{err}"
    );
    assert!(err.contains("set delete_recursive = true"), "{err}");
    assert!(!err.contains("another change to this object"), "{err}");
    // The notebook the state managed went; what it did not stays.
    let listed = serve.ok("GET", "/api/2.0/workspace/list?path=/Shared/kept", None);
    let paths: Vec<&str> = listed["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["path"].as_str())
        .collect();
    assert_eq!(paths, ["/Shared/kept/handmade"]);
}

/// A schema replaced because something its `replace_triggered_by` names changed (its own
/// configuration unchanged, so nothing inside it would be replaced by its diff) still cannot
/// be deleted with a volume in it: the volume is replaced with it, and the apply succeeds.
#[test]
fn what_lies_in_a_container_replaced_by_a_trigger_is_replaced_with_it() {
    let src = |comment: &str| {
        format!(
            r#"
variable "host" {{}}
provider "databricks" {{ host = var.host }}
resource "databricks_catalog" "c" {{
  name    = "trig_cat"
  comment = "{comment}"
}}
resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.name
  name         = "raw"
  lifecycle {{
    replace_triggered_by = [databricks_catalog.c]
  }}
}}
resource "databricks_volume" "v" {{
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s.name
  name         = "landing"
  volume_type  = "MANAGED"
}}
"#
        )
    };
    let dir = config(&[("main.bf.hcl", &src("one"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // A comment the configuration leaves out, given outside brickform: the old volume
    // keeps it, the new one (made as configured) has none, and the plan says so.
    serve.ok(
        "PATCH",
        "/api/2.1/unity-catalog/volumes/trig_cat.raw.landing",
        Some(json!({"comment": "by hand"})),
    );
    std::fs::write(d.join("main.bf.hcl"), src("two")).unwrap();
    let plan: Value = serde_json::from_str(&bf_ok(d, &serve, &["plan", "--json"])).unwrap();
    assert_eq!(
        resource(&plan, "databricks_schema.s")["action_reason"],
        json!("replace_by_triggers")
    );
    let v = resource(&plan, "databricks_volume.v");
    assert_eq!(
        v["action_reason"],
        json!("replace_because_container_replaced"),
        "{v}"
    );
    // The new volume's storage location is the service's to assign, not the old one's.
    assert_eq!(
        v["change"]["after_unknown"]["storage_location"],
        json!(true),
        "{v}"
    );
    assert_eq!(v["change"]["before"]["comment"], json!("by hand"), "{v}");
    assert_eq!(v["change"]["after"]["comment"], json!(null), "{v}");
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("2 added, 1 changed, 2 destroyed"), "{out}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
    let volume = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/volumes/trig_cat.raw.landing",
        None,
    );
    assert_eq!(volume.get("comment"), None, "{volume}");
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

/// `prevent_destroy` holds when the object would go with its container: a volume that must
/// stay stops a plan that replaces its schema, naming the volume and why.
#[test]
fn prevent_destroy_stops_the_replacement_of_what_holds_the_object() {
    let src = |comment: &str| {
        format!(
            r#"
variable "host" {{}}
provider "databricks" {{ host = var.host }}
resource "databricks_catalog" "c" {{
  name    = "keep_cat"
  comment = "{comment}"
}}
resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.name
  name         = "raw"
  lifecycle {{
    replace_triggered_by = [databricks_catalog.c]
  }}
}}
resource "databricks_volume" "v" {{
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s.name
  name         = "landing"
  volume_type  = "MANAGED"
  lifecycle {{
    prevent_destroy = true
  }}
}}
"#
        )
    };
    let dir = config(&[("main.bf.hcl", &src("one"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    std::fs::write(d.join("main.bf.hcl"), src("two")).unwrap();
    let (code, out, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("databricks_volume.v has lifecycle.prevent_destroy"),
        "{err}"
    );
    assert!(
        err.contains("databricks_volume.v lies in databricks_schema.s, which this plan replaces"),
        "{err}"
    );
    // Nothing was touched: the volume is still there.
    serve.ok(
        "GET",
        "/api/2.1/unity-catalog/volumes/keep_cat.raw.landing",
        None,
    );
}

/// A catalog deleted with force_destroy takes its schemas' registered models: one this
/// state manages is planned with it, one made elsewhere is counted and listed.
#[test]
fn a_forced_catalog_delete_names_the_registered_models_it_takes() {
    let text = format!(
        "{CONFIG}\nresource \"databricks_registered_model\" \"m\" {{\n  catalog_name = databricks_catalog.c.name\n  schema_name  = databricks_schema.s.name\n  name         = \"churn\"\n}}\n"
    );
    let dir = config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // Made elsewhere, in a schema this state does not manage either.
    serve.ok(
        "POST",
        "/api/2.1/unity-catalog/schemas",
        Some(json!({"catalog_name": "cont_cat", "name": "other"})),
    );
    serve.ok(
        "POST",
        "/api/2.1/unity-catalog/models",
        Some(json!({"catalog_name": "cont_cat", "schema_name": "other", "name": "by_hand"})),
    );
    let plan: Value =
        serde_json::from_str(&bf_ok(d, &serve, &["plan", "--destroy", "--json"])).unwrap();
    let deletes = &resource(&plan, "databricks_catalog.c")["change"]["deletes_contents"];
    assert!(
        deletes["managed"]
            .as_array()
            .unwrap()
            .contains(&json!("databricks_registered_model.m")),
        "{deletes}"
    );
    assert!(
        deletes["unmanaged"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u.as_str().unwrap().contains("cont_cat.other.by_hand")),
        "{deletes}"
    );
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("destroyed"), "{out}");
    assert_eq!(serve.dump()["models"], json!({}));
}

/// A gateway's delete removes the staging volume the service made for it; a schema deleted
/// in the same plan must not count that volume among what this state does not manage, while
/// a volume made by hand beside it still counts.
#[test]
fn a_gateway_s_staging_volume_is_not_counted_as_unmanaged() {
    let dir = config(&[(
        "main.bf.hcl",
        r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_catalog" "c" {
  name          = "gw_cat"
  force_destroy = true
}
resource "databricks_schema" "stage" {
  catalog_name  = databricks_catalog.c.name
  name          = "stage"
  force_destroy = true
}
resource "databricks_connection" "sql" {
  name            = "gw_erp"
  connection_type = "SQLSERVER"
  options = {
    host     = "erp.example.com"
    port     = "1433"
    user     = "reader"
    password = "local-only"
  }
}
resource "databricks_ingestion_gateway" "gw" {
  name                    = "gw_gateway"
  connection_name         = databricks_connection.sql.name
  gateway_storage_catalog = databricks_catalog.c.name
  gateway_storage_schema  = databricks_schema.stage.name
}
"#,
    )]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.ok(
        "POST",
        "/__emulator/behaviours",
        Some(json!({"gateway_staging_volume": true})),
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let volumes = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/volumes?catalog_name=gw_cat&schema_name=stage",
        None,
    );
    let staging: Vec<&str> = volumes["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(
        staging.len(),
        1,
        "the gateway made its staging volume: {volumes}"
    );
    assert!(staging[0].starts_with("__databricks_ingestion_gateway_staging_data"));
    serve.ok(
        "POST",
        "/api/2.1/unity-catalog/volumes",
        Some(json!({"catalog_name": "gw_cat", "schema_name": "stage", "name": "by_hand", "volume_type": "MANAGED"})),
    );
    let plan: Value =
        serde_json::from_str(&bf_ok(d, &serve, &["plan", "--destroy", "--json"])).unwrap();
    assert_eq!(
        resource(&plan, "databricks_schema.stage")["change"]["deletes_contents"],
        json!({"managed": [], "unmanaged": ["gw_cat.stage.by_hand"]})
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}
