//! `databricks_schema`: a Unity Catalog schema.

use super::uc::{UcKind, UcSpec};
use super::values;
use crate::Shared;
use crate::client::PageSize;
use brickform_core::provider::{AttrType, Attribute, Normalize, Reference, Schema};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Unity Catalog schema.")
        .attr(
            Attribute::required("catalog_name", AttrType::String)
                .force_new()
                .normalize(Normalize::LowerCase),
        )
        .attr(
            Attribute::required("name", AttrType::String)
                .normalize(Normalize::LowerCase)
                .describe("Schema name; a change renames it in place."),
        )
        .attr(Attribute::optional("comment", AttrType::String))
        .attr(
            Attribute::optional("storage_root", AttrType::String)
                .force_new()
                .normalize(Normalize::TrimTrailingSlash),
        )
        .attr(Attribute::optional(
            "properties",
            AttrType::Map(Box::new(AttrType::String)),
        ))
        .attr(Attribute::optional_computed("owner", AttrType::String))
        .attr(
            Attribute::optional_computed("enable_predictive_optimization", AttrType::String)
                .one_of(values::PREDICTIVE_OPTIMIZATION),
        )
        .attr(
            Attribute::optional("force_destroy", AttrType::Bool)
                .server_default(false)
                .describe("Delete the schema even when it holds tables or volumes."),
        )
        .attr(Attribute::computed("id", AttrType::String).derived_from(&["name", "catalog_name"]))
        .attr(Attribute::computed("schema_id", AttrType::String))
        .attr(
            Attribute::computed("full_name", AttrType::String)
                .derived_from(&["name", "catalog_name"]),
        )
        .attr(Attribute::computed("metastore_id", AttrType::String))
        .attr(Attribute::computed("storage_location", AttrType::String))
}

fn derive(attrs: &mut Object) {
    // `full_name` is `catalog.schema`; nothing else to add, but keep the name lower-case
    // like the service does for older responses that echo the input.
    if let Some(Value::String(s)) = attrs.get_mut("name") {
        *s = s.to_lowercase();
    }
}

/// The page size of `schemas` lists: `max_results=0`, "server picks" (what the SDK sends).
pub const LIST_PAGE: PageSize = PageSize::new("max_results", "0");

/// A schema is a name within its catalog.
const REFERENCES: &[Reference] = &[Reference::to(
    "catalog_name",
    &["databricks_catalog"],
    "name",
)];

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_schema",
            collection: "schemas",
            name_parts: &["catalog_name", "name"],
            create_fields: &[
                "name",
                "catalog_name",
                "comment",
                "properties",
                "storage_root",
            ],
            update_fields: &[
                "comment",
                "properties",
                "owner",
                "enable_predictive_optimization",
            ],
            always_send: &[],
            clear_when_unset: &["comment", "properties"],
            protected: true,
            list_page: Some(LIST_PAGE),
            force_delete: true,
            holds: super::uc::Holds::WhenForced,
            derive,
            after_create: None,
            before_write: None,
            stable_id: Some("schema_id"),
            metastore_qualified_import: false,
            namespace: Some(super::Namespace::Schema),
            prefixed_in_development: true,
            references: REFERENCES,
            check: None,
            patch_as: &[],
            storage: super::uc::InStorage::Under("storage_root"),
        },
        schema: schema(),
        shared,
    }
}
