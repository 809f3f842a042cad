//! The brickform engine: the configuration language, the dependency graph, plans and the
//! apply engine, and the interface providers implement. Nothing here knows any one
//! provider's objects.

pub mod addrs;
pub mod call_slots;
pub mod change;
pub mod dag;
pub mod diagnostics;
pub mod drop_later;
pub mod engine;
pub mod fan_out;
pub mod graph;
pub mod lang;
pub mod limits;
pub mod location;
#[cfg(test)]
mod peak;
pub mod plan;
pub mod provider;
pub mod source;
pub mod value;
pub mod yaml;

pub use value::{Object, PathStep, Value};
