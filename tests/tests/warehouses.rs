//! SQL warehouses end to end: a job's SQL task runs on the warehouse it references (the
//! resource's id or the data source's), fails with the service's message once the warehouse
//! is deleted outside brickform, and a warehouse edited outside is planned back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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

fn warehouse_id(serve: &Serve) -> String {
    let list = serve.ok("GET", "/api/2.0/sql/warehouses", None);
    let w = list["warehouses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "bi")
        .unwrap_or_else(|| panic!("no warehouse bi: {list}"));
    w["id"].as_str().unwrap().to_string()
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
    assert_eq!(serve.dump()["warehouses"], json!({}));
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
