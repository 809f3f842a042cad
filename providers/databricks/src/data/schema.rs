//! `data "databricks_schema"`: an existing schema, by catalog and name.

use super::uc_lookup::UcLookup;
use crate::Shared;
use std::sync::Arc;

pub fn lookup(shared: Arc<Shared>) -> UcLookup {
    UcLookup::new(shared, "databricks_schema", crate::resources::schema::kind)
        .with_info("schema_info")
}
