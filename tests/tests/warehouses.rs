//! SQL warehouses end to end: a job's SQL task runs on the warehouse it references (the
//! resource's id or the data source's), fails with the service's message once the warehouse
//! is deleted outside brickform, and a warehouse edited outside is planned back. Settings the
//! service decides (serverless, its type, the channel) are left to it, and a deleted
//! warehouse, which the service keeps as DELETING and holds the name of for a while
//! (terraform-provider-databricks issue #3379), is gone for the plan and does not stop a
//! create of its name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, run};
use serde_json::json;
use std::path::Path;

const TOKEN: (&str, &str) = ("DATABRICKS_TOKEN", "e2e-token");

fn bf(d: &Path, serve: &Serve, args: &[&str]) -> (i32, String, String) {
    let host = format!("host={}", serve.url);
    let mut a: Vec<&str> = args.to_vec();
    // `output` reads the state only, and takes no variables.
    if args.first() != Some(&"output") {
        a.extend(["--var", &host]);
    }
    run(d, &a, &[TOKEN])
}

fn bf_ok(d: &Path, serve: &Serve, args: &[&str]) -> String {
    let (code, out, err) = bf(d, serve, args);
    assert_eq!(code, 0, "brickform {args:?}\n{out}\n{err}");
    out
}

const CONFIG: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_sql_endpoint" "bi" {
  name           = "bi"
  cluster_size   = "2X-Small"
  auto_stop_mins = 30
}

data "databricks_sql_warehouse" "bi" {
  name = databricks_sql_endpoint.bi.name
}

resource "databricks_job" "by_resource" {
  name = "by-resource"
  task {
    task_key = "q"
    sql_task {
      warehouse_id = databricks_sql_endpoint.bi.id
      query {
        query_id = "11111111-1111-1111-1111-111111111111"
      }
    }
  }
}

resource "databricks_job" "by_data_source" {
  name = "by-data-source"
  task {
    task_key = "q"
    sql_task {
      warehouse_id = data.databricks_sql_warehouse.bi.id
      query {
        query_id = "11111111-1111-1111-1111-111111111111"
      }
    }
  }
}

output "jdbc_url" {
  value = data.databricks_sql_warehouse.bi.jdbc_url
}

output "state" {
  value = databricks_sql_endpoint.bi.state
}
"#;

/// The id of the warehouse `bi` (not one of that name deleted earlier, still listed).
fn warehouse_id(serve: &Serve) -> String {
    warehouse_id_named(serve, "bi")
}

#[test]
fn sql_tasks_run_on_the_referenced_warehouse_and_fail_once_it_is_deleted() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let id = warehouse_id(&serve);
    let out = bf_ok(d, &serve, &["output", "--json"]);
    assert!(
        out.contains(&format!("httpPath=/sql/1.0/warehouses/{id};")),
        "{out}"
    );
    assert!(out.contains("\"RUNNING\""), "{out}");

    // Stopped, the warehouse is started by the run that needs it.
    serve.ok(
        "POST",
        &format!("/api/2.0/sql/warehouses/{id}/stop"),
        Some(json!({})),
    );
    for job in [
        "databricks_job.by_resource",
        "databricks_job.by_data_source",
    ] {
        let (code, out, err) = bf(d, &serve, &["run", job]);
        assert_eq!(code, 0, "{job}\n{out}\n{err}");
    }
    let w = serve.ok("GET", &format!("/api/2.0/sql/warehouses/{id}"), None);
    assert_eq!(w["state"], "RUNNING");

    // Deleted outside brickform: the run fails as the service says.
    serve.ok("DELETE", &format!("/api/2.0/sql/warehouses/{id}"), None);
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.by_resource"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let text = format!("{out}{err}");
    assert!(
        text.contains(&format!(
            "SQL warehouse {id} does not exist or you do not have permission to use it."
        )),
        "{text}"
    );

    // The plan makes it again, and the jobs follow its new id.
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("databricks_sql_endpoint.bi will be created"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let new_id = warehouse_id(&serve);
    assert_ne!(new_id, id);
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.by_data_source"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    // Deleted: DELETING, then DELETED for a while (async_warehouse_delete).
    let left = serve.dump()["warehouses"].clone();
    assert!(
        left.as_object()
            .unwrap()
            .values()
            .all(|w| w["state"] == "DELETING" || w["state"] == "DELETED"),
        "{left}"
    );
}

#[test]
fn a_warehouse_edited_outside_is_drift_and_is_put_back() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let id = warehouse_id(&serve);
    // Resized and given a longer auto-stop in the UI; its photon setting left out, so the
    // edit (which writes the whole object) keeps the default.
    serve.ok(
        "POST",
        &format!("/api/2.0/sql/warehouses/{id}/edit"),
        Some(json!({"name": "bi", "cluster_size": "Large", "auto_stop_mins": 240, "enable_photon": false})),
    );
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(plan.contains("changed outside"), "{plan}");
    let squashed = plan.split_whitespace().collect::<Vec<_>>().join(" ");
    for line in [
        "~ cluster_size = \"Large\" -> \"2X-Small\"",
        "~ auto_stop_mins = 240 -> 30",
        "~ enable_photon = false -> true",
    ] {
        assert!(squashed.contains(line), "{line} missing\n{plan}");
    }
    assert!(
        plan.contains("databricks_sql_endpoint.bi will be updated in-place"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let w = serve.ok("GET", &format!("/api/2.0/sql/warehouses/{id}"), None);
    assert_eq!(
        (
            w["cluster_size"].clone(),
            w["auto_stop_mins"].clone(),
            w["enable_photon"].clone()
        ),
        (json!("2X-Small"), json!(30), json!(true))
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

const LEFT_TO_SERVICE: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_sql_endpoint" "w" {
  name           = "w"
  cluster_size   = "2X-Small"
  auto_stop_mins = AUTO_STOP
}
"#;

fn left_to_service(auto_stop: u32) -> String {
    LEFT_TO_SERVICE.replace("AUTO_STOP", &auto_stop.to_string())
}

/// The bodies of the warehouse creates and edits brickform sent, with their answers' status.
fn writes(serve: &Serve) -> Vec<(String, serde_json::Value, serde_json::Value)> {
    let log = serve.ok(
        "GET",
        "/__emulator/requests?method=POST&path=/api/2.0/sql/warehouses(/[^/]%2B/edit)?",
        None,
    );
    log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["body"].clone(),
                r["status"].clone(),
            )
        })
        .collect()
}

/// enable_serverless_compute defaults per workspace (this one's default is serverless:
/// warehouse_serverless_default), and warehouse_type then to PRO; channel is the service's.
/// Left out, none of them is sent by the create, none is drift, and an edit sends back what
/// the service holds instead of flipping it.
#[test]
fn settings_left_to_the_workspace_are_not_sent_not_drift_and_kept_by_an_edit() {
    let dir = config(&[("main.bf.hcl", &left_to_service(30))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (path, body, _) = writes(&serve).pop().unwrap();
    assert_eq!(path, "/api/2.0/sql/warehouses");
    for field in ["enable_serverless_compute", "warehouse_type", "channel"] {
        assert!(body.get(field).is_none(), "{field} sent: {body}");
    }
    let id = warehouse_id_named(&serve, "w");
    let w = serve.ok("GET", &format!("/api/2.0/sql/warehouses/{id}"), None);
    assert_eq!(
        (
            w["enable_serverless_compute"].clone(),
            w["warehouse_type"].clone()
        ),
        (json!(true), json!("PRO"))
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // The service moves the warehouse to the preview channel: its own to manage.
    let mut spec = w.clone();
    for k in [
        "id",
        "creator_name",
        "state",
        "num_clusters",
        "num_active_sessions",
        "jdbc_url",
        "odbc_params",
        "health",
    ] {
        spec.as_object_mut().unwrap().remove(k);
    }
    spec["channel"] = json!({"name": "CHANNEL_NAME_PREVIEW"});
    serve.ok(
        "POST",
        &format!("/api/2.0/sql/warehouses/{id}/edit"),
        Some(spec),
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // An edit of something else sends back what the service decided.
    std::fs::write(d.join("main.bf.hcl"), left_to_service(45)).unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (path, body, _) = writes(&serve).pop().unwrap();
    assert_eq!(path, format!("/api/2.0/sql/warehouses/{id}/edit"));
    assert_eq!(body["enable_serverless_compute"], true, "{body}");
    assert_eq!(body["warehouse_type"], "PRO", "{body}");
    assert_eq!(body["channel"]["name"], "CHANNEL_NAME_PREVIEW", "{body}");
    let w = serve.ok("GET", &format!("/api/2.0/sql/warehouses/{id}"), None);
    assert_eq!(
        (
            w["enable_serverless_compute"].clone(),
            w["warehouse_type"].clone(),
            w["auto_stop_mins"].clone()
        ),
        (json!(true), json!("PRO"), json!(45))
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

fn warehouse_id_named(serve: &Serve, name: &str) -> String {
    let list = serve.ok("GET", "/api/2.0/sql/warehouses", None);
    list["warehouses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name && w["state"] != "DELETING" && w["state"] != "DELETED")
        .unwrap_or_else(|| panic!("no warehouse {name}: {list}"))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A warehouse deleted outside brickform reads DELETING (and is still listed): the plan
/// makes it again, as it would one that is gone.
#[test]
fn a_warehouse_being_deleted_is_gone_for_the_plan() {
    let dir = config(&[("main.bf.hcl", &left_to_service(30))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let id = warehouse_id_named(&serve, "w");
    // Its clusters take a minute to go down.
    serve.ok(
        "POST",
        "/__emulator/timings",
        Some(json!({"run_setup": 60_000})),
    );
    serve.ok("DELETE", &format!("/api/2.0/sql/warehouses/{id}"), None);
    let w = serve.ok("GET", &format!("/api/2.0/sql/warehouses/{id}"), None);
    assert_eq!(w["state"], "DELETING");
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("databricks_sql_endpoint.w will be created"),
        "{plan}"
    );
    assert!(!plan.contains("import"), "{plan}");
}

/// terraform-provider-databricks issue #3379: destroy, then apply at once, meets the name
/// still held by the warehouse being deleted; the create waits for it and succeeds.
#[test]
fn a_create_right_after_a_destroy_waits_for_the_name() {
    let dir = config(&[("main.bf.hcl", &left_to_service(30))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    // Starting and deleting take two seconds: longer than brickform takes to start.
    serve.ok(
        "POST",
        "/__emulator/timings",
        Some(json!({"run_setup": 2_000})),
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let first = warehouse_id_named(&serve, "w");
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let second = warehouse_id_named(&serve, "w");
    assert_ne!(first, second);
    let creates: Vec<serde_json::Value> = writes(&serve)
        .into_iter()
        .filter(|(p, _, _)| p == "/api/2.0/sql/warehouses")
        .map(|(_, _, status)| status)
        .collect();
    // The first create, then one refused while the name was held, then the one that made it.
    assert_eq!(creates.first(), Some(&json!(200)), "{creates:?}");
    assert!(creates.contains(&json!(409)), "{creates:?}");
    assert_eq!(creates.last(), Some(&json!(200)), "{creates:?}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}
