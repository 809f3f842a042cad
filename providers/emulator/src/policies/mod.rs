//! Cluster policies (`/api/2.0/policies/clusters/...`): [`model`] is what the API does to
//! the state, [`routes`] the HTTP side.
//!
//! A policy is held as the service answers it (`policy_id`, `name`, `definition`, …,
//! `created_at_timestamp`, `creator_user_name`, `is_default`). Policy families (the
//! built-in definitions a policy may inherit with `policy_family_id`) are not modelled: the
//! workspace lists none, so a policy naming one is refused as naming a family that does
//! not exist.

mod model;
mod routes;

pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What cluster policies keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Cluster policies by policy id, as answered (files written before had none).
    #[serde(default)]
    pub cluster_policies: Tracked<String, Map<String, Value>>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, cluster_policies)
    }
}
