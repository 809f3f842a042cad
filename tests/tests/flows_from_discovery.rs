//! `examples/flows-from-discovery`: one sdp-meta flow per table of the raw schema, read by
//! `data "databricks_tables"`. The first apply is targeted at what lands the tables, as the
//! plan's own error advises; a table made upstream afterwards (by another team, or by the
//! ingestion pipeline gaining an object) shows on the next plan as exactly one new flow and
//! an update of the onboarding file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, example_copy, file_text, local_dump, run, run_ok};
use serde_json::{Value, json};

const ONBOARDING: &str = "/Volumes/discovery_flows/specs/sdp_meta/conf/onboarding.json";

/// The addresses and actions of a plan's changes, no-ops left out.
fn changes(d: &std::path::Path, extra: &[&str]) -> Vec<(String, String)> {
    let mut args = vec!["plan", "--local", "--json"];
    args.extend_from_slice(extra);
    let plan: Value = serde_json::from_str(&run_ok(d, &args, &[])).unwrap();
    plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"]["actions"] != json!(["no-op"]))
        .map(|c| {
            let actions: Vec<&str> = c["change"]["actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            (
                c["address"].as_str().unwrap().to_string(),
                actions.join(","),
            )
        })
        .collect()
}

fn onboarded(d: &std::path::Path) -> Vec<String> {
    let rows: Vec<Value> = serde_json::from_str(&file_text(&local_dump(d), ONBOARDING)).unwrap();
    let mut tables: Vec<String> = rows
        .iter()
        .map(|r| {
            r["source_details"]["source_table"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    tables.sort();
    tables
}

#[test]
fn every_raw_table_is_one_flow_and_a_table_made_upstream_is_one_more() {
    let dir = example_copy("flows-from-discovery");
    let d = dir.path();

    // Nothing exists yet: the flows' keys are what the raw schema will hold, unknown until it
    // exists. The plan says so and how to converge, and sends nothing.
    let (code, _, err) = run(d, &["plan", "--local"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Invalid for_each argument"), "{err}");
    assert!(err.contains("apply --target ADDRESS"), "{err}");

    // 1. What lands the raw tables, and only that: the targeted plan leaves the data source
    //    and everything reading it out, instead of failing on them.
    let out = run_ok(
        d,
        &[
            "apply",
            "--local",
            "--auto-approve",
            "--target",
            "databricks_ingestion_pipeline.crm",
        ],
        &[],
    );
    assert!(out.contains("Resources: 8 added"), "{out}");
    let state = run_ok(d, &["state", "list", "--local"], &[]);
    assert!(!state.contains("sdp_meta"), "{state}");
    assert!(!state.contains("databricks_tables"), "{state}");
    run_ok(
        d,
        &["run", "--local", "databricks_ingestion_pipeline.crm"],
        &[],
    );

    // 2. Everything else: one flow per landed table.
    let out = run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert!(
        out.contains(r#"flows = ["accounts", "contacts", "invoices", "orders", "payments"]"#),
        "{out}"
    );
    assert_eq!(
        onboarded(d),
        ["accounts", "contacts", "invoices", "orders", "payments"]
    );
    assert_eq!(changes(d, &[]), Vec::<(String, String)>::new());

    // 3. Another team makes a table in raw: exactly one new flow and the onboarding update.
    {
        let serve = Serve::start_local(d);
        serve.ok(
            "POST",
            "/__emulator/tables",
            Some(json!({"full_name": "discovery_flows.raw.legacy_customers", "table_type": "MANAGED"})),
        );
    }
    assert_eq!(
        changes(d, &[]),
        [
            (
                r#"sdp_meta_flow.table["legacy_customers"]"#.to_string(),
                "create".to_string()
            ),
            ("sdp_meta_onboarding.all".to_string(), "update".to_string()),
        ]
    );
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert_eq!(onboarded(d).len(), 6);

    // 4. The ingestion pipeline gains an object: its update plans first; once a run has
    //    landed the table, it is one more flow.
    let more = r#"source_tables=["accounts","contacts","invoices","orders","payments","refunds"]"#;
    let var = ["--var", more];
    assert_eq!(
        changes(d, &var),
        [(
            "databricks_ingestion_pipeline.crm".to_string(),
            "update".to_string()
        )]
    );
    run_ok(
        d,
        &["apply", "--local", "--auto-approve", "--var", more],
        &[],
    );
    run_ok(
        d,
        &[
            "run",
            "--local",
            "databricks_ingestion_pipeline.crm",
            "--var",
            more,
        ],
        &[],
    );
    assert_eq!(
        changes(d, &var),
        [
            (
                r#"sdp_meta_flow.table["refunds"]"#.to_string(),
                "create".to_string()
            ),
            ("sdp_meta_onboarding.all".to_string(), "update".to_string()),
        ]
    );
    run_ok(
        d,
        &["apply", "--local", "--auto-approve", "--var", more],
        &[],
    );
    assert!(onboarded(d).contains(&"refunds".to_string()));
    assert_eq!(changes(d, &var), Vec::<(String, String)>::new());

    let out = run_ok(
        d,
        &["destroy", "--local", "--auto-approve", "--var", more],
        &[],
    );
    assert!(out.contains("0 left behind"), "{out}");
    let dump = local_dump(d);
    assert!(common::objects(&dump).is_empty(), "{dump}");
    assert!(dump["pipelines"].as_object().unwrap().is_empty(), "{dump}");
}
