//! `brickform flows import FILE`: an existing sdp-meta onboarding file as configuration.
//!
//! Each row becomes one `resource "sdp_meta_flow"` block using the fields of
//! docs/sdp-meta-flows.md, so that rendering the imported flows with the same env gives the
//! same rows back (up to the paths of the expectations and transformations files brickform
//! writes itself, key order, and the null quarantine keys it adds). Referenced expectations
//! and silver transformations files are read through a callback and inlined as
//! `expectations` blocks and `select_exp` / `where_clause`; files that cannot be read stay
//! referenced by path (`expectations_file`, `transformation_file`). Whatever the flow schema
//! cannot express is reported as a warning, never dropped silently.
//!
//! The keys are read by walking the tables of [`super::fields`], the ones rendering writes
//! with, in the order the flow schema declares the attributes.

use super::fields::{
    Conv, DATA_FLOW_ID, EXPECTATIONS, FLOW, Field, Key, LAYER, SOURCE_DETAILS, SOURCE_DETAILS_KEY,
    SOURCE_FORMAT, Special, TRANSFORMATION,
};
use super::render::is_yaml;
use super::schema::{LAYERS, flow_schema};
use brickform_core::lang::fmt::format_source;
use brickform_core::lang::functions::{FunctionContext, FunctionError, call};
use brickform_core::provider::Schema;
use brickform_core::value::Value;
use brickform_core::value::{quote, source_key, source_string};
use serde_json::{Map, Value as Json};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The result of an import.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The configuration: one `sdp_meta_flow` block per row, then a commented
    /// `sdp_meta_onboarding` skeleton listing them, formatted as `brickform fmt` does.
    pub hcl: String,
    /// The env whose keys were imported.
    pub env: String,
    /// What the schema cannot express, and other things to review.
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{file}: {source}")]
    Parse {
        file: String,
        #[source]
        source: ParseError,
    },
    #[error("{file}: an onboarding file is a list of flow objects; {message}")]
    Shape { file: String, message: String },
    #[error(
        "{file} has keys for several envs ({}); choose one with --env",
        envs.join(", ")
    )]
    AmbiguousEnv { file: String, envs: Vec<String> },
    #[error(
        "{file} has no bronze_database_{env} or silver_database_{env} key{}",
        if found.is_empty() { String::new() } else { format!("; its envs are: {}", found.join(", ")) }
    )]
    EnvNotFound {
        file: String,
        env: String,
        found: Vec<String>,
    },
    #[error(
        "{file} has no env-suffixed keys (bronze_database_<env>, silver_database_<env>); give the env with --env"
    )]
    NoEnv { file: String },
    /// The generated configuration did not format (a bug).
    #[error("internal error formatting the imported configuration: {0}")]
    Format(String),
}

/// Why an onboarding file is not a JSON or YAML document.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Read as `yamldecode` reads YAML, so the values are the ones configurations get.
    #[error(transparent)]
    Yaml(FunctionError),
    #[error(transparent)]
    Json(serde_json::Error),
}

/// Parses a JSON or YAML document (by the file name's extension).
fn parse(text: &str, file_name: &str) -> Result<Json, ParseError> {
    if is_yaml(file_name) {
        let ctx = FunctionContext {
            base_dir: std::path::Path::new("."),
        };
        call("yamldecode", &[Value::from(text)], &ctx)
            .map(|v| v.to_json())
            .map_err(ParseError::Yaml)
    } else {
        serde_json::from_str(text).map_err(ParseError::Json)
    }
}

/// The envs a file has keys for, from `bronze_database_<env>` / `silver_database_<env>`.
fn envs_of(rows: &[Map<String, Json>]) -> BTreeSet<String> {
    let mut envs = BTreeSet::new();
    for row in rows {
        for key in row.keys() {
            for layer in ["bronze", "silver"] {
                let quarantine = format!("{layer}_database_quarantine_");
                if let Some(env) = key.strip_prefix(&format!("{layer}_database_"))
                    && !env.is_empty()
                    && !key.starts_with(&quarantine)
                {
                    envs.insert(env.to_string());
                }
            }
        }
    }
    envs
}

/// Imports an onboarding file. `file_name` (its path as given) picks JSON or YAML and names
/// it in messages; `env` picks the keys to import when the file has several envs;
/// `read_file` gives the content of a referenced file (`/Volumes/…`) when it can.
pub fn import(
    text: &str,
    file_name: &str,
    env: Option<&str>,
    read_file: &dyn Fn(&str) -> Option<String>,
) -> Result<Imported, ImportError> {
    let doc = parse(text, file_name).map_err(|source| ImportError::Parse {
        file: file_name.to_string(),
        source,
    })?;
    let Json::Array(items) = doc else {
        return Err(ImportError::Shape {
            file: file_name.to_string(),
            message: format!("got {}", json_type(&doc)),
        });
    };
    let rows = items
        .into_iter()
        .enumerate()
        .map(|(i, j)| match j {
            Json::Object(o) => Ok(o),
            other => Err(ImportError::Shape {
                file: file_name.to_string(),
                message: format!("item {i} is {}", json_type(&other)),
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;

    let found = envs_of(&rows);
    let env = match env {
        Some(e) if found.contains(e) => e.to_string(),
        Some(e) => {
            return Err(ImportError::EnvNotFound {
                file: file_name.to_string(),
                env: e.to_string(),
                found: found.into_iter().collect(),
            });
        }
        None => match found.len() {
            0 => {
                return Err(ImportError::NoEnv {
                    file: file_name.to_string(),
                });
            }
            1 => found.iter().next().cloned().unwrap_or_default(),
            _ => {
                return Err(ImportError::AmbiguousEnv {
                    file: file_name.to_string(),
                    envs: found.into_iter().collect(),
                });
            }
        },
    };

    let schema = flow_schema();
    let mut im = Importer {
        env: &env,
        schema: &schema,
        env_key_bases: env_key_bases(),
        read_file,
        warnings: Vec::new(),
        transformations: HashMap::new(),
    };
    let mut names = HashSet::new();
    let mut out = String::new();
    let mut addresses = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        let (name, items) = im.flow(i, row);
        let name = unique(name, &mut names);
        out.push_str(&format!("resource \"sdp_meta_flow\" \"{name}\" {{\n"));
        write_body(&items, 1, &mut out);
        out.push_str("}\n\n");
        addresses.push(format!("sdp_meta_flow.{name}"));
    }
    out.push_str(&skeleton(file_name, &env, &addresses));
    let hcl = format_source(&out).map_err(|e| ImportError::Format(e.to_string()))?;
    let warnings = im.warnings;
    Ok(Imported { hcl, env, warnings })
}

fn json_type(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a bool",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

/// A commented `sdp_meta_onboarding` that renders the imported flows.
fn skeleton(file_name: &str, env: &str, addresses: &[String]) -> String {
    let (volume, directory, base) = match volume_parts(file_name) {
        Some((v, d, b)) => (v, d, b),
        None => (
            "/Volumes/<catalog>/<schema>/<volume>".to_string(),
            "conf".to_string(),
            basename(file_name).to_string(),
        ),
    };
    let mut s = String::new();
    s.push_str(
        "# The onboarding that renders these flows; set database to the catalog.schema of the\n",
    );
    s.push_str("# dataflowspec tables (and check volume_path) before uncommenting.\n");
    s.push_str("# resource \"sdp_meta_onboarding\" \"onboarding\" {\n");
    s.push_str(&format!("#   volume_path = {}\n", source_string(&volume)));
    s.push_str(&format!(
        "#   directory   = {}\n",
        source_string(&directory)
    ));
    s.push_str(&format!("#   file_name   = {}\n", source_string(&base)));
    s.push_str(&format!("#   env         = {}\n", source_string(env)));
    s.push_str("#   database    = \"<catalog>.<schema>\"\n");
    s.push_str("#   flows = [\n");
    for a in addresses {
        s.push_str(&format!("#     {a},\n"));
    }
    s.push_str("#   ]\n");
    s.push_str("# }\n");
    s
}

fn basename(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// `/Volumes/c/s/v/dir/sub/file.json` → (`/Volumes/c/s/v`, `dir/sub`, `file.json`): a file
/// at least one directory below its volume.
fn volume_parts(path: &str) -> Option<(String, String, String)> {
    let p = crate::volume_path::VolumePath::parse(path)?;
    let (file, dirs) = p.rest.split_last()?;
    if dirs.is_empty() {
        return None;
    }
    Some((p.volume_root(), dirs.join("/"), file.clone()))
}

/// A unique resource name.
fn unique(name: String, used: &mut HashSet<String>) -> String {
    if used.insert(name.clone()) {
        return name;
    }
    let mut n = 2;
    loop {
        let candidate = format!("{name}_{n}");
        if used.insert(candidate.clone()) {
            return candidate;
        }
        n += 1;
    }
}

/// A valid resource name from a table name.
fn identifier(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert_str(0, "flow_");
    }
    out
}

// ---------- the HCL being built ----------

/// The keyed blocks, written with their `name` as the label (`sink "out" { … }`), as
/// docs/sdp-meta-flows.md shows.
const NAMED_BLOCKS: &[&str] = &["flow", "append_flow", "sink"];

enum Item {
    Attr(&'static str, Json),
    Block(&'static str, Vec<Item>),
}

fn write_body(items: &[Item], depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    let mut prev_block = false;
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Attr(name, value) => {
                if prev_block {
                    out.push('\n');
                }
                out.push_str(&indent);
                out.push_str(name);
                out.push_str(" = ");
                write_expr(value, depth, out);
                out.push('\n');
                prev_block = false;
            }
            Item::Block(name, body) => {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&indent);
                out.push_str(name);
                let mut body = body.as_slice();
                if NAMED_BLOCKS.contains(name)
                    && let Some((Item::Attr("name", Json::String(label)), rest)) =
                        body.split_first()
                {
                    out.push(' ');
                    out.push_str(&source_string(label));
                    body = rest;
                }
                out.push_str(" {\n");
                write_body(body, depth + 1, out);
                out.push_str(&indent);
                out.push_str("}\n");
                prev_block = true;
            }
        }
    }
}

fn is_scalar(j: &Json) -> bool {
    !matches!(j, Json::Array(_) | Json::Object(_))
}

fn write_expr(j: &Json, depth: usize, out: &mut String) {
    match j {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => out.push_str(&n.to_string()),
        Json::String(s) => out.push_str(&source_string(s)),
        Json::Array(a) if a.is_empty() => out.push_str("[]"),
        Json::Array(a) => {
            let inline: Vec<String> = if a.iter().all(is_scalar) {
                a.iter()
                    .map(|v| {
                        let mut s = String::new();
                        write_expr(v, depth, &mut s);
                        s
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let width: usize = inline.iter().map(|s| s.len() + 2).sum();
            if !inline.is_empty() && width <= 80 {
                out.push('[');
                out.push_str(&inline.join(", "));
                out.push(']');
            } else {
                let indent = "  ".repeat(depth + 1);
                out.push_str("[\n");
                for v in a {
                    out.push_str(&indent);
                    write_expr(v, depth + 1, out);
                    out.push_str(",\n");
                }
                out.push_str(&"  ".repeat(depth));
                out.push(']');
            }
        }
        Json::Object(o) if o.is_empty() => out.push_str("{}"),
        Json::Object(o) => {
            let indent = "  ".repeat(depth + 1);
            out.push_str("{\n");
            for (k, v) in o {
                out.push_str(&indent);
                out.push_str(&source_key(k));
                out.push_str(" = ");
                write_expr(v, depth + 1, out);
                out.push('\n');
            }
            out.push_str(&"  ".repeat(depth));
            out.push('}');
        }
    }
}

// ---------- rows to flows ----------

/// What reading a flow's fields needs besides the fields.
struct Rd<'r> {
    /// The flow's id, for warnings.
    id: &'r str,
    /// The layer being read (`bronze` / `silver`), empty outside the layers.
    layer: &'static str,
    /// The source format, lower-cased.
    format: String,
}

/// A parsed silver transformations file: entries by target table.
type Transformations = HashMap<String, Vec<Map<String, Json>>>;

struct Importer<'a> {
    env: &'a str,
    /// The flow schema, whose order the configuration follows.
    schema: &'a Schema,
    /// The env-suffixed key bases ([`env_key_bases`]).
    env_key_bases: Vec<String>,
    read_file: &'a dyn Fn(&str) -> Option<String>,
    warnings: Vec<String>,
    /// Transformations files read so far, by path (`None`: unreadable or invalid).
    transformations: HashMap<String, Option<Transformations>>,
}

/// Removes a key; null counts as absent.
fn take(m: &mut Map<String, Json>, key: &str) -> Option<Json> {
    m.shift_remove(key).filter(|v| !v.is_null())
}

impl Importer<'_> {
    fn warn(&mut self, id: &str, message: impl AsRef<str>) {
        self.warnings
            .push(format!("flow {id}: {}", message.as_ref()));
    }

    fn string(&mut self, id: &str, key: &str, v: Json) -> Option<Json> {
        match v {
            Json::String(_) => Some(v),
            Json::Number(n) => Some(Json::String(n.to_string())),
            Json::Bool(b) => Some(Json::String(b.to_string())),
            other => {
                self.warn(
                    id,
                    format!("{key} is {}, not a string; dropped", json_type(&other)),
                );
                None
            }
        }
    }

    fn bool(&mut self, id: &str, key: &str, v: Json) -> Option<Json> {
        match &v {
            Json::Bool(_) => Some(v),
            Json::String(s) if s.eq_ignore_ascii_case("true") => Some(Json::Bool(true)),
            Json::String(s) if s.eq_ignore_ascii_case("false") => Some(Json::Bool(false)),
            other => {
                self.warn(id, format!("{key} is {other}, not a bool; dropped"));
                None
            }
        }
    }

    fn strings(&mut self, id: &str, key: &str, v: Json) -> Option<Json> {
        match v {
            Json::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.string(id, key, item)?);
                }
                Some(Json::Array(out))
            }
            Json::String(s) => Some(Json::Array(vec![Json::String(s)])),
            other => {
                self.warn(
                    id,
                    format!(
                        "{key} is {}, not a list of strings; dropped",
                        json_type(&other)
                    ),
                );
                None
            }
        }
    }

    fn string_map(&mut self, id: &str, key: &str, v: Json) -> Option<Json> {
        match v {
            Json::Object(o) => {
                let mut out = Map::new();
                for (k, v) in o {
                    if v.is_null() {
                        continue;
                    }
                    if let Some(s) = self.string(id, &format!("{key}.{k}"), v) {
                        out.insert(k, s);
                    }
                }
                Some(Json::Object(out))
            }
            other => {
                self.warn(
                    id,
                    format!("{key} is {}, not an object; dropped", json_type(&other)),
                );
                None
            }
        }
    }

    /// `"a,b"` (what sdp-meta expects) or a list (which it mis-parses).
    fn partition_list(&mut self, id: &str, key: &str, v: Json) -> Option<Json> {
        match v {
            Json::String(s) => Some(Json::Array(
                s.split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(|c| Json::String(c.to_string()))
                    .collect(),
            )),
            Json::Array(_) => {
                self.warn(
                    id,
                    format!("{key} is a list, which sdp-meta 0.1.0 mis-parses into one column; brickform renders it as the comma-separated string it expects"),
                );
                self.strings(id, key, v)
            }
            other => self.strings(id, key, other),
        }
    }

    /// A list, or its string form `"['a','b']"`; a plain `"a,b"` is rejected by sdp-meta.
    fn cluster_list(&mut self, id: &str, key: &str, v: Json) -> Option<Json> {
        match v {
            Json::String(s) => {
                let t = s.trim();
                let inner = match t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                    Some(inner) => inner,
                    None => {
                        self.warn(
                            id,
                            format!("{key} is the plain string {}, which sdp-meta 0.1.0 rejects; brickform renders it as a list", quote(&s)),
                        );
                        t
                    }
                };
                Some(Json::Array(
                    inner
                        .split(',')
                        .map(|c| c.trim().trim_matches(|q| q == '\'' || q == '"').trim())
                        .filter(|c| !c.is_empty())
                        .map(|c| Json::String(c.to_string()))
                        .collect(),
                ))
            }
            other => self.strings(id, key, other),
        }
    }

    /// Reads a JSON or YAML file referenced by the row.
    fn read(&self, path: &str) -> Option<Json> {
        let text = (self.read_file)(path)?;
        parse(&text, path).ok()
    }

    /// A flow's resource name and body.
    fn flow(&mut self, index: usize, mut row: Map<String, Json>) -> (String, Vec<Item>) {
        let env = self.env.to_string();
        let id = match take(&mut row, DATA_FLOW_ID.attr) {
            Some(Json::String(s)) => s,
            Some(Json::Number(n)) => n.to_string(),
            other => {
                let id = format!("#{index}");
                self.warn(
                    &id,
                    format!(
                        "data_flow_id is {}; the flow needs one",
                        other.as_ref().map(json_type).unwrap_or("missing")
                    ),
                );
                id
            }
        };
        let mut items = vec![Item::Attr(DATA_FLOW_ID.attr, Json::String(id.clone()))];
        let schema = self.schema;
        let mut rd = Rd {
            id: &id,
            layer: "",
            format: String::new(),
        };
        items.extend(self.read_fields(&rd, "", &mut row, FLOW, schema, ""));
        if !items
            .iter()
            .any(|i| matches!(i, Item::Attr("data_flow_group", _)))
        {
            self.warn(&id, "data_flow_group is missing; the flow needs one");
        }

        let has_source = [SOURCE_FORMAT.key, Key::Plain(SOURCE_DETAILS_KEY)]
            .iter()
            .any(|k| row.get(&k.spell("", &env)).is_some_and(|v| !v.is_null()));
        if has_source {
            items.push(Item::Block("source", self.source(&mut rd, &mut row)));
        }
        let mut tables = Vec::new();
        for layer in LAYERS {
            rd.layer = layer;
            let body = match sub_schema(schema, layer) {
                Some(s) => self.read_fields(&rd, "", &mut row, LAYER, s, layer),
                None => Vec::new(),
            };
            tables.push(table_of(&body));
            if !body.is_empty() {
                self.require(&id, layer, &body);
                items.push(Item::Block(layer, body));
            }
        }
        let mut tables = tables.into_iter();
        let (bronze_table, silver_table) = (tables.next().flatten(), tables.next().flatten());

        // What is left: other envs' keys (ignored by sdp-meta) and keys the schema lacks.
        for (key, _) in row.iter().filter(|(_, v)| !v.is_null()) {
            let message = if key == "silver_quarantine_cluster_by" {
                "silver_quarantine_cluster_by (a separate quarantine clustering key) is not supported; use quarantine.cluster_by (silver_quarantine_table_cluster_by); dropped".to_string()
            } else if let Some(other) = self.other_env(key) {
                format!(
                    "{key} is for env {}, not {} (sdp-meta ignores it); dropped",
                    quote(&other),
                    quote(&env)
                )
            } else {
                format!("{key} is not a field sdp_meta_flow supports; dropped")
            };
            self.warn(&id, message);
        }

        let name = if has_source {
            bronze_table.or(silver_table)
        } else {
            silver_table.or(bronze_table)
        };
        let name = identifier(&name.unwrap_or_else(|| format!("flow_{id}")));
        (name, items)
    }

    /// The env a key of another env is suffixed with.
    fn other_env(&self, key: &str) -> Option<String> {
        for layer in LAYERS {
            let Some(rest) = key.strip_prefix(layer).and_then(|r| r.strip_prefix('_')) else {
                continue;
            };
            // Keys of this env are consumed before this is asked.
            if let Some(env) = self
                .env_key_bases
                .iter()
                .find_map(|base| rest.strip_prefix(base.as_str()))
                .filter(|env| !env.is_empty() && *env != self.env)
            {
                return Some(env.to_string());
            }
        }
        None
    }

    fn require(&mut self, id: &str, layer: &str, items: &[Item]) {
        for field in ["database", "table"] {
            if !items
                .iter()
                .any(|i| matches!(i, Item::Attr(n, _) if *n == field))
            {
                let key = LAYER
                    .iter()
                    .find(|f| f.attr == field)
                    .map(|f| f.key.spell(layer, self.env))
                    .unwrap_or_default();
                self.warn(id, format!("{key} is missing; {layer}.{field} is required"));
            }
        }
    }

    fn source(&mut self, rd: &mut Rd<'_>, row: &mut Map<String, Json>) -> Vec<Item> {
        let id = rd.id;
        let env = self.env.to_string();
        let mut items = Vec::new();
        let format_key = SOURCE_FORMAT.key.spell("", &env);
        let format = take(row, &format_key).and_then(|f| self.string(id, &format_key, f));
        let fmt = format
            .as_ref()
            .and_then(Json::as_str)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match format {
            Some(f) => items.push(Item::Attr(SOURCE_FORMAT.attr, f)),
            None => self.warn(id, "source_format is missing; source.format is required"),
        }
        let mut details = match take(row, SOURCE_DETAILS_KEY) {
            Some(Json::Object(o)) => o,
            Some(other) => {
                self.warn(
                    id,
                    format!("source_details is {}; dropped", json_type(&other)),
                );
                Map::new()
            }
            None => Map::new(),
        };
        rd.format = fmt.clone();
        if let Some(s) = sub_schema(self.schema, "source") {
            items.extend(self.read_fields(
                rd,
                SOURCE_DETAILS_KEY,
                &mut details,
                SOURCE_DETAILS,
                s,
                "source",
            ));
        }
        for (key, _) in details.iter().filter(|(_, v)| !v.is_null()) {
            let message = match key
                .strip_prefix("source_path_")
                .or(key.strip_prefix("source_catalog_"))
            {
                Some(e) if !e.is_empty() => format!(
                    "source_details.{key} is for env {}, not {} (sdp-meta ignores it); dropped",
                    quote(e),
                    quote(&env)
                ),
                _ => format!(
                    "source_details.{key} is not read by sdp-meta for source_format {}; dropped",
                    quote(&fmt)
                ),
            };
            self.warn(id, message);
        }
        items
    }

    /// Reads the fields of `table` from `o` (at `path` in the row, for messages) as the
    /// attributes and blocks of a block of `schema` named `owner`, in the schema's order. The
    /// keys read are removed from `o`; what is left is the caller's to report.
    fn read_fields(
        &mut self,
        rd: &Rd<'_>,
        path: &str,
        o: &mut Map<String, Json>,
        table: &'static [Field],
        schema: &Schema,
        owner: &str,
    ) -> Vec<Item> {
        let id = rd.id;
        let mut order: Vec<&'static Field> = table.iter().collect();
        order.sort_by_key(|f| schema_position(schema, f.attr));
        let mut items = Vec::new();
        for f in order {
            let key = f.key.spell(rd.layer, self.env);
            let at = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            let name = f.attr;
            let taken = |o: &mut Map<String, Json>| take(o, &key);
            let value = match f.conv {
                Conv::Str
                | Conv::StrOrNullWithExpectations
                | Conv::Special(Special::SourceTable) => {
                    taken(o).and_then(|v| self.string(id, &at, v))
                }
                Conv::Bool | Conv::BoolText | Conv::BoolOrFalse => {
                    taken(o).and_then(|v| self.bool(id, &at, v))
                }
                Conv::List => taken(o).and_then(|v| self.strings(id, &at, v)),
                Conv::ListOrListString => taken(o).and_then(|v| self.cluster_list(id, &at, v)),
                Conv::CommaList => taken(o).and_then(|v| self.partition_list(id, &at, v)),
                Conv::Map | Conv::MapOrEmpty => taken(o).and_then(|v| self.string_map(id, &at, v)),
                Conv::Verbatim => {
                    // Every other key is passed to the reader verbatim.
                    if rd.format != owner || o.is_empty() {
                        continue;
                    }
                    let rest = std::mem::take(o);
                    self.string_map(id, path, Json::Object(rest))
                }
                Conv::Special(Special::SourceCatalog) => {
                    let fmt = &rd.format;
                    if o.get(&key).is_some_and(|v| !v.is_null())
                        && matches!(fmt.as_str(), "delta" | "snapshot")
                    {
                        self.warn(
                            id,
                            format!("{at} is ignored by sdp-meta 0.1.0's {fmt} reader; brickform renders source_catalog into source_database instead"),
                        );
                    }
                    taken(o).and_then(|v| self.string(id, &at, v))
                }
                Conv::Details(typed) => {
                    // The typed fields are lifted out; the rest stays verbatim.
                    if let Some(Json::Object(d)) = o.get_mut(&key) {
                        items.extend(self.read_fields(rd, &at, d, typed, schema, owner));
                        if d.is_empty() {
                            o.shift_remove(&key);
                        }
                    }
                    match taken(o) {
                        Some(v @ Json::Object(_)) => Some(v),
                        Some(other) => {
                            self.warn(
                                id,
                                format!("{at} is {}, not an object; dropped", json_type(&other)),
                            );
                            None
                        }
                        None => None,
                    }
                }
                Conv::Block(t) | Conv::BlockUnlessEmpty(t) => {
                    let Some(sub) = sub_schema(schema, name) else {
                        continue;
                    };
                    match taken(o) {
                        Some(Json::Object(mut m)) => {
                            let body = self.read_fields(rd, &at, &mut m, t, sub, name);
                            self.unsupported(id, &at, &m);
                            items.push(Item::Block(name, body));
                        }
                        Some(other) => self.warn(
                            id,
                            format!("{at} is {}, not an object; dropped", json_type(&other)),
                        ),
                        None => {}
                    }
                    continue;
                }
                Conv::Items(t) | Conv::ItemsOrEmpty(t) => {
                    let Some(sub) = sub_schema(schema, name) else {
                        continue;
                    };
                    match taken(o) {
                        Some(Json::Array(list)) => {
                            for (i, item) in list.into_iter().enumerate() {
                                let Json::Object(mut m) = item else {
                                    self.warn(id, format!("{at}[{i}] is not an object; dropped"));
                                    continue;
                                };
                                let p = format!("{at}[{i}]");
                                let body = self.read_fields(rd, &p, &mut m, t, sub, name);
                                self.unsupported(id, &p, &m);
                                items.push(Item::Block(name, body));
                            }
                        }
                        Some(other) => self.warn(
                            id,
                            format!("{at} is {}, not a list; dropped", json_type(&other)),
                        ),
                        None => {}
                    }
                    continue;
                }
                Conv::Flat(t) => {
                    let Some(sub) = sub_schema(schema, name) else {
                        continue;
                    };
                    let body = self.read_fields(rd, path, o, t, sub, name);
                    if !body.is_empty() {
                        items.push(Item::Block(name, body));
                    }
                    continue;
                }
                Conv::Special(Special::Expectations) => {
                    if let Some(file) = taken(o).and_then(|v| self.string(id, &at, v)) {
                        let file = file.as_str().unwrap_or_default().to_string();
                        match self.expectations(id, &at, &file) {
                            Some(block) => items.push(Item::Block("expectations", block)),
                            None => items.push(Item::Attr(name, Json::String(file))),
                        }
                    }
                    continue;
                }
                Conv::Special(Special::Transformation) => {
                    if rd.layer != "silver" {
                        continue;
                    }
                    if let Some(file) = taken(o).and_then(|v| self.string(id, &at, v)) {
                        let file = file.as_str().unwrap_or_default().to_string();
                        let table = table_of(&items);
                        match self.transformation(id, &file, table.as_deref()) {
                            Some(fields) => items.extend(fields),
                            None => items.push(Item::Attr(name, Json::String(file))),
                        }
                    }
                    continue;
                }
            };
            if let Some(v) = value {
                items.push(Item::Attr(name, v));
            }
        }
        // Attributes first, then blocks, each in the schema's order, as the formatter and
        // the docs show them.
        items.sort_by_key(|i| match i {
            Item::Attr(n, _) | Item::Block(n, _) => schema_position(schema, n),
        });
        items
    }

    /// Warns about the keys of an object no field took.
    fn unsupported(&mut self, id: &str, at: &str, left: &Map<String, Json>) {
        for (k, _) in left.iter().filter(|(_, v)| !v.is_null()) {
            self.warn(id, format!("{at}.{k} is not supported; dropped"));
        }
    }

    /// An expectations file as an `expectations` block, when it can be read and says only
    /// what the block can.
    fn expectations(&mut self, id: &str, key: &str, path: &str) -> Option<Vec<Item>> {
        let Json::Object(doc) = self.read(path)? else {
            self.warn(
                id,
                format!(
                    "{key}: {path} is not an object of expectations; kept as expectations_file"
                ),
            );
            return None;
        };
        let mut items = Vec::new();
        for (category, rules) in &doc {
            let Some(attr) = EXPECTATIONS
                .iter()
                .find(|f| matches!(f.key, Key::Plain(k) if k == category))
                .map(|f| f.attr)
            else {
                self.warn(id, format!("{key}: {path} has {}, which the expectations block does not support; kept as expectations_file", quote(category)));
                return None;
            };
            let Json::Object(rules) = rules else {
                self.warn(
                    id,
                    format!(
                        "{key}: {path}: {category} is not an object; kept as expectations_file"
                    ),
                );
                return None;
            };
            if rules.values().any(|v| !v.is_string()) {
                self.warn(id, format!("{key}: {path}: {category} has a rule that is not a string; kept as expectations_file"));
                return None;
            }
            items.push((attr, Json::Object(rules.clone())));
        }
        // In the block's order.
        items.sort_by_key(|(attr, _)| EXPECTATIONS.iter().position(|f| f.attr == *attr));
        Some(items.into_iter().map(|(a, v)| Item::Attr(a, v)).collect())
    }

    /// A silver flow's select/where from a transformations file, when it can be read.
    fn transformation(&mut self, id: &str, path: &str, table: Option<&str>) -> Option<Vec<Item>> {
        if !self.transformations.contains_key(path) {
            let parsed = self.read(path).and_then(|doc| match doc {
                Json::Array(entries) => {
                    let mut by_table: Transformations = HashMap::new();
                    for e in entries {
                        let Json::Object(e) = e else { return None };
                        let t = e
                            .get("target_table")
                            .and_then(Json::as_str)
                            .unwrap_or_default()
                            .to_string();
                        by_table.entry(t).or_default().push(e);
                    }
                    Some(by_table)
                }
                _ => None,
            });
            self.transformations.insert(path.to_string(), parsed);
        }
        let by_table = self.transformations.get(path)?.as_ref()?;
        let entries = table
            .and_then(|t| by_table.get(t))
            .cloned()
            .unwrap_or_default();
        if entries.len() > 1 {
            self.warn(
                id,
                format!(
                    "{path} has {} entries for target_table {:?}; the first is imported",
                    entries.len(),
                    table.unwrap_or_default()
                ),
            );
        }
        let mut items = Vec::new();
        let Some(mut entry) = entries.into_iter().next() else {
            return Some(items);
        };
        entry.shift_remove("target_table");
        for f in TRANSFORMATION {
            let key = f.key.spell("silver", self.env);
            if let Some(v) =
                take(&mut entry, &key).and_then(|v| self.strings(id, &format!("{path}: {key}"), v))
            {
                items.push(Item::Attr(f.attr, v));
            }
        }
        for (key, _) in entry.iter().filter(|(_, v)| !v.is_null()) {
            self.warn(
                id,
                format!(
                    "{path}: {key} of the entry for {:?} is ignored by sdp-meta; dropped",
                    table.unwrap_or_default()
                ),
            );
        }
        Some(items)
    }
}

fn table_of(items: &[Item]) -> Option<String> {
    items.iter().find_map(|i| match i {
        Item::Attr("table", Json::String(t)) => Some(t.clone()),
        _ => None,
    })
}

/// Where an attribute or block comes in a block of `schema`: attributes first, then blocks,
/// each in the order declared.
fn schema_position(schema: &Schema, name: &str) -> usize {
    schema
        .attributes
        .iter()
        .position(|a| a.name == name)
        .or_else(|| {
            schema
                .blocks
                .iter()
                .position(|b| b.name == name)
                .map(|i| schema.attributes.len() + i)
        })
        .unwrap_or(usize::MAX)
}

fn sub_schema<'s>(schema: &'s Schema, name: &str) -> Option<&'s Schema> {
    schema
        .blocks
        .iter()
        .find(|b| b.name == name)
        .map(|b| &b.schema)
}

/// The bases of the env-suffixed keys of a layer (`database_`, `database_quarantine_`, …),
/// longest first so that a key is matched by its own base, for recognising keys of other
/// envs.
fn env_key_bases() -> Vec<String> {
    fn walk(table: &[Field], out: &mut Vec<String>) {
        for f in table {
            match f.conv {
                Conv::Flat(t) => walk(t, out),
                _ => {
                    if let Key::LayerEnv(base) = f.key {
                        out.push(format!("{base}_"));
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(LAYER, &mut out);
    out.sort_by_key(|b| std::cmp::Reverse(b.len()));
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::sdp_meta::render::{FileFormat, render, transformations_path};
    use crate::sdp_meta::schema::testing::{decode_flows, onboarding};
    use serde_json::json;

    const VOL: &str = "/Volumes/main/ops/conf";

    /// Files the imported rows reference.
    fn files() -> HashMap<String, String> {
        HashMap::from([
            (
                format!("{VOL}/dqe/orders_bronze.json"),
                json!({
                    "expect_or_drop": {"valid_pk": "pk IS NOT NULL"},
                    "expect": {"has_amount": "amount IS NOT NULL"},
                    "expect_or_quarantine": {"bad_pk": "pk IS NULL"}
                })
                .to_string(),
            ),
            (
                format!("{VOL}/dqe/products_silver.yml"),
                "expect_or_fail:\n  positive: \"price > 0\"\n".to_string(),
            ),
            (
                format!("{VOL}/silver_transformations.json"),
                json!([
                    {"target_table": "orders", "select_exp": ["pk", "upper(name) AS name", "amount"], "where_clause": ["pk IS NOT NULL"]},
                    {"target_table": "iot", "select_exp": ["*"]}
                ])
                .to_string(),
            ),
        ])
    }

    /// One row per family of onboarding keys, env prod.
    fn rows() -> Json {
        serde_json::from_str(include_str!(
            "../../tests/fixtures/sdp_meta/roundtrip_onboarding.json"
        ))
        .unwrap()
    }

    fn read(path: &str) -> Option<String> {
        files().get(path).cloned()
    }

    /// Compares rows by meaning: nulls dropped, named lists sorted by name, and the
    /// expectations and transformations a row references replaced by what they say.
    fn semantic(rows: &Json, files: &dyn Fn(&str) -> Option<String>) -> Json {
        fn by_name(v: &mut Json) {
            if let Json::Array(items) = v {
                items.sort_by_key(|i| i["name"].as_str().unwrap_or_default().to_string());
            }
        }
        let parse_any = |path: &str| files(path).map(|t| parse(&t, path).unwrap());
        let mut out = Vec::new();
        for row in rows.as_array().unwrap() {
            let mut r: Map<String, Json> = row.as_object().unwrap().clone();
            r.retain(|_, v| !v.is_null());
            for (k, v) in r.iter_mut() {
                if k.ends_with("_append_flows") || k.ends_with("_sinks") {
                    by_name(v);
                }
                if k.ends_with("_cdc_apply_changes_flows") {
                    by_name(&mut v["flows"]);
                }
                if k.contains("_data_quality_expectations_json_")
                    && let Some(doc) = parse_any(v.as_str().unwrap())
                {
                    *v = doc;
                }
            }
            if let Some(Json::String(path)) = r.get("silver_transformation_json_prod").cloned()
                && let Some(Json::Array(entries)) = parse_any(&path)
            {
                let table = r["silver_table"].clone();
                let entry = entries.into_iter().find(|e| e["target_table"] == table);
                r.insert(
                    "silver_transformation_json_prod".into(),
                    json!({"entry": entry}),
                );
            }
            out.push(Json::Object(r));
        }
        Json::Array(out)
    }

    #[test]
    fn import_then_render_gives_the_same_rows() {
        let input = rows();
        let imported = import(&input.to_string(), "onboarding.json", None, &read).unwrap();
        assert_eq!(imported.env, "prod");
        assert!(imported.warnings.is_empty(), "{:#?}", imported.warnings);
        let flows = decode_flows(&imported.hcl);
        assert_eq!(flows.len(), 7);
        let r = render(&onboarding(
            flows,
            json!({"volume_path": VOL, "directory": ""}),
        ))
        .unwrap();
        let rendered_files = r.files.clone();
        let read_rendered = |p: &str| rendered_files.get(p).cloned().or_else(|| read(p));
        let got = semantic(&Json::Array(r.rows.clone()), &read_rendered);
        let want = semantic(&input, &read);
        assert_eq!(got.as_array().unwrap().len(), 7);
        assert_eq!(want.as_array().unwrap().len(), 7);
        if std::env::var_os("SHOW").is_some() {
            eprintln!("{}\n{}", imported.hcl, r.onboarding_json);
        }
        for (g, w) in got.as_array().unwrap().iter().zip(want.as_array().unwrap()) {
            assert_eq!(g, w, "\n{}", imported.hcl);
        }
        // The expectations were inlined and re-rendered by brickform, the unreadable ones
        // kept by path.
        assert!(
            r.files
                .contains_key(&format!("{VOL}/dqe/10/bronze_expectations.json"))
        );
        assert!(
            r.files
                .contains_key(&format!("{VOL}/dqe/14/silver_expectations.json"))
        );
        assert_eq!(
            r.rows[0]["silver_data_quality_expectations_json_prod"],
            "/Volumes/elsewhere/silver_dqe.json"
        );
        assert_eq!(
            r.rows[4]["silver_transformation_json_prod"],
            "/Volumes/unreadable/transformations.json"
        );
        assert_eq!(
            r.rows[3]["silver_transformation_json_prod"],
            json!(transformations_path(VOL, FileFormat::Json))
        );
    }

    #[test]
    fn imported_configuration_is_formatted_and_readable() {
        let imported = import(
            &rows().to_string(),
            "/Volumes/main/ops/conf/conf/onboarding.json",
            None,
            &read,
        )
        .unwrap();
        let hcl = &imported.hcl;
        assert_eq!(&format_source(hcl).unwrap(), hcl);
        let expected_start = r#"resource "sdp_meta_flow" "orders" {
  data_flow_id    = "10"
  data_flow_group = "A1"
  source_system   = "sftp"

  source {
    format             = "cloudFiles"
    source_database    = "APP"
    source_table       = "ORDERS"
    source_path        = "/Volumes/main/landing/files/orders/"
    source_schema_path = "/Volumes/main/ops/conf/orders.ddl"

    source_metadata {
      include_autoloader_metadata_column = true
      autoloader_metadata_col_name       = "source_metadata"
      select_metadata_cols = {
        input_file_name = "_metadata.file_name"
      }
    }
  }
"#;
        assert!(hcl.starts_with(expected_start), "{hcl}");
        assert!(
            hcl.contains(
                r#"comment  = "raw \"orders\" with $${vars} and %%{directives}\nsecond line\\""#
            ),
            "{hcl}"
        );
        assert!(
            hcl.contains(
                "\n    append_flow \"a_archive\" {\n      source_format          = \"delta\"\n"
            ),
            "{hcl}"
        );
        // Names: bronze table, or silver table for rows without a source, made unique.
        for name in [
            "orders",
            "customers",
            "orders_k",
            "iot",
            "products",
            "orders_eu",
            "customers_all",
        ] {
            assert!(
                hcl.contains(&format!("resource \"sdp_meta_flow\" \"{name}\" {{")),
                "{name}"
            );
        }
        assert!(hcl.contains(
            "# resource \"sdp_meta_onboarding\" \"onboarding\" {\n#   volume_path = \"/Volumes/main/ops/conf\"\n#   directory   = \"conf\"\n#   file_name   = \"onboarding.json\"\n#   env         = \"prod\"\n"
        ), "{hcl}");
        assert!(
            hcl.contains("#     sdp_meta_flow.customers_all,\n#   ]\n# }\n"),
            "{hcl}"
        );
    }

    #[test]
    fn yaml_files_import_too() {
        let text = "- data_flow_id: 100\n  data_flow_group: G\n  source_format: delta\n  source_details:\n    source_database: main.raw\n    source_table: t\n  bronze_database_dev: main.bronze\n  bronze_table: t\n";
        let imported = import(text, "conf/onboarding.yml", None, &|_| None).unwrap();
        assert_eq!(imported.env, "dev");
        let flows = decode_flows(&imported.hcl);
        assert_eq!(flows[0]["data_flow_id"], Value::from("100"));
        assert!(
            imported
                .hcl
                .contains("#   file_name   = \"onboarding.yml\"\n")
        );
    }

    #[test]
    fn env_is_detected_or_chosen() {
        let text = json!([
            {"data_flow_id": "1", "data_flow_group": "G", "bronze_database_dev": "d", "bronze_table": "t",
             "bronze_database_quarantine_qa": "q",
             "bronze_database_prd": "p", "silver_database_it": "s", "silver_table": "t2"}
        ])
        .to_string();
        let e = import(&text, "o.json", None, &|_| None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "o.json has keys for several envs (dev, it, prd); choose one with --env"
        );
        let e = import(&text, "o.json", Some("prod"), &|_| None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "o.json has no bronze_database_prod or silver_database_prod key; its envs are: dev, it, prd"
        );
        let imported = import(&text, "o.json", Some("prd"), &|_| None).unwrap();
        assert_eq!(imported.env, "prd");
        assert!(
            imported.hcl.contains("database = \"p\""),
            "{}",
            imported.hcl
        );
        assert_eq!(
            imported.warnings,
            [
                "flow 1: silver_database_prd is missing; silver.database is required",
                "flow 1: bronze_database_dev is for env \"dev\", not \"prd\" (sdp-meta ignores it); dropped",
                "flow 1: bronze_database_quarantine_qa is for env \"qa\", not \"prd\" (sdp-meta ignores it); dropped",
                "flow 1: silver_database_it is for env \"it\", not \"prd\" (sdp-meta ignores it); dropped",
            ]
        );
        let e = import("[{\"data_flow_id\": \"1\"}]", "o.json", None, &|_| None).unwrap_err();
        assert!(matches!(e, ImportError::NoEnv { .. }));
        let e = import("{\"a\": 1}", "o.json", None, &|_| None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "o.json: an onboarding file is a list of flow objects; got an object"
        );
        let e = import("[", "o.json", None, &|_| None).unwrap_err();
        assert!(matches!(e, ImportError::Parse { .. }));
    }

    #[test]
    fn what_the_schema_cannot_express_is_reported() {
        let text = json!([
            {"data_flow_id": 5, "data_flow_group": "G",
             "source_format": "delta",
             "source_details": {"source_catalog_prod": "main", "source_database": "raw", "source_table": "t",
                                "source_path_dev": "/x", "weird": "y"},
             "bronze_database_prod": "main.b", "bronze_table": "t",
             "bronze_partition_columns": ["a", "b"],
             "bronze_cluster_by": "a,b",
             "bronze_cdc_apply_changes": {"keys": ["a"], "sequence_by": "s", "scd_type": 2, "extra": 1},
             "bronze_data_quality_expectations_json_prod": "/dqe.json",
             "silver_database_prod": "main.s", "silver_table": "t",
             "silver_quarantine_cluster_by": ["x"],
             "gold_table": "g"}
        ])
        .to_string();
        let dqe = |p: &str| {
            (p == "/dqe.json")
                .then(|| json!({"expect": {"a": "a > 0"}, "expect_with_dqx": {}}).to_string())
        };
        let imported = import(&text, "o.json", None, &dqe).unwrap();
        assert_eq!(
            imported.warnings,
            [
                "flow 5: source_details.source_catalog_prod is ignored by sdp-meta 0.1.0's delta reader; brickform renders source_catalog into source_database instead",
                "flow 5: source_details.source_path_dev is for env \"dev\", not \"prod\" (sdp-meta ignores it); dropped",
                "flow 5: source_details.weird is not read by sdp-meta for source_format \"delta\"; dropped",
                "flow 5: bronze_partition_columns is a list, which sdp-meta 0.1.0 mis-parses into one column; brickform renders it as the comma-separated string it expects",
                "flow 5: bronze_cluster_by is the plain string \"a,b\", which sdp-meta 0.1.0 rejects; brickform renders it as a list",
                "flow 5: bronze_data_quality_expectations_json_prod: /dqe.json has \"expect_with_dqx\", which the expectations block does not support; kept as expectations_file",
                "flow 5: bronze_cdc_apply_changes.extra is not supported; dropped",
                "flow 5: silver_quarantine_cluster_by (a separate quarantine clustering key) is not supported; use quarantine.cluster_by (silver_quarantine_table_cluster_by); dropped",
                "flow 5: gold_table is not a field sdp_meta_flow supports; dropped",
            ]
        );
        let flows = decode_flows(&imported.hcl);
        let r = render(&onboarding(flows, json!({}))).unwrap();
        let row = &r.rows[0];
        assert_eq!(row["data_flow_id"], "5");
        assert_eq!(
            row["source_details"],
            json!({"source_database": "main.raw", "source_table": "t"})
        );
        assert_eq!(row["bronze_partition_columns"], "a,b");
        assert_eq!(row["bronze_cluster_by"], json!(["a", "b"]));
        assert_eq!(row["bronze_cdc_apply_changes"]["scd_type"], "2");
        assert_eq!(
            row["bronze_data_quality_expectations_json_prod"],
            "/dqe.json"
        );
    }

    #[test]
    fn names_are_valid_and_unique() {
        let text = json!([
            {"data_flow_id": "1", "data_flow_group": "G", "source_format": "delta", "source_details": {}, "bronze_database_prod": "a", "bronze_table": "1-orders"},
            {"data_flow_id": "2", "data_flow_group": "G", "source_format": "delta", "source_details": {}, "bronze_database_prod": "b", "bronze_table": "1-orders"},
            {"data_flow_id": "3", "data_flow_group": "G", "silver_database_prod": "b", "silver_table": "1-orders"},
            {"data_flow_id": "4", "data_flow_group": "G", "silver_database_prod": "b"}
        ])
        .to_string();
        let imported = import(&text, "o.json", None, &|_| None).unwrap();
        for name in [
            "flow_1_orders",
            "flow_1_orders_2",
            "flow_1_orders_3",
            "flow_4",
        ] {
            assert!(
                imported
                    .hcl
                    .contains(&format!("\"sdp_meta_flow\" \"{name}\" {{")),
                "{}",
                imported.hcl
            );
        }
        assert!(
            imported
                .warnings
                .contains(&"flow 4: silver_table is missing; silver.table is required".to_string()),
            "{:?}",
            imported.warnings
        );
    }

    #[test]
    fn hcl_strings_escape_templates() {
        assert_eq!(
            source_string("a${b}%{c}$d%e\"\\\u{1}"),
            r#""a$${b}%%{c}$d%e\"\\\u0001""#
        );
        assert_eq!(source_key("cloudFiles.format"), "\"cloudFiles.format\"");
        assert_eq!(source_key("header"), "header");
        assert_eq!(source_key("null"), "\"null\"");
        // What the literals decode to.
        let tricky = [
            "a${b}",
            "$${x}",
            "$$${y}",
            "100%{",
            "%%{z}",
            "tab\there",
            "quote\"",
            "back\\slash\\",
            "line\nbreak",
            "\u{1}ctl",
            "ünï©ødé ✓",
            "$",
            "%",
            "${",
            "trailing$",
        ];
        let mut src = String::from(
            "resource \"sdp_meta_flow\" \"t\" {\n  data_flow_id = \"1\"\n  data_flow_group = \"G\"\n  bronze {\n    database = \"d\"\n    table = \"t\"\n    table_properties = {\n",
        );
        for (i, t) in tricky.iter().enumerate() {
            src.push_str(&format!(
                "      {} = {}\n",
                source_key(&format!("k{i}.{t}")),
                source_string(t)
            ));
        }
        src.push_str("    }\n  }\n}\n");
        let flows = decode_flows(&format_source(&src).unwrap());
        let props = flows[0]["bronze"].as_object().unwrap()["table_properties"]
            .as_object()
            .unwrap();
        for (i, t) in tricky.iter().enumerate() {
            assert_eq!(props[&format!("k{i}.{t}")], Value::from(*t), "{t:?}");
        }
    }
}
