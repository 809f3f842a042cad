//! `data "databricks_node_type"`: the smallest node type of the workspace
//! (`GET /api/2.1/clusters/list-node-types`) with what a cluster needs, chosen the way the
//! Terraform provider chooses: node types sorted by deprecation, cores, memory, local disks
//! and GPUs, those not available in the region skipped, the first that meets every
//! requirement taken. GPU node types are taken only when GPUs are asked for, Graviton ones
//! only when `graviton` is set, fleet ones only when `fleet` is.

use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct NodeType {
    schema: Schema,
    shared: Arc<Shared>,
}

impl NodeType {
    pub fn new(shared: Arc<Shared>) -> Self {
        let number = |name: &'static str, d: &'static str| {
            Attribute::optional(name, AttrType::Number).describe(d)
        };
        let flag = |name: &'static str, d: &'static str| {
            Attribute::optional(name, AttrType::Bool).describe(d)
        };
        let schema = Schema::new()
            .describe("The smallest node type of the workspace with what a cluster needs.")
            .attr(number("min_memory_gb", "At least this much memory, in GB."))
            .attr(number("gb_per_core", "At least this much memory per core, in GB."))
            .attr(number("min_cores", "At least this many cores."))
            .attr(number("min_gpus", "At least this many GPUs (GPU node types are taken only when this is set)."))
            .attr(flag("local_disk", "With a local disk."))
            .attr(number("local_disk_min_size", "With local disks of at least this many GB in all."))
            .attr(
                Attribute::optional("category", AttrType::String)
                    .describe("The category, as the service names it (General Purpose, Storage Optimized, …), in any case."),
            )
            .attr(flag("photon_worker_capable", "Able to run Photon workers."))
            .attr(flag("photon_driver_capable", "Able to run a Photon driver."))
            .attr(flag("graviton", "An Arm (Graviton) node type; without it, none is taken."))
            .attr(flag("is_io_cache_enabled", "With the disk cache enabled."))
            .attr(flag("support_port_forwarding", "Supporting port forwarding."))
            .attr(flag("fleet", "A fleet node type (md-fleet.xlarge, …); without it, none is taken."))
            .attr(Attribute::computed("id", AttrType::String).describe("The node type id: a cluster's node_type_id."));
        NodeType { schema, shared }
    }
}

fn int(j: &Json, path: &[&str]) -> i64 {
    let mut v = j;
    for p in path {
        match v.get(p) {
            Some(x) => v = x,
            None => return 0,
        }
    }
    v.as_i64().unwrap_or(0)
}

fn flag(j: &Json, k: &str) -> bool {
    j.get(k).and_then(Json::as_bool).unwrap_or(false)
}

/// The order the Terraform provider sorts node types in: smallest first.
fn sort_key(n: &Json) -> (bool, i64, i64, i64, i64, i64, i64, i64, String) {
    let disk = |k: &str| int(n, &["node_instance_type", k]);
    (
        flag(n, "is_deprecated"),
        int(n, &["num_cores"]),
        int(n, &["memory_mb"]),
        disk("local_disks"),
        disk("local_disk_size_gb"),
        disk("local_nvme_disks"),
        disk("local_nvme_disk_size_gb"),
        int(n, &["num_gpus"]),
        n.get("instance_type_id")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string(),
    )
}

/// Whether a node type meets the request.
fn meets(n: &Json, config: &Object) -> bool {
    let want = |k: &str| config.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let asked = |k: &str| config.get(k).and_then(Value::as_bool).unwrap_or(false);
    let id = n.get("node_type_id").and_then(Json::as_str).unwrap_or("");
    let unavailable = n
        .get("node_info")
        .and_then(|i| i.get("status"))
        .and_then(Json::as_array)
        .is_some_and(|s| {
            s.iter().any(|x| {
                matches!(
                    x.as_str(),
                    Some("NotAvailableInRegion" | "NotEnabledOnSubscription")
                )
            })
        });
    let gb = (int(n, &["memory_mb"]) / 1024) as f64;
    let cores = int(n, &["num_cores"]).max(1) as f64;
    let gpus = int(n, &["num_gpus"]) as f64;
    let disk = |k: &str| int(n, &["node_instance_type", k]);
    let disks = disk("local_disks") + disk("local_nvme_disks");
    let disk_gb = (disk("local_disk_size_gb") + disk("local_nvme_disk_size_gb")) as f64;
    let category = config.get("category").and_then(Value::as_str);
    !unavailable
        && asked("fleet") == id.contains("-fleet.")
        && gb >= want("min_memory_gb")
        && (want("gb_per_core") <= 0.0 || (gb / cores).floor() >= want("gb_per_core"))
        && cores >= want("min_cores")
        && (if want("min_gpus") > 0.0 {
            gpus >= want("min_gpus")
        } else {
            gpus == 0.0
        })
        && (!(asked("local_disk") || want("local_disk_min_size") > 0.0) || disks >= 1)
        && disk_gb >= want("local_disk_min_size")
        && category.is_none_or(|c| {
            n.get("category")
                .and_then(Json::as_str)
                .is_some_and(|x| x.eq_ignore_ascii_case(c))
        })
        && (!asked("is_io_cache_enabled") || flag(n, "is_io_cache_enabled"))
        && (!asked("support_port_forwarding") || flag(n, "support_port_forwarding"))
        && (!asked("photon_driver_capable") || flag(n, "photon_driver_capable"))
        && (!asked("photon_worker_capable") || flag(n, "photon_worker_capable"))
        && flag(n, "is_graviton") == asked("graviton")
}

fn choose(config: &Object, mut listed: Vec<Json>) -> ProviderResult<String> {
    if listed.is_empty() {
        return Err(ProviderError::not_found(
            "the workspace lists no node types",
        ));
    }
    listed.sort_by_key(sort_key);
    listed
        .iter()
        .find(|n| meets(n, config))
        .and_then(|n| n.get("node_type_id").and_then(Json::as_str))
        .map(str::to_string)
        .ok_or_else(|| {
            ProviderError::not_found(format!(
                "no node type of this workspace meets the request; it has {}",
                listed
                    .iter()
                    .filter_map(|n| n.get("node_type_id").and_then(Json::as_str))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

#[async_trait]
impl DataSource for NodeType {
    fn type_name(&self) -> &'static str {
        "databricks_node_type"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let types = super::listed(
            &self.shared,
            "/api/2.1/clusters/list-node-types",
            "node_types",
        )
        .await?;
        Ok(super::chosen(config, choose(config, types)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(id: &str, cores: i64, mb: i64, nvme: i64) -> Json {
        json!({"node_type_id": id, "instance_type_id": id, "num_cores": cores, "memory_mb": mb,
               "num_gpus": 0, "category": "General Purpose",
               "node_instance_type": {"local_nvme_disks": nvme, "local_nvme_disk_size_gb": nvme * 100}})
    }

    fn req(pairs: &[(&str, Value)]) -> Object {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn the_smallest_that_meets_the_request_is_chosen() {
        let mut gpu = node("g4dn.xlarge", 4, 16384, 1);
        gpu["num_gpus"] = json!(1);
        let mut old = node("m4.large", 1, 4096, 0);
        old["is_deprecated"] = json!(true);
        let mut arm = node("m6gd.large", 2, 8192, 1);
        arm["is_graviton"] = json!(true);
        let mut away = node("a1.small", 1, 2048, 1);
        away["node_info"] = json!({"status": ["NotAvailableInRegion"]});
        let all = vec![
            node("i3.xlarge", 4, 31232, 1),
            gpu,
            old,
            arm,
            away,
            node("m5d.large", 2, 8192, 1),
            node("m5.large", 2, 8192, 0),
            node("md-fleet.xlarge", 4, 16384, 1),
        ];
        let pick = |pairs: &[(&str, Value)]| choose(&req(pairs), all.clone()).unwrap();
        assert_eq!(pick(&[]), "m5.large");
        assert_eq!(pick(&[("local_disk", Value::Bool(true))]), "m5d.large");
        assert_eq!(pick(&[("min_memory_gb", Value::from(16i64))]), "i3.xlarge");
        assert_eq!(pick(&[("min_gpus", Value::from(1i64))]), "g4dn.xlarge");
        assert_eq!(pick(&[("graviton", Value::Bool(true))]), "m6gd.large");
        assert_eq!(pick(&[("fleet", Value::Bool(true))]), "md-fleet.xlarge");
        assert_eq!(pick(&[("min_cores", Value::from(3i64))]), "i3.xlarge");
        let e = choose(&req(&[("min_cores", Value::from(64i64))]), all.clone()).unwrap_err();
        assert!(e.message.contains("no node type"), "{}", e.message);
    }
}
