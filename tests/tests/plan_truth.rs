//! The plan tells what apply does: a field the configuration leaves out but that a whole-object
//! write (jobs/reset, a pipeline's full-spec PUT) puts back is shown as a change from its live
//! value to what is written, and after apply the service holds exactly the plan's `after`.
//! Removing a property from a merged (PATCH) object sends the removal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Serve, config, run};
use serde_json::{Value, json};
use std::path::Path;

const TOKEN: (&str, &str) = ("DATABRICKS_TOKEN", "e2e-token");

fn bf(d: &Path, serve: &Serve, args: &[&str]) -> (i32, String, String) {
    let host = format!("host={}", serve.url);
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--var", &host]);
    run(d, &a, &[TOKEN])
}

fn bf_ok(d: &Path, serve: &Serve, args: &[&str]) -> String {
    let (code, out, err) = bf(d, serve, args);
    assert_eq!(code, 0, "brickform {args:?}\n{out}\n{err}");
    out
}

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
    assert_eq!(f("schedule")["before"]["pause_status"], json!("PAUSED"));
    assert_eq!(f("schedule")["after"]["pause_status"], json!("UNPAUSED"));
    assert_eq!(
        f("email_notifications")["before"]["on_failure"],
        json!(["ops@example.com"])
    );
    let after = job["change"]["after"].clone();

    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (_, live) = job_settings(&serve);
    // What the plan said the service would hold is what it holds.
    assert_eq!(after["max_concurrent_runs"], live["max_concurrent_runs"]);
    // The service may leave out a value equal to its default (UNPAUSED).
    assert_eq!(after["schedule"]["pause_status"], json!("UNPAUSED"));
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
