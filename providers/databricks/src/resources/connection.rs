//! `databricks_connection`: a Unity Catalog connection to an external database.
//!
//! `options` carries credentials (password and the like) which the service never returns,
//! so it is write-only: state keeps only its fingerprint, and a change is still detected.

use super::uc::{UcKind, UcSpec};
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, Normalize, Schema};
use brickform_core::value::Object;
use std::sync::Arc;

fn map() -> AttrType {
    AttrType::Map(Box::new(AttrType::String))
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Unity Catalog connection (SQLSERVER, MYSQL, POSTGRESQL, …).")
        .attr(
            Attribute::required("name", AttrType::String)
                .normalize(Normalize::LowerCase)
                .describe("Connection name; a change renames it in place."),
        )
        .attr(Attribute::required("connection_type", AttrType::String).force_new())
        .attr(
            Attribute::required("options", map())
                .sensitive()
                .describe("Connection options (host, port, user, password, …); write-only."),
        )
        .attr(Attribute::optional("comment", AttrType::String).force_new())
        .attr(Attribute::optional("properties", map()).force_new())
        .attr(
            Attribute::optional("read_only", AttrType::Bool)
                .force_new()
                // The service makes a connection read-only unless told otherwise.
                .server_default(true),
        )
        .attr(Attribute::optional_computed("owner", AttrType::String))
        .attr(Attribute::computed("id", AttrType::String).derived_from(&["name"]))
        .attr(Attribute::computed("connection_id", AttrType::String))
        .attr(Attribute::computed("full_name", AttrType::String).derived_from(&["name"]))
        .attr(Attribute::computed("metastore_id", AttrType::String))
        .attr(Attribute::computed("credential_type", AttrType::String))
        // The service builds it from the options (jdbc://host:port/).
        .attr(Attribute::computed("url", AttrType::String).derived_from(&["options"]))
}

fn derive(_: &mut Object) {}

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_connection",
            collection: "connections",
            name_parts: &["name"],
            create_fields: &[
                "name",
                "connection_type",
                "options",
                "comment",
                "properties",
                "read_only",
            ],
            update_fields: &["options", "owner"],
            always_send: &["options"],
            force_delete: false,
            derive,
            after_create: None,
        },
        schema: schema(),
        shared,
    }
}
