//! `databricks_secret_acl`: one principal's permission (READ, WRITE or MANAGE) on one secret
//! scope, as in the Terraform provider, through `/api/2.0/secrets/acls/…`. A put replaces
//! the principal's permission, so a change is an update in place; what the principal
//! already holds where a create would write is found, and the plan asks for an import
//! rather than overwrite it unseen.

use super::{err, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, ErrorKind, Normalize, OpContext, ProviderError, ProviderResult, Remote,
    ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;
use std::time::Duration;

/// The permissions a secret ACL gives, weakest first.
const PERMISSIONS: &[&str] = &["READ", "WRITE", "MANAGE"];

/// How long a written ACL may take to read back: the service caches ACLs, and the
/// Terraform provider repeats its put until a read shows it (for five minutes).
const SETTLE: Duration = Duration::from_secs(60);

pub struct SecretAcl {
    schema: Schema,
    shared: Arc<Shared>,
}

impl SecretAcl {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("One principal's permission on a secret scope; the scope's other ACLs are left alone.")
            .attr(
                Attribute::required("scope", AttrType::String)
                    .force_new()
                    .describe("The secret scope."),
            )
            .attr(
                Attribute::required("principal", AttrType::String)
                    .force_new()
                    .normalize(Normalize::Principal)
                    .describe("A user (user name), group (display name; `users` for every user) or service principal (application id)."),
            )
            .attr(
                Attribute::required("permission", AttrType::String)
                    .one_of(PERMISSIONS)
                    .describe("READ (read and list secrets), WRITE (and write them) or MANAGE (and change ACLs)."),
            )
            .attr(
                Attribute::computed("id", AttrType::String)
                    .derived_from(&["scope", "principal"])
                    .describe("SCOPE|||PRINCIPAL, the Terraform provider's form."),
            );
        SecretAcl { schema, shared }
    }
}

/// The scope and principal of an id, `SCOPE|||PRINCIPAL`.
fn split(id: &str) -> ProviderResult<(&str, &str)> {
    id.split_once("|||")
        .filter(|(s, p)| !s.is_empty() && !p.is_empty())
        .ok_or_else(|| {
            ProviderError::invalid(format!(
                "a secret ACL is imported as SCOPE|||PRINCIPAL, for example app|||data-scientists; got {id:?}"
            ))
        })
}

fn id_of(scope: &str, principal: &str) -> String {
    format!("{scope}|||{principal}")
}

impl SecretAcl {
    /// The principal's permission on the scope; `None` when it has none, or the scope is
    /// gone.
    async fn permission(
        &self,
        client: &crate::client::Client,
        scope: &str,
        principal: &str,
    ) -> ProviderResult<Option<String>> {
        let query = [
            ("scope", scope.to_string()),
            ("principal", principal.to_string()),
        ];
        match client.get("/api/2.0/secrets/acls/get", &query).await {
            Ok(a) => Ok(a
                .get("permission")
                .and_then(Json::as_str)
                .map(str::to_string)),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    fn remote(scope: &str, principal: &str, permission: &str) -> Remote {
        let id = id_of(scope, principal);
        let mut attrs = Object::default();
        attrs.insert("scope".into(), Value::from(scope));
        attrs.insert("principal".into(), Value::from(principal));
        attrs.insert("permission".into(), Value::from(permission));
        attrs.insert("id".into(), Value::from(id.as_str()));
        Remote { id, attrs }
    }

    /// Puts the configured permission and reads it back until it shows.
    async fn put(&self, config: &Object, creating: bool) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let scope = str_attr(config, "scope").unwrap_or_default();
        let principal = str_attr(config, "principal").unwrap_or_default();
        let permission = str_attr(config, "permission").unwrap_or_default();
        if creating
            && let Some(held) = self.permission(&client, scope, principal).await?
            && held != permission
        {
            return Err(ProviderError::new(
                ErrorKind::Conflict,
                format!(
                    "{principal} now holds {held} on secret scope {scope}; creating databricks_secret_acl would replace it with {permission}, which the plan did not show"
                ),
            )
            .with_detail(format!(
                "Plan again: the plan then asks to import it (brickform import databricks_secret_acl '{}').",
                id_of(scope, principal)
            )));
        }
        client
            .idempotent()
            .post(
                "/api/2.0/secrets/acls/put",
                &json!({ "scope": scope, "principal": principal, "permission": permission }),
            )
            .await
            .map_err(err)?;
        let client_ref = &client;
        super::wait_until(
            SETTLE,
            &format!("the ACL of {principal} on secret scope {scope}"),
            move || async move {
                let now = self.permission(client_ref, scope, principal).await?;
                Ok((now.as_deref() != Some(permission)).then(|| {
                    format!(
                        "{} instead of {permission}",
                        now.as_deref().unwrap_or("none")
                    )
                }))
            },
        )
        .await?;
        Ok(Self::remote(scope, principal, permission))
    }
}

#[async_trait]
impl ResourceKind for SecretAcl {
    fn type_name(&self) -> &'static str {
        "databricks_secret_acl"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn plan_computed(&self, config: &Object) -> Object {
        let mut out = Object::default();
        if let (Some(s), Some(p)) = (str_attr(config, "scope"), str_attr(config, "principal")) {
            out.insert("id".into(), Value::from(id_of(s, p)));
        }
        out
    }
    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.put(config, true).await
    }
    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        _prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let (scope, principal) = split(id)?;
        Ok(self
            .permission(&client, scope, principal)
            .await?
            .map(|p| Self::remote(scope, principal, &p)))
    }
    async fn update(
        &self,
        _: &OpContext,
        _id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.put(config, false).await
    }
    /// Deletes the ACL, except the caller's own MANAGE, as the Terraform provider does: a
    /// destroy must not lock the caller out of the scope.
    async fn delete(&self, _: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let (scope, principal) = split(id)?;
        // The caller's own ACL is left as MANAGE, whatever the configuration made it: without
        // it the caller could no longer manage the scope.
        if self
            .shared
            .current_user()
            .await?
            .is_some_and(|me| me.eq_ignore_ascii_case(principal))
        {
            if str_attr(prior, "permission") == Some("MANAGE") {
                return Ok(());
            }
            return super::gone_ok(
                client
                    .idempotent()
                    .post(
                        "/api/2.0/secrets/acls/put",
                        &json!({ "scope": scope, "principal": principal, "permission": "MANAGE" }),
                    )
                    .await,
            );
        }
        super::gone_ok(
            client
                .idempotent()
                .post(
                    "/api/2.0/secrets/acls/delete",
                    &json!({ "scope": scope, "principal": principal }),
                )
                .await,
        )
    }
    /// An ACL in another scope or for another principal is written before the old one is
    /// deleted: a scope or principal that does not exist fails the create and takes nothing.
    fn replaces_by_creating_first(&self) -> bool {
        true
    }
    /// SCOPE|||PRINCIPAL, the id: an ACL the principal already holds is found by it.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        Some(id_of(
            str_attr(config, "scope")?,
            str_attr(config, "principal")?,
        ))
    }
    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.read(ctx, key, &Object::default()).await
    }
    fn describe_existing(&self, _key: &str, remote: &Remote) -> String {
        let (scope, principal) = split(&remote.id).unwrap_or((&remote.id, ""));
        format!("the ACL of {principal} on secret scope {scope}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_terraform_providers() {
        assert_eq!(id_of("app", "data-scientists"), "app|||data-scientists");
        assert_eq!(split("app|||a|b").unwrap(), ("app", "a|b"));
        for bad in ["app", "app|x", "|||p", "app|||"] {
            let e = split(bad).unwrap_err();
            assert!(
                e.message.contains("SCOPE|||PRINCIPAL"),
                "{bad}: {}",
                e.message
            );
        }
    }
}
