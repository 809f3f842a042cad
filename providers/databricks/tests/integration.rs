//! The provider's tests, one module per subject, in one test binary: a binary per file linked
//! the engine, the provider and the local workspace into each. `client_logs` stays its own
//! binary: it installs a global log subscriber.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod account;
mod allowed_values;
mod client;
mod containers;
mod data_sources;
mod folders;
mod google_auth;
mod jobs;
mod kind_names;
mod lists_agree;
mod lookups;
mod lost_responses;
mod pipelines;
mod refresh;
mod renames;
mod replace;
mod sign_in;
mod sql_objects;
