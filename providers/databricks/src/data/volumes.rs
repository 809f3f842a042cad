//! `data "databricks_volumes"`: the volumes of a schema.

use super::uc_listing::{Listing, TableTypes, UcListing};
use crate::Shared;
use std::sync::Arc;

pub fn listing(shared: Arc<Shared>) -> UcListing {
    UcListing::new(
        shared,
        Listing {
            type_name: "databricks_volumes",
            description: "The volumes of a schema, by full name.",
            collection: "volumes",
            parents: &["catalog_name", "schema_name"],
            page: crate::resources::volume::LIST_PAGE,
            table_types: TableTypes::All,
        },
    )
}
