//! What the workspace offers clusters: its Databricks Runtime versions
//! (`GET /api/2.1/clusters/spark-versions`) and its node types
//! (`GET /api/2.1/clusters/list-node-types`), as an AWS workspace lists them. The lists
//! are fixed: a choice made from them (the latest LTS runtime, the smallest node type with
//! a local disk) comes out the same on every run.

use crate::app::App;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

/// `(key, name)` of each runtime, as the service names them: ML, GPU and Photon
/// runtimes carry `-ml-`, `-gpu-`, `-photon-` in their keys, Arm ones `-aarch64-`, and
/// `LTS` or `Beta` in their names.
const RUNTIMES: &[(&str, &str)] = &[
    (
        "18.0.x-scala2.13",
        "18.0 Beta (includes Apache Spark 4.1.0, Scala 2.13)",
    ),
    (
        "17.3.x-scala2.13",
        "17.3 LTS (includes Apache Spark 4.0.0, Scala 2.13)",
    ),
    (
        "17.3.x-cpu-ml-scala2.13",
        "17.3 LTS ML (includes Apache Spark 4.0.0, Scala 2.13)",
    ),
    (
        "17.2.x-scala2.13",
        "17.2 (includes Apache Spark 4.0.0, Scala 2.13)",
    ),
    (
        "16.4.x-scala2.12",
        "16.4 LTS (includes Apache Spark 3.5.2, Scala 2.12)",
    ),
    (
        "16.4.x-scala2.13",
        "16.4 LTS (includes Apache Spark 3.5.2, Scala 2.13)",
    ),
    (
        "16.4.x-cpu-ml-scala2.12",
        "16.4 LTS ML (includes Apache Spark 3.5.2, Scala 2.12)",
    ),
    (
        "16.4.x-gpu-ml-scala2.12",
        "16.4 LTS ML (includes Apache Spark 3.5.2, GPU, Scala 2.12)",
    ),
    (
        "16.4.x-aarch64-scala2.12",
        "16.4 LTS aarch64 (includes Apache Spark 3.5.2, Scala 2.12)",
    ),
    (
        "16.2.x-scala2.12",
        "16.2 (includes Apache Spark 3.5.2, Scala 2.12)",
    ),
    (
        "15.4.x-scala2.12",
        "15.4 LTS (includes Apache Spark 3.5.0, Scala 2.12)",
    ),
    (
        "15.4.x-photon-scala2.12",
        "15.4 LTS Photon (includes Apache Spark 3.5.0, Scala 2.12)",
    ),
    (
        "15.4.x-cpu-ml-scala2.12",
        "15.4 LTS ML (includes Apache Spark 3.5.0, Scala 2.12)",
    ),
    (
        "14.3.x-scala2.12",
        "14.3 LTS (includes Apache Spark 3.5.0, Scala 2.12)",
    ),
    (
        "13.3.x-scala2.12",
        "13.3 LTS (includes Apache Spark 3.4.1, Scala 2.12)",
    ),
    (
        "apache-spark-3.5.x-scala2.12",
        "Light 3.5 (includes Apache Spark 3.5, Scala 2.12)",
    ),
];

/// One node type, as the list describes it.
#[derive(Clone, Copy)]
struct Node {
    id: &'static str,
    category: &'static str,
    cores: u32,
    memory_mb: u32,
    gpus: u32,
    /// Local NVMe SSDs (what AWS's `d` and `i` instances have) and their size in all.
    nvme_disks: u32,
    nvme_gb: u32,
    graviton: bool,
    io_cache: bool,
    deprecated: bool,
}

const fn node(id: &'static str, category: &'static str, cores: u32, memory_mb: u32) -> Node {
    Node {
        id,
        category,
        cores,
        memory_mb,
        gpus: 0,
        nvme_disks: 0,
        nvme_gb: 0,
        graviton: false,
        io_cache: false,
        deprecated: false,
    }
}

impl Node {
    const fn disk(mut self, gb: u32) -> Node {
        self.nvme_disks = 1;
        self.nvme_gb = gb;
        self
    }
    const fn gpus(mut self, n: u32) -> Node {
        self.gpus = n;
        self
    }
    const fn graviton(mut self) -> Node {
        self.graviton = true;
        self
    }
    const fn io_cache(mut self) -> Node {
        self.io_cache = true;
        self
    }
    const fn deprecated(mut self) -> Node {
        self.deprecated = true;
        self
    }
}

const NODE_TYPES: &[Node] = &[
    node("m5.large", "General Purpose", 2, 8192),
    node("m5d.large", "General Purpose", 2, 8192).disk(75),
    node("m5d.xlarge", "General Purpose", 4, 16384).disk(150),
    node("m4.large", "General Purpose", 2, 8192).deprecated(),
    node("m6gd.large", "General Purpose", 2, 8192)
        .disk(118)
        .graviton(),
    node("c5d.xlarge", "Compute Optimized", 4, 8192).disk(100),
    node("r5d.large", "Memory Optimized", 2, 16384).disk(75),
    node("i3.xlarge", "Storage Optimized", 4, 31232)
        .disk(950)
        .io_cache(),
    node("i3.2xlarge", "Storage Optimized", 8, 62464)
        .disk(1900)
        .io_cache(),
    node("g4dn.xlarge", "GPU Accelerated", 4, 16384)
        .disk(125)
        .gpus(1),
    // The larger GPU node the provider's docs ask for (16 cores, a GPU, a local disk).
    node("g4dn.4xlarge", "GPU Accelerated", 16, 65536)
        .disk(225)
        .gpus(1),
    node("md-fleet.xlarge", "General Purpose", 4, 16384).disk(150),
];

/// Whether the workspace offers a node type of this id (what an instance pool's
/// `node_type_id` must name).
pub fn is_node_type(id: &str) -> bool {
    NODE_TYPES.iter().any(|n| n.id == id)
}

/// Whether the workspace offers a Databricks Runtime of this key (what an instance pool
/// preloads).
pub fn is_runtime(key: &str) -> bool {
    RUNTIMES.iter().any(|(k, _)| *k == key)
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.1/clusters/spark-versions", get(spark_versions))
        .route("/api/2.0/clusters/spark-versions", get(spark_versions))
        .route("/api/2.1/clusters/list-node-types", get(node_types))
        .route("/api/2.0/clusters/list-node-types", get(node_types))
}

async fn spark_versions() -> Json<Value> {
    let versions: Vec<Value> = RUNTIMES
        .iter()
        .map(|(key, name)| json!({"key": key, "name": name}))
        .collect();
    Json(json!({ "versions": versions }))
}

async fn node_types() -> Json<Value> {
    let types: Vec<Value> = NODE_TYPES
        .iter()
        .map(|n| {
            let photon = !n.graviton && n.gpus == 0;
            json!({
                "node_type_id": n.id,
                "instance_type_id": n.id,
                "category": n.category,
                "description": n.id,
                "num_cores": n.cores,
                "memory_mb": n.memory_mb,
                "num_gpus": n.gpus,
                "is_deprecated": n.deprecated,
                "is_hidden": false,
                "is_graviton": n.graviton,
                "is_io_cache_enabled": n.io_cache,
                "support_port_forwarding": true,
                "support_ebs_volumes": true,
                "photon_worker_capable": photon,
                "photon_driver_capable": photon,
                "node_instance_type": {
                    "instance_type_id": n.id,
                    "local_disks": 0,
                    "local_disk_size_gb": 0,
                    "local_nvme_disks": n.nvme_disks,
                    "local_nvme_disk_size_gb": n.nvme_gb,
                },
            })
        })
        .collect();
    Json(json!({ "node_types": types }))
}
