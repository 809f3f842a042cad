//! `databricks_catalog`: a Unity Catalog catalog.

use super::uc::{UcKind, UcSpec, futures_util_box::BoxFuture};
use super::values;
use super::values::ty::map;
use crate::Shared;
use crate::client::Client;
use crate::client::PageSize;
use brickform_core::provider::{
    AttrType, Attribute, Normalize, ProviderError, ProviderResult, Remote, Schema,
};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Unity Catalog catalog. A new managed catalog's auto-created `default` schema is removed; declare a `default` databricks_schema to keep one.")
        .attr(Attribute::required("name", AttrType::String).normalize(Normalize::LowerCase).describe("Catalog name; a change renames it in place."))
        .attr(Attribute::optional("comment", AttrType::String))
        .attr(Attribute::optional("storage_root", AttrType::String).force_new().normalize(Normalize::TrimTrailingSlash))
        .attr(Attribute::optional("connection_name", AttrType::String).force_new().normalize(Normalize::LowerCase).describe("Foreign catalog: the connection it reads through."))
        .attr(Attribute::optional("provider_name", AttrType::String).force_new().normalize(Normalize::LowerCase))
        .attr(Attribute::optional("share_name", AttrType::String).force_new().normalize(Normalize::LowerCase))
        .attr(Attribute::optional("properties", map()))
        .attr(Attribute::optional("options", map()).force_new().describe("Foreign catalog: options of the source (e.g. database); the service does not change them in place, so a change replaces the catalog."))
        .attr(Attribute::optional_computed("owner", AttrType::String))
        .attr(Attribute::optional_computed("isolation_mode", AttrType::String).one_of(&["OPEN", "ISOLATED", "OPEN_IN_ACCOUNT"]))
        .attr(Attribute::optional_computed("enable_predictive_optimization", AttrType::String).one_of(values::PREDICTIVE_OPTIMIZATION))
        .attr(Attribute::optional("force_destroy", AttrType::Bool).server_default(false).describe("Delete the catalog even when it holds schemas."))
        .attr(Attribute::computed("id", AttrType::String).derived_from(&["name"]))
        .attr(Attribute::optional_computed("metastore_id", AttrType::String).describe("The metastore the catalog is in. When set, it must be the one the workspace is assigned to; a workspace assigned to another metastore since then makes the next apply stop instead of creating the catalog there."))
        .attr(Attribute::computed("full_name", AttrType::String).derived_from(&["name"]))
        .attr(Attribute::computed("storage_location", AttrType::String))
        .attr(Attribute::computed("catalog_type", AttrType::String).one_of(&[
            "MANAGED_CATALOG",
            "DELTASHARING_CATALOG",
            "FOREIGN_CATALOG",
            "INTERNAL_CATALOG",
            "MANAGED_ONLINE_CATALOG",
            "SYSTEM_CATALOG",
        ]))
}

/// The service gives every new managed catalog a `default` schema; brickform manages
/// schemas explicitly, so it goes (a configured `default` schema is created again by its own
/// block). A foreign or shared catalog's schemas are the source's: a `default` there is a
/// real schema of the source database, not the service's, and is left alone.
fn drop_default_schema<'a>(
    client: &'a Client,
    catalog: &'a Remote,
) -> BoxFuture<'a, ProviderResult<()>> {
    Box::pin(async move {
        let managed = catalog
            .attrs
            .get("catalog_type")
            .and_then(Value::as_str)
            .is_none_or(|t| t == "MANAGED_CATALOG");
        let mirrors = ["connection_name", "provider_name", "share_name"]
            .iter()
            .any(|k| catalog.attrs.get(*k).is_some_and(|v| !v.is_null()));
        if !managed || mirrors {
            return Ok(());
        }
        let path = format!("/api/2.1/unity-catalog/schemas/{}.default", catalog.id);
        super::gone_ok(
            client
                .idempotent()
                .delete(&path, &[("force", "true".to_string())])
                .await,
        )
    })
}

/// A configured `metastore_id` names the metastore the workspace is assigned to (a catalog
/// is always made in that one): otherwise the write would put it elsewhere than written, so
/// it is refused before anything is sent.
fn metastore_is_the_workspaces<'a>(
    client: &'a Client,
    config: &'a Object,
) -> BoxFuture<'a, ProviderResult<()>> {
    Box::pin(async move {
        let Some(wanted) = config.get("metastore_id").and_then(Value::as_str) else {
            return Ok(());
        };
        let current = client
            .get("/api/2.1/unity-catalog/current-metastore-assignment", &[])
            .await
            .map_err(super::err)?;
        let assigned = current
            .get("metastore_id")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        if assigned == wanted {
            return Ok(());
        }
        Err(ProviderError::invalid(format!(
            "metastore_id must be left out or be the metastore the workspace is assigned to ({assigned}), not {wanted}; if the workspace was assigned another metastore, set that one"
        )))
    })
}

fn derive(_: &mut Object) {}

/// The page size of `catalogs` lists: `max_results=0`, "server picks" (what the SDK sends).
pub const LIST_PAGE: PageSize = PageSize::new("max_results", "0");

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_catalog",
            collection: "catalogs",
            name_parts: &["name"],
            create_fields: &[
                "name",
                "comment",
                "storage_root",
                "connection_name",
                "provider_name",
                "share_name",
                "properties",
                "options",
            ],
            update_fields: &[
                "comment",
                "properties",
                "options",
                "owner",
                "isolation_mode",
                "enable_predictive_optimization",
            ],
            always_send: &[],
            clear_when_unset: &["comment", "properties", "options"],
            protected: true,
            list_page: Some(LIST_PAGE),
            force_delete: true,
            holds: super::uc::Holds::WhenForced,
            derive,
            after_create: Some(drop_default_schema),
            before_write: Some(metastore_is_the_workspaces),
            stable_id: None,
            metastore_qualified_import: false,
            namespace: Some(super::Namespace::Catalog),
            prefixed_in_development: false,
            references: &[],
            check: None,
            patch_as: &[],
            storage: super::uc::InStorage::Under("storage_root"),
        },
        schema: schema(),
        shared,
    }
}
