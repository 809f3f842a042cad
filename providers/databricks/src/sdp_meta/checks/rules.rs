//! The sdp-meta rules as data: brickform's list of the ways an sdp-meta onboarding goes wrong
//! (V1–V26) and the checks named by what they check. Findings carry a rule of this table
//! ([`super::report::Report`] takes one, so an id cannot be spelled differently in a check);
//! the rule tables of docs/sdp-meta-flows.md (what `validate` reports) and of the list of
//! every V-rule and why it matters (docs/architecture.md, sdp-meta rules) are generated from
//! it, and a test fails when either is out of date.
//!
//! The comment on each rule says which check reports it and where the finding points.

use brickform_core::provider::FindingLevel;

/// How a rule is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    /// Some cases are errors, others warnings.
    ErrorOrWarning,
    /// The renderer makes the mistake impossible: nothing to check.
    Rendered,
    /// Not decidable from one configuration.
    NotChecked,
}

impl Level {
    /// Whether a finding of `level` fits.
    pub fn allows(self, level: FindingLevel) -> bool {
        matches!(
            (self, level),
            (Level::Error | Level::ErrorOrWarning, FindingLevel::Error)
                | (
                    Level::Warning | Level::ErrorOrWarning,
                    FindingLevel::Warning
                )
        )
    }

    fn word(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::ErrorOrWarning => "error / warning",
            Level::Rendered => "rendered",
            Level::NotChecked => "not checked",
        }
    }
}

/// One rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// What findings carry: `V8`, or what a check without a V-number checks (`required`).
    pub id: &'static str,
    pub level: Level,
    /// The mistake.
    pub what: &'static str,
    /// What happens when it is made (V-rules).
    pub why: &'static str,
}

const fn rule(id: &'static str, level: Level, what: &'static str, why: &'static str) -> Rule {
    Rule {
        id,
        level,
        what,
        why,
    }
}

use Level::{Error, ErrorOrWarning, NotChecked, Rendered, Warning};

/// Flow and onboarding: layer / quarantine database segments, catalog, table; column lists
/// (`keys`, `*_column_list`, `partition_columns`, `cluster_by`, quarantine `partitions` /
/// `cluster_by`), `sequence_by`; onboarding `database`, spec tables, `volume_path` segments.
/// Points at the field.
pub const V1: Rule = rule(
    "V1",
    Error,
    "an identifier (catalog, schema segments, tables, column lists, dataflowspec tables, volume) not matching `^[A-Za-z_][A-Za-z0-9_]*$`",
    "onboarding's pre-flight rejects it",
);
/// Flow and onboarding: layer / quarantine / onboarding `database`. Points at the field.
pub const V2: Rule = rule(
    "V2",
    Error,
    "a layer database of more than two dotted parts",
    "onboarding's pre-flight rejects it",
);
/// Every env-suffixed key is rendered with the onboarding's own `env`, which is also the
/// job's `env` parameter.
pub const V3: Rule = rule(
    "V3",
    Rendered,
    "the env suffix of the keys differs from the job's `env` parameter",
    "rows skipped, or \"required key missing\"",
);
/// The renderer emits `bronze_quarantine_table` (null when unset) whenever a bronze
/// expectations file exists.
pub const V4: Rule = rule(
    "V4",
    Rendered,
    "bronze expectations while no row has the key `bronze_quarantine_table`",
    "`PySparkValueError` in 0.1.0",
);
/// Flow: `expectations` with only `expect_or_quarantine` (or no rule at all) on a layer
/// without CDC; points at `<layer>.expectations(.expect_or_quarantine)`. Not decidable for an
/// `expectations_file`, whose content is not read at plan time (nor V6, V7, V13).
pub const V5: Rule = rule(
    "V5",
    Error,
    "expectations with only `expect_or_quarantine` on a layer without CDC",
    "the main table is never declared",
);
/// Flow; points at `<layer>.expectations.expect_or_quarantine`.
pub const V6: Rule = rule(
    "V6",
    Warning,
    "`expect_or_quarantine` without `quarantine { table, database }`",
    "quarantine silently skipped",
);
/// Flow: `expect`/`expect_all`, `expect_or_drop`/`expect_all_or_drop`,
/// `expect_or_fail`/`expect_all_or_fail`; points at `<layer>.expectations.expect_all*`.
pub const V7: Rule = rule(
    "V7",
    Warning,
    "both `expect` and `expect_all` (or the drop / fail pairs)",
    "one silently overrides the other",
);
/// Flow: `source.format = "snapshot"` without `bronze.apply_changes_from_snapshot`; points at
/// `bronze`.
pub const V8: Rule = rule(
    "V8",
    Error,
    "a snapshot source without `<layer>_apply_changes_from_snapshot`",
    "fails at pipeline run",
);
/// Onboarding: the runner passes no `bronze_next_snapshot_and_version` (pre-fix builds: every
/// snapshot flow; any build: file snapshots); points at `flows[i]`.
pub const V9: Rule = rule(
    "V9",
    Error,
    "a bronze snapshot flow whose runner passes no snapshot function, on builds without the fix of sdp-meta issue #266 (any build for file snapshots)",
    "`Snapshot reader function not provided!`",
);
/// Flow; points at `source`.
pub const V10: Rule = rule(
    "V10",
    Error,
    "`snapshot_format = \"delta\"` without source database and table",
    "the view reader needs them",
);
/// Onboarding (pre-fix builds, #268b); points at the first such flow of the group.
pub const V11: Rule = rule(
    "V11",
    Error,
    "the runner passes a snapshot function and the group mixes snapshot and other flows (builds without the fix of #268)",
    "missing input views",
);
/// Onboarding (pre-fix builds, #268a); points at `flows[i]`.
pub const V12: Rule = rule(
    "V12",
    Warning,
    "the runner passes a snapshot function and the flow has `snapshot_format = \"delta\"` (builds without the fix of #268)",
    "the function is ignored",
);
/// Onboarding: the message depends on the build; points at `flows[i]`.
pub const V13: Rule = rule(
    "V13",
    Warning,
    "expectations together with `<layer>_cdc_apply_changes` (fixed builds add a `<table>_dq` table)",
    "semantics differ by build (#265); drop / fail rules see raw change events",
);
/// Flow; points at `<layer>.cdc_apply_changes_flows`.
pub const V14: Rule = rule(
    "V14",
    Error,
    "`<layer>_cdc_apply_changes` and `<layer>_cdc_apply_changes_flows` together",
    "mutually exclusive",
);
/// `source_catalog` is folded into the rendered `source_database`, so the reader never depends
/// on the ignored `source_catalog_{env}`.
pub const V15: Rule = rule(
    "V15",
    Rendered,
    "a delta or snapshot source relying on `source_catalog_{env}`",
    "the readers ignore it",
);
/// Flow: a Lakeflow Connect SCD_TYPE_2 source (or one with `__START_AT`/`__END_AT`) with
/// `cdc_apply_changes`; snapshot keys naming the reserved columns (error) or `lfc_start_at`
/// (warning). Points at `bronze.cdc_apply_changes`, `bronze.apply_changes_from_snapshot.keys`.
/// Looks across resources: `source.ingestion_table` names the ingestion pipeline's table.
pub const V16: Rule = rule(
    "V16",
    ErrorOrWarning,
    "a Lakeflow Connect SCD type 2 table (reserved `__START_AT` / `__END_AT`) used with `cdc_apply_changes`; snapshot keys on `lfc_start_at` warn (duplicate keys)",
    "reserved columns",
);
/// Flow: a Lakeflow Connect SCD_TYPE_1/2 source read without `readChangeFeed`, or SCD_TYPE_1
/// without `cdc_apply_changes`; points at `bronze.reader_options` / `bronze`.
pub const V17: Rule = rule(
    "V17",
    Error,
    "a Lakeflow Connect SCD type 1 table read as a plain stream (no `readChangeFeed`, no CDC)",
    "its MERGE commits break the streaming read",
);
/// Without `silver.reader_options.readChangeFeed = "true"` an error, with it but without
/// silver CDC a warning. The same flow in `check_flow` (points at `silver.reader_options` /
/// `silver`), silver-only flows reading another flow's bronze in `check_onboarding`
/// (`flows[i]`).
pub const V18: Rule = rule(
    "V18",
    ErrorOrWarning,
    "silver reading a bronze AUTO CDC target without `readChangeFeed`",
    "fails on the second run",
);
/// Flow: `readChangeFeed` + `cdc_apply_changes`; points at
/// `<layer>.cdc_apply_changes.except_column_list`.
pub const V19: Rule = rule(
    "V19",
    Warning,
    "`readChangeFeed` with AUTO CDC whose `except_column_list` misses `_change_type`, `_commit_version`, `_commit_timestamp`",
    "change-feed columns leak into the target",
);
/// `partition_columns` / `quarantine.partitions` are rendered as comma-separated strings,
/// `cluster_by` as lists.
pub const V20: Rule = rule(
    "V20",
    Rendered,
    "partition columns given as a list, `cluster_by` as a comma string",
    "mis-parsed",
);
/// Onboarding; points at `overwrite`. A warning: whether the dataflowspec table exists is not
/// known.
pub const V21: Rule = rule(
    "V21",
    Warning,
    "`overwrite` not exactly `\"True\"`",
    "the merge path needs an existing dataflowspec table",
);
/// Needs every onboarding of the configuration.
pub const V22: Rule = rule(
    "V22",
    NotChecked,
    "two onboardings overwriting one dataflowspec table",
    "one replaces the other's rows",
);
/// Onboarding: two flows of one group write bronze tables of the same name (different
/// schemas); points at `flows[i]`. The legacy publishing mode depends on the pipeline
/// resource (`target` vs `schema`) and is not checked.
pub const V23: Rule = rule(
    "V23",
    Warning,
    "the same bronze table twice in a group; a legacy-mode pipeline with flows in other schemas (not checked)",
    "colliding input views, unqualified names",
);
/// Onboarding: duplicate `data_flow_id` (error); silver tables of the same name in different
/// schemas (warning). Points at `flows[i]`.
pub const V24: Rule = rule(
    "V24",
    ErrorOrWarning,
    "duplicate `data_flow_id` in a file; the same silver table in two schemas of one transformations file",
    "onboarding aborts / ambiguous join",
);
/// Flow: delta sink options; points at `<layer>.sink[i].options`. `pipeline_configuration`
/// sets `pipelines.externalSink.enabled` for every group with sinks.
pub const V25: Rule = rule(
    "V25",
    Error,
    "a delta sink without `path` or lower-case `tablename` (sinks without `pipelines.externalSink.enabled` are rendered impossible)",
    "onboarding fails",
);
/// Onboarding; points at `dependency`.
pub const V26: Rule = rule(
    "V26",
    Error,
    "the runner's dependency left as `__SET_ME__`, or naming the PyPI project `sdp-meta`, which does not exist",
    "the install fails",
);

/// Flow: `data_flow_id`, `data_flow_group`, layer `database` / `table`, CDC `keys` /
/// `sequence_by` / `scd_type`, snapshot `keys` / `scd_type`, CDC flows (non-empty, `name`,
/// `source_format`, `source_details`), append flows (`name`, `source_format`,
/// `source_details`; `create_streaming_table` is rendered `false` when unset), sinks (`name`,
/// `format`, `options`). Points at the field.
pub const REQUIRED: Rule = rule(
    "required",
    Error,
    "mandatory fields of flows, layers, CDC, snapshot, append-flow and sink blocks",
    "",
);
/// Flow: `source.format`, append-flow `source_format`, sink `format`, CDC-flow `source_format`
/// (bronze: cloudFiles/delta/kafka/eventhub; silver: delta). Points at the field.
pub const FORMAT: Rule = rule(
    "format",
    Error,
    "source, append-flow, CDC-flow and sink formats sdp-meta does not read",
    "",
);
/// Flow; points at the field.
pub const SCD_TYPE: Rule = rule(
    "scd_type",
    Error,
    "an `scd_type` other than `\"1\"` or `\"2\"`",
    "",
);
/// Flow: sinks are lower-cased by sdp-meta; points at the block.
pub const NAME: Rule = rule(
    "name",
    Error,
    "two append flows, sinks or CDC flows of a layer with the same name",
    "",
);
/// Flow: cloudFiles `source_path` + `cloudFiles.format`; delta a table; kafka `subscribe` +
/// servers, SSL secrets; eventhub namespace, name, port, access key, scope; snapshot
/// `snapshot_format`, lower-case `"delta"`. Fields the format ignores, the table given more
/// than one way, `apply_changes_from_snapshot` on a non-snapshot source; file snapshots
/// without `source_path` (warning). Points at the field.
pub const SOURCE: Rule = rule(
    "source",
    ErrorOrWarning,
    "what each source format needs (kafka topic and brokers, eventhub settings, cloudFiles path and `cloudFiles.format`, a delta table given one way); fields the format ignores",
    "",
);
/// Flow: a bronze block used by nothing, a silver-only flow without `bronze { database,
/// table }`; bronze write settings on a silver-only flow (warning). Points at the block.
pub const LAYER: Rule = rule(
    "layer",
    ErrorOrWarning,
    "a flow without a layer, a source without a bronze layer, a bronze layer without a source",
    "",
);
/// Flow: `cdc_apply_changes(_flows)` with `apply_changes_from_snapshot`; `expectations` with
/// `expectations_file`; silver `select_exp` / `where_clause` with `transformation_file`;
/// `cluster_by` with `table_properties."pipelines.autoOptimize.zOrderCols"`. Points at the
/// later field.
pub const EXCLUSIVE: Rule = rule("exclusive", Error, "settings that exclude each other", "");
/// Flow: `row_filter` / `quarantine_row_filter`. Points at the field.
pub const ROW_FILTER: Rule = rule(
    "row_filter",
    Error,
    "a row filter caught by sdp-meta's denylist (`;`, `--`, `/*`, `*/`, a backtick, DDL/DML keywords) or over 2,000 characters",
    "",
);
/// Onboarding; points at `flows`.
pub const FLOWS: Rule = rule("flows", Error, "an onboarding without flows", "");
/// Onboarding; points at `flows[i]`.
pub const UC_PATH: Rule = rule(
    "uc_path",
    Error,
    "`uc_enabled = false` with a bronze layer without `path`, or a snapshot source without `source_path`",
    "",
);
/// Onboarding; points at `sdp_meta_version` / `dependency`.
pub const VERSION: Rule = rule(
    "version",
    Warning,
    "an `sdp_meta_version` brickform does not know (checked as a build without the fixes); a `dependency` pinning another version",
    "",
);
/// Onboarding; points at `volume_path`.
pub const VOLUME: Rule = rule(
    "volume",
    Error,
    "a `volume_path` not of the form `/Volumes/<catalog>/<schema>/<volume>`",
    "",
);
/// Onboarding; points at `file_name`.
pub const FILE_NAME: Rule = rule(
    "file_name",
    Error,
    "a `file_name` not ending in `.json`, `.yml` or `.yaml`",
    "",
);
/// Onboarding; points at `flows[i]`.
pub const TARGET: Rule = rule(
    "target",
    Error,
    "two flows writing the same bronze (or silver) table",
    "",
);

/// Every rule, in the order the docs list them.
pub const RULES: &[Rule] = &[
    V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13, V14, V15, V16, V17, V18, V19, V20, V21,
    V22, V23, V24, V25, V26, REQUIRED, FORMAT, SCD_TYPE, NAME, SOURCE, LAYER, EXCLUSIVE,
    ROW_FILTER, FLOWS, UC_PATH, VERSION, VOLUME, FILE_NAME, TARGET,
];

impl Rule {
    fn numbered(&self) -> bool {
        self.id.starts_with('V')
    }
}

/// What `validate` reports: the table of docs/sdp-meta-flows.md.
pub fn checks_markdown() -> String {
    let mut out = String::from("| Rule | Level | What |\n|---|---|---|\n");
    for r in RULES
        .iter()
        .filter(|r| !matches!(r.level, Rendered | NotChecked))
    {
        out.push_str(&format!("| {} | {} | {} |\n", r.id, r.level.word(), r.what));
    }
    out
}

/// Every V-rule and why it matters (docs/architecture.md, sdp-meta rules).
pub fn rules_markdown() -> String {
    let mut out =
        String::from("| Rule | Level | Condition | Why it matters |\n|---|---|---|---|\n");
    for r in RULES.iter().filter(|r| r.numbered()) {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            r.id,
            r.level.word(),
            r.what,
            r.why
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_v_rules_complete() {
        let ids: HashSet<&str> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len(), "ids are unique");
        let v: Vec<&str> = RULES
            .iter()
            .filter(|r| r.numbered())
            .map(|r| r.id)
            .collect();
        let want: Vec<String> = (1..=26).map(|n| format!("V{n}")).collect();
        assert_eq!(v, want, "V1–V26, in order");
        for r in RULES.iter().filter(|r| r.numbered()) {
            assert!(!r.why.is_empty(), "{} says why it matters", r.id);
        }
    }

    use crate::sdp_meta::schema::testing::check_doc_section as check_section;

    #[test]
    fn the_docs_rule_tables_are_current() {
        check_section("sdp-meta-flows.md", "sdp-meta checks", &checks_markdown());
        check_section("architecture.md", "sdp-meta rules", &rules_markdown());
    }

    #[test]
    fn the_tables_show_what_they_should() {
        let checks = checks_markdown();
        assert!(checks.contains("| V8 | error | a snapshot source without"));
        assert!(checks.contains("| required | error |"));
        assert!(!checks.contains("| V3 |"), "rendered rules are not checks");
        let rules = rules_markdown();
        assert!(rules.contains("| V3 | rendered |"));
        assert!(rules.contains("| V22 | not checked |"));
        assert!(!rules.contains("| required |"));
    }

    #[test]
    fn levels_allow_findings() {
        assert!(ErrorOrWarning.allows(FindingLevel::Warning));
        assert!(!Warning.allows(FindingLevel::Error));
        assert!(!Rendered.allows(FindingLevel::Error));
    }
}
