//! `data "databricks_catalog"`: an existing catalog, by name.

use super::uc_lookup::UcLookup;
use crate::Shared;
use std::sync::Arc;

pub fn lookup(shared: Arc<Shared>) -> UcLookup {
    UcLookup::new(
        shared,
        "databricks_catalog",
        crate::resources::catalog::kind,
    )
    .with_info("catalog_info")
}
