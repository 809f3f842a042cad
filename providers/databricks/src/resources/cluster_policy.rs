//! `databricks_cluster_policy`: a cluster policy, the rules (a JSON definition in the Policy
//! Definition Language) clusters made with it follow. The service assigns its id
//! (`policy_id`, also the resource's id); its name is unique in the workspace, which finds a
//! policy again after a lost create answer.
//!
//! As in the Terraform provider (terraform-provider-databricks
//! policies/resource_cluster_policy.go): an edit sends the whole policy; `definition`
//! conflicts with `policy_family_id` (and its overrides), :34-41, and is Computed (a policy
//! from a family reads its family's); the service answers the definition in its own layout,
//! so it is compared as a JSON document, not as text (the provider suppresses whitespace
//! diffs, :37, :40).

use super::wire::{self, Renames};
use super::{created_id, read_back};
use super::{err, gone_ok, listed_by, none_if_missing, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, Finding, Normalize, OpContext, ProviderError, ProviderResult,
    Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

const BASE: &str = "/api/2.0/policies/clusters";
const RENAMES: Renames = &[];
/// The library kinds a `libraries` block names exactly one of.
const LIBRARY_KINDS: &[&str] = &["jar", "egg", "whl", "requirements", "pypi", "maven", "cran"];

pub struct ClusterPolicy {
    schema: Schema,
    shared: Arc<Shared>,
}

fn s() -> AttrType {
    AttrType::String
}

fn libraries() -> BlockType {
    BlockType::list(
        "libraries",
        Schema::new()
            .attr(Attribute::optional("jar", s()))
            .attr(Attribute::optional("egg", s()))
            .attr(Attribute::optional("whl", s()))
            .attr(Attribute::optional("requirements", s()))
            .block(BlockType::single(
                "pypi",
                Schema::new()
                    .attr(Attribute::required("package", s()))
                    .attr(Attribute::optional("repo", s())),
            ))
            .block(BlockType::single(
                "maven",
                Schema::new()
                    .attr(Attribute::required("coordinates", s()))
                    .attr(Attribute::optional("repo", s()))
                    .attr(Attribute::optional(
                        "exclusions",
                        AttrType::List(Box::new(s())),
                    )),
            ))
            .block(BlockType::single(
                "cran",
                Schema::new()
                    .attr(Attribute::required("package", s()))
                    .attr(Attribute::optional("repo", s())),
            )),
    )
    .describe("A library installed on every cluster that uses the policy; each names one of jar, egg, whl, requirements, pypi, maven, cran.")
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("A cluster policy. Set definition or policy_family_id (with policy_family_definition_overrides), not both; the definition is compared as a JSON document, as the service answers it in its own layout.")
        .whole_writes()
        .attr(Attribute::required("name", s()).describe("Unique in the workspace, 1 to 100 characters."))
        .attr(
            Attribute::optional_computed("definition", s())
                .normalize(Normalize::Json)
                .describe("The policy's rules: a JSON object in the Policy Definition Language (jsonencode works). Cannot be used with policy_family_id; left out, the service's (an empty one, or the family's)."),
        )
        .attr(Attribute::optional("description", s()))
        .attr(
            Attribute::optional("max_clusters_per_user", AttrType::Number)
                .describe("At most this many clusters per user; greater than zero. No limit when left out."),
        )
        .attr(
            Attribute::optional("policy_family_id", s())
                .describe("The policy family whose definition the policy inherits. Cannot be used with definition. The local workspace offers no policy families."),
        )
        .attr(
            Attribute::optional("policy_family_definition_overrides", s())
                .normalize(Normalize::Json)
                .describe("Rules merged into the family's definition (a JSON object); needs policy_family_id."),
        )
        .block(libraries())
        .attr(Attribute::computed("policy_id", s()))
        .attr(Attribute::computed("id", s()).describe("The policy_id."))
}

impl ClusterPolicy {
    pub fn new(shared: Arc<Shared>) -> Self {
        ClusterPolicy {
            schema: schema(),
            shared,
        }
    }
}

fn set(config: &Object, k: &str) -> bool {
    config
        .get(k)
        .is_some_and(|v| !v.is_null() && !matches!(v, Value::String(s) if s.is_empty()))
}

/// The request body of a create or an edit: the whole configuration, without what the
/// service computes.
fn body(schema: &Schema, config: &Object) -> Json {
    let mut b = wire::to_wire(schema, config, RENAMES, "");
    if let Json::Object(m) = &mut b {
        m.remove("policy_id");
        m.remove("id");
        // A policy from a family takes the family's definition: the one read back is not sent.
        if set(config, "policy_family_id") {
            m.remove("definition");
        }
    }
    b
}

fn remote(schema: &Schema, p: &Json) -> Remote {
    let mut attrs = wire::from_wire(schema, p, RENAMES, "");
    let id = p
        .get("policy_id")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    attrs.insert("id".into(), Value::from(id.as_str()));
    Remote { id, attrs }
}

/// Whether a JSON document held as a string is a JSON object: the finding if not.
fn json_object_finding(config: &Object, k: &str) -> Option<Finding> {
    let text = config.get(k).and_then(Value::as_str)?;
    match serde_json::from_str::<Json>(text) {
        Ok(Json::Object(_)) => None,
        Ok(_) => Some(Finding::error(
            &[k],
            format!(
                "{k} is a JSON object (the Policy Definition Language), not another JSON value"
            ),
        )),
        Err(e) => Some(
            Finding::error(&[k], format!("{k} is not valid JSON: {e}"))
                .hint("write it with jsonencode({ ... })"),
        ),
    }
}

impl ClusterPolicy {
    async fn get(&self, id: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let got = none_if_missing(
            client
                .get(&format!("{BASE}/get"), &[("policy_id", id.to_string())])
                .await,
        )?;
        Ok(got.map(|p| remote(&self.schema, &p)))
    }
}

#[async_trait]
impl ResourceKind for ClusterPolicy {
    fn type_name(&self) -> &'static str {
        "databricks_cluster_policy"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The Terraform provider's conflicts (definition with policy_family_id and its
    /// overrides; overrides need a family) and the service's limits.
    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = Vec::new();
        if set(config, "definition") && set(config, "policy_family_id") {
            out.push(
                Finding::error(
                    &["policy_family_id"],
                    "set definition or policy_family_id, not both: a policy from a family takes its family's definition",
                )
                .hint("customise a family's definition with policy_family_definition_overrides"),
            );
        }
        if set(config, "definition") && set(config, "policy_family_definition_overrides") {
            out.push(Finding::error(
                &["policy_family_definition_overrides"],
                "policy_family_definition_overrides cannot be used with definition",
            ));
        }
        if set(config, "policy_family_definition_overrides") && !set(config, "policy_family_id") {
            out.push(Finding::error(
                &["policy_family_definition_overrides"],
                "policy_family_definition_overrides needs policy_family_id",
            ));
        }
        out.extend(json_object_finding(config, "definition"));
        out.extend(json_object_finding(
            config,
            "policy_family_definition_overrides",
        ));
        if let Some(name) = config.get("name").and_then(Value::as_str) {
            let n = name.chars().count();
            if n == 0 || n > 100 {
                out.push(Finding::error(
                    &["name"],
                    format!("a cluster policy's name is 1 to 100 characters; this one has {n}"),
                ));
            }
        }
        if let Some(n) = config.get("max_clusters_per_user").and_then(Value::as_f64)
            && n <= 0.0
        {
            out.push(Finding::error(
                &["max_clusters_per_user"],
                format!("max_clusters_per_user is greater than zero (leave it out for no limit), not {n}"),
            ));
        }
        if let Some(Value::List(libs)) = config.get("libraries") {
            for l in libs {
                let Value::Object(o) = l else { continue };
                let named = LIBRARY_KINDS.iter().filter(|k| set(o, k)).count();
                if named != 1 && o.values().all(Value::is_wholly_known) {
                    out.push(Finding::error(
                        &["libraries"],
                        format!(
                            "a libraries block names exactly one of {}; this one names {named}",
                            LIBRARY_KINDS.join(", ")
                        ),
                    ));
                }
            }
        }
        out
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let answer = client
            .post(&format!("{BASE}/create"), &body(&self.schema, config))
            .await
            .map_err(err)?;
        let id = created_id(&answer, "policy_id", "cluster policy")?;
        read_back(self.get(&id).await?, "cluster policy", &id)
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
        let mut b = body(&self.schema, config);
        b["policy_id"] = json!(id);
        client
            .idempotent()
            .post(&format!("{BASE}/edit"), &b)
            .await
            .map_err(err)?;
        self.get(id).await?.ok_or_else(|| {
            ProviderError::not_found(format!("cluster policy {id} no longer exists"))
        })
    }

    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        gone_ok(
            client
                .idempotent()
                .post(&format!("{BASE}/delete"), &json!({ "policy_id": id }))
                .await,
        )
    }

    /// Names are unique in a workspace: the name finds the policy.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, "name").map(str::to_string)
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let found = listed_by(&client, &format!("{BASE}/list"), "policies", "name", key).await?;
        Ok(found.map(|p| remote(&self.schema, &p)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind() -> ClusterPolicy {
        ClusterPolicy::new(Arc::new(Shared::default()))
    }

    fn messages(config: Json) -> Vec<String> {
        super::super::check_messages(&kind(), config)
    }

    #[test]
    fn checks_follow_the_provider_and_the_service() {
        assert!(
            messages(json!({"name": "p", "definition": "{\"a\": {\"type\": \"unlimited\"}}"}))
                .is_empty()
        );
        assert!(messages(json!({"name": "p", "policy_family_id": "f", "policy_family_definition_overrides": "{}"})).is_empty());
        let both = messages(json!({"name": "p", "definition": "{}", "policy_family_id": "f"}));
        assert!(both.iter().any(|m| m.contains("not both")), "{both:?}");
        let orphan = messages(json!({"name": "p", "policy_family_definition_overrides": "{}"}));
        assert!(
            orphan.iter().any(|m| m.contains("needs policy_family_id")),
            "{orphan:?}"
        );
        let bad = messages(json!({"name": "p", "definition": "{nope"}));
        assert!(bad.iter().any(|m| m.contains("not valid JSON")), "{bad:?}");
        let list = messages(json!({"name": "p", "definition": "[]"}));
        assert!(list.iter().any(|m| m.contains("JSON object")), "{list:?}");
        let zero = messages(json!({"name": "p", "max_clusters_per_user": 0}));
        assert!(
            zero.iter().any(|m| m.contains("greater than zero")),
            "{zero:?}"
        );
        let two = messages(json!({"name": "p", "libraries": [{"jar": "a", "whl": "b"}]}));
        assert!(two.iter().any(|m| m.contains("exactly one")), "{two:?}");
    }

    #[test]
    fn the_body_leaves_out_what_the_service_computes_and_a_familys_definition() {
        let k = kind();
        let c = super::super::decoded(
            k.schema(),
            json!({"name": "p", "policy_family_id": "f", "definition": "{}", "policy_id": "X", "id": "X"}),
        );
        assert_eq!(
            body(k.schema(), &c),
            json!({"name": "p", "policy_family_id": "f"})
        );
        let r = remote(
            k.schema(),
            &json!({"policy_id": "ABC", "name": "p", "definition": "{\n}"}),
        );
        assert_eq!(r.id, "ABC");
        assert_eq!(r.attrs.get("id"), Some(&Value::from("ABC")));
        assert_eq!(r.attrs.get("policy_id"), Some(&Value::from("ABC")));
    }
}
