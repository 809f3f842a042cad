//! `databricks_instance_pool`: idle cloud instances kept ready for clusters. The service
//! assigns its id (`instance_pool_id`, also the resource's id); its name is unique in the
//! workspace, which finds a pool again after a lost create answer.
//!
//! As in the Terraform provider (terraform-provider-databricks pools/resource_instance_pool.go):
//! the edit API takes only the name, the sizes, the idle termination and the custom tags
//! (with the node type, which it does not change); every other setting is the pool's for
//! life, and a change of it replaces the pool (force_new: node_type_id, enable_elastic_disk,
//! the cloud attributes, disk_spec, preloaded_spark_versions, preloaded_docker_image). `enable_elastic_disk`
//! defaults to true (`s["enable_elastic_disk"].Default = true`), and `max_capacity` left out
//! is the service's (suppress_diff).

use super::wire::{self, Renames};
use super::{created_id, read_back};
use super::{err, gone_ok, listed_by, none_if_missing, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, Finding, OpContext, ProviderError, ProviderResult, Remote,
    ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

const BASE: &str = "/api/2.0/instance-pools";
const RENAMES: Renames = &[("", "preloaded_docker_image", "preloaded_docker_images")];
/// What the edit API takes besides the id: what an update sends.
const EDITABLE: &[&str] = &[
    "instance_pool_name",
    "node_type_id",
    "min_idle_instances",
    "max_capacity",
    "idle_instance_autotermination_minutes",
    "custom_tags",
];
/// The service's limits (docs/resources/instance_pool.md).
const MAX_IDLE_MINUTES: f64 = 10_000.0;
const MAX_TAGS: usize = 43;

pub struct InstancePool {
    schema: Schema,
    shared: Arc<Shared>,
}

fn s() -> AttrType {
    AttrType::String
}

fn n() -> AttrType {
    AttrType::Number
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("An instance pool: idle instances of one node type kept ready for clusters. Only the name, the sizes, the idle termination and the custom tags change in place; any other change replaces the pool.")
        .attr(Attribute::required("instance_pool_name", s()).describe("Unique in the workspace, non-empty, shorter than 100 characters."))
        .attr(
            Attribute::optional("min_idle_instances", n())
                .server_default(0)
                .describe("Idle instances kept beyond those clusters use."),
        )
        .attr(
            Attribute::optional_computed("max_capacity", n())
                .describe("At most this many instances, idle and used. Left out, the service's (no limit)."),
        )
        .attr(
            Attribute::required("idle_instance_autotermination_minutes", n())
                .describe("Minutes idle instances beyond min_idle_instances are kept, 0 to 10000."),
        )
        .attr(
            Attribute::required("node_type_id", s())
                .force_new()
                .describe("The node type of the pool's instances (databricks_node_type); a change replaces the pool."),
        )
        .attr(
            Attribute::optional("custom_tags", AttrType::Map(Box::new(s())))
                .describe("Tags put on the pool's cloud resources, at most 43."),
        )
        .attr(
            Attribute::optional("enable_elastic_disk", AttrType::Bool)
                .server_default(true)
                .force_new()
                .describe("Autoscaling local storage; true when left out, as in the Terraform provider."),
        )
        .attr(
            Attribute::optional("preloaded_spark_versions", AttrType::List(Box::new(s())))
                .force_new()
                .describe("At most one runtime version installed on each instance (databricks_spark_version)."),
        )
        .block(
            // `slice_set` and force_new in the Terraform provider
            // (pools/resource_instance_pool.go `PreloadedDockerImages`).
            BlockType::list(
                "preloaded_docker_image",
                Schema::new()
                    .attr(Attribute::required("url", s()))
                    .block(BlockType::single(
                        "basic_auth",
                        Schema::new()
                            .attr(Attribute::required("username", s()))
                            .attr(Attribute::required("password", s()).sensitive()),
                    )),
            )
            .unordered()
            .force_new()
            .describe("Docker images downloaded onto the pool's instances ahead of clusters that use them; a change replaces the pool."),
        )
        .block(
            BlockType::single(
                "aws_attributes",
                Schema::new()
                    .attr(Attribute::optional("availability", s()).one_of(&["SPOT", "ON_DEMAND"]))
                    .attr(Attribute::optional("zone_id", s()))
                    .attr(Attribute::optional("spot_bid_price_percent", n()))
                    .attr(Attribute::optional("instance_profile_arn", s())),
            )
            .force_new(),
        )
        .block(
            BlockType::single(
                "azure_attributes",
                Schema::new()
                    .attr(
                        Attribute::optional("availability", s())
                            .one_of(&["SPOT_AZURE", "ON_DEMAND_AZURE"]),
                    )
                    .attr(Attribute::optional("spot_bid_max_price", n())),
            )
            .force_new(),
        )
        .block(
            BlockType::single(
                "gcp_attributes",
                Schema::new()
                    .attr(Attribute::optional("gcp_availability", s()).one_of(&[
                        "PREEMPTIBLE_GCP",
                        "ON_DEMAND_GCP",
                        "PREEMPTIBLE_WITH_FALLBACK_GCP",
                    ]))
                    .attr(Attribute::optional("local_ssd_count", n()))
                    .attr(Attribute::optional("zone_id", s())),
            )
            .force_new(),
        )
        .block(
            BlockType::single(
                "disk_spec",
                Schema::new()
                    .attr(Attribute::optional("disk_count", n()))
                    .attr(Attribute::optional("disk_size", n()))
                    .block(BlockType::single(
                        "disk_type",
                        Schema::new()
                            .attr(
                                Attribute::optional("ebs_volume_type", s())
                                    .one_of(&["GENERAL_PURPOSE_SSD", "THROUGHPUT_OPTIMIZED_HDD"]),
                            )
                            .attr(
                                Attribute::optional("azure_disk_volume_type", s())
                                    .one_of(&["PREMIUM_LRS", "STANDARD_LRS"]),
                            ),
                    )),
            )
            .force_new()
            .describe("Disks attached to each instance."),
        )
        .attr(Attribute::computed("instance_pool_id", s()))
        .attr(Attribute::computed("id", s()).describe("The instance_pool_id."))
}

impl InstancePool {
    pub fn new(shared: Arc<Shared>) -> Self {
        InstancePool {
            schema: schema(),
            shared,
        }
    }
}

/// The create body: the whole configuration, without what the service computes, and
/// elastic disks on unless configured off (the Terraform provider's default).
fn create_body(schema: &Schema, config: &Object) -> Json {
    let mut b = wire::to_wire(schema, config, RENAMES, "");
    if let Json::Object(m) = &mut b {
        m.remove("instance_pool_id");
        m.remove("id");
        m.entry("enable_elastic_disk").or_insert(json!(true));
    }
    b
}

/// The edit body: what the edit API takes, and the id.
fn edit_body(schema: &Schema, id: &str, config: &Object) -> Json {
    let all = wire::to_wire(schema, config, RENAMES, "");
    let mut m = serde_json::Map::new();
    m.insert("instance_pool_id".into(), json!(id));
    for k in EDITABLE {
        if let Some(v) = all.get(*k) {
            m.insert((*k).to_string(), v.clone());
        }
    }
    Json::Object(m)
}

fn remote(schema: &Schema, p: &Json) -> Remote {
    let mut attrs = wire::from_wire(schema, p, RENAMES, "");
    let id = p
        .get("instance_pool_id")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    attrs.insert("id".into(), Value::from(id.as_str()));
    Remote { id, attrs }
}

impl InstancePool {
    async fn get(&self, id: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let got = none_if_missing(
            client
                .get(
                    &format!("{BASE}/get"),
                    &[("instance_pool_id", id.to_string())],
                )
                .await,
        )?;
        Ok(got.map(|p| remote(&self.schema, &p)))
    }
}

#[async_trait]
impl ResourceKind for InstancePool {
    fn type_name(&self) -> &'static str {
        "databricks_instance_pool"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The service's limits, and the provider's conflict of the three clouds' attributes.
    fn check(&self, config: &Object) -> Vec<Finding> {
        let num = |k: &str| config.get(k).and_then(Value::as_f64);
        let mut out = Vec::new();
        if let Some(name) = config.get("instance_pool_name").and_then(Value::as_str) {
            let len = name.chars().count();
            if len == 0 || len >= 100 {
                out.push(Finding::error(
                    &["instance_pool_name"],
                    format!("an instance pool's name is non-empty and shorter than 100 characters; this one has {len}"),
                ));
            }
        }
        if let Some(m) = num("idle_instance_autotermination_minutes")
            && !(0.0..=MAX_IDLE_MINUTES).contains(&m)
        {
            out.push(Finding::error(
                &["idle_instance_autotermination_minutes"],
                format!("idle_instance_autotermination_minutes is between 0 and 10000, not {m}"),
            ));
        }
        if let Some(m) = num("min_idle_instances")
            && m < 0.0
        {
            out.push(Finding::error(
                &["min_idle_instances"],
                format!("min_idle_instances is not negative, not {m}"),
            ));
        }
        if let Some(m) = num("max_capacity")
            && m <= 0.0
        {
            out.push(Finding::error(
                &["max_capacity"],
                format!("max_capacity is positive (leave it out for no limit), not {m}"),
            ));
        }
        if let Some(Value::Object(t)) = config.get("custom_tags")
            && t.len() > MAX_TAGS
        {
            out.push(Finding::error(
                &["custom_tags"],
                format!(
                    "an instance pool has at most {MAX_TAGS} custom tags, not {}",
                    t.len()
                ),
            ));
        }
        if let Some(Value::List(v)) = config.get("preloaded_spark_versions")
            && v.len() > 1
        {
            out.push(Finding::error(
                &["preloaded_spark_versions"],
                format!(
                    "a pool preloads at most one runtime version, not {}",
                    v.len()
                ),
            ));
        }
        let clouds: Vec<&str> = ["aws_attributes", "azure_attributes", "gcp_attributes"]
            .into_iter()
            .filter(|k| {
                config
                    .get(*k)
                    .is_some_and(|v| !v.is_null() && v.as_list().is_none_or(|l| !l.is_empty()))
            })
            .collect();
        if clouds.len() > 1 {
            out.push(Finding::error(
                &[clouds[1]],
                format!("set at most one of aws_attributes, azure_attributes, gcp_attributes; this sets {}", clouds.join(" and ")),
            ));
        }
        out
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let answer = client
            .post(
                &format!("{BASE}/create"),
                &create_body(&self.schema, config),
            )
            .await
            .map_err(err)?;
        let id = created_id(&answer, "instance_pool_id", "instance pool")?;
        read_back(self.get(&id).await?, "instance pool", &id)
    }

    async fn read(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        self.get(id).await
    }

    async fn update(
        &self,
        _: &OpContext,
        id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        client
            .idempotent()
            .post(
                &format!("{BASE}/edit"),
                &edit_body(&self.schema, id, config),
            )
            .await
            .map_err(err)?;
        self.get(id)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("instance pool {id} no longer exists")))
    }

    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        gone_ok(
            client
                .idempotent()
                .post(
                    &format!("{BASE}/delete"),
                    &json!({ "instance_pool_id": id }),
                )
                .await,
        )
    }

    /// Names are unique in a workspace: the name finds the pool.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, "instance_pool_name").map(str::to_string)
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let path = format!("{BASE}/list");
        let found = listed_by(&client, &path, "instance_pools", "instance_pool_name", key).await?;
        Ok(found.map(|p| remote(&self.schema, &p)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind() -> InstancePool {
        InstancePool::new(Arc::new(Shared::default()))
    }

    fn config(v: Json) -> Object {
        super::super::decoded(kind().schema(), v)
    }

    #[test]
    fn a_create_sends_the_pool_and_an_edit_what_the_edit_api_takes() {
        let k = kind();
        let c = config(json!({
            "instance_pool_name": "p", "node_type_id": "i3.xlarge",
            "idle_instance_autotermination_minutes": 10,
            "aws_attributes": {"availability": "SPOT"},
            "custom_tags": {"team": "a"},
        }));
        let b = create_body(k.schema(), &c);
        assert_eq!(b["enable_elastic_disk"], true);
        assert_eq!(b["aws_attributes"], json!({"availability": "SPOT"}));
        let e = edit_body(k.schema(), "ID", &c);
        assert_eq!(
            e,
            json!({"instance_pool_id": "ID", "instance_pool_name": "p", "node_type_id": "i3.xlarge",
                   "idle_instance_autotermination_minutes": 10, "custom_tags": {"team": "a"}})
        );
    }

    #[test]
    fn checks_follow_the_service() {
        let k = kind();
        let msgs = |v: Json| -> Vec<String> {
            k.check(&config(v)).into_iter().map(|f| f.message).collect()
        };
        let base = json!({"instance_pool_name": "p", "node_type_id": "i3.xlarge", "idle_instance_autotermination_minutes": 10});
        assert!(msgs(base.clone()).is_empty());
        let mut two = base.clone();
        two["aws_attributes"] = json!({"availability": "SPOT"});
        two["gcp_attributes"] = json!({"gcp_availability": "ON_DEMAND_GCP"});
        assert!(msgs(two).iter().any(|m| m.contains("at most one of")));
        let mut idle = base.clone();
        idle["idle_instance_autotermination_minutes"] = json!(10001);
        assert!(msgs(idle).iter().any(|m| m.contains("between 0 and 10000")));
        let mut versions = base;
        versions["preloaded_spark_versions"] = json!(["a", "b"]);
        assert!(
            msgs(versions)
                .iter()
                .any(|m| m.contains("at most one runtime"))
        );
    }
}
