//! Ctrl-C during apply: scheduling stops, calls in flight finish, state is saved, and the
//! next apply finishes the job with no duplicate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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
