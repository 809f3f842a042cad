//! Static checks of sdp-meta flows and onboardings: the sdp-meta rules (V1–V26,
//! docs/architecture.md, sdp-meta rules) that can be decided from the configuration, and the
//! onboarding pre-flight of released sdp-meta 0.1.0 (docs/architecture.md, sdp-meta onboarding
//! facts), so a mistake shows at `validate` / `plan` instead of in the onboarding job or at
//! pipeline start.
//!
//! [`check_flow`] runs on one `sdp_meta_flow` configuration and reports everything that depends
//! on that flow alone. [`check_onboarding`] runs on an `sdp_meta_onboarding` configuration and
//! reports only what needs the whole file set, the runner or the sdp-meta build (each flow is
//! also an `sdp_meta_flow` resource, so its own findings are not reported a second time).
//! A rule whose inputs are unknown (known after apply) says nothing.
//!
//! Rules (id, level, where):
//!
//! | Rule | Level | Checked by | Path |
//! |---|---|---|---|
//! | V1 identifiers: layer / quarantine database segments, catalog, table; column lists (`keys`, `*_column_list`, `partition_columns`, `cluster_by`, quarantine `partitions` / `cluster_by`), `sequence_by`; onboarding `database`, spec tables, `volume_path` segments | error | both | the field |
//! | V2 layer / quarantine / onboarding `database` with more than two dotted parts | error | both | the field |
//! | V5 `expectations` with only `expect_or_quarantine` (or no rule at all) on a layer without CDC | error | flow | `<layer>.expectations(.expect_or_quarantine)` |
//! | V6 `expect_or_quarantine` without `quarantine { table, database }` | warning | flow | `<layer>.expectations.expect_or_quarantine` |
//! | V7 both of `expect`/`expect_all`, `expect_or_drop`/`expect_all_or_drop`, `expect_or_fail`/`expect_all_or_fail` | warning | flow | `<layer>.expectations.expect_all*` |
//! | V8 `source.format = "snapshot"` without `bronze.apply_changes_from_snapshot` | error | flow | `bronze` |
//! | V9 bronze snapshot flow and the runner passes no `bronze_next_snapshot_and_version` (pre-fix builds: every snapshot flow, #266; any build: file snapshots) | error | onboarding | `flows[i]` |
//! | V10 `snapshot_format = "delta"` without a source table | error | flow | `source` |
//! | V11 the runner passes a snapshot function and a group has non-snapshot flows of that layer (pre-fix builds, #268b) | error | onboarding | `flows[i]` (first such flow of the group) |
//! | V12 the runner passes a snapshot function and a flow has `snapshot_format = "delta"` (pre-fix builds, #268a) | warning | onboarding | `flows[i]` |
//! | V13 expectations and `cdc_apply_changes` on the same layer (#265; the message depends on the build) | warning | onboarding | `flows[i]` |
//! | V14 `cdc_apply_changes` and `cdc_apply_changes_flows` both set | error | flow | `<layer>.cdc_apply_changes_flows` |
//! | V16 a Lakeflow Connect SCD_TYPE_2 source (or one with `__START_AT`/`__END_AT`) with `cdc_apply_changes`; snapshot keys naming the reserved columns (error) or `lfc_start_at` (warning) | error / warning | flow | `bronze.cdc_apply_changes`, `bronze.apply_changes_from_snapshot.keys` |
//! | V17 a Lakeflow Connect SCD_TYPE_1/2 source read as a plain stream (no `readChangeFeed`), or SCD_TYPE_1 without `cdc_apply_changes` | error | flow | `bronze.reader_options` / `bronze` |
//! | V18 silver reading a bronze AUTO CDC target without `silver.reader_options.readChangeFeed = "true"` (error), or with it but without silver CDC (warning); same flow in `check_flow`, silver-only flows reading another flow's bronze in `check_onboarding` | error / warning | both | `silver.reader_options` / `silver`, or `flows[i]` |
//! | V19 `readChangeFeed` + `cdc_apply_changes` without `except_column_list` covering `_change_type`, `_commit_version`, `_commit_timestamp` | warning | flow | `<layer>.cdc_apply_changes.except_column_list` |
//! | V21 `overwrite` not exactly `"True"` | warning | onboarding | `overwrite` |
//! | V23 two flows of one group write bronze tables of the same name (different schemas) | warning | onboarding | `flows[i]` |
//! | V24 duplicate `data_flow_id` (error); silver tables of the same name in different schemas (warning) | error / warning | onboarding | `flows[i]` |
//! | V25 delta sink options without `path` or lowercase `tablename` | error | flow | `<layer>.sink[i].options` |
//! | V26 `dependency` = `__SET_ME__` or the nonexistent PyPI project `sdp-meta` | error | onboarding | `dependency` |
//! | `required` mandatory fields: `data_flow_id`, `data_flow_group`, layer `database` / `table`, CDC `keys` / `sequence_by` / `scd_type`, snapshot `keys` / `scd_type`, CDC flows (non-empty, `name`, `source_format`, `source_details`), append flows (`name`, `source_format`, `source_details`; `create_streaming_table` is rendered `false` when unset), sinks (`name`, `format`, `options`) | error | flow | the field |
//! | `format` `source.format`, append-flow `source_format`, sink `format`, CDC-flow `source_format` (bronze: cloudFiles/delta/kafka/eventhub; silver: delta) | error | flow | the field |
//! | `scd_type` not `"1"` or `"2"` | error | flow | the field |
//! | `name` two append flows / sinks / CDC flows with the same name (sinks are lower-cased by sdp-meta) | error | flow | the block |
//! | `source` what each format needs (cloudFiles: `source_path` + `cloudFiles.format`; delta: a table; kafka: `subscribe` + servers, SSL secrets; eventhub: namespace, name, port, access key, scope; snapshot: `snapshot_format`, lower-case `"delta"`), fields the format ignores, the table given more than one way, `apply_changes_from_snapshot` on a non-snapshot source; file snapshots without `source_path` (warning) | error / warning | flow | the field |
//! | `layer` a flow without any layer, a source without a bronze block, a bronze block used by nothing, a silver-only flow without `bronze { database, table }`; bronze write settings on a silver-only flow (warning) | error / warning | flow | the block |
//! | `exclusive` `cdc_apply_changes(_flows)` with `apply_changes_from_snapshot`; `expectations` with `expectations_file`; silver `select_exp` / `where_clause` with `transformation_file`; `cluster_by` with `table_properties."pipelines.autoOptimize.zOrderCols"` | error | flow | the later field |
//! | `row_filter` `row_filter` / `quarantine_row_filter` containing `;`, `--`, `/*`, `*/`, a backtick or a DDL/DML keyword, or longer than 2000 characters | error | flow | the field |
//! | `flows` an onboarding without flows | error | onboarding | `flows` |
//! | `uc_path` `uc_enabled = false` with a bronze layer without `path`, or a snapshot source without `source_path` | error | onboarding | `flows[i]` |
//! | `version` an `sdp_meta_version` brickform does not know (pre-fix behaviour assumed); a `dependency` pinning another version | warning | onboarding | `sdp_meta_version` / `dependency` |
//! | `volume` `volume_path` not of the form `/Volumes/<catalog>/<schema>/<volume>` | error | onboarding | `volume_path` |
//! | `file_name` extension other than `.json`, `.yml`, `.yaml` | error | onboarding | `file_name` |
//! | `target` two flows writing the same bronze (or silver) table | error | onboarding | `flows[i]` |
//!
//! Builds (`sdp_meta_version`, "0.1.0" when unset): "0.1.0" and "0.1.1" (= upstream main) carry
//! the pre-fix code for #266 / #268 and the 0.1.0 behaviour of #265; a version containing
//! "+pr267" (a wheel built from the PR #267 branch) carries the fixes.
//!
//! Impossible by construction (the renderer guarantees them, so there is no check):
//! - V3: every env-suffixed key is rendered with the onboarding's own `env`, which is also the
//!   job's `env` parameter.
//! - V4: the renderer emits `bronze_quarantine_table` (null when unset) whenever a bronze
//!   expectations file exists.
//! - V15: `source_catalog` is folded into the rendered `source_database`, so the reader never
//!   depends on the ignored `source_catalog_{env}`.
//! - V20: `partition_columns` / `quarantine.partitions` are rendered as comma-separated strings,
//!   `cluster_by` as lists.
//! - V25 (second half): `pipeline_configuration` sets `pipelines.externalSink.enabled` for every
//!   group with sinks.
//!
//! Not decidable from the configuration:
//! - V5 / V6 / V7 / V13 for an `expectations_file` (its content is not read at plan time).
//! - V21 whether the dataflowspec table already exists (so a warning, not an error).
//! - V22 two onboardings sharing a spec table: needs every onboarding of the configuration.
//! - V23 legacy publishing mode: depends on the pipeline resource (`target` vs `schema`).
//! - The content of a `transformation_file` and whether source tables exist.

mod flow;
mod layer;
mod names;
mod onboarding;
mod report;
mod source;
mod values;

use flow::*;
use layer::*;
use names::*;
use onboarding::*;
use report::*;
use source::*;
use values::*;

use brickform_core::provider::{Finding, FindingLevel};
use brickform_core::value::{Object, PathStep, Value, quote};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The key attribute of the keyed blocks `append_flow`, `sink` and `flow` (schema.rs declares
/// them `BlockType::keyed(…, "name", …)`); messages spell an item as `bronze.sink "orders_out"`.
pub const LABEL_ATTR: &str = "name";

/// Checks one `sdp_meta_flow` configuration: everything that depends on the flow alone.
pub fn check_flow(flow: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    let view = FlowView::new(flow);
    let mut r = Report {
        flow: Some(&view.label),
        base: None,
        out: &mut out,
    };
    flow_rules(&view, &mut r);
    out
}

/// Checks one `sdp_meta_onboarding` configuration: the file set as a whole, the rules across
/// flows, and the rules that depend on the runner or on the sdp-meta build. Findings about a
/// flow carry the path `flows[i]` and name the flow and its field in the message.
pub fn check_onboarding(onboarding: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    attribute_rules(onboarding, &mut out);
    let build = Build::of(onboarding, &mut out);
    let runner = Runner::of(onboarding);
    let uc_enabled = match get(onboarding, "uc_enabled") {
        Tri::Absent => Tri::Known(true),
        Tri::Known(v) => match v {
            Value::Bool(b) => Tri::Known(*b),
            Value::String(s) => Tri::Known(s.trim().eq_ignore_ascii_case("true")),
            _ => Tri::Unknown,
        },
        Tri::Unknown => Tri::Unknown,
    };
    let flows: &[Value] = match onboarding.get("flows") {
        Some(Value::List(l)) => l,
        None | Some(Value::Null) => &[],
        Some(_) => return out,
    };
    if flows.is_empty() {
        let mut r = Report {
            flow: None,
            base: None,
            out: &mut out,
        };
        r.error(
            "flows",
            &At::root().key("flows"),
            "flows is empty",
            "the onboarding file would hold no flow: the onboarding job fails on it and the pipelines have nothing to run",
            "list at least one sdp_meta_flow in flows",
        );
        return out;
    }
    let ctx = OnboardingCtx {
        build,
        runner,
        uc_enabled,
    };
    cross_flow_rules(flows, &ctx, &mut out);
    out
}

#[cfg(test)]
mod tests;
