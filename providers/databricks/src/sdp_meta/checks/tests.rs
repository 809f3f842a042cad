#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::sdp_meta::schema::{flow_schema, onboarding_schema};
use brickform_core::provider::{Nesting, Schema};
use serde_json::{Value as J, json};

/// Stands for a value known only after apply.
const UNKNOWN: &str = "<unknown>";

fn value(j: &J) -> Value {
    match j {
        J::String(s) if s == UNKNOWN => Value::Unknown,
        J::Array(a) => Value::List(a.iter().map(value).collect()),
        J::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), value(v)))
                .collect::<brickform_core::value::Object>()
                .into(),
        ),
        other => Value::from_json(other),
    }
}

/// A configuration as the decoder delivers it: every configurable attribute present (null
/// when unset), single blocks as objects or null, keyed blocks as lists.
fn decode(schema: &Schema, j: &J) -> Object {
    let J::Object(m) = j else {
        panic!("not an object: {j}")
    };
    for k in m.keys() {
        assert!(
            schema.attribute(k).is_some() || schema.block_type(k).is_some(),
            "{k} is not in the schema"
        );
    }
    let mut out = Object::default();
    for a in schema.attributes.iter().filter(|a| a.can_configure()) {
        out.insert(
            a.name.into(),
            m.get(a.name).map(value).unwrap_or(Value::Null),
        );
    }
    for b in &schema.blocks {
        let v = match (&b.nesting, m.get(b.name)) {
            (_, Some(J::String(s))) if s == UNKNOWN => Value::Unknown,
            (Nesting::Single, None | Some(J::Null)) => Value::Null,
            (Nesting::Single, Some(x)) => Value::object(decode(&b.schema, x)),
            (_, None | Some(J::Null)) => Value::List(Vec::new()),
            (_, Some(J::Array(items))) => Value::List(
                items
                    .iter()
                    .map(|x| Value::object(decode(&b.schema, x)))
                    .collect(),
            ),
            (_, Some(x)) => panic!("{}: not a list of blocks: {x}", b.name),
        };
        out.insert(b.name.into(), v);
    }
    out
}

fn flow(j: &J) -> Object {
    decode(&flow_schema(), j)
}

fn onboarding(attrs: J, flows: &[J]) -> Object {
    let mut o = decode(&onboarding_schema(), &attrs);
    o.insert(
        "flows".into(),
        Value::List(flows.iter().map(|f| Value::object(flow(f))).collect()),
    );
    o
}

/// Sets a JSON pointer's value, creating objects on the way (numeric segments index arrays).
fn set(j: &mut J, pointer: &str, v: J) {
    let mut cur = j;
    let segs: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    for (n, seg) in segs.iter().enumerate() {
        let last = n + 1 == segs.len();
        if let Ok(i) = seg.parse::<usize>()
            && cur.is_array()
        {
            let arr = cur.as_array_mut().unwrap();
            if last {
                arr[i] = v;
                return;
            }
            cur = &mut arr[i];
            continue;
        }
        if cur.is_null() {
            *cur = json!({});
        }
        let obj = cur.as_object_mut().unwrap();
        if last {
            if v.is_null() {
                obj.remove(*seg);
            } else {
                obj.insert(seg.to_string(), v);
            }
            return;
        }
        cur = obj.entry(seg.to_string()).or_insert(J::Null);
    }
}

fn with(mut j: J, changes: &[(&str, J)]) -> J {
    for (p, v) in changes {
        set(&mut j, p, v.clone());
    }
    j
}

/// `bronze.append_flow.0.options` → a path; numeric segments are list indexes.
fn p(s: &str) -> Vec<PathStep> {
    if s.is_empty() {
        return Vec::new();
    }
    s.split('.')
        .map(|seg| match seg.parse::<usize>() {
            Ok(i) => PathStep::Index(i),
            Err(_) => PathStep::Key(seg.to_string()),
        })
        .collect()
}

/// Exactly one finding of `rule`, with that level, path and message fragment.
#[track_caller]
fn expect(fs: &[Finding], level: FindingLevel, rule: &str, path: &str, text: &str) {
    assert!(
        rules::RULES.iter().any(|r| r.id == rule),
        "{rule} is a rule of the table"
    );
    let hits: Vec<&Finding> = fs
        .iter()
        .filter(|f| f.rule.as_deref() == Some(rule))
        .collect();
    assert_eq!(hits.len(), 1, "one {rule} finding expected: {fs:#?}");
    let f = hits[0];
    assert_eq!(f.level, level, "{f:#?}");
    assert_eq!(f.path, p(path), "{f:#?}");
    assert!(f.message.contains(text), "{:?} lacks {text:?}", f.message);
    assert!(
        f.hint.as_deref().is_some_and(|h| !h.is_empty()),
        "{f:#?} has no hint"
    );
    assert!(!f.message.contains('\n'), "one line: {:?}", f.message);
}

#[track_caller]
fn none(fs: &[Finding], rule: &str) {
    assert!(
        fs.iter().all(|f| f.rule.as_deref() != Some(rule)),
        "no {rule} finding expected: {fs:#?}"
    );
}

fn check(j: &J) -> Vec<Finding> {
    check_flow(&flow(j))
}

const ERR: FindingLevel = FindingLevel::Error;
const WARN: FindingLevel = FindingLevel::Warning;

// ---- fixtures: the LFC demo's flows and one flow of every other kind, all valid ----

fn cdc_block() -> J {
    json!({
        "keys": ["pk"], "sequence_by": "_commit_version", "scd_type": "1",
        "apply_as_deletes": "_change_type = 'delete'",
        "except_column_list": ["_change_type", "_commit_version", "_commit_timestamp"]
    })
}

fn intpk() -> J {
    json!({
        "data_flow_id": "1", "data_flow_group": "A1", "source_system": "sqlserver",
        "source": {"format": "delta", "ingestion_table": {
            "kind": "table", "destination_table": "main.lfc.intpk", "scd_type": "SCD_TYPE_1"}},
        "bronze": {"database": "main.bronze", "table": "intpk",
            "reader_options": {"readChangeFeed": "true"}, "cdc_apply_changes": cdc_block()},
        "silver": {"database": "main.silver", "table": "intpk", "select_exp": ["*"],
            "reader_options": {"readChangeFeed": "true"}, "cdc_apply_changes": cdc_block()}
    })
}

fn dtix() -> J {
    let snap = json!({"keys": ["dt", "lfc_end_at"], "scd_type": "1"});
    json!({
        "data_flow_id": "2", "data_flow_group": "A1",
        "source": {"format": "snapshot", "snapshot_format": "delta", "ingestion_table": {
            "kind": "table", "destination_table": "main.lfc.dtix", "scd_type": "SCD_TYPE_2"}},
        "bronze": {"database": "main.bronze", "table": "dtix", "apply_changes_from_snapshot": snap},
        "silver": {"database": "main.silver", "table": "dtix", "apply_changes_from_snapshot": snap}
    })
}

fn orders() -> J {
    json!({
        "data_flow_id": "3", "data_flow_group": "G",
        "source": {"format": "cloudFiles", "source_path": "/Volumes/main/landing/files/orders/",
            "source_metadata": {"include_autoloader_metadata_column": true}},
        "bronze": {"database": "main.bronze", "table": "orders",
            "reader_options": {"cloudFiles.format": "json"}, "cluster_by": ["id"],
            "row_filter": "ROW FILTER main.sec.region_filter ON (region)",
            "expectations": {"expect_or_drop": {"valid_id": "id IS NOT NULL"},
                "expect_or_quarantine": {"bad_id": "id IS NULL"}},
            "quarantine": {"database": "main.bronze", "table": "orders_quarantine", "partitions": ["dt"]},
            "append_flow": [{"name": "late_orders", "source_format": "cloudFiles",
                "source_path": "/Volumes/main/landing/files/late/",
                "reader_options": {"cloudFiles.format": "json"}}],
            "sink": [{"name": "orders_out", "format": "delta",
                "options": {"tablename": "main.out.orders"}}]},
        "silver": {"database": "main.silver", "table": "orders",
            "select_exp": ["id", "amount"], "where_clause": ["id IS NOT NULL"]}
    })
}

fn kafka() -> J {
    json!({
        "data_flow_id": "4", "data_flow_group": "G",
        "source": {"format": "kafka", "kafka": {"bootstrap_servers": "host:9092", "subscribe": "orders",
            "options": {"startingOffsets": "earliest"}}},
        "bronze": {"database": "main.bronze", "table": "orders_k"}
    })
}

fn eventhub() -> J {
    json!({
        "data_flow_id": "5", "data_flow_group": "G",
        "source": {"format": "eventhub", "eventhub": {"namespace": "ns", "name": "hub", "port": "9093",
            "access_key_name": "policy", "secrets_scope_name": "scope"}},
        "bronze": {"database": "main.bronze", "table": "iot"}
    })
}

/// Silver-only: reads the bronze table `orders` writes.
fn fanout() -> J {
    json!({
        "data_flow_id": "6", "data_flow_group": "G",
        "bronze": {"database": "main.bronze", "table": "orders"},
        "silver": {"database": "main.silver", "table": "orders_eu", "where_clause": ["region = 'eu'"]}
    })
}

fn multi_source() -> J {
    json!({
        "data_flow_id": "7", "data_flow_group": "G",
        "source": {"format": "delta", "table": "main.raw.orders_us"},
        "bronze": {"database": "main.bronze", "table": "orders_all",
            "cdc_apply_changes_flows": {"keys": ["id"], "sequence_by": "ts", "scd_type": "2",
                "flow": [
                    {"name": "eu", "source_format": "delta",
                        "source_details": {"source_database": "main.raw", "source_table": "orders_eu"}},
                    {"name": "us", "source_format": "cloudFiles", "source_path": "/Volumes/main/landing/files/us/"}]}}
    })
}

fn all_flows() -> Vec<J> {
    vec![
        intpk(),
        dtix(),
        orders(),
        kafka(),
        eventhub(),
        fanout(),
        multi_source(),
    ]
}

fn ob_attrs() -> J {
    json!({
        "volume_path": "/Volumes/main/specs/conf", "env": "prod", "database": "main.sdp_meta_specs",
        "sdp_meta_version": "0.1.1+pr267",
        "dependency": "/Volumes/main/specs/conf/wheels/databricks_labs_sdp_meta-0.1.1+pr267-py3-none-any.whl",
        "runner": {"bronze_snapshot_function": true}
    })
}

fn check_ob(attrs: J, flows: &[J]) -> Vec<Finding> {
    check_onboarding(&onboarding(attrs, flows))
}

// ---- clean configurations ----

#[test]
fn valid_flows_have_no_findings() {
    for f in all_flows() {
        let fs = check(&f);
        assert!(fs.is_empty(), "{}: {fs:#?}", f["data_flow_id"]);
    }
}

#[test]
fn the_lfc_demo_onboarding_on_a_fixed_build_has_no_findings() {
    let fs = check_ob(ob_attrs(), &all_flows());
    assert!(fs.is_empty(), "{fs:#?}");
}

// ---- V1 / V2 names ----

#[test]
fn v1_identifiers_of_a_flow() {
    let cases = [
        (
            "/bronze/table",
            json!("intpk-2"),
            "bronze.table",
            "\"intpk-2\"",
        ),
        (
            "/silver/database",
            json!("main.1silver"),
            "silver.database",
            "segment \"1silver\"",
        ),
        (
            "/bronze/catalog",
            json!("my cat"),
            "bronze.catalog",
            "\"my cat\"",
        ),
        (
            "/bronze/cdc_apply_changes/keys",
            json!(["pk", "p-k"]),
            "bronze.cdc_apply_changes.keys",
            "entry \"p-k\"",
        ),
        (
            "/bronze/cdc_apply_changes/sequence_by",
            json!("_commit-version"),
            "bronze.cdc_apply_changes.sequence_by",
            "_commit-version",
        ),
        (
            "/bronze/quarantine",
            json!({"database": "main.bronze", "table": "intpk.q"}),
            "bronze.quarantine.table",
            "\"intpk.q\"",
        ),
        (
            "/bronze/partition_columns",
            json!(["dt", "9x"]),
            "bronze.partition_columns",
            "entry \"9x\"",
        ),
    ];
    for (ptr, v, path, text) in cases {
        let fs = check(&with(intpk(), &[(ptr, v)]));
        expect(&fs, ERR, "V1", path, text);
        assert!(
            fs[0].message.starts_with("flow \"1\": "),
            "{}",
            fs[0].message
        );
        assert!(
            fs[0]
                .message
                .contains("hyphens, periods, spaces and leading digits are not supported")
        );
    }
    // Dotted struct fields and several columns are fine in sequence_by; blank partition entries too.
    let ok = with(
        intpk(),
        &[
            (
                "/bronze/cdc_apply_changes/sequence_by",
                json!("_metadata.file_path, seq"),
            ),
            ("/bronze/partition_columns", json!(["dt", ""])),
        ],
    );
    none(&check(&ok), "V1");
    let long = "t".repeat(256);
    expect(
        &check(&with(intpk(), &[("/bronze/table", json!(long))])),
        ERR,
        "V1",
        "bronze.table",
        "256 characters",
    );
}

#[test]
fn v2_database_with_three_parts() {
    let fs = check(&with(
        intpk(),
        &[("/bronze/database", json!("main.bronze.extra"))],
    ));
    expect(&fs, ERR, "V2", "bronze.database", "3 dotted parts");
    none(&fs, "V1");
    let fs = check(&with(
        orders(),
        &[("/bronze/quarantine/database", json!("a.b.c"))],
    ));
    expect(
        &fs,
        ERR,
        "V2",
        "bronze.quarantine.database",
        "bronze.quarantine.database",
    );
    none(
        &check(&with(intpk(), &[("/bronze/database", json!("bronze"))])),
        "V2",
    );
}

#[test]
fn v1_v2_onboarding_names() {
    let fs = check_ob(
        with(
            ob_attrs(),
            &[("/volume_path", json!("/Volumes/main/specs/my-vol"))],
        ),
        &[kafka()],
    );
    expect(&fs, ERR, "V1", "volume_path", "segment \"my-vol\"");
    let fs = check_ob(
        with(ob_attrs(), &[("/database", json!("main.sdp-specs"))]),
        &[kafka()],
    );
    expect(&fs, ERR, "V1", "database", "segment \"sdp-specs\"");
    let fs = check_ob(
        with(
            ob_attrs(),
            &[("/bronze_dataflowspec_table", json!("bronze-spec"))],
        ),
        &[kafka()],
    );
    expect(
        &fs,
        ERR,
        "V1",
        "bronze_dataflowspec_table",
        "\"bronze-spec\"",
    );
    let fs = check_ob(
        with(ob_attrs(), &[("/database", json!("main.specs.x"))]),
        &[kafka()],
    );
    expect(&fs, ERR, "V2", "database", "3 dotted parts");
    let fs = check_ob(
        with(
            ob_attrs(),
            &[("/volume_path", json!("/Volumes/main/specs/conf/"))],
        ),
        &[kafka()],
    );
    assert!(fs.is_empty(), "{fs:#?}");
}

#[test]
fn volume_path_and_file_name() {
    let fs = check_ob(
        with(ob_attrs(), &[("/volume_path", json!("/tmp/conf"))]),
        &[kafka()],
    );
    expect(&fs, ERR, "volume", "volume_path", "not a volume's path");
    let fs = check_ob(
        with(ob_attrs(), &[("/file_name", json!("onboarding.txt"))]),
        &[kafka()],
    );
    expect(&fs, ERR, "file_name", "file_name", "unsupported extension");
    let fs = check_ob(
        with(ob_attrs(), &[("/file_name", json!("Onboarding.YAML"))]),
        &[kafka()],
    );
    none(&fs, "file_name");
}

// ---- expectations ----

#[test]
fn v5_only_quarantine_rules_without_cdc() {
    let only_q = with(
        orders(),
        &[("/bronze/expectations/expect_or_drop", J::Null)],
    );
    expect(
        &check(&only_q),
        ERR,
        "V5",
        "bronze.expectations.expect_or_quarantine",
        "only expect_or_quarantine",
    );
    let empty = with(orders(), &[("/bronze/expectations", json!({"expect": {}}))]);
    expect(
        &check(&empty),
        ERR,
        "V5",
        "bronze.expectations",
        "has no rules",
    );
    // With CDC, sdp-meta declares the target through the CDC path.
    let cdc = with(
        intpk(),
        &[
            (
                "/bronze/expectations",
                json!({"expect_or_quarantine": {"bad": "pk IS NULL"}}),
            ),
            (
                "/bronze/quarantine",
                json!({"database": "main.bronze", "table": "intpk_quarantine"}),
            ),
        ],
    );
    none(&check(&cdc), "V5");
}

#[test]
fn v6_quarantine_rules_without_a_quarantine_table() {
    let fs = check(&with(orders(), &[("/bronze/quarantine", J::Null)]));
    expect(
        &fs,
        WARN,
        "V6",
        "bronze.expectations.expect_or_quarantine",
        "without bronze.quarantine",
    );
    let fs = check(&with(orders(), &[("/bronze/quarantine/database", J::Null)]));
    expect(
        &fs,
        WARN,
        "V6",
        "bronze.expectations.expect_or_quarantine",
        "quarantine table silently",
    );
    none(&check(&orders()), "V6");
}

#[test]
fn v7_aliased_expectation_pairs() {
    let fs = check(&with(
        orders(),
        &[(
            "/bronze/expectations/expect_all_or_drop",
            json!({"x": "x > 0"}),
        )],
    ));
    expect(
        &fs,
        WARN,
        "V7",
        "bronze.expectations.expect_all_or_drop",
        "both expect_or_drop and expect_all_or_drop",
    );
    let fs = check(&with(
        orders(),
        &[
            ("/bronze/expectations/expect", json!({"a": "a > 0"})),
            (
                "/bronze/expectations/expect_all_or_fail",
                json!({"b": "b > 0"}),
            ),
        ],
    ));
    none(&fs, "V7");
}

// ---- snapshots ----

#[test]
fn v8_snapshot_without_apply_changes_from_snapshot() {
    let fs = check(&with(
        dtix(),
        &[("/bronze/apply_changes_from_snapshot", J::Null)],
    ));
    expect(
        &fs,
        ERR,
        "V8",
        "bronze",
        "needs bronze.apply_changes_from_snapshot",
    );
    assert!(
        fs[0]
            .message
            .starts_with("flow \"2\": source.format = \"snapshot\""),
        "{}",
        fs[0].message
    );
    assert!(
        fs[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("apply_changes_from_snapshot { keys")
    );
    none(&check(&dtix()), "V8");
}

#[test]
fn v10_delta_snapshot_without_a_table() {
    let fs = check(&with(dtix(), &[("/source/ingestion_table", J::Null)]));
    expect(
        &fs,
        ERR,
        "V10",
        "source",
        "snapshot_format = \"delta\" has no table",
    );
    let ok = with(
        dtix(),
        &[
            ("/source/ingestion_table", J::Null),
            ("/source/source_database", json!("main.lfc")),
            ("/source/source_table", json!("dtix")),
        ],
    );
    none(&check(&ok), "V10");
}

#[test]
fn v9_v12_snapshot_functions_by_build() {
    let pre = with(
        ob_attrs(),
        &[
            ("/sdp_meta_version", J::Null),
            ("/dependency", J::Null),
            ("/runner", J::Null),
        ],
    );
    // Pre-fix build, no function: #266.
    let fs = check_ob(pre.clone(), &[dtix()]);
    expect(
        &fs,
        ERR,
        "V9",
        "flows.0",
        "Snapshot reader function not provided!",
    );
    assert!(
        fs[0]
            .message
            .starts_with("flow \"2\": source.snapshot_format"),
        "{}",
        fs[0].message
    );
    // Fixed build, no function: the built-in view works.
    let fixed = with(ob_attrs(), &[("/runner", J::Null)]);
    none(&check_ob(fixed.clone(), &[dtix()]), "V9");
    // A file snapshot needs a function on every build.
    let csv = with(
        dtix(),
        &[
            ("/source/snapshot_format", json!("csv")),
            ("/source/source_path", json!("/Volumes/main/s/v/snap/")),
        ],
    );
    expect(
        &check_ob(fixed, std::slice::from_ref(&csv)),
        ERR,
        "V9",
        "flows.0",
        "\"csv\"",
    );
    none(&check_ob(ob_attrs(), &[csv]), "V9");
    // Pre-fix build with a function: the function is ignored for delta snapshots (#268a).
    let with_fn = with(
        pre,
        &[("/runner", json!({"bronze_snapshot_function": true}))],
    );
    let fs = check_ob(with_fn, &[dtix()]);
    expect(&fs, WARN, "V12", "flows.0", "silently ignores the function");
    none(&fs, "V9");
    none(&check_ob(ob_attrs(), &[dtix()]), "V12");
}

#[test]
fn a_runner_for_the_snapshot_group_only_leaves_the_other_groups_alone() {
    // dtix alone in group S, whose runner passes the function; intpk in A1 without it.
    let mut snapshot_group = dtix();
    snapshot_group["data_flow_group"] = json!("S");
    let pre = with(
        ob_attrs(),
        &[
            ("/sdp_meta_version", json!("0.1.0")),
            ("/dependency", J::Null),
            (
                "/runner",
                json!({"bronze_snapshot_function": true, "groups": ["S"]}),
            ),
        ],
    );
    let fs = check_ob(pre.clone(), &[intpk(), snapshot_group.clone()]);
    assert!(
        !fs.iter()
            .any(|f| matches!(f.rule.as_deref(), Some("V9" | "V11"))),
        "{fs:#?}"
    );
    // A snapshot flow in a group the runner does not serve has no function (#266).
    let elsewhere = with(
        pre,
        &[(
            "/runner",
            json!({"bronze_snapshot_function": true, "groups": ["A1"]}),
        )],
    );
    let fs = check_ob(elsewhere, &[intpk(), snapshot_group]);
    expect(
        &fs,
        ERR,
        "V9",
        "flows.1",
        "runner passes no bronze_next_snapshot_and_version",
    );
    expect(&fs, ERR, "V11", "flows.0", "group \"A1\"");
}

#[test]
fn v11_snapshot_function_with_non_snapshot_flows_on_a_pre_fix_build() {
    let pre = with(
        ob_attrs(),
        &[
            ("/sdp_meta_version", json!("0.1.0")),
            ("/dependency", J::Null),
        ],
    );
    let fs = check_ob(pre.clone(), &[intpk(), dtix()]);
    expect(
        &fs,
        ERR,
        "V11",
        "flows.0",
        "group \"A1\" mixes snapshot and non-snapshot bronze flows",
    );
    let v11 = fs
        .iter()
        .find(|f| f.rule.as_deref() == Some("V11"))
        .unwrap();
    assert!(
        v11.message
            .starts_with("flow \"1\": source.format = \"delta\" is not a snapshot"),
        "{}",
        v11.message
    );
    // A group without snapshot flows is broken as well: the runner is shared.
    let fs = check_ob(
        with(
            ob_attrs(),
            &[
                ("/sdp_meta_version", json!("0.1.0")),
                ("/dependency", J::Null),
            ],
        ),
        &[kafka()],
    );
    expect(
        &fs,
        ERR,
        "V11",
        "flows.0",
        "its group \"G\" has no bronze snapshot flow",
    );
    // One finding per group, not per flow.
    let mut other = intpk();
    set(&mut other, "/data_flow_id", json!("9"));
    set(&mut other, "/bronze/table", json!("intpk2"));
    set(&mut other, "/silver", J::Null);
    let fs = check_ob(pre.clone(), &[intpk(), dtix(), other]);
    expect(
        &fs,
        ERR,
        "V11",
        "flows.0",
        "the group's 1 other non-snapshot bronze flow",
    );
    // Fixed build, or no function: nothing.
    none(&check_ob(ob_attrs(), &[intpk(), dtix()]), "V11");
    none(
        &check_ob(with(pre, &[("/runner", J::Null)]), &[intpk(), dtix()]),
        "V11",
    );
}

// ---- CDC ----

#[test]
fn v13_expectations_with_cdc_depend_on_the_build() {
    let dq = with(
        intpk(),
        &[(
            "/bronze/expectations",
            json!({"expect": {"valid_row": "true"}}),
        )],
    );
    let fs = check_ob(ob_attrs(), std::slice::from_ref(&dq));
    expect(&fs, WARN, "V13", "flows.0", "extra table intpk_dq");
    let pre = with(
        ob_attrs(),
        &[
            ("/sdp_meta_version", json!("0.1.1")),
            ("/dependency", J::Null),
        ],
    );
    let fs = check_ob(pre, std::slice::from_ref(&dq));
    expect(
        &fs,
        WARN,
        "V13",
        "flows.0",
        "evaluates them on raw change events",
    );
    let unknown = with(ob_attrs(), &[("/sdp_meta_version", json!(UNKNOWN))]);
    expect(
        &check_ob(unknown, &[dq]),
        WARN,
        "V13",
        "flows.0",
        "raw change events",
    );
    none(&check_ob(ob_attrs(), &[intpk()]), "V13");
    none(
        &check(&with(
            intpk(),
            &[("/bronze/expectations", json!({"expect": {"v": "true"}}))],
        )),
        "V13",
    );
}

#[test]
fn v14_cdc_and_cdc_flows() {
    let both = with(
        intpk(),
        &[(
            "/bronze/cdc_apply_changes_flows",
            json!({"keys": ["pk"], "sequence_by": "s", "scd_type": "1",
            "flow": [{"name": "a", "source_format": "delta", "source_details": {"source_table": "t"}}]}),
        )],
    );
    expect(
        &check(&both),
        ERR,
        "V14",
        "bronze.cdc_apply_changes_flows",
        "both set",
    );
    none(&check(&multi_source()), "V14");
}

#[test]
fn v16_reserved_scd2_columns() {
    let scd2 = with(
        intpk(),
        &[("/source/ingestion_table/scd_type", json!("SCD_TYPE_2"))],
    );
    let fs = check(&scd2);
    expect(
        &fs,
        ERR,
        "V16",
        "bronze.cdc_apply_changes",
        "__START_AT/__END_AT",
    );
    assert!(fs[0].hint.as_deref().unwrap().contains("lfc_end_at"));
    let reserved = with(
        intpk(),
        &[(
            "/source/ingestion_table",
            json!({"destination_table": "main.x.t", "has_reserved_scd2_columns": true}),
        )],
    );
    expect(
        &check(&reserved),
        ERR,
        "V16",
        "bronze.cdc_apply_changes",
        "feeds bronze.cdc_apply_changes",
    );
    let start = with(
        dtix(),
        &[(
            "/bronze/apply_changes_from_snapshot/keys",
            json!(["dt", "lfc_start_at"]),
        )],
    );
    expect(
        &check(&start),
        WARN,
        "V16",
        "bronze.apply_changes_from_snapshot.keys",
        "DUPLICATE_KEY_VIOLATION",
    );
    let raw = with(
        dtix(),
        &[(
            "/bronze/apply_changes_from_snapshot/keys",
            json!(["dt", "__END_AT"]),
        )],
    );
    expect(
        &check(&raw),
        ERR,
        "V16",
        "bronze.apply_changes_from_snapshot.keys",
        "reserved column \"__END_AT\"",
    );
    none(&check(&dtix()), "V16");
    none(&check(&intpk()), "V16");
}

#[test]
fn v17_lakeflow_connect_tables_read_as_a_plain_stream() {
    let no_cdf = with(intpk(), &[("/bronze/reader_options", J::Null)]);
    expect(
        &check(&no_cdf),
        ERR,
        "V17",
        "bronze.reader_options",
        "without bronze.reader_options readChangeFeed",
    );
    let no_cdc = with(intpk(), &[("/bronze/cdc_apply_changes", J::Null)]);
    expect(
        &check(&no_cdc),
        ERR,
        "V17",
        "bronze",
        "without bronze.cdc_apply_changes",
    );
    let scd2_plain = with(
        intpk(),
        &[
            ("/source/ingestion_table/scd_type", json!("SCD_TYPE_2")),
            ("/bronze/reader_options", J::Null),
            ("/bronze/cdc_apply_changes", J::Null),
            ("/silver", J::Null),
        ],
    );
    expect(
        &check(&scd2_plain),
        ERR,
        "V17",
        "bronze.reader_options",
        "(SCD_TYPE_2) is read as a plain stream",
    );
    none(&check(&intpk()), "V17");
    let append_only = with(
        no_cdf,
        &[("/source/ingestion_table/scd_type", json!("APPEND_ONLY"))],
    );
    none(&check(&append_only), "V17");
}

#[test]
fn v18_silver_reading_an_auto_cdc_target() {
    let fs = check(&with(intpk(), &[("/silver/reader_options", J::Null)]));
    expect(
        &fs,
        ERR,
        "V18",
        "silver.reader_options",
        "DELTA_SOURCE_TABLE_IGNORE_CHANGES",
    );
    let fs = check(&with(intpk(), &[("/silver/cdc_apply_changes", J::Null)]));
    expect(
        &fs,
        WARN,
        "V18",
        "silver",
        "without silver.cdc_apply_changes",
    );
    none(&check(&intpk()), "V18");
    none(&check(&dtix()), "V18");
    // A silver-only flow reading another flow's AUTO CDC target.
    let reader = json!({
        "data_flow_id": "8", "data_flow_group": "A1",
        "bronze": {"database": "main.bronze", "table": "INTPK"},
        "silver": {"database": "main.silver", "table": "intpk_eu"}
    });
    none(&check(&reader), "V18");
    let fs = check_ob(ob_attrs(), &[intpk(), reader.clone()]);
    expect(
        &fs,
        ERR,
        "V18",
        "flows.1",
        "written by flow \"1\" with AUTO CDC",
    );
    let fixed = with(
        reader,
        &[
            ("/silver/reader_options", json!({"readchangefeed": "TRUE"})),
            ("/silver/cdc_apply_changes", cdc_block()),
        ],
    );
    none(&check_ob(ob_attrs(), &[intpk(), fixed]), "V18");
}

#[test]
fn v19_change_feed_columns() {
    let fs = check(&with(
        intpk(),
        &[(
            "/bronze/cdc_apply_changes/except_column_list",
            json!(["_change_type", "_commit_version"]),
        )],
    ));
    expect(
        &fs,
        WARN,
        "V19",
        "bronze.cdc_apply_changes.except_column_list",
        "lacks _commit_timestamp",
    );
    let listed = with(
        intpk(),
        &[
            ("/bronze/cdc_apply_changes/except_column_list", J::Null),
            (
                "/bronze/cdc_apply_changes/column_list",
                json!(["pk", "name"]),
            ),
        ],
    );
    none(&check(&listed), "V19");
    none(&check(&intpk()), "V19");
}

#[test]
fn required_cdc_and_block_fields() {
    let fs = check(&with(
        intpk(),
        &[("/bronze/cdc_apply_changes/keys", json!([]))],
    ));
    expect(
        &fs,
        ERR,
        "required",
        "bronze.cdc_apply_changes.keys",
        "mandatory missing atrributes for bronze_cdc_apply_changes",
    );
    let fs = check(&with(
        dtix(),
        &[("/silver/apply_changes_from_snapshot/keys", json!([]))],
    ));
    expect(
        &fs,
        ERR,
        "required",
        "silver.apply_changes_from_snapshot.keys",
        "silver_apply_changes_from_snapshot",
    );
    let fs = check(&with(intpk(), &[("/data_flow_group", json!(""))]));
    expect(
        &fs,
        ERR,
        "required",
        "data_flow_group",
        "data_flow_group is not set",
    );
    let fs = check(&with(
        multi_source(),
        &[("/bronze/cdc_apply_changes_flows/flow", json!([]))],
    ));
    expect(
        &fs,
        ERR,
        "required",
        "bronze.cdc_apply_changes_flows.flow",
        "must be a non-empty list",
    );
    let fs = check(&with(
        multi_source(),
        &[(
            "/bronze/cdc_apply_changes_flows/flow/0/source_details",
            J::Null,
        )],
    ));
    expect(
        &fs,
        ERR,
        "required",
        "bronze.cdc_apply_changes_flows.flow.0.source_details",
        "flow \"eu\".source_details",
    );
    let fs = check(&with(
        orders(),
        &[("/bronze/append_flow/0/source_path", J::Null)],
    ));
    expect(
        &fs,
        ERR,
        "required",
        "bronze.append_flow.0.source_details",
        "append_flow \"late_orders\".source_details",
    );
    let fs = check(&with(orders(), &[("/bronze/sink/0/options", json!({}))]));
    expect(
        &fs,
        ERR,
        "required",
        "bronze.sink.0.options",
        "Missing sink details keys",
    );
    // create_streaming_table is rendered false when unset.
    none(&check(&orders()), "required");
}

#[test]
fn formats_and_scd_types() {
    let fs = check(&with(kafka(), &[("/source/format", json!("parquet"))]));
    expect(
        &fs,
        ERR,
        "format",
        "source.format",
        "\"parquet\" is not supported",
    );
    let fs = check(&with(
        orders(),
        &[("/bronze/append_flow/0/source_format", json!("jdbc"))],
    ));
    expect(
        &fs,
        ERR,
        "format",
        "bronze.append_flow.0.source_format",
        "\"jdbc\"",
    );
    let fs = check(&with(orders(), &[("/bronze/sink/0/format", json!("jdbc"))]));
    expect(
        &fs,
        ERR,
        "format",
        "bronze.sink.0.format",
        "Sink format jdbc not supported",
    );
    let silver_kafka = json!({
        "data_flow_id": "9", "data_flow_group": "G",
        "bronze": {"database": "main.bronze", "table": "x"},
        "silver": {"database": "main.silver", "table": "x",
            "cdc_apply_changes_flows": {"keys": ["id"], "sequence_by": "ts", "scd_type": "1",
                "flow": [{"name": "k", "source_format": "kafka", "source_details": {"subscribe": "t"}}]}}
    });
    expect(
        &check(&silver_kafka),
        ERR,
        "format",
        "silver.cdc_apply_changes_flows.flow.0.source_format",
        "not supported for silver",
    );
    let fs = check(&with(
        intpk(),
        &[("/bronze/cdc_apply_changes/scd_type", json!("3"))],
    ));
    expect(
        &fs,
        ERR,
        "scd_type",
        "bronze.cdc_apply_changes.scd_type",
        "\"3\" is not supported",
    );
    // Case-insensitive formats, lower-case sink formats.
    none(
        &check(&with(kafka(), &[("/source/format", json!("KAFKA"))])),
        "format",
    );
    none(
        &check(&with(
            orders(),
            &[("/bronze/sink/0/format", json!("Delta"))],
        )),
        "format",
    );
    none(
        &check(&with(
            intpk(),
            &[("/bronze/cdc_apply_changes/scd_type", json!("2"))],
        )),
        "scd_type",
    );
}

#[test]
fn names_are_unique() {
    let two = with(
        orders(),
        &[(
            "/bronze/sink",
            json!([
            {"name": "Out", "format": "kafka", "options": {"topic": "t"}},
            {"name": "out", "format": "delta", "options": {"path": "/Volumes/main/o/v/out"}}]),
        )],
    );
    expect(
        &check(&two),
        ERR,
        "name",
        "bronze.sink.1",
        "repeats the sink name \"out\"",
    );
    none(&check(&orders()), "name");
}

#[test]
fn v25_delta_sink_options() {
    let fs = check(&with(
        orders(),
        &[(
            "/bronze/sink/0/options",
            json!({"tableName": "main.out.orders"}),
        )],
    ));
    expect(
        &fs,
        ERR,
        "V25",
        "bronze.sink.0.options",
        "neither path nor tablename",
    );
    assert!(
        fs[0]
            .message
            .contains("lowercase keys only (found \"tableName\")"),
        "{}",
        fs[0].message
    );
    none(
        &check(&with(
            orders(),
            &[(
                "/bronze/sink/0/options",
                json!({"path": "/Volumes/main/o/v/x"}),
            )],
        )),
        "V25",
    );
    none(
        &check(&with(
            orders(),
            &[(
                "/bronze/sink/0",
                json!({"name": "k", "format": "kafka", "options": {"topic": "t"}}),
            )],
        )),
        "V25",
    );
}

// ---- sources ----

#[test]
fn source_requirements_per_format() {
    let fs = check(&with(orders(), &[("/source/source_path", J::Null)]));
    expect(
        &fs,
        ERR,
        "required",
        "source.source_path",
        "KeyError 'path'",
    );
    let fs = check(&with(
        orders(),
        &[(
            "/bronze/reader_options",
            json!({"cloudFiles.schemaLocation": "/x"}),
        )],
    ));
    expect(
        &fs,
        ERR,
        "source",
        "bronze.reader_options",
        "no \"cloudFiles.format\"",
    );
    let fs = check(&with(
        kafka(),
        &[("/source/kafka/bootstrap_servers", J::Null)],
    ));
    expect(
        &fs,
        ERR,
        "required",
        "source.kafka.bootstrap_servers",
        "Kafka broker details not found",
    );
    let secrets = with(
        kafka(),
        &[
            ("/source/kafka/bootstrap_servers", J::Null),
            ("/source/kafka/servers_secrets_scope_name", json!("scope")),
            ("/source/kafka/servers_secrets_scope_key", json!("key")),
        ],
    );
    none(&check(&secrets), "required");
    let fs = check(&with(kafka(), &[("/source/kafka/subscribe", J::Null)]));
    expect(
        &fs,
        ERR,
        "required",
        "source.kafka.subscribe",
        "Kafka topic details not found",
    );
    let ssl = with(
        kafka(),
        &[(
            "/source/kafka/options",
            json!({
        "kafka.ssl.truststore.location": "/x", "kafka.ssl.keystore.location": "/y",
        "kafka.ssl.truststore.secrets.scope": "s", "kafka.ssl.truststore.secrets.key": "k"}),
        )],
    );
    expect(
        &check(&ssl),
        ERR,
        "source",
        "source.kafka.options",
        "kafka.ssl.keystore.secrets.scope, kafka.ssl.keystore.secrets.key",
    );
    let fs = check(&with(kafka(), &[("/source/kafka", J::Null)]));
    expect(&fs, ERR, "source", "source.kafka", "has no kafka block");
    let fs = check(&with(eventhub(), &[("/source/eventhub/port", J::Null)]));
    expect(
        &fs,
        ERR,
        "required",
        "source.eventhub.port",
        "source.eventhub.port is not set",
    );
    let fs = check(&with(intpk(), &[("/source/ingestion_table", J::Null)]));
    expect(&fs, ERR, "source", "source", "has no table");
    let fs = check(&with(dtix(), &[("/source/snapshot_format", J::Null)]));
    expect(
        &fs,
        ERR,
        "required",
        "source.snapshot_format",
        "snapshot_format is missing in the source_details",
    );
    let fs = check(&with(
        dtix(),
        &[("/source/snapshot_format", json!("Delta"))],
    ));
    expect(&fs, ERR, "source", "source.snapshot_format", "exactly");
    let fs = check(&with(
        dtix(),
        &[("/source/snapshot_format", json!("parquet"))],
    ));
    expect(
        &fs,
        WARN,
        "source",
        "source.source_path",
        "without source.source_path",
    );
    none(
        &check(&with(
            intpk(),
            &[
                ("/source/ingestion_table", J::Null),
                ("/source/table", json!("main.lfc.intpk")),
            ],
        )),
        "source",
    );
    // A file snapshot's runner function reads what it likes: no table pairing required.
    let file = with(
        dtix(),
        &[
            ("/source/snapshot_format", json!("csv")),
            ("/source/source_path", json!("/Volumes/main/s/v/snap/")),
            ("/source/ingestion_table", J::Null),
            ("/source/source_database", json!("main.lfc")),
        ],
    );
    none(&check(&file), "source");
}

#[test]
fn source_fields_the_format_ignores() {
    let fs = check(&with(
        intpk(),
        &[(
            "/source/kafka",
            json!({"subscribe": "t", "bootstrap_servers": "h:1"}),
        )],
    ));
    expect(
        &fs,
        ERR,
        "source",
        "source.kafka",
        "source.kafka is set but source.format = \"delta\"",
    );
    let fs = check(&with(kafka(), &[("/source/table", json!("main.raw.t"))]));
    expect(&fs, ERR, "source", "source.table", "does not read a table");
    let fs = check(&with(
        intpk(),
        &[("/source/source_path", json!("/Volumes/a/b/c/x"))],
    ));
    expect(
        &fs,
        ERR,
        "source",
        "source.source_path",
        "only for cloudFiles and snapshot sources",
    );
    let fs = check(&with(
        intpk(),
        &[("/source/table", json!("main.lfc.intpk"))],
    ));
    expect(&fs, ERR, "source", "source", "more than one way");
    let fs = check(&with(
        intpk(),
        &[
            ("/source/ingestion_table", J::Null),
            ("/source/source_database", json!("main.lfc")),
        ],
    ));
    expect(
        &fs,
        ERR,
        "source",
        "source.source_table",
        "source.source_database is set without source.source_table",
    );
    let fs = check(&with(
        intpk(),
        &[
            ("/source/ingestion_table", J::Null),
            ("/source/table", json!("intpk")),
        ],
    ));
    expect(&fs, ERR, "source", "source.table", "1 dotted part");
    let fs = check(&with(
        intpk(),
        &[
            (
                "/bronze/apply_changes_from_snapshot",
                json!({"keys": ["pk"], "scd_type": "1"}),
            ),
            ("/bronze/cdc_apply_changes", J::Null),
            ("/source/ingestion_table/scd_type", json!("APPEND_ONLY")),
            ("/silver", J::Null),
        ],
    ));
    expect(
        &fs,
        ERR,
        "source",
        "bronze.apply_changes_from_snapshot",
        "with source.format = \"delta\"",
    );
}

// ---- structure, exclusivity, row filters ----

#[test]
fn layers_fit_together() {
    let fs = check(&with(kafka(), &[("/bronze", J::Null)]));
    expect(&fs, ERR, "layer", "source", "no bronze block");
    let fs = check(&json!({"data_flow_id": "1", "data_flow_group": "G"}));
    expect(&fs, ERR, "layer", "", "no source, bronze or silver block");
    let fs = check(&with(kafka(), &[("/source", J::Null)]));
    expect(
        &fs,
        ERR,
        "layer",
        "bronze",
        "without source and without silver",
    );
    let fs = check(&with(fanout(), &[("/bronze", J::Null)]));
    expect(&fs, ERR, "layer", "silver", "no bronze table to read");
    let fs = check(&with(
        fanout(),
        &[
            ("/bronze/cdc_apply_changes", cdc_block()),
            ("/bronze/cluster_by_auto", json!(false)),
        ],
    ));
    expect(
        &fs,
        WARN,
        "layer",
        "bronze",
        "bronze sets cdc_apply_changes but the flow has no source",
    );
    none(&check(&fanout()), "layer");
}

#[test]
fn exclusive_settings() {
    let fs = check(&with(dtix(), &[("/bronze/cdc_apply_changes", cdc_block())]));
    expect(
        &fs,
        ERR,
        "exclusive",
        "bronze.apply_changes_from_snapshot",
        "both set",
    );
    let fs = check(&with(
        orders(),
        &[(
            "/bronze/expectations_file",
            json!("/Volumes/main/s/v/dqe.json"),
        )],
    ));
    expect(
        &fs,
        ERR,
        "exclusive",
        "bronze.expectations_file",
        "are both set",
    );
    let fs = check(&with(
        orders(),
        &[(
            "/silver/transformation_file",
            json!("/Volumes/main/s/v/t.json"),
        )],
    ));
    expect(
        &fs,
        ERR,
        "exclusive",
        "silver.transformation_file",
        "select_exp / where_clause",
    );
    let fs = check(&with(
        orders(),
        &[(
            "/bronze/table_properties",
            json!({"pipelines.autoOptimize.zOrderCols": "id"}),
        )],
    ));
    expect(
        &fs,
        ERR,
        "exclusive",
        "bronze.cluster_by",
        "Cannot support zOrder and cluster_by together",
    );
    let file_only = with(
        orders(),
        &[
            ("/silver/select_exp", J::Null),
            ("/silver/where_clause", J::Null),
            (
                "/silver/transformation_file",
                json!("/Volumes/main/s/v/t.json"),
            ),
        ],
    );
    none(&check(&file_only), "exclusive");
}

#[test]
fn row_filters_pass_the_denylist() {
    for (filter, text) in [
        ("ROW FILTER main.sec.f ON (region); DROP TABLE x", "\";\""),
        ("ROW FILTER main.sec.f ON (region) -- x", "\"--\""),
        ("ROW FILTER `main`.sec.f ON (region)", "\"`\""),
        (
            "ROW FILTER main.sec.f ON (region) UNION SELECT 1",
            "keyword UNION",
        ),
    ] {
        let fs = check(&with(orders(), &[("/bronze/row_filter", json!(filter))]));
        expect(&fs, ERR, "row_filter", "bronze.row_filter", text);
    }
    let long = format!("ROW FILTER main.sec.f ON ({})", "c,".repeat(1000));
    let fs = check(&with(
        orders(),
        &[("/silver/quarantine_row_filter", json!(long))],
    ));
    expect(
        &fs,
        ERR,
        "row_filter",
        "silver.quarantine_row_filter",
        "characters long",
    );
    let word = with(
        orders(),
        &[(
            "/bronze/row_filter",
            json!("ROW FILTER main.sec.unionized_f ON (updated_at)"),
        )],
    );
    none(&check(&word), "row_filter");
}

// ---- the onboarding's own attributes ----

#[test]
fn onboarding_without_flows() {
    let fs = check_ob(ob_attrs(), &[]);
    expect(&fs, ERR, "flows", "flows", "flows is empty");
}

#[test]
fn v21_overwrite_must_be_exactly_true() {
    let fs = check_ob(
        with(ob_attrs(), &[("/overwrite", json!("true"))]),
        &[kafka()],
    );
    expect(&fs, WARN, "V21", "overwrite", "not exactly \"True\"");
    none(
        &check_ob(
            with(ob_attrs(), &[("/overwrite", json!("True"))]),
            &[kafka()],
        ),
        "V21",
    );
}

#[test]
fn v26_dependency() {
    for dep in ["__SET_ME__", "sdp-meta==0.1.0", "SDP_meta>=0.1", "sdp-meta"] {
        let fs = check_ob(with(ob_attrs(), &[("/dependency", json!(dep))]), &[kafka()]);
        expect(
            &fs,
            ERR,
            "V26",
            "dependency",
            &format!("dependency = {}", quote(dep)),
        );
    }
    let ok = with(
        ob_attrs(),
        &[
            ("/dependency", json!("databricks-labs-sdp-meta==0.1.1")),
            ("/sdp_meta_version", json!("0.1.1")),
            ("/runner", J::Null),
        ],
    );
    assert!(check_ob(ok, &[kafka()]).is_empty());
}

#[test]
fn versions_brickform_does_not_know() {
    let fs = check_ob(
        with(
            ob_attrs(),
            &[
                ("/sdp_meta_version", json!("0.2.0")),
                ("/dependency", J::Null),
            ],
        ),
        &[kafka()],
    );
    expect(
        &fs,
        WARN,
        "version",
        "sdp_meta_version",
        "\"0.2.0\" is not a build brickform knows",
    );
    // An unknown build is checked as pre-fix.
    let fs = check_ob(
        with(
            ob_attrs(),
            &[
                ("/sdp_meta_version", json!("0.2.0")),
                ("/dependency", J::Null),
                ("/runner", J::Null),
            ],
        ),
        &[dtix()],
    );
    expect(&fs, ERR, "V9", "flows.0", "#266");
    let fs = check_ob(
        with(
            ob_attrs(),
            &[
                ("/sdp_meta_version", json!("0.1.1")),
                ("/dependency", json!("databricks-labs-sdp-meta==0.1.0")),
            ],
        ),
        &[kafka()],
    );
    expect(
        &fs,
        WARN,
        "version",
        "dependency",
        "installs sdp-meta 0.1.0 but sdp_meta_version = \"0.1.1\"",
    );
}

// ---- across flows ----

#[test]
fn v24_duplicate_ids_and_silver_names() {
    let mut again = kafka();
    set(&mut again, "/bronze/table", json!("orders_k2"));
    let fs = check_ob(ob_attrs(), &[kafka(), eventhub(), again]);
    expect(
        &fs,
        ERR,
        "V24",
        "flows.2",
        "data_flow_id \"4\" is also used by flows[0]",
    );
    let mut other = orders();
    set(&mut other, "/data_flow_id", json!("10"));
    set(&mut other, "/bronze/table", json!("orders2"));
    set(&mut other, "/silver/database", json!("main.silver_eu"));
    let fs = check_ob(ob_attrs(), &[orders(), other]);
    expect(
        &fs,
        WARN,
        "V24",
        "flows.1",
        "silver.table \"orders\" is also the silver table of flow \"3\"",
    );
    none(&check_ob(ob_attrs(), &all_flows()), "V24");
}

#[test]
fn v23_and_target_bronze_names_in_a_group() {
    let mut same_name = kafka();
    set(&mut same_name, "/data_flow_id", json!("40"));
    set(&mut same_name, "/bronze/database", json!("main.bronze_eu"));
    let fs = check_ob(ob_attrs(), &[kafka(), same_name.clone()]);
    expect(
        &fs,
        WARN,
        "V23",
        "flows.1",
        "bronze.table \"orders_k\" is also written by flow \"4\" in group \"G\"",
    );
    none(&fs, "target");
    let other_group = with(same_name, &[("/data_flow_group", json!("H"))]);
    none(&check_ob(ob_attrs(), &[kafka(), other_group]), "V23");
    let mut same_table = eventhub();
    set(&mut same_table, "/bronze/table", json!("ORDERS_K"));
    let fs = check_ob(ob_attrs(), &[kafka(), same_table]);
    expect(
        &fs,
        ERR,
        "target",
        "flows.1",
        "bronze table main.bronze.orders_k is also written by flow \"4\"",
    );
    none(&fs, "V23");
}

#[test]
fn non_unity_catalog_paths() {
    let no_uc = with(ob_attrs(), &[("/uc_enabled", json!(false))]);
    let fs = check_ob(no_uc.clone(), &[kafka()]);
    expect(&fs, ERR, "uc_path", "flows.0", "bronze.path is not set");
    let ok = with(kafka(), &[("/bronze/path", json!("/mnt/bronze/orders_k"))]);
    none(&check_ob(no_uc, &[ok]), "uc_path");
    none(&check_ob(ob_attrs(), &[kafka()]), "uc_path");
}

// ---- unknown values ----

#[test]
fn unknown_values_say_nothing() {
    let unknowns: &[(&str, J)] = &[
        ("/source/format", json!(UNKNOWN)),
        ("/bronze/table", json!(UNKNOWN)),
        ("/bronze/database", json!(UNKNOWN)),
        ("/bronze/reader_options", json!(UNKNOWN)),
        ("/bronze/cdc_apply_changes/keys", json!(UNKNOWN)),
        ("/bronze/cdc_apply_changes/scd_type", json!(UNKNOWN)),
        (
            "/bronze/cdc_apply_changes/except_column_list",
            json!(UNKNOWN),
        ),
        ("/silver/reader_options", json!({"readChangeFeed": UNKNOWN})),
        ("/silver/database", json!(UNKNOWN)),
    ];
    // Each of these values is wrong when known; unknown, none may fire.
    let bad = with(
        intpk(),
        &[
            ("/bronze/table", json!("bad-name")),
            ("/bronze/cdc_apply_changes/keys", json!([])),
            ("/bronze/cdc_apply_changes/scd_type", json!("3")),
            ("/bronze/reader_options", json!({})),
            ("/bronze/cdc_apply_changes/except_column_list", json!([])),
            ("/silver/reader_options", J::Null),
        ],
    );
    assert!(!check(&bad).is_empty());
    let unknown = with(bad, unknowns);
    let fs = check(&unknown);
    assert!(fs.is_empty(), "{fs:#?}");
    // The id is unknown too: messages still say which flow.
    let fs = check(&with(
        intpk(),
        &[
            ("/data_flow_id", json!(UNKNOWN)),
            ("/bronze/table", json!("bad-name")),
        ],
    ));
    expect(
        &fs,
        ERR,
        "V1",
        "bronze.table",
        "flow (data_flow_id known after apply)",
    );
    // Whole blocks unknown.
    let fs = check(&with(
        intpk(),
        &[
            ("/source", json!(UNKNOWN)),
            ("/bronze/cdc_apply_changes", json!(UNKNOWN)),
        ],
    ));
    assert!(fs.is_empty(), "{fs:#?}");
}

#[test]
fn unknown_onboarding_inputs_say_nothing() {
    // Unknown flows: only the onboarding's own attributes are checked.
    let mut o = onboarding(ob_attrs(), &[]);
    o.insert("flows".into(), Value::Unknown);
    assert!(check_onboarding(&o).is_empty());
    // An unknown flow among known ones, unknown runner, version and uc_enabled.
    let attrs = with(
        ob_attrs(),
        &[
            ("/sdp_meta_version", json!(UNKNOWN)),
            ("/runner/bronze_snapshot_function", json!(UNKNOWN)),
            ("/uc_enabled", json!(UNKNOWN)),
            ("/dependency", json!(UNKNOWN)),
            ("/overwrite", json!(UNKNOWN)),
            ("/volume_path", json!(UNKNOWN)),
        ],
    );
    let mut o = onboarding(
        attrs,
        &[
            intpk(),
            dtix(),
            with(kafka(), &[("/data_flow_id", json!(UNKNOWN))]),
        ],
    );
    if let Some(Value::List(l)) = o.get_mut("flows") {
        l.push(Value::Unknown);
    }
    let fs = check_onboarding(&o);
    assert!(fs.is_empty(), "{fs:#?}");
}

#[test]
fn two_thousand_flows_are_checked_quickly() {
    let flows: Vec<J> = (0..2000)
        .map(|i| {
            let mut f = if i % 2 == 0 { intpk() } else { orders() };
            set(&mut f, "/data_flow_id", json!(i.to_string()));
            set(&mut f, "/data_flow_group", json!(format!("G{}", i % 10)));
            set(&mut f, "/bronze/table", json!(format!("t{i}")));
            set(&mut f, "/silver/table", json!(format!("s{i}")));
            if i % 2 == 1 {
                set(&mut f, "/bronze/quarantine/table", json!(format!("q{i}")));
            }
            f
        })
        .collect();
    let o = onboarding(
        with(
            ob_attrs(),
            &[
                ("/sdp_meta_version", json!("0.1.0")),
                ("/dependency", J::Null),
            ],
        ),
        &flows,
    );
    let start = std::time::Instant::now();
    let fs = check_onboarding(&o);
    let elapsed = start.elapsed();
    assert!(elapsed < std::time::Duration::from_secs(2), "{elapsed:?}");
    // Group G0..G9 each have non-snapshot flows and the runner passes a function: one V11 per group.
    assert_eq!(
        fs.iter()
            .filter(|f| f.rule.as_deref() == Some("V11"))
            .count(),
        10
    );
    assert_eq!(fs.len(), 10, "{:#?}", &fs[..fs.len().min(5)]);
    let start = std::time::Instant::now();
    for f in &flows {
        assert!(check(f).is_empty());
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
}
