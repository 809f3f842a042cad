//! `examples/medallion` end to end on the local workspace, each test in a copy of the example
//! (the provider block says `host = "local"`, so no `--local` is needed): applied with no
//! drift, the nightly job run bronze → silver → gold, a run where silver fails (its source
//! deleted behind brickform's back) alerting and notifying ops, the schedule paused outside
//! production, and destroy leaving nothing behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, local_dump, objects, run, run_ok};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

const USER_HOME: &str = "/Users/local-user@brickform.local";

fn example() -> std::path::PathBuf {
    common::example_dir("medallion")
}

fn example_copy() -> tempfile::TempDir {
    common::example_copy("medallion")
}

/// What the example makes in environment `env`, as [`objects`] lists it.
fn example_objects(env: &str) -> Vec<String> {
    let code = format!("{USER_HOME}/shipments_{env}");
    let mut v = vec![
        format!("catalog:shipments_{env}"),
        format!("schema:shipments_{env}.bronze"),
        format!("schema:shipments_{env}.silver"),
        format!("schema:shipments_{env}.gold"),
        format!("volume:shipments_{env}.bronze.landing"),
        format!("file:/Volumes/shipments_{env}/bronze/landing/shipment_events/2024-06-04.json"),
        format!("workspace:{code}/pipelines/bronze.sql"),
        format!("workspace:{code}/pipelines/silver.sql"),
        format!("workspace:{code}/pipelines/gold.sql"),
        format!("workspace:{code}/notebooks/alert_on_failure"),
        format!("workspace:{code}/notebooks/notify_ops"),
    ];
    v.sort();
    v
}

/// The dump's pipelines by name.
fn pipelines(dump: &Value) -> BTreeMap<String, Value> {
    dump["pipelines"]
        .as_object()
        .map(|m| {
            m.values()
                .map(|p| (p["spec"]["name"].as_str().unwrap().to_string(), p.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The dump's jobs' settings by name.
fn jobs(dump: &Value) -> BTreeMap<String, Value> {
    dump["jobs"]
        .as_object()
        .map(|m| {
            m.values()
                .map(|j| {
                    (
                        j["settings"]["name"].as_str().unwrap().to_string(),
                        j["settings"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `task KEY: RESULT[: message]` lines of `brickform run`, by task key: (result, message).
fn task_results(out: &str) -> BTreeMap<String, (String, String)> {
    let mut m = BTreeMap::new();
    for line in out.lines() {
        if let Some(rest) = line.trim().strip_prefix("task ") {
            let (key, rest) = rest.split_once(": ").unwrap();
            let (result, msg) = rest.split_once(": ").unwrap_or((rest, ""));
            let dup = m.insert(key.to_string(), (result.to_string(), msg.to_string()));
            assert!(dup.is_none(), "task {key} reported twice:\n{out}");
        }
    }
    m
}

fn results(m: &BTreeMap<String, (String, String)>) -> BTreeMap<&str, &str> {
    m.iter()
        .map(|(k, (r, _))| (k.as_str(), r.as_str()))
        .collect()
}

/// The recorded run `run_id`'s tasks by key, from the workspace dump.
fn run_tasks(dump: &Value, run_id: &str) -> BTreeMap<String, Value> {
    dump["runs"][run_id]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("run {run_id} not in the workspace: {}", dump["runs"]))
        .iter()
        .map(|t| (t["task_key"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

/// The run id from `brickform run`'s "started run N of job M" line.
fn started_run(out: &str) -> String {
    out.lines()
        .find_map(|l| l.split("started run ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no 'started run' line:\n{out}"))
        .to_string()
}

fn ms(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not a time: {v}"))
}

fn plan_json(d: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["plan", "--json"]);
    serde_json::from_str(&run_ok(d, &a, &[])).unwrap()
}

fn planned_job(plan: &Value) -> &Value {
    plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "databricks_job.nightly")
        .unwrap_or_else(|| panic!("no job in the plan: {plan}"))
}

#[test]
fn medallion_applies_runs_alerts_when_silver_fails_and_destroys_to_nothing() {
    let dir = example_copy();
    let d = dir.path();

    run_ok(d, &["validate"], &[]);
    let out = run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(
        out.contains("Apply complete! Resources: 15 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(
        out.contains("landing_path = \"/Volumes/shipments_dev/bronze/landing/shipment_events/\"")
            && out.contains("schedule = \"0 30 2 * * ? Europe/Berlin (PAUSED)\""),
        "{out}"
    );

    // Everything is in the local workspace, the sources byte for byte.
    let dump = local_dump(d);
    assert_eq!(objects(&dump), example_objects("dev"));
    let code = format!("{USER_HOME}/shipments_dev");
    for layer in ["bronze", "silver", "gold"] {
        let src = std::fs::read(example().join(format!("src/pipelines/{layer}.sql"))).unwrap();
        let p = format!("{code}/pipelines/{layer}.sql");
        assert_eq!(dump["workspace"][&p]["object_type"], "FILE", "{p}");
        assert_eq!(dump["workspace"][&p]["content"], b64(&src), "{p}");
    }
    let sample = std::fs::read(example().join("data/shipment_events.json")).unwrap();
    assert_eq!(
        dump["files"]["/Volumes/shipments_dev/bronze/landing/shipment_events/2024-06-04.json"]["content"],
        b64(&sample)
    );

    // One serverless pipeline per layer, publishing into its schema, reading its managed file.
    let ps = pipelines(&dump);
    assert_eq!(
        ps.keys().collect::<Vec<_>>(),
        [
            "shipments-bronze-dev",
            "shipments-gold-dev",
            "shipments-silver-dev"
        ]
    );
    for layer in ["bronze", "silver", "gold"] {
        let spec = &ps[&format!("shipments-{layer}-dev")]["spec"];
        assert_eq!(spec["catalog"], "shipments_dev", "{spec}");
        assert_eq!(spec["schema"], layer, "{spec}");
        assert_eq!(spec["serverless"], true, "{spec}");
        assert_eq!(
            spec["libraries"],
            json!([{"file": {"path": format!("{code}/pipelines/{layer}.sql")}}]),
            "{spec}"
        );
    }
    assert_eq!(
        ps["shipments-bronze-dev"]["spec"]["configuration"]["landing_path"],
        "/Volumes/shipments_dev/bronze/landing/shipment_events/"
    );
    assert_eq!(
        ps["shipments-silver-dev"]["spec"]["configuration"]["bronze_table"],
        "shipments_dev.bronze.shipment_events_raw"
    );
    let pipeline_id = |layer: &str| {
        ps[&format!("shipments-{layer}-dev")]["id"]
            .as_str()
            .unwrap()
            .to_string()
    };

    // The job: pipeline tasks bronze → silver → gold, the alert on silver, ops after gold.
    let js = jobs(&dump);
    let job = &js["shipments-nightly-dev"];
    let tasks: BTreeMap<&str, &Value> = job["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["task_key"].as_str().unwrap(), t))
        .collect();
    let deps = |k: &str| tasks[k]["depends_on"].clone();
    assert_eq!(
        tasks.keys().copied().collect::<Vec<_>>(),
        ["alert_on_failure", "bronze", "gold", "notify_ops", "silver"]
    );
    for layer in ["bronze", "silver", "gold"] {
        assert_eq!(
            tasks[layer]["pipeline_task"]["pipeline_id"],
            pipeline_id(layer).as_str()
        );
        assert_eq!(tasks[layer]["run_if"], "ALL_SUCCESS");
    }
    assert_eq!(deps("bronze"), Value::Null);
    assert_eq!(deps("silver"), json!([{"task_key": "bronze"}]));
    assert_eq!(deps("gold"), json!([{"task_key": "silver"}]));
    assert_eq!(deps("alert_on_failure"), json!([{"task_key": "silver"}]));
    assert_eq!(tasks["alert_on_failure"]["run_if"], "AT_LEAST_ONE_FAILED");
    assert_eq!(
        tasks["alert_on_failure"]["notebook_task"]["notebook_path"],
        format!("{code}/notebooks/alert_on_failure")
    );
    assert_eq!(deps("notify_ops"), json!([{"task_key": "gold"}]));
    assert_eq!(tasks["notify_ops"]["run_if"], "ALL_DONE");
    assert_eq!(
        tasks["notify_ops"]["notebook_task"]["notebook_path"],
        format!("{code}/notebooks/notify_ops")
    );
    assert_eq!(
        job["schedule"],
        json!({"quartz_cron_expression": "0 30 2 * * ?", "timezone_id": "Europe/Berlin", "pause_status": "PAUSED"})
    );

    let (code_, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code_, 0, "no drift after apply\n{out}\n{err}");

    // A nightly run: every layer succeeds in order, the alert is not needed, ops hear of it.
    let (c, out, err) = run(d, &["run", "databricks_job.nightly"], &[]);
    assert_eq!(c, 0, "{out}\n{err}");
    let got = task_results(&out);
    assert_eq!(
        results(&got),
        BTreeMap::from([
            ("bronze", "SUCCESS"),
            ("silver", "SUCCESS"),
            ("gold", "SUCCESS"),
            ("alert_on_failure", "EXCLUDED"),
            ("notify_ops", "SUCCESS"),
        ]),
        "{out}"
    );
    assert!(
        out.contains("databricks_job.nightly: run ") && out.contains("succeeded (SUCCESS)."),
        "{out}"
    );
    let run1 = started_run(&out);
    let dump = local_dump(d);
    assert_eq!(dump["runs"][&run1]["result_state"], "SUCCESS");
    let t = run_tasks(&dump, &run1);
    // Each pipeline task started its pipeline's update, and a layer only after the one before.
    let mut prev_end = 0;
    for layer in ["bronze", "silver", "gold"] {
        let start = ms(&t[layer]["start_time"]);
        assert!(
            start >= prev_end,
            "{layer} started before its upstream ended: {t:?}"
        );
        prev_end = ms(&t[layer]["end_time"]);
        let updates = pipelines(&dump)[&format!("shipments-{layer}-dev")]["updates"].clone();
        assert_eq!(updates.as_array().unwrap().len(), 1, "{layer}: {updates}");
        assert_eq!(updates[0]["cause"], "JOB_TASK", "{layer}: {updates}");
    }
    assert!(ms(&t["notify_ops"]["start_time"]) >= ms(&t["gold"]["end_time"]));

    // Running the job changes nothing brickform manages.
    let (c, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(c, 0, "no drift after a run\n{out}\n{err}");

    // Silver's source is deleted outside brickform, through the workspace API.
    let silver_sql = format!("{code}/pipelines/silver.sql");
    {
        let serve = Serve::start(&d.join(".brickform/local"), &[]);
        serve.ok(
            "POST",
            "/api/2.0/workspace/delete",
            Some(json!({ "path": silver_sql })),
        );
    }
    assert!(local_dump(d)["workspace"].get(&silver_sql).is_none());

    // The next run: silver fails, gold is skipped, the alert and the ops summary run, and
    // `brickform run` fails with silver's error.
    let (c, out, err) = run(d, &["run", "databricks_job.nightly"], &[]);
    assert_ne!(c, 0, "a run whose silver failed must fail\n{out}\n{err}");
    let got = task_results(&out);
    assert_eq!(
        results(&got),
        BTreeMap::from([
            ("bronze", "SUCCESS"),
            ("silver", "FAILED"),
            ("gold", "UPSTREAM_FAILED"),
            ("alert_on_failure", "SUCCESS"),
            ("notify_ops", "SUCCESS"),
        ]),
        "{out}"
    );
    assert!(
        got["silver"].1.contains(&silver_sql) && got["silver"].1.contains("does not exist"),
        "silver's message names the missing file: {out}"
    );
    assert!(
        err.contains("Error: databricks_job.nightly:") && err.contains(&silver_sql),
        "{err}"
    );
    let run2 = started_run(&out);
    assert_ne!(run1, run2);
    let dump = local_dump(d);
    let t = run_tasks(&dump, &run2);
    assert!(ms(&t["alert_on_failure"]["start_time"]) >= ms(&t["silver"]["end_time"]));
    assert!(ms(&t["notify_ops"]["start_time"]) >= ms(&t["silver"]["end_time"]));
    let gold_updates = &pipelines(&dump)["shipments-gold-dev"]["updates"];
    assert_eq!(
        gold_updates.as_array().unwrap().len(),
        1,
        "gold must not have been updated again: {gold_updates}"
    );

    // brickform sees the deleted file and puts it back.
    let (c, out, _) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(c, 2, "{out}");
    assert!(
        out.contains("# databricks_workspace_file.silver will be created")
            && out.contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    run_ok(d, &["apply", "--auto-approve"], &[]);
    assert_eq!(
        local_dump(d)["workspace"][&silver_sql]["object_type"],
        "FILE"
    );

    // Destroy: nothing of the example is left; a second destroy has nothing to do.
    let out = run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert!(
        out.contains("Destroy complete! 15 destroyed, 0 left behind."),
        "{out}"
    );
    let dump = local_dump(d);
    assert_eq!(objects(&dump), Vec::<String>::new());
    assert_eq!(pipelines(&dump), BTreeMap::new());
    assert_eq!(jobs(&dump), BTreeMap::new());
    let out = run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert!(out.contains("No objects need to be destroyed"), "{out}");
}

#[test]
fn medallion_schedule_runs_only_in_production() {
    let dir = example_copy();
    let d = dir.path();

    // The plans of the two environments differ in the schedule's pause status (and names).
    let dev = plan_json(d, &[]);
    let prod = plan_json(d, &["--env", "prod"]);
    assert_eq!(dev["environment"], "dev");
    assert_eq!(prod["environment"], "prod");
    let (dj, pj) = (planned_job(&dev), planned_job(&prod));
    assert_eq!(dj["change"]["actions"], json!(["create"]));
    assert_eq!(
        dj["change"]["after"]["schedule"][0]["pause_status"],
        "PAUSED"
    );
    assert_eq!(
        pj["change"]["after"]["schedule"][0]["pause_status"],
        "UNPAUSED"
    );
    assert_eq!(
        dj["change"]["after"]["schedule"][0]["quartz_cron_expression"],
        pj["change"]["after"]["schedule"][0]["quartz_cron_expression"]
    );
    assert_eq!(dj["change"]["after"]["name"], "shipments-nightly-dev");
    assert_eq!(pj["change"]["after"]["name"], "shipments-nightly-prod");
    let out = run_ok(d, &["--env", "prod", "plan"], &[]);
    assert!(
        out.contains("pause_status           = \"UNPAUSED\"")
            && !out.contains("\"PAUSED\"")
            && out.contains("Plan: 15 to add, 0 to change, 0 to destroy."),
        "{out}"
    );

    // Applied in prod: its own state and catalog, the schedule running, the on-call address.
    let out = run_ok(d, &["--env", "prod", "apply", "--auto-approve"], &[]);
    assert!(
        out.contains("Apply complete! Resources: 15 added, 0 changed, 0 destroyed.")
            && out.contains("(UNPAUSED)"),
        "{out}"
    );
    assert!(d.join(".brickform/state/prod.json").is_file());
    // (A plan may have recorded an empty dev state; it holds nothing.)
    if let Ok(text) = std::fs::read_to_string(d.join(".brickform/state/dev.json")) {
        let dev: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(dev["resources"], json!([]), "{dev}");
    }
    let dump = local_dump(d);
    assert_eq!(objects(&dump), example_objects("prod"));
    let js = jobs(&dump);
    assert_eq!(
        js.keys().collect::<Vec<_>>(),
        ["shipments-nightly-prod"],
        "{js:?}"
    );
    let job = &js["shipments-nightly-prod"];
    assert_eq!(job["schedule"]["pause_status"], "UNPAUSED");
    assert_eq!(
        job["email_notifications"]["on_failure"],
        json!(["shipments-oncall@example.com"])
    );
    let (c, out, err) = run(d, &["--env", "prod", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(c, 0, "no drift after apply in prod\n{out}\n{err}");
    // The default environment has nothing applied yet: it would create its own copy.
    let (c, out, _) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(c, 2, "{out}");
    assert!(
        out.contains("Plan: 15 to add, 0 to change, 0 to destroy."),
        "{out}"
    );

    let out = run_ok(d, &["--env", "prod", "destroy", "--auto-approve"], &[]);
    assert!(
        out.contains("Destroy complete! 15 destroyed, 0 left behind."),
        "{out}"
    );
    let dump = local_dump(d);
    assert_eq!(objects(&dump), Vec::<String>::new());
    assert_eq!(pipelines(&dump), BTreeMap::new());
    assert_eq!(jobs(&dump), BTreeMap::new());
}

fn b64(b: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
