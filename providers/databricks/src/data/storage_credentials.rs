//! `data "databricks_storage_credentials"`: the storage credentials of the metastore.

use super::uc_listing::{Listing, TableTypes, UcListing};
use crate::Shared;
use std::sync::Arc;

pub fn listing(shared: Arc<Shared>) -> UcListing {
    UcListing::new(
        shared,
        Listing {
            type_name: "databricks_storage_credentials",
            description: "The storage credentials of the metastore, by name.",
            collection: "storage-credentials",
            parents: &[],
            page: Some(crate::resources::storage_credential::LIST_PAGE),
            table_types: TableTypes::All,
        },
    )
}
