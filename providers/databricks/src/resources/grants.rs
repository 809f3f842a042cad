//! `databricks_grants`: every grant on one Unity Catalog securable (a catalog, schema,
//! table, volume or connection), authoritative as in the Terraform provider: a privilege
//! it does not declare is revoked by its next apply, and drift (a grant given or taken in
//! the UI) is planned back. Its life cycle is in `privileges/`, shared with
//! `databricks_grant`.

use super::privileges::{GrantsKind, Scope, privileges_attr, with_securables};
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, BlockType, Normalize, Schema};
use std::sync::Arc;

pub fn kind(shared: Arc<Shared>) -> GrantsKind {
    let grant = Schema::new()
        .attr(Attribute::required("principal", AttrType::String).normalize(Normalize::Principal).describe(
            "An account user (e-mail), group (display name) or service principal (application id).",
        ))
        .attr(privileges_attr());
    let schema = with_securables(
        Schema::new().describe(
            "Every grant on one Unity Catalog securable: what it does not declare is revoked. Set exactly one of catalog, schema, table, volume, foreign_connection, storage_credential, external_location, metastore.",
        ),
    )
    .block(
        BlockType::keyed("grant", "principal", grant)
            .min(1)
            .describe("The privileges of one principal."),
    )
    .attr(Attribute::computed("id", AttrType::String).describe("SECURABLE/FULL_NAME, e.g. schema/main.sales."));
    GrantsKind {
        type_name: "databricks_grants",
        scope: Scope::All,
        schema,
        shared,
    }
}
