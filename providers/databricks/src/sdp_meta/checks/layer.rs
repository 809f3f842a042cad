//! Layers: CDC, expectations, append flows, sinks, row filters (V5–V7, V14, V19, V25).

use super::*;

/// The onboarding key of a layer attribute, as sdp-meta's messages name it
/// (`bronze_database_<env>`).
fn key(layer: &str, attr: &str) -> String {
    crate::sdp_meta::fields::layer_key(layer, attr).unwrap_or_else(|| format!("{layer}_{attr}"))
}

/// The rules of one layer block (bronze or silver).
pub(super) fn layer_rules(v: &FlowView, layer: Layer, blk: &Object, r: &mut Report) {
    let at = At::root().key(layer.name());
    let ln = layer.name();
    for k in ["database", "table"] {
        if text(blk, k).is_absent() {
            r.missing(
                &at.key(k),
                &format!(
                    "sdp-meta needs {} and {} for every {ln} row (and silver rows read the bronze ones)",
                    key(ln, "database"),
                    key(ln, "table")
                ),
                &format!("set {ln}.{k}"),
            );
        }
    }
    check_database(blk, "database", &at, r);
    check_identifier(blk, "catalog", &at, r);
    check_identifier(blk, "table", &at, r);

    let active = match layer {
        Layer::Bronze => v.bronze_active() == Tri::Known(true),
        Layer::Silver => true,
    };
    if !active {
        return;
    }
    check_columns(blk, "partition_columns", &at, true, r);
    check_columns(blk, "cluster_by", &at, true, r);
    if configured(blk, "cluster_by") == Some(true)
        && option(blk, "table_properties", "pipelines.autoOptimize.zOrderCols").is_known()
    {
        r.error(
            &rules::EXCLUSIVE,
            &at.key("cluster_by"),
            &format!("{ln}.cluster_by is set together with table_properties \"pipelines.autoOptimize.zOrderCols\""),
            "sdp-meta onboarding fails with \"Cannot support zOrder and cluster_by together\"",
            "keep either cluster_by or the zOrderCols table property",
        );
    }
    if let Tri::Known(q) = block(blk, "quarantine") {
        let qa = at.key("quarantine");
        check_database(q, "database", &qa, r);
        check_identifier(q, "catalog", &qa, r);
        check_identifier(q, "table", &qa, r);
        check_columns(q, "partitions", &qa, true, r);
        check_columns(q, "cluster_by", &qa, true, r);
    }
    cdc_rules(layer, blk, &at, r);
    expectations_rules(layer, blk, &at, r);
    append_flow_rules(blk, &at, r);
    sink_rules(blk, &at, r);
    for k in ["row_filter", "quarantine_row_filter"] {
        if let Tri::Known(s) = text(blk, k)
            && let Some(problem) = row_filter_problem(s)
        {
            r.error(
                &rules::ROW_FILTER,
                &at.key(k),
                &format!("{ln}.{k} {problem}"),
                "sdp-meta onboarding rejects row filters with statement separators, comments, backticks or DDL/DML keywords, or longer than 2000 characters",
                "write it as ROW FILTER <catalog>.<schema>.<function> ON (<columns>)",
            );
        }
    }
    change_feed_columns_rule(layer, blk, &at, r);
    if layer == Layer::Silver
        && any_configured(blk, &["select_exp", "where_clause"]) == Some(true)
        && configured(blk, "transformation_file") == Some(true)
    {
        r.error(
            &rules::EXCLUSIVE,
            &at.key("transformation_file"),
            "silver.transformation_file is set together with silver.select_exp / where_clause",
            "the onboarding names one silver transformations file: either the rendered one or yours",
            "keep select_exp / where_clause, or transformation_file",
        );
    }
}

pub(super) fn cdc_rules(layer: Layer, blk: &Object, at: &At, r: &mut Report) {
    let ln = layer.name();
    let cdc = block(blk, "cdc_apply_changes");
    let flows = block(blk, "cdc_apply_changes_flows");
    let snap = block(blk, "apply_changes_from_snapshot");
    if let Tri::Known(c) = cdc {
        cdc_common_rules(
            c,
            &at.key("cdc_apply_changes"),
            &key(ln, "cdc_apply_changes"),
            r,
        );
    }
    if let Tri::Known(f) = flows {
        let fa = at.key("cdc_apply_changes_flows");
        cdc_common_rules(f, &fa, &key(ln, "cdc_apply_changes_flows"), r);
        cdc_flow_list_rules(layer, f, &fa, r);
    }
    if let Tri::Known(s) = snap {
        let sa = at.key("apply_changes_from_snapshot");
        let why = format!(
            "sdp-meta onboarding fails with \"mandatory missing atrributes for {}\"",
            key(ln, "apply_changes_from_snapshot")
        );
        if configured(s, "keys") == Some(false) {
            r.missing(
                &sa.key("keys"),
                &why,
                &format!("set {ln}.apply_changes_from_snapshot.keys to the snapshot's key columns"),
            );
        }
        scd_type_rule(s, &sa, &why, r);
        for k in [
            "keys",
            "track_history_column_list",
            "track_history_except_column_list",
        ] {
            check_columns(s, k, &sa, false, r);
        }
    }
    if cdc.is_known() && flows.is_known() {
        r.error(
            &rules::V14,
            &at.key("cdc_apply_changes_flows"),
            &format!("{ln}.cdc_apply_changes and {ln}.cdc_apply_changes_flows are both set"),
            &format!(
                "sdp-meta rejects it: \"both {} and {} are set; use one or the other\"",
                key(ln, "cdc_apply_changes"),
                key(ln, "cdc_apply_changes_flows")
            ),
            "keep cdc_apply_changes (one source) or cdc_apply_changes_flows (several sources)",
        );
    }
    if snap.is_known() && (cdc.is_known() || flows.is_known()) {
        let other = if cdc.is_known() {
            "cdc_apply_changes"
        } else {
            "cdc_apply_changes_flows"
        };
        r.error(
            &rules::EXCLUSIVE,
            &at.key("apply_changes_from_snapshot"),
            &format!("{ln}.apply_changes_from_snapshot and {ln}.{other} are both set"),
            "a table is written either from a change stream or from snapshots, not both",
            &format!(
                "keep {other} for a change stream, or apply_changes_from_snapshot for snapshots"
            ),
        );
    }
}

/// keys, sequence_by, scd_type and the column lists of cdc_apply_changes(_flows).
pub(super) fn cdc_common_rules(c: &Object, at: &At, key: &str, r: &mut Report) {
    let why = format!("sdp-meta onboarding fails with \"mandatory missing atrributes for {key}\"");
    if configured(c, "keys") == Some(false) {
        r.missing(
            &at.key("keys"),
            &why,
            &format!("set {}.keys to the primary key columns", at.text),
        );
    }
    match text(c, "sequence_by") {
        Tri::Absent => r.missing(
            &at.key("sequence_by"),
            &why,
            &format!(
                "set {}.sequence_by, e.g. \"_commit_version\" for a change feed",
                at.text
            ),
        ),
        Tri::Known(s) => check_sequence_by(s, &at.key("sequence_by"), r),
        Tri::Unknown => {}
    }
    scd_type_rule(c, at, &why, r);
    for k in [
        "keys",
        "column_list",
        "except_column_list",
        "track_history_column_list",
        "track_history_except_column_list",
        "ignore_null_updates_column_list",
        "ignore_null_updates_except_column_list",
    ] {
        check_columns(c, k, at, false, r);
    }
}

pub(super) fn scd_type_rule(c: &Object, at: &At, why_missing: &str, r: &mut Report) {
    let at = at.key("scd_type");
    match get(c, "scd_type") {
        Tri::Absent => r.missing(
            &at,
            why_missing,
            &format!("set {} = \"1\" or \"2\"", at.text),
        ),
        Tri::Known(v) => {
            let ok = match v {
                Value::String(s) => s == "1" || s == "2",
                Value::Number(_) => matches!(v.as_i64(), Some(1 | 2)),
                _ => false,
            };
            if !ok {
                r.error(
                    &rules::SCD_TYPE,
                    &at,
                    &format!("{} = {v} is not supported", at.text),
                    "sdp-meta accepts scd_type \"1\" or \"2\"",
                    &format!("set {} = \"1\" or \"2\"", at.text),
                );
            }
        }
        Tri::Unknown => {}
    }
}

pub(super) fn cdc_flow_list_rules(layer: Layer, f: &Object, at: &At, r: &mut Report) {
    let ln = layer.name();
    let Some(list) = blocks(f, "flow") else {
        return;
    };
    let list_unknown = matches!(f.get("flow"), Some(Value::List(l)) if l.iter().any(|x| matches!(x, Value::Unknown)));
    if list.is_empty() && !list_unknown {
        r.error(
            &rules::REQUIRED,
            &at.key("flow"),
            &format!("{} has no flow block", at.text),
            &format!(
                "sdp-meta rejects it: \"{}.flows must be a non-empty list\"",
                key(ln, "cdc_apply_changes_flows")
            ),
            "add one flow \"<name>\" { source_format = \"delta\" source_details = { … } } per source",
        );
    }
    let allowed: &[&str] = match layer {
        Layer::Bronze => &["cloudfiles", "delta", "kafka", "eventhub"],
        Layer::Silver => &["delta"],
    };
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, fl) in list {
        let label = text(fl, LABEL_ATTR);
        let fa = at.key("flow").item(i, label);
        match label {
            Tri::Absent => r.missing(
                &fa.key(LABEL_ATTR),
                &format!(
                    "sdp-meta rejects it: \"{}.flows[{i}].name is required\"",
                    key(ln, "cdc_apply_changes_flows")
                ),
                "give the flow block a name label",
            ),
            Tri::Known(n) if !seen.insert(n) => r.error(
                &rules::NAME,
                &fa,
                &format!("{} repeats the flow name {}", fa.text, quote(n)),
                "sdp-meta uses the name as the DLT view and flow name, so flow names must be unique",
                "rename one of the flow blocks",
            ),
            _ => {}
        }
        match text(fl, "source_format") {
            Tri::Absent => r.missing(
                &fa.key("source_format"),
                &format!("sdp-meta rejects it: \"… flows[{i}].source_format is required\""),
                &format!("set source_format to one of: {}", allowed.join(", ")),
            ),
            Tri::Known(sf) if !allowed.contains(&sf.to_ascii_lowercase().as_str()) => r.error(
                &rules::FORMAT,
                &fa.key("source_format"),
                &format!(
                    "{}.source_format = {} is not supported for {ln}",
                    fa.text,
                    quote(sf)
                ),
                &format!("sdp-meta allows {} here", allowed.join(", ")),
                &format!("use one of: {}", allowed.join(", ")),
            ),
            _ => {}
        }
        if any_configured(fl, &["source_details", "source_path"]) == Some(false) {
            r.missing(
                &fa.key("source_details"),
                &format!("sdp-meta rejects it: \"… flows[{i}].source_details is required\""),
                "set source_details (e.g. { source_database = \"…\", source_table = \"…\" }) or source_path",
            );
        }
    }
}

pub(super) const EXPECT_KEYS: [&str; 6] = [
    "expect",
    "expect_all",
    "expect_or_drop",
    "expect_all_or_drop",
    "expect_or_fail",
    "expect_all_or_fail",
];

pub(super) fn expectations_rules(layer: Layer, blk: &Object, at: &At, r: &mut Report) {
    let ln = layer.name();
    let exp = block(blk, "expectations");
    if exp.is_known() && configured(blk, "expectations_file") == Some(true) {
        r.error(
            &rules::EXCLUSIVE,
            &at.key("expectations_file"),
            &format!("{ln}.expectations and {ln}.expectations_file are both set"),
            "the onboarding names one expectations file per flow and layer: either the rendered one or yours",
            "keep the expectations block, or expectations_file",
        );
    }
    let Tri::Known(e) = exp else { return };
    let ea = at.key("expectations");
    let quarantine = configured(e, "expect_or_quarantine");
    let others = any_configured(e, &EXPECT_KEYS);
    let cdc = any_configured(
        blk,
        &[
            "cdc_apply_changes",
            "cdc_apply_changes_flows",
            "apply_changes_from_snapshot",
        ],
    );
    if others == Some(false) && cdc == Some(false) && quarantine.is_some() {
        let (what, at) = if quarantine == Some(true) {
            (
                format!("{ln}.expectations has only expect_or_quarantine"),
                ea.key("expect_or_quarantine"),
            )
        } else {
            (format!("{ln}.expectations has no rules"), ea.clone())
        };
        r.error(
            &rules::V5,
            &at,
            &what,
            &format!("without CDC sdp-meta declares the {ln} table only with expect, drop or fail rules, so the table is never created"),
            "add at least one expect / expect_or_drop / expect_or_fail rule (e.g. expect = { valid_row = \"true\" }), or remove the expectations block",
        );
    }
    if quarantine == Some(true) {
        let target = match block(blk, "quarantine") {
            Tri::Known(q) => match (text(q, "table"), text(q, "database")) {
                (Tri::Known(_), Tri::Known(_)) => Some(true),
                (Tri::Unknown, _) | (_, Tri::Unknown) => None,
                _ => Some(false),
            },
            Tri::Absent => Some(false),
            Tri::Unknown => None,
        };
        if target == Some(false) {
            r.warn(
                &rules::V6,
                &ea.key("expect_or_quarantine"),
                &format!("{ln}.expectations.expect_or_quarantine without {ln}.quarantine {{ table, database }}"),
                "sdp-meta skips the quarantine table silently (\"Quarantine table name is empty or None\"), so the bad rows go nowhere",
                &format!("add quarantine {{ database = \"…\" table = \"…\" }} to the {ln} block"),
            );
        }
    }
    for (one, all) in [
        ("expect", "expect_all"),
        ("expect_or_drop", "expect_all_or_drop"),
        ("expect_or_fail", "expect_all_or_fail"),
    ] {
        if configured(e, one) == Some(true) && configured(e, all) == Some(true) {
            r.warn(
                &rules::V7,
                &ea.key(all),
                &format!("{ln}.expectations sets both {one} and {all}"),
                &format!("sdp-meta treats them as aliases and uses {one}, so the {all} rules are silently ignored"),
                &format!("merge the rules into {one} (or into {all})"),
            );
        }
    }
}

pub(super) fn append_flow_rules(blk: &Object, at: &At, r: &mut Report) {
    let Some(list) = blocks(blk, "append_flow") else {
        return;
    };
    let mut seen: HashSet<String> = HashSet::new();
    let why =
        "sdp-meta onboarding fails with \"mandatory missing atrributes for <layer>_append_flow\"";
    for (i, af) in list {
        let label = text(af, LABEL_ATTR);
        let fa = at.key("append_flow").item(i, label);
        match label {
            Tri::Absent => r.missing(
                &fa.key(LABEL_ATTR),
                why,
                "give the append_flow block a name label",
            ),
            Tri::Known(n) if !seen.insert(n.to_ascii_lowercase()) => r.error(
                &rules::NAME,
                &fa,
                &format!("{} repeats the append flow name {}", fa.text, quote(n)),
                "the name is the DLT flow and view name, which must be unique",
                "rename one of the append_flow blocks",
            ),
            _ => {}
        }
        match text(af, "source_format") {
            Tri::Absent => r.missing(
                &fa.key("source_format"),
                why,
                &format!("set source_format to one of: {FORMATS}"),
            ),
            Tri::Known(sf) if Format::parse(sf).is_none() => r.error(
                &rules::FORMAT,
                &fa.key("source_format"),
                &format!("{}.source_format = {} is not supported", fa.text, quote(sf)),
                &format!("sdp-meta supports {FORMATS} (case-insensitive)"),
                &format!("use one of: {FORMATS}"),
            ),
            _ => {}
        }
        if any_configured(af, &["source_details", "source_path"]) == Some(false) {
            r.missing(
                &fa.key("source_details"),
                why,
                "set source_details (or source_path) for the flow's source",
            );
        }
    }
}

pub(super) fn sink_rules(blk: &Object, at: &At, r: &mut Report) {
    let Some(list) = blocks(blk, "sink") else {
        return;
    };
    let mut seen: HashSet<String> = HashSet::new();
    let why = "sdp-meta onboarding fails with \"Missing sink details keys\"";
    for (i, s) in list {
        let label = text(s, LABEL_ATTR);
        let sa = at.key("sink").item(i, label);
        match label {
            Tri::Absent => r.missing(&sa.key(LABEL_ATTR), why, "give the sink block a name label"),
            Tri::Known(n) if !seen.insert(n.to_ascii_lowercase()) => r.error(
                &rules::NAME,
                &sa,
                &format!("{} repeats the sink name {}", sa.text, quote(n)),
                "sdp-meta lower-cases sink names, so the two sinks collide",
                "rename one of the sink blocks",
            ),
            _ => {}
        }
        let format = match text(s, "format") {
            Tri::Absent => {
                r.missing(
                    &sa.key("format"),
                    why,
                    "set format = \"delta\", \"kafka\" or \"eventhub\"",
                );
                None
            }
            Tri::Known(f) => {
                let lower = f.to_ascii_lowercase();
                if !["delta", "kafka", "eventhub"].contains(&lower.as_str()) {
                    r.error(
                        &rules::FORMAT,
                        &sa.key("format"),
                        &format!("{}.format = {} is not supported", sa.text, quote(f)),
                        &format!(
                            "sdp-meta fails with \"Sink format {f} not supported in SDP-META!\""
                        ),
                        "use one of: delta, kafka, eventhub",
                    );
                }
                Some(lower)
            }
            Tri::Unknown => None,
        };
        match get(s, "options") {
            Tri::Absent => r.missing(
                &sa.key("options"),
                why,
                "set options, e.g. { tablename = \"catalog.schema.table\" } for a delta sink",
            ),
            Tri::Known(Value::Object(o)) if o.is_empty() => r.missing(
                &sa.key("options"),
                why,
                "set options, e.g. { tablename = \"catalog.schema.table\" } for a delta sink",
            ),
            Tri::Known(Value::Object(o))
                if format.as_deref() == Some("delta")
                    && !o.contains_key("path")
                    && !o.contains_key("tablename") =>
            {
                let near = o.keys().find(|k| {
                    k.eq_ignore_ascii_case("tablename") || k.eq_ignore_ascii_case("path")
                });
                let why = match near {
                    Some(k) => format!(
                        "sdp-meta looks for the lowercase keys only (found {}) and fails with \"Missing delta sink options: ['path', 'tablename']\"",
                        quote(k)
                    ),
                    None => {
                        "sdp-meta fails with \"Missing delta sink options: ['path', 'tablename']\""
                            .to_string()
                    }
                };
                r.error(
                        &rules::V25,
                        &sa.key("options"),
                        &format!("{}.options has neither path nor tablename", sa.text),
                        &why,
                        "add tablename = \"catalog.schema.table\" (lower-case key) or path = \"…\" to the sink options",
                    );
            }
            _ => {}
        }
    }
}

pub(super) const ROW_FILTER_TOKENS: [&str; 5] = [";", "--", "/*", "*/", "`"];
pub(super) const ROW_FILTER_KEYWORDS: [&str; 19] = [
    "UNION",
    "INTERSECT",
    "EXCEPT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "MERGE",
    "TRUNCATE",
    "COPY",
    "DROP",
    "CREATE",
    "ALTER",
    "RENAME",
    "REPLACE",
    "GRANT",
    "REVOKE",
    "EXEC",
    "EXECUTE",
    "CALL",
];
pub(super) const ROW_FILTER_MAX: usize = 2000;

/// What sdp-meta's SQL denylist finds in a row filter.
pub(super) fn row_filter_problem(s: &str) -> Option<String> {
    let n = s.chars().count();
    if n > ROW_FILTER_MAX {
        return Some(format!("is {n} characters long (at most {ROW_FILTER_MAX})"));
    }
    if let Some(t) = ROW_FILTER_TOKENS.iter().find(|t| s.contains(*t)) {
        return Some(format!("contains the disallowed token {}", quote(t)));
    }
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .find(|w| {
            ROW_FILTER_KEYWORDS
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k))
        })
        .map(|w| format!("contains the disallowed keyword {}", w.to_ascii_uppercase()))
}

pub(super) const CDF_COLUMNS: [&str; 3] = ["_change_type", "_commit_version", "_commit_timestamp"];

/// V19: change feed metadata columns leaking into an AUTO CDC target.
pub(super) fn change_feed_columns_rule(layer: Layer, blk: &Object, at: &At, r: &mut Report) {
    let Tri::Known(c) = block(blk, "cdc_apply_changes") else {
        return;
    };
    if reads_change_feed(blk) != Some(true) || configured(c, "column_list") != Some(false) {
        return;
    }
    let Some(except) = string_list(c, "except_column_list") else {
        return;
    };
    let missing: Vec<&str> = CDF_COLUMNS
        .iter()
        .copied()
        .filter(|col| !except.iter().any(|e| e.eq_ignore_ascii_case(col)))
        .collect();
    if missing.is_empty() {
        return;
    }
    let ln = layer.name();
    r.warn(
        &rules::V19,
        &at.key("cdc_apply_changes").key("except_column_list"),
        &format!(
            "{ln} reads the change feed but {ln}.cdc_apply_changes.except_column_list lacks {}",
            missing.join(", ")
        ),
        "the change feed's metadata columns are written into the target table",
        "set except_column_list = [\"_change_type\", \"_commit_version\", \"_commit_timestamp\"]",
    );
}
