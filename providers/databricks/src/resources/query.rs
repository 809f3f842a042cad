//! `databricks_query`: a Databricks SQL query, through the current Queries API
//! (`/api/2.0/sql/queries`), with the Terraform provider's attribute names
//! (terraform-provider-databricks sql/resource_query.go, docs/resources/query.md). The life
//! cycle it shares with alerts is `sql_object.rs`.
//!
//! `parameter` blocks are the API's `parameters` (resource_query.go:20-22, the alias map);
//! each carries exactly one value block (docs/resources/query.md: "one of `*_value` is
//! required"). `owner_user_name` and `run_as_mode` are left to the service when unset, and
//! a date's `precision` too (the provider suppresses their diffs, resource_query.go:35-36,
//! :45-46).

use super::WORKSPACE_MOUNT;
use super::sql_object::{SqlObject, SqlSpec};
use super::str_attr;
use super::successor::{Rename, Reshape};
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, BlockType, Finding, Normalize, Schema};
use brickform_core::value::{Object, PathStep, Value};
use std::sync::Arc;

/// The update mask of the Terraform provider: these always, the rest when they change
/// (resource_query.go:144-150).
const SPEC: SqlSpec = SqlSpec {
    type_name: "databricks_query",
    base: "/api/2.0/sql/queries",
    noun: "query",
    renames: &[("", "parameter", "parameters")],
    always_masked: &["display_name", "query_text", "warehouse_id", "parameters"],
    masked_when_changed: &[
        "run_as_mode",
        "owner_user_name",
        "description",
        "tags",
        "apply_auto_limit",
        "catalog",
        "schema",
    ],
    service_decides: &["run_as_mode", "owner_user_name"],
    false_omitted: &["apply_auto_limit"],
    check,
    defaults: |_| Object::default(),
};

/// How `brickform convert` carries the legacy `databricks_sql_query` over: the same query
/// through the current API (terraform-provider-databricks docs/resources/query.md,
/// "Migrating from `databricks_sql_query` resource": `name` is `display_name`, the
/// parameter value blocks are renamed, `parent` (`folders/ID`) becomes a path; the id stays):
/// `parent = "folders/${databricks_directory.X.object_id}"` is `databricks_directory.X.path`.
/// Its `data_source_id` is a warehouse's data source: a reference to a warehouse's
/// `data_source_id` becomes its `id`; a literal data source id names no warehouse
/// brickform can tell, and is left out. Each legacy parameter type is one of the current
/// value blocks (provider docs/resources/sql_query.md and query.md, `parameter`): `enum`'s
/// list of `options` becomes `enum_options`, one a line, and its single `value` a list of
/// one; `multiple` is `multi_values_options`; the date types are `date_value` or
/// `date_range_value` with the precision their name says, a range's `range` its
/// `date_range_value`.
pub const LEGACY: super::successor::Successor = super::successor::Successor {
    from_kind: "databricks_sql_query",
    to_kind: "databricks_query",
    renames: &[
        Rename::to("", "name", "display_name"),
        Rename::to("", "query", "query_text"),
        Rename::to("parameter", "text", "text_value"),
        Rename::to("parameter", "number", "numeric_value"),
        // `options` is a list; `enum_options` one text, an option a line.
        Rename::to("parameter", "enum", "enum_value"),
        Rename::to("parameter.enum_value", "options", "enum_options").reshaped(Reshape::Lines),
        Rename::to("parameter.enum_value", "value", "values").reshaped(Reshape::InList),
        Rename::to("parameter.enum_value", "multiple", "multi_values_options"),
        Rename::to("parameter", "query", "query_backed_value"),
        Rename::to("parameter.query_backed_value", "value", "values").reshaped(Reshape::InList),
        Rename::to(
            "parameter.query_backed_value",
            "multiple",
            "multi_values_options",
        ),
        // The legacy date types are one value block with the precision their name said.
        Rename::to("parameter", "date", "date_value").adding(DAY),
        Rename::to("parameter", "datetime", "date_value").adding(MINUTE),
        Rename::to("parameter", "datetimesec", "date_value").adding(SECOND),
        Rename::to("parameter.date_value", "value", "date_value"),
        Rename::to("parameter", "date_range", "date_range_value").adding(DAY),
        Rename::to("parameter", "datetime_range", "date_range_value").adding(MINUTE),
        Rename::to("parameter", "datetimesec_range", "date_range_value").adding(SECOND),
        Rename::to("parameter.date_range_value", "range", "date_range_value"),
    ],
    resolved: &[(
        "data_source_id",
        "warehouse_id",
        "databricks_sql_endpoint",
        "data_source_id",
        "id",
    )],
    templated: &[(
        "parent",
        "parent_path",
        "folders/",
        "databricks_directory",
        "object_id",
        "path",
    )],
    left_out: &[
        (
            "parent",
            "a folder's object id (folders/ID), where databricks_query takes the folder's path: set parent_path",
        ),
        (
            "run_as_role",
            "the legacy viewer or owner role: set run_as_mode = \"VIEWER\" or \"OWNER\"",
        ),
        (
            "schedule",
            "queries of the current API have no schedule: run the query from a job's sql_task",
        ),
    ],
    left_out_within: &[(
        "parameter.date_range_value",
        "value",
        "a default range written as one text, where the current API takes its start and end: set date_range_value { start, end } or dynamic_date_range_value",
    )],
};

const DAY: &[(&str, &str)] = &[("precision", "\"DAY_PRECISION\"")];
const MINUTE: &[(&str, &str)] = &[("precision", "\"MINUTE_PRECISION\"")];
const SECOND: &[(&str, &str)] = &[("precision", "\"SECOND_PRECISION\"")];

/// The value blocks of a parameter, exactly one of which it carries.
const VALUE_BLOCKS: &[&str] = &[
    "text_value",
    "numeric_value",
    "date_value",
    "date_range_value",
    "enum_value",
    "query_backed_value",
];
const PRECISIONS: &[&str] = &["DAY_PRECISION", "MINUTE_PRECISION", "SECOND_PRECISION"];
/// docs/resources/query.md, `dynamic_date_range_value`.
const DYNAMIC_RANGES: &[&str] = &[
    "TODAY",
    "YESTERDAY",
    "THIS_WEEK",
    "THIS_MONTH",
    "THIS_YEAR",
    "LAST_WEEK",
    "LAST_MONTH",
    "LAST_YEAR",
    "LAST_HOUR",
    "LAST_8_HOURS",
    "LAST_24_HOURS",
    "LAST_7_DAYS",
    "LAST_14_DAYS",
    "LAST_30_DAYS",
    "LAST_60_DAYS",
    "LAST_90_DAYS",
    "LAST_12_MONTHS",
];

fn s() -> AttrType {
    AttrType::String
}

fn multi_values_options() -> BlockType {
    BlockType::single(
        "multi_values_options",
        Schema::new()
            .attr(Attribute::optional("prefix", s()))
            .attr(Attribute::optional("separator", s()))
            .attr(Attribute::optional("suffix", s())),
    )
    .describe("Allows several values to be selected: how they are joined.")
}

fn parameter() -> BlockType {
    BlockType::list(
        "parameter",
        Schema::new()
            .attr(Attribute::required("name", s()).describe("The marker between double curly braces in the query text."))
            .attr(Attribute::optional("title", s()))
            .block(BlockType::single(
                "text_value",
                Schema::new().attr(Attribute::required("value", s())),
            ))
            .block(BlockType::single(
                "numeric_value",
                Schema::new().attr(Attribute::required("value", AttrType::Number)),
            ))
            .block(BlockType::single(
                "date_value",
                Schema::new()
                    .attr(Attribute::optional("date_value", s()))
                    .attr(Attribute::optional("dynamic_date_value", s()).one_of(&["NOW", "YESTERDAY"]))
                    .attr(Attribute::optional_computed("precision", s()).one_of(PRECISIONS)),
            ))
            .block(BlockType::single(
                "date_range_value",
                Schema::new()
                    .block(BlockType::single(
                        "date_range_value",
                        Schema::new()
                            .attr(Attribute::required("start", s()))
                            .attr(Attribute::required("end", s())),
                    ))
                    .attr(Attribute::optional("dynamic_date_range_value", s()).one_of(DYNAMIC_RANGES))
                    .attr(Attribute::optional("start_day_of_week", AttrType::Number))
                    .attr(Attribute::optional_computed("precision", s()).one_of(PRECISIONS)),
            ))
            .block(BlockType::single(
                "enum_value",
                Schema::new()
                    .attr(Attribute::optional("enum_options", s()).describe("The options, one a line."))
                    .attr(Attribute::optional("values", AttrType::List(Box::new(s()))))
                    .block(multi_values_options()),
            ))
            .block(BlockType::single(
                "query_backed_value",
                Schema::new()
                    .attr(Attribute::required("query_id", s()))
                    .attr(Attribute::optional("values", AttrType::List(Box::new(s()))))
                    .block(multi_values_options()),
            )),
    )
    .describe("A query parameter: its name, and exactly one of text_value, numeric_value, date_value, date_range_value, enum_value, query_backed_value.")
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Databricks SQL query (the current Queries API). Its display name is unique in its folder; moving it to another folder (parent_path) replaces it. A destroy moves it to the trash.")
        .attr(Attribute::required("display_name", s()))
        .attr(Attribute::required("query_text", s()))
        .attr(Attribute::required("warehouse_id", s()).describe("The SQL warehouse that runs the query (databricks_sql_endpoint's id)."))
        .attr(
            Attribute::optional_computed("parent_path", s())
                .force_new()
                .normalize(Normalize::MountedPath(WORKSPACE_MOUNT))
                .describe("The workspace folder holding the query, with or without /Workspace; the caller's home folder when left out. A change replaces the query."),
        )
        .attr(Attribute::optional_computed("owner_user_name", s()).describe("The owner; the creator when left out."))
        .attr(Attribute::optional("apply_auto_limit", AttrType::Bool).describe("Limit results to 1000 rows."))
        .attr(Attribute::optional("catalog", s()))
        .attr(Attribute::optional("schema", s()))
        .attr(Attribute::optional("description", s()))
        .attr(
            Attribute::optional_computed("run_as_mode", s())
                .one_of(&["OWNER", "VIEWER"])
                .describe("Whose credentials run the query; the service's default when left out."),
        )
        .attr(Attribute::optional("tags", AttrType::List(Box::new(s()))))
        .block(parameter())
        .attr(Attribute::computed("id", s()))
        .attr(Attribute::computed("lifecycle_state", s()).describe("ACTIVE; a trashed query is gone."))
        .attr(Attribute::computed("create_time", s()))
        .attr(Attribute::computed("update_time", s()).changes_on_write())
        .attr(Attribute::computed("last_modifier_user_name", s()).changes_on_write())
}

/// The kind, its life cycle the one of SQL objects (`sql_object.rs`).
pub fn kind(shared: Arc<Shared>) -> SqlObject {
    SqlObject {
        spec: &SPEC,
        schema: schema(),
        shared,
    }
}

fn set(o: &Object, k: &str) -> bool {
    o.get(k).is_some_and(|v| !v.is_null())
}

/// A name that is blank, where the provider refuses white space
/// (`validation.StringIsNotWhiteSpace`, resource_query.go:32-34, :43).
fn blank(o: &Object, k: &str) -> bool {
    str_attr(o, k).is_some_and(|v| v.trim().is_empty())
}

/// The provider's checks, and one value block per parameter.
pub fn check(config: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    for k in ["display_name", "warehouse_id"] {
        if blank(config, k) {
            out.push(Finding::error(&[k], format!("{k} is blank")));
        }
    }
    let params = config
        .get("parameter")
        .and_then(Value::as_list)
        .unwrap_or(&[]);
    for (i, p) in params.iter().enumerate() {
        let Some(p) = p.as_object() else { continue };
        let at = vec![PathStep::Key("parameter".into()), PathStep::Index(i)];
        if blank(p, "name") {
            out.push(Finding::error(&[], "a parameter's name is blank").at(at.clone()));
        }
        let named: Vec<&str> = VALUE_BLOCKS.iter().copied().filter(|b| set(p, b)).collect();
        if named.len() != 1 {
            out.push(
                Finding::error(
                    &[],
                    format!(
                        "a parameter carries exactly one of {}; this one has {}",
                        VALUE_BLOCKS.join(", "),
                        if named.is_empty() {
                            "none".to_string()
                        } else {
                            named.join(" and ")
                        }
                    ),
                )
                .at(at.clone()),
            );
        }
        for (block, fixed, dynamic) in [
            ("date_value", "date_value", "dynamic_date_value"),
            (
                "date_range_value",
                "date_range_value",
                "dynamic_date_range_value",
            ),
        ] {
            if let Some(Value::Object(v)) = p.get(block)
                && set(v, fixed)
                && set(v, dynamic)
            {
                let mut here = at.clone();
                here.push(PathStep::Key(block.into()));
                out.push(
                    Finding::error(&[], format!("{block} takes {fixed} or {dynamic}, not both"))
                        .at(here),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(config: serde_json::Value) -> Vec<String> {
        check(&super::super::decoded(&schema(), config))
            .into_iter()
            .map(|f| f.message)
            .collect()
    }

    #[test]
    fn checks_follow_the_provider() {
        let ok = json!({"display_name": "q", "query_text": "select {{p}}", "warehouse_id": "w",
            "parameter": [{"name": "p", "text_value": {"value": "x"}}]});
        assert!(messages(ok).is_empty());
        let blank = messages(json!({"display_name": " ", "query_text": "x", "warehouse_id": "w"}));
        assert_eq!(blank, ["display_name is blank"]);
        let none = messages(
            json!({"display_name": "q", "query_text": "x", "warehouse_id": "w",
            "parameter": [{"name": "p"}]}),
        );
        assert!(
            none.iter().any(|m| m.contains("this one has none")),
            "{none:?}"
        );
        let two = messages(
            json!({"display_name": "q", "query_text": "x", "warehouse_id": "w",
            "parameter": [{"name": "p", "text_value": {"value": "x"}, "numeric_value": {"value": 1}}]}),
        );
        assert!(
            two.iter()
                .any(|m| m.contains("text_value and numeric_value")),
            "{two:?}"
        );
        let both = messages(
            json!({"display_name": "q", "query_text": "x", "warehouse_id": "w",
            "parameter": [{"name": "p", "date_value": {"date_value": "2024-01-01", "dynamic_date_value": "NOW"}}]}),
        );
        assert!(both.iter().any(|m| m.contains("not both")), "{both:?}");
    }

    #[test]
    fn parameters_go_out_as_the_apis_parameters() {
        let config = super::super::decoded(
            &schema(),
            json!({"display_name": "q", "query_text": "x", "warehouse_id": "w", "id": "i",
                "parameter": [{"name": "p", "numeric_value": {"value": 2}}]}),
        );
        assert_eq!(
            super::super::sql_object::body(&SPEC, &schema(), &config),
            json!({"display_name": "q", "query_text": "x", "warehouse_id": "w",
                "parameters": [{"name": "p", "numeric_value": {"value": 2}}]})
        );
    }
}
