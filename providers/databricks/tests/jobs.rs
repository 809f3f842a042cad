//! databricks_job and databricks_job_run against the local workspace: every task type,
//! tasks keyed by task_key, server defaults never drift, more than 100 tasks, runs that
//! succeed and runs that fail the apply.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_core::plan::{Action, PlanMode};
use common::Harness;

const NOTEBOOK: &str = r#"
resource "databricks_notebook" "nb" {
  path           = "/Shared/jobs/nb.py"
  content_base64 = base64encode("print(1)")
}
"#;

fn every_task_type(order_swapped: bool, run_if: &str) -> String {
    let first = r#"
  task {
    task_key = "ingest"
    notebook_task {
      notebook_path   = databricks_notebook.nb.id
      base_parameters = { day = "today" }
    }
  }"#;
    let second = format!(
        r#"
  task {{
    task_key = "check"
    depends_on {{ task_key = "ingest" }}
    run_if   = "{run_if}"
    condition_task {{
      op    = "EQUAL_TO"
      left  = "{{{{job.parameters.env}}}}"
      right = "prod"
    }}
  }}"#
    );
    let (a, b) = if order_swapped {
        (second.as_str(), first)
    } else {
        (first, second.as_str())
    };
    format!(
        r#"{NOTEBOOK}
resource "databricks_job" "child" {{
  name = "child"
  task {{
    task_key = "only"
    notebook_task {{ notebook_path = databricks_notebook.nb.id }}
  }}
}}
resource "databricks_job" "all" {{
  name                = "all-task-types"
  max_concurrent_runs = 2
  tags                = {{ team = "data" }}
  parameter {{
    name    = "env"
    default = "dev"
  }}
  {a}
  {b}
  task {{
    task_key = "wheel"
    depends_on {{
      task_key = "check"
      outcome  = "true"
    }}
    environment_key = "default"
    python_wheel_task {{
      package_name     = "databricks_labs_sdp_meta"
      entry_point      = "run"
      named_parameters = {{ onboard_layer = "bronze" }}
    }}
  }}
  task {{
    task_key = "script"
    spark_python_task {{
      python_file = "/Workspace/Shared/jobs/script.py"
      parameters  = ["--day", "today"]
    }}
    environment_key = "default"
  }}
  task {{
    task_key = "report"
    sql_task {{
      warehouse_id = "abc123"
      query {{ query_id = "q1" }}
    }}
  }}
  task {{
    task_key = "each"
    for_each_task {{
      inputs      = "[1, 2]"
      concurrency = 2
      task {{
        task_key = "each_inner"
        notebook_task {{ notebook_path = databricks_notebook.nb.id }}
      }}
    }}
  }}
  task {{
    task_key = "downstream"
    run_job_task {{ job_id = databricks_job.child.id }}
  }}
  environment {{
    environment_key = "default"
    spec {{
      environment_version = "2"
      dependencies        = ["databricks-labs-sdp-meta==0.1.0"]
    }}
  }}
  schedule {{
    quartz_cron_expression = "0 0 2 * * ?"
    timezone_id            = "UTC"
    pause_status           = "PAUSED"
  }}
  email_notifications {{ on_failure = ["ops@example.com"] }}
  webhook_notifications {{
    on_failure {{ id = "hook-1" }}
  }}
  notification_settings {{ no_alert_for_skipped_runs = true }}
  health {{
    rules {{
      metric = "RUN_DURATION_SECONDS"
      op     = "GREATER_THAN"
      value  = 3600
    }}
  }}
  queue {{ enabled = true }}
  timeout_seconds = 7200
}}
"#
    )
}

#[tokio::test]
async fn a_job_with_every_task_type_has_no_drift_and_tasks_are_keyed() {
    let h = Harness::start().await;
    let (plan, report) = h
        .run(
            &every_task_type(false, "ALL_SUCCESS"),
            PlanMode::Normal,
            true,
        )
        .await;
    assert_eq!(plan.summary().add, 3);
    assert!(report.unwrap().failed.is_empty());

    let (plan, _) = h
        .run(
            &every_task_type(false, "ALL_SUCCESS"),
            PlanMode::Normal,
            false,
        )
        .await;
    assert!(
        !plan.has_changes(),
        "no drift after apply: {:#?}",
        plan.changes
            .iter()
            .filter(|c| c.action != Action::NoOp)
            .collect::<Vec<_>>()
    );

    // Reordering tasks in the file changes nothing.
    let (plan, _) = h
        .run(
            &every_task_type(true, "ALL_SUCCESS"),
            PlanMode::Normal,
            false,
        )
        .await;
    assert!(
        !plan.has_changes(),
        "reordered tasks: {:#?}",
        plan.changes
            .iter()
            .filter(|c| c.action != Action::NoOp)
            .collect::<Vec<_>>()
    );

    // One task changes: exactly that update, in place.
    let (plan, report) = h
        .run(&every_task_type(true, "ALL_DONE"), PlanMode::Normal, true)
        .await;
    let s = plan.summary();
    assert_eq!((s.add, s.change, s.destroy), (0, 1, 0));
    let job = plan
        .changes
        .iter()
        .find(|c| c.address() == "databricks_job.all")
        .unwrap();
    assert_eq!(job.action, Action::Update);
    assert!(report.unwrap().failed.is_empty());
    let id = h
        .state()
        .await
        .get(&brickform_core::addrs::InstanceAddr::parse("databricks_job.all").unwrap())
        .unwrap()
        .id
        .clone();
    let live = h.api_get(&format!("/api/2.2/jobs/get?job_id={id}")).await;
    let check = live["settings"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_key"] == "check")
        .unwrap();
    assert_eq!(check["run_if"], "ALL_DONE");
    assert!(
        live["settings"]["tags"]["brickform"]
            .as_str()
            .unwrap()
            .ends_with("/databricks_job.all"),
        "ownership tag on the wire"
    );
    let state = h.state().await;
    let tags = &state
        .get(&brickform_core::addrs::InstanceAddr::parse("databricks_job.all").unwrap())
        .unwrap()
        .config["tags"];
    assert_eq!(
        tags,
        &serde_json::json!({ "team": "data" }),
        "the ownership tag is not the user's"
    );

    let (plan, _) = h
        .run(&every_task_type(true, "ALL_DONE"), PlanMode::Normal, false)
        .await;
    assert!(!plan.has_changes());
    let (_, report) = h
        .run(&every_task_type(true, "ALL_DONE"), PlanMode::Destroy, true)
        .await;
    assert_eq!(report.unwrap().destroyed, 3);
    let jobs = h.api_get("/api/2.2/jobs/list").await;
    assert!(jobs["jobs"].as_array().is_none_or(Vec::is_empty), "{jobs}");
}

#[tokio::test]
async fn a_job_with_more_than_100_tasks_reads_back_whole() {
    let h = Harness::start().await;
    let src = format!(
        r#"{NOTEBOOK}
resource "databricks_job" "big" {{
  name = "big"
  dynamic "task" {{
    for_each = range(130)
    content {{
      task_key = "t${{task.value}}"
      notebook_task {{ notebook_path = databricks_notebook.nb.id }}
    }}
  }}
}}
"#
    );
    h.run(&src, PlanMode::Normal, true).await;
    let (plan, _) = h.run(&src, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "all 130 tasks were read back");
    let gets = h.requests("GET").await;
    assert!(
        gets.iter().filter(|p| p.contains("/jobs/get")).count() >= 2,
        "paged read: {gets:?}"
    );
}

#[tokio::test]
async fn job_runs_wait_for_the_result_and_fail_the_apply_when_the_run_fails() {
    let h = Harness::start().await;
    let src = |notebook: &str, version: &str| {
        format!(
            r#"{NOTEBOOK}
resource "databricks_job" "j" {{
  name = "runs"
  task {{
    task_key = "a"
    notebook_task {{ notebook_path = "{notebook}" }}
  }}
  depends_on = [databricks_notebook.nb]
}}
resource "databricks_job_run" "r" {{
  job_id   = databricks_job.j.id
  triggers = {{ version = "{version}" }}
}}
"#
        )
    };
    let (_, report) = h
        .run(&src("/Shared/jobs/nb", "1"), PlanMode::Normal, true)
        .await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let run = h
        .state()
        .await
        .get(&brickform_core::addrs::InstanceAddr::parse("databricks_job_run.r").unwrap())
        .unwrap()
        .clone();
    assert_eq!(run.computed["result_state"], "SUCCESS");

    // Nothing changed: no new run.
    let (plan, _) = h
        .run(&src("/Shared/jobs/nb", "1"), PlanMode::Normal, false)
        .await;
    assert!(!plan.has_changes());

    // A changed trigger starts a new run; this one fails and so does the apply.
    let (plan, report) = h
        .run(&src("/Shared/jobs/missing", "2"), PlanMode::Normal, true)
        .await;
    let r = plan
        .changes
        .iter()
        .find(|c| c.address() == "databricks_job_run.r")
        .unwrap();
    assert!(r.action.is_replace(), "{:?}", r.action);
    let report = report.unwrap();
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert!(
        report.failed[0].1.contains("FAILED"),
        "{}",
        report.failed[0].1
    );
}
