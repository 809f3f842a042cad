//! `databricks_secret_scope`: a secret scope, Databricks-backed or backed by an Azure Key
//! Vault (`keyvault_metadata`, which the service creates only for a caller signed in with
//! a Microsoft Entra ID token: a personal access token is refused).

use super::place::Place;
use super::{err, gone_ok, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, Finding, OpContext, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

pub struct SecretScope {
    schema: Schema,
    shared: Arc<Shared>,
}

impl SecretScope {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("A secret scope, Databricks-backed or backed by an Azure Key Vault.")
            .attr(Attribute::required("name", AttrType::String).force_new())
            .attr(Attribute::optional("initial_manage_principal", AttrType::String).force_new())
            .attr(
                Attribute::optional_computed("backend_type", AttrType::String)
                    .one_of(&["DATABRICKS", "AZURE_KEYVAULT"])
                    .force_new(),
            )
            .block(
                BlockType::single(
                    "keyvault_metadata",
                    Schema::new()
                        .attr(Attribute::required("resource_id", AttrType::String))
                        .attr(Attribute::required("dns_name", AttrType::String)),
                )
                .force_new()
                .describe("The Azure Key Vault the scope reads its secrets from: its resource id and DNS name (vault URI). Creating it needs a Microsoft Entra ID sign-in (azure-cli, azure-client-secret or azure-msi, docs/authentication.md); a personal access token is refused."),
            )
            .attr(Attribute::computed("id", AttrType::String));
        SecretScope { schema, shared }
    }
}

fn remote(name: &str, backend: Option<&str>, keyvault: Option<&Json>) -> Remote {
    let mut attrs = Object::default();
    attrs.insert("name".into(), Value::from(name));
    attrs.insert("id".into(), Value::from(name));
    attrs.insert(
        "backend_type".into(),
        Value::from(backend.unwrap_or("DATABRICKS")),
    );
    if let Some(kv) = keyvault {
        let mut m = Object::default();
        for k in ["resource_id", "dns_name"] {
            m.insert(
                k.into(),
                kv.get(k)
                    .and_then(Json::as_str)
                    .map(Value::from)
                    .unwrap_or(Value::Null),
            );
        }
        attrs.insert("keyvault_metadata".into(), Value::object(m));
    }
    Remote {
        id: name.to_string(),
        attrs,
    }
}

/// The `keyvault_metadata` block of a configuration, as the API's
/// `backend_azure_keyvault` takes it.
fn keyvault(config: &Object) -> Option<Json> {
    let Some(Value::Object(kv)) = config.get("keyvault_metadata") else {
        return None;
    };
    Some(json!({
        "resource_id": kv.get("resource_id").and_then(Value::as_str),
        "dns_name": kv.get("dns_name").and_then(Value::as_str),
    }))
}

#[async_trait]
impl ResourceKind for SecretScope {
    fn type_name(&self) -> &'static str {
        "databricks_secret_scope"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    /// A Key Vault scope needs its vault, and the vault makes it one.
    fn check(&self, config: &Object) -> Vec<Finding> {
        let backend = str_attr(config, "backend_type");
        let has_vault = matches!(config.get("keyvault_metadata"), Some(Value::Object(_)));
        match (backend, has_vault) {
            (Some("AZURE_KEYVAULT"), false) => vec![
                Finding::error(
                    &["backend_type"],
                    "an AZURE_KEYVAULT scope needs a keyvault_metadata block",
                )
                .hint("add keyvault_metadata { resource_id = …, dns_name = … } naming the vault"),
            ],
            (Some("DATABRICKS"), true) => vec![
                Finding::error(
                    &["keyvault_metadata"],
                    "a DATABRICKS scope has no Key Vault",
                )
                .hint("remove backend_type: keyvault_metadata makes the scope AZURE_KEYVAULT"),
            ],
            _ => Vec::new(),
        }
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let name = str_attr(config, "name").unwrap_or("");
        let mut body = json!({ "scope": name });
        if let Some(p) = str_attr(config, "initial_manage_principal") {
            body["initial_manage_principal"] = json!(p);
        }
        let vault = keyvault(config);
        if let Some(kv) = &vault {
            body["scope_backend_type"] = json!("AZURE_KEYVAULT");
            body["backend_azure_keyvault"] = kv.clone();
        }
        match client.post("/api/2.0/secrets/scopes/create", &body).await {
            Ok(_) => {}
            // A repeat after a lost answer: the scope is the one this create made.
            Err(e)
                if e.kind == brickform_core::provider::ErrorKind::AlreadyExists
                    && e.after_retry => {}
            Err(e) => return Err(err(e)),
        }
        Ok(remote(
            name,
            vault.as_ref().map(|_| "AZURE_KEYVAULT"),
            vault.as_ref(),
        ))
    }
    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let resp = client
            .get("/api/2.0/secrets/scopes/list", &[])
            .await
            .map_err(err)?;
        let found = resp
            .get("scopes")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .find(|s| s.get("name").and_then(Json::as_str) == Some(id));
        Ok(found.map(|s| {
            let mut r = remote(
                id,
                s.get("backend_type").and_then(Json::as_str),
                s.get("keyvault_metadata"),
            );
            if let Some(p) = prior.get("initial_manage_principal") {
                // Only known at creation; the service does not report it.
                r.attrs.insert("initial_manage_principal".into(), p.clone());
            }
            r
        }))
    }
    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        _: &Object,
    ) -> ProviderResult<Remote> {
        self.read(ctx, id, prior).await?.ok_or_else(|| {
            brickform_core::provider::ProviderError::not_found(format!(
                "secret scope {id} no longer exists"
            ))
        })
    }
    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        gone_ok(
            client
                .idempotent()
                .post("/api/2.0/secrets/scopes/delete", &json!({ "scope": id }))
                .await,
        )
    }
    fn natural_key(&self, _ctx: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, "name").map(str::to_string)
    }

    fn location(&self, attrs: &Object) -> Option<Location> {
        str_attr(attrs, "name").map(|n| Place::secret(n, None).into())
    }

    /// Deleting a scope deletes the secrets in it.
    fn deletes_contents(&self, _: &Object) -> bool {
        true
    }

    fn show_location(&self, location: &Location) -> String {
        Place::shown(location)
    }

    async fn contents(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Vec<Location>> {
        let client = self.shared.client()?;
        super::locations::scope_contents(&client, id).await
    }

    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.read(ctx, key, &Object::default()).await
    }

    /// The scope of the configured name. The service says nothing about who made it.
    async fn find_existing(
        &self,
        ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<brickform_core::provider::Existing>> {
        let Some(name) = str_attr(config, "name") else {
            return Ok(Vec::new());
        };
        Ok(self
            .read(ctx, name, config)
            .await?
            .map(|remote| brickform_core::provider::Existing {
                what: format!("secret scope {name}"),
                tag: None,
                owner: None,
                exclusive: true,
                remote,
            })
            .into_iter()
            .collect())
    }
}
