//! A job's `run_as` must name a principal the workspace has: the service refuses a user or
//! service principal it does not know (the local workspace's `refuse_unknown_run_as`, on by
//! default), and apply shows that refusal at the job's address, exits 1 and leaves nothing
//! half-done: no job in the workspace or the state after a refused create, the old `run_as`
//! in both after a refused change.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::served_plan_is_empty as plan_is_empty;
use common::{SERVED_PROVIDER, Serve, config, served as bf, served_ok as bf_ok};
use serde_json::{Value, json};
use std::path::Path;

fn job_running_as(who: &str) -> String {
    format!(
        r#"{SERVED_PROVIDER}
resource "databricks_job" "j" {{
  name = "nightly"
  run_as {{
    user_name = "{who}"
  }}
  task {{
    task_key = "a"
    notebook_task {{
      notebook_path = "/Shared/a"
    }}
  }}
}}
"#
    )
}

/// Every job the workspace holds.
fn jobs(serve: &Serve) -> Vec<Value> {
    let listed = serve.ok("GET", "/api/2.2/jobs/list", None);
    listed["jobs"].as_array().cloned().unwrap_or_default()
}

/// `apply` fails with the service's refusal of `who`, shown at the job's address.
fn apply_is_refused(d: &Path, serve: &Serve, who: &str) {
    let (code, out, err) = bf(d, serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let all = format!("{out}\n{err}");
    assert!(
        all.contains(&format!(
            "databricks_job.j: RESOURCE_DOES_NOT_EXIST: Principal: UserName({who}) does not exist"
        )),
        "{all}"
    );
    assert!(all.contains("1 failed"), "{all}");
}

/// The `run_as` the state records for the job, and the one the workspace holds.
fn run_as_recorded_and_held(d: &Path, serve: &Serve, id: i64) -> (Value, Value) {
    let shown = bf_ok(d, serve, &["state", "show", "databricks_job.j", "--json"]);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    let got = serve.ok("GET", &format!("/api/2.2/jobs/get?job_id={id}"), None);
    (
        shown["config"]["run_as"]["user_name"].clone(),
        got["settings"]["run_as"].clone(),
    )
}

#[test]
fn a_run_as_naming_nobody_the_workspace_has_is_refused_at_apply_and_nothing_is_left_half_done() {
    let dir = config(&[("main.bf.hcl", &job_running_as("nobody@example.com"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);

    // A create naming an unknown user: refused, no job anywhere.
    apply_is_refused(d, &serve, "nobody@example.com");
    assert_eq!(jobs(&serve), Vec::<Value>::new());
    let listed = bf_ok(d, &serve, &["state", "list"]);
    assert!(!listed.contains("databricks_job.j"), "{listed}");

    // A user SCIM holds (in another case): created, and nothing planned after.
    serve.ok(
        "POST",
        "/api/2.0/preview/scim/v2/Users",
        Some(json!({ "userName": "Ann@Example.com" })),
    );
    std::fs::write(d.join("main.bf.hcl"), job_running_as("ann@example.com")).unwrap();
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 1 added"), "{out}");
    plan_is_empty(d, &serve);
    let held = jobs(&serve);
    assert_eq!(held.len(), 1, "{held:?}");
    let id = held[0]["job_id"].as_i64().unwrap();
    let before = run_as_recorded_and_held(d, &serve, id);
    assert_eq!(
        before,
        (
            json!("ann@example.com"),
            json!({"user_name": "Ann@Example.com"})
        )
    );

    // A change to another unknown user: refused, the job keeps the user it runs as.
    std::fs::write(d.join("main.bf.hcl"), job_running_as("bob@example.com")).unwrap();
    apply_is_refused(d, &serve, "bob@example.com");
    assert_eq!(run_as_recorded_and_held(d, &serve, id), before);
    let held = jobs(&serve);
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0]["job_id"], json!(id));
    // The refused change is still planned, and still refused.
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );

    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("0 left behind"), "{out}");
    assert_eq!(jobs(&serve), Vec::<Value>::new());
    let listed = bf_ok(d, &serve, &["state", "list"]);
    assert!(!listed.contains("databricks_job.j"), "{listed}");
}
