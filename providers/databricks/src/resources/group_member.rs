//! `databricks_group_member`: one member (a user, a service principal or a group, by SCIM
//! id) of a group, as the Terraform provider has it (terraform-provider-databricks
//! scim/resource_group_member.go). Its id is `<group_id>|<member_id>`, the provider's import
//! format; it is added with a SCIM PATCH `add members [{value}]` and removed with `remove
//! members[value eq "ID"]` (resource_group_member.go:86-103), and nothing of it can change
//! in place.

use super::scim::{get, patch_op, path};
use super::{err, gone_ok, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, Existing, Finding, OpContext, ProviderError, ProviderResult, Remote,
    ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

pub struct GroupMember {
    schema: Schema,
    shared: Arc<Shared>,
}

impl GroupMember {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe(
                "A member of a group, of the workspace or of the account under an account-level provider. Its id is <group_id>|<member_id>; import it by that id.",
            )
            .attr(
                Attribute::required("group_id", AttrType::String)
                    .force_new()
                    .describe("The group's SCIM id (databricks_group.<name>.id)."),
            )
            .attr(
                Attribute::required("member_id", AttrType::String)
                    .force_new()
                    .describe(
                        "The SCIM id of the user, service principal or group that is a member.",
                    ),
            )
            .attr(Attribute::computed("id", AttrType::String));
        GroupMember { schema, shared }
    }
}

/// `group|member` as its two ids.
fn split(id: &str) -> Option<(&str, &str)> {
    id.split_once('|')
        .filter(|(g, m)| !g.is_empty() && !m.is_empty())
}

fn remote(group: &str, member: &str) -> Remote {
    let mut attrs = Object::default();
    let id = format!("{group}|{member}");
    attrs.insert("id".into(), Value::from(id.as_str()));
    attrs.insert("group_id".into(), Value::from(group));
    attrs.insert("member_id".into(), Value::from(member));
    Remote { id, attrs }
}

/// The group's path in the SCIM API of the configuration: the workspace's, or the
/// account's for an account-level one (the same PATCH, resource_group_member.go).
fn patch_path(shared: &Shared, group: &str) -> String {
    path(shared, &format!("Groups/{group}"))
}

#[async_trait]
impl ResourceKind for GroupMember {
    fn type_name(&self) -> &'static str {
        "databricks_group_member"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = Vec::new();
        for k in ["group_id", "member_id"] {
            if str_attr(config, k).is_some_and(|v| v.trim().is_empty()) {
                out.push(
                    Finding::error(&[k], format!("{k} is empty"))
                        .hint("the SCIM id of a group, user or service principal (its `id`)"),
                );
            }
        }
        if let (Some(g), Some(m)) = (str_attr(config, "group_id"), str_attr(config, "member_id"))
            && !g.is_empty()
            && g == m
        {
            out.push(Finding::error(
                &["member_id"],
                "a group cannot be a member of itself",
            ));
        }
        out
    }
    fn plan_computed(&self, config: &Object) -> Object {
        match (str_attr(config, "group_id"), str_attr(config, "member_id")) {
            (Some(g), Some(m)) => remote(g, m)
                .attrs
                .into_iter()
                .filter(|(k, _)| k == "id")
                .collect(),
            _ => Object::default(),
        }
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.any_client()?;
        let group = str_attr(config, "group_id").unwrap_or("");
        let member = str_attr(config, "member_id").unwrap_or("");
        let body = patch_op("add", "members", json!([{ "value": member }]));
        // Adding a member twice changes nothing: repeating it after a lost answer is safe.
        client
            .patch(&patch_path(&self.shared, group), &body)
            .await
            .map_err(err)?;
        Ok(remote(group, member))
    }

    /// Present while the group lists the member (resource_group_member.go:135-149).
    async fn read(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        let Some((group, member)) = split(id) else {
            return Err(ProviderError::invalid(format!(
                "group member id {id:?} is not <group_id>|<member_id>"
            )));
        };
        let Some(g) = get(&self.shared, "Groups", group).await? else {
            return Ok(None);
        };
        let held = g
            .get("members")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .any(|m| m.get("value").and_then(Json::as_str) == Some(member));
        Ok(held.then(|| remote(group, member)))
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        _: &Object,
    ) -> ProviderResult<Remote> {
        self.read(ctx, id, prior)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("group member {id} no longer exists")))
    }

    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let Some((group, member)) = split(id) else {
            return Ok(());
        };
        let client = self.shared.any_client()?;
        let body = patch_op(
            "remove",
            &format!("members[value eq \"{member}\"]"),
            Json::Null,
        );
        gone_ok(client.patch(&patch_path(&self.shared, group), &body).await)
    }

    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        match (str_attr(config, "group_id"), str_attr(config, "member_id")) {
            (Some(g), Some(m)) => Some(format!("{g}|{m}")),
            _ => None,
        }
    }

    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.read(ctx, key, &Object::default()).await
    }

    /// A membership that is already there is not in the way: adding it again changes
    /// nothing, as the provider's create does.
    async fn find_existing(&self, _: &OpContext, _: &Object) -> ProviderResult<Vec<Existing>> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_the_providers_pair() {
        assert_eq!(split("12|34"), Some(("12", "34")));
        assert_eq!(split("12|"), None);
        assert_eq!(split("1234"), None);
        assert_eq!(remote("1", "2").id, "1|2");
        let k = GroupMember::new(Arc::new(Shared::default()));
        let mut o = Object::default();
        o.insert("group_id".into(), Value::from("1"));
        o.insert("member_id".into(), Value::from(""));
        assert_eq!(k.check(&o).len(), 1);
    }
}
