//! Secret scopes, their secrets and their ACLs: [`model`] is what the API does to the state,
//! [`routes`] the HTTP side.

mod model;
mod routes;

pub use routes::{PUT_PATH, redact_write_only, routes};

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::{Domain, b64};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What secrets keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Secret scopes by name, with their secrets and ACLs.
    pub secret_scopes: Tracked<String, Scope>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, secret_scopes)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scope {
    pub backend_type: String,
    pub secrets: BTreeMap<String, Secret>,
    /// The vault an `AZURE_KEYVAULT` scope reads its secrets from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyvault: Option<KeyVault>,
    /// Who may read, write or manage the scope: principal → READ, WRITE or MANAGE (files
    /// written before had none).
    #[serde(default)]
    pub acls: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyVault {
    pub resource_id: String,
    pub dns_name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Secret {
    #[serde(with = "b64")]
    pub value: Vec<u8>,
    pub last_updated_timestamp: i64,
}
