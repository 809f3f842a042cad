//! `data "databricks_cluster"`: an existing cluster, by `cluster_id` or `cluster_name`
//! (terraform-provider-databricks clusters/data_cluster.go): `cluster_info` is the service's
//! `ClusterDetails`, a block of one as the provider has it (`cluster_info[0].state`). A name
//! must name exactly one cluster.

use crate::Shared;
use crate::resources::{cluster, err};
use async_trait::async_trait;
use brickform_core::diagnostics::did_you_mean;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct Cluster {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Cluster {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("An existing cluster, by cluster_id or cluster_name (which must name exactly one).")
            .attr(
                Attribute::optional_computed("cluster_id", AttrType::String)
                    .describe("The cluster's id; or give its name."),
            )
            .attr(
                Attribute::optional_computed("cluster_name", AttrType::String)
                    .describe("The cluster's name (exact); or give its id."),
            )
            .attr(Attribute::computed("id", AttrType::String).describe("The cluster_id."))
            .attr(
                Attribute::computed("cluster_info", AttrType::Any)
                    .describe("A list of one: the service's ClusterDetails (cluster_info[0].state), with cluster_id, cluster_name, spark_version, node_type_id, driver_node_type_id, num_workers, autoscale, autotermination_minutes, custom_tags, default_tags, spark_conf, spark_env_vars, data_security_mode, single_user_name, policy_id, instance_pool_id, state, state_message, start_time, creator_user_name, cluster_source."),
            );
        Cluster { schema, shared }
    }
}

/// What the data source answers for one cluster.
fn answered(c: &Json) -> Object {
    let s = |k: &str| c.get(k).map_or(Value::Null, Value::from_json);
    let mut out = Object::default();
    out.insert("id".into(), s("cluster_id"));
    out.insert("cluster_id".into(), s("cluster_id"));
    out.insert("cluster_name".into(), s("cluster_name"));
    out.insert(
        "cluster_info".into(),
        Value::List(vec![Value::from_json(c)]),
    );
    out
}

/// No cluster of that name: the error names those that exist, and the closest one.
fn not_found(name: &str, all: &[Json]) -> ProviderError {
    let names: Vec<&str> = all
        .iter()
        .filter_map(|c| c.get("cluster_name").and_then(Json::as_str))
        .collect();
    let mut detail = if names.is_empty() {
        "the workspace has no clusters".to_string()
    } else {
        format!("the workspace's clusters: {}", names.join(", "))
    };
    if let Some(hint) = did_you_mean(name, names.iter().copied()) {
        detail = format!("{hint}\n{detail}");
    }
    ProviderError::not_found(format!("there is no cluster with name '{name}'")).with_detail(detail)
}

#[async_trait]
impl DataSource for Cluster {
    fn type_name(&self) -> &'static str {
        "databricks_cluster"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let client = self.shared.client()?;
        let given = |k: &str| super::given(config, k);
        // The provider looks a name up first, when both are given.
        let found = match (given("cluster_name"), given("cluster_id")) {
            (Some(name), _) => {
                let all = cluster::list(&client, false).await.map_err(err)?;
                let named: Vec<&Json> = all
                    .iter()
                    .filter(|c| c.get("cluster_name").and_then(Json::as_str) == Some(name))
                    .collect();
                match named.as_slice() {
                    [one] => (*one).clone(),
                    [] => return Err(not_found(name, &all)),
                    _ => {
                        return Err(ProviderError::invalid(format!(
                            "there is more than one cluster with name '{name}'"
                        ))
                        .with_detail("give the cluster's cluster_id instead"));
                    }
                }
            }
            (None, Some(id)) => cluster::get_cluster(&client, id)
                .await?
                .ok_or_else(|| ProviderError::not_found(format!("cluster {id} does not exist")))?,
            (None, None) => {
                return Err(ProviderError::invalid(
                    "you need to specify either `cluster_name` or `cluster_id`",
                ));
            }
        };
        Ok(answered(&found))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cluster_is_answered_with_its_details_as_a_block_of_one() {
        let got =
            answered(&json!({"cluster_id": "0101-a", "cluster_name": "bi", "state": "RUNNING"}));
        assert_eq!(got.get("id"), Some(&Value::from("0101-a")));
        assert_eq!(got.get("cluster_name"), Some(&Value::from("bi")));
        let info = got.get("cluster_info").and_then(Value::as_list).unwrap();
        assert_eq!(info.len(), 1);
        assert_eq!(
            info[0].as_object().and_then(|o| o.get("state")),
            Some(&Value::from("RUNNING"))
        );
    }

    #[test]
    fn a_missing_name_names_the_clusters_and_the_closest() {
        let e = not_found(
            "bj",
            &[
                json!({"cluster_name": "bi"}),
                json!({"cluster_name": "etl"}),
            ],
        );
        assert_eq!(e.message, "there is no cluster with name 'bj'");
        assert!(
            e.detail
                .unwrap()
                .contains("the workspace's clusters: bi, etl")
        );
    }
}
