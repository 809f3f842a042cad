//! `databricks_external_location`: a cloud storage path and the storage credential that
//! reaches it, as terraform-provider-databricks has it
//! (catalog/resource_external_location.go).
//!
//! The name is its id and a change replaces it (`SetForceNew`); the url, the credential and
//! the rest change in place. The service refuses a url that overlaps another location's and
//! a credential that does not exist; `force_update` changes the url although tables or
//! volumes lie under it, `force_destroy` deletes it although they do.

use super::storage_credential::ISOLATION_MODES;
use super::uc::{UcKind, UcSpec};
use crate::Shared;
use crate::client::PageSize;
use brickform_core::provider::{AttrType, Attribute, BlockType, Normalize, Reference, Schema};
use brickform_core::value::Object;
use std::sync::Arc;

fn s() -> AttrType {
    AttrType::String
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Unity Catalog external location: a cloud storage path and the storage credential that reaches it.")
        .attr(
            Attribute::required("name", s())
                .force_new()
                .normalize(Normalize::LowerCase)
                .describe("Unique within the metastore; a change replaces the location."),
        )
        .attr(
            Attribute::required("url", s())
                // The provider ignores a trailing slash (ucDirectoryPathSlashOnlySuppressDiff).
                .normalize(Normalize::TrimTrailingSlash)
                .describe("s3://bucket/dir, abfss://container@account.dfs.core.windows.net/dir, gs://bucket/dir; it may not overlap another location's."),
        )
        .attr(
            Attribute::required("credential_name", s())
                .normalize(Normalize::LowerCase)
                .describe("The databricks_storage_credential that reaches the url."),
        )
        .attr(Attribute::optional("comment", s()))
        .attr(Attribute::optional_computed("owner", s()))
        .attr(Attribute::optional("read_only", AttrType::Bool).server_default(false))
        .attr(
            Attribute::optional("fallback", AttrType::Bool)
                .server_default(false)
                .describe("Fall back to cluster credentials where the storage credential is not enough."),
        )
        .attr(
            Attribute::optional("skip_validation", AttrType::Bool)
                .unanswered()
                .describe("Save the location without the service validating it."),
        )
        .attr(
            Attribute::optional("force_destroy", AttrType::Bool)
                .server_default(false)
                .describe("Delete the location even while catalogs, schemas, tables or volumes lie under it."),
        )
        .attr(
            Attribute::optional("force_update", AttrType::Bool)
                .unanswered()
                .describe("Update the location even while what lies under it depends on it."),
        )
        .attr(Attribute::optional_computed("isolation_mode", s()).one_of(ISOLATION_MODES))
        .attr(Attribute::optional("access_point", s()).describe("The ARN of an S3 access point (AWS)."))
        .attr(Attribute::optional_computed("enable_file_events", AttrType::Bool))
        .block(
            BlockType::single(
                "encryption_details",
                Schema::new().block(BlockType::single(
                    "sse_encryption_details",
                    Schema::new()
                        .attr(Attribute::optional("algorithm", s()).one_of(&["AWS_SSE_S3", "AWS_SSE_KMS"]))
                        .attr(Attribute::optional("aws_kms_key_arn", s())),
                )),
            )
            .describe("Server-side encryption of S3 requests."),
        )
        .unsupported(
            "file_event_queue",
            "brickform does not manage file event queues of external locations yet; set them up in the UI or with the Databricks CLI.",
        )
        .attr(Attribute::computed("id", s()).derived_from(&["name"]))
        .attr(Attribute::computed("metastore_id", s()))
        .attr(Attribute::computed("credential_id", s()).derived_from(&["credential_name"]))
        .attr(Attribute::computed("browse_only", AttrType::Bool))
        .attr(Attribute::computed("created_at", AttrType::Number))
        .attr(Attribute::computed("created_by", s()))
        .attr(Attribute::computed("updated_at", AttrType::Number).changes_on_write())
        .attr(Attribute::computed("updated_by", s()).changes_on_write())
}

fn derive(_: &mut Object) {}

/// The page size of `external-locations` lists: `max_results=0`, "server picks".
pub const LIST_PAGE: PageSize = PageSize::new("max_results", "0");

/// A location names its credential.
const REFERENCES: &[Reference] = &[Reference::to(
    "credential_name",
    &["databricks_storage_credential"],
    "name",
)];

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_external_location",
            collection: "external-locations",
            name_parts: &["name"],
            create_fields: &[
                "name",
                "url",
                "credential_name",
                "comment",
                "read_only",
                "fallback",
                "access_point",
                "encryption_details",
                "enable_file_events",
                "skip_validation",
            ],
            // Owner and isolation mode are set by an update right after the create, as the
            // provider does (`updateRequired(d, {"owner", "isolation_mode"})`).
            update_fields: &[
                "url",
                "credential_name",
                "comment",
                "owner",
                "read_only",
                "fallback",
                "isolation_mode",
                "access_point",
                "encryption_details",
                "enable_file_events",
                "skip_validation",
                "force_update",
            ],
            always_send: &[],
            clear_when_unset: &["comment", "access_point"],
            protected: false,
            list_page: Some(LIST_PAGE),
            force_delete: true,
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
            patch_as: &[("force_update", "force")],
            storage: super::uc::InStorage::At("url"),
        },
        schema: schema(),
        shared,
    }
}
