//! Jobs as the real service answers them: `jobs/get` sorts each task's `depends_on`, fills
//! `new_cluster` defaults and an empty `email_notifications` per task, and pages tasks 100 at
//! a time; `jobs/reset` keeps a `run_as` the new settings leave out; a failed task says only
//! "Workload failed, see run output for details", with the cause in `runs/get-output`. Each
//! test drives the binary against the local workspace, which models these by default.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use common::{served as bf, served_ok as bf_ok};
use serde_json::Value;

use common::{SERVED_PROVIDER as PROVIDER, served_plan_is_empty as plan_is_empty};

fn only_job(serve: &Serve) -> (i64, Value) {
    let jobs = serve.ok("GET", "/api/2.2/jobs/list", None);
    let id = jobs["jobs"][0]["job_id"].as_i64().expect("a job");
    let got = serve.ok("GET", &format!("/api/2.2/jobs/get?job_id={id}"), None);
    (id, got)
}

#[test]
fn defaults_and_sorted_dependencies_leave_the_next_plan_empty() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "etl" {{
  name = "etl"
  job_cluster {{
    job_cluster_key = "shared"
    new_cluster {{
      spark_version = "15.4.x-scala2.12"
      node_type_id  = "i3.xlarge"
      num_workers   = 1
    }}
  }}
  task {{
    task_key = "z_load"
    notebook_task {{ notebook_path = "/Shared/load" }}
    new_cluster {{
      spark_version = "15.4.x-scala2.12"
      node_type_id  = "i3.xlarge"
      num_workers   = 2
    }}
  }}
  task {{
    task_key = "a_extract"
    notebook_task {{ notebook_path = "/Shared/extract" }}
  }}
  task {{
    task_key = "report"
    job_cluster_key = "shared"
    notebook_task {{ notebook_path = "/Shared/report" }}
    depends_on {{ task_key = "z_load" }}
    depends_on {{ task_key = "a_extract" }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // The service holds what it filled in, and the order it chose.
    let (_, job) = only_job(&serve);
    let tasks = job["settings"]["tasks"].as_array().unwrap();
    let report = tasks.iter().find(|t| t["task_key"] == "report").unwrap();
    assert_eq!(report["depends_on"][0]["task_key"], "a_extract", "{report}");
    assert_eq!(report["email_notifications"], serde_json::json!({}));
    let load = tasks.iter().find(|t| t["task_key"] == "z_load").unwrap();
    assert_eq!(load["new_cluster"]["data_security_mode"], "SINGLE_USER");
    assert_eq!(load["new_cluster"]["enable_elastic_disk"], false);
    assert!(load["new_cluster"]["aws_attributes"].is_object(), "{load}");
    plan_is_empty(d, &serve);
    // The state records what the service holds, so the plan's `after` is the truth.
    let state = common::run_ok(d, &["state", "show", "databricks_job.etl", "--json"], &[]);
    assert!(state.contains("SINGLE_USER"), "{state}");
    // A real change still plans as one, and leaves nothing behind after apply.
    let changed = cfg.replace("num_workers   = 2", "num_workers   = 3");
    std::fs::write(d.join("main.bf.hcl"), changed).unwrap();
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
}

#[test]
fn a_job_of_more_than_a_hundred_tasks_round_trips() {
    let mut tasks = String::new();
    for i in 0..230 {
        let dep = if i > 0 {
            format!("depends_on {{ task_key = \"t{:03}\" }}", i - 1)
        } else {
            String::new()
        };
        tasks.push_str(&format!(
            "  task {{\n    task_key = \"t{i:03}\"\n    notebook_task {{ notebook_path = \"/Shared/n\" }}\n    {dep}\n  }}\n"
        ));
    }
    let cfg = format!(
        "{PROVIDER}\nresource \"databricks_job\" \"big\" {{\n  name = \"big\"\n{tasks}}}\n"
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // The service pages: the first answer has 100 tasks and says there is more.
    let (id, first) = only_job(&serve);
    assert_eq!(first["settings"]["tasks"].as_array().unwrap().len(), 100);
    assert_eq!(first["has_more"], true, "{}", first["has_more"]);
    assert!(first["next_page_token"].is_string());
    let _ = id;
    plan_is_empty(d, &serve);
    let state = common::run_ok(d, &["state", "show", "databricks_job.big", "--json"], &[]);
    assert!(state.contains("t229"), "the last page was not read");
    // Changing a task on the last page is planned as exactly that change.
    std::fs::write(
        d.join("main.bf.hcl"),
        cfg.replace(
            "task_key = \"t229\"\n    notebook_task { notebook_path = \"/Shared/n\" }",
            "task_key = \"t229\"\n    notebook_task { notebook_path = \"/Shared/last\" }",
        ),
    )
    .unwrap();
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("/Shared/last"), "{out}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
}

#[test]
fn removing_run_as_runs_the_job_as_its_owner_again() {
    let with = format!(
        r#"{PROVIDER}
resource "databricks_job" "j" {{
  name = "j"
  run_as {{ service_principal_name = "9f0c2e4a-1b2c-4d5e-8f90-123456789abc" }}
  task {{
    task_key = "a"
    notebook_task {{ notebook_path = "/Shared/a" }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &with)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    // The service principal the job runs as exists (`refuse_unknown_run_as`).
    serve.service_principal("9f0c2e4a-1b2c-4d5e-8f90-123456789abc");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (_, job) = only_job(&serve);
    assert_eq!(
        job["run_as_user_name"],
        "9f0c2e4a-1b2c-4d5e-8f90-123456789abc"
    );
    plan_is_empty(d, &serve);
    let creator = job["creator_user_name"].as_str().unwrap().to_string();
    // Without run_as the job runs as its owner again, on the service, not only in the plan.
    let without = with.replace(
        "  run_as { service_principal_name = \"9f0c2e4a-1b2c-4d5e-8f90-123456789abc\" }\n",
        "",
    );
    assert_ne!(with, without);
    std::fs::write(d.join("main.bf.hcl"), &without).unwrap();
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (_, job) = only_job(&serve);
    assert_eq!(job["run_as_user_name"], creator.as_str(), "{job}");
    plan_is_empty(d, &serve);
}

const FAILING: &str = r#"
resource "databricks_job" "j" {
  name = "j"
  task {
    task_key = "ok"
    spark_python_task { python_file = "relative/ok.py" }
  }
  task {
    task_key = "broken"
    notebook_task { notebook_path = "/Shared/does_not_exist" }
  }
}
"#;

#[test]
fn a_failed_run_shows_each_failed_tasks_error_from_its_output() {
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{FAILING}"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.j"]);
    assert_eq!(code, 1, "{out}{err}");
    // The service says only "Workload failed"; the cause comes from runs/get-output.
    let runs = serve.ok("GET", "/api/2.2/jobs/runs/list?expand_tasks=true", None);
    let run = &runs["runs"][0];
    let broken = run["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_key"] == "broken")
        .unwrap();
    assert_eq!(
        broken["state"]["state_message"],
        "Workload failed, see run output for details"
    );
    assert_eq!(broken["state"]["result_state"], "FAILED");
    let output = serve.ok(
        "GET",
        &format!("/api/2.2/jobs/runs/get-output?run_id={}", broken["run_id"]),
        None,
    );
    assert!(
        output["error"]
            .as_str()
            .unwrap()
            .contains("/Shared/does_not_exist")
    );
    assert!(output["error_trace"].is_string());
    // The run's page is an absolute link into the workspace, as the service gives it.
    let workspace_id = serve.dump()["workspace_id"].as_i64().unwrap();
    assert_eq!(
        run["run_page_url"],
        format!(
            "{}/?o={workspace_id}#job/{}/run/{}",
            serve.url, run["job_id"], run["run_id"]
        )
    );
    let shown = format!("{out}{err}");
    assert!(
        shown.contains("task broken: FAILED: Notebook not found: /Shared/does_not_exist"),
        "{shown}"
    );
    assert!(
        err.contains("broken: FAILED: Notebook not found: /Shared/does_not_exist"),
        "{err}"
    );
}

#[test]
fn a_failed_job_run_resource_fails_apply_with_the_tasks_error() {
    let cfg = format!(
        "{PROVIDER}{FAILING}\nresource \"databricks_job_run\" \"once\" {{\n  job_id = databricks_job.j.id\n}}\n"
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(code, 0, "{out}{err}");
    let shown = format!("{out}{err}");
    assert!(
        shown.contains("broken: FAILED: Notebook not found: /Shared/does_not_exist"),
        "{shown}"
    );
}

/// `continuous {}` (the Terraform provider's documentation example) means the job runs
/// continuously: the service keeps the empty block, with its pause status defaulted to
/// UNPAUSED, and the next plan is empty.
#[test]
fn an_empty_continuous_block_is_kept_and_the_next_plan_is_empty() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "stream" {{
  name = "stream"
  continuous {{}}
  task {{
    task_key = "ingest"
    notebook_task {{ notebook_path = "/Shared/ingest" }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (_, job) = only_job(&serve);
    assert_eq!(
        job["settings"]["continuous"],
        serde_json::json!({ "pause_status": "UNPAUSED" }),
        "{job}"
    );
    plan_is_empty(d, &serve);
}

/// The service refuses `outcome` on a dependency that is not a condition task ("Outcomes
/// can only be specified for if/else condition dependencies"), so validate refuses it
/// first, at the attribute, and says what was meant: the task's `run_if`. `"failed"`, the
/// value a user who means "when it failed" writes, is not taken for a misspelt `"false"`.
#[test]
fn validate_refuses_outcome_on_a_dependency_that_is_not_a_condition() {
    // `load`'s dependency gets `outcome`, the task `run_if`.
    let job = |outcome: &str, run_if: &str| {
        format!(
            r#"resource "databricks_job" "flow" {{
  name = "flow"
  task {{
    task_key = "check"
    condition_task {{
      op    = "EQUAL_TO"
      left  = "1"
      right = "1"
    }}
  }}
  task {{
    task_key = "load"
    notebook_task {{ notebook_path = "/Shared/load" }}
  }}
  task {{
    task_key = "after"
    notebook_task {{ notebook_path = "/Shared/after" }}
{run_if}
    depends_on {{
      task_key = "check"
      outcome  = "true"
    }}
    depends_on {{
      task_key = "load"
{outcome}
    }}
  }}
}}
"#
        )
    };
    for outcome in ["failed", "false"] {
        let text = job(&format!("      outcome  = \"{outcome}\""), "");
        let line = text
            .lines()
            .position(|l| l.contains(&format!("outcome  = \"{outcome}\"")))
            .unwrap()
            + 1;
        let dir = config(&[("main.bf.hcl", &text)]);
        let (code, out, err) = common::run(dir.path(), &["validate"], &[]);
        assert_eq!(code, 1, "{outcome}\n{out}{err}");
        for says in [
            "run_if".to_string(),
            "\"AT_LEAST_ONE_FAILED\"".to_string(),
            "\"ALL_DONE\"".to_string(),
            format!("main.bf.hcl:{line}:"),
        ] {
            assert!(err.contains(&says), "{outcome}: {says:?} missing in\n{err}");
        }
        assert!(!err.contains("did you mean"), "{outcome}: {err}");
    }
    // What it says to write instead passes.
    let text = job("", "    run_if = \"AT_LEAST_ONE_FAILED\"");
    let dir = config(&[("main.bf.hcl", &text)]);
    let (code, out, err) = common::run(dir.path(), &["validate"], &[]);
    assert_eq!(code, 0, "{text}\n{out}{err}");
}
