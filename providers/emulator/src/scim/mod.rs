//! Users, groups and service principals (SCIM): who may be named in grants and permissions.
//! [`model`] is what the API does to the state, [`routes`] the HTTP side.
//!
//! The workspace starts with its user, the workspace-local groups `users` and `admins`, and
//! the account group `account users`. Unity Catalog grants name account principals only: a
//! workspace-local group is refused there, as the service refuses it. The workspace's own
//! APIs (permissions, secret ACLs) take it, and not `account users`.

mod model;
mod routes;

pub use model::{
    held_name, principal_exists, seed, workspace_principal, workspace_principal_named,
};
pub use routes::routes;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrincipalKind {
    User,
    Group,
    ServicePrincipal,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Principal {
    pub kind: PrincipalKind,
    /// How grants name it: a user's userName, a group's displayName, a service principal's
    /// applicationId.
    pub name: String,
    pub display_name: String,
    /// A workspace-local group (`users`, `admins`): not an account principal.
    #[serde(default)]
    pub workspace_local: bool,
}

/// What SCIM holds of a principal beyond its name (the service's `active`, `externalId`,
/// `entitlements` and, for a group, `members`); a principal without an entry has these
/// defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attributes {
    #[serde(default = "active")]
    pub active: bool,
    #[serde(default)]
    pub external_id: Option<String>,
    /// Entitlement values (`allow-cluster-create`, …), in the order the provider reads them (`model::ENTITLEMENTS`).
    #[serde(default)]
    pub entitlements: Vec<String>,
    /// A group's members by SCIM id (users, service principals, groups).
    #[serde(default)]
    pub members: Vec<String>,
}

fn active() -> bool {
    true
}

impl Default for Attributes {
    fn default() -> Self {
        Attributes {
            active: true,
            external_id: None,
            entitlements: Vec::new(),
            members: Vec::new(),
        }
    }
}
