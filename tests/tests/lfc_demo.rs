//! `examples/lfc-demo`, the README's main job, end to end on the local workspace: validate
//! offline, apply everything with no input, the onboarding files, the job and the pipelines
//! agreeing on env, group and table names, nothing to do on a second plan, a change made to
//! the onboarding file outside brickform shown as drift and put back, and destroy removing
//! all of it in a safe order.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, example_copy, file_text, local_dump, objects, run, run_ok};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const VOLUME: &str = "/Volumes/lfc_demo/sdp_meta_dataflowspecs_lfc_demo/lfc_demo_lfc_volume_demo";

fn by_name(dump: &Value, kind: &str, name: impl Fn(&Value) -> &Value) -> BTreeMap<String, Value> {
    dump[kind]
        .as_object()
        .map(|m| {
            m.values()
                .map(|v| (name(v).as_str().unwrap().to_string(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Where `needle` first appears in `out`.
fn at(out: &str, needle: &str) -> usize {
    out.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in the output:\n{out}"))
}

#[test]
fn lfc_demo_applies_with_no_input_agrees_everywhere_and_destroys_to_nothing() {
    let dir = example_copy("lfc-demo");
    let d = dir.path();

    // The flows are checked without a workspace; the demo's known caveat (#265) is a warning.
    let out = run_ok(d, &["validate"], &[]);
    assert!(
        out.contains("Success! The configuration is valid."),
        "{out}"
    );

    let out = run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert!(
        out.contains("Apply complete! Resources: 20 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(out.contains("downstream_run = \"SUCCESS\""), "{out}");

    let dump = local_dump(d);
    let files: Vec<String> = objects(&dump)
        .into_iter()
        .filter(|o| o.starts_with("file:"))
        .collect();
    assert_eq!(
        files,
        [
            format!("file:{VOLUME}/conf/dqe/1/bronze_expectations.json"),
            format!("file:{VOLUME}/conf/dqe/1/silver_expectations.json"),
            format!("file:{VOLUME}/conf/onboarding.json"),
            format!("file:{VOLUME}/conf/silver_transformations.json"),
        ]
    );

    // The onboarding file as sdp-meta 0.1.0 reads it: env-suffixed keys, the LFC destination
    // table folded into source_database, the quarantine key present with expectations.
    let onboarding: Value =
        serde_json::from_str(&file_text(&dump, &format!("{VOLUME}/conf/onboarding.json"))).unwrap();
    let rows = onboarding.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let intpk = &rows[0];
    assert_eq!(intpk["data_flow_id"], "1");
    assert_eq!(intpk["data_flow_group"], "A1");
    assert_eq!(intpk["source_format"], "delta");
    assert_eq!(
        intpk["source_details"],
        json!({"source_database": "lfc_demo.lfcdemo_sqlserver_demo", "source_table": "intpk"})
    );
    assert_eq!(
        intpk["bronze_database_prod"],
        "lfc_demo.sdp_meta_bronze_lfc_demo"
    );
    assert_eq!(intpk["bronze_quarantine_table"], "intpk_quarantine");
    assert_eq!(intpk["bronze_cdc_apply_changes"]["scd_type"], "1");
    assert_eq!(
        intpk["bronze_data_quality_expectations_json_prod"],
        format!("{VOLUME}/conf/dqe/1/bronze_expectations.json")
    );
    assert_eq!(
        intpk["silver_transformation_json_prod"],
        format!("{VOLUME}/conf/silver_transformations.json")
    );
    let dtix = &rows[1];
    assert_eq!(dtix["source_format"], "snapshot");
    assert_eq!(dtix["source_details"]["snapshot_format"], "delta");
    assert_eq!(dtix["source_details"]["source_table"], "dtix");
    assert_eq!(
        dtix["bronze_apply_changes_from_snapshot"],
        json!({"keys": ["dt", "lfc_end_at"], "scd_type": "1"})
    );
    let dqe: Value = serde_json::from_str(&file_text(
        &dump,
        &format!("{VOLUME}/conf/dqe/1/bronze_expectations.json"),
    ))
    .unwrap();
    assert_eq!(
        dqe,
        json!({"expect_or_drop": {"valid_pk": "pk IS NOT NULL"}})
    );

    // The job and the pipelines read the same names the files carry.
    let jobs = by_name(&dump, "jobs", |j| &j["settings"]["name"]);
    let downstream = &jobs["sdp-meta-lfc-demo-demo-downstream"]["settings"];
    let tasks: BTreeMap<&str, &Value> = downstream["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["task_key"].as_str().unwrap(), t))
        .collect();
    let params = &tasks["onboarding_job"]["python_wheel_task"]["named_parameters"];
    assert_eq!(params["env"], "prod", "the env of the *_prod keys");
    assert_eq!(
        params["onboarding_file_path"],
        format!("{VOLUME}/conf/onboarding.json")
    );
    assert_eq!(
        params["database"],
        "lfc_demo.sdp_meta_dataflowspecs_lfc_demo"
    );
    assert_eq!(
        params["bronze_dataflowspec_table"],
        "bronze_dataflowspec_cdc"
    );
    assert_eq!(params["onboard_layer"], "bronze_silver");
    assert_eq!(params["overwrite"], "True");
    // As the demo's setup: the source's tables land first, then onboarding, bronze, silver.
    assert_eq!(tasks["ingest"]["depends_on"], Value::Null);
    assert_eq!(
        tasks["onboarding_job"]["depends_on"],
        json!([{"task_key": "ingest"}])
    );
    assert_eq!(
        tasks["bronze_dlt"]["depends_on"],
        json!([{"task_key": "onboarding_job"}])
    );
    assert_eq!(
        tasks["silver_dlt"]["depends_on"],
        json!([{"task_key": "bronze_dlt"}])
    );

    // The replicated tables are there after apply: the job's first task landed them.
    let tables = dump["tables"].as_object().unwrap();
    for t in ["intpk", "dtix"] {
        assert!(
            tables.contains_key(&format!("lfc_demo.lfcdemo_sqlserver_demo.{t}")),
            "{:?}",
            tables.keys().collect::<Vec<_>>()
        );
    }
    let pipelines = by_name(&dump, "pipelines", |p| &p["spec"]["name"]);
    let ig = &pipelines["lfcdemo_sqlserver_demo_ig"];
    let scheduler = &jobs["lfcdemo_sqlserver_demo_ig_scheduler"]["settings"];
    assert_eq!(
        scheduler["tasks"][0]["pipeline_task"]["pipeline_id"],
        ig["id"]
    );
    for layer in ["bronze", "silver"] {
        let conf = &pipelines[&format!("sdp-meta-lfc-{layer}-demo")]["spec"]["configuration"];
        assert_eq!(conf["layer"], layer, "{conf}");
        assert_eq!(conf[format!("{layer}.group")], "A1", "{conf}");
        assert_eq!(
            conf[format!("{layer}.dataflowspecTable")],
            format!("lfc_demo.sdp_meta_dataflowspecs_lfc_demo.{layer}_dataflowspec_cdc"),
            "{conf}"
        );
        assert_eq!(
            params[format!("{layer}_dataflowspec_table")],
            format!("{layer}_dataflowspec_cdc")
        );
        let id = pipelines[&format!("sdp-meta-lfc-{layer}-demo")]["id"].clone();
        assert_eq!(
            tasks[format!("{layer}_dlt").as_str()]["pipeline_task"]["pipeline_id"],
            id
        );
    }

    // The incremental job: ingestion, then bronze, then silver, each on its pipeline (the
    // service lists tasks by key).
    let incremental = &jobs["sdp-meta-lfc-demo-demo-incremental"]["settings"];
    let order: Vec<(&str, &Value, &Value)> = incremental["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task_key"].as_str().unwrap(),
                &t["depends_on"][0]["task_key"],
                &t["pipeline_task"]["pipeline_id"],
            )
        })
        .collect();
    let pipeline = |name: &str| &pipelines[name]["id"];
    assert_eq!(
        order,
        [
            (
                "bronze_dlt",
                &json!("ingest"),
                pipeline("sdp-meta-lfc-bronze-demo")
            ),
            ("ingest", &Value::Null, &ig["id"]),
            (
                "silver_dlt",
                &json!("bronze_dlt"),
                pipeline("sdp-meta-lfc-silver-demo")
            ),
        ]
    );

    // Applied is applied: nothing to do.
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");

    // The README's re-run: the incremental job, followed to its end, task by task.
    let out = run_ok(d, &["run", "--local", "databricks_job.incremental"], &[]);
    for task in ["ingest", "bronze_dlt", "silver_dlt"] {
        assert!(out.contains(&format!("task {task}: SUCCESS")), "{out}");
    }
    assert!(out.contains("succeeded (SUCCESS)"), "{out}");
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "a run changes no configuration: {out}{err}");

    // Somebody edits the onboarding file in the volume: the plan shows it, apply puts it back.
    {
        let serve = Serve::start(&d.join(".brickform/local"), &[]);
        let path = format!("/api/2.0/fs/files{VOLUME}/conf/onboarding.json?overwrite=true");
        let (status, _) = common::http_auth(
            "PUT",
            &format!("{}{path}", serve.url),
            Some(b"[]"),
            "application/octet-stream",
            &serve.token,
        );
        assert_eq!(status, 204);
    }
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("sdp_meta_onboarding.a1 will be updated in-place"),
        "{out}"
    );
    assert!(out.contains("changed outside brickform"), "{out}");
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    let dump = local_dump(d);
    assert_eq!(
        serde_json::from_str::<Value>(&file_text(&dump, &format!("{VOLUME}/conf/onboarding.json")))
            .unwrap(),
        onboarding
    );
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");

    // A targeted destroy removes the target and what depends on it, never what it depends
    // on (the ingestion pipeline, the gateway, the catalog the job runs against).
    let out = run_ok(
        d,
        &[
            "destroy",
            "--local",
            "--target",
            "databricks_job.lfc_scheduler",
            "--auto-approve",
        ],
        &[],
    );
    assert!(
        out.contains("Destroy complete! 1 destroyed, 19 left behind."),
        "{out}"
    );
    let dump = local_dump(d);
    assert_eq!(dump["pipelines"].as_object().map(|p| p.len()), Some(4));
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);

    // Destroy: jobs before the pipelines they run, the ingestion pipeline before its gateway
    // before the destination schema, the files before their volume before its schema.
    let out = run_ok(d, &["destroy", "--local", "--auto-approve"], &[]);
    assert!(
        out.contains("Destroy complete! 20 destroyed, 0 left behind."),
        "{out}"
    );
    let done = |a: &str| at(&out, &format!("{a}: Destruction complete"));
    let starts = |a: &str| at(&out, &format!("{a}: Destroying..."));
    assert!(done("databricks_job.downstream") < starts("databricks_pipeline.bronze"));
    assert!(done("databricks_job.lfc_scheduler") < starts("databricks_ingestion_pipeline.ig"));
    assert!(done("databricks_job.incremental") < starts("databricks_ingestion_pipeline.ig"));
    assert!(done("databricks_ingestion_pipeline.ig") < starts("databricks_ingestion_gateway.gw"));
    assert!(done("databricks_ingestion_gateway.gw") < starts("databricks_schema.lfc_dest"));
    assert!(done("sdp_meta_onboarding.a1") < starts("databricks_volume.conf"));
    assert!(done("databricks_volume.conf") < starts("databricks_schema.specs"));
    assert!(done("databricks_notebook.runner") < starts("databricks_directory.code"));

    let dump = local_dump(d);
    assert_eq!(objects(&dump), Vec::<String>::new());
    for kind in ["pipelines", "jobs", "connections"] {
        assert_eq!(dump[kind], json!({}), "{kind} left: {}", dump[kind]);
    }
    // The catalog a new workspace has stays; nothing else does.
    let catalogs: Vec<&String> = dump["catalogs"].as_object().unwrap().keys().collect();
    assert_eq!(catalogs, ["main"], "catalogs left: {}", dump["catalogs"]);
    let folders: Vec<&String> = dump["workspace"].as_object().unwrap().keys().collect();
    assert!(
        folders.iter().all(|p| !p.contains("sdp_meta_lfc_demo")),
        "{folders:?}"
    );
}

/// The names one copy of the demo gives its objects of `kind` in the local workspace.
fn names(dump: &Value, kind: &str, name: impl Fn(&Value) -> &Value) -> Vec<String> {
    let mut v: Vec<String> = by_name(dump, kind, name).into_keys().collect();
    v.sort();
    v
}

#[test]
fn two_copies_side_by_side_apply_and_destroy_independently() {
    let dir = example_copy("lfc-demo");
    let d = dir.path();
    for env in ["a", "b"] {
        let out = run_ok(d, &["-e", env, "apply", "--local", "--auto-approve"], &[]);
        assert!(
            out.contains("Apply complete! Resources: 20 added, 0 changed, 0 destroyed."),
            "{env}: {out}"
        );
    }
    // One workspace, two of everything, told apart by run_id; two states.
    let dump = local_dump(d);
    assert_eq!(
        names(&dump, "catalogs", |c| &c["name"]),
        ["lfc_demo_a", "lfc_demo_b", "main"]
    );
    let jobs = names(&dump, "jobs", |j| &j["settings"]["name"]);
    assert_eq!(jobs.len(), 6, "{jobs:?}");
    assert!(jobs.contains(&"sdp-meta-lfc-demo-a-incremental".to_string()));
    assert!(jobs.contains(&"sdp-meta-lfc-demo-b-incremental".to_string()));
    for env in ["a", "b"] {
        let (code, out, err) = run(
            d,
            &["-e", env, "plan", "--local", "--detailed-exitcode"],
            &[],
        );
        assert_eq!(code, 0, "{env}: {out}{err}");
    }

    // Destroying a leaves b as it was: its plan is still empty, its run still succeeds.
    let out = run_ok(d, &["-e", "a", "destroy", "--local", "--auto-approve"], &[]);
    assert!(
        out.contains("Destroy complete! 20 destroyed, 0 left behind."),
        "{out}"
    );
    let dump = local_dump(d);
    assert_eq!(
        names(&dump, "catalogs", |c| &c["name"]),
        ["lfc_demo_b", "main"]
    );
    assert!(
        names(&dump, "pipelines", |p| &p["spec"]["name"])
            .iter()
            .all(|n| !n.contains("_a_") && !n.ends_with("-a")),
        "{}",
        dump["pipelines"]
    );
    let (code, out, err) = run(
        d,
        &["-e", "b", "plan", "--local", "--detailed-exitcode"],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let out = run_ok(
        d,
        &["-e", "b", "run", "--local", "databricks_job.incremental"],
        &[],
    );
    assert!(out.contains("succeeded (SUCCESS)"), "{out}");

    let out = run_ok(d, &["-e", "b", "destroy", "--local", "--auto-approve"], &[]);
    assert!(
        out.contains("Destroy complete! 20 destroyed, 0 left behind."),
        "{out}"
    );
    let dump = local_dump(d);
    assert_eq!(objects(&dump), Vec::<String>::new());
    for kind in ["pipelines", "jobs", "connections"] {
        assert_eq!(dump[kind], json!({}), "{kind} left: {}", dump[kind]);
    }
    // The catalog a new workspace has stays; nothing else does.
    let catalogs: Vec<&String> = dump["catalogs"].as_object().unwrap().keys().collect();
    assert_eq!(catalogs, ["main"], "catalogs left: {}", dump["catalogs"]);
}

/// The demo's launch choices as variables: how bronze reads the table without a key
/// (`dtix_snapshot_method`), the column that orders the keyed table's changes in silver
/// (`silver_sequence_by`) and the source database's kind (`source_database`). Each applies,
/// the rendered onboarding file and the objects follow it, and the plan between two choices
/// shows what differs.
#[test]
fn the_demos_launch_choices_apply_and_plan_as_their_differences() {
    let dir = example_copy("lfc-demo");
    let d = dir.path();
    let onboarding = |d: &std::path::Path| -> Value {
        let dump = local_dump(d);
        serde_json::from_str(&file_text(&dump, &format!("{VOLUME}/conf/onboarding.json"))).unwrap()
    };
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    let rows = onboarding(d);
    assert_eq!(rows[0]["silver_cdc_apply_changes"]["sequence_by"], "dt");

    // The other snapshot method and sequence column: the plan shows those two changes.
    let choices = [
        "--var",
        "dtix_snapshot_method=full",
        "--var",
        "silver_sequence_by=pk",
    ];
    let mut args = vec!["plan", "--local", "--no-color"];
    args.extend(choices);
    let out = run_ok(d, &args, &[]);
    assert!(out.contains(r#"sequence_by = "dt" -> "pk""#), "{out}");
    assert!(
        out.contains(r#"dtix_snapshot_method = "cdf" -> "full""#),
        "{out}"
    );
    assert!(
        out.contains("bronze_snapshot_function = true -> false"),
        "{out}"
    );
    // The onboarding changes, so the job run it triggers is made again; nothing else goes.
    assert!(
        out.contains("databricks_job_run.downstream must be replaced"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 1 to add, 3 to change, 1 to destroy."),
        "{out}"
    );
    let mut args = vec!["apply", "--local", "--auto-approve"];
    args.extend(choices);
    let out = run_ok(d, &args, &[]);
    assert!(out.contains("downstream_run = \"SUCCESS\""), "{out}");
    let rows = onboarding(d);
    assert_eq!(rows[0]["silver_cdc_apply_changes"]["sequence_by"], "pk");
    let dump = local_dump(d);
    let pipelines = by_name(&dump, "pipelines", |p| &p["spec"]["name"]);
    let bronze = &pipelines["sdp-meta-lfc-bronze-demo"]["spec"]["configuration"];
    assert_eq!(bronze["dtix_snapshot_method"], "full", "{bronze}");

    // Another source database replaces the connection and what reads through it.
    for (kind, connection_type) in [("postgresql", "POSTGRESQL"), ("mysql", "MYSQL")] {
        let var = format!("source_database={kind}");
        let mut args = vec!["plan", "--local", "--no-color"];
        args.extend(choices);
        args.extend(["--var", &var]);
        let out = run_ok(d, &args, &[]);
        assert!(
            out.contains("databricks_connection.source must be replaced"),
            "{out}"
        );
        assert!(out.contains(connection_type), "{out}");
        let mut args = vec!["apply", "--local", "--auto-approve"];
        args.extend(choices);
        args.extend(["--var", &var]);
        run_ok(d, &args, &[]);
        let dump = local_dump(d);
        let connections = dump["connections"].as_object().unwrap();
        assert_eq!(connections.len(), 1, "{connections:?}");
        let connection = connections.values().next().unwrap();
        assert_eq!(connection["info"]["connection_type"], connection_type);
        let pipelines = by_name(&dump, "pipelines", |p| &p["spec"]["name"]);
        let ig = &pipelines[&format!("lfcdemo_{kind}_demo_ig")]["spec"]["ingestion_definition"];
        let table = &ig["objects"][0]["table"];
        match kind {
            "postgresql" => {
                assert_eq!(table["source_catalog"], "lfcdemo", "{ig}");
                assert_eq!(
                    ig["source_configurations"][0]["catalog"]["postgres"]["slot_config"],
                    json!({"slot_name": "lfcdemo_postgresql_demo",
                        "publication_name": "lfcdemo_postgresql_demo_pub"}),
                    "{ig}"
                );
            }
            _ => {
                assert!(table.get("source_catalog").is_none(), "{ig}");
                assert!(ig.get("source_configurations").is_none(), "{ig}");
            }
        }
        // The onboarding file reads the new destination schema.
        let rows = onboarding(d);
        assert_eq!(
            rows[0]["source_details"]["source_database"],
            format!("lfc_demo.lfcdemo_{kind}_demo")
        );
    }
    let mut args = vec!["destroy", "--local", "--auto-approve"];
    args.extend(choices);
    args.extend(["--var", "source_database=mysql"]);
    run_ok(d, &args, &[]);
    assert_eq!(objects(&local_dump(d)), Vec::<String>::new());
}
