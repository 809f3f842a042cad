//! The workspace's metastore end to end against `brickform local serve`: the metastore
//! assignment (with the Terraform provider's `WORKSPACE_ID|METASTORE_ID` id), the default
//! namespace setting with the etag the Settings API requires (a write by someone else in
//! between makes brickform retry once with the fresh etag, as the provider does), both
//! imported with the provider's ids, the metastore data sources, grants on the metastore,
//! and destroy: deleting the
//! setting puts back the assignment's default catalog, deleting the assignment unassigns
//! the metastore.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, served_plan_is_empty};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};
use std::path::Path;

const VARIABLES: &str = r#"
variable "host" {
  type = string
}
"#;

const SETTING: &str = "/api/2.0/settings/types/default_namespace_ws/names/default";
const CURRENT: &str = "/api/2.1/unity-catalog/current-metastore-assignment";

fn main_config(workspace_id: i64, namespace: Option<&str>) -> String {
    let setting = namespace.map_or(String::new(), |catalog| {
        format!(
            r#"
resource "databricks_default_namespace_setting" "ns" {{
  namespace {{
    value = databricks_catalog.{catalog}.name
  }}
}}
"#
        )
    });
    format!(
        r#"
provider "databricks" {{
  host = var.host
}}

data "databricks_metastore" "local" {{
  name = "brickform-local"
}}

data "databricks_current_metastore" "this" {{}}

resource "databricks_metastore_assignment" "this" {{
  workspace_id = {workspace_id}
  metastore_id = data.databricks_metastore.local.metastore_id
}}

resource "databricks_grants" "metastore" {{
  metastore = data.databricks_metastore.local.metastore_id
  grant {{
    principal  = "data-engineers"
    privileges = ["CREATE_CATALOG", "CREATE_EXTERNAL_LOCATION"]
  }}
}}

resource "databricks_catalog" "sales" {{
  name = "sales"
}}

resource "databricks_catalog" "finance" {{
  name = "finance"
}}
{setting}
output "current_metastore" {{
  value = data.databricks_current_metastore.this.id
}}
"#
    )
}

fn write(d: &Path, main: &str) {
    std::fs::write(d.join("main.bf.hcl"), main).unwrap();
}

/// Someone else's write of the default namespace (with the etag they read).
fn write_elsewhere(serve: &Serve, value: &str) {
    let etag = serve.ok("GET", SETTING, None)["etag"].clone();
    serve.ok(
        "PATCH",
        SETTING,
        Some(json!({
            "allow_missing": true,
            "field_mask": "namespace.value",
            "setting": {"etag": etag, "setting_name": "default", "namespace": {"value": value}},
        })),
    );
}

/// The statuses the workspace answered `method` calls of the setting with, in order.
fn setting_statuses(serve: &Serve, method: &str) -> Vec<Value> {
    let log = serve.ok(
        "GET",
        &format!("/__emulator/requests?method={method}&path={SETTING}"),
        None,
    );
    log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].clone())
        .collect()
}

fn default_catalog(serve: &Serve) -> Value {
    serve.ok("GET", CURRENT, None)["default_catalog_name"].clone()
}

#[test]
fn assignment_and_default_namespace_apply_retry_on_a_stale_etag_import_and_destroy() {
    let dir = config(&[("variables.bf.hcl", VARIABLES)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("data-engineers");
    let current = serve.ok("GET", CURRENT, None);
    let ws = current["workspace_id"].as_i64().unwrap();
    let metastore = current["metastore_id"].as_str().unwrap().to_string();
    // A new workspace: assigned, main its default catalog, the setting never set.
    assert_eq!(current["default_catalog_name"], "main");
    let (status, body) = serve.call("GET", SETTING, None);
    assert_eq!(status, 404, "{body}");
    assert!(body["details"][0]["metadata"]["etag"].is_string(), "{body}");

    // Assigned (again: PUT overwrites) and the default namespace set to a catalog.
    write(d, &main_config(ws, Some("sales")));
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 5 added"), "{out}");
    // Grants on the metastore, by its id.
    let grants = serve.ok(
        "GET",
        &format!("/api/2.1/unity-catalog/permissions/metastore/{metastore}"),
        None,
    );
    assert_eq!(
        grants["privilege_assignments"][0]["privileges"],
        json!(["CREATE_CATALOG", "CREATE_EXTERNAL_LOCATION"])
    );
    assert_eq!(default_catalog(&serve), "sales");
    let setting = serve.ok("GET", SETTING, None);
    assert_eq!(setting["namespace"]["value"], "sales");
    served_plan_is_empty(d, &serve);
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    let text = state.to_string();
    assert!(text.contains(&format!("{ws}|{metastore}")), "{text}");
    assert!(
        text.contains("\"current_metastore\"") && text.matches(&metastore).count() >= 2,
        "{text}"
    );

    // Changed in place.
    write(d, &main_config(ws, Some("finance")));
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        plan.contains("databricks_default_namespace_setting.ns will be updated in-place"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(default_catalog(&serve), "finance");
    served_plan_is_empty(d, &serve);

    // Someone else writes between brickform's read and its write: brickform's etag is
    // stale, the service answers 409 with the fresh one, and the write is retried with it.
    write(d, &main_config(ws, Some("sales")));
    write_elsewhere(&serve, "main");
    let before = setting_statuses(&serve, "PATCH").len();
    let out = bf_ok(d, &serve, &["apply", "--auto-approve", "--refresh=false"]);
    assert!(out.contains("1 changed"), "{out}");
    assert_eq!(default_catalog(&serve), "sales");
    assert_eq!(
        setting_statuses(&serve, "PATCH")[before..],
        [json!(409), json!(200)]
    );
    served_plan_is_empty(d, &serve);
    // A change outside brickform is drift, put back.
    write_elsewhere(&serve, "main");
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(plan.contains("\"main\" -> \"sales\""), "{plan}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(default_catalog(&serve), "sales");

    // Imported with the provider's ids.
    for address in [
        "databricks_metastore_assignment.this",
        "databricks_default_namespace_setting.ns",
    ] {
        bf_ok(d, &serve, &["state", "rm", address]);
    }
    let id = format!("{ws}|{metastore}");
    bf_ok(
        d,
        &serve,
        &["import", "databricks_metastore_assignment.this", &id],
    );
    bf_ok(
        d,
        &serve,
        &[
            "import",
            "databricks_default_namespace_setting.ns",
            "global",
        ],
    );
    served_plan_is_empty(d, &serve);
    // Another metastore's id imports nothing.
    bf_ok(
        d,
        &serve,
        &["state", "rm", "databricks_metastore_assignment.this"],
    );
    let other = format!("{ws}|00000000-0000-0000-0000-000000000000");
    let (code, out, err) = bf(
        d,
        &serve,
        &["import", "databricks_metastore_assignment.this", &other],
    );
    assert_ne!(code, 0, "{out}");
    bf_ok(
        d,
        &serve,
        &["import", "databricks_metastore_assignment.this", &id],
    );
    let _ = err;

    // The setting deleted (with a stale etag: retried once): the assignment's default
    // catalog is back.
    write(d, &main_config(ws, None));
    write_elsewhere(&serve, "finance");
    let out = bf_ok(d, &serve, &["apply", "--auto-approve", "--refresh=false"]);
    assert!(out.contains("1 destroyed"), "{out}");
    assert_eq!(setting_statuses(&serve, "DELETE"), [json!(409), json!(200)]);
    assert_eq!(default_catalog(&serve), "main");
    let (status, _) = serve.call("GET", SETTING, None);
    assert_eq!(status, 404);
    served_plan_is_empty(d, &serve);

    // Destroy unassigns the metastore and revokes the grants on it.
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    let dump = serve.dump();
    assert!(
        dump["grants"]
            .as_object()
            .is_none_or(|g| g.keys().all(|k| !k.starts_with("metastore:"))),
        "{}",
        dump["grants"]
    );
    let (status, body) = serve.call("GET", CURRENT, None);
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        body["message"],
        "No metastore assigned for the current workspace."
    );
}

#[test]
fn another_metastore_is_refused() {
    let dir = config(&[("variables.bf.hcl", VARIABLES)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let ws = serve.ok("GET", CURRENT, None)["workspace_id"]
        .as_i64()
        .unwrap();
    let main = format!(
        r#"
provider "databricks" {{
  host = var.host
}}

resource "databricks_metastore_assignment" "this" {{
  workspace_id = {ws}
  metastore_id = "00000000-0000-0000-0000-000000000000"
}}
"#
    );
    write(d, &main);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("Metastore '00000000-0000-0000-0000-000000000000' does not exist"),
        "{err}"
    );
    // The workspace keeps its assignment.
    assert_eq!(
        serve.ok("GET", CURRENT, None)["default_catalog_name"],
        "main"
    );
}

/// The metastore data sources answer `metastore_info` as the provider does, a block of
/// one, so the provider's own example (`metastore_info[0]`) reads it.
#[test]
fn metastore_info_is_indexed_as_the_provider_documents_it() {
    let dir = config(&[(
        "main.bf.hcl",
        r#"
provider "databricks" {
  host = "local"
}
data "databricks_current_metastore" "this" {
}
data "databricks_metastore" "by_id" {
  metastore_id = data.databricks_current_metastore.this.id
}
output "name" {
  value = data.databricks_current_metastore.this.metastore_info[0].name
}
output "same" {
  value = data.databricks_metastore.by_id.metastore_info[0].metastore_id == data.databricks_current_metastore.this.id
}
"#,
    )]);
    let d = dir.path();
    let out = common::run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(out.contains("same = true"), "{out}");
    assert!(out.contains("name = \""), "{out}");
}
