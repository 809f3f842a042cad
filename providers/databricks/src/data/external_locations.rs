//! `data "databricks_external_locations"`: the external locations of the metastore.

use super::uc_listing::{Listing, TableTypes, UcListing};
use crate::Shared;
use std::sync::Arc;

pub fn listing(shared: Arc<Shared>) -> UcListing {
    UcListing::new(
        shared,
        Listing {
            type_name: "databricks_external_locations",
            description: "The external locations of the metastore, by name.",
            collection: "external-locations",
            parents: &[],
            page: Some(crate::resources::external_location::LIST_PAGE),
            table_types: TableTypes::All,
        },
    )
}
