//! sdp-meta (formerly dlt-meta) in the local workspace: what its onboarding wheel writes,
//! and what the update of a pipeline that runs its runner reads and sets up.
//!
//! Onboarding (the `python_wheel_task` of `databricks_labs_sdp_meta`, entry point `run`,
//! simulated in `jobs::tasks`) reads the onboarding file (JSON, or YAML which it first copies
//! next to itself as `<name>_yml_converted.json`) and writes one dataflowspec table per layer
//! it onboards, `{database}.{<layer>_dataflowspec_table}`: a MANAGED table in Unity Catalog
//! whose rows the state keeps here ([`SpecTable`]), as much of each as a run needs. A pipeline
//! whose configuration names `layer` and `<layer>.dataflowspecTable` runs sdp-meta's runner,
//! which reads the rows of its `<layer>.group` (or `<layer>.dataflowIds`) when the update
//! starts: a spec table, a delta source (bronze) or a bronze table (silver) that is not
//! there fails the update as Spark fails it; otherwise the update sets up each selected
//! flow's target, bronze first. Other sources (cloudFiles, kafka, eventhub, snapshot) are
//! not checked. All of it is the behaviour `sdp_meta_reads_its_sources`; off, onboarding
//! writes nothing and an update reads nothing.

use crate::behaviours::Behaviour;
use crate::errors::ApiError;
use crate::store::{Ctx, State};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One row of a dataflowspec table, as much of it as a pipeline's update needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecRow {
    /// `dataFlowGroup`, which `<layer>.group` selects.
    pub group: String,
    /// `sourceFormat`: `cloudFiles`, `delta`, `kafka`, `eventhub` or `snapshot` (bronze);
    /// `delta`, or `snapshot` for a silver snapshot flow.
    pub source_format: String,
    /// The table the flow reads, as its reader names it: `source_database.source_table` of
    /// a delta source (bronze), the bronze target (silver). None when it reads no table the
    /// local workspace checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `targetDetails`: `[catalog.]database.table`, where the flow writes.
    pub target: String,
}

/// A dataflowspec table's rows by `dataFlowId`, and the Unity Catalog table they were
/// written into (a table dropped and made again by someone else holds none of them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecTable {
    pub table_id: String,
    pub rows: BTreeMap<String, SpecRow>,
}

/// `[TABLE_OR_VIEW_NOT_FOUND]`, as Spark words it for a table it cannot resolve
/// (error-conditions.json; the message lines joined by newlines, then the SQLSTATE).
pub fn table_not_found(full: &str) -> String {
    let quoted: Vec<String> = full.split('.').map(|p| format!("`{p}`")).collect();
    format!(
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view {} cannot be found. Verify the spelling and \
         correctness of the schema and catalog.\nIf you did not qualify the name with a schema, \
         verify the current_schema() output, or qualify the name with the correct schema and \
         catalog.\nTo tolerate the error on drop use DROP VIEW IF EXISTS or DROP TABLE IF \
         EXISTS. SQLSTATE: 42P01",
        quoted.join(".")
    )
}

/// The layers a `layer` (or `onboard_layer`) value runs, bronze first.
fn layers(v: &str) -> Option<&'static [&'static str]> {
    match v.to_ascii_lowercase().as_str() {
        "bronze" => Some(&["bronze"]),
        "silver" => Some(&["silver"]),
        "bronze_silver" => Some(&["bronze", "silver"]),
        _ => None,
    }
}

/// The rows of the dataflowspec table `full` (`c.s.t`), if Unity Catalog has that table.
fn spec_rows<'a>(st: &'a State, full: &str) -> Option<Vec<(&'a String, &'a SpecRow)>> {
    let id = st
        .uc
        .tables
        .get(full)?
        .get("table_id")
        .and_then(Value::as_str);
    Some(
        st.pipelines
            .dataflow_specs
            .get(full)
            .filter(|t| Some(t.table_id.as_str()) == id)
            .map(|t| t.rows.iter().collect())
            .unwrap_or_default(),
    )
}

// ---------- onboarding ----------

/// Why sdp-meta's onboarding fails, having written nothing: the task fails with this
/// message, sdp-meta's own words after what failed.
#[derive(Debug, thiserror::Error)]
#[error("sdp-meta onboarding: {kind}")]
pub struct OnboardError {
    pub kind: OnboardFailure,
}

impl From<OnboardFailure> for OnboardError {
    fn from(kind: OnboardFailure) -> Self {
        OnboardError { kind }
    }
}

/// What fails an onboarding, as sdp-meta (or Spark, or the workspace) words it.
#[derive(Debug, thiserror::Error)]
pub enum OnboardFailure {
    #[error("onboard_layer argument missing in commandline")]
    NoLayer,
    /// Named parameters missing or empty, each quoted: `'version'`.
    #[error("missing attributes : {{{}}}", .0.join(", "))]
    MissingAttributes(Vec<String>),
    #[error("Onboarding file format not supported! Please provide a .json, .yml, or .yaml file")]
    FileFormat,
    /// The workspace refused a file or table the onboarding reads or writes.
    #[error("{}", .0.message)]
    Workspace(#[source] ApiError),
    #[error("the onboarding file '{path}' is not valid YAML: {source}")]
    InvalidYaml {
        path: String,
        source: serde_yaml_ng::Error,
    },
    #[error("the onboarding file '{path}' is not valid JSON: {source}")]
    InvalidJson {
        path: String,
        source: serde_json::Error,
    },
    #[error("the onboarding file '{path}' is not an array of flows")]
    NotAnArray { path: String },
    #[error("the onboarding file '{path}' holds a row that is not an object: {row}")]
    RowNotAnObject { path: String, row: Value },
    #[error("onboarding file have duplicated data_flow_ids! ")]
    DuplicateIds,
    #[error("Missing field={0} in onboarding_row")]
    MissingField(String),
    #[error("Source format not provided for row={0}")]
    NoSourceFormat(Value),
    #[error("source_format='{format}' is not supported. Use one of: {}.", SOURCE_FORMATS.join(", "))]
    SourceFormat { format: String },
    #[error(
        "Missing bronze source fields (bronze_database_{env}/bronze_table) for silver data_flow_id={id}"
    )]
    NoBronzeSource { env: String, id: String },
    /// The merge path reads the dataflowspec table first.
    #[error("{}", table_not_found(.0))]
    TableNotFound(String),
}

/// A scalar of an onboarding row as the string Spark reads it (`data_flow_id: 1` is "1"); an
/// empty string counts as absent.
fn text(row: &Map<String, Value>, key: &str) -> Option<String> {
    let s = match row.get(key)? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    (!s.trim().is_empty()).then_some(s)
}

const SOURCE_FORMATS: &[&str] = &["cloudFiles", "delta", "eventhub", "kafka", "snapshot"];

/// `[catalog.]database.table`: a catalog only in front of a one-part database.
fn qualified(catalog: Option<String>, database: &str, table: &str) -> String {
    match catalog {
        Some(c) if !database.contains('.') => format!("{c}.{database}.{table}"),
        _ => format!("{database}.{table}"),
    }
}

/// The bronze spec row of an onboarding row, if it has one (`bronze_database_{env}` and
/// `source_details` given).
fn bronze_row(
    row: &Map<String, Value>,
    env: &str,
) -> Result<Option<(String, SpecRow)>, OnboardFailure> {
    let Some(database) = text(row, &format!("bronze_database_{env}")) else {
        return Ok(None);
    };
    let Some(details) = row
        .get("source_details")
        .and_then(Value::as_object)
        .filter(|d| !d.is_empty())
    else {
        return Ok(None);
    };
    let field = |k: &str| text(row, k).ok_or_else(|| OnboardFailure::MissingField(k.into()));
    let id = field("data_flow_id")?;
    let group = field("data_flow_group")?;
    let table = field("bronze_table")?;
    let format = text(row, "source_format")
        .ok_or_else(|| OnboardFailure::NoSourceFormat(Value::Object(row.clone())))?;
    let Some(format) = SOURCE_FORMATS
        .iter()
        .find(|f| f.eq_ignore_ascii_case(&format))
    else {
        return Err(OnboardFailure::SourceFormat { format });
    };
    // sdp-meta 0.1.0 reads a delta source as `readStream.table(f"{source_database}.{source_table}")`:
    // the catalog it stored (`source_catalog_{env}`) is not used.
    let source = match (
        *format,
        text(details, "source_database"),
        text(details, "source_table"),
    ) {
        ("delta", Some(db), Some(t)) => Some(format!("{db}.{t}")),
        _ => None,
    };
    let target = qualified(
        text(row, &format!("bronze_catalog_{env}")),
        &database,
        &table,
    );
    Ok(Some((
        id,
        SpecRow {
            group,
            source_format: (*format).to_string(),
            source,
            target,
        },
    )))
}

/// The silver spec row of an onboarding row, if it has one (`silver_database_{env}` given):
/// it reads the bronze table of the same row.
fn silver_row(
    row: &Map<String, Value>,
    env: &str,
) -> Result<Option<(String, SpecRow)>, OnboardFailure> {
    let Some(database) = text(row, &format!("silver_database_{env}")) else {
        return Ok(None);
    };
    let field = |k: &str| text(row, k).ok_or_else(|| OnboardFailure::MissingField(k.into()));
    let id = field("data_flow_id")?;
    let group = field("data_flow_group")?;
    let table = field("silver_table")?;
    let source = match (
        text(row, &format!("bronze_database_{env}")),
        text(row, "bronze_table"),
    ) {
        (Some(db), Some(t)) => Some(qualified(
            text(row, &format!("bronze_catalog_{env}")),
            &db,
            &t,
        )),
        _ if row.get("silver_cdc_apply_changes_flows").is_some() => None,
        _ => {
            return Err(OnboardFailure::NoBronzeSource {
                env: env.to_string(),
                id,
            });
        }
    };
    let snapshot = row
        .get("silver_apply_changes_from_snapshot")
        .is_some_and(|v| !v.is_null());
    let target = qualified(
        text(row, &format!("silver_catalog_{env}")),
        &database,
        &table,
    );
    Ok(Some((
        id,
        SpecRow {
            group,
            source_format: if snapshot { "snapshot" } else { "delta" }.to_string(),
            source,
            target,
        },
    )))
}

/// The onboarding file's rows: a JSON or YAML array of objects (one object is one row, as
/// Spark reads it).
fn read_rows(st: &State, path: &str) -> Result<Vec<Map<String, Value>>, OnboardFailure> {
    let lower = path.to_ascii_lowercase();
    let yaml = lower.ends_with(".yml") || lower.ends_with(".yaml");
    if !yaml && !lower.ends_with(".json") {
        return Err(OnboardFailure::FileFormat);
    }
    let bytes = crate::files::read_file(st, path)
        .map(|(b, _)| b)
        .map_err(OnboardFailure::Workspace)?;
    let parsed: Value = if yaml {
        serde_yaml_ng::from_slice(bytes).map_err(|source| OnboardFailure::InvalidYaml {
            path: path.to_string(),
            source,
        })?
    } else {
        serde_json::from_slice(bytes).map_err(|source| OnboardFailure::InvalidJson {
            path: path.to_string(),
            source,
        })?
    };
    let items = match parsed {
        Value::Array(items) => items,
        one @ Value::Object(_) => vec![one],
        _ => {
            return Err(OnboardFailure::NotAnArray {
                path: path.to_string(),
            });
        }
    };
    items
        .into_iter()
        .map(|v| match v {
            Value::Object(m) => Ok(m),
            row => Err(OnboardFailure::RowNotAnObject {
                path: path.to_string(),
                row,
            }),
        })
        .collect()
}

/// What a successful onboarding (`python_wheel_task` of `databricks_labs_sdp_meta`, entry
/// point `run`, with these named parameters) writes: each layer's dataflowspec table in
/// Unity Catalog, its rows replaced (`overwrite` = "True") or merged on `data_flow_id`
/// (which needs the table to exist already), and, for a YAML onboarding file, its JSON copy
/// next to it. Or why the onboarding fails, written nothing. Paths without Unity Catalog
/// (`uc_enabled` not "true") are not modelled and write nothing.
pub fn onboard(
    st: &mut State,
    ctx: &Ctx,
    named: &BTreeMap<String, String>,
) -> Result<(), OnboardError> {
    if !ctx.behaviours.on(Behaviour::SdpMetaReadsItsSources)
        || !named
            .get("uc_enabled")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return Ok(());
    }
    let layers = named
        .get("onboard_layer")
        .and_then(|l| layers(l))
        .ok_or(OnboardFailure::NoLayer)?;
    let mut required = vec![
        "onboarding_file_path".to_string(),
        "database".into(),
        "env".into(),
        "import_author".into(),
        "version".into(),
        "overwrite".into(),
    ];
    required.extend(layers.iter().map(|l| format!("{l}_dataflowspec_table")));
    let missing: BTreeSet<String> = required
        .into_iter()
        .filter(|k| named.get(k).is_none_or(|v| v.is_empty()))
        .map(|k| format!("'{k}'"))
        .collect();
    if !missing.is_empty() {
        let list: Vec<String> = missing.into_iter().collect();
        return Err(OnboardFailure::MissingAttributes(list).into());
    }
    let param = |k: &str| named.get(k).map(String::as_str).unwrap_or_default();
    let path = crate::files::normalize(param("onboarding_file_path"))
        .map_err(OnboardFailure::Workspace)?;
    let env = param("env");
    let rows = read_rows(st, &path)?;
    let mut seen = BTreeSet::new();
    if rows
        .iter()
        .filter_map(|r| text(r, "data_flow_id"))
        .any(|id| !seen.insert(id))
    {
        return Err(OnboardFailure::DuplicateIds.into());
    }
    let database = param("database").to_lowercase();
    let overwrite = param("overwrite") == "True";
    // Everything is read and checked before anything is written.
    let mut writes: Vec<(String, BTreeMap<String, SpecRow>)> = Vec::new();
    for layer in layers {
        let mut specs = BTreeMap::new();
        for row in &rows {
            let spec = if *layer == "bronze" {
                bronze_row(row, env)
            } else {
                silver_row(row, env)
            };
            if let Some((id, spec)) = spec? {
                specs.insert(id, spec);
            }
        }
        let full = format!(
            "{database}.{}",
            param(&format!("{layer}_dataflowspec_table"))
        )
        .to_lowercase();
        if !overwrite && !st.uc.tables.contains_key(&full) {
            // The merge path reads the table first.
            return Err(OnboardFailure::TableNotFound(full).into());
        }
        writes.push((full, specs));
    }
    if path.to_ascii_lowercase().ends_with(".yml") || path.to_ascii_lowercase().ends_with(".yaml") {
        let stem = path.rsplit_once('.').map_or(path.as_str(), |(s, _)| s);
        let json = serde_json::to_vec_pretty(&rows).unwrap_or_default();
        crate::files::put_file(st, ctx, &format!("{stem}_yml_converted.json"), json, true)
            .map_err(OnboardFailure::Workspace)?;
    }
    for (full, specs) in writes {
        let table = crate::uc::put_table(st, ctx, &full, "MANAGED", None)
            .map_err(OnboardFailure::Workspace)?;
        let table_id = table["table_id"].as_str().unwrap_or_default().to_string();
        let mut rows = match st.pipelines.dataflow_specs.get(&full) {
            Some(t) if !overwrite && t.table_id == table_id => t.rows.clone(),
            _ => BTreeMap::new(),
        };
        rows.extend(specs);
        st.pipelines
            .dataflow_specs
            .insert(full, SpecTable { table_id, rows });
    }
    Ok(())
}

// ---------- a pipeline's update ----------

/// Where a pipeline resolves the names its code uses: its catalog, its schema (`schema`, or
/// `target` in the legacy publishing mode, where sdp-meta writes every table unqualified).
struct Names<'a> {
    catalog: Option<&'a str>,
    schema: Option<&'a str>,
    legacy: bool,
}

impl<'a> Names<'a> {
    fn of(spec: &'a Map<String, Value>) -> Names<'a> {
        let s = |k: &str| {
            spec.get(k)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
        };
        Names {
            catalog: s("catalog"),
            schema: s("schema").or(s("target")),
            legacy: s("target").is_some(),
        }
    }

    /// `c.s.t` as it is, `s.t` in the pipeline's catalog, `t` in its catalog and schema;
    /// None when that cannot be told (a pipeline without a catalog reads the Hive
    /// metastore, which the local workspace does not model).
    fn resolve(&self, name: &str) -> Option<String> {
        let parts: Vec<String> = name
            .split('.')
            .map(|p| p.trim().trim_matches('`').to_lowercase())
            .collect();
        if parts.iter().any(String::is_empty) {
            return None;
        }
        let full = match parts.as_slice() {
            [_, _, _] => parts.join("."),
            [s, t] => format!("{}.{s}.{t}", self.catalog?),
            [t] => format!("{}.{}.{t}", self.catalog?, self.schema?),
            _ => return None,
        };
        Some(full.to_lowercase())
    }

    /// Where a flow's target lands: where the spec says, or in the legacy publishing mode
    /// the pipeline's own schema.
    fn target(&self, target: &str) -> Option<String> {
        if self.legacy {
            self.resolve(target.rsplit('.').next()?)
        } else {
            self.resolve(target)
        }
    }
}

fn conf<'a>(c: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    c.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// Why sdp-meta's runner fails a pipeline's update: the update's failure says it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    #[error("parameter {layer}.dataflowspecTable is missing in sparkConf")]
    NoSpecTable { layer: &'static str },
    /// Neither a group nor data flow ids select the layer's flows.
    #[error("please provide {layer}.group or {layer}.dataflowIds in spark.conf")]
    NoSelection { layer: &'static str },
    /// A dataflowspec table, or a table a flow reads, that Spark cannot resolve.
    #[error("{}", table_not_found(.0))]
    TableNotFound(String),
}

/// What an update (asked for with `request`) of the pipeline `spec` does as sdp-meta's
/// runner: the tables it sets up, in order (bronze first; none when it only validates), or
/// why it fails. Nothing for a pipeline whose configuration names no sdp-meta layer and
/// dataflowspec table.
pub fn update_tables(
    st: &State,
    ctx: &Ctx,
    spec: &Map<String, Value>,
    request: &Map<String, Value>,
) -> Result<Vec<String>, UpdateError> {
    let Some(c) = spec.get("configuration").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    let Some(layers) = conf(c, "layer").and_then(layers) else {
        return Ok(Vec::new());
    };
    if !ctx.behaviours.on(Behaviour::SdpMetaReadsItsSources)
        || !layers
            .iter()
            .any(|l| c.contains_key(&format!("{l}.dataflowspecTable")))
    {
        return Ok(Vec::new());
    }
    let names = Names::of(spec);
    let mut made: Vec<String> = Vec::new();
    for layer in layers {
        let table = conf(c, &format!("{layer}.dataflowspecTable"))
            .ok_or(UpdateError::NoSpecTable { layer })?;
        let group = conf(c, &format!("{layer}.group"));
        let ids: Option<BTreeSet<String>> = conf(c, &format!("{layer}.dataflowIds")).map(|v| {
            v.split(',')
                .map(|i| i.trim().trim_matches(|q| q == '"' || q == '\'').to_string())
                .filter(|i| !i.is_empty())
                .collect()
        });
        if group.is_none() && ids.is_none() {
            return Err(UpdateError::NoSelection { layer });
        }
        let Some(full) = names.resolve(table) else {
            continue;
        };
        let rows = spec_rows(st, &full).ok_or_else(|| UpdateError::TableNotFound(full.clone()))?;
        let selected = rows.into_iter().filter(|(id, row)| {
            group.is_none_or(|g| row.group == g) && ids.as_ref().is_none_or(|s| s.contains(*id))
        });
        for (_, row) in selected {
            // A table this update sets up (bronze, read by silver) resolves in its graph.
            if let Some(source) = row.source.as_deref().and_then(|s| names.resolve(s))
                && !st.uc.tables.contains_key(&source)
                && !made.contains(&source)
            {
                return Err(UpdateError::TableNotFound(source));
            }
            if let Some(t) = names.target(&row.target)
                && !made.contains(&t)
            {
                made.push(t);
            }
        }
    }
    if request.get("validate_only").and_then(Value::as_bool) == Some(true) {
        made.clear();
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    use super::super::model::{start, update_outcome};
    use super::super::{Pipeline, Update};
    use super::*;
    use serde_json::json;

    fn ctx() -> Ctx<'static> {
        Ctx::for_test(1_000, 100)
    }

    fn off() -> Ctx<'static> {
        let mut c = ctx();
        c.behaviours = c.behaviours.without(Behaviour::SdpMetaReadsItsSources);
        c
    }

    const FILE: &str = "/Volumes/main/specs/conf/onboarding.json";

    /// Catalog `main` with schemas raw, specs (holding the volume conf), bronze and silver.
    fn workspace() -> State {
        let mut st = State::new("u@x", 0);
        for s in ["raw", "specs", "bronze", "silver"] {
            st.uc.schemas.insert(format!("main.{s}"), Map::new());
        }
        st.uc.volumes.insert("main.specs.conf".into(), Map::new());
        st
    }

    fn flow(id: &str, group: &str, format: &str, source_table: &str) -> Value {
        json!({"data_flow_id": id, "data_flow_group": group, "source_format": format,
            "source_details": {"source_database": "main.raw", "source_table": source_table,
                "source_path_prod": "/Volumes/main/raw/landing/x"},
            "bronze_database_prod": "main.bronze", "bronze_table": source_table,
            "silver_database_prod": "main.silver", "silver_table": source_table,
            "silver_transformation_json_prod": "/Volumes/main/specs/conf/t.json"})
    }

    fn put(st: &mut State, path: &str, content: &str) {
        crate::files::put_file(st, &ctx(), path, content.as_bytes().to_vec(), true).unwrap();
    }

    fn params(extra: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut m: BTreeMap<String, String> = [
            ("onboard_layer", "bronze_silver"),
            ("onboarding_file_path", FILE),
            ("database", "main.specs"),
            ("env", "prod"),
            ("bronze_dataflowspec_table", "bronze_spec"),
            ("silver_dataflowspec_table", "silver_spec"),
            ("import_author", "me"),
            ("version", "v1"),
            ("overwrite", "True"),
            ("uc_enabled", "True"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        for (k, v) in extra {
            m.insert((*k).to_string(), (*v).to_string());
        }
        m
    }

    fn ids(st: &State, table: &str) -> Vec<String> {
        st.pipelines.dataflow_specs[table]
            .rows
            .keys()
            .cloned()
            .collect()
    }

    fn pipeline(st: &mut State, id: &str, conf: Value) {
        let Value::Object(spec) = json!({"name": id, "catalog": "main", "schema": "bronze",
            "configuration": conf})
        else {
            unreachable!()
        };
        st.pipelines.pipelines.insert(
            id.into(),
            Pipeline {
                id: id.into(),
                spec,
                parameters: None,
                run_as: None,
                creator: "u@x".into(),
                last_modified: 0,
                updates: Vec::<Update>::new(),
                deleting_until: None,
                keep_tables: false,
            },
        );
    }

    fn bronze_conf(group: &str) -> Value {
        json!({"layer": "bronze", "bronze.dataflowspecTable": "main.specs.bronze_spec",
            "bronze.group": group})
    }

    /// Starts an update of `id` after its previous one ended (as `c` has the behaviours);
    /// its end state and failure.
    fn update(st: &mut State, c: &Ctx, id: &str) -> (&'static str, Option<String>) {
        let now = 10_000 * i64::try_from(st.pipelines.pipelines[id].updates.len()).unwrap() + c.now;
        let mut at = Ctx::for_test(now, 100);
        at.behaviours = c.behaviours;
        let uid = start(st, &at, id, "API_CALL", Map::new()).unwrap();
        let (state, _, failure) = update_outcome(st, id, &uid, now + 5_000).unwrap();
        (state, failure)
    }

    fn table(st: &mut State, full: &str) {
        crate::uc::put_table(st, &ctx(), full, "MANAGED", None).unwrap();
    }

    #[test]
    fn onboarding_writes_each_layers_spec_rows_and_overwrites_or_merges_them() {
        let mut st = workspace();
        let two = json!([
            flow("1", "A", "delta", "orders"),
            flow("2", "B", "cloudFiles", "files")
        ]);
        put(&mut st, FILE, &two.to_string());
        onboard(&mut st, &ctx(), &params(&[])).unwrap();
        for t in ["main.specs.bronze_spec", "main.specs.silver_spec"] {
            assert_eq!(st.uc.tables[t]["table_type"], "MANAGED");
            assert_eq!(ids(&st, t), ["1", "2"]);
        }
        let bronze = &st.pipelines.dataflow_specs["main.specs.bronze_spec"].rows;
        assert_eq!(
            bronze["1"],
            SpecRow {
                group: "A".into(),
                source_format: "delta".into(),
                source: Some("main.raw.orders".into()),
                target: "main.bronze.orders".into(),
            }
        );
        assert_eq!(bronze["2"].source_format, "cloudFiles");
        assert_eq!(bronze["2"].source, None);
        let silver = &st.pipelines.dataflow_specs["main.specs.silver_spec"].rows;
        assert_eq!(silver["1"].source.as_deref(), Some("main.bronze.orders"));
        assert_eq!(silver["1"].target, "main.silver.orders");

        // Merged on data_flow_id: 3 added, 1 updated, 2 kept.
        let next = json!([
            flow("1", "A2", "delta", "orders"),
            flow("3", "A", "delta", "x")
        ]);
        put(&mut st, FILE, &next.to_string());
        onboard(&mut st, &ctx(), &params(&[("overwrite", "False")])).unwrap();
        assert_eq!(ids(&st, "main.specs.bronze_spec"), ["1", "2", "3"]);
        assert_eq!(
            st.pipelines.dataflow_specs["main.specs.bronze_spec"].rows["1"].group,
            "A2"
        );
        // Overwritten: only what the file has.
        onboard(&mut st, &ctx(), &params(&[])).unwrap();
        assert_eq!(ids(&st, "main.specs.bronze_spec"), ["1", "3"]);

        // A bronze-only onboarding writes the bronze table only.
        let mut st = workspace();
        put(&mut st, FILE, &two.to_string());
        onboard(&mut st, &ctx(), &params(&[("onboard_layer", "bronze")])).unwrap();
        assert!(st.uc.tables.contains_key("main.specs.bronze_spec"));
        assert!(!st.uc.tables.contains_key("main.specs.silver_spec"));
    }

    #[test]
    fn onboarding_reads_yaml_and_leaves_its_json_copy_next_to_it() {
        let mut st = workspace();
        let yml = "/Volumes/main/specs/conf/onboarding.yml";
        put(
            &mut st,
            yml,
            "- data_flow_id: 7\n  data_flow_group: A\n  source_format: DELTA\n  source_details:\n    \
             source_database: main.raw\n    source_table: t\n  bronze_database_prod: main.bronze\n  \
             bronze_table: t\n",
        );
        onboard(
            &mut st,
            &ctx(),
            &params(&[("onboarding_file_path", yml), ("onboard_layer", "bronze")]),
        )
        .unwrap();
        let row = &st.pipelines.dataflow_specs["main.specs.bronze_spec"].rows["7"];
        assert_eq!(row.source_format, "delta");
        let (copy, _) = crate::files::read_file(
            &st,
            "/Volumes/main/specs/conf/onboarding_yml_converted.json",
        )
        .unwrap();
        let copy: Value = serde_json::from_slice(copy).unwrap();
        assert_eq!(copy[0]["data_flow_id"], 7);
    }

    #[test]
    fn onboarding_fails_as_sdp_meta_does_and_then_writes_nothing() {
        let mut st = workspace();
        let dup = json!([flow("1", "A", "delta", "a"), flow("1", "A", "delta", "b")]);
        put(&mut st, FILE, &dup.to_string());
        let e = onboard(&mut st, &ctx(), &params(&[]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "sdp-meta onboarding: onboarding file have duplicated data_flow_ids! "
        );
        put(
            &mut st,
            FILE,
            &json!([flow("1", "A", "parquet", "a")]).to_string(),
        );
        let e = onboard(&mut st, &ctx(), &params(&[]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("source_format='parquet' is not supported"),
            "{e}"
        );
        put(
            &mut st,
            FILE,
            &json!([flow("1", "A", "delta", "a")]).to_string(),
        );
        let e = onboard(&mut st, &ctx(), &params(&[("version", "")]))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "sdp-meta onboarding: missing attributes : {'version'}");
        let e = onboard(&mut st, &ctx(), &params(&[("onboard_layer", "gold")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("onboard_layer argument missing"), "{e}");
        // The merge path reads the table, which is not there yet.
        let e = onboard(&mut st, &ctx(), &params(&[("overwrite", "true")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[TABLE_OR_VIEW_NOT_FOUND] The table or view `main`.`specs`.`bronze_spec` cannot be found."),
            "{e}"
        );
        assert!(st.uc.tables.is_empty() && st.pipelines.dataflow_specs.is_empty());
        // Off: nothing is read or written.
        put(&mut st, FILE, &dup.to_string());
        onboard(&mut st, &off(), &params(&[])).unwrap();
        assert!(st.uc.tables.is_empty() && st.pipelines.dataflow_specs.is_empty());
    }

    #[test]
    fn an_update_fails_without_its_spec_table_or_a_delta_source_and_sets_up_its_targets() {
        let mut st = workspace();
        pipeline(&mut st, "b", bronze_conf("A"));
        let (state, failure) = update(&mut st, &ctx(), "b");
        assert_eq!(state, "FAILED");
        assert!(
            failure.unwrap().starts_with(
                "[TABLE_OR_VIEW_NOT_FOUND] The table or view `main`.`specs`.`bronze_spec` cannot be found. Verify the spelling and correctness of the schema and catalog.\n"
            )
        );

        let two = json!([
            flow("1", "A", "delta", "orders"),
            flow("2", "A", "kafka", "events"),
            flow("3", "B", "delta", "other")
        ]);
        put(&mut st, FILE, &two.to_string());
        onboard(&mut st, &ctx(), &params(&[])).unwrap();
        let (state, failure) = update(&mut st, &ctx(), "b");
        assert_eq!(state, "FAILED");
        let failure = failure.unwrap();
        assert!(
            failure.contains("The table or view `main`.`raw`.`orders` cannot be found")
                && failure.ends_with("SQLSTATE: 42P01"),
            "{failure}"
        );
        assert!(!st.uc.tables.contains_key("main.bronze.orders"));

        // The source lands; the kafka flow's source is not checked, group B's not read.
        table(&mut st, "main.raw.orders");
        assert_eq!(update(&mut st, &ctx(), "b"), ("COMPLETED", None));
        for t in ["main.bronze.orders", "main.bronze.events"] {
            assert_eq!(st.uc.tables[t]["table_type"], "STREAMING_TABLE", "{t}");
            assert_eq!(st.uc.tables[t]["pipeline_id"], "b", "{t}");
        }
        assert!(!st.uc.tables.contains_key("main.bronze.other"));

        // Selected by id instead of group.
        pipeline(
            &mut st,
            "ids",
            json!({"layer": "bronze", "bronze.dataflowspecTable": "main.specs.bronze_spec",
                "bronze.dataflowIds": "'3'"}),
        );
        let (state, failure) = update(&mut st, &ctx(), "ids");
        assert_eq!(state, "FAILED");
        assert!(failure.unwrap().contains("`main`.`raw`.`other`"));
    }

    #[test]
    fn silver_needs_its_bronze_tables_unless_the_same_update_sets_them_up() {
        let mut st = workspace();
        put(
            &mut st,
            FILE,
            &json!([flow("1", "A", "delta", "orders")]).to_string(),
        );
        onboard(&mut st, &ctx(), &params(&[])).unwrap();
        table(&mut st, "main.raw.orders");
        pipeline(
            &mut st,
            "s",
            json!({"layer": "silver", "silver.dataflowspecTable": "main.specs.silver_spec",
                "silver.group": "A"}),
        );
        let (state, failure) = update(&mut st, &ctx(), "s");
        assert_eq!(state, "FAILED");
        assert!(
            failure
                .unwrap()
                .contains("The table or view `main`.`bronze`.`orders` cannot be found")
        );
        assert!(!st.uc.tables.contains_key("main.silver.orders"));

        // bronze_silver: bronze sets up the table silver reads, in the same update.
        pipeline(
            &mut st,
            "bs",
            json!({"layer": "bronze_silver",
                "bronze.dataflowspecTable": "main.specs.bronze_spec", "bronze.group": "A",
                "silver.dataflowspecTable": "main.specs.silver_spec", "silver.group": "A"}),
        );
        assert_eq!(update(&mut st, &ctx(), "bs"), ("COMPLETED", None));
        assert_eq!(st.uc.tables["main.silver.orders"]["pipeline_id"], "bs");
        // Now the bronze table is there, the silver pipeline runs.
        assert_eq!(update(&mut st, &ctx(), "s"), ("COMPLETED", None));
        assert_eq!(st.uc.tables["main.silver.orders"]["pipeline_id"], "s");
    }

    #[test]
    fn configuration_errors_and_names_resolve_as_the_runner_resolves_them() {
        let st = workspace();
        let spec = |conf: Value| {
            let Value::Object(m) =
                json!({"catalog": "main", "target": "legacy", "configuration": conf})
            else {
                unreachable!()
            };
            m
        };
        let e = update_tables(
            &st,
            &ctx(),
            &spec(json!({"layer": "bronze", "bronze.dataflowspecTable": "main.specs.t"})),
            &Map::new(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "please provide bronze.group or bronze.dataflowIds in spark.conf"
        );
        let e = update_tables(
            &st,
            &ctx(),
            &spec(
                json!({"layer": "bronze_silver", "bronze.dataflowspecTable": "main.specs.t",
                "bronze.group": "A"}),
            ),
            &Map::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`main`.`specs`.`t`"), "{e}");
        // Not an sdp-meta pipeline, or the behaviour off: nothing read.
        for (c, conf) in [
            (
                ctx(),
                json!({"layer": "gold", "gold.dataflowspecTable": "x"}),
            ),
            (ctx(), json!({"layer": "bronze"})),
            (
                off(),
                json!({"layer": "bronze", "bronze.dataflowspecTable": "main.specs.t", "bronze.group": "A"}),
            ),
        ] {
            assert_eq!(
                update_tables(&st, &c, &spec(conf), &Map::new()),
                Ok(Vec::new())
            );
        }
        let legacy = spec(json!({}));
        let n = Names::of(&legacy);
        assert_eq!(n.resolve("specs.t").as_deref(), Some("main.specs.t"));
        assert_eq!(n.resolve("`T`").as_deref(), Some("main.legacy.t"));
        assert_eq!(
            n.target("main.bronze.orders").as_deref(),
            Some("main.legacy.orders")
        );
    }

    #[test]
    fn with_the_behaviour_off_an_update_reads_nothing() {
        let mut st = workspace();
        pipeline(&mut st, "b", bronze_conf("A"));
        assert_eq!(update(&mut st, &off(), "b"), ("COMPLETED", None));
        assert!(st.uc.tables.is_empty());
    }
}
