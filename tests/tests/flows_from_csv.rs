//! `examples/flows-from-csv`: 200 flows from a CSV with `csvdecode` and `for_each`, two
//! groups with their own bronze and silver pipelines; one more CSV row plans exactly one new
//! flow and an update of the onboarding file that shows the added entry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{example_copy, file_text, local_dump, run, run_ok};
use serde_json::Value;

const ONBOARDING: &str = "/Volumes/csv_flows/specs/sdp_meta/conf/onboarding.json";

#[test]
fn two_hundred_flows_from_csv_and_one_more_row_is_one_more_flow() {
    let dir = example_copy("flows-from-csv");
    let d = dir.path();

    let out = run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert!(out.contains("flows = 200"), "{out}");
    let dump = local_dump(d);
    let rows: Vec<Value> = serde_json::from_str(&file_text(&dump, ONBOARDING)).unwrap();
    assert_eq!(rows.len(), 200);
    let groups: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r["data_flow_group"].as_str().unwrap())
        .collect();
    assert_eq!(
        groups.into_iter().collect::<Vec<_>>(),
        ["finance", "retail"]
    );

    // Four pipelines, each selecting its group and layer.
    let mut confs: Vec<(String, String, String)> = dump["pipelines"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| {
            let c = &p["spec"]["configuration"];
            let layer = c["layer"].as_str().unwrap().to_string();
            (
                p["spec"]["name"].as_str().unwrap().to_string(),
                layer.clone(),
                c[format!("{layer}.group")].as_str().unwrap().to_string(),
            )
        })
        .collect();
    confs.sort();
    assert_eq!(
        confs,
        [
            (
                "csv-flows-finance-bronze".into(),
                "bronze".into(),
                "finance".into()
            ),
            (
                "csv-flows-finance-silver".into(),
                "silver".into(),
                "finance".into()
            ),
            (
                "csv-flows-retail-bronze".into(),
                "bronze".into(),
                "retail".into()
            ),
            (
                "csv-flows-retail-silver".into(),
                "silver".into(),
                "retail".into()
            ),
        ]
    );

    // One more row.
    let csv = d.join("flows.csv");
    let mut text = std::fs::read_to_string(&csv).unwrap();
    text.push_str("201,retail,cloudFiles,gift_cards/eu/201/,gift_cards_eu_201,card_id,\n");
    std::fs::write(&csv, text).unwrap();
    let plan: Value =
        serde_json::from_str(&run_ok(d, &["plan", "--local", "--json"], &[])).unwrap();
    let changes: Vec<(String, Vec<String>)> = plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"]["actions"] != serde_json::json!(["no-op"]))
        .map(|c| {
            (
                c["address"].as_str().unwrap().to_string(),
                c["change"]["actions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            (
                "sdp_meta_flow.table[\"201\"]".to_string(),
                vec!["create".to_string()]
            ),
            (
                "sdp_meta_onboarding.all".to_string(),
                vec!["update".to_string()]
            ),
        ],
        "{plan}"
    );
    // The text plan shows the added entry inside the onboarding file, and nothing else of it.
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{err}");
    let onboarding_diff = &out[out.find("sdp_meta_onboarding.all will be updated").unwrap()..];
    assert!(
        onboarding_diff.contains("+ bronze_table                   = \"gift_cards_eu_201\""),
        "{onboarding_diff}"
    );
    assert!(
        onboarding_diff.contains("(200 unchanged elements hidden)")
            || onboarding_diff.contains("unchanged elements hidden"),
        "{onboarding_diff}"
    );
    assert_eq!(
        onboarding_diff.matches("\n              + {").count(),
        1,
        "exactly one entry added:\n{onboarding_diff}"
    );
    assert!(
        !onboarding_diff.contains("\n              ~ {"),
        "no entry changed:\n{onboarding_diff}"
    );

    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    let rows: Vec<Value> = serde_json::from_str(&file_text(&local_dump(d), ONBOARDING)).unwrap();
    assert_eq!(rows.len(), 201);

    // A saved plan is refused when the CSV it was made from changed afterwards: the file is
    // not configuration, but what it changes is.
    let plan_file = d.join("reviewed.plan");
    run_ok(
        d,
        &["plan", "--local", "--out", plan_file.to_str().unwrap()],
        &[],
    );
    let text = std::fs::read_to_string(&csv)
        .unwrap()
        .replace("invoices_apac_002", "invoices_apac_two");
    std::fs::write(&csv, text).unwrap();
    let (code, out, err) = run(d, &["apply", "--local", plan_file.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("Saved plan is stale"), "{err}");
    assert!(err.contains("sdp_meta_flow.table[\"2\"]"), "{err}");

    let out = run_ok(d, &["destroy", "--local", "--auto-approve"], &[]);
    assert!(out.contains("0 left behind"), "{out}");
    assert_eq!(common::objects(&local_dump(d)), Vec::<String>::new());
}
