//! Users, groups and service principals (SCIM): who may be named in grants and permissions.
//! [`model`] is what the API does to the state, [`routes`] the HTTP side.
//!
//! The workspace starts with its user, the workspace-local groups `users` and `admins`, and
//! the account group `account users`. Unity Catalog grants name account principals only: a
//! workspace-local group is refused there, as the service refuses it. The workspace's own
//! APIs (permissions, secret ACLs) take it, and not `account users`.
//!
//! The local workspace belongs to one account, [`ACCOUNT_ID`], which its host metadata
//! (`/.well-known/databricks-config`) names, as a workspace's does. The account's own
//! principals (the account SCIM API, `/api/2.0/accounts/{account_id}/scim/v2/...`) are
//! kept apart from the workspace's: the same model over tables of their own ([`Level`]).
//! The account starts with its admin, the workspace's user.

mod model;
mod routes;

pub use model::{held_name, principal_exists, workspace_principal, workspace_principal_named};
pub use routes::routes;

/// The account the local workspace belongs to: fixed, so a configuration, a test or a
/// script can name it, and answered as `account_id` by `/.well-known/databricks-config`.
pub const ACCOUNT_ID: &str = "0b1c4f07-0000-4000-8000-00000000a11c";

/// Whose principals a SCIM call reaches: the workspace's, or its account's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Workspace,
    Account,
}

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::{Domain, State};
use serde::{Deserialize, Serialize};

/// What SCIM keeps in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Users, groups and service principals by SCIM id (files written before had none: the
    /// workspace's own are seeded when such a file is read).
    #[serde(default)]
    pub principals: Tracked<String, Principal>,
    /// What SCIM holds of each principal beyond its name, by SCIM id: entitlements, a
    /// group's members, active, externalId (files written before had none: every principal
    /// then has the defaults).
    #[serde(default)]
    pub scim_attrs: Tracked<String, Attributes>,
    /// The account's users, groups and service principals by SCIM id, apart from the
    /// workspace's (files written before had none: the account's admin is seeded).
    #[serde(default)]
    pub account_principals: Tracked<String, Principal>,
    /// What the account's SCIM holds of its principals beyond their names, as
    /// `scim_attrs` for the workspace's.
    #[serde(default)]
    pub account_attrs: Tracked<String, Attributes>,
}

impl Tables {
    pub fn principals(&self, level: Level) -> &Tracked<String, Principal> {
        match level {
            Level::Workspace => &self.principals,
            Level::Account => &self.account_principals,
        }
    }

    pub fn principals_mut(&mut self, level: Level) -> &mut Tracked<String, Principal> {
        match level {
            Level::Workspace => &mut self.principals,
            Level::Account => &mut self.account_principals,
        }
    }

    pub fn attrs(&self, level: Level) -> &Tracked<String, Attributes> {
        match level {
            Level::Workspace => &self.scim_attrs,
            Level::Account => &self.account_attrs,
        }
    }

    pub fn attrs_mut(&mut self, level: Level) -> &mut Tracked<String, Attributes> {
        match level {
            Level::Workspace => &mut self.scim_attrs,
            Level::Account => &mut self.account_attrs,
        }
    }
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(
            self,
            principals,
            scim_attrs,
            account_principals,
            account_attrs
        )
    }

    /// The workspace's own principals: its user, `users`, `admins` and `account users`;
    /// and the account's admin.
    fn seed(st: &mut State, user_name: &str, _now: i64) {
        model::seed(st, user_name);
        model::seed_account(st, user_name);
    }

    fn loaded(st: &mut State, user_name: &str) {
        if st.scim.principals.is_empty() {
            model::seed(st, user_name);
        }
        if st.scim.account_principals.is_empty() {
            model::seed_account(st, user_name);
        }
    }
}

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
