//! `data "databricks_tables"`: the tables of a schema (views left out, as the Terraform
//! provider leaves them out), for onboarding what already exists: one flow per table.

use super::uc_listing::{Listing, UcListing};
use crate::Shared;
use crate::client::PageSize;
use std::sync::Arc;

/// `max_results=0`: the service's own page size, with a page token for the rest (without
/// it the service returns every table in one answer, which it advises against).
const LIST_PAGE: PageSize = PageSize::new("max_results", "0");

pub fn listing(shared: Arc<Shared>) -> UcListing {
    UcListing::new(
        shared,
        Listing {
            type_name: "databricks_tables",
            description: "The tables of a schema (not its views), by full name.",
            collection: "tables",
            parents: &["catalog_name", "schema_name"],
            page: Some(LIST_PAGE),
            leave_out: &["VIEW"],
        },
    )
}
