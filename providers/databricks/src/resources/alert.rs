//! `databricks_alert`: a Databricks SQL alert on a query's result, through the current
//! Alerts API (`/api/2.0/sql/alerts`), with the Terraform provider's attribute names
//! (terraform-provider-databricks sql/resource_alert.go, docs/resources/alert.md). The life
//! cycle it shares with queries is `sql_object.rs`.
//!
//! `condition` compares one column of the result (`operand { column { name } }`) with a
//! threshold of exactly one type (resource_alert.go:33-41: ExactlyOneOf string_value,
//! double_value, bool_value), which IS_NULL does without (docs/resources/alert.md).
//! `notify_on_ok` defaults to true (resource_alert.go:43), sent as such.

use super::WORKSPACE_MOUNT;
use super::sql_object::{SqlObject, SqlSpec};
use super::str_attr;
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, BlockType, Finding, Normalize, Schema};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

/// The update mask of the Terraform provider (resource_alert.go:99-107).
const SPEC: SqlSpec = SqlSpec {
    type_name: "databricks_alert",
    base: "/api/2.0/sql/alerts",
    noun: "alert",
    renames: &[],
    always_masked: &[
        "display_name",
        "query_id",
        "seconds_to_retrigger",
        "condition",
        "custom_body",
        "custom_subject",
    ],
    masked_when_changed: &["owner_user_name", "notify_on_ok"],
    service_decides: &["owner_user_name"],
    false_omitted: &["notify_on_ok"],
    check,
    defaults,
};

/// resource_alert.go:26-27.
pub const OPS: &[&str] = &[
    "GREATER_THAN",
    "GREATER_THAN_OR_EQUAL",
    "LESS_THAN",
    "LESS_THAN_OR_EQUAL",
    "EQUAL",
    "NOT_EQUAL",
    "IS_NULL",
];
const THRESHOLD_TYPES: &[&str] = &["string_value", "double_value", "bool_value"];

fn s() -> AttrType {
    AttrType::String
}

fn condition() -> BlockType {
    BlockType::single(
        "condition",
        Schema::new()
            .attr(Attribute::required("op", s()).one_of(OPS))
            .block(
                BlockType::single(
                    "operand",
                    Schema::new().block(
                        BlockType::single(
                            "column",
                            Schema::new().attr(Attribute::required("name", s())),
                        )
                        .min(1),
                    ),
                )
                .min(1)
                .describe("The column of the query's result the alert compares."),
            )
            .block(
                BlockType::single(
                    "threshold",
                    Schema::new().block(
                        BlockType::single(
                            "value",
                            Schema::new()
                                .attr(Attribute::optional("string_value", s()))
                                .attr(Attribute::optional("double_value", AttrType::Number))
                                .attr(Attribute::optional("bool_value", AttrType::Bool)),
                        )
                        .min(1),
                    ),
                )
                .describe("What the column is compared with: exactly one of string_value, double_value, bool_value. Not for IS_NULL."),
            )
            .attr(
                Attribute::optional("empty_result_state", s())
                    .one_of(&["UNKNOWN", "OK", "TRIGGERED"])
                    .describe("The alert's state when the result is empty."),
            ),
    )
    .min(1)
    .describe("When the alert triggers.")
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Databricks SQL alert (the current Alerts API) on a query's result. Its display name is unique in its folder; moving it to another folder (parent_path) replaces it. A destroy moves it to the trash.")
        .attr(Attribute::required("display_name", s()))
        .attr(Attribute::required("query_id", s()).describe("The query the alert evaluates (databricks_query's id)."))
        .block(condition())
        .attr(Attribute::optional("custom_subject", s()))
        .attr(Attribute::optional("custom_body", s()))
        .attr(
            Attribute::optional_computed("parent_path", s())
                .force_new()
                .normalize(Normalize::MountedPath(WORKSPACE_MOUNT))
                .describe("The workspace folder holding the alert, with or without /Workspace; the caller's home folder when left out. A change replaces the alert."),
        )
        .attr(
            Attribute::optional("seconds_to_retrigger", AttrType::Number)
                .describe("Seconds after a trigger before the alert can trigger again; never again when 0 or left out."),
        )
        .attr(Attribute::optional_computed("owner_user_name", s()).describe("The owner; the creator when left out."))
        .attr(
            Attribute::optional("notify_on_ok", AttrType::Bool)
                .describe("Notify when the alert returns to normal; true when left out, as in the Terraform provider."),
        )
        .attr(Attribute::computed("id", s()))
        .attr(Attribute::computed("lifecycle_state", s()).describe("ACTIVE; a trashed alert is gone."))
        .attr(Attribute::computed("state", s()).describe("UNKNOWN, OK or TRIGGERED."))
        .attr(Attribute::computed("create_time", s()))
        .attr(Attribute::computed("update_time", s()).changes_on_write())
        .attr(Attribute::computed("trigger_time", s()))
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

fn block<'a>(o: &'a Object, k: &str) -> Option<&'a Object> {
    match o.get(k)? {
        Value::Object(b) => Some(b),
        Value::List(l) => l.first().and_then(Value::as_object),
        _ => None,
    }
}

/// The Terraform provider's defaults, filled where the configuration leaves them out.
fn defaults(config: &Object) -> Object {
    let mut out = Object::default();
    if !set(config, "notify_on_ok") {
        out.insert("notify_on_ok".into(), Value::Bool(true));
    }
    out
}

pub fn check(config: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    if str_attr(config, "display_name").is_some_and(|n| n.trim().is_empty()) {
        out.push(Finding::error(&["display_name"], "display_name is blank"));
    }
    if let Some(n) = config.get("seconds_to_retrigger").and_then(Value::as_f64)
        && n < 0.0
    {
        out.push(Finding::error(
            &["seconds_to_retrigger"],
            format!("seconds_to_retrigger is 0 or more, not {n}"),
        ));
    }
    let Some(c) = block(config, "condition") else {
        return out;
    };
    let op = str_attr(c, "op");
    match block(c, "threshold").and_then(|t| block(t, "value")) {
        Some(v) => {
            let named: Vec<&str> = THRESHOLD_TYPES
                .iter()
                .copied()
                .filter(|k| set(v, k))
                .collect();
            if named.len() != 1 && v.values().all(Value::is_wholly_known) {
                out.push(Finding::error(
                    &["condition", "threshold", "value"],
                    format!(
                        "a threshold value is exactly one of {}; this one has {}",
                        THRESHOLD_TYPES.join(", "),
                        if named.is_empty() {
                            "none".to_string()
                        } else {
                            named.join(" and ")
                        }
                    ),
                ));
            }
        }
        None if op.is_some_and(|o| o != "IS_NULL") => out.push(
            Finding::error(
                &["condition"],
                format!(
                    "condition with op {} needs a threshold",
                    op.unwrap_or_default()
                ),
            )
            .hint("add threshold { value { double_value = ... } } (or string_value, bool_value)"),
        ),
        None => {}
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

    fn alert(condition: serde_json::Value) -> serde_json::Value {
        json!({"display_name": "a", "query_id": "q", "condition": condition})
    }

    #[test]
    fn checks_follow_the_provider() {
        let column = json!({"column": {"name": "v"}});
        assert!(
            messages(alert(json!({"op": "GREATER_THAN", "operand": column,
            "threshold": {"value": {"double_value": 42}}})))
            .is_empty()
        );
        assert!(messages(alert(json!({"op": "IS_NULL", "operand": column}))).is_empty());
        let two = messages(alert(json!({"op": "EQUAL", "operand": column,
            "threshold": {"value": {"double_value": 1, "string_value": "1"}}})));
        assert!(
            two.iter()
                .any(|m| m.contains("string_value and double_value")),
            "{two:?}"
        );
        let none = messages(alert(json!({"op": "EQUAL", "operand": column})));
        assert!(
            none.iter().any(|m| m.contains("needs a threshold")),
            "{none:?}"
        );
    }

    #[test]
    fn notify_on_ok_defaults_to_true_and_the_condition_goes_out_nested() {
        let mut config = super::super::decoded(
            &schema(),
            alert(json!({"op": "EQUAL", "operand": {"column": {"name": "v"}},
                "threshold": {"value": {"bool_value": false}}})),
        );
        for (k, v) in defaults(&config) {
            config.insert(k, v);
        }
        assert_eq!(
            super::super::sql_object::body(&SPEC, &schema(), &config),
            json!({"display_name": "a", "query_id": "q", "notify_on_ok": true,
                "condition": {"op": "EQUAL", "operand": {"column": {"name": "v"}},
                    "threshold": {"value": {"bool_value": false}}}})
        );
    }
}
