//! `databricks_secret`: one secret in a scope. Its value is sensitive: it is sent, never
//! stored or shown; state keeps a fingerprint so a changed value is still noticed.

use super::place::Place;
use super::{err, gone_ok, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, OpContext, ProviderError, ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

pub struct Secret {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Secret {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("A secret in a secret scope.")
            .attr(Attribute::required("scope", AttrType::String).force_new())
            .attr(Attribute::required("key", AttrType::String).force_new())
            .attr(
                Attribute::required("string_value", AttrType::String)
                    .sensitive()
                    .describe("The secret; write-only."),
            )
            .attr(Attribute::computed("id", AttrType::String))
            .attr(
                Attribute::computed("config_reference", AttrType::String)
                    .derived_from(&["scope", "key"])
                    .describe("{{secrets/SCOPE/KEY}}: how Spark configuration and environment variables of clusters refer to the secret."),
            )
            .attr(Attribute::computed(
                "last_updated_timestamp",
                AttrType::Number,
            ));
        Secret { schema, shared }
    }
}

/// The scope and key of a secret's id, `SCOPE|KEY`; the Terraform provider's
/// `SCOPE|||KEY` is read too (neither name may hold a `|`).
fn split(id: &str) -> ProviderResult<(&str, &str)> {
    let parts = id
        .split_once("|||")
        .or_else(|| id.split_once('|'))
        .filter(|(s, k)| !s.is_empty() && !k.is_empty() && !s.contains('|') && !k.contains('|'));
    parts.ok_or_else(|| {
        ProviderError::invalid(format!(
            "a secret is imported as SCOPE|KEY (or the Terraform provider's SCOPE|||KEY); got {id:?}"
        ))
    })
}

#[async_trait]
impl ResourceKind for Secret {
    fn type_name(&self) -> &'static str {
        "databricks_secret"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let scope = str_attr(config, "scope").unwrap_or("");
        let key = str_attr(config, "key").unwrap_or("");
        let body = json!({ "scope": scope, "key": key, "string_value": str_attr(config, "string_value").unwrap_or("") });
        // Puts the value whether or not the key exists: a repeat writes the same value.
        client
            .idempotent()
            .post("/api/2.0/secrets/put", &body)
            .await
            .map_err(err)?;
        let id = format!("{scope}|{key}");
        self.read(ctx, &id, config).await?.ok_or_else(|| {
            ProviderError::other(format!("secret {id} was written but is not listed"))
        })
    }
    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        _prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let (scope, key) = split(id)?;
        let resp = match client
            .get("/api/2.0/secrets/list", &[("scope", scope.to_string())])
            .await
        {
            Ok(r) => r,
            Err(e) if e.kind == brickform_core::provider::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let found = resp
            .get("secrets")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .find(|s| s.get("key").and_then(Json::as_str) == Some(key));
        Ok(found.map(|s| {
            let mut attrs = Object::default();
            attrs.insert("scope".into(), Value::from(scope));
            attrs.insert("key".into(), Value::from(key));
            attrs.insert("id".into(), Value::from(id));
            attrs.insert(
                "config_reference".into(),
                Value::from(format!("{{{{secrets/{scope}/{key}}}}}")),
            );
            if let Some(t) = s.get("last_updated_timestamp") {
                attrs.insert("last_updated_timestamp".into(), Value::from_json(t));
            }
            Remote {
                id: id.to_string(),
                attrs,
            }
        }))
    }
    /// Imported under its own id form, whichever form the import id was written in.
    async fn import(&self, ctx: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        let (scope, key) = split(id)?;
        self.read(ctx, &format!("{scope}|{key}"), &Object::default())
            .await
    }
    async fn update(
        &self,
        ctx: &OpContext,
        _id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.create(ctx, config).await
    }
    /// SCOPE|KEY, the id: a secret is found again by it after a lost answer or a kill.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        Some(format!(
            "{}|{}",
            str_attr(config, "scope")?,
            str_attr(config, "key")?
        ))
    }
    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.read(ctx, key, &Object::default()).await
    }
    fn location(&self, attrs: &Object) -> Option<Location> {
        Some(Place::secret(str_attr(attrs, "scope")?, Some(str_attr(attrs, "key")?)).into())
    }
    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let (scope, key) = split(id)?;
        gone_ok(
            client
                .idempotent()
                .post(
                    "/api/2.0/secrets/delete",
                    &json!({ "scope": scope, "key": key }),
                )
                .await,
        )
    }
}
