//! `data "databricks_spark_version"`: the Databricks Runtime version a cluster should run,
//! chosen from the workspace's list (`GET /api/2.1/clusters/spark-versions`) the way the
//! Terraform provider chooses: the runtimes of the requested Scala version whose key and
//! name match every flag (ML, GPU, Genomics, Photon, Arm, Beta, LTS, an Apache Spark
//! version), Light runtimes never, and of those the newest when `latest` (the default),
//! else the only one.

use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct SparkVersion {
    schema: Schema,
    shared: Arc<Shared>,
}

/// The flags that must match a runtime's key, each with the part of the key it means.
const KEY_FLAGS: &[(&str, &str)] = &[
    ("ml", "-ml-"),
    ("genomics", "-hls-"),
    ("gpu", "-gpu-"),
    ("photon", "-photon-"),
    ("graviton", "-aarch64-"),
];

impl SparkVersion {
    pub fn new(shared: Arc<Shared>) -> Self {
        let flag = |name: &'static str, d: &'static str| {
            Attribute::optional(name, AttrType::Bool).describe(d)
        };
        let schema = Schema::new()
            .describe("A Databricks Runtime version of the workspace, by what it must be (the newest LTS, an ML runtime, …).")
            .attr(flag("latest", "The newest of those that match (default true); false: exactly one must match."))
            .attr(flag("long_term_support", "An LTS (or extended support) runtime."))
            .attr(flag("beta", "A Beta runtime."))
            .attr(flag("ml", "A Machine Learning runtime."))
            .attr(flag("genomics", "A Genomics runtime."))
            .attr(flag("gpu", "A GPU runtime."))
            .attr(flag("photon", "A Photon runtime (deprecated by the service: set runtime_engine = \"PHOTON\" on the cluster)."))
            .attr(flag("graviton", "An Arm (Graviton) runtime."))
            .attr(
                Attribute::optional("scala", AttrType::String)
                    .describe("The Scala version (default 2.12)."),
            )
            .attr(
                Attribute::optional("spark_version", AttrType::String)
                    .describe("The Apache Spark version it includes, or its prefix (3.5)."),
            )
            .attr(Attribute::computed("id", AttrType::String).describe("The runtime's key, e.g. 16.4.x-scala2.12: a cluster's spark_version."));
        SparkVersion { schema, shared }
    }
}

/// A runtime's major and minor version (`16.4.x-…` → (16, 4)); runtimes without one sort last.
fn version_of(key: &str) -> (u32, u32) {
    let mut parts = key.split(['.', '-']);
    let major = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor)
}

/// The runtime a request chooses from `(key, name)` pairs.
fn choose(config: &Object, versions: &[(String, String)]) -> ProviderResult<String> {
    let flag = |k: &str| config.get(k).and_then(Value::as_bool).unwrap_or(false);
    let latest = config
        .get("latest")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if flag("beta") && flag("long_term_support") {
        return Err(ProviderError::invalid(
            "beta and long_term_support both set: no runtime is both",
        ));
    }
    let scala = config
        .get("scala")
        .and_then(Value::as_str)
        .unwrap_or("2.12");
    let spark = config.get("spark_version").and_then(Value::as_str);
    let mut matching: Vec<&String> = versions
        .iter()
        .filter(|(key, name)| {
            key.contains(&format!("-scala{scala}"))
                && !key.contains("apache-spark-")
                && KEY_FLAGS
                    .iter()
                    .all(|(f, part)| key.contains(part) == flag(f))
                && name.contains("Beta") == flag("beta")
                && (!flag("long_term_support") || name.contains("LTS") || key.contains("-esr-"))
                && spark.is_none_or(|s| name.contains(&format!("Apache Spark {s}")))
        })
        .map(|(key, _)| key)
        .collect();
    matching.sort_by_key(|k| std::cmp::Reverse(version_of(k)));
    match matching.as_slice() {
        [] => Err(ProviderError::not_found(format!(
            "no Databricks Runtime of this workspace matches (Scala {scala}{}); it has {}",
            spark
                .map(|s| format!(", Apache Spark {s}"))
                .unwrap_or_default(),
            versions
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        [one] => Ok(one.to_string()),
        [first, ..] if latest => Ok(first.to_string()),
        many => Err(ProviderError::invalid(format!(
            "{} runtimes match and latest = false asks for exactly one: {}",
            many.len(),
            many.iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[async_trait]
impl DataSource for SparkVersion {
    fn type_name(&self) -> &'static str {
        "databricks_spark_version"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let versions: Vec<(String, String)> =
            super::listed(&self.shared, "/api/2.1/clusters/spark-versions", "versions")
                .await?
                .iter()
                .filter_map(|v| {
                    Some((
                        v.get("key")?.as_str()?.to_string(),
                        v.get("name")
                            .and_then(Json::as_str)
                            .unwrap_or("")
                            .to_string(),
                    ))
                })
                .collect();
        Ok(super::chosen(config, choose(config, &versions)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions() -> Vec<(String, String)> {
        [
            (
                "17.3.x-scala2.13",
                "17.3 LTS (includes Apache Spark 4.0.0, Scala 2.13)",
            ),
            (
                "16.4.x-scala2.12",
                "16.4 LTS (includes Apache Spark 3.5.2, Scala 2.12)",
            ),
            (
                "16.4.x-cpu-ml-scala2.12",
                "16.4 LTS ML (includes Apache Spark 3.5.2, Scala 2.12)",
            ),
            (
                "16.2.x-scala2.12",
                "16.2 (includes Apache Spark 3.5.2, Scala 2.12)",
            ),
            (
                "9.1.x-scala2.12",
                "9.1 LTS (includes Apache Spark 3.1.2, Scala 2.12)",
            ),
            (
                "18.0.x-scala2.12",
                "18.0 Beta (includes Apache Spark 4.1.0, Scala 2.12)",
            ),
            ("apache-spark-3.5.x-scala2.12", "Light 3.5"),
        ]
        .iter()
        .map(|(k, n)| (k.to_string(), n.to_string()))
        .collect()
    }

    fn req(pairs: &[(&str, Value)]) -> Object {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn the_newest_matching_runtime_is_chosen() {
        let v = versions();
        // Newest by version, not by string order (16.4 before 9.1), no Beta, no ML.
        assert_eq!(choose(&req(&[]), &v).unwrap(), "16.4.x-scala2.12");
        assert_eq!(
            choose(&req(&[("ml", Value::Bool(true))]), &v).unwrap(),
            "16.4.x-cpu-ml-scala2.12"
        );
        assert_eq!(
            choose(&req(&[("scala", Value::from("2.13"))]), &v).unwrap(),
            "17.3.x-scala2.13"
        );
        assert_eq!(
            choose(&req(&[("beta", Value::Bool(true))]), &v).unwrap(),
            "18.0.x-scala2.12"
        );
        assert_eq!(
            choose(&req(&[("spark_version", Value::from("3.1"))]), &v).unwrap(),
            "9.1.x-scala2.12"
        );
        let lts = req(&[("long_term_support", Value::Bool(true))]);
        assert_eq!(choose(&lts, &v).unwrap(), "16.4.x-scala2.12");
    }

    #[test]
    fn no_match_or_several_without_latest_is_an_error() {
        let v = versions();
        let e = choose(&req(&[("gpu", Value::Bool(true))]), &v).unwrap_err();
        assert!(e.message.contains("no Databricks Runtime"), "{}", e.message);
        let e = choose(&req(&[("latest", Value::Bool(false))]), &v).unwrap_err();
        assert!(e.message.contains("latest = false"), "{}", e.message);
        let both = req(&[
            ("beta", Value::Bool(true)),
            ("long_term_support", Value::Bool(true)),
        ]);
        assert!(choose(&both, &v).is_err());
    }
}
