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

// ---------------------------------------------------------------------------------------------
// Values: every lookup is three-valued, so an unknown input never fires a rule.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri<T> {
    /// Known only after apply.
    Unknown,
    /// Not set (null, missing, or an empty string).
    Absent,
    Known(T),
}

impl<T: Copy> Tri<T> {
    fn known(self) -> Option<T> {
        match self {
            Tri::Known(v) => Some(v),
            _ => None,
        }
    }
    fn is_absent(self) -> bool {
        matches!(self, Tri::Absent)
    }
    fn is_known(self) -> bool {
        matches!(self, Tri::Known(_))
    }
}

fn get<'a>(o: &'a Object, k: &str) -> Tri<&'a Value> {
    match o.get(k) {
        None | Some(Value::Null) => Tri::Absent,
        Some(Value::Unknown) => Tri::Unknown,
        Some(v) => Tri::Known(v),
    }
}

/// A string attribute; a blank string counts as absent, a value of another type as unknown
/// (the decoder has already reported type errors).
fn text<'a>(o: &'a Object, k: &str) -> Tri<&'a str> {
    match get(o, k) {
        Tri::Known(Value::String(s)) if s.trim().is_empty() => Tri::Absent,
        Tri::Known(Value::String(s)) => Tri::Known(s),
        Tri::Known(_) | Tri::Unknown => Tri::Unknown,
        Tri::Absent => Tri::Absent,
    }
}

/// A single nested block.
fn block<'a>(o: &'a Object, k: &str) -> Tri<&'a Object> {
    match get(o, k) {
        Tri::Known(Value::Object(b)) => Tri::Known(b),
        Tri::Known(Value::List(l)) if l.is_empty() => Tri::Absent,
        Tri::Known(Value::List(l)) if l.len() == 1 => match l.first() {
            Some(Value::Object(b)) => Tri::Known(b),
            _ => Tri::Unknown,
        },
        Tri::Absent => Tri::Absent,
        Tri::Known(_) | Tri::Unknown => Tri::Unknown,
    }
}

/// Repeated (labelled) blocks as (index, block); `None` when the list is unknown. Unknown
/// elements are skipped.
fn blocks<'a>(o: &'a Object, k: &str) -> Option<Vec<(usize, &'a Object)>> {
    match o.get(k) {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::List(l)) => Some(
            l.iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_object().map(|b| (i, b)))
                .collect(),
        ),
        Some(_) => None,
    }
}

/// Whether an attribute or block is set to something non-empty; `None` when unknown.
fn configured(o: &Object, k: &str) -> Option<bool> {
    match o.get(k) {
        None | Some(Value::Null) => Some(false),
        Some(Value::Unknown) => None,
        Some(v) => Some(non_empty(v)),
    }
}

fn non_empty(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Bool(_) | Value::Number(_) | Value::Unknown => true,
    }
}

/// `Some(true)` when any is set, `Some(false)` when all are known and unset, else `None`.
fn any_configured(o: &Object, keys: &[&str]) -> Option<bool> {
    let mut unknown = false;
    for k in keys {
        match configured(o, k) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    if unknown { None } else { Some(false) }
}

/// A key of a map attribute, compared case-insensitively (Spark reader options are).
fn option_ci<'a>(o: &'a Object, map: &str, key: &str) -> Tri<&'a Value> {
    match get(o, map) {
        Tri::Known(Value::Object(m)) => match m.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
            None | Some((_, Value::Null)) => Tri::Absent,
            Some((_, Value::Unknown)) => Tri::Unknown,
            Some((_, v)) => Tri::Known(v),
        },
        Tri::Absent => Tri::Absent,
        Tri::Known(_) | Tri::Unknown => Tri::Unknown,
    }
}

/// A key of a map attribute, compared exactly (sdp-meta looks source details up by name).
fn option<'a>(o: &'a Object, map: &str, key: &str) -> Tri<&'a Value> {
    match get(o, map) {
        Tri::Known(Value::Object(m)) => match m.get(key) {
            None | Some(Value::Null) => Tri::Absent,
            Some(Value::Unknown) => Tri::Unknown,
            Some(v) => Tri::Known(v),
        },
        Tri::Absent => Tri::Absent,
        Tri::Known(_) | Tri::Unknown => Tri::Unknown,
    }
}

fn is_true(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => s.trim().eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// `readChangeFeed = "true"` in a layer's reader_options; `None` when unknown.
fn reads_change_feed(layer: &Object) -> Option<bool> {
    match option_ci(layer, "reader_options", "readChangeFeed") {
        Tri::Known(v) => Some(is_true(v)),
        Tri::Absent => Some(false),
        Tri::Unknown => None,
    }
}

/// The strings of a list attribute (a string is split on commas); `None` when unknown.
fn string_list<'a>(o: &'a Object, k: &str) -> Option<Vec<&'a str>> {
    match o.get(k) {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::String(s)) => Some(s.split(',').map(str::trim).collect()),
        Some(Value::List(l)) => l.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Where a finding points, and how it is worded.

/// A field within the flow (or onboarding) body: its path and its HCL spelling.
#[derive(Debug, Clone)]
struct At {
    steps: Vec<PathStep>,
    text: String,
}

impl At {
    fn root() -> At {
        At {
            steps: Vec::new(),
            text: String::new(),
        }
    }
    fn key(&self, k: &str) -> At {
        let mut steps = self.steps.clone();
        steps.push(PathStep::Key(k.to_string()));
        let text = if self.text.is_empty() {
            k.to_string()
        } else {
            format!("{}.{k}", self.text)
        };
        At { steps, text }
    }
    /// An element of a repeated block, spelled with its label when known.
    fn item(&self, i: usize, label: Tri<&str>) -> At {
        let mut steps = self.steps.clone();
        steps.push(PathStep::Index(i));
        let text = match label {
            Tri::Known(l) => format!("{} {}", self.text, quote(l)),
            _ => format!("{}[{i}]", self.text),
        };
        At { steps, text }
    }
}

struct Report<'a> {
    /// `flow "2"`; `None` for findings about the onboarding itself.
    flow: Option<&'a str>,
    /// Inside an onboarding: `flows[i]`, which every finding about the flow points at.
    base: Option<&'a [PathStep]>,
    out: &'a mut Vec<Finding>,
}

impl Report<'_> {
    fn push(
        &mut self,
        level: FindingLevel,
        rule: &str,
        at: &At,
        what: &str,
        why: &str,
        hint: &str,
    ) {
        // The rule id is shown after the message by whoever reports the finding.
        let message = match self.flow {
            Some(flow) => format!("{flow}: {what}: {why}"),
            None => format!("{what}: {why}"),
        };
        let path = match self.base {
            Some(b) => b.to_vec(),
            None => at.steps.clone(),
        };
        let finding = match level {
            FindingLevel::Error => Finding::error(&[], message),
            FindingLevel::Warning => Finding::warning(&[], message),
        };
        self.out.push(finding.at(path).rule(rule).hint(hint));
    }
    fn error(&mut self, rule: &str, at: &At, what: &str, why: &str, hint: &str) {
        self.push(FindingLevel::Error, rule, at, what, why, hint);
    }
    fn warn(&mut self, rule: &str, at: &At, what: &str, why: &str, hint: &str) {
        self.push(FindingLevel::Warning, rule, at, what, why, hint);
    }
    /// A mandatory field that is not set.
    fn missing(&mut self, at: &At, why: &str, hint: &str) {
        self.error(
            "required",
            at,
            &format!("{} is not set", at.text),
            why,
            hint,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Names.

const MAX_IDENTIFIER: usize = 255;

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    s.len() <= MAX_IDENTIFIER
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why a name is not a regular identifier, in sdp-meta's words.
fn identifier_problem(s: &str) -> Option<String> {
    if is_identifier(s) {
        None
    } else if s.len() > MAX_IDENTIFIER {
        Some(format!(
            "is {} characters; sdp-meta allows at most {MAX_IDENTIFIER}",
            s.len()
        ))
    } else {
        Some("is not a valid Databricks SQL regular identifier: names must match ^[A-Za-z_][A-Za-z0-9_]*$; hyphens, periods, spaces and leading digits are not supported (sdp-meta onboarding rejects it)".to_string())
    }
}

const IDENT_HINT: &str = "use letters, digits and underscores only, starting with a letter or underscore (rename the object if Unity Catalog allowed a hyphen)";

/// V1 for a single identifier attribute.
fn check_identifier(o: &Object, k: &str, at: &At, r: &mut Report) {
    if let Tri::Known(s) = text(o, k)
        && let Some(problem) = identifier_problem(s)
    {
        r.error(
            "V1",
            &at.key(k),
            &format!("{} = {}", at.key(k).text, quote(s)),
            &problem,
            IDENT_HINT,
        );
    }
}

/// V2 and V1 for a `schema` or `catalog.schema` attribute.
fn check_database(o: &Object, k: &str, at: &At, r: &mut Report) {
    let Tri::Known(s) = text(o, k) else { return };
    let at = at.key(k);
    check_database_value(s, &at, r);
}

fn check_database_value(s: &str, at: &At, r: &mut Report) {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 2 {
        r.error(
            "V2",
            at,
            &format!("{} = {} has {} dotted parts", at.text, quote(s), parts.len()),
            "sdp-meta accepts a schema or catalog.schema only (max_parts = 2)",
            "give catalog.schema here (a separate catalog attribute, where there is one, holds the catalog)",
        );
        return;
    }
    for part in parts {
        if let Some(problem) = identifier_problem(part) {
            r.error(
                "V1",
                at,
                &format!("{} = {}: segment {}", at.text, quote(s), quote(part)),
                &problem,
                IDENT_HINT,
            );
        }
    }
}

/// V1 for a list of column names. `allow_blank`: sdp-meta tolerates blank entries in
/// partition and cluster lists, not in CDC column lists.
fn check_columns(o: &Object, k: &str, at: &At, allow_blank: bool, r: &mut Report) {
    let Some(cols) = string_list(o, k) else {
        return;
    };
    let at = at.key(k);
    for c in cols {
        if c.trim().is_empty() {
            if !allow_blank {
                r.error(
                    "V1",
                    &at,
                    &format!("{} has a blank entry", at.text),
                    "sdp-meta passes the list to the pipeline verbatim, where a blank column name fails",
                    "remove the blank entry",
                );
            }
            continue;
        }
        if let Some(problem) = identifier_problem(c) {
            r.error(
                "V1",
                &at,
                &format!("{} entry {}", at.text, quote(c)),
                &problem,
                IDENT_HINT,
            );
        }
    }
}

/// V1 for `sequence_by`: comma-separated columns, each possibly dotted.
fn check_sequence_by(s: &str, at: &At, r: &mut Report) {
    for entry in s.split(',').map(str::trim) {
        let problem = if entry.is_empty() {
            Some("is empty; use a comma-separated list of column names".to_string())
        } else {
            entry.split('.').find_map(identifier_problem)
        };
        if let Some(problem) = problem {
            r.error(
                "V1",
                at,
                &format!("{} = {}: entry {}", at.text, quote(s), quote(entry)),
                &problem,
                "write sequence_by as \"col\", \"col1,col2\" or a dotted struct field (e.g. \"_commit_version\")",
            );
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Flows.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    CloudFiles,
    Delta,
    Kafka,
    Eventhub,
    Snapshot,
}

impl Format {
    fn parse(s: &str) -> Option<Format> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cloudfiles" => Some(Format::CloudFiles),
            "delta" => Some(Format::Delta),
            "kafka" => Some(Format::Kafka),
            "eventhub" => Some(Format::Eventhub),
            "snapshot" => Some(Format::Snapshot),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Format::CloudFiles => "cloudFiles",
            Format::Delta => "delta",
            Format::Kafka => "kafka",
            Format::Eventhub => "eventhub",
            Format::Snapshot => "snapshot",
        }
    }
}

const FORMATS: &str = "cloudFiles, delta, eventhub, kafka, snapshot";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    Bronze,
    Silver,
}

impl Layer {
    fn name(self) -> &'static str {
        match self {
            Layer::Bronze => "bronze",
            Layer::Silver => "silver",
        }
    }
}

/// A flow's configuration with the facts several rules share.
struct FlowView<'a> {
    obj: &'a Object,
    /// `flow "2"`, for messages.
    label: String,
    id: Tri<&'a str>,
    group: Tri<&'a str>,
    source: Tri<&'a Object>,
    bronze: Tri<&'a Object>,
    silver: Tri<&'a Object>,
    /// `Known(None)`: set to something sdp-meta does not support.
    format: Tri<Option<Format>>,
}

impl<'a> FlowView<'a> {
    fn new(obj: &'a Object) -> FlowView<'a> {
        let label = match obj.get("data_flow_id") {
            Some(Value::Unknown) => "flow (data_flow_id known after apply)".to_string(),
            None | Some(Value::Null) => "flow (no data_flow_id)".to_string(),
            Some(v) => format!("flow {v}"),
        };
        let source = block(obj, "source");
        let format = match source {
            Tri::Known(src) => match text(src, "format") {
                Tri::Known(s) => Tri::Known(Format::parse(s)),
                Tri::Absent => Tri::Absent,
                Tri::Unknown => Tri::Unknown,
            },
            Tri::Absent => Tri::Absent,
            Tri::Unknown => Tri::Unknown,
        };
        FlowView {
            obj,
            label,
            id: text(obj, "data_flow_id"),
            group: text(obj, "data_flow_group"),
            source,
            bronze: block(obj, "bronze"),
            silver: block(obj, "silver"),
            format,
        }
    }

    /// A bronze layer: a source and a bronze block.
    fn bronze_active(&self) -> Tri<bool> {
        match (self.source, self.bronze) {
            (Tri::Absent, _) | (_, Tri::Absent) => Tri::Known(false),
            (Tri::Known(_), Tri::Known(_)) => Tri::Known(true),
            _ => Tri::Unknown,
        }
    }

    fn layer(&self, layer: Layer) -> Option<&'a Object> {
        match layer {
            Layer::Bronze => match self.bronze_active() {
                Tri::Known(true) => self.bronze.known(),
                _ => None,
            },
            Layer::Silver => self.silver.known(),
        }
    }

    fn format(&self) -> Option<Format> {
        self.format.known().flatten()
    }

    fn snapshot_format(&self) -> Tri<&'a str> {
        match self.source {
            Tri::Known(src) => text(src, "snapshot_format"),
            Tri::Absent => Tri::Absent,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

fn flow_rules(v: &FlowView, r: &mut Report) {
    for k in ["data_flow_id", "data_flow_group"] {
        if text(v.obj, k).is_absent() {
            r.missing(
                &At::root().key(k),
                "sdp-meta onboarding fails with \"Missing field\"",
                &format!("set {k}"),
            );
        }
    }
    structure_rules(v, r);
    if let Tri::Known(src) = v.source {
        source_rules(v, src, r);
    }
    if let Tri::Known(b) = v.bronze {
        layer_rules(v, Layer::Bronze, b, r);
    }
    if let Tri::Known(s) = v.silver {
        layer_rules(v, Layer::Silver, s, r);
    }
    if let (Some(src), Some(b)) = (v.source.known(), v.layer(Layer::Bronze)) {
        snapshot_source_rules(v, b, r);
        lakeflow_connect_rules(v, src, b, r);
        if let Some(s) = v.silver.known() {
            silver_reads_bronze_rules(b, s, None, r);
        }
    }
}

/// Which layers the flow has, and whether its blocks fit together.
fn structure_rules(v: &FlowView, r: &mut Report) {
    let root = At::root();
    match (v.source, v.bronze, v.silver) {
        (Tri::Absent, Tri::Absent, Tri::Absent) => r.error(
            "layer",
            &root,
            "the flow has no source, bronze or silver block",
            "sdp-meta onboards nothing for it",
            "add source and bronze blocks (a bronze layer) and/or a silver block",
        ),
        (Tri::Known(_), Tri::Absent, _) => r.error(
            "layer",
            &root.key("source"),
            "source is set but there is no bronze block",
            "sdp-meta writes a source into a bronze table, so the flow needs bronze { database, table }",
            "add a bronze block with database and table, or remove source",
        ),
        (Tri::Absent, Tri::Known(_), Tri::Absent) => r.error(
            "layer",
            &root.key("bronze"),
            "bronze is set without source and without silver",
            "without a source the bronze block only names the table a silver layer reads, and there is no silver block",
            "add a source block (bronze layer) or a silver block (silver reading this bronze table)",
        ),
        _ => {}
    }
    // A silver-only flow reads the bronze table its bronze block names.
    if let Tri::Known(s) = v.silver
        && v.bronze.is_absent()
        && configured(s, "cdc_apply_changes_flows") == Some(false)
    {
        r.error(
            "layer",
            &root.key("silver"),
            "silver has no bronze table to read",
            "sdp-meta reads silver from bronze_database/bronze_table and fails with \"Missing bronze source fields\"",
            "add bronze { database = \"…\", table = \"…\" } naming the bronze table silver reads",
        );
    }
    // Bronze settings that only apply to a bronze layer are ignored on a silver-only flow.
    if let (Tri::Absent, Tri::Known(b), Tri::Known(_)) = (v.source, v.bronze, v.silver) {
        let ignored: Vec<&str> = BRONZE_WRITE_FIELDS
            .iter()
            .copied()
            .filter(|k| match b.get(*k) {
                Some(Value::Bool(x)) => *x,
                _ => configured(b, k) == Some(true),
            })
            .collect();
        if !ignored.is_empty() {
            r.warn(
                "layer",
                &root.key("bronze"),
                &format!("bronze sets {} but the flow has no source", ignored.join(", ")),
                "without a source sdp-meta makes no bronze row for this flow; the bronze block only names the table silver reads, and these settings are ignored",
                "move these settings to the flow that writes the bronze table, or add a source block",
            );
        }
    }
}

/// Bronze settings that shape the bronze table (as opposed to naming it).
const BRONZE_WRITE_FIELDS: &[&str] = &[
    "comment",
    "reader_options",
    "table_properties",
    "partition_columns",
    "cluster_by",
    "cluster_by_auto",
    "row_filter",
    "quarantine_row_filter",
    "cdc_apply_changes",
    "cdc_apply_changes_flows",
    "apply_changes_from_snapshot",
    "expectations",
    "expectations_file",
    "quarantine",
    "append_flow",
    "sink",
];

/// What each source format needs, and fields it ignores.
fn source_rules(v: &FlowView, src: &Object, r: &mut Report) {
    let at = At::root().key("source");
    let fmt = match text(src, "format") {
        Tri::Known(s) => match Format::parse(s) {
            Some(f) => f,
            None => {
                r.error(
                    "format",
                    &at.key("format"),
                    &format!("source.format = {} is not supported", quote(s)),
                    &format!("sdp-meta supports {FORMATS} (case-insensitive)"),
                    &format!("use one of: {FORMATS}"),
                );
                return;
            }
        },
        Tri::Absent => {
            r.missing(
                &at.key("format"),
                "sdp-meta fails with \"Source format not provided\"",
                &format!("set source.format to one of: {FORMATS}"),
            );
            return;
        }
        Tri::Unknown => return,
    };
    let fmt_text = format!("source.format = {}", quote(fmt.name()));

    // Fields the format ignores.
    let wrong = |field: &str, allowed: &[Format]| -> bool {
        !allowed.contains(&fmt) && configured(src, field) == Some(true)
    };
    let ignored: &[(&str, &[Format], &str)] = &[
        ("kafka", &[Format::Kafka], "kafka"),
        ("eventhub", &[Format::Eventhub], "eventhub"),
        ("snapshot_format", &[Format::Snapshot], "snapshot"),
        ("source_metadata", &[Format::CloudFiles], "cloudFiles"),
        (
            "source_path",
            &[Format::CloudFiles, Format::Snapshot],
            "cloudFiles and snapshot",
        ),
    ];
    for (field, allowed, for_what) in ignored {
        if wrong(field, allowed) {
            r.error(
                "source",
                &at.key(field),
                &format!("source.{field} is set but {fmt_text}"),
                &format!("sdp-meta uses source.{field} only for {for_what} sources, so it would be ignored"),
                &format!("remove source.{field}, or change source.format"),
            );
        }
    }
    let table_fields = [
        "ingestion_table",
        "table",
        "source_database",
        "source_table",
    ];
    if matches!(fmt, Format::CloudFiles | Format::Kafka | Format::Eventhub) {
        for field in table_fields {
            if configured(src, field) == Some(true) {
                r.error(
                    "source",
                    &at.key(field),
                    &format!("source.{field} is set but {fmt_text}"),
                    &format!(
                        "a {} source does not read a table, so it would be ignored",
                        fmt.name()
                    ),
                    &format!(
                        "remove source.{field}, or use source.format = \"delta\" (or \"snapshot\")"
                    ),
                );
            }
        }
    }
    if matches!(fmt, Format::Delta | Format::Snapshot) {
        table_rules(src, &at, fmt, r);
    }

    match fmt {
        Format::CloudFiles => {
            if configured(src, "source_path") == Some(false) {
                r.missing(
                    &at.key("source_path"),
                    "a cloudFiles source reads files from source_path; sdp-meta fails with KeyError 'path'",
                    "set source.source_path, e.g. \"/Volumes/<catalog>/<schema>/<volume>/landing/\"",
                );
            }
            if let Tri::Known(b) = v.bronze
                && option_ci(b, "reader_options", "cloudFiles.format").is_absent()
            {
                r.error(
                    "source",
                    &At::root().key("bronze").key("reader_options"),
                    "bronze.reader_options has no \"cloudFiles.format\"",
                    "Auto Loader needs the file format; the pipeline fails at start",
                    "add \"cloudFiles.format\" = \"json\" (or csv, parquet, …) to bronze.reader_options",
                );
            }
        }
        Format::Kafka => kafka_rules(src, &at, r),
        Format::Eventhub => eventhub_rules(src, &at, r),
        Format::Snapshot => match text(src, "snapshot_format") {
            Tri::Absent => r.missing(
                &at.key("snapshot_format"),
                "sdp-meta onboarding fails with \"snapshot_format is missing in the source_details\"",
                "set source.snapshot_format = \"delta\" (a table) or a file format such as \"csv\" or \"parquet\"",
            ),
            Tri::Known(sf) if sf != "delta" && sf.eq_ignore_ascii_case("delta") => r.error(
                "source",
                &at.key("snapshot_format"),
                &format!("source.snapshot_format = {}", quote(sf)),
                "sdp-meta compares snapshot_format with \"delta\" exactly, so this is treated as a file snapshot needing a custom reader function",
                "write snapshot_format = \"delta\" in lower case",
            ),
            Tri::Known(sf) if sf != "delta" && configured(src, "source_path") == Some(false) => r.warn(
                "source",
                &at.key("source_path"),
                &format!("source.snapshot_format = {} without source.source_path", quote(sf)),
                "a file snapshot is read by the runner's bronze_next_snapshot_and_version from sourceDetails.path, and sdp-meta requires it when Unity Catalog is not enabled",
                "set source.source_path to the snapshot files' location",
            ),
            _ => {}
        },
        Format::Delta => {}
    }
}

/// A delta (or delta snapshot) source's table: given exactly one way.
fn table_rules(src: &Object, at: &At, fmt: Format, r: &mut Report) {
    let ing = configured(src, "ingestion_table");
    let tbl = configured(src, "table");
    let sdb = configured(src, "source_database");
    let stb = configured(src, "source_table");
    let (Some(ing), Some(tbl), Some(sdb), Some(stb)) = (ing, tbl, sdb, stb) else {
        return;
    };
    let ways = [ing, tbl, sdb || stb].iter().filter(|x| **x).count();
    if ways > 1 {
        r.error(
            "source",
            at,
            "source names its table more than one way",
            "ingestion_table, table and source_database + source_table are alternatives; brickform would have to guess which one sdp-meta should read",
            "keep one of ingestion_table, table, or source_database + source_table",
        );
        return;
    }
    let snapshot_delta =
        fmt == Format::Snapshot && text(src, "snapshot_format") == Tri::Known("delta");
    let built_in_reader = fmt == Format::Delta || snapshot_delta;
    if built_in_reader && ways == 1 && (sdb != stb) && !ing && !tbl {
        let (set, unset) = if sdb {
            ("source_database", "source_table")
        } else {
            ("source_table", "source_database")
        };
        r.error(
            "source",
            &at.key(unset),
            &format!("source.{set} is set without source.{unset}"),
            "the delta reader reads source_database.source_table and fails with KeyError without both",
            &format!("set source.{unset}, or give the full name as source.table"),
        );
        return;
    }
    if ways == 0 && built_in_reader {
        let (rule, what, why) = if fmt == Format::Delta {
            (
                "source",
                "source.format = \"delta\" has no table",
                "the delta reader streams from source_database.source_table; sdp-meta fails with KeyError 'source_database'",
            )
        } else {
            (
                "V10",
                "source.snapshot_format = \"delta\" has no table",
                "the built-in snapshot view reads source_database.source_table (source_path is ignored); sdp-meta fails with KeyError 'source_database'",
            )
        };
        r.error(
            rule,
            at,
            what,
            why,
            "set source.ingestion_table, source.table = \"catalog.schema.table\", or source_database + source_table",
        );
        return;
    }
    if let Tri::Known(t) = text(src, "table") {
        let parts = t.split('.').count();
        if !(2..=3).contains(&parts) {
            r.error(
                "source",
                &at.key("table"),
                &format!("source.table = {} has {parts} dotted part(s)", quote(t)),
                "brickform splits the full name into source_database and source_table, so it needs schema.table or catalog.schema.table",
                "write source.table as \"catalog.schema.table\"",
            );
        }
    }
    if let Tri::Known(db) = text(src, "source_database")
        && db.split('.').count() > 2
    {
        r.error(
            "source",
            &at.key("source_database"),
            &format!("source.source_database = {} has more than two dotted parts", quote(db)),
            "the reader reads <source_database>.<source_table>, which would have more than three parts",
            "write source_database as \"catalog.schema\" and the table name in source_table",
        );
    }
}

fn kafka_rules(src: &Object, at: &At, r: &mut Report) {
    let k = match block(src, "kafka") {
        Tri::Known(k) => k,
        Tri::Absent => {
            r.error(
                "source",
                &at.key("kafka"),
                "source.format = \"kafka\" has no kafka block",
                "sdp-meta fails with \"Kafka topic details not found\" / \"Kafka broker details not found\"",
                "add kafka { bootstrap_servers = \"host:9092\", subscribe = \"topic\" } to the source block",
            );
            return;
        }
        Tri::Unknown => return,
    };
    let at = at.key("kafka");
    if configured(k, "subscribe") == Some(false) {
        r.missing(
            &at.key("subscribe"),
            "sdp-meta fails with \"Kafka topic details not found\"",
            "set source.kafka.subscribe to the topic",
        );
    }
    let servers = configured(k, "bootstrap_servers");
    let scope = configured(k, "servers_secrets_scope_name");
    let key = configured(k, "servers_secrets_scope_key");
    let in_options = match option(k, "options", "kafka.bootstrap.servers") {
        Tri::Known(_) => Some(true),
        Tri::Absent => Some(false),
        Tri::Unknown => None,
    };
    if servers == Some(false) && in_options == Some(false) {
        match (scope, key) {
            (Some(false), Some(false)) => r.missing(
                &at.key("bootstrap_servers"),
                "sdp-meta fails with \"Kafka broker details not found\"",
                "set source.kafka.bootstrap_servers, or servers_secrets_scope_name + servers_secrets_scope_key",
            ),
            (Some(true), Some(false)) | (Some(false), Some(true)) => {
                let unset = if scope == Some(false) {
                    "servers_secrets_scope_name"
                } else {
                    "servers_secrets_scope_key"
                };
                r.missing(
                    &at.key(unset),
                    "the brokers come from a secret, which needs both its scope and its key; sdp-meta fails with \"Kafka broker details not found\"",
                    &format!("set source.kafka.{unset}"),
                );
            }
            _ => {}
        }
    }
    // SSL: with both store locations, all four secret references are needed.
    let has = |key: &str| match option(k, "options", key) {
        Tri::Known(_) => Some(true),
        Tri::Absent => Some(false),
        Tri::Unknown => None,
    };
    if has("kafka.ssl.truststore.location") == Some(true)
        && has("kafka.ssl.keystore.location") == Some(true)
    {
        let needed = [
            "kafka.ssl.truststore.secrets.scope",
            "kafka.ssl.truststore.secrets.key",
            "kafka.ssl.keystore.secrets.scope",
            "kafka.ssl.keystore.secrets.key",
        ];
        let absent: Vec<&str> = needed
            .iter()
            .copied()
            .filter(|k| has(k) == Some(false))
            .collect();
        if !absent.is_empty() {
            r.error(
                "source",
                &at.key("options"),
                &format!(
                    "source.kafka.options sets SSL store locations without {}",
                    absent.join(", ")
                ),
                "sdp-meta fails with \"Kafka ssl required params are: …\"",
                "add the truststore and keystore secrets' scope and key to source.kafka.options",
            );
        }
    }
}

fn eventhub_rules(src: &Object, at: &At, r: &mut Report) {
    let e = match block(src, "eventhub") {
        Tri::Known(e) => e,
        Tri::Absent => {
            r.error(
                "source",
                &at.key("eventhub"),
                "source.format = \"eventhub\" has no eventhub block",
                "sdp-meta needs the Event Hubs namespace, name, port, access key name and secret scope",
                "add eventhub { namespace, name, port, access_key_name, secrets_scope_name } to the source block",
            );
            return;
        }
        Tri::Unknown => return,
    };
    let at = at.key("eventhub");
    for field in [
        "namespace",
        "name",
        "port",
        "access_key_name",
        "secrets_scope_name",
    ] {
        if configured(e, field) == Some(false) {
            r.missing(
                &at.key(field),
                "the Event Hubs reader builds its Kafka options from it and fails without it",
                &format!("set source.eventhub.{field}"),
            );
        }
    }
}

/// V8 and snapshot CDC on a source that is not a snapshot.
fn snapshot_source_rules(v: &FlowView, b: &Object, r: &mut Report) {
    let Some(fmt) = v.format() else { return };
    let snap = configured(b, "apply_changes_from_snapshot");
    let at = At::root().key("bronze");
    if fmt == Format::Snapshot && snap == Some(false) {
        r.error(
            "V8",
            &at,
            "source.format = \"snapshot\" needs bronze.apply_changes_from_snapshot",
            "sdp-meta fails at pipeline start with AttributeError",
            "add apply_changes_from_snapshot { keys = [...] scd_type = \"1\" } to the bronze block",
        );
    }
    if fmt != Format::Snapshot && snap == Some(true) {
        r.error(
            "source",
            &at.key("apply_changes_from_snapshot"),
            &format!("bronze.apply_changes_from_snapshot with source.format = {}", quote(fmt.name())),
            "snapshot CDC reads a snapshot source; sdp-meta has no snapshot to give it",
            "set source.format = \"snapshot\" (with snapshot_format), or use bronze.cdc_apply_changes for a change stream",
        );
    }
}

/// V16 / V17: Lakeflow Connect destination tables as sources.
fn lakeflow_connect_rules(v: &FlowView, src: &Object, b: &Object, r: &mut Report) {
    let Tri::Known(Value::Object(it)) = get(src, "ingestion_table") else {
        return;
    };
    let Some(fmt) = v.format() else { return };
    let scd = text(it, "scd_type");
    let reserved = match get(it, "has_reserved_scd2_columns") {
        Tri::Known(Value::Bool(x)) => Some(*x),
        Tri::Absent => Some(false),
        _ => None,
    };
    let name = match text(it, "destination_table") {
        Tri::Known(t) => format!("the Lakeflow Connect table {t}"),
        _ => "the Lakeflow Connect table".to_string(),
    };
    let scd2 = match (scd, reserved) {
        (Tri::Known(s), _) if s.eq_ignore_ascii_case("SCD_TYPE_2") => Some(true),
        (_, Some(true)) => Some(true),
        (Tri::Known(_) | Tri::Absent, Some(false)) => Some(false),
        _ => None,
    };
    let scd1 =
        matches!(scd, Tri::Known(s) if s.eq_ignore_ascii_case("SCD_TYPE_1")) && scd2 == Some(false);
    let at = At::root().key("bronze");
    let cdc = any_configured(b, &["cdc_apply_changes", "cdc_apply_changes_flows"]);
    let rcf = reads_change_feed(b);

    if fmt == Format::Delta && scd2 == Some(true) {
        if cdc == Some(true) {
            r.error(
                "V16",
                &at.key("cdc_apply_changes"),
                &format!("{name} (SCD_TYPE_2, with __START_AT/__END_AT) feeds bronze.cdc_apply_changes"),
                "DLT rejects the system-reserved columns __START_AT/__END_AT (\"Please rename the following system reserved columns\"), even with scd_type = \"1\"",
                "read it as a snapshot: source.format = \"snapshot\", snapshot_format = \"delta\", bronze.apply_changes_from_snapshot with keys including lfc_end_at, and a runner that renames __START_AT/__END_AT to lfc_start_at/lfc_end_at",
            );
        } else if rcf == Some(false) && cdc == Some(false) {
            r.error(
                "V17",
                &at.key("reader_options"),
                &format!("{name} (SCD_TYPE_2) is read as a plain stream"),
                "Lakeflow Connect writes it with MERGE commits, which break a plain streaming read",
                "read it as a snapshot: source.format = \"snapshot\", snapshot_format = \"delta\", bronze.apply_changes_from_snapshot with keys including lfc_end_at",
            );
        }
    }
    if fmt == Format::Delta && scd1 {
        match (rcf, cdc) {
            (Some(false), _) => r.error(
                "V17",
                &at.key("reader_options"),
                &format!("{name} (SCD_TYPE_1) is read without bronze.reader_options readChangeFeed = \"true\""),
                "Lakeflow Connect applies changes with MERGE commits, which break a plain streaming read",
                "set bronze.reader_options = { readChangeFeed = \"true\" } and add bronze.cdc_apply_changes { keys = [...] sequence_by = \"_commit_version\" scd_type = \"1\" apply_as_deletes = \"_change_type = 'delete'\" }",
            ),
            (Some(true), Some(false)) => r.error(
                "V17",
                &at,
                &format!("{name} (SCD_TYPE_1) is read with readChangeFeed but without bronze.cdc_apply_changes"),
                "the change feed's inserts, update images and deletes would be appended to bronze as rows",
                "add bronze.cdc_apply_changes { keys = [...] sequence_by = \"_commit_version\" scd_type = \"1\" apply_as_deletes = \"_change_type = 'delete'\" }",
            ),
            _ => {}
        }
    }
    if fmt == Format::Snapshot
        && scd2 == Some(true)
        && let Tri::Known(snap) = block(b, "apply_changes_from_snapshot")
        && let Some(keys) = string_list(snap, "keys")
    {
        let at = at.key("apply_changes_from_snapshot").key("keys");
        if let Some(k) = keys
            .iter()
            .find(|k| k.eq_ignore_ascii_case("__START_AT") || k.eq_ignore_ascii_case("__END_AT"))
        {
            r.error(
                "V16",
                &at,
                &format!("bronze.apply_changes_from_snapshot.keys names the reserved column {}", quote(k)),
                &format!("DLT strips __START_AT/__END_AT from {name}, so the key cannot resolve"),
                "rename the columns in the runner's snapshot function (__END_AT → lfc_end_at) and key on lfc_end_at",
            );
        } else if keys.iter().any(|k| k.eq_ignore_ascii_case("lfc_start_at")) {
            r.warn(
                "V16",
                &at,
                "bronze.apply_changes_from_snapshot.keys includes lfc_start_at",
                &format!("rows of {name}'s SCD2 history can share __START_AT, which fails with APPLY_CHANGES_FROM_SNAPSHOT_ERROR.DUPLICATE_KEY_VIOLATION"),
                "key on lfc_end_at instead of lfc_start_at (e.g. keys = [\"dt\", \"lfc_end_at\"])",
            );
        }
    }
}

/// V18: silver reading a bronze AUTO CDC target. `bronze_of`: the flow that writes the bronze
/// table, when it is another flow.
fn silver_reads_bronze_rules(b: &Object, s: &Object, bronze_of: Option<&str>, r: &mut Report) {
    let auto_cdc = any_configured(
        b,
        &[
            "cdc_apply_changes",
            "cdc_apply_changes_flows",
            "apply_changes_from_snapshot",
        ],
    );
    if auto_cdc != Some(true) {
        return;
    }
    // A silver snapshot reads bronze in batch; CDC flows read their own sources.
    if any_configured(
        s,
        &["apply_changes_from_snapshot", "cdc_apply_changes_flows"],
    ) != Some(false)
    {
        return;
    }
    let target = match bronze_of {
        Some(other) => format!("the bronze table written by {other} with AUTO CDC"),
        None => "bronze, an AUTO CDC target,".to_string(),
    };
    let at = At::root().key("silver");
    match (reads_change_feed(s), configured(s, "cdc_apply_changes")) {
        (Some(false), _) => r.error(
            "V18",
            &at.key("reader_options"),
            &format!("silver streams from {target} without silver.reader_options readChangeFeed = \"true\""),
            "AUTO CDC updates and deletes rows, so the second run fails with DELTA_SOURCE_TABLE_IGNORE_CHANGES",
            "set silver.reader_options = { readChangeFeed = \"true\" } and add silver.cdc_apply_changes { keys = [...] sequence_by = \"_commit_version\" scd_type = \"1\" }",
        ),
        (Some(true), Some(false)) => r.warn(
            "V18",
            &at,
            &format!("silver reads the change feed of {target} without silver.cdc_apply_changes"),
            "every change event (inserts, update images, deletes) would be appended to silver as a row",
            "add silver.cdc_apply_changes { keys = [...] sequence_by = \"_commit_version\" scd_type = \"1\" apply_as_deletes = \"_change_type = 'delete'\" }",
        ),
        _ => {}
    }
}

/// The rules of one layer block (bronze or silver).
fn layer_rules(v: &FlowView, layer: Layer, blk: &Object, r: &mut Report) {
    let at = At::root().key(layer.name());
    let ln = layer.name();
    for k in ["database", "table"] {
        if text(blk, k).is_absent() {
            r.missing(
                &at.key(k),
                &format!("sdp-meta needs {ln}_database_<env> and {ln}_table for every {ln} row (and silver rows read the bronze ones)"),
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
            "exclusive",
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
                "row_filter",
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
            "exclusive",
            &at.key("transformation_file"),
            "silver.transformation_file is set together with silver.select_exp / where_clause",
            "the onboarding names one silver transformations file: either the rendered one or yours",
            "keep select_exp / where_clause, or transformation_file",
        );
    }
}

fn cdc_rules(layer: Layer, blk: &Object, at: &At, r: &mut Report) {
    let ln = layer.name();
    let cdc = block(blk, "cdc_apply_changes");
    let flows = block(blk, "cdc_apply_changes_flows");
    let snap = block(blk, "apply_changes_from_snapshot");
    if let Tri::Known(c) = cdc {
        cdc_common_rules(
            c,
            &at.key("cdc_apply_changes"),
            &format!("{ln}_cdc_apply_changes"),
            r,
        );
    }
    if let Tri::Known(f) = flows {
        let fa = at.key("cdc_apply_changes_flows");
        cdc_common_rules(f, &fa, &format!("{ln}_cdc_apply_changes_flows"), r);
        cdc_flow_list_rules(layer, f, &fa, r);
    }
    if let Tri::Known(s) = snap {
        let sa = at.key("apply_changes_from_snapshot");
        let why = format!(
            "sdp-meta onboarding fails with \"mandatory missing atrributes for {ln}_apply_changes_from_snapshot\""
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
            "V14",
            &at.key("cdc_apply_changes_flows"),
            &format!("{ln}.cdc_apply_changes and {ln}.cdc_apply_changes_flows are both set"),
            &format!("sdp-meta rejects it: \"both {ln}_cdc_apply_changes and {ln}_cdc_apply_changes_flows are set; use one or the other\""),
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
            "exclusive",
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
fn cdc_common_rules(c: &Object, at: &At, key: &str, r: &mut Report) {
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

fn scd_type_rule(c: &Object, at: &At, why_missing: &str, r: &mut Report) {
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
                    "scd_type",
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

fn cdc_flow_list_rules(layer: Layer, f: &Object, at: &At, r: &mut Report) {
    let ln = layer.name();
    let Some(list) = blocks(f, "flow") else {
        return;
    };
    let list_unknown = matches!(f.get("flow"), Some(Value::List(l)) if l.iter().any(|x| matches!(x, Value::Unknown)));
    if list.is_empty() && !list_unknown {
        r.error(
            "required",
            &at.key("flow"),
            &format!("{} has no flow block", at.text),
            &format!("sdp-meta rejects it: \"{ln}_cdc_apply_changes_flows.flows must be a non-empty list\""),
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
                &format!("sdp-meta rejects it: \"{ln}_cdc_apply_changes_flows.flows[{i}].name is required\""),
                "give the flow block a name label",
            ),
            Tri::Known(n) if !seen.insert(n) => r.error(
                "name",
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
                "format",
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

const EXPECT_KEYS: [&str; 6] = [
    "expect",
    "expect_all",
    "expect_or_drop",
    "expect_all_or_drop",
    "expect_or_fail",
    "expect_all_or_fail",
];

fn expectations_rules(layer: Layer, blk: &Object, at: &At, r: &mut Report) {
    let ln = layer.name();
    let exp = block(blk, "expectations");
    if exp.is_known() && configured(blk, "expectations_file") == Some(true) {
        r.error(
            "exclusive",
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
            "V5",
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
                "V6",
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
                "V7",
                &ea.key(all),
                &format!("{ln}.expectations sets both {one} and {all}"),
                &format!("sdp-meta treats them as aliases and uses {one}, so the {all} rules are silently ignored"),
                &format!("merge the rules into {one} (or into {all})"),
            );
        }
    }
}

fn append_flow_rules(blk: &Object, at: &At, r: &mut Report) {
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
                "name",
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
                "format",
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

fn sink_rules(blk: &Object, at: &At, r: &mut Report) {
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
                "name",
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
                        "format",
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
                        "V25",
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

const ROW_FILTER_TOKENS: [&str; 5] = [";", "--", "/*", "*/", "`"];
const ROW_FILTER_KEYWORDS: [&str; 19] = [
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
const ROW_FILTER_MAX: usize = 2000;

/// What sdp-meta's SQL denylist finds in a row filter.
fn row_filter_problem(s: &str) -> Option<String> {
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

const CDF_COLUMNS: [&str; 3] = ["_change_type", "_commit_version", "_commit_timestamp"];

/// V19: change feed metadata columns leaking into an AUTO CDC target.
fn change_feed_columns_rule(layer: Layer, blk: &Object, at: &At, r: &mut Report) {
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
        "V19",
        &at.key("cdc_apply_changes").key("except_column_list"),
        &format!(
            "{ln} reads the change feed but {ln}.cdc_apply_changes.except_column_list lacks {}",
            missing.join(", ")
        ),
        "the change feed's metadata columns are written into the target table",
        "set except_column_list = [\"_change_type\", \"_commit_version\", \"_commit_timestamp\"]",
    );
}

// ---------------------------------------------------------------------------------------------
// Onboardings.

/// What the sdp-meta build the pipelines run is known to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Build {
    /// 0.1.0 / 0.1.1 / upstream main (or a version brickform does not know): #265 0.1.0
    /// behaviour, #266 and #268 unfixed.
    PreFix,
    /// A wheel built from the PR #267 branch.
    Fixed,
    /// `sdp_meta_version` known only after apply.
    Unknown,
}

const KNOWN_VERSIONS: [&str; 2] = ["0.1.0", "0.1.1"];
const DEFAULT_VERSION: &str = "0.1.0";

impl Build {
    fn of(o: &Object, out: &mut Vec<Finding>) -> Build {
        let version = match text(o, "sdp_meta_version") {
            Tri::Known(v) => v.trim(),
            Tri::Absent => DEFAULT_VERSION,
            Tri::Unknown => return Build::Unknown,
        };
        if version.contains("+pr267") {
            return Build::Fixed;
        }
        if !KNOWN_VERSIONS.contains(&version) {
            let mut r = Report {
                flow: None,
                base: None,
                out,
            };
            r.warn(
                "version",
                &At::root().key("sdp_meta_version"),
                &format!("sdp_meta_version = {} is not a build brickform knows", quote(version)),
                "brickform knows 0.1.0, 0.1.1 (upstream main) and wheels built from the PR #267 branch (\"+pr267\"), and checks this one as if it lacked the fixes for #265, #266 and #268",
                "set sdp_meta_version to \"0.1.0\", \"0.1.1\" or \"<version>+pr267\" to match the wheel the pipelines install",
            );
        }
        Build::PreFix
    }
}

/// What the runner notebook passes to sdp-meta, and for which groups' pipelines.
#[derive(Debug, Clone)]
struct Runner {
    bronze_fn: Tri<bool>,
    silver_fn: Tri<bool>,
    /// The groups whose pipelines run this runner; `None` for every group.
    groups: Option<Vec<String>>,
    /// The groups are not known yet: nothing is decided about any group.
    groups_unknown: bool,
}

impl Runner {
    fn of(o: &Object) -> Runner {
        let flag = |b: &Object, k: &str| match get(b, k) {
            Tri::Known(Value::Bool(x)) => Tri::Known(*x),
            Tri::Known(Value::String(s)) => Tri::Known(s.trim().eq_ignore_ascii_case("true")),
            Tri::Absent => Tri::Known(false),
            _ => Tri::Unknown,
        };
        match block(o, "runner") {
            Tri::Known(b) => {
                let (groups, groups_unknown) = match get(b, "groups") {
                    Tri::Known(Value::List(l)) => (
                        Some(
                            l.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect(),
                        ),
                        l.iter().any(|v| matches!(v, Value::Unknown)),
                    ),
                    Tri::Unknown => (None, true),
                    _ => (None, false),
                };
                Runner {
                    bronze_fn: flag(b, "bronze_snapshot_function"),
                    silver_fn: flag(b, "silver_snapshot_function"),
                    groups,
                    groups_unknown,
                }
            }
            Tri::Absent => Runner {
                bronze_fn: Tri::Known(false),
                silver_fn: Tri::Known(false),
                groups: None,
                groups_unknown: false,
            },
            Tri::Unknown => Runner {
                bronze_fn: Tri::Unknown,
                silver_fn: Tri::Unknown,
                groups: None,
                groups_unknown: true,
            },
        }
    }
    /// Whether the pipelines of `group` pass the layer's snapshot function.
    fn function(&self, layer: Layer, group: Option<&str>) -> Tri<bool> {
        if self.groups_unknown {
            return Tri::Unknown;
        }
        if let (Some(groups), Some(g)) = (&self.groups, group)
            && !groups.iter().any(|x| x == g)
        {
            return Tri::Known(false);
        }
        match layer {
            Layer::Bronze => self.bronze_fn,
            Layer::Silver => self.silver_fn,
        }
    }
}

struct OnboardingCtx {
    build: Build,
    runner: Runner,
    uc_enabled: Tri<bool>,
}

/// The onboarding's own attributes: names, overwrite, dependency.
fn attribute_rules(o: &Object, out: &mut Vec<Finding>) {
    let mut r = Report {
        flow: None,
        base: None,
        out,
    };
    let root = At::root();
    check_database(o, "database", &root, &mut r);
    check_identifier(o, "bronze_dataflowspec_table", &root, &mut r);
    check_identifier(o, "silver_dataflowspec_table", &root, &mut r);

    if let Tri::Known(p) = text(o, "volume_path") {
        let at = root.key("volume_path");
        let volume = crate::volume_path::VolumePath::parse(p).filter(|v| v.rest.is_empty());
        let segments: Vec<String> = volume
            .map(|v| v.names().map(str::to_string).to_vec())
            .unwrap_or_default();
        if segments.len() != 3 {
            r.error(
                "volume",
                &at,
                &format!("volume_path = {} is not a volume's path", quote(p)),
                "the files are uploaded to a Unity Catalog volume, /Volumes/<catalog>/<schema>/<volume>",
                "use a volume's volume_path, e.g. databricks_volume.conf.volume_path",
            );
        } else {
            for s in &segments {
                if let Some(problem) = identifier_problem(s) {
                    r.error(
                        "V1",
                        &at,
                        &format!("volume_path = {}: segment {}", quote(p), quote(s)),
                        &problem,
                        IDENT_HINT,
                    );
                }
            }
        }
    }
    if let Tri::Known(f) = text(o, "file_name") {
        let lower = f.to_ascii_lowercase();
        if ![".json", ".yml", ".yaml"]
            .iter()
            .any(|e| lower.ends_with(e))
        {
            r.error(
                "file_name",
                &root.key("file_name"),
                &format!("file_name = {} has an unsupported extension", quote(f)),
                "sdp-meta fails with \"Onboarding file format not supported! Please provide a .json, .yml, or .yaml file\"",
                "name the file onboarding.json (or .yml / .yaml)",
            );
        }
    }
    if let Tri::Known(Value::String(s)) = get(o, "overwrite")
        && s != "True"
    {
        r.warn(
            "V21",
            &root.key("overwrite"),
            &format!("overwrite = {} is not exactly \"True\"", quote(s)),
            "sdp-meta then merges into the dataflowspec tables: that fails when they do not exist yet, and flows removed from the configuration stay in them",
            "set overwrite = \"True\" (the default), unless the spec tables exist and another onboarding shares them",
        );
    }
    if let Tri::Known(Value::String(dep)) = get(o, "dependency") {
        dependency_rules(dep, o, &mut r);
    }
}

fn dependency_rules(dep: &str, o: &Object, r: &mut Report) {
    let at = At::root().key("dependency");
    let d = dep.trim();
    let hint = "use \"databricks-labs-sdp-meta==<version>\" or the path of a wheel on a volume (/Volumes/…/databricks_labs_sdp_meta-<version>-py3-none-any.whl)";
    if d.is_empty() || d == "__SET_ME__" {
        r.error(
            "V26",
            &at,
            &format!("dependency = {}", quote(dep)),
            "the runner installs nothing usable (the DAB runner raises ValueError on __SET_ME__)",
            hint,
        );
        return;
    }
    // A PyPI requirement: the project name up to the first version specifier.
    let name_end = d
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(d.len());
    let name: String = d[..name_end]
        .chars()
        .map(|c| {
            if matches!(c, '_' | '.') {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    if name == "sdp-meta" {
        r.error(
            "V26",
            &at,
            &format!("dependency = {} names the PyPI project sdp-meta", quote(dep)),
            "no such project exists on PyPI (sdp-meta 0.1.0's CLI pins it by mistake); the install fails",
            hint,
        );
        return;
    }
    // The version the dependency installs, to compare with sdp_meta_version.
    let pinned = if name == "databricks-labs-sdp-meta" {
        d[name_end..].trim().strip_prefix("==").map(str::trim)
    } else if d.ends_with(".whl") {
        d.rsplit('/').next().and_then(|file| {
            let mut parts = file.split('-');
            match (parts.next(), parts.next()) {
                (Some(n), Some(v)) if n.eq_ignore_ascii_case("databricks_labs_sdp_meta") => Some(v),
                _ => None,
            }
        })
    } else {
        None
    };
    let declared = match text(o, "sdp_meta_version") {
        Tri::Known(v) => v.trim(),
        Tri::Absent => DEFAULT_VERSION,
        Tri::Unknown => return,
    };
    if let Some(pinned) = pinned
        && !pinned.is_empty()
        && pinned != declared
    {
        r.warn(
            "version",
            &at,
            &format!("dependency installs sdp-meta {pinned} but sdp_meta_version = {}", quote(declared)),
            "brickform checks the flows against sdp_meta_version, so the version checks may not match what the pipelines run",
            &format!("set sdp_meta_version = {}", quote(pinned)),
        );
    }
}

/// Per (group, layer): are flows snapshot flows?
#[derive(Default)]
struct GroupFacts {
    snapshot: usize,
    others: usize,
    first_other: Option<usize>,
}

/// A table a flow writes or reads: lower-cased `[catalog.]schema` and table.
fn table_key(layer: &Object) -> Option<(String, String)> {
    let db = text(layer, "database").known()?;
    let table = text(layer, "table").known()?;
    let db = match text(layer, "catalog") {
        Tri::Known(c) if !db.contains('.') => format!("{c}.{db}"),
        Tri::Unknown => return None,
        _ => db.to_string(),
    };
    Some((db.to_ascii_lowercase(), table.to_ascii_lowercase()))
}

fn cross_flow_rules(flows: &[Value], ctx: &OnboardingCtx, out: &mut Vec<Finding>) {
    let views: Vec<Option<FlowView>> = flows
        .iter()
        .map(|v| v.as_object().map(FlowView::new))
        .collect();
    let paths: Vec<Vec<PathStep>> = (0..views.len())
        .map(|i| vec![PathStep::Key("flows".to_string()), PathStep::Index(i)])
        .collect();

    let mut ids: HashMap<&str, usize> = HashMap::new();
    // Full bronze name → (writer, AUTO CDC?)
    let mut bronze_writers: HashMap<(String, String), (usize, Option<bool>)> = HashMap::new();
    let mut bronze_names: HashMap<(&str, String), (usize, String)> = HashMap::new();
    let mut silver_writers: HashMap<(String, String), usize> = HashMap::new();
    let mut silver_names: HashMap<String, (usize, String)> = HashMap::new();
    let mut groups: BTreeMap<(&str, Layer), GroupFacts> = BTreeMap::new();
    // Silver-only flows: (flow, the bronze table they read).
    let mut readers: Vec<(usize, (String, String))> = Vec::new();

    for (i, view) in views.iter().enumerate() {
        let Some(v) = view else { continue };
        let mut r = Report {
            flow: Some(&v.label),
            base: Some(&paths[i]),
            out,
        };
        // V24: duplicate data_flow_id.
        if let Tri::Known(id) = v.id {
            if let Some(&first) = ids.get(id) {
                r.error(
                    "V24",
                    &At::root().key("data_flow_id"),
                    &format!("data_flow_id {} is also used by flows[{first}]", quote(id)),
                    "sdp-meta onboarding fails with \"onboarding file have duplicated data_flow_ids!\"",
                    "give every flow of the onboarding its own data_flow_id",
                );
            } else {
                ids.insert(id, i);
            }
        }
        let bronze = v.layer(Layer::Bronze);
        let silver = v.layer(Layer::Silver);

        if let Some(b) = bronze
            && let Some(key) = table_key(b)
        {
            let auto_cdc = any_configured(
                b,
                &[
                    "cdc_apply_changes",
                    "cdc_apply_changes_flows",
                    "apply_changes_from_snapshot",
                ],
            );
            let first_writer = match bronze_writers.get(&key) {
                Some((first, _)) => {
                    same_target(Layer::Bronze, &key, *first, &views, &mut r);
                    false
                }
                None => {
                    bronze_writers.insert(key.clone(), (i, auto_cdc));
                    true
                }
            };
            if first_writer && let Tri::Known(g) = v.group {
                match bronze_names.get(&(g, key.1.clone())) {
                    Some((first, db)) if *db != key.0 => r.warn(
                        "V23",
                        &At::root().key("bronze").key("table"),
                        &format!(
                            "bronze.table {} is also written by {} in group {} (schema {db})",
                            quote(&key.1),
                            label_of(&views, *first),
                            quote(g)
                        ),
                        "in a pipeline using the legacy publishing mode (target) both land in the pipeline's schema, and the input views {table}_bronze_inputview collide",
                        "give the bronze tables of one group distinct names, or publish the pipeline with schema (direct publishing mode)",
                    ),
                    Some(_) => {}
                    None => {
                        bronze_names.insert((g, key.1.clone()), (i, key.0.clone()));
                    }
                }
            }
        }
        if let Some(s) = silver
            && let Some(key) = table_key(s)
        {
            let first_writer = match silver_writers.get(&key) {
                Some(first) => {
                    same_target(Layer::Silver, &key, *first, &views, &mut r);
                    false
                }
                None => {
                    silver_writers.insert(key.clone(), i);
                    true
                }
            };
            if first_writer {
                match silver_names.get(&key.1) {
                    Some((first, db)) if *db != key.0 => r.warn(
                        "V24",
                        &At::root().key("silver").key("table"),
                        &format!(
                            "silver.table {} is also the silver table of {} (schema {db})",
                            quote(&key.1),
                            label_of(&views, *first)
                        ),
                        "the silver transformations file is joined on the table name only, so both flows get the same select_exp / where_clause",
                        "give the silver tables distinct names",
                    ),
                    Some(_) => {}
                    None => {
                        silver_names.insert(key.1.clone(), (i, key.0.clone()));
                    }
                }
            }
        }
        // Silver-only flows read a bronze table another flow may write.
        if let (Some(_), Tri::Absent, Tri::Known(b)) = (silver, v.source, v.bronze)
            && let Some(key) = table_key(b)
        {
            readers.push((i, key));
        }

        runner_rules(v, ctx, &mut r);
        for layer in [Layer::Bronze, Layer::Silver] {
            if let Some(l) = v.layer(layer) {
                dq_cdc_rule(layer, l, ctx.build, &mut r);
            }
        }
        if ctx.uc_enabled == Tri::Known(false) {
            non_uc_rules(v, &mut r);
        }
        // Groups for V11.
        if let Tri::Known(g) = v.group {
            let bronze_snapshot = bronze.and_then(|_| v.format().map(|f| f == Format::Snapshot));
            let silver_snapshot = silver.and_then(|s| configured(s, "apply_changes_from_snapshot"));
            for (layer, snapshot) in [
                (Layer::Bronze, bronze_snapshot),
                (Layer::Silver, silver_snapshot),
            ] {
                let Some(snapshot) = snapshot else { continue };
                let facts = groups.entry((g, layer)).or_default();
                if snapshot {
                    facts.snapshot += 1;
                } else {
                    facts.others += 1;
                    facts.first_other.get_or_insert(i);
                }
            }
        }
    }

    // V18 across flows: silver-only flows reading another flow's AUTO CDC target.
    for (i, key) in readers {
        let Some((writer, _)) = bronze_writers.get(&key) else {
            continue;
        };
        let (Some(Some(v)), Some(Some(w))) = (views.get(i), views.get(*writer)) else {
            continue;
        };
        let (Some(s), Some(b)) = (v.silver.known(), w.layer(Layer::Bronze)) else {
            continue;
        };
        let mut r = Report {
            flow: Some(&v.label),
            base: Some(&paths[i]),
            out,
        };
        silver_reads_bronze_rules(b, s, Some(&w.label), &mut r);
    }

    // V11: a snapshot function breaks the non-snapshot flows of the layer on pre-fix builds.
    if ctx.build != Build::PreFix {
        return;
    }
    for ((group, layer), facts) in groups {
        let (Tri::Known(true), Some(first)) =
            (ctx.runner.function(layer, Some(group)), facts.first_other)
        else {
            continue;
        };
        let Some(Some(v)) = views.get(first) else {
            continue;
        };
        let ln = layer.name();
        let (field, what) = match layer {
            Layer::Bronze => {
                let f = v.format().map_or("?", Format::name);
                (
                    At::root().key("source").key("format"),
                    format!("source.format = {} is not a snapshot", quote(f)),
                )
            }
            Layer::Silver => (
                At::root().key("silver"),
                "silver has no apply_changes_from_snapshot".to_string(),
            ),
        };
        let group_is = if facts.snapshot > 0 {
            format!(
                "group {} mixes snapshot and non-snapshot {ln} flows",
                quote(group)
            )
        } else {
            format!("its group {} has no {ln} snapshot flow", quote(group))
        };
        let others = match facts.others {
            0 | 1 => String::new(),
            n => format!(
                " (and the group's {} other non-snapshot {ln} flow(s))",
                n - 1
            ),
        };
        let mut r = Report {
            flow: Some(&v.label),
            base: Some(&paths[first]),
            out,
        };
        r.error(
            "V11",
            &field,
            &format!("{what}, the runner passes {ln}_next_snapshot_and_version, and {group_is}"),
            &format!("sdp-meta before the #268 fix applies the function to every {ln} flow of the pipeline and registers no input view for this flow{others}, whose writes fail with dataset-not-found"),
            &format!("give snapshot and non-snapshot {ln} flows separate groups and runners (pass the function only where snapshot flows run), or run a build with the fixes (sdp_meta_version \"<version>+pr267\")"),
        );
    }
}

fn label_of(views: &[Option<FlowView>], i: usize) -> String {
    match views.get(i) {
        Some(Some(v)) => v.label.clone(),
        _ => format!("flows[{i}]"),
    }
}

/// Two flows writing the same table: `first` wrote it before flow `i`.
fn same_target(
    layer: Layer,
    key: &(String, String),
    first: usize,
    views: &[Option<FlowView>],
    r: &mut Report,
) {
    let ln = layer.name();
    r.error(
        "target",
        &At::root().key(ln).key("table"),
        &format!(
            "{ln} table {}.{} is also written by {}",
            key.0,
            key.1,
            label_of(views, first)
        ),
        "a table has one writer: two flows declaring it fail in one pipeline and conflict across pipelines",
        &format!("give each flow its own {ln} table (append_flow adds a second source to one table)"),
    );
}

/// V9 and V12: the bronze snapshot reader function.
fn runner_rules(v: &FlowView, ctx: &OnboardingCtx, r: &mut Report) {
    if v.layer(Layer::Bronze).is_none() || v.format() != Some(Format::Snapshot) {
        return;
    }
    let at = At::root().key("source").key("snapshot_format");
    let group = match v.group {
        Tri::Known(g) => Some(g),
        _ => None,
    };
    let function = ctx.runner.function(Layer::Bronze, group);
    match v.snapshot_format() {
        Tri::Known("delta") => match (function, ctx.build) {
            (Tri::Known(false), Build::PreFix) => r.error(
                "V9",
                &at,
                "source.snapshot_format = \"delta\" and the runner passes no bronze_next_snapshot_and_version",
                "sdp-meta before the #266 fix fails at pipeline start with \"Snapshot reader function not provided!\"",
                "set runner { bronze_snapshot_function = true } and pass bronze_next_snapshot_and_version in the runner, or run a build with the fixes (sdp_meta_version \"<version>+pr267\")",
            ),
            (Tri::Known(true), Build::PreFix) => r.warn(
                "V12",
                &at,
                "the runner passes bronze_next_snapshot_and_version but source.snapshot_format = \"delta\"",
                "sdp-meta before the #268 fix reads the built-in view and silently ignores the function (a full scan every run, and no column renames, so keys such as lfc_end_at cannot resolve)",
                "run a build with the fixes (sdp_meta_version \"<version>+pr267\"), or make sure the flow works without the function",
            ),
            _ => {}
        },
        Tri::Known(sf) if function == Tri::Known(false) && sf != "delta" => r.error(
            "V9",
            &at,
            &format!("source.snapshot_format = {} and the runner passes no bronze_next_snapshot_and_version", quote(sf)),
            "only delta snapshots have a built-in reader; sdp-meta fails at pipeline start with \"Snapshot reader function not provided!\"",
            "write a bronze_next_snapshot_and_version(latest_version, dataflowSpec) in the runner and set runner { bronze_snapshot_function = true }",
        ),
        _ => {}
    }
}

/// V13: expectations together with cdc_apply_changes, worded for the build.
fn dq_cdc_rule(layer: Layer, l: &Object, build: Build, r: &mut Report) {
    if configured(l, "cdc_apply_changes") != Some(true)
        || any_configured(l, &["expectations", "expectations_file"]) != Some(true)
    {
        return;
    }
    let ln = layer.name();
    let table = match text(l, "table") {
        Tri::Known(t) => t.to_string(),
        _ => "<table>".to_string(),
    };
    let why = match build {
        Build::PreFix => format!(
            "this build attaches the rules to the AUTO CDC target and evaluates them on raw change events: drop/fail rules see deletes and update pre-images, and expect_or_quarantine quarantines raw events (#265); builds with the fix behave differently and add a table {table}_dq"
        ),
        Build::Fixed => format!(
            "this build (#265 fix) writes the rules into an extra table {table}_dq, then applies changes from it into {table}: one more table to store and destroy, whose name must not collide with another flow's; drop/fail rules still see raw change events (deletes, update pre-images)"
        ),
        Build::Unknown => format!(
            "the rules run on raw change events (drop/fail rules see deletes and update pre-images), and builds with the #265 fix add a table {table}_dq"
        ),
    };
    r.warn(
        "V13",
        &At::root().key(ln).key("cdc_apply_changes"),
        &format!("{ln} has expectations together with {ln}.cdc_apply_changes"),
        &why,
        "keep only rules that hold for every change event (e.g. expect, not drop/fail on columns deletes leave null), or check the data quality in silver",
    );
}

/// `uc_enabled = false`: what sdp-meta then requires.
fn non_uc_rules(v: &FlowView, r: &mut Report) {
    let Some(b) = v.layer(Layer::Bronze) else {
        return;
    };
    if configured(b, "path") == Some(false) {
        r.error(
            "uc_path",
            &At::root().key("bronze").key("path"),
            "bronze.path is not set and the onboarding has uc_enabled = false",
            "without Unity Catalog sdp-meta onboarding fails with \"bronze_table_path_<env> not provided\"",
            "set bronze.path to the table's storage location, or use Unity Catalog (uc_enabled = true)",
        );
    }
    if v.format() == Some(Format::Snapshot)
        && let Tri::Known(src) = v.source
        && configured(src, "source_path") == Some(false)
    {
        r.error(
            "uc_path",
            &At::root().key("source").key("source_path"),
            "source.source_path is not set for a snapshot source and the onboarding has uc_enabled = false",
            "sdp-meta fails with \"source_path_<env> is missing in the source_details for snapshot source (required when Unity Catalog is not enabled)\"",
            "set source.source_path",
        );
    }
}

#[cfg(test)]
mod tests {
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
            J::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), value(v))).collect()),
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
        let mut out = Object::new();
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
                (Nesting::Single, Some(x)) => Value::Object(decode(&b.schema, x)),
                (_, None | Some(J::Null)) => Value::List(Vec::new()),
                (_, Some(J::Array(items))) => Value::List(
                    items
                        .iter()
                        .map(|x| Value::Object(decode(&b.schema, x)))
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
            Value::List(flows.iter().map(|f| Value::Object(flow(f))).collect()),
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
}
