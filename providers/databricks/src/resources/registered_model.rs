//! `databricks_registered_model`: a model of Unity Catalog's model registry
//! (`/api/2.1/unity-catalog/models`), a securable of its schema named
//! `catalog.schema.model`, as the Terraform provider's resource of that name.

use super::uc::{UcKind, UcSpec};
use crate::Shared;
use crate::client::PageSize;
use brickform_core::provider::{AttrType, Attribute, Normalize, Reference, Schema};
use brickform_core::value::Object;
use std::sync::Arc;

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Unity Catalog registered model (MLflow models in Unity Catalog).")
        .attr(
            Attribute::required("catalog_name", AttrType::String)
                .force_new()
                .normalize(Normalize::LowerCase),
        )
        .attr(
            Attribute::required("schema_name", AttrType::String)
                .force_new()
                .normalize(Normalize::LowerCase),
        )
        .attr(
            Attribute::required("name", AttrType::String)
                .normalize(Normalize::LowerCase)
                .describe("Model name; a change renames it in place (its versions stay with it)."),
        )
        .attr(Attribute::optional("comment", AttrType::String))
        .attr(
            Attribute::optional_computed("storage_location", AttrType::String)
                .force_new()
                .normalize(Normalize::TrimTrailingSlash)
                .describe(
                    "Where its versions' files are; the schema's managed location when unset.",
                ),
        )
        .attr(Attribute::optional_computed("owner", AttrType::String))
        .attr(
            Attribute::computed("id", AttrType::String)
                .derived_from(&["name", "catalog_name", "schema_name"])
                .describe("The full name, CATALOG.SCHEMA.MODEL."),
        )
        .attr(
            Attribute::computed("full_name", AttrType::String).derived_from(&[
                "name",
                "catalog_name",
                "schema_name",
            ]),
        )
}

/// Nothing is derived: the answer holds every attribute.
fn derive(_: &mut Object) {}

/// The page size of `models` lists of one schema: none, the server's (10000, as the SDKs'
/// ListRegisteredModelsRequest says of a list with catalog and schema).
pub const LIST_PAGE: Option<PageSize> = None;

/// A model is a name within its schema, which is one within its catalog.
const REFERENCES: &[Reference] = &[
    Reference::to("catalog_name", &["databricks_catalog"], "name"),
    Reference::to("schema_name", &["databricks_schema"], "name").within("catalog_name"),
];

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_registered_model",
            collection: "models",
            name_parts: &["catalog_name", "schema_name", "name"],
            create_fields: &[
                "catalog_name",
                "schema_name",
                "name",
                "comment",
                "storage_location",
            ],
            update_fields: &["comment", "owner"],
            always_send: &[],
            clear_when_unset: &["comment"],
            // Its versions are trained models, which a replacement would lose.
            protected: true,
            list_page: LIST_PAGE,
            force_delete: false,
            holds: super::uc::Holds::Nothing,
            derive,
            after_create: None,
            before_write: None,
            stable_id: None,
            metastore_qualified_import: false,
            namespace: None,
            prefixed_in_development: false,
            references: REFERENCES,
            check: None,
            patch_as: &[],
            storage: super::uc::InStorage::Nowhere,
        },
        schema: schema(),
        shared,
    }
}
