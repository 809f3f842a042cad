//! The local workspace's tests, one module per subject, in one test binary: a binary per file
//! linked the whole local workspace into each.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod bad_input;
mod behaviours;
mod clusters;
mod credentials;
mod hostile;
mod http;
mod mlflow;
mod normalise;
mod permissions;
mod repos;
mod scim;
mod sql_objects;
mod uc_models;
mod warehouses;
