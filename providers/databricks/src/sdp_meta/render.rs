//! Rendering an `sdp_meta_onboarding` and its flows into the files released sdp-meta 0.1.0
//! reads and the values the rest of a configuration needs: the onboarding job's named
//! parameters and each group's pipeline configuration (docs/architecture.md, sdp-meta
//! onboarding facts).
//!
//! Pure functions over decoded configuration objects. The onboarding file is a JSON array of
//! flow rows, one per flow in the given order, each with a fixed key order: `data_flow_id`,
//! `data_flow_group`, `source_system`, `source_format`, `source_details`, then the `bronze_*`
//! keys, then the `silver_*` keys. Unset fields are left out (never `""`, which would break
//! Spark's type unification over the rows), except `<layer>_quarantine_table`, which every row
//! carries (null when unset) as soon as any row of the file has expectations for that layer
//! (0.1.0 indexes the key directly and fails when no row has it: V4).
//!
//! Besides the onboarding file the set holds one expectations file per flow and layer that
//! has an `expectations` block (`dqe/<data_flow_id>/<layer>_expectations.json`) and one
//! `silver_transformations.json` with the select/where of every silver flow that sets them,
//! referenced by every silver row (0.1.0 requires the key unless the row uses
//! `silver_cdc_apply_changes_flows`).
//!
//! A flow's keys are written by walking the tables of [`super::fields`], in their order.

use super::checks::LABEL_ATTR;
use super::fields::{
    Conv, DATA_FLOW_ID, EXPECTATIONS, FLOW, Field, LAYER, SOURCE_DETAILS, SOURCE_DETAILS_KEY,
    SOURCE_FORMAT, Special, TRANSFORMATION,
};
use super::schema::{
    DEFAULT_BRONZE_SPEC_TABLE, DEFAULT_DIRECTORY, DEFAULT_FILE_NAME, DEFAULT_IMPORT_AUTHOR,
    DEFAULT_OVERWRITE, DEFAULT_PIPELINE_MODE, DEFAULT_SILVER_SPEC_TABLE, DEFAULT_UC_ENABLED,
    DEFAULT_VERSION, flow_schema, onboarding_schema,
};
use brickform_core::provider::{AttrType, Schema};
use brickform_core::value::{Object, Value, quote};
use serde_json::{Map, Value as Json};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Why a configuration cannot be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// A problem with one field of one flow. `field` is the path within the flow
    /// (`bronze.cdc_apply_changes.keys`); `data_flow_id` is `flows[i]` when the flow has none.
    #[error("flow {data_flow_id}: {field}: {message}")]
    Flow {
        data_flow_id: String,
        field: String,
        message: String,
    },
    #[error(
        "flows[{first}] and flows[{second}] both have data_flow_id {}; sdp-meta rejects an onboarding file with duplicate data_flow_ids",
        quote(.data_flow_id)
    )]
    DuplicateId {
        data_flow_id: String,
        first: usize,
        second: usize,
    },
    /// A problem with an attribute of the onboarding itself.
    #[error("{field}: {message}")]
    Onboarding { field: String, message: String },
    /// A value the rendering needs is known only after apply.
    #[error("{field} is known only after apply")]
    Unknown { field: String },
}

/// Group → layer (`bronze` / `silver`) → pipeline configuration.
pub type PipelineConfiguration = BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>;

/// What an onboarding renders to.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// `<volume_path>/<directory>/<file_name>`.
    pub onboarding_path: String,
    /// The onboarding file's rows as pretty-printed JSON (2-space indent, trailing newline),
    /// also when the file itself is YAML.
    pub onboarding_json: String,
    /// The rows, as JSON values (what `onboarding_json` holds).
    pub rows: Vec<Json>,
    /// Every file of the set: absolute `/Volumes/…` path → content. Includes the onboarding
    /// file itself (YAML when `file_name` ends in `.yml` / `.yaml`), the expectations files
    /// and the silver transformations file.
    pub files: BTreeMap<String, String>,
    /// `bronze`, `silver` or `bronze_silver`.
    pub onboard_layer: String,
    /// The onboarding job's `python_wheel_task.named_parameters` (all strings).
    pub named_parameters: BTreeMap<String, String>,
    pub pipeline_configuration: PipelineConfiguration,
    /// `<database>.<bronze_dataflowspec_table>` when some flow has a bronze layer.
    pub bronze_spec_table: Option<String>,
    /// `<database>.<silver_dataflowspec_table>` when some flow has a silver layer.
    pub silver_spec_table: Option<String>,
    /// The flow groups, sorted, without duplicates.
    pub groups: Vec<String>,
}

impl Rendered {
    /// The onboarding's derived attributes (`schema::ONBOARDING_DERIVED`) as values.
    pub fn attributes(&self) -> Object {
        let mut o = Object::default();
        o.insert(
            "onboarding_file_path".into(),
            Value::from(self.onboarding_path.as_str()),
        );
        o.insert(
            "onboarding_json".into(),
            Value::from(self.onboarding_json.as_str()),
        );
        o.insert("files".into(), string_map_value(&self.files));
        o.insert(
            "onboard_layer".into(),
            Value::from(self.onboard_layer.as_str()),
        );
        o.insert(
            "named_parameters".into(),
            string_map_value(&self.named_parameters),
        );
        o.insert(
            "pipeline_configuration".into(),
            Value::Object(
                self.pipeline_configuration
                    .iter()
                    .map(|(g, layers)| {
                        (
                            g.clone(),
                            Value::Object(
                                layers
                                    .iter()
                                    .map(|(l, conf)| (l.clone(), string_map_value(conf)))
                                    .collect::<brickform_core::value::Object>()
                                    .into(),
                            ),
                        )
                    })
                    .collect::<brickform_core::value::Object>()
                    .into(),
            ),
        );
        let opt = |s: &Option<String>| s.as_deref().map(Value::from).unwrap_or(Value::Null);
        o.insert("bronze_spec_table".into(), opt(&self.bronze_spec_table));
        o.insert("silver_spec_table".into(), opt(&self.silver_spec_table));
        o.insert(
            "groups".into(),
            Value::List(
                self.groups
                    .iter()
                    .map(|g| Value::from(g.as_str()))
                    .collect(),
            ),
        );
        o
    }
}

fn string_map_value(m: &BTreeMap<String, String>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect::<brickform_core::value::Object>()
            .into(),
    )
}

// ---------- reading decoded objects ----------

/// A decoded object and where it is, for messages.
#[derive(Clone, Copy)]
struct At<'a> {
    obj: &'a Object,
    /// The flow's id (or `flows[i]`), `None` for the onboarding itself.
    flow: Option<&'a str>,
    /// The path of `obj` within the flow, with a trailing `.` when not empty.
    path: &'a str,
}

fn type_error(v: &Value, want: &str) -> String {
    format!("expected {want}, got {}", v.type_name())
}

impl<'a> At<'a> {
    fn err(&self, key: &str, message: impl Into<String>) -> RenderError {
        let field = format!("{}{key}", self.path);
        match self.flow {
            Some(id) => RenderError::Flow {
                data_flow_id: id.to_string(),
                field,
                message: message.into(),
            },
            None => RenderError::Onboarding {
                field,
                message: message.into(),
            },
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    /// A string attribute; numbers and bools convert as HCL converts them.
    fn str(&self, key: &str) -> Result<Option<Cow<'a, str>>, RenderError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => scalar_string(v)
                .map(Some)
                .ok_or_else(|| self.err(key, type_error(v, "a string"))),
        }
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, RenderError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(v) => Err(self.err(key, type_error(v, "a bool"))),
        }
    }

    /// A list of strings; `None` when unset.
    fn strings(&self, key: &str) -> Result<Option<Vec<Cow<'a, str>>>, RenderError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::List(items)) => items
                .iter()
                .map(|v| {
                    scalar_string(v)
                        .ok_or_else(|| self.err(key, type_error(v, "a list of strings")))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(v) => Err(self.err(key, type_error(v, "a list of strings"))),
        }
    }

    /// A map of strings as a JSON object; `None` when unset or empty.
    fn string_map(&self, key: &str) -> Result<Option<Map<String, Json>>, RenderError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(o)) => {
                let mut m = Map::new();
                for (k, v) in o.iter() {
                    if v.is_null() {
                        continue;
                    }
                    let s = scalar_string(v)
                        .ok_or_else(|| self.err(key, type_error(v, "a map of strings")))?;
                    m.insert(k.clone(), Json::String(s.into_owned()));
                }
                Ok((!m.is_empty()).then_some(m))
            }
            Some(v) => Err(self.err(key, type_error(v, "a map of strings"))),
        }
    }

    /// A free-form object, verbatim as JSON; `None` when unset.
    fn any_map(&self, key: &str) -> Result<Option<Map<String, Json>>, RenderError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(o)) => Ok(Some(
                o.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            )),
            Some(v) => Err(self.err(key, type_error(v, "an object"))),
        }
    }

    /// A single nested block; `None` when absent.
    fn block(&self, key: &str, path: &'a str) -> Result<Option<At<'a>>, RenderError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(o)) => Ok(Some(At {
                obj: o,
                flow: self.flow,
                path,
            })),
            Some(v) => Err(self.err(key, type_error(v, "a block"))),
        }
    }

    /// The items of a repeated block.
    fn items(&self, key: &str) -> Result<Vec<&'a Object>, RenderError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::List(items)) => items
                .iter()
                .map(|v| match v {
                    Value::Object(o) => Ok(&**o),
                    other => Err(self.err(key, type_error(other, "a block"))),
                })
                .collect(),
            Some(Value::Object(o)) => Ok(vec![&**o]),
            Some(v) => Err(self.err(key, type_error(v, "a list of blocks"))),
        }
    }
}

fn scalar_string(v: &Value) -> Option<Cow<'_, str>> {
    match v {
        Value::String(s) => Some(Cow::Borrowed(s.as_str())),
        Value::Number(n) => Some(Cow::Owned(n.to_string())),
        Value::Bool(b) => Some(Cow::Owned(b.to_string())),
        _ => None,
    }
}

fn put(row: &mut Map<String, Json>, key: impl Into<String>, v: impl Into<Json>) {
    row.insert(key.into(), v.into());
}

fn put_str(row: &mut Map<String, Json>, key: impl Into<String>, v: Option<Cow<'_, str>>) {
    if let Some(v) = v {
        row.insert(key.into(), Json::String(v.into_owned()));
    }
}

fn json_strings(items: Vec<Cow<'_, str>>) -> Json {
    Json::Array(
        items
            .into_iter()
            .map(|s| Json::String(s.into_owned()))
            .collect(),
    )
}

/// The canonical spelling of a source format sdp-meta knows; others are kept as written.
pub fn canonical_format(f: &str) -> Cow<'_, str> {
    match f.to_ascii_lowercase().as_str() {
        "cloudfiles" => Cow::Borrowed("cloudFiles"),
        "delta" => Cow::Borrowed("delta"),
        "kafka" => Cow::Borrowed("kafka"),
        "eventhub" => Cow::Borrowed("eventhub"),
        "snapshot" => Cow::Borrowed("snapshot"),
        _ => Cow::Borrowed(f),
    }
}

/// `catalog.schema.table` → (`catalog.schema`, `table`); `schema.table` → (`schema`, `table`).
fn split_table(name: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = name.split('.').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let (table, db) = parts.split_last()?;
    Some((db.join("."), table.to_string()))
}

// ---------- the onboarding ----------

struct Settings<'a> {
    env: Cow<'a, str>,
    /// `<volume_path>/<directory>`, without a trailing slash.
    base: String,
    file_name: Cow<'a, str>,
    database: Cow<'a, str>,
    bronze_table: Cow<'a, str>,
    silver_table: Cow<'a, str>,
    import_author: Cow<'a, str>,
    version: Cow<'a, str>,
    overwrite: Cow<'a, str>,
    uc_enabled: bool,
    dependency: Option<Cow<'a, str>>,
    /// Where the dataflowspec tables are written without Unity Catalog.
    bronze_path: Option<Cow<'a, str>>,
    silver_path: Option<Cow<'a, str>>,
    /// One pipeline for both layers of a group (`pipeline_mode = "combined"`).
    combined: bool,
    /// The format of every file of the set, the onboarding file's.
    format: FileFormat,
}

/// The format the files of a set are written in: the onboarding file's, so a YAML
/// onboarding has YAML expectations and transformations (sdp-meta 0.1.0 reads each of
/// them by its extension, `_load_structured_file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Json,
    /// YAML, with the onboarding file's extension (`yml` or `yaml`).
    Yaml(&'static str),
}

impl FileFormat {
    /// The format a file name asks for.
    pub fn of(file_name: &str) -> FileFormat {
        let lower = file_name.to_ascii_lowercase();
        if lower.ends_with(".yaml") {
            FileFormat::Yaml("yaml")
        } else if lower.ends_with(".yml") {
            FileFormat::Yaml("yml")
        } else {
            FileFormat::Json
        }
    }

    fn extension(self) -> &'static str {
        match self {
            FileFormat::Json => "json",
            FileFormat::Yaml(ext) => ext,
        }
    }

    /// A document as a file of this format.
    fn write(self, j: &Json) -> String {
        match self {
            FileFormat::Json => pretty(j),
            FileFormat::Yaml(_) => yaml(j),
        }
    }
}

fn settings(o: At<'_>) -> Result<Settings<'_>, RenderError> {
    let required = |k: &str| {
        o.str(k)?
            .filter(|s| !s.is_empty())
            .ok_or_else(|| o.err(k, "required"))
    };
    let or = |k: &str, d: &'static str| -> Result<Cow<'_, str>, RenderError> {
        Ok(o.str(k)?.unwrap_or(Cow::Borrowed(d)))
    };
    let volume_path = required("volume_path")?;
    let directory = or("directory", DEFAULT_DIRECTORY)?;
    let volume = volume_path.trim_end_matches('/');
    let directory = directory.trim_matches('/');
    let base = if directory.is_empty() {
        volume.to_string()
    } else {
        format!("{volume}/{directory}")
    };
    let file_name = or("file_name", DEFAULT_FILE_NAME)?;
    if file_name.is_empty() || file_name.contains('/') {
        return Err(o.err(
            "file_name",
            "must be a file name (use directory for the folder)",
        ));
    }
    let combined = match or("pipeline_mode", DEFAULT_PIPELINE_MODE)?.as_ref() {
        "split" => false,
        "combined" => true,
        other => {
            return Err(o.err(
                "pipeline_mode",
                format!("must be split or combined, not {}", quote(other)),
            ));
        }
    };
    Ok(Settings {
        combined,
        format: FileFormat::of(&file_name),
        env: required("env")?,
        base,
        file_name,
        database: required("database")?,
        bronze_table: or("bronze_dataflowspec_table", DEFAULT_BRONZE_SPEC_TABLE)?,
        silver_table: or("silver_dataflowspec_table", DEFAULT_SILVER_SPEC_TABLE)?,
        import_author: or("import_author", DEFAULT_IMPORT_AUTHOR)?,
        version: or("version", DEFAULT_VERSION)?,
        overwrite: or("overwrite", DEFAULT_OVERWRITE)?,
        uc_enabled: o.bool("uc_enabled")?.unwrap_or(DEFAULT_UC_ENABLED),
        dependency: o.str("dependency")?.filter(|s| !s.is_empty()),
        bronze_path: o.str("bronze_dataflowspec_path")?.filter(|s| !s.is_empty()),
        silver_path: o.str("silver_dataflowspec_path")?.filter(|s| !s.is_empty()),
    })
}

/// Whether a file name asks for YAML.
pub fn is_yaml(file_name: &str) -> bool {
    FileFormat::of(file_name) != FileFormat::Json
}

/// The path of the silver transformations file under `base`.
pub fn transformations_path(base: &str, format: FileFormat) -> String {
    format!("{base}/silver_transformations.{}", format.extension())
}

/// The path of a flow's expectations file for a layer under `base`.
pub fn expectations_path(
    base: &str,
    data_flow_id: &str,
    layer: &str,
    format: FileFormat,
) -> String {
    format!(
        "{base}/dqe/{data_flow_id}/{layer}_expectations.{}",
        format.extension()
    )
}

/// What the first pass learns about every flow.
struct Facts {
    bronze_dqe: bool,
    silver_dqe: bool,
}

fn has_dqe(layer: Option<&Object>) -> bool {
    layer.is_some_and(|l| {
        ["expectations", "expectations_file"]
            .iter()
            .any(|k| l.get(*k).is_some_and(|v| !v.is_null()))
    })
}

fn layer_obj<'a>(flow: &'a Object, layer: &str) -> Option<&'a Object> {
    flow.get(layer).and_then(Value::as_object)
}

/// The onboarding attributes rendering reads.
const RENDER_INPUTS: &[&str] = &[
    "volume_path",
    "directory",
    "file_name",
    "env",
    "flows",
    "database",
    "bronze_dataflowspec_table",
    "silver_dataflowspec_table",
    "import_author",
    "version",
    "overwrite",
    "uc_enabled",
    "dependency",
    "pipeline_mode",
];

/// The attributes of an onboarding that rendering reads.
fn inputs(onboarding: &Object) -> impl Iterator<Item = (&String, &Value)> {
    onboarding
        .iter()
        .filter(|(k, _)| RENDER_INPUTS.contains(&k.as_str()))
}

/// Renders an onboarding (a decoded `sdp_meta_onboarding` configuration whose `flows` are
/// decoded `sdp_meta_flow` objects). Every value must be known.
pub fn render(onboarding: &Object) -> Result<Rendered, RenderError> {
    if let Some((k, _)) = inputs(onboarding).find(|(_, v)| v.contains_unknown()) {
        return Err(RenderError::Unknown { field: k.clone() });
    }
    let top = At {
        obj: onboarding,
        flow: None,
        path: "",
    };
    let s = settings(top)?;
    let flows: Vec<&Object> = top.items("flows")?;
    if flows.is_empty() {
        return Err(top.err("flows", "an onboarding needs at least one flow"));
    }

    // First pass: ids (unique), and which layers have expectations anywhere (any row with
    // expectations makes every row carry that layer's quarantine_table key, V4).
    let mut ids: Vec<Cow<'_, str>> = Vec::with_capacity(flows.len());
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(flows.len());
    let mut facts = Facts {
        bronze_dqe: false,
        silver_dqe: false,
    };
    for (i, f) in flows.iter().enumerate() {
        let at = At {
            obj: f,
            flow: None,
            path: "",
        };
        let id = match at.str("data_flow_id") {
            Ok(Some(id)) if !id.is_empty() => id,
            _ => {
                return Err(RenderError::Flow {
                    data_flow_id: format!("flows[{i}]"),
                    field: "data_flow_id".into(),
                    message: "required (a non-empty string)".into(),
                });
            }
        };
        if let Some(first) = seen.insert(id.to_string(), i) {
            return Err(RenderError::DuplicateId {
                data_flow_id: id.into_owned(),
                first,
                second: i,
            });
        }
        facts.bronze_dqe |= has_dqe(layer_obj(f, "bronze"));
        facts.silver_dqe |= has_dqe(layer_obj(f, "silver"));
        ids.push(id);
    }

    let mut out = Output {
        files: BTreeMap::new(),
        transformations: Vec::new(),
        transformations_used: false,
    };
    let mut rows = Vec::with_capacity(flows.len());
    let mut has_bronze = false;
    let mut has_silver = false;
    let mut groups = BTreeSet::new();
    let mut conf_needs: BTreeMap<(String, &'static str), bool> = BTreeMap::new();
    for (f, id) in flows.iter().zip(&ids) {
        let flow = At {
            obj: f,
            flow: Some(id),
            path: "",
        };
        let row = render_flow(flow, id, &s, &facts, &mut out)?;
        let group = flow
            .str("data_flow_group")?
            .filter(|g| !g.is_empty())
            .ok_or_else(|| flow.err("data_flow_group", "required"))?;
        let bronze = layer_obj(f, "bronze");
        let silver = layer_obj(f, "silver");
        let sinks = |l: Option<&Object>| {
            l.and_then(|l| l.get("sink"))
                .and_then(Value::as_list)
                .is_some_and(|s| !s.is_empty())
        };
        if bronze.is_some() && flow.get("source").is_some() {
            has_bronze = true;
            *conf_needs.entry((group.to_string(), "bronze")).or_default() |= sinks(bronze);
        }
        if silver.is_some() {
            has_silver = true;
            *conf_needs.entry((group.to_string(), "silver")).or_default() |= sinks(silver);
        }
        groups.insert(group.into_owned());
        rows.push(Json::Object(row));
    }

    let onboard_layer = match (has_bronze, has_silver) {
        (true, true) => "bronze_silver",
        (true, false) => "bronze",
        (false, true) => "silver",
        (false, false) => {
            return Err(top.err(
                "flows",
                "no flow has a bronze layer (source and bronze blocks) or a silver block",
            ));
        }
    };

    if out.transformations_used {
        let entries = Json::Array(std::mem::take(&mut out.transformations));
        out.files.insert(
            transformations_path(&s.base, s.format),
            s.format.write(&entries),
        );
    }
    let doc = Json::Array(rows);
    let onboarding_json = pretty(&doc);
    let onboarding_path = format!("{}/{}", s.base, s.file_name);
    out.files
        .insert(onboarding_path.clone(), s.format.write(&doc));
    let Json::Array(rows) = doc else {
        return Err(top.err("flows", "internal: rows are not a list"));
    };

    let bronze_spec_table = has_bronze.then(|| format!("{}.{}", s.database, s.bronze_table));
    let silver_spec_table = has_silver.then(|| format!("{}.{}", s.database, s.silver_table));

    let mut named_parameters = BTreeMap::new();
    let mut np = |k: &str, v: &str| {
        named_parameters.insert(k.to_string(), v.to_string());
    };
    np("onboard_layer", onboard_layer);
    np("database", &s.database);
    np("onboarding_file_path", &onboarding_path);
    np("env", &s.env);
    // Without Unity Catalog, sdp-meta also needs where each table's files go; with it, it
    // drops the paths, so they are only sent when they mean something.
    let paths = [("bronze", &s.bronze_path), ("silver", &s.silver_path)];
    for (layer, present, table) in [
        ("bronze", has_bronze, &s.bronze_table),
        ("silver", has_silver, &s.silver_table),
    ] {
        if !present {
            continue;
        }
        np(&format!("{layer}_dataflowspec_table"), table);
        let path = paths
            .iter()
            .find(|(l, _)| *l == layer)
            .and_then(|(_, p)| p.as_deref());
        match path {
            Some(p) if !s.uc_enabled => np(&format!("{layer}_dataflowspec_path"), p),
            None if !s.uc_enabled => {
                return Err(top.err(
                    &format!("{layer}_dataflowspec_path"),
                    "required when uc_enabled = false: where sdp-meta writes the dataflowspec table",
                ));
            }
            _ => {}
        }
    }
    np("import_author", &s.import_author);
    np("version", &s.version);
    np("overwrite", &s.overwrite);
    np("uc_enabled", if s.uc_enabled { "True" } else { "False" });

    let pipeline_configuration = pipeline_configuration(&s, &conf_needs);

    Ok(Rendered {
        onboarding_path,
        onboarding_json,
        rows,
        files: out.files,
        onboard_layer: onboard_layer.to_string(),
        named_parameters,
        pipeline_configuration,
        bronze_spec_table,
        silver_spec_table,
        groups: groups.into_iter().collect(),
    })
}

/// What rendering the rows produces besides the rows.
struct Output {
    files: BTreeMap<String, String>,
    /// Entries of the silver transformations file.
    transformations: Vec<Json>,
    /// Whether a row references the transformations file.
    transformations_used: bool,
}

/// Group → layer → the configuration of the pipeline that runs it: one per layer, or, for a
/// group with both layers under `pipeline_mode = "combined"`, one `bronze_silver` pipeline
/// (sdp-meta's runner reads both layers' spec tables and groups, bronze first).
fn pipeline_configuration(
    s: &Settings<'_>,
    conf_needs: &BTreeMap<(String, &'static str), bool>,
) -> PipelineConfiguration {
    let mut by_group: BTreeMap<&str, Vec<(&'static str, bool)>> = BTreeMap::new();
    for ((group, layer), sinks) in conf_needs {
        by_group.entry(group).or_default().push((layer, *sinks));
    }
    let mut out = PipelineConfiguration::new();
    for (group, layers) in by_group {
        let runs: Vec<(String, Vec<(&'static str, bool)>)> = if s.combined && layers.len() > 1 {
            vec![("bronze_silver".to_string(), layers)]
        } else {
            layers
                .into_iter()
                .map(|l| (l.0.to_string(), vec![l]))
                .collect()
        };
        for (name, layers) in runs {
            let mut conf = BTreeMap::new();
            conf.insert("layer".to_string(), name.clone());
            for (layer, _) in &layers {
                let table = if *layer == "bronze" {
                    &s.bronze_table
                } else {
                    &s.silver_table
                };
                conf.insert(format!("{layer}.group"), group.to_string());
                conf.insert(
                    format!("{layer}.dataflowspecTable"),
                    format!("{}.{table}", s.database),
                );
            }
            if let Some(dep) = &s.dependency {
                conf.insert("sdp_meta_dependency".into(), dep.to_string());
                conf.insert("sdp_meta_whl".into(), dep.to_string());
            }
            if layers.iter().any(|(_, sinks)| *sinks) {
                conf.insert("pipelines.externalSink.enabled".into(), "true".into());
            }
            out.entry(group.to_string()).or_default().insert(name, conf);
        }
    }
    out
}

fn pretty(j: &Json) -> String {
    let mut s = serde_json::to_string_pretty(j).unwrap_or_else(|_| j.to_string());
    s.push('\n');
    s
}

// ---------- one flow ----------

/// What writing a flow's fields needs besides the fields.
struct Cx<'c> {
    env: &'c str,
    base: &'c str,
    format: FileFormat,
    id: &'c str,
    /// The layer being written (`bronze` / `silver`), empty outside the layers.
    layer: &'static str,
    /// Whether any row of the file has expectations for this layer (V4).
    any_dqe: bool,
    out: &'c mut Output,
    /// The source's table, decided before `source_details` is written.
    source: SourceTable,
}

/// The source's `source_database`, `source_table` and `source_catalog_<env>` as rendered.
#[derive(Default)]
struct SourceTable {
    database: Option<String>,
    table: Option<String>,
    catalog: Option<String>,
}

fn render_flow(
    flow: At<'_>,
    id: &str,
    s: &Settings<'_>,
    facts: &Facts,
    out: &mut Output,
) -> Result<Map<String, Json>, RenderError> {
    let mut cx = Cx {
        env: &s.env,
        base: &s.base,
        format: s.format,
        id,
        layer: "",
        any_dqe: false,
        out,
        source: SourceTable::default(),
    };
    let mut row = Map::new();
    put(&mut row, DATA_FLOW_ID.attr, id);
    write_fields(&mut row, flow, FLOW, &mut cx)?;
    if let Some(src) = flow.block("source", "source.")? {
        let (format, details) = source_details(src, &mut cx)?;
        put(&mut row, SOURCE_FORMAT.key.spell("", cx.env), format);
        put(&mut row, SOURCE_DETAILS_KEY, Json::Object(details));
    }
    for (layer, any_dqe) in [("bronze", facts.bronze_dqe), ("silver", facts.silver_dqe)] {
        let path = if layer == "bronze" {
            "bronze."
        } else {
            "silver."
        };
        cx.layer = layer;
        cx.any_dqe = any_dqe;
        match flow.block(layer, path)? {
            Some(l) => write_fields(&mut row, l, LAYER, &mut cx)?,
            None => absent_flat(&mut row, LAYER, &cx),
        }
    }
    Ok(row)
}

/// What a flat block that is not set still writes: the quarantine table's null (V4), also
/// when the whole layer is absent.
fn absent_flat(out: &mut Map<String, Json>, table: &[Field], cx: &Cx<'_>) {
    for f in table {
        match f.conv {
            Conv::Flat(t) => absent_flat(out, t, cx),
            Conv::StrOrNullWithExpectations if cx.any_dqe => {
                put(out, f.key.spell(cx.layer, cx.env), Json::Null);
            }
            _ => {}
        }
    }
}

/// Writes the fields of `table` that `at` sets into `out`, in the table's order.
fn write_fields(
    out: &mut Map<String, Json>,
    at: At<'_>,
    table: &[Field],
    cx: &mut Cx<'_>,
) -> Result<(), RenderError> {
    for f in table {
        let key = f.key.spell(cx.layer, cx.env);
        let name = f.attr;
        match f.conv {
            Conv::Str => put_str(out, key, at.str(name)?),
            Conv::Bool => {
                if let Some(v) = at.bool(name)? {
                    put(out, key, v);
                }
            }
            Conv::BoolText => {
                if let Some(b) = at.bool(name)? {
                    put(out, key, if b { "True" } else { "False" });
                }
            }
            // Mandatory for sdp-meta; false unless set.
            Conv::BoolOrFalse => put(out, key, at.bool(name)?.unwrap_or(false)),
            Conv::List => {
                if let Some(v) = at.strings(name)? {
                    put(out, key, json_strings(v));
                }
            }
            Conv::ListOrListString => {
                if let Some(v) = at.strings(name)?.filter(|c| !c.is_empty()) {
                    put(out, key, json_strings(v));
                }
            }
            Conv::CommaList => {
                if let Some(v) = at.strings(name)?.filter(|c| !c.is_empty()) {
                    put(out, key, v.join(","));
                }
            }
            Conv::Map => {
                if let Some(m) = at.string_map(name)? {
                    put(out, key, Json::Object(m));
                }
            }
            // Mandatory for sdp-meta.
            Conv::MapOrEmpty => put(
                out,
                key,
                Json::Object(at.string_map(name)?.unwrap_or_default()),
            ),
            Conv::Verbatim => {
                if let Some(m) = at.string_map(name)? {
                    merge(out, m, at, name)?;
                }
            }
            Conv::StrOrNullWithExpectations => match at.str(name)? {
                Some(v) => put(out, key, v.into_owned()),
                None if cx.any_dqe => put(out, key, Json::Null),
                None => {}
            },
            Conv::Details(typed) => {
                let mut d = at.any_map(name)?.unwrap_or_default();
                let mut own = Map::new();
                write_fields(&mut own, at, typed, cx)?;
                for (k, v) in own {
                    if d.contains_key(&k) {
                        return Err(at.err(
                            name,
                            format!(
                                "sets {}, which another attribute of this block already sets",
                                quote(&k)
                            ),
                        ));
                    }
                    d.insert(k, v);
                }
                put(out, key, Json::Object(d));
            }
            Conv::Block(t) | Conv::BlockUnlessEmpty(t) => {
                let path = format!("{}{name}.", at.path);
                if let Some(b) = at.block(name, &path)? {
                    let mut m = Map::new();
                    write_fields(&mut m, b, t, cx)?;
                    if !(m.is_empty() && matches!(f.conv, Conv::BlockUnlessEmpty(_))) {
                        put(out, key, Json::Object(m));
                    }
                }
            }
            Conv::Items(t) | Conv::ItemsOrEmpty(t) => {
                let items = at.items(name)?;
                if items.is_empty() && matches!(f.conv, Conv::Items(_)) {
                    continue;
                }
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    let label = item
                        .get(LABEL_ATTR)
                        .map(|v| v.to_string())
                        .unwrap_or_default();
                    let path = format!("{}{name}[{label}].", at.path);
                    let it = At {
                        obj: item,
                        flow: at.flow,
                        path: &path,
                    };
                    let mut m = Map::new();
                    write_fields(&mut m, it, t, cx)?;
                    list.push(Json::Object(m));
                }
                put(out, key, Json::Array(list));
            }
            Conv::Flat(t) => {
                let path = format!("{}{name}.", at.path);
                match at.block(name, &path)? {
                    Some(b) => write_fields(out, b, t, cx)?,
                    None => absent_flat(out, t, cx),
                }
            }
            Conv::Special(Special::SourceTable) => {
                let v = if name == "source_table" {
                    cx.source.table.take()
                } else {
                    cx.source.database.take()
                };
                if let Some(v) = v {
                    put(out, key, v);
                }
            }
            Conv::Special(Special::SourceCatalog) => {
                if let Some(c) = cx.source.catalog.take() {
                    put(out, key, c);
                }
            }
            Conv::Special(Special::Transformation) => {
                if cx.layer == "silver" {
                    transformation(out, at, key, cx)?;
                }
            }
            Conv::Special(Special::Expectations) => expectations(out, at, key, cx)?,
        }
    }
    Ok(())
}

/// Silver's select/where: an entry of the transformations file, or the file given.
fn transformation(
    out: &mut Map<String, Json>,
    l: At<'_>,
    key: String,
    cx: &mut Cx<'_>,
) -> Result<(), RenderError> {
    let file = l.str("transformation_file")?;
    let mut inline = false;
    for f in TRANSFORMATION {
        inline |= l.strings(f.attr)?.is_some();
    }
    if file.is_some() && inline {
        return Err(l.err(
            "transformation_file",
            "set transformation_file or select_exp / where_clause, not both",
        ));
    }
    if inline {
        let mut entry = Map::new();
        put_str(&mut entry, "target_table", l.str("table")?);
        write_fields(&mut entry, l, TRANSFORMATION, cx)?;
        cx.out.transformations.push(Json::Object(entry));
    }
    if let Some(f) = file {
        put(out, key, f.into_owned());
    } else if l.get("cdc_apply_changes_flows").is_none() {
        cx.out.transformations_used = true;
        put(out, key, transformations_path(cx.base, cx.format));
    }
    Ok(())
}

/// A layer's expectations: a file brickform writes, or the file given.
fn expectations(
    out: &mut Map<String, Json>,
    l: At<'_>,
    key: String,
    cx: &mut Cx<'_>,
) -> Result<(), RenderError> {
    let path = format!("{}expectations.", l.path);
    let dqe = l.block("expectations", &path)?;
    let dqe_file = l.str("expectations_file")?;
    match (dqe, dqe_file) {
        (Some(_), Some(_)) => {
            return Err(l.err(
                "expectations_file",
                "set the expectations block or expectations_file, not both",
            ));
        }
        (Some(b), None) => {
            let id = cx.id;
            if id.contains('/') || id == "." || id == ".." {
                return Err(l.err(
                    "expectations",
                    format!("data_flow_id {} cannot name the expectations file's directory; use expectations_file", quote(id)),
                ));
            }
            let mut m = Map::new();
            write_fields(&mut m, b, EXPECTATIONS, cx)?;
            let file = expectations_path(cx.base, id, cx.layer, cx.format);
            cx.out
                .files
                .insert(file.clone(), cx.format.write(&Json::Object(m)));
            put(out, key, file);
        }
        (None, Some(f)) => put(out, key, f.into_owned()),
        (None, None) => {}
    }
    Ok(())
}

/// The source's format and `source_details`.
fn source_details(
    src: At<'_>,
    cx: &mut Cx<'_>,
) -> Result<(String, Map<String, Json>), RenderError> {
    let format_raw = src
        .str(SOURCE_FORMAT.attr)?
        .ok_or_else(|| src.err(SOURCE_FORMAT.attr, "required"))?;
    let format = canonical_format(&format_raw).into_owned();
    cx.source = source_table(src, matches!(format.as_str(), "delta" | "snapshot"))?;
    let mut d = Map::new();
    write_fields(&mut d, src, SOURCE_DETAILS, cx)?;
    Ok((format, d))
}

/// The source table: a Lakeflow Connect destination, a full name, or database + table; and
/// the catalog, folded into the database for the table-like formats.
fn source_table(src: At<'_>, table_like: bool) -> Result<SourceTable, RenderError> {
    let from_ingestion = match src.get("ingestion_table") {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Object(o)) => Some(
            o.get("destination_table")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    src.err(
                        "ingestion_table",
                        "expected an ingestion pipeline table, with destination_table = \"catalog.schema.table\"",
                    )
                })?,
        ),
        Some(v) => return Err(src.err("ingestion_table", type_error(v, "an object"))),
    };
    let full = match (from_ingestion, src.str("table")?) {
        (Some(_), Some(_)) => {
            return Err(src.err("table", "set ingestion_table or table, not both"));
        }
        (Some(t), None) => Some(("ingestion_table", Cow::Borrowed(t))),
        (None, Some(t)) => Some(("table", t)),
        (None, None) => None,
    };
    let (mut database, table) = match full {
        Some((key, name)) => {
            if src.get("source_database").is_some() || src.get("source_table").is_some() {
                return Err(src.err(
                    key,
                    format!("set {key} or source_database and source_table, not both"),
                ));
            }
            let (db, t) = split_table(&name).ok_or_else(|| {
                src.err(
                    key,
                    format!(
                        "{} is not a table name of the form catalog.schema.table",
                        quote(&name)
                    ),
                )
            })?;
            (Some(Cow::Owned(db)), Some(Cow::Owned(t)))
        }
        None => (src.str("source_database")?, src.str("source_table")?),
    };
    let mut catalog_key = None;
    if let Some(catalog) = src.str("source_catalog")? {
        if table_like {
            // sdp-meta 0.1.0's delta and snapshot readers ignore source_catalog_{env}: the
            // catalog must be part of source_database (V15).
            database = Some(match database {
                None => {
                    return Err(src.err(
                        "source_catalog",
                        "a delta or snapshot source needs a table (source_database and source_table) for its catalog",
                    ));
                }
                Some(db) if !db.contains('.') => Cow::Owned(format!("{catalog}.{db}")),
                Some(db) => {
                    let first = db.split('.').next().unwrap_or_default();
                    if !first.eq_ignore_ascii_case(&catalog) {
                        return Err(src.err(
                            "source_catalog",
                            format!(
                                "{} contradicts the catalog of {}",
                                quote(&catalog),
                                quote(&db)
                            ),
                        ));
                    }
                    db
                }
            });
        } else {
            catalog_key = Some(catalog.into_owned());
        }
    }
    Ok(SourceTable {
        database: database.map(Cow::into_owned),
        table: table.map(Cow::into_owned),
        catalog: catalog_key,
    })
}

/// Adds `extra` to `into`; a key both set is an error (the typed attribute and the verbatim
/// map would disagree about which wins).
fn merge(
    into: &mut Map<String, Json>,
    extra: Map<String, Json>,
    at: At<'_>,
    field: &str,
) -> Result<(), RenderError> {
    for (k, v) in extra {
        if into.contains_key(&k) {
            return Err(at.err(
                field,
                format!(
                    "sets {}, which another attribute of this block already sets",
                    quote(&k)
                ),
            ));
        }
        into.insert(k, v);
    }
    Ok(())
}

// ---------- YAML ----------

/// The onboarding file as YAML, for PyYAML's `safe_load` in sdp-meta to read back as the same
/// rows: keys in the order the rows hold them (the order the JSON file has), every string
/// quoted on one line so no value changes type (`on`, `yes`, `1`).
pub fn yaml(v: &Json) -> String {
    brickform_core::yaml::to_string(v, brickform_core::yaml::Style::ORDERED)
}

// ---------- derived attributes with unknown inputs ----------

const UNKNOWN_PREFIX: &str = "\u{2983}brickform-unknown-";
const UNKNOWN_SUFFIX: &str = "\u{2984}";

struct Marker(usize);

impl Marker {
    fn next(&mut self) -> Value {
        self.0 += 1;
        Value::String(format!("{UNKNOWN_PREFIX}{}{UNKNOWN_SUFFIX}", self.0))
    }
}

fn marked(s: &str) -> bool {
    s.contains(UNKNOWN_PREFIX)
}

/// Replaces unknown values a rendering can carry through as text (strings, lists and maps
/// of strings) with unique markers. `None` when an unknown sits where a marker could change
/// what is rendered without showing in it (a bool, a block, a whole list of blocks).
fn substitute(v: &Value, ty: &AttrType, m: &mut Marker) -> Option<Value> {
    match (v, ty) {
        (Value::Unknown, AttrType::String) => Some(m.next()),
        (Value::Unknown, AttrType::List(inner)) if **inner == AttrType::String => {
            Some(Value::List(vec![m.next()]))
        }
        (Value::Unknown, AttrType::Map(inner)) if **inner == AttrType::String => {
            let Value::String(k) = m.next() else {
                return None;
            };
            Some(Value::object(Object::from_iter([(k, m.next())])))
        }
        (Value::Unknown, _) => None,
        (Value::List(items), AttrType::List(inner) | AttrType::Set(inner)) => items
            .iter()
            .map(|i| substitute(i, inner, m))
            .collect::<Option<Vec<_>>>()
            .map(Value::List),
        (Value::Object(o), AttrType::Map(inner)) => o
            .iter()
            .map(|(k, v)| substitute(v, inner, m).map(|v| (k.clone(), v)))
            .collect::<Option<Object>>()
            .map(Value::from),
        // Free-form values: unknown leaves inside become markers.
        (Value::List(items), AttrType::Any) => items
            .iter()
            .map(|i| substitute_any(i, m))
            .collect::<Option<Vec<_>>>()
            .map(Value::List),
        (Value::Object(o), AttrType::Any) => o
            .iter()
            .map(|(k, v)| substitute_any(v, m).map(|v| (k.clone(), v)))
            .collect::<Option<Object>>()
            .map(Value::from),
        (other, _) => Some(other.clone()),
    }
}

fn substitute_any(v: &Value, m: &mut Marker) -> Option<Value> {
    match v {
        Value::Unknown => Some(m.next()),
        _ => substitute(v, &AttrType::Any, m),
    }
}

/// Substitutes within an object decoded by `schema`.
fn substitute_object(o: &Object, schema: &Schema, m: &mut Marker) -> Option<Object> {
    let mut out = Object::with_capacity_and_hasher(o.len(), Default::default());
    for (k, v) in o {
        let nv = if let Some(a) = schema.attribute(k) {
            substitute(v, &a.ty, m)?
        } else if let Some(b) = schema.block_type(k) {
            match v {
                Value::Unknown => return None,
                Value::Object(inner) => Value::object(substitute_object(inner, &b.schema, m)?),
                Value::List(items) => Value::List(
                    items
                        .iter()
                        .map(|i| match i {
                            Value::Object(inner) => {
                                substitute_object(inner, &b.schema, m).map(Value::from)
                            }
                            Value::Unknown => None,
                            other => Some(other.clone()),
                        })
                        .collect::<Option<Vec<_>>>()?,
                ),
                other => other.clone(),
            }
        } else if v.contains_unknown() {
            // Not something rendering reads; an unknown here changes nothing.
            Value::Null
        } else {
            v.clone()
        };
        out.insert(k.clone(), nv);
    }
    Some(out)
}

fn unknown_derived() -> Object {
    super::schema::ONBOARDING_DERIVED
        .iter()
        .map(|k| (k.to_string(), Value::Unknown))
        .collect()
}

fn text_or_unknown(s: &str) -> Value {
    if marked(s) {
        Value::Unknown
    } else {
        Value::from(s)
    }
}

/// A map whose keys and values may hold markers: unknown as a whole when a key does, else
/// per value.
fn map_or_unknown(m: &BTreeMap<String, String>) -> Value {
    if m.keys().any(|k| marked(k)) {
        return Value::Unknown;
    }
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), text_or_unknown(v)))
            .collect::<brickform_core::value::Object>()
            .into(),
    )
}

/// The onboarding's derived attributes (`schema::ONBOARDING_DERIVED`) for a configuration
/// that may hold values known only after apply: each is computed when the inputs it depends
/// on are known (the pipeline configuration does not depend on the volume path, so it is
/// known before the volume exists), and unknown otherwise. A configuration without unknowns
/// renders in full, and its errors are returned; with unknowns, errors are left for the
/// apply, when the values are known.
pub fn derive(onboarding: &Object) -> Result<Object, RenderError> {
    if !inputs(onboarding).any(|(_, v)| v.contains_unknown()) {
        return Ok(render(onboarding)?.attributes());
    }
    let mut m = Marker(0);
    let Some(subst) = substitute_onboarding(onboarding, &mut m) else {
        return Ok(unknown_derived());
    };
    let Ok(r) = render(&subst) else {
        return Ok(unknown_derived());
    };
    let mut o = Object::default();
    o.insert(
        "onboarding_file_path".into(),
        text_or_unknown(&r.onboarding_path),
    );
    o.insert(
        "onboarding_json".into(),
        text_or_unknown(&r.onboarding_json),
    );
    o.insert("files".into(), map_or_unknown(&r.files));
    o.insert("onboard_layer".into(), text_or_unknown(&r.onboard_layer));
    o.insert(
        "named_parameters".into(),
        map_or_unknown(&r.named_parameters),
    );
    let conf = if r.pipeline_configuration.keys().any(|g| marked(g)) {
        Value::Unknown
    } else {
        Value::Object(
            r.pipeline_configuration
                .iter()
                .map(|(g, layers)| {
                    (
                        g.clone(),
                        Value::Object(
                            layers
                                .iter()
                                .map(|(l, c)| (l.clone(), map_or_unknown(c)))
                                .collect::<brickform_core::value::Object>()
                                .into(),
                        ),
                    )
                })
                .collect::<brickform_core::value::Object>()
                .into(),
        )
    };
    o.insert("pipeline_configuration".into(), conf);
    let opt = |s: &Option<String>| s.as_deref().map(text_or_unknown).unwrap_or(Value::Null);
    o.insert("bronze_spec_table".into(), opt(&r.bronze_spec_table));
    o.insert("silver_spec_table".into(), opt(&r.silver_spec_table));
    o.insert(
        "groups".into(),
        if r.groups.iter().any(|g| marked(g)) {
            Value::Unknown
        } else {
            Value::List(r.groups.iter().map(|g| Value::from(g.as_str())).collect())
        },
    );
    Ok(o)
}

fn substitute_onboarding(onboarding: &Object, m: &mut Marker) -> Option<Object> {
    let schema = onboarding_schema();
    let flow = flow_schema();
    let mut out = Object::with_capacity_and_hasher(onboarding.len(), Default::default());
    for (k, v) in onboarding {
        let nv = if k == "flows" {
            match v {
                Value::List(items) => Value::List(
                    items
                        .iter()
                        .map(|f| match f {
                            Value::Object(o) => substitute_object(o, &flow, m).map(Value::from),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()?,
                ),
                _ => return None,
            }
        } else if !RENDER_INPUTS.contains(&k.as_str()) {
            // Not read by rendering: an unknown here changes nothing.
            if v.contains_unknown() {
                Value::Null
            } else {
                v.clone()
            }
        } else if let Some(a) = schema.attribute(k) {
            substitute(v, &a.ty, m)?
        } else {
            v.clone()
        };
        out.insert(k.clone(), nv);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::sdp_meta::schema::testing::{decode_flows, onboarding};
    use serde_json::json;

    fn render_hcl(src: &str) -> Rendered {
        render(&onboarding(decode_flows(src), json!({}))).unwrap()
    }

    fn render_err(src: &str) -> String {
        render(&onboarding(decode_flows(src), json!({})))
            .unwrap_err()
            .to_string()
    }

    fn row(r: &Rendered, i: usize) -> &Json {
        &r.rows[i]
    }

    /// Equal, and with the keys in the same order.
    fn same(got: &Json, want: Json) {
        assert_eq!(got, &want);
        assert_eq!(pretty(got), pretty(&want), "key order");
    }

    fn file(r: &Rendered, path: &str) -> Json {
        serde_json::from_str(r.files.get(path).unwrap_or_else(|| panic!("no {path}"))).unwrap()
    }

    const BASE: &str = "/Volumes/main/ops/conf/conf";

    #[test]
    fn cloudfiles_bronze_and_silver() {
        let r = render_hcl(
            r#"
resource "sdp_meta_flow" "orders" {
  data_flow_id    = "10"
  data_flow_group = "G"
  source_system   = "sftp"
  source {
    format             = "CLOUDFILES"
    source_path        = "/Volumes/main/landing/files/orders/"
    source_schema_path = "/Volumes/main/ops/conf/orders.ddl"
    source_catalog     = "main"
    source_metadata {
      include_autoloader_metadata_column = true
      autoloader_metadata_col_name       = "source_metadata"
      select_metadata_cols               = { input_file_name = "_metadata.file_name" }
    }
  }
  bronze {
    database          = "main.bronze"
    catalog           = "main"
    table             = "orders"
    comment           = "raw orders"
    reader_options    = { "cloudFiles.format" = "json" }
    table_properties  = { "delta.enableChangeDataFeed" = "true" }
    partition_columns = ["dt", "region"]
    cluster_by        = ["pk"]
    cluster_by_auto   = false
    row_filter        = "ROW FILTER main.sec.f ON (region)"
  }
  silver {
    database     = "main.silver"
    table        = "orders"
    select_exp   = ["pk", "upper(name) AS name"]
    where_clause = ["pk IS NOT NULL"]
  }
}
"#,
        );
        same(
            row(&r, 0),
            json!({
                "data_flow_id": "10",
                "data_flow_group": "G",
                "source_system": "sftp",
                "source_format": "cloudFiles",
                "source_details": {
                    "source_path_prod": "/Volumes/main/landing/files/orders/",
                    "source_catalog_prod": "main",
                    "source_schema_path": "/Volumes/main/ops/conf/orders.ddl",
                    "source_metadata": {
                        "include_autoloader_metadata_column": "True",
                        "autoloader_metadata_col_name": "source_metadata",
                        "select_metadata_cols": {"input_file_name": "_metadata.file_name"}
                    }
                },
                "bronze_database_prod": "main.bronze",
                "bronze_catalog_prod": "main",
                "bronze_table": "orders",
                "bronze_table_comment": "raw orders",
                "bronze_reader_options": {"cloudFiles.format": "json"},
                "bronze_table_properties": {"delta.enableChangeDataFeed": "true"},
                "bronze_partition_columns": "dt,region",
                "bronze_cluster_by": ["pk"],
                "bronze_cluster_by_auto": false,
                "bronze_row_filter": "ROW FILTER main.sec.f ON (region)",
                "silver_database_prod": "main.silver",
                "silver_table": "orders",
                "silver_transformation_json_prod": format!("{BASE}/silver_transformations.json")
            }),
        );
        // The fixed key order.
        let keys: Vec<&str> = row(&r, 0)
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            &keys[..5],
            [
                "data_flow_id",
                "data_flow_group",
                "source_system",
                "source_format",
                "source_details"
            ]
        );
        assert_eq!(
            file(&r, &format!("{BASE}/silver_transformations.json")),
            json!([{"target_table": "orders", "select_exp": ["pk", "upper(name) AS name"], "where_clause": ["pk IS NOT NULL"]}])
        );
        assert_eq!(r.onboard_layer, "bronze_silver");
        assert_eq!(r.onboarding_path, format!("{BASE}/onboarding.json"));
        assert_eq!(r.files[&r.onboarding_path], r.onboarding_json);
        assert!(
            r.onboarding_json
                .starts_with("[\n  {\n    \"data_flow_id\": \"10\",")
        );
        assert_eq!(r.files.len(), 2);
    }

    #[test]
    fn delta_sources_name_their_table_three_ways_with_the_catalog_in_source_database() {
        let r = render_hcl(
            r#"
resource "sdp_meta_flow" "a" {
  data_flow_id    = "1"
  data_flow_group = "G"
  source {
    format          = "delta"
    ingestion_table = { destination_table = "main.lfc.intpk", scd_type = "SCD_TYPE_1" }
  }
  bronze {
    database       = "main.bronze"
    table          = "intpk"
    reader_options = { readChangeFeed = "true" }
  }
}
resource "sdp_meta_flow" "b" {
  data_flow_id    = "2"
  data_flow_group = "G"
  source {
    format = "Delta"
    table  = "main.raw.orders"
  }
  bronze {
    database = "main.bronze"
    table    = "orders"
  }
}
resource "sdp_meta_flow" "c" {
  data_flow_id    = "3"
  data_flow_group = "G"
  source {
    format          = "delta"
    source_catalog  = "main"
    source_database = "raw"
    source_table    = "customers"
  }
  bronze {
    database = "main.bronze"
    table    = "customers"
  }
}
"#,
        );
        same(
            row(&r, 0),
            json!({
                "data_flow_id": "1", "data_flow_group": "G", "source_format": "delta",
                "source_details": {"source_database": "main.lfc", "source_table": "intpk"},
                "bronze_database_prod": "main.bronze", "bronze_table": "intpk",
                "bronze_reader_options": {"readChangeFeed": "true"}
            }),
        );
        assert_eq!(
            row(&r, 1)["source_details"],
            json!({"source_database": "main.raw", "source_table": "orders"})
        );
        assert_eq!(
            row(&r, 2)["source_details"],
            json!({"source_database": "main.raw", "source_table": "customers"})
        );
        assert_eq!(r.onboard_layer, "bronze");
    }

    #[test]
    fn source_table_conflicts_are_errors_naming_flow_and_field() {
        let e = render_err(
            r#"
resource "sdp_meta_flow" "a" {
  data_flow_id    = "7"
  data_flow_group = "G"
  source {
    format          = "delta"
    source_catalog  = "other"
    source_database = "main.raw"
    source_table    = "t"
  }
  bronze {
    database = "main.bronze"
    table    = "t"
  }
}
"#,
        );
        assert_eq!(
            e,
            "flow 7: source.source_catalog: \"other\" contradicts the catalog of \"main.raw\""
        );
        let e = render_err(
            r#"
resource "sdp_meta_flow" "a" {
  data_flow_id    = "8"
  data_flow_group = "G"
  source {
    format       = "snapshot"
    table        = "main.raw.t"
    source_table = "t"
  }
  bronze {
    database = "main.bronze"
    table    = "t"
  }
}
"#,
        );
        assert_eq!(
            e,
            "flow 8: source.table: set table or source_database and source_table, not both"
        );
        let e = render_err(
            r#"
resource "sdp_meta_flow" "a" {
  data_flow_id    = "9"
  data_flow_group = "G"
  source {
    format = "delta"
    table  = "just_a_table"
  }
  bronze {
    database = "main.bronze"
    table    = "t"
  }
}
"#,
        );
        assert!(
            e.starts_with("flow 9: source.table: \"just_a_table\" is not a table name"),
            "{e}"
        );
    }

    #[test]
    fn kafka_and_eventhub_render_their_verbatim_keys() {
        let r = render_hcl(
            r#"
resource "sdp_meta_flow" "k" {
  data_flow_id    = "12"
  data_flow_group = "G"
  source {
    format             = "kafka"
    source_schema_path = "/Volumes/main/ops/conf/orders.ddl"
    kafka {
      bootstrap_servers          = "host:9092"
      servers_secrets_scope_name = "scope"
      servers_secrets_scope_key  = "key"
      subscribe                  = "orders"
      options                    = { "kafka.ssl.truststore.location" = "/x", startingOffsets = "earliest" }
    }
  }
  bronze {
    database = "main.bronze"
    table    = "orders_k"
  }
}
resource "sdp_meta_flow" "e" {
  data_flow_id    = "13"
  data_flow_group = "G"
  source {
    format = "eventhub"
    eventhub {
      namespace              = "ns"
      name                   = "hub"
      port                   = "9093"
      access_key_name        = "policy"
      access_key_secret_name = "key"
      secrets_scope_name     = "scope"
      options                = { "kafka.sasl.mechanism" = "PLAIN" }
    }
  }
  bronze {
    database = "main.bronze"
    table    = "iot"
  }
}
"#,
        );
        same(
            row(&r, 0),
            json!({
                "data_flow_id": "12", "data_flow_group": "G", "source_format": "kafka",
                "source_details": {
                    "source_schema_path": "/Volumes/main/ops/conf/orders.ddl",
                    "kafka.bootstrap.servers": "host:9092",
                    "kafka_source_servers_secrets_scope_name": "scope",
                    "kafka_source_servers_secrets_scope_key": "key",
                    "subscribe": "orders",
                    "kafka.ssl.truststore.location": "/x",
                    "startingOffsets": "earliest"
                },
                "bronze_database_prod": "main.bronze", "bronze_table": "orders_k"
            }),
        );
        same(
            row(&r, 1),
            json!({
                "data_flow_id": "13", "data_flow_group": "G", "source_format": "eventhub",
                "source_details": {
                    "eventhub.namespace": "ns", "eventhub.port": "9093", "eventhub.name": "hub",
                    "eventhub.accessKeyName": "policy", "eventhub.accessKeySecretName": "key",
                    "eventhub.secretsScopeName": "scope", "kafka.sasl.mechanism": "PLAIN"
                },
                "bronze_database_prod": "main.bronze", "bronze_table": "iot"
            }),
        );
        let e = render_err(
            r#"
resource "sdp_meta_flow" "k" {
  data_flow_id    = "12"
  data_flow_group = "G"
  source {
    format = "kafka"
    kafka {
      subscribe = "orders"
      options   = { subscribe = "other" }
    }
  }
  bronze {
    database = "main.bronze"
    table    = "orders_k"
  }
}
"#,
        );
        assert_eq!(
            e,
            "flow 12: source.kafka.options: sets \"subscribe\", which another attribute of this block already sets"
        );
    }

    #[test]
    fn snapshot_source_with_apply_changes_from_snapshot() {
        let r = render_hcl(
            r#"
resource "sdp_meta_flow" "p" {
  data_flow_id    = "14"
  data_flow_group = "G2"
  source {
    format          = "snapshot"
    snapshot_format = "csv"
    source_path     = "/Volumes/c/s/v/snapshots/products/LOAD_"
  }
  bronze {
    database       = "c.bronze"
    table          = "products"
    reader_options = { header = "true" }
    apply_changes_from_snapshot {
      keys                      = ["product_id"]
      scd_type                  = 2
      track_history_column_list = ["price"]
    }
  }
}
"#,
        );
        same(
            row(&r, 0),
            json!({
                "data_flow_id": "14", "data_flow_group": "G2", "source_format": "snapshot",
                "source_details": {"source_path_prod": "/Volumes/c/s/v/snapshots/products/LOAD_", "snapshot_format": "csv"},
                "bronze_database_prod": "c.bronze", "bronze_table": "products",
                "bronze_reader_options": {"header": "true"},
                "bronze_apply_changes_from_snapshot": {"keys": ["product_id"], "scd_type": "2", "track_history_column_list": ["price"]}
            }),
        );
    }

    #[test]
    fn silver_only_flow_reads_the_bronze_table_of_its_bronze_block() {
        let r = render_hcl(
            r#"
resource "sdp_meta_flow" "eu" {
  data_flow_id    = "15"
  data_flow_group = "G"
  bronze {
    database = "c.bronze"
    table    = "orders"
  }
  silver {
    database            = "c.silver"
    table               = "orders_eu"
    transformation_file = "/Volumes/c/s/v/conf/my_transformations.json"
    reader_options      = { readChangeFeed = "true" }
  }
}
"#,
        );
        same(
            row(&r, 0),
            json!({
                "data_flow_id": "15", "data_flow_group": "G",
                "bronze_database_prod": "c.bronze", "bronze_table": "orders",
                "silver_database_prod": "c.silver", "silver_table": "orders_eu",
                "silver_transformation_json_prod": "/Volumes/c/s/v/conf/my_transformations.json",
                "silver_reader_options": {"readChangeFeed": "true"}
            }),
        );
        assert_eq!(r.onboard_layer, "silver");
        assert_eq!(
            r.files.len(),
            1,
            "no transformations file when no row references it"
        );
        assert_eq!(r.bronze_spec_table, None);
        assert_eq!(
            r.silver_spec_table.as_deref(),
            Some("main.sdp_meta.silver_dataflowspec")
        );
        assert!(!r.named_parameters.contains_key("bronze_dataflowspec_table"));
    }

    #[test]
    fn cdc_blocks() {
        let r = render_hcl(
            r#"
resource "sdp_meta_flow" "c" {
  data_flow_id    = "20"
  data_flow_group = "G"
  source {
    format = "delta"
    table  = "main.lfc.intpk"
  }
  bronze {
    database = "main.bronze"
    table    = "intpk"
    cdc_apply_changes {
      keys                = ["pk"]
      sequence_by         = "_commit_version"
      scd_type            = "1"
      apply_as_deletes    = "_change_type = 'delete'"
      except_column_list  = ["_change_type", "_commit_version"]
      ignore_null_updates = false
      once                = true
    }
  }
  silver {
    database = "main.silver"
    table    = "intpk"
    cdc_apply_changes_flows {
      keys        = ["pk"]
      sequence_by = "ts"
      scd_type    = "2"
      flow {
        name           = "orders_us"
        source_format  = "delta"
        source_details = { source_database = "main.raw", source_table = "orders_us" }
        once           = false
      }
      flow {
        name          = "orders_eu"
        source_format = "delta"
        source_path   = "/Volumes/x/eu"
        select_exp    = ["*"]
        where_clause  = ["region = 'eu'"]
        reader_options = { readChangeFeed = "true" }
      }
    }
  }
}
"#,
        );
        assert_eq!(
            row(&r, 0)["bronze_cdc_apply_changes"],
            json!({
                "keys": ["pk"], "sequence_by": "_commit_version", "scd_type": "1",
                "ignore_null_updates": false, "apply_as_deletes": "_change_type = 'delete'",
                "except_column_list": ["_change_type", "_commit_version"], "once": true
            })
        );
        // Flows are sorted by name, as the engine normalises keyed blocks.
        assert_eq!(
            row(&r, 0)["silver_cdc_apply_changes_flows"],
            json!({
                "keys": ["pk"], "sequence_by": "ts", "scd_type": "2",
                "flows": [
                    {"name": "orders_eu", "source_format": "delta",
                     "source_details": {"source_path_prod": "/Volumes/x/eu"},
                     "reader_options": {"readChangeFeed": "true"},
                     "select_exp": ["*"], "where_clause": ["region = 'eu'"]},
                    {"name": "orders_us", "source_format": "delta",
                     "source_details": {"source_database": "main.raw", "source_table": "orders_us"},
                     "once": false}
                ]
            })
        );
        // Multi-source CDC silver rows need no transformations file.
        assert!(row(&r, 0).get("silver_transformation_json_prod").is_none());
        assert_eq!(r.files.len(), 1);
    }

    const DQE_FLOWS: &str = r#"
resource "sdp_meta_flow" "q" {
  data_flow_id    = "30"
  data_flow_group = "G"
  source {
    format = "delta"
    table  = "main.raw.orders"
  }
  bronze {
    database = "main.bronze"
    table    = "orders"
    expectations {
      expect               = { valid_pk = "pk IS NOT NULL" }
      expect_all           = {}
      expect_or_quarantine = { bad_pk = "pk IS NULL" }
    }
    quarantine {
      database         = "main.bronze"
      catalog          = "main"
      table            = "orders_quarantine"
      comment          = "bad rows"
      partitions       = ["dt"]
      table_properties = { "delta.enableChangeDataFeed" = "true" }
      cluster_by       = ["pk"]
      cluster_by_auto  = true
    }
    quarantine_row_filter = "ROW FILTER main.sec.g ON (pk)"
  }
  silver {
    database          = "main.silver"
    table             = "orders"
    expectations_file = "/Volumes/main/ops/conf/silver_dqe.json"
  }
}
resource "sdp_meta_flow" "plain" {
  data_flow_id    = "31"
  data_flow_group = "H"
  source {
    format = "delta"
    table  = "main.raw.customers"
  }
  bronze {
    database = "main.bronze"
    table    = "customers"
  }
}
"#;

    #[test]
    fn expectations_files_and_the_quarantine_key_in_every_row() {
        let r = render_hcl(DQE_FLOWS);
        let dqe = format!("{BASE}/dqe/30/bronze_expectations.json");
        same(
            row(&r, 0),
            json!({
                "data_flow_id": "30", "data_flow_group": "G", "source_format": "delta",
                "source_details": {"source_database": "main.raw", "source_table": "orders"},
                "bronze_database_prod": "main.bronze", "bronze_table": "orders",
                "bronze_data_quality_expectations_json_prod": dqe,
                "bronze_quarantine_table": "orders_quarantine",
                "bronze_database_quarantine_prod": "main.bronze",
                "bronze_catalog_quarantine_prod": "main",
                "bronze_quarantine_table_comment": "bad rows",
                "bronze_quarantine_table_partitions": "dt",
                "bronze_quarantine_table_properties": {"delta.enableChangeDataFeed": "true"},
                "bronze_quarantine_table_cluster_by": ["pk"],
                "bronze_quarantine_table_cluster_by_auto": true,
                "bronze_quarantine_row_filter": "ROW FILTER main.sec.g ON (pk)",
                "silver_database_prod": "main.silver", "silver_table": "orders",
                "silver_transformation_json_prod": format!("{BASE}/silver_transformations.json"),
                "silver_data_quality_expectations_json_prod": "/Volumes/main/ops/conf/silver_dqe.json",
                "silver_quarantine_table": null
            }),
        );
        // V4: the other row carries both quarantine keys, null.
        same(
            row(&r, 1),
            json!({
                "data_flow_id": "31", "data_flow_group": "H", "source_format": "delta",
                "source_details": {"source_database": "main.raw", "source_table": "customers"},
                "bronze_database_prod": "main.bronze", "bronze_table": "customers",
                "bronze_quarantine_table": null,
                "silver_quarantine_table": null
            }),
        );
        assert_eq!(
            file(&r, &dqe),
            json!({"expect": {"valid_pk": "pk IS NOT NULL"}, "expect_or_quarantine": {"bad_pk": "pk IS NULL"}})
        );
        assert_eq!(
            file(&r, &format!("{BASE}/silver_transformations.json")),
            json!([])
        );
        assert_eq!(r.files.len(), 3);
        assert_eq!(r.groups, ["G", "H"]);
    }

    #[test]
    fn without_expectations_no_quarantine_key_is_added() {
        let r = render_hcl(
            r#"
resource "sdp_meta_flow" "plain" {
  data_flow_id    = "31"
  data_flow_group = "H"
  source {
    format = "delta"
    table  = "main.raw.customers"
  }
  bronze {
    database = "main.bronze"
    table    = "customers"
  }
}
"#,
        );
        assert!(row(&r, 0).get("bronze_quarantine_table").is_none());
        assert!(row(&r, 0).get("silver_quarantine_table").is_none());
    }

    #[test]
    fn expectations_and_their_file_are_exclusive() {
        let e = render_err(
            r#"
resource "sdp_meta_flow" "q" {
  data_flow_id    = "30"
  data_flow_group = "G"
  source {
    format = "delta"
    table  = "main.raw.orders"
  }
  bronze {
    database          = "main.bronze"
    table             = "orders"
    expectations_file = "/Volumes/x.json"
    expectations {
      expect = { valid_pk = "pk IS NOT NULL" }
    }
  }
}
"#,
        );
        assert_eq!(
            e,
            "flow 30: bronze.expectations_file: set the expectations block or expectations_file, not both"
        );
        let e = render_err(
            r#"
resource "sdp_meta_flow" "q" {
  data_flow_id    = "30"
  data_flow_group = "G"
  silver {
    database            = "main.silver"
    table               = "orders"
    select_exp          = ["*"]
    transformation_file = "/Volumes/t.json"
  }
}
"#,
        );
        assert_eq!(
            e,
            "flow 30: silver.transformation_file: set transformation_file or select_exp / where_clause, not both"
        );
    }

    const SINK_FLOWS: &str = r#"
resource "sdp_meta_flow" "s" {
  data_flow_id    = "40"
  data_flow_group = "G"
  source {
    format      = "cloudFiles"
    source_path = "/Volumes/main/landing/orders"
  }
  bronze {
    database       = "main.bronze"
    table          = "orders"
    reader_options = { "cloudFiles.format" = "json" }
    append_flow {
      name               = "late_orders"
      source_format      = "cloudFiles"
      source_path        = "/Volumes/main/landing/late"
      source_schema_path = "/Volumes/main/ops/conf/orders.ddl"
      reader_options     = { "cloudFiles.format" = "json" }
      spark_conf         = { "spark.x" = "1" }
      comment            = "late"
      once               = true
    }
    append_flow {
      name                   = "archive"
      source_format          = "delta"
      create_streaming_table = true
      source_details         = { source_database = "main.archive", source_table = "orders" }
    }
    sink {
      name         = "orders_out"
      format       = "delta"
      options      = { tablename = "main.out.orders" }
      select_exp   = ["*"]
      where_clause = "amount > 0"
    }
  }
  silver {
    database = "main.silver"
    table    = "orders"
  }
}
"#;

    #[test]
    fn append_flows_and_sinks() {
        let r = render_hcl(SINK_FLOWS);
        same(
            &row(&r, 0)["bronze_append_flows"],
            json!([
                {"name": "archive", "source_format": "delta", "create_streaming_table": true,
                 "source_details": {"source_database": "main.archive", "source_table": "orders"}},
                {"name": "late_orders", "source_format": "cloudFiles", "create_streaming_table": false,
                 "source_details": {"source_path_prod": "/Volumes/main/landing/late",
                                    "source_schema_path": "/Volumes/main/ops/conf/orders.ddl"},
                 "reader_options": {"cloudFiles.format": "json"}, "spark_conf": {"spark.x": "1"},
                 "comment": "late", "once": true}
            ]),
        );
        assert_eq!(
            row(&r, 0)["bronze_sinks"],
            json!([{"name": "orders_out", "format": "delta", "options": {"tablename": "main.out.orders"},
                    "select_exp": ["*"], "where_clause": "amount > 0"}])
        );
        let mut rest = row(&r, 0).as_object().unwrap().clone();
        rest.shift_remove("bronze_append_flows");
        rest.shift_remove("bronze_sinks");
        same(
            &Json::Object(rest),
            json!({
                "data_flow_id": "40", "data_flow_group": "G", "source_format": "cloudFiles",
                "source_details": {"source_path_prod": "/Volumes/main/landing/orders"},
                "bronze_database_prod": "main.bronze", "bronze_table": "orders",
                "bronze_reader_options": {"cloudFiles.format": "json"},
                "silver_database_prod": "main.silver", "silver_table": "orders",
                "silver_transformation_json_prod": format!("{BASE}/silver_transformations.json")
            }),
        );
        let conf = &r.pipeline_configuration["G"];
        assert_eq!(
            conf["bronze"],
            BTreeMap::from([
                ("layer".to_string(), "bronze".to_string()),
                ("bronze.group".to_string(), "G".to_string()),
                (
                    "bronze.dataflowspecTable".to_string(),
                    "main.sdp_meta.bronze_dataflowspec".to_string()
                ),
                (
                    "pipelines.externalSink.enabled".to_string(),
                    "true".to_string()
                ),
            ])
        );
        assert!(!conf["silver"].contains_key("pipelines.externalSink.enabled"));
    }

    #[test]
    fn named_parameters_and_pipeline_configuration() {
        let flows = decode_flows(DQE_FLOWS);
        let r = render(&onboarding(
            flows,
            json!({
                "directory": "/sdp/",
                "file_name": "flows.yml",
                "version": "v2",
                "uc_enabled": false,
                "bronze_dataflowspec_table": "b_spec",
                "bronze_dataflowspec_path": "/mnt/specs/bronze",
                "silver_dataflowspec_path": "/mnt/specs/silver",
                "dependency": "/Volumes/main/ops/wheels/databricks_labs_sdp_meta-0.1.0-py3-none-any.whl"
            }),
        ))
        .unwrap();
        let path = "/Volumes/main/ops/conf/sdp/flows.yml";
        assert_eq!(r.onboarding_path, path);
        let np: Vec<(&str, &str)> = r
            .named_parameters
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            np,
            [
                ("bronze_dataflowspec_path", "/mnt/specs/bronze"),
                ("bronze_dataflowspec_table", "b_spec"),
                ("database", "main.sdp_meta"),
                ("env", "prod"),
                ("import_author", "brickform"),
                ("onboard_layer", "bronze_silver"),
                ("onboarding_file_path", path),
                ("overwrite", "True"),
                ("silver_dataflowspec_path", "/mnt/specs/silver"),
                ("silver_dataflowspec_table", "silver_dataflowspec"),
                ("uc_enabled", "False"),
                ("version", "v2"),
            ]
        );
        let whl = "/Volumes/main/ops/wheels/databricks_labs_sdp_meta-0.1.0-py3-none-any.whl";
        assert_eq!(
            r.pipeline_configuration["G"]["silver"],
            BTreeMap::from([
                ("layer".to_string(), "silver".to_string()),
                ("silver.group".to_string(), "G".to_string()),
                (
                    "silver.dataflowspecTable".to_string(),
                    "main.sdp_meta.silver_dataflowspec".to_string()
                ),
                ("sdp_meta_dependency".to_string(), whl.to_string()),
                ("sdp_meta_whl".to_string(), whl.to_string()),
            ])
        );
        assert_eq!(
            r.pipeline_configuration["H"].keys().collect::<Vec<_>>(),
            ["bronze"]
        );
        assert_eq!(r.bronze_spec_table.as_deref(), Some("main.sdp_meta.b_spec"));
        let attrs = r.attributes();
        assert_eq!(attrs["onboarding_file_path"], Value::from(path));
        assert_eq!(attrs["groups"], Value::List(vec!["G".into(), "H".into()]));
    }

    #[test]
    fn yaml_onboarding_file_reads_back_as_the_same_rows() {
        let mut flows = decode_flows(DQE_FLOWS);
        flows.extend(decode_flows(SINK_FLOWS));
        let r = render(&onboarding(flows, json!({"file_name": "onboarding.YAML"}))).unwrap();
        let text = &r.files[&r.onboarding_path];
        assert!(
            text.starts_with("- \"data_flow_id\": \"30\"\n  \"data_flow_group\": \"G\"\n"),
            "{text}"
        );
        let ctx = brickform_core::lang::functions::FunctionContext {
            base_dir: std::path::Path::new("."),
        };
        let back = brickform_core::lang::functions::call(
            "yamldecode",
            &[Value::from(text.as_str())],
            &ctx,
        )
        .unwrap();
        assert_eq!(back.to_json(), Json::Array(r.rows.clone()));
        assert_eq!(
            serde_json::from_str::<Json>(&r.onboarding_json).unwrap(),
            Json::Array(r.rows)
        );
    }

    /// A YAML onboarding file's expectations and transformations are YAML too, with its
    /// extension, and hold what the JSON set holds.
    #[test]
    fn a_yaml_onboarding_writes_its_other_files_as_yaml() {
        let mut flows = decode_flows(DQE_FLOWS);
        flows.extend(decode_flows(SINK_FLOWS));
        let json_set = render(&onboarding(flows.clone(), json!({}))).unwrap();
        let ctx = brickform_core::lang::functions::FunctionContext {
            base_dir: std::path::Path::new("."),
        };
        for (name, ext) in [("onboarding.yml", "yml"), ("flows.YAML", "yaml")] {
            let r = render(&onboarding(flows.clone(), json!({"file_name": name}))).unwrap();
            assert_eq!(r.files.len(), json_set.files.len());
            let mut sidecars = 0;
            for (path, content) in &json_set.files {
                if *path == json_set.onboarding_path {
                    continue;
                }
                sidecars += 1;
                let stem = path.strip_suffix(".json").unwrap();
                let yaml_path = format!("{stem}.{ext}");
                let text = r
                    .files
                    .get(&yaml_path)
                    .unwrap_or_else(|| panic!("{yaml_path} missing: {:?}", r.files.keys()));
                assert!(
                    text != content || ["[]", "{}"].contains(&content.trim()),
                    "{text}"
                );
                let back = brickform_core::lang::functions::call(
                    "yamldecode",
                    &[Value::from(text.as_str())],
                    &ctx,
                )
                .unwrap();
                assert_eq!(
                    back.to_json(),
                    serde_json::from_str::<Json>(content).unwrap()
                );
                // The rows name the YAML file, not the JSON one.
                assert!(r.onboarding_json.contains(&yaml_path), "{yaml_path}");
                assert!(!r.onboarding_json.contains(path.as_str()));
            }
            assert!(
                sidecars >= 2,
                "expectations and transformations: {sidecars}"
            );
        }
    }

    /// `pipeline_mode = "combined"` gives a group with both layers one bronze_silver
    /// pipeline configuration; a group with one layer keeps its own.
    #[test]
    fn combined_mode_runs_both_layers_of_a_group_in_one_pipeline() {
        let flows = decode_flows(DQE_FLOWS);
        let split = render(&onboarding(flows.clone(), json!({}))).unwrap();
        let r = render(&onboarding(
            flows.clone(),
            json!({"pipeline_mode": "combined", "dependency": "sdp-meta==0.1.0"}),
        ))
        .unwrap();
        assert_eq!(
            split.pipeline_configuration["G"].keys().collect::<Vec<_>>(),
            ["bronze", "silver"]
        );
        assert_eq!(
            r.pipeline_configuration["G"].keys().collect::<Vec<_>>(),
            ["bronze_silver"]
        );
        let conf: Vec<(&str, &str)> = r.pipeline_configuration["G"]["bronze_silver"]
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            conf,
            [
                (
                    "bronze.dataflowspecTable",
                    "main.sdp_meta.bronze_dataflowspec"
                ),
                ("bronze.group", "G"),
                ("layer", "bronze_silver"),
                ("sdp_meta_dependency", "sdp-meta==0.1.0"),
                ("sdp_meta_whl", "sdp-meta==0.1.0"),
                (
                    "silver.dataflowspecTable",
                    "main.sdp_meta.silver_dataflowspec"
                ),
                ("silver.group", "G"),
            ]
        );
        assert_eq!(
            r.pipeline_configuration["H"].keys().collect::<Vec<_>>(),
            ["bronze"]
        );
        // The files and the onboarding job's parameters do not depend on the mode.
        assert_eq!(r.files, split.files);
        assert_eq!(r.named_parameters, split.named_parameters);
        let err = render(&onboarding(flows, json!({"pipeline_mode": "joint"}))).unwrap_err();
        assert!(err.to_string().contains("pipeline_mode"), "{err}");
    }

    #[test]
    fn yaml_quotes_what_yaml_would_reinterpret() {
        let v = json!([{"on": "yes", "n": "1", "e": "", "x": "a\u{7f}\u{85}b\"\\", "l": [], "o": {}, "nested": [[1, "2"], {"a": null}]}]);
        let text = yaml(&v);
        let ctx = brickform_core::lang::functions::FunctionContext {
            base_dir: std::path::Path::new("."),
        };
        let back = brickform_core::lang::functions::call(
            "yamldecode",
            &[Value::from(text.as_str())],
            &ctx,
        )
        .unwrap();
        assert_eq!(back.to_json(), v, "{text}");
        assert!(text.contains("\\u007F"));
    }

    #[test]
    fn duplicate_data_flow_ids_are_an_error() {
        let mut flows = decode_flows(DQE_FLOWS);
        flows.push(flows[0].clone());
        let e = render(&onboarding(flows, json!({}))).unwrap_err();
        assert_eq!(
            e,
            RenderError::DuplicateId {
                data_flow_id: "30".into(),
                first: 0,
                second: 2
            }
        );
        assert!(e.to_string().contains("duplicate data_flow_ids"));
    }

    #[test]
    fn flows_keep_their_order() {
        let mut flows = decode_flows(DQE_FLOWS);
        flows.reverse();
        let r = render(&onboarding(flows, json!({}))).unwrap();
        let ids: Vec<&str> = r
            .rows
            .iter()
            .map(|r| r["data_flow_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["31", "30"]);
    }

    #[test]
    fn onboarding_errors_name_the_attribute() {
        let mut o = onboarding(decode_flows(DQE_FLOWS), json!({}));
        o.insert("env".into(), Value::Null);
        assert_eq!(render(&o).unwrap_err().to_string(), "env: required");
        let o = onboarding(Vec::new(), json!({}));
        assert_eq!(
            render(&o).unwrap_err().to_string(),
            "flows: an onboarding needs at least one flow"
        );
        let mut o = onboarding(decode_flows(DQE_FLOWS), json!({}));
        o.insert("volume_path".into(), Value::Unknown);
        assert_eq!(
            render(&o).unwrap_err(),
            RenderError::Unknown {
                field: "volume_path".into()
            }
        );
    }

    #[test]
    fn derive_knows_what_does_not_depend_on_unknown_values() {
        let mut o = onboarding(decode_flows(DQE_FLOWS), json!({}));
        o.insert("volume_path".into(), Value::Unknown);
        let d = derive(&o).unwrap();
        assert_eq!(d["onboarding_json"], Value::Unknown);
        assert_eq!(d["onboarding_file_path"], Value::Unknown);
        assert_eq!(d["files"], Value::Unknown);
        assert_eq!(d["onboard_layer"], Value::from("bronze_silver"));
        assert_eq!(d["groups"], Value::List(vec!["G".into(), "H".into()]));
        let np = d["named_parameters"].as_object().unwrap();
        assert_eq!(np["onboarding_file_path"], Value::Unknown);
        assert_eq!(np["env"], Value::from("prod"));
        let full = render(&onboarding(decode_flows(DQE_FLOWS), json!({})))
            .unwrap()
            .attributes();
        assert_eq!(d["pipeline_configuration"], full["pipeline_configuration"]);
        assert_eq!(d["bronze_spec_table"], full["bronze_spec_table"]);

        // An unknown table name: the rows are unknown, the rest is not.
        let mut flows = decode_flows(DQE_FLOWS);
        if let Some(Value::Object(b)) = flows[1].get_mut("bronze") {
            std::sync::Arc::make_mut(b).insert("table".into(), Value::Unknown);
        }
        let d = derive(&onboarding(flows, json!({}))).unwrap();
        assert_eq!(d["onboarding_json"], Value::Unknown);
        assert_eq!(d["onboarding_file_path"], full["onboarding_file_path"]);
        assert_eq!(d["pipeline_configuration"], full["pipeline_configuration"]);

        // An unknown bool could change anything.
        let mut o = onboarding(decode_flows(DQE_FLOWS), json!({}));
        o.insert("uc_enabled".into(), Value::Unknown);
        let d = derive(&o).unwrap();
        assert!(d.values().all(|v| *v == Value::Unknown));

        // Attributes rendering does not read change nothing.
        let mut o = onboarding(decode_flows(DQE_FLOWS), json!({}));
        o.insert("sdp_meta_version".into(), Value::Unknown);
        o.insert("remote_fingerprints".into(), Value::Unknown);
        assert_eq!(derive(&o).unwrap(), full);

        // Known: the full rendering, errors included.
        assert_eq!(
            derive(&onboarding(decode_flows(DQE_FLOWS), json!({}))).unwrap(),
            full
        );
    }

    #[test]
    fn rendering_two_thousand_flows_is_fast() {
        let mut src = String::new();
        for i in 0..2000 {
            src.push_str(&format!(
                r#"
resource "sdp_meta_flow" "f{i}" {{
  data_flow_id    = "{i}"
  data_flow_group = "G{g}"
  source {{
    format = "delta"
    table  = "main.raw.t{i}"
  }}
  bronze {{
    database = "main.bronze"
    table    = "t{i}"
    expectations {{
      expect = {{ valid = "pk IS NOT NULL" }}
    }}
    sink {{
      name    = "s"
      format  = "delta"
      options = {{ tablename = "main.out.t{i}" }}
    }}
  }}
  silver {{
    database   = "main.silver"
    table      = "t{i}"
    select_exp = ["*"]
  }}
}}
"#,
                g = i % 10
            ));
        }
        let o = onboarding(decode_flows(&src), json!({"file_name": "onboarding.yml"}));
        let start = std::time::Instant::now();
        let r = render(&o).unwrap();
        let took = start.elapsed();
        assert_eq!(r.rows.len(), 2000);
        assert_eq!(r.files.len(), 2002);
        // Well under a second in release; debug builds are several times slower.
        let limit = if cfg!(debug_assertions) { 5.0 } else { 1.0 };
        assert!(took.as_secs_f64() < limit, "took {took:?}");
        eprintln!("rendered 2000 flows in {took:?}");
    }
}
