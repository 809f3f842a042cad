//! `databricks_mlflow_model`: a registered model of the workspace model registry, through
//! the Model Registry API (`/api/2.0/mlflow/registered-models/…`, databricks-sdk-go
//! service/ml/impl.go). Its name is unique in the workspace and is its id, as in the
//! Terraform provider (mlflow/resource_mlflow_model.go: the id is the name, a new name
//! replaces it, `registered_model_id` is the `id` the Databricks variant of the get
//! answers, which `databricks_permissions` takes).
//!
//! The update takes the description alone (registered-models/update); tags are set and
//! deleted one by one (registered-models/set-tag, delete-tag), the ones the configuration
//! added, changed or removed since the last apply. A delete removes the model outright.

use super::mlflow_experiment::{configured_tags, tags_block};
use super::read_back;
use super::{err, given, gone_ok, none_if_missing, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

const BASE: &str = "/api/2.0/mlflow/registered-models";
/// The get that answers the model's `id` (and the caller's permission level).
const GET: &str = "/api/2.0/mlflow/databricks/registered-models/get";

pub struct MlflowModel {
    schema: Schema,
    shared: Arc<Shared>,
}

fn s() -> AttrType {
    AttrType::String
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("A registered model of the workspace model registry (Databricks recommends Models in Unity Catalog instead). Its name is its id: a new name replaces it.")
        .attr(
            Attribute::required("name", s())
                .force_new()
                .describe("Unique in the workspace."),
        )
        .attr(Attribute::optional("description", s()))
        .block(tags_block("A tag of the model."))
        .attr(
            Attribute::computed("registered_model_id", s())
                .describe("The model's id, which databricks_permissions takes."),
        )
        .attr(Attribute::computed("id", s()).describe("The name."))
}

impl MlflowModel {
    pub fn new(shared: Arc<Shared>) -> Self {
        MlflowModel {
            schema: schema(),
            shared,
        }
    }
}

fn create_body(config: &Object) -> Json {
    let mut b = json!({ "name": str_attr(config, "name").unwrap_or_default() });
    if let Some(d) = given(config, "description") {
        b["description"] = json!(d);
    }
    let tags: Vec<Json> = configured_tags(config)
        .into_iter()
        .map(|(k, v)| json!({ "key": k, "value": v }))
        .collect();
    if !tags.is_empty() {
        b["tags"] = Json::Array(tags);
    }
    b
}

/// The resource's attributes from the Databricks get's `registered_model_databricks`.
fn remote(m: &Json) -> Option<Remote> {
    let name = m.get("name").and_then(Json::as_str)?.to_string();
    let mut attrs = Object::default();
    attrs.insert("name".into(), Value::from(name.as_str()));
    attrs.insert(
        "description".into(),
        m.get("description")
            .and_then(Json::as_str)
            .filter(|d| !d.is_empty())
            .map(Value::from)
            .unwrap_or(Value::Null),
    );
    let tags = m
        .get("tags")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let mut o = Object::default();
            o.insert(
                "key".into(),
                Value::from(t.get("key").and_then(Json::as_str)?),
            );
            o.insert(
                "value".into(),
                Value::from(t.get("value").and_then(Json::as_str).unwrap_or_default()),
            );
            Some(Value::object(o))
        })
        .collect();
    attrs.insert("tags".into(), Value::List(tags));
    attrs.insert(
        "registered_model_id".into(),
        m.get("id")
            .and_then(Json::as_str)
            .map(Value::from)
            .unwrap_or(Value::Null),
    );
    attrs.insert("id".into(), Value::from(name.as_str()));
    Some(Remote { id: name, attrs })
}

impl MlflowModel {
    async fn get(&self, name: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let got = none_if_missing(client.get(GET, &[("name", name.to_string())]).await)?;
        Ok(got
            .as_ref()
            .and_then(|g| g.get("registered_model_databricks"))
            .and_then(remote))
    }
}

#[async_trait]
impl ResourceKind for MlflowModel {
    fn type_name(&self) -> &'static str {
        "databricks_mlflow_model"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// MLflow refuses an empty name (databricks/cli libs/testserver/models.go).
    fn check(&self, config: &Object) -> Vec<Finding> {
        match str_attr(config, "name") {
            Some("") => vec![Finding::error(
                &["name"],
                "a registered model's name cannot be empty",
            )],
            _ => Vec::new(),
        }
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let answer = client
            .post(&format!("{BASE}/create"), &create_body(config))
            .await
            .map_err(err)?;
        let name = answer
            .get("registered_model")
            .and_then(|m| m.get("name"))
            .and_then(Json::as_str)
            .or_else(|| str_attr(config, "name"))
            .unwrap_or_default()
            .to_string();
        read_back(self.get(&name).await?, "model", &name)
    }

    async fn read(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        self.get(id).await
    }

    async fn update(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        if given(prior, "description") != given(config, "description") {
            client
                .idempotent()
                .patch(
                    &format!("{BASE}/update"),
                    &json!({ "name": id, "description": given(config, "description").unwrap_or_default() }),
                )
                .await
                .map_err(err)?;
        }
        let before = configured_tags(prior);
        let after = configured_tags(config);
        for (k, v) in &after {
            if !before.iter().any(|(pk, pv)| pk == k && pv == v) {
                client
                    .idempotent()
                    .post(
                        &format!("{BASE}/set-tag"),
                        &json!({ "name": id, "key": k, "value": v }),
                    )
                    .await
                    .map_err(err)?;
            }
        }
        for (k, _) in &before {
            if !after.iter().any(|(ak, _)| ak == k) {
                // A tag already gone is what was wanted.
                gone_ok(
                    client
                        .idempotent()
                        .delete(
                            &format!("{BASE}/delete-tag"),
                            &[("name", id.to_string()), ("key", k.clone())],
                        )
                        .await,
                )?;
            }
        }
        self.get(id)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("model {id} no longer exists")))
    }

    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        gone_ok(
            client
                .idempotent()
                .delete(&format!("{BASE}/delete"), &[("name", id.to_string())])
                .await,
        )
    }

    /// Names are unique in a workspace and are the id.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, "name").map(str::to_string)
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.get(key).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_read_with_its_id_and_tags() {
        let k = MlflowModel::new(Arc::new(Shared::default()));
        let c = super::super::decoded(
            k.schema(),
            json!({"name": "m", "description": "", "tags": [{"key": "a", "value": "1"}]}),
        );
        assert_eq!(
            create_body(&c),
            json!({"name": "m", "tags": [{"key": "a", "value": "1"}]})
        );
        let r = remote(&json!({"name": "m", "id": "12", "tags": [{"key": "a", "value": "1"}]}))
            .unwrap();
        assert_eq!(r.id, "m");
        assert_eq!(r.attrs["registered_model_id"], Value::from("12"));
        assert_eq!(r.attrs["description"], Value::Null);
        assert!(
            k.check(&super::super::decoded(k.schema(), json!({"name": ""})))
                .iter()
                .any(|f| f.message.contains("cannot be empty"))
        );
    }
}
