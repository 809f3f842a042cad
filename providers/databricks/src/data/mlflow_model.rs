//! `data "databricks_mlflow_model"`: a registered model of the workspace model registry, by
//! name (terraform-provider-databricks mlflow/data_mlflow_model.go: the Databricks get's
//! `registered_model_databricks`, whose `id` is the model's, as permissions take it).

use crate::Shared;
use crate::resources::none_if_missing;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

const GET: &str = "/api/2.0/mlflow/databricks/registered-models/get";

pub struct MlflowModel {
    schema: Schema,
    shared: Arc<Shared>,
}

impl MlflowModel {
    pub fn new(shared: Arc<Shared>) -> Self {
        let s = || AttrType::String;
        let schema = Schema::new()
            .describe("A registered model of the workspace model registry, by name.")
            .attr(Attribute::required("name", s()))
            .attr(Attribute::computed("description", s()))
            .attr(Attribute::computed("user_id", s()).describe("Who registered it."))
            .attr(
                Attribute::computed("permission_level", s())
                    .describe("The caller's level on the model."),
            )
            .attr(
                Attribute::computed("tags", AttrType::Any)
                    .describe("A list of {key, value}."),
            )
            .attr(
                Attribute::computed("latest_versions", AttrType::Any)
                    .describe("The latest version of each stage, as the service answers them (the local workspace keeps no versions)."),
            )
            .attr(
                Attribute::computed("id", s())
                    .describe("The model's id (databricks_permissions' registered_model_id)."),
            );
        MlflowModel { schema, shared }
    }
}

#[async_trait]
impl DataSource for MlflowModel {
    fn type_name(&self) -> &'static str {
        "databricks_mlflow_model"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let name = super::given(config, "name")
            .ok_or_else(|| ProviderError::invalid("name is required"))?;
        let client = self.shared.client()?;
        let m = none_if_missing(client.get(GET, &[("name", name.to_string())]).await)?
            .and_then(|g| g.get("registered_model_databricks").cloned())
            .ok_or_else(|| {
                ProviderError::not_found(format!("there is no registered model named {name}"))
            })?;
        let s = |k: &str| m.get(k).map_or(Value::Null, Value::from_json);
        let list = |k: &str| m.get(k).map_or(Value::List(Vec::new()), Value::from_json);
        let mut out = Object::default();
        out.insert("name".into(), Value::from(name));
        for k in ["description", "user_id", "permission_level", "id"] {
            out.insert(k.into(), s(k));
        }
        out.insert("tags".into(), list("tags"));
        out.insert("latest_versions".into(), list("latest_versions"));
        Ok(out)
    }
}
