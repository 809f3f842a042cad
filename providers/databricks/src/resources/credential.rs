//! `databricks_credential`: a credential of Unity Catalog's Credentials API
//! (`/api/2.1/unity-catalog/credentials`), for a service (`purpose = "SERVICE"`: a cloud
//! identity code running on Databricks uses to reach a cloud service) or for storage
//! (`"STORAGE"`: the same object a storage credential is), as terraform-provider-databricks
//! has it (catalog/resource_credential.go, docs/resources/credential.md).
//!
//! The name is its id and a change replaces it (`SetForceNew`). Its names share one
//! namespace with storage credentials. `purpose` is not in the update request
//! (`UpdateCredentialRequest`), so a change of purpose replaces the credential too, where
//! the provider would send an update that changes nothing. Owner and isolation mode are set
//! by an update right after the create, as the provider does; a Databricks-managed GCP
//! service account is never sent in an update ("we can't update it at all"). An Azure
//! service principal's `client_secret` is write-only, as for storage credentials.

use super::storage_credential::{
    IDENTITIES, LIST_PAGE, SharedWords, identity_blocks, shared_attributes,
};
use super::uc::{UcKind, UcSpec};
use super::{OneTarget, exactly_one};
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, Finding, Normalize, Schema};
use brickform_core::value::Object;
use std::sync::Arc;

/// `CredentialPurpose`.
pub const PURPOSES: &[&str] = &["SERVICE", "STORAGE"];

fn s() -> AttrType {
    AttrType::String
}

pub fn schema() -> Schema {
    let schema = Schema::new()
        .describe("A Unity Catalog credential: the cloud identity a service credential (purpose SERVICE) lets code reach cloud services with, or a storage credential (STORAGE). Set exactly one of aws_iam_role, azure_managed_identity, azure_service_principal, databricks_gcp_service_account.")
        .attr(
            Attribute::required("name", s())
                .force_new()
                .normalize(Normalize::LowerCase)
                .describe("Unique among the metastore's storage and service credentials; a change replaces the credential."),
        )
        .attr(
            Attribute::required("purpose", s())
                .one_of(PURPOSES)
                .force_new()
                .describe("SERVICE or STORAGE. The service cannot change it: a change replaces the credential."),
        );
    let schema = shared_attributes(
        schema,
        SharedWords {
            read_only: "Usable for reads only (a storage credential's).",
            force_destroy: "Delete the credential even while objects use it.",
            force_update: "Update the credential even while objects use it.",
        },
    )
    .attr(Attribute::computed("credential_id", s()).describe("The credential's unique id."));
    identity_blocks().into_iter().fold(schema, Schema::block)
}

/// Exactly one identity block (the provider's `SetExactlyOneOf`).
fn one_identity(config: &Object) -> Vec<Finding> {
    let words = OneTarget {
        none: "no identity: the credential reaches nothing",
        many: "a credential holds one identity",
        many_hint: "declare one credential per identity",
    };
    exactly_one(config, IDENTITIES, |t| *t, &words).1
}

fn derive(_: &mut Object) {}

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_credential",
            collection: "credentials",
            name_parts: &["name"],
            create_fields: &[
                "name",
                "purpose",
                "comment",
                "read_only",
                "skip_validation",
                "aws_iam_role",
                "azure_managed_identity",
                "azure_service_principal",
                "databricks_gcp_service_account",
            ],
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
            stable_id: Some("credential_id"),
            metastore_qualified_import: false,
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
