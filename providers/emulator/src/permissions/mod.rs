//! Object permissions (`/api/2.0/permissions/{object_type}/{object_id}`): who may view, run,
//! edit or manage jobs, pipelines, notebooks, directories, workspace files and SQL
//! warehouses. [`model`] is what the API does to the state, [`routes`] the HTTP side.
//!
//! Each object keeps its direct entries, one level per principal. What the service shows
//! besides them is inherited and cannot be set here: the `admins` group manages everything,
//! a workspace object takes what its folders hold, and a user manages what lies in their
//! home folder. Jobs, pipelines and warehouses have exactly one owner (IS_OWNER), their
//! creator until it is changed.

mod model;
mod routes;

pub use model::forget;
pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What object permissions keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Object permissions by object (`jobs/123`, `sql/warehouses/abc`): their direct
    /// entries, once written (files written before had none).
    #[serde(default)]
    pub permissions: Tracked<String, Acl>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, permissions)
    }
}

/// One object's direct entries: `FIELD:NAME` (`user_name:alice@example.com`,
/// `group_name:data-engineers`, `service_principal_name:<application id>`) → level.
pub type Acl = BTreeMap<String, String>;
