//! `data "databricks_storage_credential"`: an existing storage credential, by name.

use super::uc_lookup::UcLookup;
use crate::Shared;
use std::sync::Arc;

pub fn lookup(shared: Arc<Shared>) -> UcLookup {
    UcLookup::new(
        shared,
        "databricks_storage_credential",
        crate::resources::storage_credential::kind,
    )
    .with_info("storage_credential_info")
}
