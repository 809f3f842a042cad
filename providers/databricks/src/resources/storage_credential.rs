//! `databricks_storage_credential`: the cloud identity Unity Catalog reaches storage with
//! (an AWS IAM role, an Azure managed identity or service principal, a Databricks-managed
//! GCP service account), as terraform-provider-databricks has it
//! (catalog/resource_storage_credential.go).
//!
//! The name is its id and a change replaces it (`tf:"force_new"` in the provider). An Azure
//! service principal's `client_secret` is write-only: the service never answers it, so state
//! keeps only its fingerprint. `force_destroy` deletes it while external locations still use
//! it; `force_update` changes it although they do (the PATCH's `force`).

use super::uc::{UcKind, UcSpec};
use super::{OneTarget, exactly_one};
use crate::Shared;
use crate::client::PageSize;
use brickform_core::provider::{AttrType, Attribute, BlockType, Finding, Normalize, Schema};
use brickform_core::value::Object;
use std::sync::Arc;

/// `IsolationMode`: whether every workspace of the metastore may use it, or only those bound.
pub const ISOLATION_MODES: &[&str] = &["ISOLATION_MODE_OPEN", "ISOLATION_MODE_ISOLATED"];

/// The identity blocks, exactly one of which a credential holds (the provider's
/// `alofCred`, catalog/resource_metastore_data_access.go:21; the API takes one).
pub const IDENTITIES: &[&str] = &[
    "aws_iam_role",
    "azure_managed_identity",
    "azure_service_principal",
    "databricks_gcp_service_account",
];

fn s() -> AttrType {
    AttrType::String
}

pub fn schema() -> Schema {
    let schema = Schema::new()
        .describe("A Unity Catalog storage credential: the cloud identity external locations reach storage with. Set exactly one of aws_iam_role, azure_managed_identity, azure_service_principal, databricks_gcp_service_account.")
        .attr(
            Attribute::required("name", s())
                .force_new()
                .normalize(Normalize::LowerCase)
                .describe("Unique within the metastore; a change replaces the credential."),
        );
    let schema = shared_attributes(
        schema,
        SharedWords {
            read_only: "Usable for reads only.",
            force_destroy: "Delete the credential even while external locations use it.",
            force_update: "Update the credential even while external locations use it.",
        },
    )
    .attr(Attribute::computed("storage_credential_id", s()));
    identity_blocks().into_iter().fold(schema, Schema::block)
}

/// The descriptions that differ between storage and service credentials: what may use one.
pub struct SharedWords {
    pub read_only: &'static str,
    pub force_destroy: &'static str,
    pub force_update: &'static str,
}

/// The attributes storage and service credentials share after their name (and a service
/// credential's purpose), in the order both list them: `CredentialInfo` and
/// `StorageCredentialInfo` have the same fields in the SDK.
pub fn shared_attributes(schema: Schema, words: SharedWords) -> Schema {
    schema
        .attr(Attribute::optional("comment", s()))
        .attr(Attribute::optional_computed("owner", s()))
        .attr(
            Attribute::optional("read_only", AttrType::Bool)
                .server_default(false)
                .describe(words.read_only),
        )
        .attr(
            Attribute::optional("skip_validation", AttrType::Bool)
                .unanswered()
                .describe("Save the credential without the service validating it."),
        )
        .attr(
            Attribute::optional("force_destroy", AttrType::Bool)
                .server_default(false)
                .describe(words.force_destroy),
        )
        .attr(
            Attribute::optional("force_update", AttrType::Bool)
                .unanswered()
                .describe(words.force_update),
        )
        .attr(
            Attribute::optional_computed("isolation_mode", s())
                .one_of(ISOLATION_MODES)
                .describe("ISOLATION_MODE_ISOLATED: only the workspaces bound to it may use it."),
        )
        .attr(Attribute::computed("metastore_id", s()).describe("The metastore it is in."))
        .attr(Attribute::computed("id", s()).derived_from(&["name"]))
}

/// The identity blocks a credential holds one of, as storage and service credentials both
/// have them (`CredentialInfo` and `StorageCredentialInfo` share them in the SDK).
pub fn identity_blocks() -> Vec<BlockType> {
    vec![
        BlockType::single(
            "aws_iam_role",
            Schema::new()
                .attr(Attribute::required("role_arn", s()))
                .attr(Attribute::computed("external_id", s()))
                .attr(Attribute::computed("unity_catalog_iam_arn", s())),
        )
        .describe("An AWS IAM role (role_arn); the service answers the external id and the IAM user that assumes it."),
        BlockType::single(
            "azure_managed_identity",
            Schema::new()
                .attr(Attribute::required("access_connector_id", s()))
                .attr(Attribute::optional("managed_identity_id", s()))
                .attr(Attribute::computed("credential_id", s())),
        )
        .describe("An Azure Databricks access connector's managed identity."),
        BlockType::single(
            "azure_service_principal",
            Schema::new()
                .attr(Attribute::required("directory_id", s()))
                .attr(Attribute::required("application_id", s()))
                .attr(
                    Attribute::required("client_secret", s())
                        .sensitive()
                        // The service never answers it: its absence is no drift (the
                        // provider puts it back from the configuration at each read);
                        // a rotated one differs from the fingerprint state keeps.
                        .unanswered()
                        .describe("Write-only: never answered, state keeps a fingerprint."),
                ),
        )
        .describe("An Azure service principal (legacy)."),
        BlockType::single(
            "databricks_gcp_service_account",
            Schema::new()
                .attr(Attribute::computed("email", s()))
                .attr(Attribute::computed("credential_id", s())),
        )
        .describe("A GCP service account Databricks creates and manages; the service answers its e-mail."),
    ]
}

/// Exactly one identity block: the API takes one, and a credential with none reaches nothing.
fn one_identity(config: &Object) -> Vec<Finding> {
    let words = OneTarget {
        none: "no identity: the storage credential reaches no storage",
        many: "a storage credential holds one identity",
        many_hint: "declare one storage credential per identity",
    };
    exactly_one(config, IDENTITIES, |t| *t, &words).1
}

fn derive(_: &mut Object) {}

/// The page size of `storage-credentials` lists: `max_results=0`, "server picks".
pub const LIST_PAGE: PageSize = PageSize::new("max_results", "0");

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_storage_credential",
            collection: "storage-credentials",
            name_parts: &["name"],
            create_fields: &[
                "name",
                "comment",
                "read_only",
                "skip_validation",
                "aws_iam_role",
                "azure_managed_identity",
                "azure_service_principal",
                "databricks_gcp_service_account",
            ],
            // Owner and isolation mode are set by an update right after the create, as the
            // provider does (`updateRequired(d, {"owner", "isolation_mode"})`).
            update_fields: &[
                "comment",
                "owner",
                "read_only",
                "isolation_mode",
                "skip_validation",
                "force_update",
                "aws_iam_role",
                "azure_managed_identity",
                "azure_service_principal",
            ],
            always_send: &[],
            clear_when_unset: &["comment"],
            protected: false,
            list_page: Some(LIST_PAGE),
            force_delete: true,
            holds: super::uc::Holds::Nothing,
            derive,
            after_create: None,
            before_write: None,
            stable_id: Some("storage_credential_id"),
            // The provider's id may be `METASTORE_ID|NAME` (parseStorageCredentialId).
            metastore_qualified_import: true,
            namespace: None,
            prefixed_in_development: false,
            references: &[],
            check: Some(one_identity),
            patch_as: &[("force_update", "force")],
            storage: super::uc::InStorage::Nowhere,
        },
        schema: schema(),
        shared,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use brickform_core::value::Value;

    #[test]
    fn exactly_one_identity() {
        let block = || Value::Object(Default::default());
        let none = Object::default();
        assert_eq!(one_identity(&none).len(), 1);
        let one = Object::from_iter([("aws_iam_role".to_string(), block())]);
        assert!(one_identity(&one).is_empty());
        let two = Object::from_iter([
            ("aws_iam_role".to_string(), block()),
            ("azure_managed_identity".to_string(), block()),
        ]);
        let f = one_identity(&two);
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("both set"), "{}", f[0].message);
    }
}
