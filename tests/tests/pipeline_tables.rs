//! Tables a pipeline defines live in their schemas, as on the real service: the local
//! workspace keeps them, a schema holding them refuses a delete without force, a pipeline's
//! delete is asynchronous (DELETING, then gone) and takes its tables with it, and brickform's
//! destroy waits for that before it deletes the schema.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};

fn config_text(schema_force: bool) -> String {
    format!(
        r#"
variable "host" {{}}
provider "databricks" {{ host = var.host }}
resource "databricks_catalog" "c" {{
  name = "pt_cat"
}}
resource "databricks_schema" "s" {{
  catalog_name  = databricks_catalog.c.name
  name          = "dest"
  force_destroy = {schema_force}
}}
resource "databricks_connection" "src" {{
  name            = "pt_src"
  connection_type = "POSTGRESQL"
  options = {{
    host     = "db.example.com"
    port     = "5432"
    user     = "app"
    password = "pw"
  }}
}}
resource "databricks_ingestion_gateway" "gw" {{
  name                    = "pt_gw"
  connection_name         = databricks_connection.src.name
  gateway_storage_catalog = databricks_catalog.c.name
  gateway_storage_schema  = databricks_schema.s.name
}}
resource "databricks_ingestion_pipeline" "ig" {{
  name                 = "pt_ig"
  catalog              = databricks_catalog.c.name
  schema               = databricks_schema.s.name
  continuous           = true
  ingestion_gateway_id = databricks_ingestion_gateway.gw.id
  object {{
    table {{
      source_catalog      = "db"
      source_schema       = "public"
      source_table        = "orders"
      destination_catalog = databricks_catalog.c.name
      destination_schema  = databricks_schema.s.name
    }}
  }}
  object {{
    table {{
      source_catalog      = "db"
      source_schema       = "public"
      source_table        = "customers"
      destination_catalog = databricks_catalog.c.name
      destination_schema  = databricks_schema.s.name
      destination_table   = "clients"
    }}
  }}
}}
"#
    )
}

/// Every table of `pt_cat.dest`, read one per page.
fn tables(serve: &Serve) -> Vec<String> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = serve.ok(
            "GET",
            &format!(
                "/api/2.1/unity-catalog/tables?catalog_name=pt_cat&schema_name=dest&max_results=1&page_token={token}"
            ),
            None,
        );
        let list = page["tables"].as_array().cloned().unwrap_or_default();
        assert!(list.len() <= 1, "{page}");
        out.extend(
            list.iter()
                .map(|t| t["full_name"].as_str().unwrap().to_string()),
        );
        match page["next_page_token"].as_str() {
            Some(t) => token = t.to_string(),
            None => return out,
        }
    }
}

fn pipeline_id(serve: &Serve, name: &str) -> String {
    let list = serve.ok("GET", "/api/2.0/pipelines", None);
    list["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p["pipeline_id"].as_str())
        .unwrap_or_else(|| panic!("no pipeline {name} in {list}"))
        .to_string()
}

#[test]
fn an_ingestion_pipeline_keeps_its_tables_in_its_schema_until_its_delete_has_finished() {
    let dir = config(&[("main.bf.hcl", &config_text(false))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--update-step-ms", "2000"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);

    // The continuous pipeline's update set up its destination tables.
    assert_eq!(
        tables(&serve),
        ["pt_cat.dest.clients", "pt_cat.dest.orders"]
    );
    let id = pipeline_id(&serve, "pt_ig");
    let t = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/tables/pt_cat.dest.orders",
        None,
    );
    assert_eq!(t["pipeline_id"], json!(id), "{t}");
    assert_eq!(t["table_type"], "STREAMING_TABLE", "{t}");
    assert_eq!(t["catalog_name"], "pt_cat", "{t}");

    // The schema refuses a delete without force, counting the tables.
    let (s, e) = serve.call("DELETE", "/api/2.1/unity-catalog/schemas/pt_cat.dest", None);
    assert_eq!(s, 400, "{e}");
    assert_eq!(e["error_code"], "SCHEMA_NOT_EMPTY", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("2 tables(s)"),
        "{e}"
    );

    // The pipeline's delete is asynchronous: DELETING first, with its tables still there.
    serve.ok("DELETE", &format!("/api/2.0/pipelines/{id}"), None);
    let p = serve.ok("GET", &format!("/api/2.0/pipelines/{id}"), None);
    assert_eq!(p["state"], "DELETING", "{p}");
    assert_eq!(tables(&serve).len(), 2);
    // Then gone, and its tables with it.
    serve.ok(
        "POST",
        "/__emulator/clock",
        Some(json!({"advance_ms": 5000})),
    );
    let (s, _) = serve.call("GET", &format!("/api/2.0/pipelines/{id}"), None);
    assert_eq!(s, 404);
    assert!(tables(&serve).is_empty());
    let (s, _) = serve.call(
        "GET",
        "/api/2.1/unity-catalog/tables/pt_cat.dest.orders",
        None,
    );
    assert_eq!(s, 404);
}

#[test]
fn destroy_waits_for_the_pipeline_to_go_before_it_deletes_the_schema_its_tables_are_in() {
    let dir = config(&[("main.bf.hcl", &config_text(false))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--update-step-ms", "1000"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(tables(&serve).len(), 2);
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("5 destroyed"), "{out}");
    let (s, _) = serve.call("GET", "/api/2.1/unity-catalog/catalogs/pt_cat", None);
    assert_eq!(s, 404);
    // It waited: the schema was never refused.
    let log = serve.ok(
        "GET",
        "/__emulator/requests?path=/api/2.1/unity-catalog/schemas/.*",
        None,
    );
    let refused: Vec<&Value> = log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] == "DELETE" && r["status"] != 200)
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
}

/// A pipeline deleted outside brickform reads DELETING for a while: the plan treats it as
/// gone (a create), not as there, so nothing is built on a pipeline that is disappearing.
#[test]
fn a_pipeline_deleted_outside_and_still_going_is_planned_as_gone() {
    let dir = config(&[("main.bf.hcl", &config_text(true))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--update-step-ms", "5000"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let id = pipeline_id(&serve, "pt_ig");
    serve.ok("DELETE", &format!("/api/2.0/pipelines/{id}"), None);
    let p = serve.ok("GET", &format!("/api/2.0/pipelines/{id}"), None);
    assert_eq!(p["state"], "DELETING", "{p}");
    let out = bf_ok(d, &serve, &["plan"]);
    assert!(
        out.contains("databricks_ingestion_pipeline.ig will be created"),
        "{out}"
    );
    assert!(out.contains("1 to add, 0 to change, 0 to destroy"), "{out}");
}

#[test]
fn a_schema_refused_once_as_not_empty_is_deleted_on_a_later_try() {
    let dir = config(&[("main.bf.hcl", &config_text(false))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"method": "DELETE", "path": "/api/2.1/unity-catalog/schemas/pt_cat.dest", "status": 400,
            "error_code": "SCHEMA_NOT_EMPTY",
            "message": "Schema 'pt_cat.dest' is not empty. The schema has 1 tables(s), 0 functions(s), 0 volumes(s): pt_cat.dest.orders"})),
    );
    let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("5 destroyed"), "{out}");
    let f = serve.ok("GET", "/__emulator/faults", None);
    assert_eq!(f["faults"][0]["fired"], 1, "{f}");
}

#[test]
fn a_forced_schema_delete_lists_the_tables_it_takes_that_this_state_does_not_manage() {
    let dir = config(&[("main.bf.hcl", &config_text(true))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // Someone else's pipeline writes a table into the managed schema.
    let other = serve.ok(
        "POST",
        "/api/2.0/pipelines",
        Some(json!({"name": "theirs", "catalog": "pt_cat", "schema": "dest", "continuous": true,
            "ingestion_definition": {"connection_name": "pt_src", "objects": [
                {"table": {"source_table": "events", "destination_catalog": "pt_cat", "destination_schema": "dest"}}]}})),
    );
    assert!(other["pipeline_id"].is_string(), "{other}");
    assert!(tables(&serve).contains(&"pt_cat.dest.events".to_string()));
    let out = bf_ok(d, &serve, &["plan", "--destroy"]);
    assert!(
        out.contains("also deletes 3 objects this state does not manage:"),
        "{out}"
    );
    for t in [
        "pt_cat.dest.events",
        "pt_cat.dest.orders",
        "pt_cat.dest.clients",
    ] {
        assert!(out.contains(t), "{t}\n{out}");
    }
}

fn spec_of(serve: &Serve, name: &str) -> Value {
    let id = pipeline_id(serve, name);
    serve.ok("GET", &format!("/api/2.0/pipelines/{id}"), None)["spec"].clone()
}

#[test]
fn fields_the_service_fills_survive_an_edit_and_plans_stay_empty() {
    let dir = config(&[("main.bf.hcl", &config_text(true))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "after create\n{out}\n{err}");
    assert!(!out.contains("drift"), "after create\n{out}");
    let gw = spec_of(&serve, "pt_gw")["gateway_definition"].clone();
    let ig = spec_of(&serve, "pt_ig")["ingestion_definition"].clone();
    assert!(gw["gateway_storage_name"].is_string(), "{gw}");
    assert!(gw["connection_id"].is_string(), "{gw}");
    assert_eq!(ig["connector_type"], "CDC", "{ig}");

    // A full-spec PUT of each, from a configuration that never set those fields.
    let edited = config_text(true)
        .replace(
            "  gateway_storage_schema  = databricks_schema.s.name\n",
            "  gateway_storage_schema  = databricks_schema.s.name\n  tags = { team = \"a\" }\n",
        )
        .replace(
            "  continuous           = true\n",
            "  continuous           = true\n  tags = { team = \"a\" }\n",
        );
    std::fs::write(d.join("main.bf.hcl"), edited).unwrap();
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("2 changed"), "{out}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "after the edit\n{out}\n{err}");
    assert!(!out.contains("drift"), "after the edit\n{out}");
    let gw2 = spec_of(&serve, "pt_gw")["gateway_definition"].clone();
    let ig2 = spec_of(&serve, "pt_ig")["ingestion_definition"].clone();
    assert_eq!(
        gw2["gateway_storage_name"], gw["gateway_storage_name"],
        "{gw2}"
    );
    assert_eq!(gw2["connection_id"], gw["connection_id"], "{gw2}");
    assert_eq!(ig2["connector_type"], "CDC", "{ig2}");
}

const FOREIGN: &str = r#"
variable "host" {}
variable "database" { default = "app" }
provider "databricks" { host = var.host }
resource "databricks_connection" "pg" {
  name            = "fc_pg"
  connection_type = "POSTGRESQL"
  options = {
    host     = "db.example.com"
    port     = "5432"
    user     = "app"
    password = "pw"
  }
}
resource "databricks_catalog" "f" {
  name            = "fc_cat"
  connection_name = databricks_connection.pg.name
  options         = { database = var.database }
}
"#;

#[test]
fn a_foreign_catalog_keeps_its_default_schema_is_replaced_for_new_options_and_follows_a_connection_rename()
 {
    let dir = config(&[("main.bf.hcl", FOREIGN)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // A foreign catalog's `default` is the source's schema: brickform leaves it alone.
    let log = serve.ok(
        "GET",
        "/__emulator/requests?path=/api/2.1/unity-catalog/schemas/.*",
        None,
    );
    let deletes: Vec<&Value> = log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] == "DELETE")
        .collect();
    assert!(deletes.is_empty(), "{deletes:?}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // The service does not change a foreign catalog's options in place: brickform replaces it.
    let (s, e) = serve.call(
        "PATCH",
        "/api/2.1/unity-catalog/catalogs/fc_cat",
        Some(json!({"options": {"database": "other"}})),
    );
    assert_eq!(s, 400, "{e}");
    let out = bf_ok(d, &serve, &["plan", "--var", "database=other"]);
    assert!(
        out.contains("# databricks_catalog.f must be replaced"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 1 to add, 0 to change, 1 to destroy."),
        "{out}"
    );

    // A connection's rename carries over to the catalogs that read through it.
    let before = serve.ok("GET", "/api/2.1/unity-catalog/connections/fc_pg", None);
    serve.ok(
        "PATCH",
        "/api/2.1/unity-catalog/connections/fc_pg",
        Some(json!({"new_name": "fc_pg2", "options": {"host": "db.example.com", "port": "5432", "user": "app", "password": "pw"}})),
    );
    let c = serve.ok("GET", "/api/2.1/unity-catalog/catalogs/fc_cat", None);
    assert_eq!(c["connection_name"], "fc_pg2", "{c}");

    // Renamed outside brickform, the connection is found by its connection_id and renamed
    // back; the catalog follows the rename back instead of being replaced.
    let out = bf_ok(d, &serve, &["plan"]);
    assert!(
        out.contains("# databricks_connection.pg has changed"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "{out}"
    );
    assert!(!out.contains("must be replaced"), "{out}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let after = serve.ok("GET", "/api/2.1/unity-catalog/catalogs/fc_cat", None);
    assert_eq!(after["connection_name"], "fc_pg", "{after}");
    assert_eq!(
        after["created_at"], c["created_at"],
        "the catalog was made again"
    );
    let conn = serve.ok("GET", "/api/2.1/unity-catalog/connections/fc_pg", None);
    assert_eq!(conn["connection_id"], before["connection_id"], "{conn}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

/// A plan that deletes or replaces a pipeline names the tables that go with it, with their
/// data: in the text plan as a warning, and in the JSON plan as `data_impact` a policy can
/// refuse; a replaced ingestion pipeline's tables are loaded again from the start. With
/// `cascade = false` the delete keeps them, and nothing is said.
#[test]
fn a_plan_names_the_tables_a_pipelines_delete_or_replacement_drops() {
    let dir = config(&[("main.bf.hcl", &config_text(true))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--update-step-ms", "1000"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(tables(&serve).len(), 2);

    let text = bf_ok(d, &serve, &["plan", "--destroy"]);
    assert!(text.contains("Data goes with these changes"), "{text}");
    assert!(
        text.contains("databricks_ingestion_pipeline.ig: its destroy drops the tables it published, with their data: pt_cat.dest.clients, pt_cat.dest.orders"),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&bf_ok(d, &serve, &["plan", "--destroy", "--json"])).unwrap();
    let impact = json["data_impact"].as_array().unwrap();
    assert_eq!(impact.len(), 1, "{impact:?}");
    assert_eq!(impact[0]["address"], "databricks_ingestion_pipeline.ig");
    assert_eq!(impact[0]["kind"], "tables_dropped");
    assert_eq!(
        impact[0]["tables"],
        json!(["pt_cat.dest.clients", "pt_cat.dest.orders"])
    );

    let json: Value = serde_json::from_str(&bf_ok(
        d,
        &serve,
        &[
            "plan",
            "--json",
            "--replace",
            "databricks_ingestion_pipeline.ig",
        ],
    ))
    .unwrap();
    let impact = json["data_impact"].as_array().unwrap();
    assert_eq!(impact[0]["kind"], "tables_reloaded", "{impact:?}");
    assert!(
        impact[0]["message"]
            .as_str()
            .unwrap()
            .contains("ingests them again from the start"),
        "{impact:?}"
    );

    // Kept by the delete: nothing to say.
    let kept = config_text(true).replace(
        "  continuous           = true\n",
        "  continuous           = true\n  cascade              = false\n",
    );
    std::fs::write(d.join("main.bf.hcl"), kept).unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let text = bf_ok(d, &serve, &["plan", "--destroy"]);
    assert!(!text.contains("Data goes with these changes"), "{text}");
}

/// A pipeline source whose new content turns a streaming table into a materialized view
/// (the service fails that update, and a full refresh does not help) is named in the plan,
/// with the dataset, the file and what to do.
#[test]
fn a_dataset_changing_between_streaming_table_and_materialized_view_is_named() {
    let source = |sql: &str| {
        format!(
            "variable \"host\" {{}}\nprovider \"databricks\" {{ host = var.host }}\nresource \"databricks_notebook\" \"src\" {{\n  path           = \"/Shared/ds/bronze\"\n  language       = \"SQL\"\n  content_base64 = base64encode(\"{sql}\")\n}}\n"
        )
    };
    let dir = config(&[(
        "main.bf.hcl",
        &source("CREATE OR REFRESH STREAMING TABLE orders AS SELECT * FROM STREAM(src)"),
    )]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    std::fs::write(
        d.join("main.bf.hcl"),
        source("CREATE OR REFRESH MATERIALIZED VIEW orders AS SELECT * FROM src"),
    )
    .unwrap();
    let impact = impact_of(d, &serve, &[]);
    assert_eq!(impact.len(), 1, "{impact:?}");
    assert_eq!(impact[0]["kind"], "dataset_type_changed");
    let message = impact[0]["message"].as_str().unwrap();
    assert!(
        message.contains("dataset orders in /Shared/ds/bronze changes from a streaming table to a materialized view"),
        "{message}"
    );
    assert!(
        impact[0]["hint"]
            .as_str()
            .unwrap()
            .starts_with("give the new materialized view another name"),
        "{impact:?}"
    );
    // The same as fields of their own, for a policy.
    assert_eq!(impact[0]["dataset"], "orders", "{impact:?}");
    assert_eq!(impact[0]["file"], "/Shared/ds/bronze", "{impact:?}");
    assert_eq!(impact[0]["from_type"], "streaming_table", "{impact:?}");
    assert_eq!(impact[0]["to_type"], "materialized_view", "{impact:?}");
    // A change that keeps every dataset's type says nothing.
    std::fs::write(
        d.join("main.bf.hcl"),
        source("CREATE OR REFRESH STREAMING TABLE orders AS SELECT id FROM STREAM(src)"),
    )
    .unwrap();
    let text = bf_ok(d, &serve, &["plan"]);
    assert!(!text.contains("Data goes with these changes"), "{text}");
}

/// A declarative pipeline per key of `flows`, each publishing the streaming table
/// `KEY_st` that its SQL notebook declares into `pp_cat.silver`, as a group of pipelines
/// made from one map is written (sdp-meta's layout).
fn pipelines_text(flows: &[&str]) -> String {
    let keys: Vec<String> = flows.iter().map(|f| format!("\"{f}\"")).collect();
    format!(
        r#"
variable "host" {{}}
provider "databricks" {{ host = var.host }}
locals {{
  flows = toset([{keys}])
}}
resource "databricks_catalog" "c" {{
  name = "pp_cat"
}}
resource "databricks_schema" "s" {{
  catalog_name  = databricks_catalog.c.name
  name          = "silver"
  force_destroy = true
}}
resource "databricks_notebook" "src" {{
  for_each       = local.flows
  path           = "/Shared/pp/${{each.key}}"
  language       = "SQL"
  content_base64 = base64encode("CREATE OR REFRESH STREAMING TABLE ${{each.key}}_st AS SELECT * FROM STREAM(raw.${{each.key}})")
}}
resource "databricks_pipeline" "p" {{
  for_each   = local.flows
  name       = "pp_${{each.key}}"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = true
  continuous = true
  library {{
    notebook {{
      path = databricks_notebook.src[each.key].path
    }}
  }}
}}
"#,
        keys = keys.join(", ")
    )
}

/// The `data_impact` entries of a plan's JSON, checked against the documented schema.
fn impact_of(d: &std::path::Path, serve: &Serve, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["plan", "--json"];
    all.extend(args);
    let json = common::valid_plan_json(&common::schema(), "plan --json", &bf_ok(d, serve, &all));
    json["data_impact"].as_array().cloned().unwrap_or_default()
}

/// A plain declarative pipeline drops the tables it published when it goes, as an
/// ingestion pipeline does: a key taken out of a map of pipelines names that pipeline's
/// tables and no other's, and a replacement names its own (dropped, not ingested again:
/// its datasets are computed again by its next update).
#[test]
fn a_plan_names_the_tables_of_a_pipeline_removed_from_a_for_each_or_replaced() {
    let dir = config(&[("main.bf.hcl", &pipelines_text(&["orders", "customers"]))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let listed = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/tables?catalog_name=pp_cat&schema_name=silver",
        None,
    );
    let mut names: Vec<&str> = listed["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["full_name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["pp_cat.silver.customers_st", "pp_cat.silver.orders_st"]
    );

    // One key less: that pipeline's table goes, the other's stays unnamed.
    std::fs::write(d.join("main.bf.hcl"), pipelines_text(&["orders"])).unwrap();
    let text = bf_ok(d, &serve, &["plan"]);
    assert!(
        text.contains("databricks_pipeline.p[\"customers\"] will be destroyed"),
        "{text}"
    );
    assert!(text.contains("Data goes with these changes"), "{text}");
    assert!(
        text.contains("databricks_pipeline.p[\"customers\"]: its destroy drops the tables it published, with their data: pp_cat.silver.customers_st\n"),
        "{text}"
    );
    assert!(!text.contains("orders_st"), "{text}");
    let impact = impact_of(d, &serve, &[]);
    assert_eq!(impact.len(), 1, "{impact:?}");
    assert_eq!(impact[0]["address"], "databricks_pipeline.p[\"customers\"]");
    assert_eq!(impact[0]["kind"], "tables_dropped");
    assert_eq!(impact[0]["tables"], json!(["pp_cat.silver.customers_st"]));

    // A replacement of one: its own table, dropped (not ingested again).
    std::fs::write(
        d.join("main.bf.hcl"),
        pipelines_text(&["orders", "customers"]),
    )
    .unwrap();
    let text = bf_ok(
        d,
        &serve,
        &["plan", "--replace", "databricks_pipeline.p[\"orders\"]"],
    );
    assert!(
        text.contains("databricks_pipeline.p[\"orders\"]: its replacement drops the tables it published, with their data: pp_cat.silver.orders_st\n"),
        "{text}"
    );
    let impact = impact_of(
        d,
        &serve,
        &["--replace", "databricks_pipeline.p[\"orders\"]"],
    );
    assert_eq!(impact.len(), 1, "{impact:?}");
    assert_eq!(impact[0]["kind"], "tables_dropped", "{impact:?}");
    assert_eq!(impact[0]["tables"], json!(["pp_cat.silver.orders_st"]));

    // A destroy names each pipeline with its own tables.
    let impact = impact_of(d, &serve, &["--destroy"]);
    let by_address: Vec<(&str, &Value)> = impact
        .iter()
        .map(|i| (i["address"].as_str().unwrap(), &i["tables"]))
        .collect();
    assert_eq!(
        by_address,
        [
            (
                "databricks_pipeline.p[\"customers\"]",
                &json!(["pp_cat.silver.customers_st"])
            ),
            (
                "databricks_pipeline.p[\"orders\"]",
                &json!(["pp_cat.silver.orders_st"])
            ),
        ],
        "{impact:?}"
    );
}

/// When the workspace does not say which tables a pipeline published (here its target
/// schema's tables cannot be listed), the plan still says the delete drops them: every
/// table the pipeline publishes, in one line, with no list.
#[test]
fn a_plan_that_cannot_list_a_pipelines_tables_says_every_table_it_publishes_goes() {
    let dir = config(&[("main.bf.hcl", &pipelines_text(&["orders", "customers"]))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"method": "GET", "path": "/api/2.1/unity-catalog/tables", "status": 403, "times": 0,
            "error_code": "PERMISSION_DENIED",
            "message": "User does not have USE SCHEMA on Schema 'pp_cat.silver'."})),
    );
    std::fs::write(d.join("main.bf.hcl"), pipelines_text(&["orders"])).unwrap();
    let text = bf_ok(d, &serve, &["plan"]);
    assert!(
        text.contains("databricks_pipeline.p[\"customers\"]: its destroy drops every table it publishes, with their data\n"),
        "{text}"
    );
    assert!(!text.contains("customers_st"), "{text}");
    let impact = impact_of(d, &serve, &[]);
    assert_eq!(impact.len(), 1, "{impact:?}");
    assert_eq!(impact[0]["address"], "databricks_pipeline.p[\"customers\"]");
    assert_eq!(impact[0]["kind"], "tables_dropped");
    assert!(impact[0].get("tables").is_none(), "{impact:?}");
    // The listing was asked for and refused: the line stands for what it would have named.
    let f = serve.ok("GET", "/__emulator/faults", None);
    assert!(f["faults"][0]["fired"].as_u64().unwrap() >= 1, "{f}");
}

/// A job whose schedule runs a pipeline task with `full_refresh = true` resets that
/// pipeline's streaming state on every run: the plan names the task (text, and JSON
/// with the task as a field of its own). A paused schedule starts nothing, and says
/// nothing; unpausing it later says it again.
#[test]
fn a_scheduled_full_refresh_task_is_named_unless_the_schedule_is_paused() {
    let job = |pause: &str| {
        format!(
            r#"{pipelines}
resource "databricks_job" "nightly" {{
  name = "pp_nightly"
  schedule {{
    quartz_cron_expression = "0 0 2 * * ?"
    timezone_id            = "UTC"
    pause_status           = "{pause}"
  }}
  task {{
    task_key = "reload"
    pipeline_task {{
      pipeline_id  = databricks_pipeline.p["orders"].id
      full_refresh = true
    }}
  }}
  task {{
    task_key = "increment"
    pipeline_task {{
      pipeline_id = databricks_pipeline.p["orders"].id
    }}
  }}
}}
"#,
            pipelines = pipelines_text(&["orders"])
        )
    };
    let warned = |text: &str| {
        text.contains("databricks_job.nightly: task \"reload\" runs a full refresh of its pipeline on every run the job's schedule starts: streaming state is reset, every table is truncated and loaded again, and data no longer in the source is lost")
    };
    let dir = config(&[("main.bf.hcl", &job("UNPAUSED"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let text = bf_ok(d, &serve, &["plan"]);
    assert!(warned(&text), "{text}");
    assert!(!text.contains("task \"increment\" runs"), "{text}");
    let impact = impact_of(d, &serve, &[]);
    assert_eq!(impact.len(), 1, "{impact:?}");
    assert_eq!(impact[0]["address"], "databricks_job.nightly");
    assert_eq!(impact[0]["kind"], "full_refresh");
    assert_eq!(impact[0]["task"], "reload");

    std::fs::write(d.join("main.bf.hcl"), job("PAUSED")).unwrap();
    let text = bf_ok(d, &serve, &["plan"]);
    assert!(!text.contains("Data goes with these changes"), "{text}");
    assert!(impact_of(d, &serve, &[]).is_empty());
    bf_ok(d, &serve, &["apply", "--auto-approve"]);

    // Unpausing the applied job is an update that starts the schedule: named again.
    std::fs::write(d.join("main.bf.hcl"), job("UNPAUSED")).unwrap();
    let text = bf_ok(d, &serve, &["plan"]);
    assert!(
        text.contains("databricks_job.nightly will be updated in-place"),
        "{text}"
    );
    assert!(warned(&text), "{text}");
    let impact = impact_of(d, &serve, &[]);
    assert_eq!(impact.len(), 1, "{impact:?}");
    assert_eq!(impact[0]["task"], "reload");
}

/// A pipeline that publishes to the Hive metastore (a `target` and no `catalog`) has
/// tables no Unity Catalog listing shows, and its delete drops them all the same: the
/// plan says every table it publishes goes, rather than nothing.
#[test]
fn a_hive_metastore_pipelines_delete_says_every_table_it_publishes_goes() {
    let text = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_notebook" "src" {
  path           = "/Shared/hms/bronze"
  language       = "SQL"
  content_base64 = base64encode("CREATE OR REFRESH STREAMING TABLE orders AS SELECT * FROM STREAM(raw.orders)")
}
resource "databricks_pipeline" "h" {
  name   = "hms_bronze"
  target = "legacy"
  library {
    notebook {
      path = databricks_notebook.src.path
    }
  }
}
"#;
    let dir = config(&[("main.bf.hcl", text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let plan = bf_ok(d, &serve, &["plan", "--destroy"]);
    assert!(
        plan.contains(
            "databricks_pipeline.h: its destroy drops every table it publishes, with their data\n"
        ),
        "{plan}"
    );
    let impact = impact_of(d, &serve, &["--destroy"]);
    assert_eq!(impact.len(), 1, "{impact:?}");
    assert_eq!(impact[0]["kind"], "tables_dropped");
    assert!(impact[0].get("tables").is_none(), "{impact:?}");
}
