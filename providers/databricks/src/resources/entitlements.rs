//! `databricks_entitlements`: the entitlements of one user, group or service principal that
//! brickform does not otherwise manage (the `users` group, a user an identity provider
//! syncs), as the Terraform provider has it (terraform-provider-databricks
//! scim/resource_entitlement.go). Its id is `group/<id>`, `user/<id>` or `spn/<id>`, the
//! provider's import format (getId, l.111-126); create and update PATCH `replace
//! entitlements` with the flags set, delete PATCHes `remove` of them (patchEntitlements,
//! l.128-170), so the principal keeps what it had besides.
//!
//! The same flags on a `databricks_group`/`databricks_user`/`databricks_service_principal`
//! manage the same entitlements: declare them in one place only, as the provider documents.

use super::scim::{
    ENTITLEMENTS, check_entitlements, entitlements_body, get, patch_op, path, read_entitlements,
    with_entitlements,
};
use super::{bool_attr, err, gone_ok, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, Existing, Finding, OpContext, ProviderError, ProviderResult, Remote,
    ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

/// The principal attributes, the id prefix the provider gives each, and its SCIM collection.
const PRINCIPALS: [(&str, &str, &str); 3] = [
    ("group_id", "group", "Groups"),
    ("user_id", "user", "Users"),
    ("service_principal_id", "spn", "ServicePrincipals"),
];

pub struct Entitlements {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Entitlements {
    pub fn new(shared: Arc<Shared>) -> Self {
        let mut schema = Schema::new().describe(
            "The entitlements of one group, user or service principal. Its id is group/<id>, user/<id> or spn/<id>; import it by that id.",
        );
        for (attr, _, collection) in PRINCIPALS {
            schema = schema.attr(
                Attribute::optional(attr, AttrType::String)
                    .force_new()
                    .describe(match collection {
                        "Groups" => "The group's SCIM id (databricks_group.<name>.id, or data \"databricks_group\" for users or admins).",
                        "Users" => "The user's SCIM id.",
                        _ => "The service principal's SCIM id.",
                    }),
            );
        }
        let schema = with_entitlements(schema.attr(Attribute::computed("id", AttrType::String)));
        Entitlements { schema, shared }
    }
}

/// The principal a configuration or an id names: (id prefix, SCIM collection, SCIM id).
fn principal_of(config: &Object) -> Option<(&'static str, &'static str, &str)> {
    PRINCIPALS.iter().find_map(|(attr, prefix, collection)| {
        str_attr(config, attr)
            .filter(|v| !v.is_empty())
            .map(|v| (*prefix, *collection, v))
    })
}

fn parse_id(id: &str) -> Option<(&'static str, &'static str, &'static str, &str)> {
    let (prefix, scim_id) = id.split_once('/')?;
    let prefix = prefix.to_ascii_lowercase();
    PRINCIPALS
        .iter()
        .find(|(_, p, _)| *p == prefix)
        .filter(|_| !scim_id.is_empty())
        .map(|(attr, p, collection)| (*attr, *p, *collection, scim_id))
}

fn patch(op: &str, value: Json) -> Json {
    patch_op(op, "entitlements", value)
}

/// The principal an id names, or the error every operation but delete gives for another id.
fn principal_in(id: &str) -> ProviderResult<(&'static str, &'static str, &'static str, &str)> {
    parse_id(id).ok_or_else(|| {
        ProviderError::invalid(format!(
            "entitlements id {id:?} is not group/<id>, user/<id> or spn/<id>"
        ))
    })
}

#[async_trait]
impl ResourceKind for Entitlements {
    fn type_name(&self) -> &'static str {
        "databricks_entitlements"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        let named: Vec<&str> = PRINCIPALS
            .iter()
            .map(|(attr, _, _)| *attr)
            .filter(|attr| config.contains_key(*attr) && !config[*attr].is_null())
            .collect();
        let mut out = check_entitlements(config);
        match named.as_slice() {
            [] => out.push(
                Finding::error(
                    &["group_id"],
                    "one of group_id, user_id or service_principal_id is required",
                )
                .hint("the SCIM id of the principal whose entitlements these are"),
            ),
            [attr] => {
                if str_attr(config, attr).is_some_and(|v| v.trim().is_empty()) {
                    out.push(Finding::error(&[attr], format!("{attr} is empty")));
                }
            }
            [_, second, ..] => out.push(Finding::error(
                &[second],
                format!(
                    "set one of group_id, user_id or service_principal_id, not {}",
                    named.join(" and ")
                ),
            )),
        }
        out
    }
    fn plan_computed(&self, config: &Object) -> Object {
        principal_of(config)
            .map(|(prefix, _, id)| {
                Object::from_iter([("id".to_string(), Value::from(format!("{prefix}/{id}")))])
            })
            .unwrap_or_default()
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let (prefix, collection, scim_id) = principal_of(config).ok_or_else(|| {
            ProviderError::invalid("one of group_id, user_id or service_principal_id is required")
        })?;
        let client = self.shared.client()?;
        // Replacing with the same set is safe to repeat after a lost answer.
        client
            .idempotent()
            .patch(
                &path(&self.shared, &format!("{collection}/{scim_id}")),
                &patch("replace", entitlements_body(config)),
            )
            .await
            .map_err(err)?;
        let id = format!("{prefix}/{scim_id}");
        self.read(ctx, &id, config)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("{collection} {scim_id} is gone")))
    }

    /// What the principal holds now; gone with the principal.
    async fn read(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        let (attr, prefix, collection, scim_id) = principal_in(id)?;
        // A workspace's only: refused under an account-level configuration.
        self.shared.client()?;
        let Some(answer) = get(&self.shared, collection, scim_id).await? else {
            return Ok(None);
        };
        let mut attrs = Object::default();
        let id = format!("{prefix}/{scim_id}");
        attrs.insert("id".into(), Value::from(id.as_str()));
        attrs.insert(attr.into(), Value::from(scim_id));
        read_entitlements(&answer, &mut attrs);
        Ok(Some(Remote { id, attrs }))
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        _: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let (_, _, collection, scim_id) = principal_in(id)?;
        let client = self.shared.client()?;
        client
            .idempotent()
            .patch(
                &path(&self.shared, &format!("{collection}/{scim_id}")),
                &patch("replace", entitlements_body(config)),
            )
            .await
            .map_err(err)?;
        self.read(ctx, id, config)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("{collection} {scim_id} is gone")))
    }

    /// Takes away the entitlements this resource set; with none set there is nothing to do
    /// (resource_entitlement.go:134-137).
    async fn delete(&self, _: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let Some((_, _, collection, scim_id)) = parse_id(id) else {
            return Ok(());
        };
        let held: Vec<Json> = ENTITLEMENTS
            .iter()
            .filter(|(flag, _)| bool_attr(prior, flag))
            .map(|(_, v)| json!({ "value": v }))
            .collect();
        if held.is_empty() {
            return Ok(());
        }
        let client = self.shared.client()?;
        gone_ok(
            client
                .idempotent()
                .patch(
                    &path(&self.shared, &format!("{collection}/{scim_id}")),
                    &patch("remove", Json::Array(held)),
                )
                .await,
        )
    }

    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        principal_of(config).map(|(prefix, _, id)| format!("{prefix}/{id}"))
    }

    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.read(ctx, key, &Object::default()).await
    }

    /// Every principal has entitlements: there is nothing to be in the way of.
    async fn find_existing(&self, _: &OpContext, _: &Object) -> ProviderResult<Vec<Existing>> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> Object {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect()
    }

    #[test]
    fn one_principal_is_named_and_the_id_is_the_providers() {
        let k = Entitlements::new(Arc::new(Shared::default()));
        assert_eq!(k.check(&cfg(&[])).len(), 1);
        assert_eq!(
            k.check(&cfg(&[("group_id", "1"), ("user_id", "2")])).len(),
            1
        );
        assert_eq!(k.check(&cfg(&[("user_id", "")])).len(), 1);
        assert!(k.check(&cfg(&[("service_principal_id", "7")])).is_empty());
        assert_eq!(
            k.plan_computed(&cfg(&[("service_principal_id", "7")]))
                .get("id"),
            Some(&Value::from("spn/7"))
        );
        assert_eq!(
            parse_id("group/12"),
            Some(("group_id", "group", "Groups", "12"))
        );
        assert_eq!(parse_id("USER/3").map(|p| p.2), Some("Users"));
        assert_eq!(parse_id("spn/"), None);
        assert_eq!(parse_id("team/1"), None);
        assert_eq!(parse_id("12"), None);
    }
}
