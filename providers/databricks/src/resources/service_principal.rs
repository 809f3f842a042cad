//! `databricks_service_principal`: a workspace service principal, as the Terraform provider
//! has it (terraform-provider-databricks scim/resource_service_principal.go). Its id is the
//! SCIM id; its application id is given, or made by the workspace (a UUID) when not, and a
//! change of it makes a new one. Like a user, destroy deletes or deactivates it.

use super::scim::{Flavor, Identity, local_flag, with_entitlements};
use super::user;
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, Finding, Schema};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

pub fn kind(shared: Arc<Shared>) -> Identity {
    let schema = Schema::new()
        .describe("A service principal of the workspace, or of the account under an account-level provider (`account_id`; entitlements are a workspace's, refused there), where destroy deactivates it unless `disable_as_user_deletion = false`. Its id is the SCIM id; import it by that id.")
        .attr(
            Attribute::optional_computed("application_id", AttrType::String)
                .force_new()
                .describe("Its application id (on Azure, the Entra ID application's); made by the workspace when not set."),
        )
        .attr(Attribute::optional_computed("display_name", AttrType::String))
        .attr(Attribute::optional("active", AttrType::Bool).server_default(true))
        .attr(
            Attribute::optional("external_id", AttrType::String)
                .describe("The identity provider's id of the service principal."),
        )
        .attr(local_flag(
            "force",
            "Take over a service principal of this application id that already exists instead of failing.",
        ))
        .attr(local_flag(
            "disable_as_user_deletion",
            "On destroy, deactivate the service principal instead of deleting it (unset: yes in an account, no in a workspace).",
        ))
        .attr(local_flag(
            "force_delete_repos",
            "On destroy, delete its /Repos folder too.",
        ))
        .attr(local_flag(
            "force_delete_home_dir",
            "On destroy, delete its home folder too.",
        ))
        .attr(
            Attribute::computed("home", AttrType::String)
                .derived_from(&["application_id"])
                .describe("/Users/<application_id>"),
        )
        .attr(
            Attribute::computed("repos", AttrType::String)
                .derived_from(&["application_id"])
                .describe("/Repos/<application_id>"),
        )
        .attr(
            Attribute::computed("acl_principal_id", AttrType::String)
                .derived_from(&["application_id"])
                .describe("servicePrincipals/<application_id>: the service principal in access control lists."),
        )
        .attr(Attribute::computed("id", AttrType::String));
    Identity {
        flavor: Flavor {
            type_name: "databricks_service_principal",
            what: "service principal",
            collection: "ServicePrincipals",
            urn: "urn:ietf:params:scim:schemas:core:2.0:ServicePrincipal",
            name: ("application_id", "applicationId"),
            acl: "servicePrincipals",
            person: true,
        },
        schema: with_entitlements(schema).whole_writes(),
        shared,
        check,
    }
}

/// At least one of `application_id` and `display_name` (resource_service_principal.go:144-145),
/// and the user's rules on deactivation.
fn check(config: &Object) -> Vec<Finding> {
    let set = |k: &str| {
        config
            .get(k)
            .is_some_and(|v| !v.is_null() && !matches!(v, Value::String(s) if s.is_empty()))
    };
    let mut out = Vec::new();
    if !set("application_id") && !set("display_name") {
        out.push(
            Finding::error(
                &[],
                "a service principal needs application_id or display_name",
            )
            .hint("set display_name (the workspace makes the application id), or application_id"),
        );
    }
    out.extend(user::check(config));
    out
}
