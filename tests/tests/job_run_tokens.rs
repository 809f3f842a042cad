//! A `databricks_job_run` is started by jobs/run-now, which makes nothing that can be found by
//! name: a lost answer or a kill after the call could start a second run on the next apply.
//! The create sends an idempotency token, and a create whose fate is unknown is repeated with
//! the same token (the service returns the run it started), now or in the next apply. Each
//! test drives the binary against `brickform local serve`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, bin, config, served as bf, served_ok as bf_ok};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

const CFG: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }

resource "databricks_notebook" "etl" {
  path           = "/Shared/tokens_etl.py"
  content_base64 = base64encode("print(1)")
}

resource "databricks_job" "j" {
  name = "tokens"
  task {
    task_key = "etl"
    notebook_task {
      notebook_path = databricks_notebook.etl.path
    }
  }
}

resource "databricks_job_run" "once" {
  job_id = databricks_job.j.id
}
"#;

const RUN_NOW: &str = "/api/2.2/jobs/run-now";

/// The ids of every run in the workspace, oldest first.
fn runs(serve: &Serve) -> Vec<i64> {
    let list = serve.ok("GET", "/api/2.2/jobs/runs/list?limit=25", None);
    let mut ids: Vec<i64> = list["runs"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["run_id"].as_i64()).collect())
        .unwrap_or_default();
    ids.sort();
    ids
}

fn state(d: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap())
        .unwrap()
}

/// The run the state records for `databricks_job_run.once`.
fn recorded_run(d: &Path) -> Option<i64> {
    state(d)["resources"]
        .as_array()?
        .iter()
        .find(|r| r["address"] == "databricks_job_run.once")?["id"]
        .as_str()?
        .parse()
        .ok()
}

fn plan_is_empty(d: &Path, serve: &Serve) {
    let (code, out, err) = bf(d, serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the plan after apply is not empty:\n{out}{err}");
}

fn run_now_calls(serve: &Serve) -> usize {
    let log = serve.ok(
        "GET",
        &format!("/__emulator/requests?method=POST&path={RUN_NOW}"),
        None,
    );
    log["requests"].as_array().unwrap().len()
}

/// The run-now answer is lost once after the run started (a 500, a dropped connection): the
/// same apply repeats the call with its token, gets the run it started, and records it.
#[test]
fn a_lost_run_now_answer_starts_one_run() {
    for (label, lost) in [
        ("500", json!({"status": 500})),
        ("drop", json!({"drop": true})),
    ] {
        let dir = config(&[("main.bf.hcl", CFG)]);
        let d = dir.path();
        let serve = Serve::start(&d.join(".brickform/local"), &[]);
        let mut fault =
            json!({"method": "POST", "path": RUN_NOW, "times": 1, "after_side_effect": true});
        fault
            .as_object_mut()
            .unwrap()
            .extend(lost.as_object().unwrap().clone());
        serve.ok("POST", "/__emulator/faults", Some(fault));
        let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
        assert_eq!(code, 0, "{label}: {out}\n{err}");
        let faults = serve.ok("GET", "/__emulator/faults", None);
        assert_eq!(faults["faults"][0]["fired"], 1, "{label}: {faults}");
        assert_eq!(run_now_calls(&serve), 2, "{label}: repeated once");
        let ids = runs(&serve);
        assert_eq!(ids.len(), 1, "{label}: one run of the job: {ids:?}");
        assert_eq!(recorded_run(d), Some(ids[0]), "{label}");
        plan_is_empty(d, &serve);
        assert_eq!(runs(&serve).len(), 1, "{label}");
    }
}

/// The repeat's answer is lost too: the apply fails saying the next one repeats the create,
/// the state keeps the token, and the next apply gets the run the first call started.
#[test]
fn a_run_now_lost_twice_is_resolved_by_the_next_apply() {
    let dir = config(&[("main.bf.hcl", CFG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"method": "POST", "path": RUN_NOW, "times": 2, "after_side_effect": true, "status": 500})),
    );
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("the next apply repeats the create with the same token"),
        "{err}"
    );
    let kept = state(d)["pending_tokens"]["databricks_job_run.once"].clone();
    assert!(kept.is_string(), "{}", state(d));
    assert_eq!(runs(&serve).len(), 1);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let ids = runs(&serve);
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(recorded_run(d), Some(ids[0]));
    assert!(state(d).get("pending_tokens").is_none());
    let log = serve.ok(
        "GET",
        &format!("/__emulator/requests?method=POST&path={RUN_NOW}"),
        None,
    );
    let tokens: Vec<&Value> = log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["body"]["idempotency_token"])
        .collect();
    assert_eq!(
        tokens,
        [&kept, &kept, &kept],
        "one token for all three calls"
    );
    plan_is_empty(d, &serve);
}

/// Starts `apply` and kills it (SIGKILL) once a run of the job exists, while the run-now
/// answer is held back: the run was started and brickform never heard of it.
fn apply_killed_after_run_now(d: &Path, serve: &Serve) {
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"method": "POST", "path": RUN_NOW, "times": 1, "after_side_effect": true, "delay_ms": 20000})),
    );
    let mut child = std::process::Command::new(bin())
        .args(["-C"])
        .arg(d)
        .args(["apply", "--auto-approve", "--var"])
        .arg(format!("host={}", serve.url))
        .env("DATABRICKS_TOKEN", "e2e-token")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the apply ended before the kill"
        );
        if !runs(serve).is_empty() {
            child.kill().unwrap();
            child.wait().unwrap();
            break;
        }
        assert!(Instant::now() < deadline, "no run was started");
        std::thread::sleep(Duration::from_millis(20));
    }
    serve.ok("DELETE", "/__emulator/faults", None);
    assert_eq!(runs(serve).len(), 1);
    assert_eq!(recorded_run(d), None, "the kill came before the result");
}

/// Killed after run-now was sent: the next apply's recovery keeps the token, its create sends
/// it again, and the run the killed apply started is the one recorded; no second run.
#[test]
fn a_kill_after_run_now_then_apply_records_the_run_it_started() {
    let dir = config(&[("main.bf.hcl", CFG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    apply_killed_after_run_now(d, &serve);
    let started = runs(&serve);

    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("Recovered: databricks_job_run.once: the interrupted create cannot be looked up; its token is kept"),
        "{err}"
    );
    assert_eq!(runs(&serve), started, "no second run");
    assert_eq!(recorded_run(d), Some(started[0]));
    assert!(
        state(d).get("pending_tokens").is_none(),
        "the token is done with once the run is recorded"
    );
    plan_is_empty(d, &serve);
    assert_eq!(runs(&serve), started);
}

/// A destroy after such a kill drops the token (a destroyed job run is only forgotten): the
/// apply after it starts a new run of the new job.
#[test]
fn a_destroy_after_a_kill_after_run_now_drops_the_token() {
    let dir = config(&[("main.bf.hcl", CFG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    apply_killed_after_run_now(d, &serve);
    let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("its token is kept"), "{err}");
    assert!(state(d).get("pending_tokens").is_none(), "{}", state(d));
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let ids = runs(&serve);
    assert_eq!(
        ids.len(),
        2,
        "the old job's run, and the new job's: {ids:?}"
    );
    assert_eq!(recorded_run(d), Some(ids[1]));
}

/// `--replace` of a job run starts a new run: each create has its own token.
#[test]
fn replacing_a_job_run_starts_a_new_run() {
    let dir = config(&[("main.bf.hcl", CFG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let first = runs(&serve);
    assert_eq!(first.len(), 1);
    bf_ok(
        d,
        &serve,
        &[
            "apply",
            "--auto-approve",
            "--replace",
            "databricks_job_run.once",
        ],
    );
    let ids = runs(&serve);
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_eq!(recorded_run(d), Some(ids[1]));
    let bodies = serve.ok(
        "GET",
        &format!("/__emulator/requests?method=POST&path={RUN_NOW}"),
        None,
    );
    let tokens: Vec<&str> = bodies["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["body"]["idempotency_token"].as_str())
        .collect();
    assert_eq!(tokens.len(), 2, "{bodies}");
    assert_ne!(tokens[0], tokens[1]);
    plan_is_empty(d, &serve);
}
