//! Runs the workspace no longer keeps: the service removes a job's runs 60 days after they
//! end ("Runs are automatically removed after 60 days", the runs/get-output reference), and
//! runs/get then answers `400 INVALID_PARAMETER_VALUE "Run: N in job: M doesn't exist"`
//! (which the official SDK calls ResourceDoesNotExist: databricks-sdk-py
//! databricks/sdk/errors/overrides.py). A `databricks_job_run` whose run is gone neither
//! fails a plan nor starts its run again; a change of its triggers does; `run --repair` of
//! the gone run says that it is gone. Each test drives the binary against
//! `brickform local serve`, whose clock is moved past the 60 days.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{SERVED_PROVIDER as PROVIDER, Serve, config, served as bf, served_ok as bf_ok};
use serde_json::{Value, json};
use std::path::Path;

fn cfg(trigger: &str) -> String {
    format!(
        r#"{PROVIDER}
resource "databricks_notebook" "etl" {{
  path           = "/Shared/retention_etl.py"
  content_base64 = base64encode("print(1)")
}}

resource "databricks_job" "j" {{
  name = "retention"
  task {{
    task_key = "etl"
    notebook_task {{
      notebook_path = databricks_notebook.etl.path
    }}
  }}
}}

resource "databricks_job_run" "once" {{
  job_id   = databricks_job.j.id
  triggers = {{ release = "{trigger}" }}
}}
"#
    )
}

/// The run the state records for `databricks_job_run.once`.
fn recorded_run(d: &Path) -> String {
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == "databricks_job_run.once")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// How many calls of `method path` the workspace received.
fn calls(serve: &Serve, method: &str, path: &str) -> usize {
    let log = serve.ok(
        "GET",
        &format!("/__emulator/requests?method={method}&path={path}"),
        None,
    );
    log["requests"].as_array().unwrap().len()
}

/// Sixty-one days later.
fn sixty_one_days_pass(serve: &Serve) {
    serve.ok(
        "POST",
        "/__emulator/clock",
        Some(json!({"advance_ms": 61_i64 * 24 * 3600 * 1000})),
    );
}

#[test]
fn a_run_the_workspace_no_longer_keeps_is_not_run_again_until_its_triggers_change() {
    let dir = config(&[("main.bf.hcl", &cfg("1"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let run = recorded_run(d);
    let job =
        serve.ok("GET", &format!("/api/2.2/jobs/runs/get?run_id={run}"), None)["job_id"].clone();

    sixty_one_days_pass(&serve);
    // The run is gone, in the service's words.
    let (status, body) = serve.call("GET", &format!("/api/2.2/jobs/runs/get?run_id={run}"), None);
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body,
        json!({"error_code": "INVALID_PARAMETER_VALUE",
               "message": format!("Run: {run} in job: {job} doesn't exist")})
    );

    // The plan neither fails nor starts the run again.
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(
        code, 0,
        "the plan over a gone run is not empty:\n{out}{err}"
    );
    let starts = calls(&serve, "POST", "/api/2.2/jobs/run-now");
    assert_eq!(starts, 1);
    // Neither does an apply.
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(calls(&serve, "POST", "/api/2.2/jobs/run-now"), 1);
    assert_eq!(recorded_run(d), run);

    // A change of what triggers a run starts a new one.
    std::fs::write(d.join("main.bf.hcl"), cfg("2")).unwrap();
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("databricks_job_run.once"), "{out}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(calls(&serve, "POST", "/api/2.2/jobs/run-now"), 2);
    let new = recorded_run(d);
    assert_ne!(new, run);
    let got = serve.ok("GET", &format!("/api/2.2/jobs/runs/get?run_id={new}"), None);
    assert_eq!(got["state"]["result_state"], "SUCCESS", "{got}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn repairing_a_run_the_workspace_no_longer_keeps_says_it_is_gone() {
    let dir = config(&[("main.bf.hcl", &cfg("1"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let run = recorded_run(d);
    sixty_one_days_pass(&serve);

    let job = "databricks_job.j";
    let (code, out, err) = bf(d, &serve, &["run", job, "--repair", &run, "--auto-approve"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("{job}: run {run} no longer exists"))
            && err.contains("keeps a job's runs for 60 days")
            && err.contains(&format!("start a new run with `brickform run {job}`")),
        "{err}"
    );
    assert_eq!(calls(&serve, "POST", "/api/2.2/jobs/runs/repair"), 0);
    assert_eq!(calls(&serve, "POST", "/api/2.2/jobs/run-now"), 1);
    // Cancelling it is refused the same way.
    let (code, out, err) = bf(d, &serve, &["run", job, "--cancel", &run, "--auto-approve"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("run {run} no longer exists")) && err.contains("nothing to cancel"),
        "{err}"
    );
    assert_eq!(calls(&serve, "POST", "/api/2.2/jobs/runs/cancel"), 0);
}
