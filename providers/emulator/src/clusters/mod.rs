//! All-purpose clusters (`/api/2.1/clusters/...`) and the libraries installed on them
//! (`/api/2.0/libraries/...`): [`model`] is what the API does to the state, [`routes`] the
//! HTTP side.
//!
//! A cluster's state moves with time, as a warehouse's does: PENDING after its create (and
//! after a start) until `until`, then RUNNING; RESTARTING after an edit of a running cluster
//! (the Clusters API's edit: "If a cluster is updated while in a RUNNING state, it will be
//! restarted so that the new attributes can take effect"; a TERMINATED one stays
//! TERMINATED, databricks-sdk-py databricks/sdk/service/compute.py, ClustersAPI.edit), then
//! RUNNING; TERMINATING after a delete (which terminates), then TERMINATED; RESIZING after a
//! resize of a running cluster, then RUNNING, with no restart; RUNNING and idle for
//! `autotermination_minutes` it terminates. The clock hook ([`advance`]) applies those
//! moves whenever the workspace is read. A permanent delete removes it.

mod model;
mod routes;

pub use model::advance;
pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What all-purpose clusters keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// All-purpose clusters by cluster id (files written before had none).
    #[serde(default)]
    pub clusters: Tracked<String, Cluster>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, clusters)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cluster {
    pub id: String,
    /// The settings as the service answers them (its defaults filled in): `cluster_name`,
    /// `spark_version`, `node_type_id`, … Replaced whole by an edit.
    pub spec: Map<String, Value>,
    pub creator: String,
    /// PENDING, RUNNING, RESTARTING, RESIZING, TERMINATING or TERMINATED.
    pub state: String,
    /// When a PENDING, RESTARTING, RESIZING or TERMINATING cluster reaches RUNNING or
    /// TERMINATED.
    pub until: i64,
    /// Since when a RUNNING cluster has been idle: auto-termination counts from here.
    pub idle_since: i64,
    pub start_time: i64,
    /// Changes whenever the Spark driver (re)starts ("This value does change when the Spark
    /// driver restarts": ClusterDetails.spark_context_id in databricks-sdk-py compute.py), not
    /// on a resize.
    #[serde(default)]
    pub spark_context_id: i64,
    /// Pinned clusters are always listed, and cannot be permanently deleted.
    pub pinned: bool,
    /// The token of the create that made it: a create with the same token answers this
    /// cluster instead of making another.
    #[serde(default)]
    pub idempotency_token: Option<String>,
    /// The libraries installed on it or asked for, in the order they were asked for.
    #[serde(default)]
    pub libraries: Vec<Library>,
}

/// One library of a cluster and its install status (`LibraryInstallStatus`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Library {
    pub library: Value,
    /// PENDING (the cluster is not running), INSTALLED, or UNINSTALL_ON_RESTART.
    pub status: String,
}
