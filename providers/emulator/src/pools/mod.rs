//! Instance pools (`/api/2.0/instance-pools/...`): [`model`] is what the API does to the
//! state, [`routes`] the HTTP side.
//!
//! A pool is held as the service answers it: its settings, with `instance_pool_id`,
//! `default_tags`, `state` (ACTIVE) and `stats` (no instances: the local workspace runs no
//! clusters). An edit changes only what the edit API takes (name, sizes, idle
//! termination, custom tags); the rest is the pool's for life.

mod model;
mod routes;

pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What instance pools keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Instance pools by instance pool id, as answered (files written before had none).
    #[serde(default)]
    pub instance_pools: Tracked<String, Map<String, Value>>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, instance_pools)
    }
}
