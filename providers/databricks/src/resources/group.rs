//! `databricks_group`: a workspace group, as the Terraform provider has it
//! (terraform-provider-databricks scim/resource_group.go). Its id is the SCIM id; a rename
//! is an update (the provider PUTs the whole group with the members it read,
//! scim/groups.go:75-91). The built-in `users` and `admins` cannot be declared: the provider
//! refuses the names before any call (resource_group.go:24-26, issue #1089), and the
//! workspace answers that they exist; use `data "databricks_group"` to name them.

use super::scim::{Flavor, Identity, local_flag, with_entitlements};
use super::str_attr;
use crate::Shared;
use brickform_core::provider::{AttrType, Attribute, Finding, Schema};
use brickform_core::value::Object;
use std::sync::Arc;

/// The groups every workspace has.
pub const BUILT_IN: [&str; 2] = ["users", "admins"];

pub fn kind(shared: Arc<Shared>) -> Identity {
    let schema = Schema::new()
        .describe("A group of the workspace, or of the account under an account-level provider (`account_id`; entitlements are a workspace's, refused there). Its id is the SCIM id; import it by that id.")
        .attr(
            Attribute::required("display_name", AttrType::String)
                .describe("The group's name; a change renames it in place. Not `users` or `admins`, the built-in groups."),
        )
        .attr(
            Attribute::optional("external_id", AttrType::String)
                .force_new()
                .describe("The identity provider's id of the group."),
        )
        .attr(local_flag(
            "force",
            "Take over a group of this name that already exists instead of failing.",
        ))
        .attr(
            Attribute::computed("acl_principal_id", AttrType::String)
                .derived_from(&["display_name"])
                .describe("groups/<display_name>: the group in access control lists."),
        )
        .attr(Attribute::computed("id", AttrType::String));
    let schema = with_entitlements(schema).whole_writes();
    Identity {
        flavor: Flavor {
            type_name: "databricks_group",
            what: "group",
            collection: "Groups",
            urn: "urn:ietf:params:scim:schemas:core:2.0:Group",
            name: ("display_name", "displayName"),
            acl: "groups",
            person: false,
        },
        schema,
        shared,
        check,
    }
}

/// The built-in groups cannot be declared, in the provider's words (resource_group.go:25-26).
fn check(config: &Object) -> Vec<Finding> {
    match str_attr(config, "display_name") {
        Some(n) if BUILT_IN.contains(&n) => vec![
            Finding::error(
                &["display_name"],
                format!("expected display_name to not be any of [users admins], got {n}"),
            )
            .hint(format!(
                "`{n}` is a built-in group: name it with data \"databricks_group\" {{ display_name = \"{n}\" }} instead"
            )),
        ],
        Some("") => vec![Finding::error(&["display_name"], "display_name is empty")],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brickform_core::value::Value;

    #[test]
    fn the_built_in_groups_are_refused_and_workspace_consume_stands_alone() {
        let k = kind(Arc::new(Shared::default()));
        let cfg = |name: &str| {
            let mut o = Object::default();
            o.insert("display_name".into(), Value::from(name));
            o
        };
        use brickform_core::provider::ResourceKind;
        assert_eq!(k.check(&cfg("users")).len(), 1);
        assert_eq!(k.check(&cfg("admins")).len(), 1);
        assert!(
            k.check(&cfg("Users")).is_empty(),
            "names are case-sensitive"
        );
        let mut both = cfg("eng");
        both.insert("workspace_consume".into(), Value::Bool(true));
        both.insert("workspace_access".into(), Value::Bool(true));
        assert_eq!(k.check(&both).len(), 1);
        assert_eq!(
            k.plan_computed(&cfg("eng")).get("acl_principal_id"),
            Some(&Value::from("groups/eng"))
        );
    }
}
