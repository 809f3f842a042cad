//! Who may reach the workspace: IP access lists (`/api/2.0/ip-access-lists`) and the
//! workspace configuration (`/api/2.0/workspace-conf`), whose `enableIpAccessLists` key
//! switches the lists on, with the other keys of that API. [`model`] is what the APIs do to
//! the state, [`routes`] the HTTP side.
//!
//! The lists are never enforced on requests here (the local workspace serves loopback
//! only); what the service does at a write is: with the feature on, a write that would
//! block the caller's own address is refused, as the API documents (INVALID_STATE).

mod model;
mod routes;

pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the access settings keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// IP access lists by list id, as answered (files written before had none).
    #[serde(default)]
    pub ip_access_lists: Tracked<String, Map<String, Value>>,
    /// Workspace configuration values by key, as set (a key never set is absent).
    #[serde(default)]
    pub workspace_conf: Tracked<String, String>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, ip_access_lists, workspace_conf)
    }
}
