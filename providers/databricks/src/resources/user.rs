//! `databricks_user`: a workspace user, as the Terraform provider has it
//! (terraform-provider-databricks scim/resource_user.go). Its id is the SCIM id. The user
//! name forces a new user and is compared in any case (`EqualFoldDiffSuppress`,
//! resource_user.go:46), as the workspace answers it in the spelling SCIM holds. Destroy
//! deletes the user, or deactivates it with `disable_as_user_deletion`; it can take the
//! user's home folder and repos with it (`force_delete_home_dir`, `force_delete_repos`).

use super::scim::{Flavor, Identity, local_flag, with_entitlements};
use super::{bool_attr, str_attr};
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, Finding, Normalize, Schema};
use brickform_core::value::Object;
use std::sync::Arc;

pub fn kind(shared: Arc<Shared>) -> Identity {
    let schema = Schema::new()
        .describe("A user of the workspace, or of the account under an account-level provider (`account_id`; entitlements are a workspace's, refused there), where destroy deactivates it unless `disable_as_user_deletion = false`. Its id is the SCIM id; import it by that id.")
        .attr(
            Attribute::required("user_name", AttrType::String)
                .force_new()
                .normalize(Normalize::Principal)
                .describe("The user's e-mail address, in any case; a change makes a new user."),
        )
        .attr(Attribute::optional_computed(
            "display_name",
            AttrType::String,
        ))
        .attr(Attribute::optional("active", AttrType::Bool).server_default(true))
        .attr(
            Attribute::optional("external_id", AttrType::String)
                .describe("The identity provider's id of the user."),
        )
        .attr(local_flag(
            "force",
            "Take over a user of this name that already exists instead of failing.",
        ))
        .attr(local_flag(
            "disable_as_user_deletion",
            "On destroy, deactivate the user instead of deleting it (unset: yes in an account, no in a workspace).",
        ))
        .attr(local_flag(
            "force_delete_repos",
            "On destroy, delete the user's /Repos folder too.",
        ))
        .attr(local_flag(
            "force_delete_home_dir",
            "On destroy, delete the user's home folder too.",
        ))
        .attr(
            Attribute::computed("home", AttrType::String)
                .derived_from(&["user_name"])
                .describe("/Users/<user_name>"),
        )
        .attr(
            Attribute::computed("repos", AttrType::String)
                .derived_from(&["user_name"])
                .describe("/Repos/<user_name>"),
        )
        .attr(
            Attribute::computed("acl_principal_id", AttrType::String)
                .derived_from(&["user_name"])
                .describe("users/<user_name>: the user in access control lists."),
        )
        .attr(Attribute::computed("id", AttrType::String));
    Identity {
        flavor: Flavor {
            type_name: "databricks_user",
            what: "user",
            collection: "Users",
            urn: "urn:ietf:params:scim:schemas:core:2.0:User",
            name: ("user_name", "userName"),
            acl: "users",
            person: true,
        },
        schema: with_entitlements(schema).whole_writes(),
        shared,
        check,
    }
}

/// A deactivated user keeps its folders: the provider refuses the combination at delete
/// (resource_user.go:163-169); brickform says so before anything is applied.
pub fn check(config: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    if str_attr(config, "user_name") == Some("") {
        out.push(Finding::error(&["user_name"], "user_name is empty"));
    }
    if bool_attr(config, "disable_as_user_deletion") {
        for f in ["force_delete_repos", "force_delete_home_dir"] {
            if bool_attr(config, f) {
                out.push(
                    Finding::error(
                        &[f],
                        format!("{f}: cannot force delete if disable_as_user_deletion is set"),
                    )
                    .hint("a deactivated principal keeps its folders: set one or the other"),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use brickform_core::value::Value;

    #[test]
    fn deactivation_and_forced_folder_deletes_exclude_each_other() {
        let mut o = Object::default();
        o.insert("user_name".into(), Value::from("a@x.com"));
        assert!(check(&o).is_empty());
        o.insert("disable_as_user_deletion".into(), Value::Bool(true));
        o.insert("force_delete_home_dir".into(), Value::Bool(true));
        let found = check(&o);
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("cannot force delete"));
    }
}
