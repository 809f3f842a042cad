//! `data "databricks_views"`: the views of a schema, by full name, as the Terraform
//! provider gives them (catalog/data_views.go): the tables listing, keeping only views.

use super::tables::tables_listing;
use super::uc_listing::{TableTypes, UcListing, VIEWS};
use crate::Shared;
use std::sync::Arc;

pub fn listing(shared: Arc<Shared>) -> UcListing {
    tables_listing(
        shared,
        "databricks_views",
        "The views of a schema, by full name.",
        TableTypes::Only(VIEWS),
    )
}
