//! `databricks_volume`: a Unity Catalog volume, with its `/Volumes/…` path.

use super::uc::{UcKind, UcSpec};
use crate::Shared;
use crate::client::PageSize;
use brickform_core::provider::{AttrType, Attribute, Normalize, Reference, Schema};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Unity Catalog volume.")
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
                .describe("Volume name; a change renames it in place."),
        )
        .attr(
            Attribute::required("volume_type", AttrType::String)
                .force_new()
                .one_of(&["MANAGED", "EXTERNAL"])
                .describe("EXTERNAL needs storage_location."),
        )
        .attr(Attribute::optional("comment", AttrType::String))
        .attr(
            Attribute::optional_computed("storage_location", AttrType::String)
                .force_new()
                .normalize(Normalize::TrimTrailingSlash),
        )
        .attr(Attribute::optional_computed("owner", AttrType::String))
        .attr(Attribute::computed("id", AttrType::String).derived_from(&[
            "name",
            "catalog_name",
            "schema_name",
        ]))
        .attr(Attribute::computed("volume_id", AttrType::String))
        .attr(
            Attribute::computed("full_name", AttrType::String).derived_from(&[
                "name",
                "catalog_name",
                "schema_name",
            ]),
        )
        .attr(
            Attribute::computed("volume_path", AttrType::String)
                .derived_from(&["name", "catalog_name", "schema_name"])
                .describe("/Volumes/<catalog>/<schema>/<volume>"),
        )
}

fn derive(attrs: &mut Object) {
    let part = |k: &str| {
        attrs
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_lowercase()
    };
    let path = format!(
        "/Volumes/{}/{}/{}",
        part("catalog_name"),
        part("schema_name"),
        part("name")
    );
    attrs.insert("volume_path".into(), Value::from(path));
}

/// The page size of `volumes` lists: none. Unlike the other securables' lists, the
/// service has no "server picks" value for it.
pub const LIST_PAGE: Option<PageSize> = None;

/// A volume is a name within its schema, which is one within its catalog.
const REFERENCES: &[Reference] = &[
    Reference::to("catalog_name", &["databricks_catalog"], "name"),
    Reference::to("schema_name", &["databricks_schema"], "name").within("catalog_name"),
];

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_volume",
            collection: "volumes",
            name_parts: &["catalog_name", "schema_name", "name"],
            create_fields: &[
                "catalog_name",
                "schema_name",
                "name",
                "volume_type",
                "comment",
                "storage_location",
            ],
            update_fields: &["comment", "owner"],
            always_send: &[],
            clear_when_unset: &["comment"],
            protected: true,
            list_page: LIST_PAGE,
            force_delete: false,
            holds: super::uc::Holds::Always,
            derive,
            after_create: None,
            before_write: None,
            stable_id: Some("volume_id"),
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
