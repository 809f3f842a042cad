//! `data "databricks_connection"`: an existing connection, by name.

use super::uc_lookup::UcLookup;
use crate::Shared;
use std::sync::Arc;

pub fn lookup(shared: Arc<Shared>) -> UcLookup {
    UcLookup::new(
        shared,
        "databricks_connection",
        crate::resources::connection::kind,
    )
}
