//! `data "databricks_schemas"`: the schemas of a catalog.

use super::uc_listing::{Listing, TableTypes, UcListing};
use crate::Shared;
use std::sync::Arc;

pub fn listing(shared: Arc<Shared>) -> UcListing {
    UcListing::new(
        shared,
        Listing {
            type_name: "databricks_schemas",
            description: "The schemas of a catalog, by full name.",
            collection: "schemas",
            parents: &["catalog_name"],
            page: Some(crate::resources::schema::LIST_PAGE),
            table_types: TableTypes::All,
        },
    )
}
