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

use std::collections::BTreeMap;

/// One object's direct entries: `FIELD:NAME` (`user_name:alice@example.com`,
/// `group_name:data-engineers`, `service_principal_name:<application id>`) → level.
pub type Acl = BTreeMap<String, String>;
