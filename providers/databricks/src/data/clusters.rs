//! `data "databricks_clusters"`: the ids of the workspace's clusters, those whose name
//! contains `cluster_name_contains` (in any case) when it is given, and those `filter_by`
//! accepts (terraform-provider-databricks clusters/data_clusters.go, which passes it to
//! clusters/list as `compute.ListClustersFilterBy`; its `id` is `_`).

use crate::Shared;
use crate::resources::{cluster, err};
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, DataSource, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct Clusters {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Clusters {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe(
                "The ids of the workspace's clusters, optionally those whose name contains a text.",
            )
            .attr(
                Attribute::optional("cluster_name_contains", AttrType::String)
                    .describe("Only clusters whose name contains this text, in any case."),
            )
            .block(
                BlockType::single(
                    "filter_by",
                    Schema::new()
                        .attr(
                            Attribute::optional(
                                "cluster_states",
                                AttrType::List(Box::new(AttrType::String)),
                            )
                            .one_of(STATES),
                        )
                        .attr(
                            Attribute::optional(
                                "cluster_sources",
                                AttrType::List(Box::new(AttrType::String)),
                            )
                            .one_of(&["API", "JOB", "MODELS", "PIPELINE", "PIPELINE_MAINTENANCE", "SQL", "UI"]),
                        )
                        .attr(Attribute::optional("is_pinned", AttrType::Bool))
                        .attr(Attribute::optional("policy_id", AttrType::String)),
                )
                .describe("Only clusters in one of these states, from one of these sources, pinned, or of this policy (`compute.ListClustersFilterBy`)."),
            )
            .attr(
                Attribute::computed("ids", AttrType::Set(Box::new(AttrType::String)))
                    .describe("The clusters' ids."),
            )
            .attr(
                Attribute::computed("id", AttrType::String)
                    .describe("Always `_`, as in the Terraform provider."),
            );
        Clusters { schema, shared }
    }
}

/// `compute.State`.
const STATES: &[&str] = &[
    "ERROR",
    "PENDING",
    "RESIZING",
    "RESTARTING",
    "RUNNING",
    "TERMINATED",
    "TERMINATING",
    "UNKNOWN",
];

/// Whether a listed cluster passes a configuration's `filter_by` (`pinned`: the ids of the
/// pinned clusters, asked for only when the filter names `is_pinned`).
fn passes(c: &Json, filter: &Object, pinned: &[String]) -> bool {
    let field = |k: &str| c.get(k).and_then(Json::as_str).unwrap_or_default();
    let one_of = |k: &str, v: &str| match filter.get(k).and_then(Value::as_list) {
        Some(l) if !l.is_empty() => l.iter().any(|x| x.as_str() == Some(v)),
        _ => true,
    };
    let pin = match filter.get("is_pinned").and_then(Value::as_bool) {
        Some(true) => pinned.iter().any(|p| p == field("cluster_id")),
        _ => true,
    };
    let policy = filter
        .get("policy_id")
        .and_then(Value::as_str)
        .is_none_or(|p| p == field("policy_id"));
    one_of("cluster_states", field("state"))
        && one_of("cluster_sources", field("cluster_source"))
        && pin
        && policy
}

#[async_trait]
impl DataSource for Clusters {
    fn type_name(&self) -> &'static str {
        "databricks_clusters"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let client = self.shared.client()?;
        let mut all = cluster::list(&client, false).await.map_err(err)?;
        if let Some(Value::Object(filter)) = config.get("filter_by") {
            let pinned: Vec<String> =
                if filter.get("is_pinned").and_then(Value::as_bool) == Some(true) {
                    cluster::list(&client, true)
                        .await
                        .map_err(err)?
                        .iter()
                        .filter_map(|c| {
                            c.get("cluster_id")
                                .and_then(Json::as_str)
                                .map(str::to_string)
                        })
                        .collect()
                } else {
                    Vec::new()
                };
            all.retain(|c| passes(c, filter, &pinned));
        }
        let contains = config
            .get("cluster_name_contains")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let mut out = config.clone();
        out.insert(
            "ids".into(),
            Value::List(
                super::ids_named(&all, "cluster_name", "cluster_id", contains)
                    .into_iter()
                    .map(Value::from)
                    .collect(),
            ),
        );
        out.insert("id".into(), Value::from("_"));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_filter_keeps_the_states_sources_pins_and_policy_it_names() {
        let c = json!({"cluster_id": "a", "state": "RUNNING", "cluster_source": "API", "policy_id": "p"});
        let filter = |v: Json| match Value::from_json(&v) {
            Value::Object(o) => std::sync::Arc::unwrap_or_clone(o),
            _ => Object::default(),
        };
        assert!(passes(
            &c,
            &filter(json!({"cluster_states": ["RUNNING"]})),
            &[]
        ));
        assert!(!passes(
            &c,
            &filter(json!({"cluster_states": ["TERMINATED"]})),
            &[]
        ));
        assert!(!passes(
            &c,
            &filter(json!({"cluster_sources": ["UI"]})),
            &[]
        ));
        assert!(passes(&c, &filter(json!({"policy_id": "p"})), &[]));
        assert!(!passes(&c, &filter(json!({"policy_id": "q"})), &[]));
        assert!(!passes(&c, &filter(json!({"is_pinned": true})), &[]));
        assert!(passes(
            &c,
            &filter(json!({"is_pinned": true})),
            &["a".to_string()]
        ));
    }
}
