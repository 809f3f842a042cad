//! The datasets a pipeline source file declares, and their type: a streaming table or a
//! materialized view. The service refuses to change a dataset from one type to the other
//! (the pipeline's update fails, and a full refresh does not help): a plan that changes a
//! source file so names it before it happens.
//!
//! Read from the text, as the pipeline's own parser would see the declarations:
//! - SQL: `CREATE [OR REFRESH] [PRIVATE|TEMPORARY] STREAMING TABLE name` (and the older
//!   `STREAMING LIVE TABLE`), `CREATE [OR REFRESH] [PRIVATE] MATERIALIZED VIEW name` (and
//!   the older `LIVE TABLE`, a materialized view);
//! - Python: `@dp.table` (a streaming table) and `@dp.materialized_view`, with `name=` or
//!   the function's name; the older `@dlt.table` is a streaming table when its function
//!   reads a stream (`readStream`, `read_stream`), a materialized view otherwise.

use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetType {
    StreamingTable,
    MaterializedView,
}

impl DatasetType {
    /// Its name in prose, without an article: `streaming table`.
    pub fn noun(self) -> &'static str {
        match self {
            DatasetType::StreamingTable => "streaming table",
            DatasetType::MaterializedView => "materialized view",
        }
    }

    /// Its name as a field of the plan's JSON (`from_type`, `to_type`): `streaming_table`.
    pub fn key(self) -> &'static str {
        match self {
            DatasetType::StreamingTable => "streaming_table",
            DatasetType::MaterializedView => "materialized_view",
        }
    }
}

#[allow(clippy::expect_used)] // constant patterns, checked by the tests
static SQL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?is)\bCREATE\s+(?:OR\s+REFRESH\s+)?(?:(?:PRIVATE|TEMPORARY)\s+)?(STREAMING\s+(?:LIVE\s+)?TABLE|MATERIALIZED\s+VIEW|LIVE\s+TABLE)\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\w.]+)")
        .expect("a valid pattern")
});

#[allow(clippy::expect_used)] // constant patterns, checked by the tests
static PYTHON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^\s*@(dp|dlt)\.(table|materialized_view)\b(\((?s:[^)]*)\))?\s*(?:@[^\n]*\n\s*)*def\s+(\w+)"#)
        .expect("a valid pattern")
});

#[allow(clippy::expect_used)] // constant patterns, checked by the tests
static NAME_ARG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\bname\s*=\s*["']([^"']+)["']"#).expect("a valid pattern"));

/// The datasets `text` declares, by name (lower case, without backticks), with their type.
/// `python` says which language it is written in.
pub fn declared(text: &str, python: bool) -> BTreeMap<String, DatasetType> {
    let mut out = BTreeMap::new();
    if python {
        for c in PYTHON.captures_iter(text) {
            let (Some(module), Some(kind), Some(func)) = (c.get(1), c.get(2), c.get(4)) else {
                continue;
            };
            let name = c
                .get(3)
                .and_then(|args| NAME_ARG.captures(args.as_str()))
                .and_then(|n| n.get(1))
                .map_or(func.as_str(), |n| n.as_str());
            let ty = match (module.as_str(), kind.as_str()) {
                (_, "materialized_view") => DatasetType::MaterializedView,
                ("dp", _) => DatasetType::StreamingTable,
                // `@dlt.table` is whatever its function returns.
                _ => {
                    let body = &text[func.end()..];
                    let end = body.find("\n@").unwrap_or(body.len());
                    if body[..end].contains("readStream") || body[..end].contains("read_stream") {
                        DatasetType::StreamingTable
                    } else {
                        DatasetType::MaterializedView
                    }
                }
            };
            out.insert(name.to_lowercase(), ty);
        }
    } else {
        for c in SQL.captures_iter(text) {
            let (Some(kind), Some(name)) = (c.get(1), c.get(2)) else {
                continue;
            };
            let ty = if kind.as_str().to_uppercase().starts_with("STREAMING") {
                DatasetType::StreamingTable
            } else {
                DatasetType::MaterializedView
            };
            out.insert(name.as_str().replace('`', "").to_lowercase(), ty);
        }
    }
    out
}

/// The datasets both texts declare whose type differs: (name, before, after).
pub fn changed_types(
    before: &str,
    after: &str,
    python: bool,
) -> Vec<(String, DatasetType, DatasetType)> {
    let was = declared(before, python);
    declared(after, python)
        .into_iter()
        .filter_map(|(name, now)| match was.get(&name) {
            Some(then) if *then != now => Some((name, *then, now)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use DatasetType::*;

    #[test]
    fn sql_declarations_in_every_form() {
        let text = "-- Databricks notebook source\nCREATE OR REFRESH STREAMING TABLE bronze AS SELECT 1;\n\
                    create materialized view `Silver` as select 2;\n\
                    CREATE STREAMING LIVE TABLE old_st AS SELECT 3;\n\
                    CREATE LIVE TABLE old_mv AS SELECT 4;\n\
                    CREATE OR REFRESH PRIVATE MATERIALIZED VIEW p AS SELECT 5;\n\
                    CREATE TEMPORARY STREAMING TABLE t AS SELECT 6;";
        let got = declared(text, false);
        let want: BTreeMap<String, DatasetType> = [
            ("bronze", StreamingTable),
            ("silver", MaterializedView),
            ("old_st", StreamingTable),
            ("old_mv", MaterializedView),
            ("p", MaterializedView),
            ("t", StreamingTable),
        ]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn python_declarations_with_and_without_a_name() {
        let text = r#"
from pyspark import pipelines as dp
import dlt

@dp.table(name="bronze", comment="raw")
def load():
    return spark.readStream.table("src")

@dp.materialized_view
def silver():
    return spark.read.table("bronze")

@dlt.table
@dlt.expect("ok", "x > 0")
def events():
    return spark.readStream.format("cloudFiles").load("/x")

@dlt.table(
    name="daily",
)
def daily_fn():
    return spark.read.table("events")
"#;
        let got = declared(text, true);
        assert_eq!(got.get("bronze"), Some(&StreamingTable));
        assert_eq!(got.get("silver"), Some(&MaterializedView));
        assert_eq!(got.get("events"), Some(&StreamingTable));
        assert_eq!(got.get("daily"), Some(&MaterializedView));
        assert_eq!(got.len(), 4, "{got:?}");
    }

    #[test]
    fn only_a_type_change_of_a_dataset_both_declare_is_reported() {
        let before =
            "CREATE STREAMING TABLE a AS SELECT 1; CREATE MATERIALIZED VIEW b AS SELECT 2;";
        let after = "CREATE MATERIALIZED VIEW a AS SELECT 1; CREATE MATERIALIZED VIEW b AS SELECT 3; CREATE STREAMING TABLE c AS SELECT 4;";
        assert_eq!(
            changed_types(before, after, false),
            vec![("a".to_string(), StreamingTable, MaterializedView)]
        );
        assert!(changed_types(before, before, false).is_empty());
    }
}
