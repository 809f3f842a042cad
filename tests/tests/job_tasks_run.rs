//! Jobs whose tasks really run in the local workspace, driven by `brickform run`: a
//! condition task reads a task value given through `/__emulator/task-values` (and fails,
//! as on the service, while none is given), a For each task runs its nested task once
//! per input (the iterations in `runs/get` of the For each task's run, each with its
//! input resolved), and a Run Job task starts a run of the other job, which that job's
//! `runs/list` shows as started by the task, and waits for it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{SERVED_PROVIDER as PROVIDER, Serve, config};
use common::{served as bf, served_ok as bf_ok, served_plan_is_empty};
use serde_json::{Value, json};

const JOBS: &str = r#"
resource "databricks_notebook" "work" {
  path           = "/Shared/flow/work"
  language       = "PYTHON"
  content_base64 = base64encode("print('work')")
}
resource "databricks_job" "child" {
  name = "child"
  task {
    task_key = "only"
    notebook_task { notebook_path = databricks_notebook.work.path }
  }
}
resource "databricks_job" "flow" {
  name = "flow"
  task {
    task_key = "count"
    notebook_task { notebook_path = databricks_notebook.work.path }
  }
  task {
    task_key = "enough"
    depends_on { task_key = "count" }
    condition_task {
      op    = "GREATER_THAN"
      left  = "{{tasks.count.values.rows}}"
      right = "0"
    }
  }
  task {
    task_key = "each"
    depends_on {
      task_key = "enough"
      outcome  = "true"
    }
    for_each_task {
      inputs      = "[\"orders\", \"customers\", \"items\"]"
      concurrency = 2
      task {
        task_key = "each_table"
        notebook_task {
          notebook_path   = databricks_notebook.work.path
          base_parameters = { table = "{{input}}", run = "{{job.run_id}}" }
        }
      }
    }
  }
  task {
    task_key = "downstream"
    depends_on { task_key = "each" }
    run_job_task { job_id = databricks_job.child.id }
  }
}
"#;

/// The id of the job named `name`.
fn job_id(serve: &Serve, name: &str) -> i64 {
    let jobs = serve.ok("GET", "/api/2.2/jobs/list", None);
    jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["settings"]["name"] == name)
        .and_then(|j| j["job_id"].as_i64())
        .unwrap_or_else(|| panic!("no job {name} in {jobs}"))
}

/// The id after `started run ` in the command's output.
fn run_id(out: &str) -> i64 {
    out.split("started run ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no `started run ID` in {out}"))
}

fn get_run(serve: &Serve, id: i64) -> Value {
    serve.ok(
        "GET",
        &format!("/api/2.2/jobs/runs/get?run_id={id}&include_resolved_values=true"),
        None,
    )
}

fn task<'a>(run: &'a Value, key: &str) -> &'a Value {
    run["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_key"] == key)
        .unwrap_or_else(|| panic!("no task {key} in {run}"))
}

#[test]
fn a_job_with_for_each_run_job_and_a_condition_on_a_task_value_runs_its_tasks() {
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{JOBS}"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    served_plan_is_empty(d, &serve);
    serve.ok(
        "POST",
        "/__emulator/timings",
        Some(json!({"run_setup": 50, "task": 100})),
    );
    let flow = job_id(&serve, "flow");
    let child = job_id(&serve, "child");

    // No task value given: the condition on it fails, and what depends on it with it.
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.flow"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "Task enough failed with message: Could not resolve {{tasks.count.values.rows}}: task 'count' did not set the task value 'rows'."
        ),
        "{err}"
    );
    assert!(err.contains("each: UPSTREAM_FAILED"), "{err}");
    assert!(err.contains("downstream: UPSTREAM_FAILED"), "{err}");

    // The notebook of `count` sets rows = 3 in every run of the job.
    serve.ok(
        "POST",
        "/__emulator/task-values",
        Some(json!({"job_id": flow, "task_key": "count", "values": {"rows": 3}})),
    );
    let out = bf_ok(d, &serve, &["run", "databricks_job.flow"]);
    for t in ["count", "enough", "downstream"] {
        assert!(out.contains(&format!("task {t}: SUCCESS\n")), "{out}");
    }
    // The For each task says how many iterations it ran.
    assert!(
        out.contains("task each: SUCCESS: 3 of 3 iterations succeeded\n"),
        "{out}"
    );
    let run = run_id(&out);
    let got = get_run(&serve, run);
    assert_eq!(got["state"]["result_state"], "SUCCESS", "{got}");
    assert_eq!(
        task(&got, "enough")["resolved_values"]["condition_task"]["left"],
        "3"
    );

    // The For each task ran its notebook once per input, two at a time.
    let each = task(&got, "each");
    assert_eq!(
        each["for_each_task"]["stats"]["task_run_stats"],
        json!({"total_iterations": 3, "scheduled_iterations": 3, "active_iterations": 0,
            "completed_iterations": 3, "succeeded_iterations": 3, "failed_iterations": 0})
    );
    let each_run = get_run(&serve, each["run_id"].as_i64().unwrap());
    assert_eq!(each_run["job_run_id"], json!(run));
    assert_eq!(each_run["tasks"].as_array().unwrap().len(), 1);
    let iterations = each_run["iterations"].as_array().unwrap();
    let resolved: Vec<Value> = iterations
        .iter()
        .map(|i| i["resolved_values"]["notebook_task"]["base_parameters"].clone())
        .collect();
    assert_eq!(
        resolved,
        ["orders", "customers", "items"]
            .map(|t| json!({"table": t, "run": run.to_string()}))
            .to_vec()
    );
    assert!(
        iterations
            .iter()
            .all(|i| i["task_key"] == "each_table" && i["state"]["result_state"] == "SUCCESS")
    );
    let starts: Vec<i64> = iterations
        .iter()
        .map(|i| i["start_time"].as_i64().unwrap())
        .collect();
    assert_eq!(starts[0], starts[1]);
    assert!(starts[2] >= starts[0] + 100, "{starts:?}");

    // The Run Job task started a run of the child job and waited for it.
    let downstream = task(&got, "downstream");
    let runs = serve.ok(
        "GET",
        &format!("/api/2.2/jobs/runs/list?job_id={child}"),
        None,
    );
    let child_runs = runs["runs"].as_array().unwrap();
    assert_eq!(child_runs.len(), 1, "{runs}");
    let child_run = &child_runs[0];
    assert_eq!(child_run["trigger"], "RUN_JOB_TASK");
    assert_eq!(child_run["trigger_info"]["run_id"], downstream["run_id"]);
    assert_eq!(child_run["state"]["result_state"], "SUCCESS");
    assert!(downstream["end_time"].as_i64() >= child_run["end_time"].as_i64());
    let output = serve.ok(
        "GET",
        &format!(
            "/api/2.2/jobs/runs/get-output?run_id={}",
            downstream["run_id"]
        ),
        None,
    );
    assert_eq!(output["run_job_output"]["run_id"], child_run["run_id"]);
}
