//! `data "databricks_tables"`: the tables of a schema (views left out, as the Terraform
//! provider leaves them out), for onboarding what already exists: one flow per table.

use super::uc_listing::{Listing, TableTypes, UcListing, VIEWS};
use crate::Shared;
use crate::client::PageSize;
use std::sync::Arc;

/// `max_results=0`: the service's own page size, with a page token for the rest (without
/// it the service returns every table in one answer, which it advises against).
const LIST_PAGE: PageSize = PageSize::new("max_results", "0");

pub fn listing(shared: Arc<Shared>) -> UcListing {
    tables_listing(
        shared,
        "databricks_tables",
        "The tables of a schema (not its views), by full name.",
        TableTypes::Except(VIEWS),
    )
}

/// The listing of a schema's tables of some types: its tables, or its views.
pub fn tables_listing(
    shared: Arc<Shared>,
    type_name: &'static str,
    description: &'static str,
    table_types: TableTypes,
) -> UcListing {
    UcListing::new(
        shared,
        Listing {
            type_name,
            description,
            collection: "tables",
            parents: &["catalog_name", "schema_name"],
            page: Some(LIST_PAGE),
            table_types,
        },
    )
}
