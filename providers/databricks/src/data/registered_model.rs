//! `data "databricks_registered_model"`: a model of Unity Catalog's model registry, by its
//! full name, answered as the Terraform provider's data source answers it: the model as a
//! list of one, `model_info[0].owner` (terraform-provider-databricks
//! docs/data-sources/registered_model.md).

use crate::Shared;
use crate::resources::none_if_missing;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, Normalize, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

pub struct RegisteredModel {
    schema: Schema,
    shared: Arc<Shared>,
}

impl RegisteredModel {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("A Unity Catalog registered model, by full name.")
            .attr(
                Attribute::required("full_name", AttrType::String)
                    .normalize(Normalize::LowerCase)
                    .describe("CATALOG.SCHEMA.MODEL."),
            )
            .attr(
                Attribute::optional("include_aliases", AttrType::Bool)
                    .describe("Answer the model's aliases too."),
            )
            .attr(
                Attribute::optional("include_browse", AttrType::Bool).describe(
                    "Answer a model the caller may only browse (its selective metadata).",
                ),
            )
            .attr(Attribute::computed("model_info", AttrType::Any).describe(
                "The model as the service answers it, as a list of one (model_info[0].owner), as the Terraform provider has it.",
            ));
        RegisteredModel { schema, shared }
    }
}

#[async_trait]
impl DataSource for RegisteredModel {
    fn type_name(&self) -> &'static str {
        "databricks_registered_model"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let full_name = super::given(config, "full_name")
            .ok_or_else(|| ProviderError::invalid("full_name is required"))?;
        let query: Vec<(&str, String)> = ["include_aliases", "include_browse"]
            .into_iter()
            .filter(|k| config.get(*k).and_then(Value::as_bool) == Some(true))
            .map(|k| (k, "true".to_string()))
            .collect();
        let client = self.shared.client()?;
        let path = format!("/api/2.1/unity-catalog/models/{full_name}");
        let model = none_if_missing(client.get(&path, &query).await)?.ok_or_else(|| {
            ProviderError::not_found(format!("registered model {full_name} does not exist"))
        })?;
        let mut out = config.clone();
        out.insert(
            "model_info".into(),
            Value::List(vec![Value::from_json(&model)]),
        );
        Ok(out)
    }
}
