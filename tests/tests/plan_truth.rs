//! The plan tells what apply does: a field the configuration leaves out but that a whole-object
//! write (jobs/reset, a pipeline's full-spec PUT) puts back is shown as a change from its live
//! value to what is written, and after apply the service holds exactly the plan's `after`.
//! Removing a property from a merged (PATCH) object sends the removal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use serde_json::{Value, json};
use std::path::Path;

use common::{served as bf, served_ok as bf_ok};

const CONFIG: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_catalog" "c" {
  name       = "truth_cat"
  properties = { team = "data" }
}
resource "databricks_job" "nightly" {
  name = "nightly"
  schedule {
    quartz_cron_expression = "0 0 2 * * ?"
    timezone_id            = "UTC"
  }
  task {
    task_key = "a"
    notebook_task { notebook_path = "/Shared/a" }
  }
  task {
    task_key = "b"
    notebook_task { notebook_path = "/Shared/b" }
  }
}
"#;

fn job_settings(serve: &Serve) -> (String, Value) {
    let jobs = serve.ok("GET", "/api/2.2/jobs/list", None);
    let job = &jobs["jobs"][0];
    let id = job["job_id"].to_string();
    let got = serve.ok("GET", &format!("/api/2.2/jobs/get?job_id={id}"), None);
    (id, got["settings"].clone())
}

fn resource<'a>(plan: &'a Value, address: &str) -> &'a Value {
    plan["resource_changes"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["address"] == address))
        .unwrap_or_else(|| panic!("{address} not in {plan}"))
}

#[test]
fn fields_left_out_that_a_whole_write_resets_are_planned_from_live_to_written() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");

    // In the UI: the job paused, more concurrent runs, a failure recipient added — none of
    // them in the configuration.
    let (id, _) = job_settings(&serve);
    serve.ok(
        "POST",
        "/api/2.2/jobs/update",
        Some(json!({"job_id": id.parse::<i64>().unwrap(), "new_settings": {
            "schedule": {"quartz_cron_expression": "0 0 2 * * ?", "timezone_id": "UTC", "pause_status": "PAUSED"},
            "max_concurrent_runs": 5,
            "email_notifications": {"on_failure": ["ops@example.com"]},
        }})),
    );

    let (code, text, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{text}{err}");
    for line in [
        "~ max_concurrent_runs = 5 -> 1",
        "~ pause_status",
        "\"PAUSED\" -> \"UNPAUSED\"",
        "- on_failure",
    ] {
        assert!(text.contains(line), "{line} not in\n{text}");
    }
    assert!(!text.contains("+ pause_status = \"PAUSED\""), "{text}");

    let json_plan: Value = serde_json::from_str(&bf_ok(d, &serve, &["plan", "--json"])).unwrap();
    let job = resource(&json_plan, "databricks_job.nightly");
    let fields = job["change"]["fields"].as_array().unwrap();
    let f = |name: &str| {
        fields
            .iter()
            .find(|f| f["path"] == json!([name]))
            .unwrap_or_else(|| panic!("no {name} in {fields:?}"))
    };
    assert_eq!(f("max_concurrent_runs")["before"], json!(5));
    assert_eq!(f("max_concurrent_runs")["after"], json!(1));
    assert_eq!(f("schedule")["before"][0]["pause_status"], json!("PAUSED"));
    assert_eq!(f("schedule")["after"][0]["pause_status"], json!("UNPAUSED"));
    assert_eq!(
        f("email_notifications")["before"][0]["on_failure"],
        json!(["ops@example.com"])
    );
    let after = job["change"]["after"].clone();

    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (_, live) = job_settings(&serve);
    // What the plan said the service would hold is what it holds.
    assert_eq!(after["max_concurrent_runs"], live["max_concurrent_runs"]);
    // The service may leave out a value equal to its default (UNPAUSED).
    assert_eq!(after["schedule"][0]["pause_status"], json!("UNPAUSED"));
    assert!(
        [json!("UNPAUSED"), Value::Null].contains(&live["schedule"]["pause_status"]),
        "{live}"
    );
    assert!(
        live["email_notifications"]["on_failure"].is_null()
            || live["email_notifications"]["on_failure"] == json!([]),
        "{live}"
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn removing_properties_sends_the_removal() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    std::fs::write(
        d.join("main.bf.hcl"),
        CONFIG.replace("  properties = { team = \"data\" }\n", ""),
    )
    .unwrap();
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("- properties"), "{out}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let cat = serve.ok("GET", "/api/2.1/unity-catalog/catalogs/truth_cat", None);
    assert!(
        cat["properties"].is_null() || cat["properties"] == json!({}),
        "{cat}"
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_changed_task_shows_its_task_key() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    std::fs::write(
        d.join("main.bf.hcl"),
        CONFIG.replace("/Shared/b", "/Shared/b2"),
    )
    .unwrap();
    for args in [&["plan"][..], &["plan", "--markdown"][..]] {
        let (_, out, err) = bf(d, &serve, args);
        assert!(
            out.lines()
                .any(|l| l.contains("task_key") && l.contains("= \"b\"")),
            "{args:?}\n{out}{err}"
        );
    }
    let (_, out, _) = bf(d, &serve, &["plan", "--json"]);
    let plan: Value = serde_json::from_str(&out).unwrap();
    let job = resource(&plan, "databricks_job.nightly");
    let task = job["change"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == json!(["task"]))
        .unwrap_or_else(|| panic!("{job}"));
    let keys = |v: &Value| -> Vec<Value> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t["task_key"].clone())
            .collect()
    };
    assert_eq!(keys(&task["before"]), [json!("a"), json!("b")]);
    assert_eq!(keys(&task["after"]), [json!("a"), json!("b")]);
}

// ---------------------------------------------------------------------------------------
// Defects the generated cases of tests/python/test_generative_plans.py found (seeds in the
// commit messages), each reduced to its smallest form.

fn plan_json(d: &Path, serve: &Serve) -> Value {
    serde_json::from_str(&bf_ok(d, serve, &["plan", "--json"])).unwrap()
}

fn plan_is_empty(d: &Path, serve: &Serve) {
    let (code, out, err) = bf(d, serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_saved_plan_that_removes_drifted_tags_applies() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (id, _) = job_settings(&serve);
    serve.ok(
        "POST",
        "/api/2.2/jobs/update",
        Some(json!({"job_id": id.parse::<i64>().unwrap(), "new_settings": {"tags": {"tier": "dev"}}})),
    );
    // The plan puts the tags back to none: a planned null, which the saved plan must keep.
    let saved = d.join("p.bin");
    let saved = saved.to_str().unwrap();
    bf_ok(d, &serve, &["plan", "--out", saved]);
    let out = bf_ok(d, &serve, &["apply", saved]);
    assert!(out.contains("Apply complete!"), "{out}");
    let (_, live) = job_settings(&serve);
    assert_eq!(
        live["tags"].as_object().map(|t| t.contains_key("tier")),
        Some(false),
        "{live}"
    );
    plan_is_empty(d, &serve);
}

const CONNECTION: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_connection" "pg" {
  name            = "truth_pg"
  connection_type = "POSTGRESQL"
  comment         = "COMMENT"
  options = { host = "db.example.com", port = "5432", user = "app", password = "pw" }
  OWNER
}
"#;

fn connection_config(comment: &str, owner: Option<&str>) -> String {
    CONNECTION.replace("COMMENT", comment).replace(
        "OWNER",
        &owner
            .map(|o| format!("owner = \"{o}\""))
            .unwrap_or_default(),
    )
}

const CONNECTION_PATH: &str = "/api/2.1/unity-catalog/connections/truth_pg";

#[test]
fn a_connection_with_an_owner_is_created() {
    let dir = config(&[(
        "main.bf.hcl",
        &connection_config("one", Some("someone@example.com")),
    )]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let live = serve.ok("GET", CONNECTION_PATH, None);
    assert_eq!(live["owner"], json!("someone@example.com"), "{live}");
    plan_is_empty(d, &serve);
}

#[test]
fn connection_options_changed_outside_are_put_back() {
    let dir = config(&[("main.bf.hcl", &connection_config("one", None))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    serve.ok(
        "PATCH",
        CONNECTION_PATH,
        Some(json!({"options": {"host": "other.example.com", "port": "5432", "user": "app", "password": "pw"}})),
    );
    let (code, text, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{text}{err}");
    assert!(text.contains("options = (sensitive value)"), "{text}");
    // The options stay hidden, in the drift section too (the url is the service's own).
    let plan = plan_json(d, &serve);
    let drift = &plan["resource_drift"][0]["change"];
    assert_eq!(drift["fields"][0]["sensitive"], json!(true), "{plan}");
    assert_eq!(drift["after"]["options"], Value::Null, "{plan}");
    assert!(!plan.to_string().contains("\"pw\""), "{plan}");
    let c = resource(&plan, "databricks_connection.pg");
    assert_eq!(c["change"]["actions"], json!(["update"]), "{c}");
    assert_eq!(c["change"]["after_unknown"]["url"], json!(true), "{c}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let live = serve.ok("GET", CONNECTION_PATH, None);
    assert_eq!(live["options"]["host"], json!("db.example.com"), "{live}");
    let state = std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap();
    assert!(
        !state.contains("\"host\"") && !state.contains("\"pw\""),
        "options in state: {state}"
    );
    plan_is_empty(d, &serve);
}

#[test]
fn a_replaced_connection_is_owned_by_its_creator() {
    let dir = config(&[("main.bf.hcl", &connection_config("one", None))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    serve.ok(
        "PATCH",
        CONNECTION_PATH,
        Some(json!({"owner": "someone@example.com", "options": {"host": "db.example.com", "port": "5432", "user": "app", "password": "pw"}})),
    );
    plan_is_empty(d, &serve);
    // A new comment replaces the connection: the new one's owner is not the old one's.
    std::fs::write(d.join("main.bf.hcl"), connection_config("two", None)).unwrap();
    let plan = plan_json(d, &serve);
    let c = resource(&plan, "databricks_connection.pg");
    assert_eq!(c["change"]["actions"], json!(["delete", "create"]), "{c}");
    assert!(c["change"]["after"].get("owner").is_none(), "{c}");
    assert_eq!(c["change"]["after_unknown"]["owner"], json!(true), "{c}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let live = serve.ok("GET", CONNECTION_PATH, None);
    assert_eq!(live["owner"], json!("local-user@brickform.local"), "{live}");
    plan_is_empty(d, &serve);
}

const JOB_WITH_DESCRIPTION: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_job" "nightly" {
  name        = "nightly"
  description = "nightly load"
  schedule {
    quartz_cron_expression = "0 0 2 * * ?"
    timezone_id            = "UTC"
  }
  task {
    task_key = "a"
    notebook_task { notebook_path = "/Shared/a" }
  }
}
"#;

#[test]
fn job_fields_removed_outside_are_put_back() {
    let dir = config(&[("main.bf.hcl", JOB_WITH_DESCRIPTION)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (id, _) = job_settings(&serve);
    serve.ok(
        "POST",
        "/api/2.2/jobs/update",
        Some(json!({"job_id": id.parse::<i64>().unwrap(), "fields_to_remove": ["description", "schedule"]})),
    );
    let (code, text, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{text}{err}");
    for line in ["description", "schedule"] {
        assert!(text.contains(line), "{line} not in\n{text}");
    }
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (_, live) = job_settings(&serve);
    assert_eq!(live["description"], json!("nightly load"), "{live}");
    assert_eq!(
        live["schedule"]["quartz_cron_expression"],
        json!("0 0 2 * * ?"),
        "{live}"
    );
    plan_is_empty(d, &serve);
}

const PIPELINE: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_pipeline" "p" {
  name          = "truth-pipeline"
  serverless    = true
  catalog       = "main"
  schema        = "s"
  continuous    = CONTINUOUS
  configuration = { k = "VALUE" }
}
"#;

#[test]
fn what_every_pipeline_edit_changes_is_known_after_apply() {
    let cfg = |continuous: bool, value: &str| {
        PIPELINE
            .replace("CONTINUOUS", &continuous.to_string())
            .replace("VALUE", value)
    };
    let dir = config(&[("main.bf.hcl", &cfg(false, "a"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    // `main` is there, as on a new workspace.
    serve.ok(
        "POST",
        "/api/2.1/unity-catalog/schemas",
        Some(json!({"name": "s", "catalog_name": "main"})),
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let pipeline = |serve: &Serve| {
        let list = serve.ok("GET", "/api/2.0/pipelines", None);
        let id = list["statuses"][0]["pipeline_id"]
            .as_str()
            .unwrap()
            .to_string();
        serve.ok("GET", &format!("/api/2.0/pipelines/{id}"), None)
    };
    let before = pipeline(&serve);

    // An edit moves last_modified; the plan must not promise the old one.
    std::fs::write(d.join("main.bf.hcl"), cfg(false, "b")).unwrap();
    let plan = plan_json(d, &serve);
    let c = resource(&plan, "databricks_pipeline.p");
    assert_eq!(
        c["change"]["after_unknown"]["last_modified"],
        json!(true),
        "{c}"
    );
    assert!(c["change"]["after"].get("last_modified").is_none(), "{c}");
    // Its state stays what it is: only `continuous` starts or stops it.
    assert_eq!(c["change"]["after"]["state"], before["state"], "{c}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(pipeline(&serve)["last_modified"], before["last_modified"]);

    std::fs::write(d.join("main.bf.hcl"), cfg(true, "b")).unwrap();
    let plan = plan_json(d, &serve);
    let c = resource(&plan, "databricks_pipeline.p");
    assert_eq!(c["change"]["after_unknown"]["state"], json!(true), "{c}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(pipeline(&serve)["state"], before["state"]);
    plan_is_empty(d, &serve);
}

#[test]
fn properties_added_outside_survive_later_updates() {
    let cfg = |comment: &str| {
        format!(
            "variable \"host\" {{}}\nprovider \"databricks\" {{ host = var.host }}\nresource \"databricks_catalog\" \"c\" {{\n  name    = \"truth_cat\"\n  comment = \"{comment}\"\n}}\n"
        )
    };
    let dir = config(&[("main.bf.hcl", &cfg("one"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let path = "/api/2.1/unity-catalog/catalogs/truth_cat";
    serve.ok("PATCH", path, Some(json!({"properties": {"env": "data"}})));
    // Two unrelated updates: after the first, state has seen the properties.
    for comment in ["two", "three"] {
        std::fs::write(d.join("main.bf.hcl"), cfg(comment)).unwrap();
        let plan = plan_json(d, &serve);
        let c = resource(&plan, "databricks_catalog.c");
        assert_eq!(
            c["change"]["after"]["properties"],
            json!({"env": "data"}),
            "{c}"
        );
        bf_ok(d, &serve, &["apply", "--auto-approve"]);
        let live = serve.ok("GET", path, None);
        assert_eq!(
            live["properties"],
            json!({"env": "data"}),
            "after {comment}: {live}"
        );
    }
    plan_is_empty(d, &serve);
}

const CLASSIC_PIPELINE: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_pipeline" "p" {
  name          = "truth-classic"
  storage       = "dbfs:/truth"
  configuration = { k = "VALUE" }
  cluster {
    num_workers = 1
  }
}
"#;

#[test]
fn a_node_type_the_service_holds_is_in_the_plan() {
    let dir = config(&[("main.bf.hcl", &CLASSIC_PIPELINE.replace("VALUE", "a"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let list = serve.ok("GET", "/api/2.0/pipelines", None);
    let id = list["statuses"][0]["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/2.0/pipelines/{id}");
    // The node type changed in the UI (left to the service by the configuration).
    let got = serve.ok("GET", &path, None);
    let mut spec = got["spec"].clone();
    spec["clusters"][0]["node_type_id"] = json!("m5.large");
    serve.ok("PUT", &path, Some(spec));
    let plan = plan_json(d, &serve);
    let c = resource(&plan, "databricks_pipeline.p");
    assert_eq!(c["change"]["actions"], json!(["no-op"]), "{c}");
    assert_eq!(
        c["change"]["after"]["cluster"][0]["node_type_id"],
        json!("m5.large"),
        "{c}"
    );
    // An edit sends the whole spec without it: the service decides it again.
    std::fs::write(
        d.join("main.bf.hcl"),
        CLASSIC_PIPELINE.replace("VALUE", "b"),
    )
    .unwrap();
    let plan = plan_json(d, &serve);
    let c = resource(&plan, "databricks_pipeline.p");
    assert_eq!(c["change"]["actions"], json!(["update"]), "{c}");
    assert_eq!(
        c["change"]["after_unknown"]["cluster"][0]["node_type_id"],
        json!(true),
        "{c}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
}
