//! `databricks_grant`: one principal's privileges on one Unity Catalog securable, as in the
//! Terraform provider: authoritative for that principal there, leaving everyone else's
//! grants alone. Its life cycle is in `privileges/`, shared with `databricks_grants`.

use super::privileges::{GrantsKind, Scope, privileges_attr, with_securables};
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, Normalize, Schema};
use std::sync::Arc;

pub fn kind(shared: Arc<Shared>) -> GrantsKind {
    let schema = with_securables(Schema::new().describe(
        "One principal's privileges on one Unity Catalog securable; others' grants are left alone. Set exactly one of catalog, schema, table, volume, foreign_connection, storage_credential, external_location, metastore.",
    ))
    .attr(
        Attribute::required("principal", AttrType::String)
            .force_new()
            .normalize(Normalize::Principal)
            .describe("An account user (e-mail), group (display name) or service principal (application id)."),
    )
    .attr(privileges_attr())
    .attr(
        Attribute::computed("id", AttrType::String)
            .describe("SECURABLE/FULL_NAME/PRINCIPAL, e.g. catalog/main/data-engineers."),
    );
    GrantsKind {
        type_name: "databricks_grant",
        scope: Scope::One,
        schema,
        shared,
    }
}
