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
