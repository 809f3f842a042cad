//! `data "databricks_mlflow_experiment"`: an existing MLflow experiment, by `name` or
//! `experiment_id` (terraform-provider-databricks mlflow/data_mlflow_experiment.go: a name
//! is looked up first, with experiments/get-by-name; the answer is the service's
//! `Experiment`, its tags the service's own among them).

use crate::Shared;
use crate::resources::none_if_missing;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

const BASE: &str = "/api/2.0/mlflow/experiments";

pub struct MlflowExperiment {
    schema: Schema,
    shared: Arc<Shared>,
}

impl MlflowExperiment {
    pub fn new(shared: Arc<Shared>) -> Self {
        let s = || AttrType::String;
        let schema = Schema::new()
            .describe("An existing MLflow experiment, by name (its workspace path) or experiment_id.")
            .attr(Attribute::optional_computed("name", s()).describe("The experiment's workspace path; or give its id."))
            .attr(Attribute::optional_computed("experiment_id", s()).describe("The experiment's id; or give its name."))
            .attr(Attribute::computed("artifact_location", s()))
            .attr(Attribute::computed("lifecycle_stage", s()))
            .attr(Attribute::computed("creation_time", AttrType::Number))
            .attr(Attribute::computed("last_update_time", AttrType::Number))
            .attr(
                Attribute::computed("tags", AttrType::Any)
                    .describe("The experiment's tags as the service answers them: a list of {key, value}, the service's own (mlflow.*) among them."),
            )
            .attr(Attribute::computed("id", s()).describe("The experiment_id."));
        MlflowExperiment { schema, shared }
    }
}

fn answered(e: &Json) -> Object {
    let s = |k: &str| e.get(k).map_or(Value::Null, Value::from_json);
    let mut out = Object::default();
    for k in [
        "name",
        "experiment_id",
        "artifact_location",
        "lifecycle_stage",
        "creation_time",
        "last_update_time",
    ] {
        out.insert(k.into(), s(k));
    }
    out.insert(
        "tags".into(),
        e.get("tags")
            .map_or(Value::List(Vec::new()), Value::from_json),
    );
    out.insert("id".into(), s("experiment_id"));
    out
}

#[async_trait]
impl DataSource for MlflowExperiment {
    fn type_name(&self) -> &'static str {
        "databricks_mlflow_experiment"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let client = self.shared.client()?;
        let given = |k: &str| super::given(config, k);
        let (path, query, what) = match (given("name"), given("experiment_id")) {
            (Some(name), _) => (
                format!("{BASE}/get-by-name"),
                ("experiment_name", name.to_string()),
                format!("name {name}"),
            ),
            (None, Some(id)) => (
                format!("{BASE}/get"),
                ("experiment_id", id.to_string()),
                format!("id {id}"),
            ),
            (None, None) => {
                return Err(ProviderError::invalid(
                    "either 'experiment_id' or 'name' should be provided",
                ));
            }
        };
        let got = none_if_missing(client.get(&path, &[query]).await)?
            .and_then(|g| g.get("experiment").cloned())
            .filter(|e| e.get("lifecycle_stage").and_then(Json::as_str) != Some("deleted"))
            .ok_or_else(|| {
                ProviderError::not_found(format!("there is no experiment with {what}"))
            })?;
        Ok(answered(&got))
    }
}
