//! `databricks_ingestion_gateway`: a Lakeflow Connect gateway, a pipeline with a
//! `gateway_definition` whose fields are written at the top level. It stages
//! snapshots and change data of a database reached through a UC connection into a volume.
//!
//! The connection and the staging location are immutable on the service, so a change to any
//! of them replaces the gateway; everything else is a full-spec PUT. References such as
//! `connection_name = databricks_connection.c.name` give the apply order.

use super::pipeline_spec::{Flavor, PipelineKind, check_common, common_schema, no_derive, string};
use crate::Shared;
use brickform_core::provider::Reference;
use brickform_core::provider::{Attribute, Normalize, Schema};
use std::sync::Arc;

/// The definition that makes a pipeline one of these, and the kind it makes it (the
/// pipelines' shared code tells the three kinds apart by it).
pub const MADE_BY: (&str, &str) = ("gateway_definition", "databricks_ingestion_gateway");

/// The HCL names that live inside `gateway_definition` on the wire.
const DEFINITION: &[&str] = &[
    "connection_name",
    "gateway_storage_catalog",
    "gateway_storage_schema",
    "gateway_storage_name",
];

pub fn schema() -> Schema {
    common_schema("A Lakeflow Connect ingestion gateway (a pipeline with gateway_definition). Replaced when the connection or the staging location changes.", true)
        .attr(
            Attribute::required("connection_name", string())
                .force_new()
                .normalize(Normalize::LowerCase)
                .describe("The UC connection to the source database."),
        )
        .attr(
            Attribute::required("gateway_storage_catalog", string())
                .force_new()
                .normalize(Normalize::LowerCase),
        )
        .attr(
            Attribute::required("gateway_storage_schema", string())
                .force_new()
                .normalize(Normalize::LowerCase),
        )
        .attr(
            Attribute::optional_computed("gateway_storage_name", string())
                .force_new()
                .normalize(Normalize::LowerCase)
                .describe("Name of the staging volume; chosen by the service when unset."),
        )
}

/// The staging volume the service creates in the gateway's storage schema, named by
/// `gateway_storage_name`; it stays when the gateway is deleted, so the gateway's delete
/// removes it (brickform made the gateway, so what the gateway made is brickform's too).
/// Unset, the name is the service's default for the gateway (the SDK's DataStagingOptions).
fn staging_volume(id: &str, prior: &brickform_core::value::Object) -> Vec<String> {
    let get = |k: &str| prior.get(k).and_then(brickform_core::value::Value::as_str);
    match (
        get("gateway_storage_catalog"),
        get("gateway_storage_schema"),
        get("gateway_storage_name"),
    ) {
        (Some(c), Some(s), n) => vec![format!(
            "{c}.{s}.{}",
            n.map_or_else(
                || format!("__databricks_ingestion_gateway_staging_data-{id}"),
                str::to_string
            )
        )],
        _ => Vec::new(),
    }
}

/// A gateway reads through a connection and stages what it reads in a schema.
const REFERENCES: &[Reference] = &[
    Reference::to("connection_name", &["databricks_connection"], "name"),
    Reference::to("gateway_storage_catalog", &["databricks_catalog"], "name"),
    Reference::to("gateway_storage_schema", &["databricks_schema"], "name")
        .within("gateway_storage_catalog"),
];

pub fn kind(shared: Arc<Shared>) -> PipelineKind {
    PipelineKind {
        flavor: Flavor {
            type_name: MADE_BY.1,
            schema: schema(),
            definition: Some((MADE_BY.0, DEFINITION)),
            keep_when_absent: &["catalog", "schema"],
            server_filled: &["gateway_storage_name", "connection_id"],
            check: check_common,
            derive: no_derive,
            derived: &[],
            leaves_volumes: Some(staging_volume),
            references: REFERENCES,
            publishes: super::pipeline_spec::Publishes::Nothing,
        },
        shared,
        listing: Default::default(),
    }
}
