//! The datasets a declarative pipeline's SQL sources declare, published when an update
//! starts, and the service's refusal to change a dataset between streaming table and
//! materialized view (the `dataset_type_fixed` behaviour).
//!
//! The sources are the workspace files ending in `.sql` and the SQL notebooks its
//! `libraries` name (`file.path`, `notebook.path`, `glob.include`). Each declares, in any
//! case, with `--` and `/* */` comments ignored:
//! `CREATE [OR REFRESH] [PRIVATE|TEMPORARY] STREAMING [LIVE] TABLE [IF NOT EXISTS] name`
//! (a streaming table), or `... MATERIALIZED VIEW ...` and the older `... LIVE TABLE ...`
//! (a materialized view), where `name` is `t`, `s.t` or `c.s.t`, each part bare or
//! back-quoted. The parser is small and tolerant: what it cannot read declares nothing.
//! Private (formerly temporary) datasets are not published to the catalog. Python sources
//! are not read.

use super::Pipeline;
use super::spec::gs;
use crate::behaviours::Behaviour;
use crate::store::{Ctx, State};
use crate::workspace::WsObject;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetType {
    StreamingTable,
    MaterializedView,
}

impl DatasetType {
    /// The `table_type` Unity Catalog answers for it.
    pub fn table_type(self) -> &'static str {
        match self {
            DatasetType::StreamingTable => "STREAMING_TABLE",
            DatasetType::MaterializedView => "MATERIALIZED_VIEW",
        }
    }

    fn from_table_type(t: &str) -> Option<DatasetType> {
        match t {
            "STREAMING_TABLE" => Some(DatasetType::StreamingTable),
            "MATERIALIZED_VIEW" => Some(DatasetType::MaterializedView),
            _ => None,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            DatasetType::StreamingTable => "a streaming table",
            DatasetType::MaterializedView => "a materialized view",
        }
    }

    fn drop_statement(self) -> &'static str {
        match self {
            DatasetType::StreamingTable => "DROP TABLE",
            DatasetType::MaterializedView => "DROP MATERIALIZED VIEW",
        }
    }
}

/// One dataset a source declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// The name's one to three parts as written, lower case, without back quotes.
    pub name: Vec<String>,
    pub kind: DatasetType,
    /// `PRIVATE` (formerly `TEMPORARY`): not added to the catalog.
    pub private: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A bare word.
    Word(String),
    /// A back-quoted identifier.
    Quoted(String),
    Dot,
    /// Anything else: punctuation, a string literal.
    Other,
}

/// The tokens of SQL text, comments left out and string literals as one `Other` each.
fn tokens(sql: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut it = sql.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '-' if it.peek() == Some(&'-') => {
                for c in it.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if it.peek() == Some(&'*') => {
                it.next();
                let mut star = false;
                for c in it.by_ref() {
                    if star && c == '/' {
                        break;
                    }
                    star = c == '*';
                }
            }
            '\'' | '"' => {
                while let Some(s) = it.next() {
                    if s == '\\' {
                        it.next();
                    } else if s == c {
                        break;
                    }
                }
                out.push(Tok::Other);
            }
            '`' => {
                let mut name = String::new();
                while let Some(s) = it.next() {
                    if s == '`' {
                        // A doubled back quote is one inside the name.
                        if it.peek() == Some(&'`') {
                            it.next();
                        } else {
                            break;
                        }
                    }
                    name.push(s);
                }
                out.push(Tok::Quoted(name));
            }
            '.' => out.push(Tok::Dot),
            c if c.is_alphanumeric() || c == '_' => {
                let mut word = String::from(c);
                while let Some(&n) = it.peek() {
                    if !(n.is_alphanumeric() || n == '_') {
                        break;
                    }
                    word.push(n);
                    it.next();
                }
                out.push(Tok::Word(word));
            }
            c if c.is_whitespace() => {}
            _ => out.push(Tok::Other),
        }
    }
    out
}

/// The datasets `sql` declares, in order.
pub fn declared(sql: &str) -> Vec<Declared> {
    let toks = tokens(sql);
    let word =
        |i: usize, w: &str| matches!(toks.get(i), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w));
    let part = |i: usize| match toks.get(i) {
        Some(Tok::Word(x) | Tok::Quoted(x)) if !x.is_empty() => Some(x.to_lowercase()),
        _ => None,
    };
    let mut out = Vec::new();
    for start in 0..toks.len() {
        if !word(start, "CREATE") {
            continue;
        }
        let mut i = start + 1;
        if word(i, "OR") && word(i + 1, "REFRESH") {
            i += 2;
        }
        let private = word(i, "PRIVATE") || word(i, "TEMPORARY");
        if private {
            i += 1;
        }
        let kind = if word(i, "STREAMING") {
            i += 1;
            if word(i, "LIVE") {
                i += 1;
            }
            DatasetType::StreamingTable
        } else if (word(i, "MATERIALIZED") && word(i + 1, "VIEW"))
            || (word(i, "LIVE") && word(i + 1, "TABLE"))
        {
            i += 1;
            DatasetType::MaterializedView
        } else {
            continue;
        };
        if kind == DatasetType::StreamingTable && !word(i, "TABLE") {
            continue;
        }
        i += 1;
        if word(i, "IF") && word(i + 1, "NOT") && word(i + 2, "EXISTS") {
            i += 3;
        }
        let Some(first) = part(i) else {
            continue;
        };
        let mut name = vec![first];
        i += 1;
        while toks.get(i) == Some(&Tok::Dot) {
            let Some(p) = part(i + 1) else {
                break;
            };
            name.push(p);
            i += 2;
        }
        // A dot not followed by a name part (`${schema}.t`, `s.`) is not a name this reads.
        if toks.get(i) == Some(&Tok::Dot) || name.len() > 3 {
            continue;
        }
        out.push(Declared {
            name,
            kind,
            private,
        });
    }
    out
}

/// The text of a source: a Jupyter notebook's cells, else the content as it is.
fn source_text(o: &WsObject) -> String {
    let text = String::from_utf8_lossy(&o.content);
    if text.trim_start().starts_with('{')
        && let Ok(nb) = serde_json::from_str::<Value>(&text)
        && let Some(cells) = nb.get("cells").and_then(Value::as_array)
    {
        let mut out = String::new();
        for cell in cells {
            match cell.get("source") {
                Some(Value::Array(lines)) => lines
                    .iter()
                    .filter_map(Value::as_str)
                    .for_each(|l| out.push_str(l)),
                Some(Value::String(s)) => out.push_str(s),
                _ => {}
            }
            out.push('\n');
        }
        return out;
    }
    text.into_owned()
}

fn is_sql(path: &str, o: &WsObject) -> bool {
    match o.object_type.as_str() {
        "NOTEBOOK" => o.language.as_deref() == Some("SQL"),
        "FILE" => path.to_ascii_lowercase().ends_with(".sql"),
        _ => false,
    }
}

/// Whether a workspace path is one a `glob.include` pattern names: a file or folder (and
/// everything under it), or a pattern where `**` is any path, `*` and `?` any part of one
/// segment.
fn glob_matches(pattern: &str, path: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        let dir = pattern.trim_end_matches('/');
        return path == dir || path.starts_with(&format!("{dir}/"));
    }
    let mut re = String::from("^");
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                re.push_str(".*");
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).is_ok_and(|r| r.is_match(path))
}

/// The SQL sources a pipeline's libraries name, by workspace path.
fn sql_sources<'a>(st: &'a State, spec: &Map<String, Value>) -> Vec<(&'a str, &'a WsObject)> {
    let mut paths = BTreeSet::new();
    for lib in spec
        .get("libraries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for kind in ["notebook", "file"] {
            if let Some(p) = lib
                .get(kind)
                .and_then(|n| n.get("path"))
                .and_then(Value::as_str)
                && let Ok(p) = crate::workspace::normalize(p)
            {
                paths.insert(p);
            }
        }
        if let Some(include) = lib
            .get("glob")
            .and_then(|g| g.get("include"))
            .and_then(Value::as_str)
            && let Ok(pattern) = crate::workspace::normalize(include)
        {
            paths.extend(
                st.workspace
                    .workspace
                    .keys()
                    .filter(|p| glob_matches(&pattern, p))
                    .cloned(),
            );
        }
    }
    paths
        .iter()
        .filter_map(|p| st.workspace.workspace.get_key_value(p))
        .filter(|(p, o)| is_sql(p, o))
        .map(|(p, o)| (p.as_str(), o))
        .collect()
}

/// Where a pipeline publishes unqualified names: its catalog and schema (`target` in the
/// legacy publishing mode). None without a catalog (Hive metastore: nothing in Unity
/// Catalog).
fn target(spec: &Map<String, Value>) -> Option<(&str, &str)> {
    Some((
        gs(spec, &["catalog"])?,
        gs(spec, &["schema"]).or(gs(spec, &["target"]))?,
    ))
}

/// The tables a pipeline's SQL sources publish: full name and type, each name once (the
/// first declaration wins).
pub fn published(st: &State, spec: &Map<String, Value>) -> Vec<(String, DatasetType)> {
    let Some((catalog, schema)) = target(spec) else {
        return Vec::new();
    };
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (_, o) in sql_sources(st, spec) {
        for d in declared(&source_text(o)) {
            if d.private {
                continue;
            }
            let full = match d.name.as_slice() {
                [t] => format!("{catalog}.{schema}.{t}"),
                [s, t] => format!("{catalog}.{s}.{t}"),
                [c, s, t] => format!("{c}.{s}.{t}"),
                _ => continue,
            }
            .to_lowercase();
            if seen.insert(full.clone()) {
                out.push((full, d.kind));
            }
        }
    }
    out
}

/// Why the update fails: our wording around the service's error class and the start and
/// end of its message (see the behaviour's description).
fn type_changed(full: &str, was: DatasetType, now: DatasetType) -> String {
    let quoted = full
        .split('.')
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(".");
    format!(
        "[CANNOT_CHANGE_DATASET_TYPE] Cannot change the dataset type of a pipeline table from {} to {}: {quoted} is declared as {}, but this pipeline published it as {}, and neither an update nor a full refresh changes a dataset's type. To change the dataset type, please drop the existing dataset first ({} {quoted}, or delete the pipeline), or give the {} another name.",
        was.table_type(),
        now.table_type(),
        now.noun(),
        was.noun(),
        was.drop_statement(),
        match now {
            DatasetType::StreamingTable => "streaming table",
            DatasetType::MaterializedView => "materialized view",
        },
    )
}

/// What a starting update does with its pipeline's datasets, given why it would fail
/// otherwise: the failure, and the tables to publish (full name, `table_type`) once it is
/// recorded. A dataset this pipeline published as one type and now declared as the other
/// fails the update, full refresh or not, and nothing is published. A validate-only update
/// checks but publishes nothing. Nothing at all while `dataset_type_fixed` is off.
pub fn at_start(
    st: &State,
    ctx: &Ctx,
    p: &Pipeline,
    request: &Map<String, Value>,
    failure: Option<String>,
) -> (Option<String>, Vec<(String, &'static str)>) {
    if failure.is_some() || !ctx.behaviours.on(Behaviour::DatasetTypeFixed) {
        return (failure, Vec::new());
    }
    let datasets = published(st, &p.spec);
    for (full, now) in &datasets {
        let Some(t) = st.uc.tables.get(full) else {
            continue;
        };
        let ours = t.get("pipeline_id").and_then(Value::as_str) == Some(p.id.as_str());
        let was = t
            .get("table_type")
            .and_then(Value::as_str)
            .and_then(DatasetType::from_table_type);
        if let Some(was) = was.filter(|w| ours && w != now) {
            return (Some(type_changed(full, was, *now)), Vec::new());
        }
    }
    if request.get("validate_only").and_then(Value::as_bool) == Some(true) {
        return (None, Vec::new());
    }
    let tables = datasets
        .into_iter()
        .map(|(full, t)| (full, t.table_type()))
        .collect();
    (None, tables)
}

/// Publishes what [`at_start`] returned, as tables the pipeline owns.
pub fn publish(st: &mut State, ctx: &Ctx, pipeline_id: &str, tables: &[(String, &str)]) {
    for (full, table_type) in tables {
        crate::uc::put_pipeline_table(st, ctx, full, table_type, pipeline_id);
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{PipelineRequest, create_pipeline, start, update_outcome};
    use super::*;
    use crate::behaviours::Behaviours;
    use DatasetType::*;
    use serde_json::json;

    fn names(sql: &str) -> Vec<(String, DatasetType, bool)> {
        declared(sql)
            .into_iter()
            .map(|d| (d.name.join("."), d.kind, d.private))
            .collect()
    }

    #[test]
    fn every_form_of_declaration_in_any_case() {
        let sql = "CREATE OR REFRESH STREAMING TABLE a AS SELECT 1;\n\
                   create streaming live table b as select 2;\n\
                   Create Or Refresh Materialized View c AS SELECT 3;\n\
                   CREATE LIVE TABLE d AS SELECT 4;\n\
                   CREATE OR REFRESH PRIVATE MATERIALIZED VIEW e AS SELECT 5;\n\
                   CREATE TEMPORARY STREAMING LIVE TABLE f AS SELECT 6;\n\
                   CREATE STREAMING TABLE IF NOT EXISTS g;\n\
                   CREATE MATERIALIZED VIEW IF NOT EXISTS h AS SELECT 8;";
        assert_eq!(
            names(sql),
            vec![
                ("a".into(), StreamingTable, false),
                ("b".into(), StreamingTable, false),
                ("c".into(), MaterializedView, false),
                ("d".into(), MaterializedView, false),
                ("e".into(), MaterializedView, true),
                ("f".into(), StreamingTable, true),
                ("g".into(), StreamingTable, false),
                ("h".into(), MaterializedView, false),
            ]
        );
    }

    #[test]
    fn qualified_and_back_quoted_names_and_what_is_not_a_declaration() {
        let sql = "CREATE OR REFRESH STREAMING TABLE `Main`.`Sales Data`.Orders AS SELECT 1;\n\
                   CREATE MATERIALIZED VIEW silver.`we``ird` AS SELECT 2;\n\
                   CREATE TEMPORARY VIEW v AS SELECT 3;\n\
                   CREATE OR REPLACE TABLE plain AS SELECT 4;\n\
                   CREATE STREAMING TABLE ${schema}.x AS SELECT 5;\n\
                   CREATE STREAMING TABLE a.b.c.d AS SELECT 6;\n\
                   CREATE STREAMING";
        assert_eq!(
            names(sql),
            vec![
                ("main.sales data.orders".into(), StreamingTable, false),
                ("silver.we`ird".into(), MaterializedView, false),
            ]
        );
    }

    #[test]
    fn comments_and_string_literals_declare_nothing() {
        let sql = "-- Databricks notebook source\n\
                   -- CREATE STREAMING TABLE commented AS SELECT 1\n\
                   /* CREATE MATERIALIZED VIEW blocked AS SELECT 2;\n   still a comment */\n\
                   -- COMMAND ----------\n\
                   CREATE /* inline */ MATERIALIZED -- here\n VIEW real AS SELECT 'CREATE STREAMING TABLE quoted', \"--\" AS x;\n\
                   -- MAGIC %python\n\
                   -- MAGIC CREATE STREAMING TABLE magic\n\
                   /* unterminated CREATE STREAMING TABLE never";
        assert_eq!(names(sql), vec![("real".into(), MaterializedView, false)]);
    }

    #[test]
    fn globs_name_files_folders_and_patterns() {
        assert!(glob_matches("/a/src/**", "/a/src/x/y.sql"));
        assert!(glob_matches("/a/src", "/a/src/y.sql"));
        assert!(glob_matches("/a/src/", "/a/src/y.sql"));
        assert!(!glob_matches("/a/src", "/a/srcs/y.sql"));
        assert!(glob_matches("/a/*.sql", "/a/y.sql"));
        assert!(!glob_matches("/a/*.sql", "/a/b/y.sql"));
        assert!(glob_matches("/a/**/*.sql", "/a/b/c/y.sql"));
    }

    // ---------- updates ----------

    const SRC: &str = "/Users/u@x/p/t.sql";

    fn ctx(now: i64, behaviours: Behaviours) -> Ctx<'static> {
        let mut c = Ctx::for_test(now, 100);
        c.behaviours = behaviours;
        c
    }

    fn write(st: &mut State, path: &str, object_type: &str, language: Option<&str>, text: &str) {
        let id = st.next_id();
        st.workspace.workspace.insert(
            path.to_string(),
            WsObject {
                object_type: object_type.into(),
                object_id: id,
                language: language.map(str::to_string),
                content: text.as_bytes().to_vec(),
                created_at: 0,
                modified_at: 0,
            },
        );
    }

    /// A workspace with schema `c.s` and a pipeline publishing there from `libraries`.
    fn setup(libraries: Value) -> (State, String) {
        let mut st = State::new("u@x", 0);
        st.uc.schemas.insert("c.s".into(), Map::new());
        let body = json!({"name": "p", "catalog": "c", "schema": "s", "libraries": libraries});
        let Value::Object(body) = body else {
            unreachable!()
        };
        let id = create_pipeline(
            &mut st,
            &ctx(0, Behaviours::default()),
            PipelineRequest {
                body: &body,
                name: Some("p"),
                allow_duplicate_names: false,
                run_as: None,
                parameters: None,
            },
        )
        .unwrap();
        (st, id)
    }

    /// Runs an update to its end; returns its failure.
    fn update(st: &mut State, id: &str, now: i64, b: Behaviours, full: bool) -> Option<String> {
        let mut req = Map::new();
        if full {
            req.insert("full_refresh".into(), json!(true));
        }
        let uid = start(st, &ctx(now, b), id, "API_CALL", req).unwrap();
        let (_, _, failure) = update_outcome(st, id, &uid, now + 10_000).unwrap();
        failure
    }

    fn table_type(st: &State, full: &str) -> Option<String> {
        st.uc
            .tables
            .get(full)
            .and_then(|t| t.get("table_type"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    #[test]
    fn an_update_publishes_the_declared_datasets_in_the_pipeline_schema() {
        let (mut st, id) = setup(json!([{"file": {"path": format!("/Workspace{SRC}")}}]));
        write(
            &mut st,
            SRC,
            "FILE",
            None,
            "CREATE OR REFRESH STREAMING TABLE t AS SELECT 1;\n\
             CREATE MATERIALIZED VIEW s.agg AS SELECT 2;\n\
             CREATE PRIVATE MATERIALIZED VIEW hidden AS SELECT 3;\n\
             CREATE MATERIALIZED VIEW other.s2.elsewhere AS SELECT 4;",
        );
        assert_eq!(update(&mut st, &id, 0, Behaviours::default(), false), None);
        assert_eq!(table_type(&st, "c.s.t").as_deref(), Some("STREAMING_TABLE"));
        assert_eq!(
            table_type(&st, "c.s.agg").as_deref(),
            Some("MATERIALIZED_VIEW")
        );
        assert_eq!(
            st.uc.tables["c.s.t"]["pipeline_id"],
            json!(id),
            "{:?}",
            st.uc.tables["c.s.t"]
        );
        // Private datasets are not in the catalog; a schema that does not exist gets nothing.
        assert!(!st.uc.tables.contains_key("c.s.hidden"));
        assert!(!st.uc.tables.contains_key("other.s2.elsewhere"));
        // Unchanged types publish again, keeping the table.
        let table_id = st.uc.tables["c.s.t"]["table_id"].clone();
        assert_eq!(
            update(&mut st, &id, 20_000, Behaviours::default(), false),
            None
        );
        assert_eq!(st.uc.tables["c.s.t"]["table_id"], table_id);
    }

    #[test]
    fn a_type_change_fails_every_update_full_refresh_included_and_publishes_nothing() {
        let (mut st, id) = setup(json!([{"notebook": {"path": "/Users/u@x/p/nb"}}]));
        write(
            &mut st,
            "/Users/u@x/p/nb",
            "NOTEBOOK",
            Some("SQL"),
            "-- Databricks notebook source\nCREATE OR REFRESH STREAMING TABLE t AS SELECT 1",
        );
        assert_eq!(update(&mut st, &id, 0, Behaviours::default(), false), None);
        write(
            &mut st,
            "/Users/u@x/p/nb",
            "NOTEBOOK",
            Some("SQL"),
            "CREATE OR REFRESH MATERIALIZED VIEW t AS SELECT 1;\nCREATE MATERIALIZED VIEW new_one AS SELECT 2",
        );
        for (i, full) in [false, true].into_iter().enumerate() {
            let now = 20_000 * (i64::try_from(i).unwrap() + 1);
            let failure = update(&mut st, &id, now, Behaviours::default(), full).unwrap();
            assert!(
                failure.starts_with("[CANNOT_CHANGE_DATASET_TYPE] Cannot change the dataset type of a pipeline table from STREAMING_TABLE to MATERIALIZED_VIEW: `c`.`s`.`t`"),
                "{failure}"
            );
            assert!(
                failure.contains("please drop the existing dataset first (DROP TABLE `c`.`s`.`t`"),
                "{failure}"
            );
            assert_eq!(table_type(&st, "c.s.t").as_deref(), Some("STREAMING_TABLE"));
            assert!(!st.uc.tables.contains_key("c.s.new_one"));
        }
        // Dropped, the dataset is published again with its new type.
        st.uc.tables.remove("c.s.t");
        assert_eq!(
            update(&mut st, &id, 80_000, Behaviours::default(), false),
            None
        );
        assert_eq!(
            table_type(&st, "c.s.t").as_deref(),
            Some("MATERIALIZED_VIEW")
        );
    }

    #[test]
    fn a_removed_dataset_stays_and_python_and_other_pipelines_tables_are_left_alone() {
        let (mut st, id) = setup(json!([
            {"glob": {"include": "/Users/u@x/p/**"}},
        ]));
        write(
            &mut st,
            SRC,
            "FILE",
            None,
            "CREATE STREAMING TABLE t AS SELECT 1",
        );
        write(
            &mut st,
            "/Users/u@x/p/py.py",
            "FILE",
            None,
            "# CREATE MATERIALIZED VIEW t AS SELECT 1",
        );
        assert_eq!(update(&mut st, &id, 0, Behaviours::default(), false), None);
        assert_eq!(table_type(&st, "c.s.t").as_deref(), Some("STREAMING_TABLE"));
        write(&mut st, SRC, "FILE", None, "SELECT 1");
        assert_eq!(
            update(&mut st, &id, 20_000, Behaviours::default(), false),
            None
        );
        assert_eq!(table_type(&st, "c.s.t").as_deref(), Some("STREAMING_TABLE"));
        // A table of that name the pipeline does not own is not this check's business.
        if let Some(t) = st.uc.tables.get_mut("c.s.t") {
            t.insert("pipeline_id".into(), json!("another"));
        }
        write(
            &mut st,
            SRC,
            "FILE",
            None,
            "CREATE MATERIALIZED VIEW t AS SELECT 1",
        );
        assert_eq!(
            update(&mut st, &id, 40_000, Behaviours::default(), false),
            None
        );
    }

    #[test]
    fn with_the_behaviour_off_nothing_is_published_and_no_update_fails_for_it() {
        let off = Behaviours::default().without(Behaviour::DatasetTypeFixed);
        let (mut st, id) = setup(json!([{"file": {"path": SRC}}]));
        write(
            &mut st,
            SRC,
            "FILE",
            None,
            "CREATE STREAMING TABLE t AS SELECT 1",
        );
        assert_eq!(update(&mut st, &id, 0, off, false), None);
        assert!(st.uc.tables.is_empty());
        // Published while on, then changed: off, the update still completes.
        assert_eq!(
            update(&mut st, &id, 20_000, Behaviours::default(), false),
            None
        );
        write(
            &mut st,
            SRC,
            "FILE",
            None,
            "CREATE MATERIALIZED VIEW t AS SELECT 1",
        );
        assert_eq!(update(&mut st, &id, 40_000, off, true), None);
        assert_eq!(table_type(&st, "c.s.t").as_deref(), Some("STREAMING_TABLE"));
    }
}
