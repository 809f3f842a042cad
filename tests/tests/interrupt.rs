//! Ctrl-C during apply: scheduling stops, calls in flight finish, state is saved, and the
//! next apply finishes the job with no duplicate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, bin, config, run};
use std::io::{BufRead, BufReader};

const TOKEN: (&str, &str) = ("DATABRICKS_TOKEN", "e2e-token");

const CONFIG: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_catalog" "c" {
  name          = "interrupted"
  force_destroy = true
}
resource "databricks_schema" "s" {
  count        = 12
  catalog_name = databricks_catalog.c.name
  name         = "s${count.index}"
}
"#;

#[test]
fn ctrl_c_stops_scheduling_and_saves_state() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &["--latency-ms", "150"]);
    let host = format!("host={}", serve.url);

    let mut child = std::process::Command::new(bin())
        .arg("-C")
        .arg(d)
        .args([
            "apply",
            "--auto-approve",
            "--parallelism",
            "2",
            "--var",
            &host,
        ])
        .env(TOKEN.0, TOKEN.1)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the first schema is done: the catalog and some schemas exist, others
    // are not started yet.
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.starts_with("databricks_schema.s[") && line.contains("Creation complete") {
            break;
        }
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "interrupted apply exits 1\n{}\n{stderr}",
        rest.join("\n")
    );
    assert!(stderr.contains("Interrupt received"), "{stderr}");
    let all = [seen, rest].concat().join("\n");
    assert!(all.contains("Apply interrupted"), "{all}");

    // What finished is in state; what was not started was not created.
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    let in_state = state["resources"].as_array().unwrap().len();
    assert!((2..13).contains(&in_state), "{in_state} resources in state");
    let created = serve.dump()["schemas"]
        .as_object()
        .map(|m| m.keys().filter(|k| k.starts_with("interrupted.s")).count())
        .unwrap_or(0);
    assert_eq!(created, in_state - 1, "every created schema is in state");

    // The next apply finishes: no duplicate, nothing left to do.
    let (code, stdout, stderr) = run(d, &["apply", "--auto-approve", "--var", &host], &[TOKEN]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("{} added", 13 - in_state)),
        "{stdout}"
    );
    let (code, _, _) = run(
        d,
        &["plan", "--detailed-exitcode", "--var", &host],
        &[TOKEN],
    );
    assert_eq!(code, 0);
    let (code, _, _) = run(d, &["destroy", "--auto-approve", "--var", &host], &[TOKEN]);
    assert_eq!(code, 0);
}

const JOB: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_notebook" "nb" {
  path           = "/Shared/interrupt/nb"
  language       = "PYTHON"
  content_base64 = base64encode("print(1)")
}
resource "databricks_job" "j" {
  name = "interrupt_run"
  # The first test run is left going while the second starts.
  max_concurrent_runs = 2
  task {
    task_key = "slow"
    notebook_task {
      notebook_path = databricks_notebook.nb.path
    }
  }
}
"#;

/// Starts `brickform run databricks_job.j` (with `extra` arguments), interrupts it once the
/// run is followed, and returns its exit code, output and the run's id.
fn interrupted_run(
    d: &std::path::Path,
    host: &str,
    extra: &[&str],
) -> (Option<i32>, String, String) {
    let mut child = std::process::Command::new(bin())
        .arg("-C")
        .arg(d)
        .args(["run", "databricks_job.j", "--var", host])
        .args(extra)
        .env(TOKEN.0, TOKEN.1)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    // The run's page is told once the run is followed; interrupt then.
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.trim_start().starts_with("http") {
            break;
        }
    }
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    seen.extend(lines.map(|l| l.unwrap()));
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        seen.join("\n"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The id in `brickform run`'s "started run ID" line.
fn started_run(out: &str) -> String {
    out.split("started run ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no started run in {out}"))
        .to_string()
}

/// Ctrl-C while `brickform run` follows a job run: without a terminal to ask in, the run
/// goes on and the command says so (exit 130); with --auto-approve it is cancelled and the
/// command waits for it to end.
#[test]
fn ctrl_c_during_run_says_the_run_goes_on_or_cancels_it() {
    let dir = config(&[("main.bf.hcl", JOB)]);
    let d = dir.path();
    let data = tempfile::tempdir().unwrap();
    // Each task takes a minute: the run is still going when it is interrupted.
    let serve = Serve::start(data.path(), &["--task-ms", "60000"]);
    let host = format!("host={}", serve.url);
    let (code, out, err) = run(d, &["apply", "--auto-approve", "--var", &host], &[TOKEN]);
    assert_eq!(code, 0, "{out}{err}");

    let (code, out, err) = interrupted_run(d, &host, &[]);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(out.contains("started run "), "{out}");
    assert!(
        err.contains("goes on in the workspace; brickform no longer follows it"),
        "{err}"
    );
    let run_id = started_run(&out);
    let state = |id: &str| -> String {
        let (status, body) = common::http_auth(
            "GET",
            &format!("{}/api/2.2/jobs/runs/get?run_id={id}", serve.url),
            None,
            "application/json",
            TOKEN.1,
        );
        assert_eq!(status, 200);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        v["state"]["life_cycle_state"].as_str().unwrap().to_string()
    };
    let left = state(&run_id);
    assert!(matches!(left.as_str(), "PENDING" | "RUNNING"), "{left}");

    let (code, out, err) = interrupted_run(d, &host, &["--auto-approve"]);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(out.contains("cancelling "), "{out}");
    assert!(
        err.contains("was cancelled; it ended CANCELED"),
        "{out}\n{err}"
    );
    let second = started_run(&out);
    assert_eq!(state(&second), "TERMINATED");
}

/// Starts `brickform ARGS`, sends Ctrl-C `times` times (a tenth of a second apart) once
/// the file `when` exists (the state lock: the command holds it; the write-ahead log: the
/// apply has begun writing), and returns its exit code and standard error.
fn interrupted(
    d: &std::path::Path,
    args: &[&str],
    when: &std::path::Path,
    times: usize,
) -> (Option<i32>, String) {
    let child = std::process::Command::new(bin())
        .arg("-C")
        .arg(d)
        .args(args)
        .env(TOKEN.0, TOKEN.1)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !when.exists() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(when.exists(), "{} never appeared", when.display());
    for _ in 0..times {
        std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Ctrl-C while a plan reads the workspace stops it at once and releases the state lock, so
/// the next command does not wait for it (nor, on a volume, for the lock to expire); a
/// second Ctrl-C during an apply stops it at once too, and the next apply finishes the work.
#[test]
fn ctrl_c_while_planning_releases_the_lock_and_a_second_one_stops_an_apply() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &["--latency-ms", "400"]);
    let host = format!("host={}", serve.url);
    let lock = d.join(".brickform/state/default.lock");

    let (code, stderr) = interrupted(d, &["plan", "--var", &host], &lock, 1);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("releases the state lock"), "{stderr}");
    assert!(!lock.exists(), "the lock file is gone");
    // Nothing waits for a lock: a plan that may not wait at all runs.
    let (code, _, stderr) = run(
        d,
        &["plan", "--lock-timeout", "0s", "--var", &host],
        &[TOKEN],
    );
    assert_eq!(code, 0, "{stderr}");

    let wal = d.join(".brickform/state/default.wal");
    let _ = std::fs::remove_file(&wal);
    let (code, stderr) = interrupted(
        d,
        &[
            "apply",
            "--auto-approve",
            "--parallelism",
            "1",
            "--var",
            &host,
        ],
        &wal,
        2,
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("Interrupt received"), "{stderr}");
    assert!(stderr.contains("releases the state lock"), "{stderr}");
    assert!(!lock.exists(), "the lock file is gone");
    let (code, stdout, stderr) = run(d, &["apply", "--auto-approve", "--var", &host], &[TOKEN]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let (code, _, _) = run(
        d,
        &["plan", "--detailed-exitcode", "--var", &host],
        &[TOKEN],
    );
    assert_eq!(code, 0);
    let (code, _, _) = run(d, &["destroy", "--auto-approve", "--var", &host], &[TOKEN]);
    assert_eq!(code, 0);
}
