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

use super::render::{DQE_KEYS, EVENTHUB_KEYS, KAFKA_KEYS, is_yaml};
use brickform_core::lang::fmt::format_source;
use brickform_core::lang::functions::{FunctionContext, call};
use brickform_core::value::Value;
use brickform_core::value::{source_key, source_string};
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

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
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

/// Parses a JSON or YAML document (by the file name's extension).
fn parse(text: &str, file_name: &str) -> Result<Json, String> {
    if is_yaml(file_name) {
        let ctx = FunctionContext {
            base_dir: std::path::Path::new("."),
        };
        call("yamldecode", &[Value::from(text)], &ctx)
            .map(|v| v.to_json())
            .map_err(|e| e.message)
    } else {
        serde_json::from_str(text).map_err(|e| e.to_string())
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
    let doc = parse(text, file_name).map_err(|message| ImportError::Parse {
        file: file_name.to_string(),
        message,
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

    let mut im = Importer {
        env: &env,
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

/// A parsed silver transformations file: entries by target table.
type Transformations = HashMap<String, Vec<Map<String, Json>>>;

struct Importer<'a> {
    env: &'a str,
    read_file: &'a dyn Fn(&str) -> Option<String>,
    warnings: Vec<String>,
    /// Transformations files read so far, by path (`None`: unreadable or invalid).
    transformations: HashMap<String, Option<Transformations>>,
}

/// Removes a key; null counts as absent.
fn take(m: &mut Map<String, Json>, key: &str) -> Option<Json> {
    m.shift_remove(key).filter(|v| !v.is_null())
}

/// The bases of the env-suffixed top-level keys (docs/architecture.md, sdp-meta onboarding
/// facts), for recognising keys of other envs.
const ENV_KEY_BASES: &[&str] = &[
    "database_quarantine_",
    "catalog_quarantine_",
    "quarantine_table_path_",
    "data_quality_expectations_json_",
    "transformation_json_",
    "table_path_",
    "database_",
    "catalog_",
];

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
                            format!("{key} is the plain string {s:?}, which sdp-meta 0.1.0 rejects; brickform renders it as a list"),
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
        let id = match take(&mut row, "data_flow_id") {
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
        let mut items = vec![Item::Attr("data_flow_id", Json::String(id.clone()))];
        match take(&mut row, "data_flow_group").and_then(|g| self.string(&id, "data_flow_group", g))
        {
            Some(g) => items.push(Item::Attr("data_flow_group", g)),
            None => self.warn(&id, "data_flow_group is missing; the flow needs one"),
        }
        if let Some(v) =
            take(&mut row, "source_system").and_then(|v| self.string(&id, "source_system", v))
        {
            items.push(Item::Attr("source_system", v));
        }

        let has_source = ["source_format", "source_details"]
            .iter()
            .any(|k| row.get(*k).is_some_and(|v| !v.is_null()));
        if has_source {
            items.push(Item::Block("source", self.source(&id, &mut row)));
        }
        let bronze = self.layer(&id, "bronze", &mut row);
        let bronze_table = table_of(&bronze);
        if !bronze.is_empty() {
            self.require(&id, "bronze", &bronze);
            items.push(Item::Block("bronze", bronze));
        }
        let silver = self.layer(&id, "silver", &mut row);
        let silver_table = table_of(&silver);
        if !silver.is_empty() {
            self.require(&id, "silver", &silver);
            items.push(Item::Block("silver", silver));
        }

        // What is left: other envs' keys (ignored by sdp-meta) and keys the schema lacks.
        for (key, _) in row.iter().filter(|(_, v)| !v.is_null()) {
            let message = if key == "silver_quarantine_cluster_by" {
                "silver_quarantine_cluster_by (a separate quarantine clustering key) is not supported; use quarantine.cluster_by (silver_quarantine_table_cluster_by); dropped".to_string()
            } else if let Some(other) = self.other_env(key) {
                format!("{key} is for env {other:?}, not {env:?} (sdp-meta ignores it); dropped")
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
        for layer in ["bronze_", "silver_"] {
            let Some(rest) = key.strip_prefix(layer) else {
                continue;
            };
            // Keys of this env are consumed before this is asked.
            if let Some(env) = ENV_KEY_BASES
                .iter()
                .find_map(|base| rest.strip_prefix(base))
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
                let key = if field == "database" {
                    format!("{layer}_database_{}", self.env)
                } else {
                    format!("{layer}_table")
                };
                self.warn(id, format!("{key} is missing; {layer}.{field} is required"));
            }
        }
    }

    fn source(&mut self, id: &str, row: &mut Map<String, Json>) -> Vec<Item> {
        let env = self.env.to_string();
        let mut items = Vec::new();
        let format = take(row, "source_format").and_then(|f| self.string(id, "source_format", f));
        let fmt = format
            .as_ref()
            .and_then(Json::as_str)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        match format {
            Some(f) => items.push(Item::Attr("format", f)),
            None => self.warn(id, "source_format is missing; source.format is required"),
        }
        let mut details = match take(row, "source_details") {
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
        let put = |me: &mut Self,
                   key: &str,
                   attr: &'static str,
                   items: &mut Vec<Item>,
                   d: &mut Map<String, Json>| {
            if let Some(v) =
                take(d, key).and_then(|v| me.string(id, &format!("source_details.{key}"), v))
            {
                items.push(Item::Attr(attr, v));
            }
        };
        put(
            self,
            "source_database",
            "source_database",
            &mut items,
            &mut details,
        );
        put(
            self,
            "source_table",
            "source_table",
            &mut items,
            &mut details,
        );
        let catalog_key = format!("source_catalog_{env}");
        if details.get(&catalog_key).is_some_and(|v| !v.is_null())
            && matches!(fmt.as_str(), "delta" | "snapshot")
        {
            self.warn(
                id,
                format!("source_details.{catalog_key} is ignored by sdp-meta 0.1.0's {fmt} reader; brickform renders source_catalog into source_database instead"),
            );
        }
        put(
            self,
            &catalog_key,
            "source_catalog",
            &mut items,
            &mut details,
        );
        put(
            self,
            "snapshot_format",
            "snapshot_format",
            &mut items,
            &mut details,
        );
        put(
            self,
            &format!("source_path_{env}"),
            "source_path",
            &mut items,
            &mut details,
        );
        put(
            self,
            "source_schema_path",
            "source_schema_path",
            &mut items,
            &mut details,
        );
        if let Some(meta) = take(&mut details, "source_metadata")
            && let Some(block) = self.source_metadata(id, meta)
        {
            items.push(Item::Block("source_metadata", block));
        }
        let streaming = [
            ("kafka", KAFKA_KEYS, fmt == "kafka"),
            ("eventhub", EVENTHUB_KEYS, fmt == "eventhub"),
        ];
        for (block, keys, is_format) in streaming {
            let mut body = Vec::new();
            for (attr, key) in keys {
                if let Some(v) = take(&mut details, key)
                    .and_then(|v| self.string(id, &format!("source_details.{key}"), v))
                {
                    body.push(Item::Attr(attr, v));
                }
            }
            if is_format && !details.is_empty() {
                // Every other key is passed to the reader verbatim.
                let rest = std::mem::take(&mut details);
                if let Some(options) = self.string_map(id, "source_details", Json::Object(rest)) {
                    body.push(Item::Attr("options", options));
                }
            }
            if !body.is_empty() {
                items.push(Item::Block(block, body));
            }
        }
        for (key, _) in details.iter().filter(|(_, v)| !v.is_null()) {
            let message = match key
                .strip_prefix("source_path_")
                .or(key.strip_prefix("source_catalog_"))
            {
                Some(e) if !e.is_empty() => format!(
                    "source_details.{key} is for env {e:?}, not {env:?} (sdp-meta ignores it); dropped"
                ),
                _ => format!(
                    "source_details.{key} is not read by sdp-meta for source_format {fmt:?}; dropped"
                ),
            };
            self.warn(id, message);
        }
        items
    }

    fn source_metadata(&mut self, id: &str, meta: Json) -> Option<Vec<Item>> {
        let Json::Object(mut m) = meta else {
            self.warn(
                id,
                "source_details.source_metadata is not an object; dropped",
            );
            return None;
        };
        let mut items = Vec::new();
        if let Some(v) = take(&mut m, "include_autoloader_metadata_column")
            .and_then(|v| self.bool(id, "source_metadata.include_autoloader_metadata_column", v))
        {
            items.push(Item::Attr("include_autoloader_metadata_column", v));
        }
        if let Some(v) = take(&mut m, "autoloader_metadata_col_name")
            .and_then(|v| self.string(id, "source_metadata.autoloader_metadata_col_name", v))
        {
            items.push(Item::Attr("autoloader_metadata_col_name", v));
        }
        if let Some(v) = take(&mut m, "select_metadata_cols")
            .and_then(|v| self.string_map(id, "source_metadata.select_metadata_cols", v))
        {
            items.push(Item::Attr("select_metadata_cols", v));
        }
        for (key, _) in m.iter().filter(|(_, v)| !v.is_null()) {
            self.warn(
                id,
                format!("source_details.source_metadata.{key} is not supported; dropped"),
            );
        }
        Some(items)
    }

    /// One layer's fields (empty when the row has none).
    fn layer(&mut self, id: &str, layer: &str, row: &mut Map<String, Json>) -> Vec<Item> {
        let env = self.env.to_string();
        let k = |s: &str| format!("{layer}_{s}");
        let ke = |s: &str| format!("{layer}_{s}_{env}");
        let mut items = Vec::new();
        macro_rules! field {
            ($key:expr, $attr:literal, $conv:ident) => {{
                let key = $key;
                if let Some(v) = take(row, &key).and_then(|v| self.$conv(id, &key, v)) {
                    items.push(Item::Attr($attr, v));
                }
            }};
        }
        field!(ke("database"), "database", string);
        field!(ke("catalog"), "catalog", string);
        field!(k("table"), "table", string);
        field!(k("table_comment"), "comment", string);
        field!(ke("table_path"), "path", string);
        field!(k("reader_options"), "reader_options", string_map);
        field!(k("table_properties"), "table_properties", string_map);
        field!(k("partition_columns"), "partition_columns", partition_list);
        field!(k("cluster_by"), "cluster_by", cluster_list);
        field!(k("cluster_by_auto"), "cluster_by_auto", bool);
        field!(k("row_filter"), "row_filter", string);
        field!(k("quarantine_row_filter"), "quarantine_row_filter", string);

        let table = items.iter().find_map(|i| match i {
            Item::Attr("table", Json::String(t)) => Some(t.clone()),
            _ => None,
        });

        let mut blocks = Vec::new();
        let dqe_key = ke("data_quality_expectations_json");
        if let Some(path) = take(row, &dqe_key).and_then(|v| self.string(id, &dqe_key, v)) {
            let path = path.as_str().unwrap_or_default().to_string();
            match self.expectations(id, &dqe_key, &path) {
                Some(block) => blocks.push(Item::Block("expectations", block)),
                None => items.push(Item::Attr("expectations_file", Json::String(path))),
            }
        }
        if layer == "silver" {
            let tkey = ke("transformation_json");
            if let Some(path) = take(row, &tkey).and_then(|v| self.string(id, &tkey, v)) {
                let path = path.as_str().unwrap_or_default().to_string();
                match self.transformation(id, &path, table.as_deref()) {
                    Some(fields) => items.extend(fields),
                    None => items.push(Item::Attr("transformation_file", Json::String(path))),
                }
            }
        }

        let mut all = items;
        if let Some(v) = take(row, &k("cdc_apply_changes"))
            && let Some(b) = self.cdc(id, &k("cdc_apply_changes"), v, false)
        {
            all.push(Item::Block("cdc_apply_changes", b));
        }
        if let Some(v) = take(row, &k("cdc_apply_changes_flows"))
            && let Some(b) = self.cdc(id, &k("cdc_apply_changes_flows"), v, true)
        {
            all.push(Item::Block("cdc_apply_changes_flows", b));
        }
        if let Some(v) = take(row, &k("apply_changes_from_snapshot")) {
            let key = k("apply_changes_from_snapshot");
            if let Some(b) = self.fields_block(id, &key, v, SNAPSHOT_FIELDS) {
                all.push(Item::Block("apply_changes_from_snapshot", b));
            }
        }
        all.extend(blocks);
        let quarantine = self.quarantine(id, layer, row);
        if !quarantine.is_empty() {
            all.push(Item::Block("quarantine", quarantine));
        }
        if let Some(v) = take(row, &k("append_flows")) {
            for b in self.named_items(id, &k("append_flows"), v, APPEND_FLOW_FIELDS, true) {
                all.push(Item::Block("append_flow", b));
            }
        }
        if let Some(v) = take(row, &k("sinks")) {
            for b in self.named_items(id, &k("sinks"), v, SINK_FIELDS, false) {
                all.push(Item::Block("sink", b));
            }
        }
        // Attributes first, then blocks, as the formatter and the docs show them.
        let (mut attrs, blocks): (Vec<Item>, Vec<Item>) =
            all.into_iter().partition(|i| matches!(i, Item::Attr(..)));
        attrs.extend(blocks);
        attrs
    }

    fn quarantine(&mut self, id: &str, layer: &str, row: &mut Map<String, Json>) -> Vec<Item> {
        let env = self.env.to_string();
        let k = |s: &str| format!("{layer}_{s}");
        let ke = |s: &str| format!("{layer}_{s}_{env}");
        let mut items = Vec::new();
        macro_rules! field {
            ($key:expr, $attr:literal, $conv:ident) => {{
                let key = $key;
                if let Some(v) = take(row, &key).and_then(|v| self.$conv(id, &key, v)) {
                    items.push(Item::Attr($attr, v));
                }
            }};
        }
        field!(ke("database_quarantine"), "database", string);
        field!(ke("catalog_quarantine"), "catalog", string);
        field!(k("quarantine_table"), "table", string);
        field!(k("quarantine_table_comment"), "comment", string);
        field!(ke("quarantine_table_path"), "path", string);
        field!(
            k("quarantine_table_partitions"),
            "partitions",
            partition_list
        );
        field!(
            k("quarantine_table_properties"),
            "table_properties",
            string_map
        );
        field!(k("quarantine_table_cluster_by"), "cluster_by", cluster_list);
        field!(
            k("quarantine_table_cluster_by_auto"),
            "cluster_by_auto",
            bool
        );
        items
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
            let Some(attr) = DQE_KEYS.iter().find(|k| **k == category.as_str()) else {
                self.warn(id, format!("{key}: {path} has {category:?}, which the expectations block does not support; kept as expectations_file"));
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
            items.push((*attr, Json::Object(rules.clone())));
        }
        // In the block's order.
        items.sort_by_key(|(attr, _)| DQE_KEYS.iter().position(|k| k == attr));
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
        for (key, attr) in [
            ("select_exp", "select_exp"),
            ("where_clause", "where_clause"),
        ] {
            if let Some(v) =
                take(&mut entry, key).and_then(|v| self.strings(id, &format!("{path}: {key}"), v))
            {
                items.push(Item::Attr(attr, v));
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

    /// A block of known fields from an object; unknown keys are warned about.
    fn fields_block(
        &mut self,
        id: &str,
        key: &str,
        v: Json,
        fields: &[(&'static str, Conv)],
    ) -> Option<Vec<Item>> {
        let Json::Object(mut o) = v else {
            self.warn(
                id,
                format!("{key} is {}, not an object; dropped", json_type(&v)),
            );
            return None;
        };
        let items = self.fields(id, key, &mut o, fields);
        for (k, _) in o.iter().filter(|(_, v)| !v.is_null()) {
            self.warn(id, format!("{key}.{k} is not supported; dropped"));
        }
        Some(items)
    }

    fn fields(
        &mut self,
        id: &str,
        key: &str,
        o: &mut Map<String, Json>,
        fields: &[(&'static str, Conv)],
    ) -> Vec<Item> {
        let mut items = Vec::new();
        for (name, conv) in fields {
            let Some(v) = take(o, name) else { continue };
            let path = format!("{key}.{name}");
            let v = match conv {
                Conv::Str => self.string(id, &path, v),
                Conv::Bool => self.bool(id, &path, v),
                Conv::List => self.strings(id, &path, v),
                Conv::Map => self.string_map(id, &path, v),
                Conv::AnyMap => match v {
                    Json::Object(_) => Some(v),
                    other => {
                        self.warn(
                            id,
                            format!("{path} is {}, not an object; dropped", json_type(&other)),
                        );
                        None
                    }
                },
            };
            if let Some(v) = v {
                items.push(Item::Attr(name, v));
            }
        }
        items
    }

    fn cdc(&mut self, id: &str, key: &str, v: Json, multi: bool) -> Option<Vec<Item>> {
        let Json::Object(mut o) = v else {
            self.warn(
                id,
                format!("{key} is {}, not an object; dropped", json_type(&v)),
            );
            return None;
        };
        let fields: Vec<(&'static str, Conv)> = CDC_FIELDS
            .iter()
            .copied()
            .filter(|(n, _)| !multi || (*n != "flow_name" && *n != "once"))
            .collect();
        let mut items = self.fields(id, key, &mut o, &fields);
        if multi && let Some(flows) = take(&mut o, "flows") {
            for b in self.named_items(id, &format!("{key}.flows"), flows, CDC_FLOW_FIELDS, false) {
                items.push(Item::Block("flow", b));
            }
        }
        for (k, _) in o.iter().filter(|(_, v)| !v.is_null()) {
            self.warn(id, format!("{key}.{k} is not supported; dropped"));
        }
        Some(items)
    }

    /// The items of `<layer>_append_flows`, `<layer>_sinks` or `.flows`: each with its
    /// `source_details.source_path_{env}` (and, for append flows, `source_schema_path`)
    /// lifted into attributes.
    fn named_items(
        &mut self,
        id: &str,
        key: &str,
        v: Json,
        fields: &[(&'static str, Conv)],
        schema_path: bool,
    ) -> Vec<Vec<Item>> {
        let Json::Array(list) = v else {
            self.warn(
                id,
                format!("{key} is {}, not a list; dropped", json_type(&v)),
            );
            return Vec::new();
        };
        let env = self.env.to_string();
        let mut out = Vec::new();
        for (i, item) in list.into_iter().enumerate() {
            let Json::Object(mut o) = item else {
                self.warn(id, format!("{key}[{i}] is not an object; dropped"));
                continue;
            };
            let path = format!("{key}[{i}]");
            let mut lifted = Vec::new();
            if let Some(Json::Object(d)) = o.get_mut("source_details") {
                let source_path = format!("source_path_{env}");
                if let Some(v) = take(d, &source_path) {
                    lifted.push(("source_path", v));
                }
                if schema_path && let Some(v) = take(d, "source_schema_path") {
                    lifted.push(("source_schema_path", v));
                }
                if d.is_empty() {
                    o.shift_remove("source_details");
                }
            }
            let mut items = self.fields(id, &path, &mut o, fields);
            for (attr, v) in lifted {
                if let Some(v) = self.string(id, &format!("{path}.source_details.{attr}"), v) {
                    // After source_details, where the schema declares them.
                    let at = items
                        .iter()
                        .position(|i| matches!(i, Item::Attr(n, _) if FIELD_ORDER_AFTER_DETAILS.contains(n)))
                        .unwrap_or(items.len());
                    items.insert(at, Item::Attr(attr, v));
                }
            }
            for (k, _) in o.iter().filter(|(_, v)| !v.is_null()) {
                self.warn(id, format!("{path}.{k} is not supported; dropped"));
            }
            out.push(items);
        }
        out
    }
}

fn table_of(items: &[Item]) -> Option<String> {
    items.iter().find_map(|i| match i {
        Item::Attr("table", Json::String(t)) => Some(t.clone()),
        _ => None,
    })
}

#[derive(Clone, Copy)]
enum Conv {
    Str,
    Bool,
    List,
    Map,
    AnyMap,
}

const CDC_FIELDS: &[(&str, Conv)] = &[
    ("keys", Conv::List),
    ("sequence_by", Conv::Str),
    ("scd_type", Conv::Str),
    ("where", Conv::Str),
    ("ignore_null_updates", Conv::Bool),
    ("apply_as_deletes", Conv::Str),
    ("apply_as_truncates", Conv::Str),
    ("column_list", Conv::List),
    ("except_column_list", Conv::List),
    ("track_history_column_list", Conv::List),
    ("track_history_except_column_list", Conv::List),
    ("ignore_null_updates_column_list", Conv::List),
    ("ignore_null_updates_except_column_list", Conv::List),
    ("flow_name", Conv::Str),
    ("once", Conv::Bool),
];

const SNAPSHOT_FIELDS: &[(&str, Conv)] = &[
    ("keys", Conv::List),
    ("scd_type", Conv::Str),
    ("track_history_column_list", Conv::List),
    ("track_history_except_column_list", Conv::List),
];

const CDC_FLOW_FIELDS: &[(&str, Conv)] = &[
    ("name", Conv::Str),
    ("source_format", Conv::Str),
    ("source_details", Conv::AnyMap),
    ("reader_options", Conv::Map),
    ("select_exp", Conv::List),
    ("where_clause", Conv::List),
    ("once", Conv::Bool),
];

const APPEND_FLOW_FIELDS: &[(&str, Conv)] = &[
    ("name", Conv::Str),
    ("source_format", Conv::Str),
    ("create_streaming_table", Conv::Bool),
    ("source_details", Conv::AnyMap),
    ("reader_options", Conv::Map),
    ("spark_conf", Conv::Map),
    ("comment", Conv::Str),
    ("once", Conv::Bool),
];

const SINK_FIELDS: &[(&str, Conv)] = &[
    ("name", Conv::Str),
    ("format", Conv::Str),
    ("options", Conv::Map),
    ("select_exp", Conv::List),
    ("where_clause", Conv::Str),
];

/// Attributes that come after `source_path` / `source_schema_path` in nested flows.
const FIELD_ORDER_AFTER_DETAILS: &[&str] = &[
    "reader_options",
    "spark_conf",
    "comment",
    "select_exp",
    "where_clause",
    "once",
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::sdp_meta::render::{render, transformations_path};
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
            json!(transformations_path(VOL))
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
