//! `brickform run ADDR --repair [RUN_ID]` and `--cancel [RUN_ID]` against the local
//! workspace: a run whose middle task failed is repaired by re-running only that task and
//! the one after it, as part of the same run, and followed to its new end; runs that are
//! going are cancelled; what cannot be repaired or cancelled is refused with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{SERVED_PROVIDER as PROVIDER, Serve, config};
use common::{served as bf, served_ok as bf_ok};
use serde_json::Value;

/// Three notebook tasks a -> b -> c; b's notebook is not there until [`B_NOTEBOOK`] is added.
const CHAIN: &str = r#"
resource "databricks_notebook" "a" {
  path           = "/Shared/repair/a"
  language       = "PYTHON"
  content_base64 = base64encode("print('a')")
}
resource "databricks_notebook" "c" {
  path           = "/Shared/repair/c"
  language       = "PYTHON"
  content_base64 = base64encode("print('c')")
}
resource "databricks_job" "chain" {
  name = "chain"
  task {
    task_key = "a"
    notebook_task { notebook_path = databricks_notebook.a.path }
  }
  task {
    task_key = "b"
    depends_on { task_key = "a" }
    notebook_task { notebook_path = "/Shared/repair/b" }
  }
  task {
    task_key = "c"
    depends_on { task_key = "b" }
    notebook_task { notebook_path = databricks_notebook.c.path }
  }
}
"#;

const B_NOTEBOOK: &str = r#"
resource "databricks_notebook" "b" {
  path           = "/Shared/repair/b"
  language       = "PYTHON"
  content_base64 = base64encode("print('b')")
}
"#;

fn get_run(serve: &Serve, run: &str) -> Value {
    serve.ok(
        "GET",
        &format!("/api/2.2/jobs/runs/get?run_id={run}&include_history=true"),
        None,
    )
}

/// `(task_key, task run id, attempt_number, result)` of every task run the run lists.
fn task_runs(run: &Value) -> Vec<(String, i64, i64, String)> {
    run["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task_key"].as_str().unwrap().to_string(),
                t["run_id"].as_i64().unwrap(),
                t["attempt_number"].as_i64().unwrap(),
                t["state"]["result_state"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// The id after `word ` in the command's output (`started run 7`, `started repair 9`).
fn id_after(out: &str, word: &str) -> String {
    out.split(&format!("{word} "))
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no `{word} ID` in {out}"))
        .to_string()
}

/// The bodies of the `runs/repair` calls the workspace received.
fn repair_requests(serve: &Serve) -> Vec<Value> {
    let log = serve.ok(
        "GET",
        "/__emulator/requests?method=POST&path=/api/2.2/jobs/runs/repair",
        None,
    );
    log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["body"].clone())
        .collect()
}

#[test]
fn a_failed_run_is_repaired_by_rerunning_only_its_failed_tasks() {
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{CHAIN}"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let job = "databricks_job.chain";

    // Nothing has failed yet: there is nothing to repair.
    let (code, out, err) = bf(d, &serve, &["run", job, "--repair"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("has no failed run to repair"), "{err}");

    // b fails (its notebook is missing) and c, after it, is upstream-failed.
    let (code, out, err) = bf(d, &serve, &["run", job]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("b: FAILED: Notebook not found: /Shared/repair/b"),
        "{err}"
    );
    assert!(err.contains("c: UPSTREAM_FAILED"), "{err}");
    let run = id_after(&out, "started run");
    let original = task_runs(&get_run(&serve, &run));
    let a = original.iter().find(|t| t.0 == "a").unwrap().clone();
    assert_eq!(a.3, "SUCCESS");

    // Repaired while the cause is still there (the run named): b fails again, and says so.
    let (code, out, err) = bf(d, &serve, &["run", job, "--repair", &run]);
    assert_eq!(code, 1, "{out}{err}");
    let first = id_after(&out, "started repair");
    assert!(out.contains(&format!("of run {run} ")), "{out}");
    assert!(
        err.contains(&format!("repair {first} of run {run} ended FAILED")),
        "{err}"
    );
    assert!(
        err.contains("Notebook not found: /Shared/repair/b"),
        "{err}"
    );
    assert!(err.contains("it re-ran b, c"), "{err}");

    // The cause goes away; the repair of the job's latest failed run re-runs b and c.
    std::fs::write(
        d.join("main.bf.hcl"),
        format!("{PROVIDER}{CHAIN}{B_NOTEBOOK}"),
    )
    .unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // The service may go on showing the ended run for a moment after it accepted a repair:
    // the run as it is now is answered to the next three reads (the one before the repair
    // and two after it), and the repair is followed until it shows, not taken as ended.
    let stale = get_run(&serve, &run);
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(serde_json::json!({
            "method": "GET", "path": "/api/2.2/jobs/runs/get",
            "status": 200, "body": stale, "times": 3,
        })),
    );
    let out = bf_ok(d, &serve, &["run", job, "--repair"]);
    let second = id_after(&out, "started repair");
    let faults = serve.ok("GET", "/__emulator/faults", None);
    assert_eq!(faults["faults"][0]["fired"], 3, "{faults}");
    assert!(out.contains(&format!("of run {run} ")), "{out}");
    assert!(out.contains("task b: SUCCESS"), "{out}");
    assert!(out.contains("task c: SUCCESS"), "{out}");
    // Only what it re-ran is told: a is not, nor the earlier attempts.
    assert!(!out.contains("task a:"), "{out}");
    assert!(!out.contains("FAILED"), "{out}");
    assert!(
        out.contains(&format!(
            "{job}: repair {second} of run {run} succeeded (SUCCESS); it re-ran b, c."
        )),
        "{out}"
    );

    // In the workspace: the same run, a's task run untouched, b and c run thrice each.
    let got = get_run(&serve, &run);
    assert_eq!(got["state"]["result_state"], "SUCCESS", "{got}");
    let runs = task_runs(&got);
    let of = |k: &str| runs.iter().filter(|t| t.0 == k).count();
    assert_eq!((of("a"), of("b"), of("c")), (1, 3, 3), "{runs:?}");
    assert_eq!(runs.iter().find(|t| t.0 == "a").unwrap(), &a);
    let latest_b = runs
        .iter()
        .filter(|t| t.0 == "b")
        .max_by_key(|t| t.2)
        .unwrap();
    assert_eq!((latest_b.2, latest_b.3.as_str()), (2, "SUCCESS"));
    let history = got["repair_history"].as_array().unwrap();
    let kinds: Vec<&str> = history.iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(kinds, ["ORIGINAL", "REPAIR", "REPAIR"], "{history:?}");
    assert_eq!(history[1]["id"].to_string(), first);
    assert_eq!(history[2]["id"].to_string(), second);
    assert_eq!(history[0]["state"]["result_state"], "FAILED");
    assert_eq!(history[1]["state"]["result_state"], "FAILED");
    assert_eq!(history[2]["state"]["result_state"], "SUCCESS");
    assert!(
        !history[2]["task_run_ids"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(a.1)),
        "{history:?}"
    );

    // What brickform asked: the failed tasks and those after them; the second time, with
    // the latest repair's id, as the service requires.
    let asked = repair_requests(&serve);
    assert_eq!(
        asked.len(),
        2,
        "{:#?}",
        serve.ok(
            "GET",
            "/__emulator/requests?path=/api/2.2/jobs/runs/.*",
            None
        )
    );
    for body in &asked {
        assert_eq!(body["rerun_all_failed_tasks"], true, "{body}");
        assert_eq!(body["rerun_dependent_tasks"], true, "{body}");
        assert_eq!(body["run_id"].to_string(), run);
    }
    assert!(asked[0].get("latest_repair_id").is_none(), "{}", asked[0]);
    assert_eq!(asked[1]["latest_repair_id"].to_string(), first);

    // The run has succeeded: no failed run is left, and the run itself has nothing failed,
    // in the service's words.
    let (code, out, err) = bf(d, &serve, &["run", job, "--repair"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("has no failed run to repair"), "{err}");
    let (code, out, err) = bf(d, &serve, &["run", job, "--repair", &run]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("Run {run} has no failed tasks to repair.")),
        "{err}"
    );
    assert_eq!(
        err.matches(&format!("Run {run} has no failed tasks to repair."))
            .count(),
        1,
        "{err}"
    );
    // A run that does not exist is refused before any repair is asked for (the refused
    // repair of the run that succeeded was asked: the service gave the reason).
    let (code, out, err) = bf(d, &serve, &["run", job, "--repair", "999999"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("Run 999999 does not exist."), "{err}");
    // Said once, not again as its own cause.
    assert_eq!(
        err.matches("Run 999999 does not exist.").count(),
        1,
        "{err}"
    );
    assert_eq!(
        err.matches(&format!("Run {run} has no failed tasks"))
            .count(),
        0,
        "{err}"
    );
    assert_eq!(repair_requests(&serve).len(), 3);
}

/// A job whose task takes a minute, so its runs are still going when they are cancelled,
/// and a pipeline, which has no runs to repair or cancel.
const SLOW: &str = r#"
resource "databricks_notebook" "nb" {
  path           = "/Shared/cancel/nb"
  language       = "PYTHON"
  content_base64 = base64encode("print(1)")
}
resource "databricks_job" "slow" {
  name = "slow"
  task {
    task_key = "work"
    notebook_task { notebook_path = databricks_notebook.nb.path }
  }
  task {
    task_key = "after"
    depends_on { task_key = "work" }
    notebook_task { notebook_path = databricks_notebook.nb.path }
  }
}
resource "databricks_catalog" "c" {
  name          = "cancel_cat"
  force_destroy = true
}
resource "databricks_schema" "s" {
  catalog_name  = databricks_catalog.c.name
  name          = "raw"
  force_destroy = true
}
resource "databricks_pipeline" "p" {
  name       = "p"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = true
  library {
    notebook { path = databricks_notebook.nb.path }
  }
}
"#;

#[test]
fn runs_that_are_going_are_cancelled_and_are_not_repaired() {
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{SLOW}"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--task-ms", "60000"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let job = "databricks_job.slow";
    let state = |run: &str| {
        let got = get_run(&serve, run);
        (
            got["state"]["life_cycle_state"]
                .as_str()
                .unwrap()
                .to_string(),
            got["state"]["result_state"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    };

    // Nothing is going: nothing to cancel, and the exit status says so.
    let (code, out, err) = bf(d, &serve, &["run", job, "--cancel"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("there is nothing to cancel"), "{err}");

    let out = bf_ok(d, &serve, &["run", job, "--no-wait"]);
    let run = id_after(&out, "started run");
    // A run that is going cannot be repaired, in the service's words.
    let (code, out, err) = bf(d, &serve, &["run", job, "--repair", &run]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("Run {run} is in progress and cannot be repaired")),
        "{err}"
    );
    assert_ne!(state(&run).0, "TERMINATED");

    // --cancel finds the job's run that is going, cancels it and waits for its end.
    let out = bf_ok(d, &serve, &["run", job, "--cancel"]);
    assert!(
        out.contains(&format!("cancelling run {run} of job")),
        "{out}"
    );
    assert!(out.contains(&format!("run {run} ended CANCELED.")), "{out}");
    assert_eq!(state(&run), ("TERMINATED".into(), "CANCELED".into()));

    // --cancel RUN_ID: that run; once it has ended there is nothing to cancel.
    let out = bf_ok(d, &serve, &["run", job, "--no-wait"]);
    let next = id_after(&out, "started run");
    let out = bf_ok(d, &serve, &["run", job, "--cancel", &next]);
    assert!(
        out.contains(&format!("run {next} ended CANCELED.")),
        "{out}"
    );
    assert_eq!(state(&next), ("TERMINATED".into(), "CANCELED".into()));
    let (code, out, err) = bf(d, &serve, &["run", job, "--cancel", &next]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("run {next} of job"))
            && err.contains("has already ended CANCELED; there is nothing to cancel"),
        "{err}"
    );
    let cancels = serve.ok(
        "GET",
        "/__emulator/requests?method=POST&path=/api/2.2/jobs/runs/cancel",
        None,
    );
    assert_eq!(
        cancels["requests"].as_array().unwrap().len(),
        2,
        "{cancels}"
    );

    // A cancelled run did not succeed: it is the one --repair picks. The repair's answer is
    // lost (a 503 after it was made), so the client repeats it, and the repeat is refused
    // (the run is being repaired): the repair that appeared is taken as the one asked for.
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(serde_json::json!({
            "method": "POST", "path": "/api/2.2/jobs/runs/repair",
            "status": 503, "after_side_effect": true, "times": 1,
        })),
    );
    let (code, out, err) = bf(d, &serve, &["run", job, "--repair", "--no-wait"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("of run {next} ")), "{out}");
    let history = get_run(&serve, &next)["repair_history"].clone();
    let repairs: Vec<&Value> = history
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "REPAIR")
        .collect();
    assert_eq!(repairs.len(), 1, "{history}");
    assert!(
        out.contains(&format!("started repair {} ", repairs[0]["id"])),
        "{out}"
    );
    assert_eq!(
        repair_requests(&serve).len(),
        3,
        "refused while the run was going; this one; its repeat"
    );
    bf_ok(d, &serve, &["run", job, "--cancel", &next]);

    // Pipelines have no runs to repair or cancel.
    for flag in ["--repair", "--cancel"] {
        let (code, out, err) = bf(d, &serve, &["run", "databricks_pipeline.p", flag]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(err.contains("databricks_pipeline.p is not a job"), "{err}");
    }
    // Flags that mean nothing together are refused before anything is asked.
    for args in [
        &["--repair", "--cancel"][..],
        &["--cancel", "--param", "x=1"],
        &["--repair", "--full-refresh"],
        &["--repair", "not-a-run-id"],
    ] {
        let mut a = vec!["run", job];
        a.extend(args);
        let (code, out, err) = bf(d, &serve, &a);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
    }
}

/// `runs/get` answers 100 tasks a page: a run of 150 is followed through every page, so a
/// task past the first hundred that fails fails the run as brickform reports it.
#[test]
fn a_run_of_more_tasks_than_a_page_is_followed_through_every_page() {
    let src = format!(
        r#"{PROVIDER}
resource "databricks_notebook" "ok" {{
  path           = "/Shared/many/ok"
  language       = "PYTHON"
  content_base64 = base64encode("print('ok')")
}}
resource "databricks_job" "many" {{
  name = "many"
  dynamic "task" {{
    for_each = range(150)
    content {{
      task_key = format("t%03d", task.value)
      notebook_task {{
        notebook_path = task.value == 140 ? "/Shared/many/missing" : databricks_notebook.ok.path
      }}
    }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &src)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.many"]);
    assert_ne!(code, 0, "a failed task fails the run:\n{out}{err}");
    let reported = out
        .lines()
        .filter(|l| l.trim_start().starts_with("task t"))
        .count();
    assert_eq!(reported, 150, "every task is reported:\n{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("task t140: FAILED")),
        "{out}"
    );
}
