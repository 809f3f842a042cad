//! MLflow experiments (`/api/2.0/mlflow/experiments/...`) and the workspace model registry
//! (`/api/2.0/mlflow/registered-models/...`, `/api/2.0/mlflow/databricks/registered-models/get`):
//! [`model`] is what the API does to the state, [`routes`] the HTTP side.
//!
//! An experiment is held as the service answers it (`experiment_id`, `name`,
//! `artifact_location`, `lifecycle_stage`, `creation_time`, `last_update_time`, `tags`). Its
//! name is a workspace path, and the experiment is an object of the workspace tree there
//! (object type MLFLOW_EXPERIMENT) whose object id is the experiment id: the two share one
//! id space (databrickslabs/cicd-templates#5: "Expected id '…' to be an MLflow experiment or
//! Databricks notebook, found 'DIRECTORY'"). Its permissions are the workspace object's,
//! inherited from its folders like a notebook's. A delete is soft: the experiment stays,
//! `lifecycle_stage` "deleted", readable by id, but it leaves the tree, so its name is free
//! again (mlflow/mlflow#6445: unlike open-source MLflow, Databricks lets a deleted
//! experiment's name be used again).
//!
//! A registered model is keyed by its name, unique in the workspace; it has an `id` as well,
//! answered only by the Databricks variant of its get, which its permissions take. A delete
//! removes it (no tombstone, mlflow/mlflow#6445). Model versions are not modelled.

mod model;
mod routes;

pub use model::{model_with_id, workspace_node_deleted};
pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What MLflow keeps in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Experiments by experiment id, deleted ones too, as answered.
    #[serde(default)]
    pub experiments: Tracked<String, Map<String, Value>>,
    /// Registered models of the workspace model registry by name, as the Databricks get
    /// answers them (with their `id`).
    #[serde(default)]
    pub registered_models: Tracked<String, Map<String, Value>>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, experiments, registered_models)
    }
}
