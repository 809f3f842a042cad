//! `data "databricks_external_location"`: an existing external location, by name.

use super::uc_lookup::UcLookup;
use crate::Shared;
use std::sync::Arc;

pub fn lookup(shared: Arc<Shared>) -> UcLookup {
    UcLookup::new(
        shared,
        "databricks_external_location",
        crate::resources::external_location::kind,
    )
    .with_info("external_location_info")
}
