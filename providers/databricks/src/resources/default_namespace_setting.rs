//! `databricks_default_namespace_setting`: the workspace's default catalog, the one queries
//! use when they name none, as terraform-provider-databricks has it
//! (settings/resource_default_namespace_setting.go, settings/generic_setting.go).
//!
//! The Settings API versions the setting by an etag that changes on every write: a PATCH
//! (`allow_missing`, `field_mask = "namespace.value"`) or DELETE (`?etag=`) names the etag it
//! read, and one naming a stale etag is refused with 409 and the fresh etag in the error's
//! `google.rpc.ErrorInfo` detail; a setting never set answers 404 with the etag the same
//! way. As the provider (`retryOnEtagError`), a write is retried once with that etag: a
//! write by someone else in between does not fail the apply. A create sends no etag (the
//! 404 or 409 gives it), an update the one last read, kept in `etag`.
//!
//! The setting is one per workspace: its id is `global`, the provider's (any import id
//! imports it). Deleting it puts back the default catalog of the workspace's metastore
//! assignment.

use super::{err, none_if_missing, str_attr};
use crate::Shared;
use crate::client::{ApiError, Client};
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, ErrorKind, OpContext, ProviderError, ProviderResult, Remote,
    ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

const PATH: &str = "/api/2.0/settings/types/default_namespace_ws/names/default";
/// The provider's id of every setting resource (`defaultSettingId`).
pub const ID: &str = "global";

pub struct DefaultNamespaceSetting {
    schema: Schema,
    shared: Arc<Shared>,
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("The workspace's default namespace: the catalog queries use when they name none (clusters and SQL warehouses take it on restart). One per workspace; destroying it puts back the default catalog of the workspace's metastore assignment.")
        .block(
            BlockType::single(
                "namespace",
                Schema::new().attr(
                    Attribute::required("value", AttrType::String)
                        .describe("The catalog's name."),
                ),
            )
            .min(1)
            .describe("The default namespace."),
        )
        .attr(
            Attribute::computed("etag", AttrType::String)
                .changes_on_write()
                .describe("The version of the setting last read or written; the service changes it on every write."),
        )
        .attr(Attribute::computed("setting_name", AttrType::String))
        .attr(Attribute::computed("id", AttrType::String).describe("global"))
}

impl DefaultNamespaceSetting {
    pub fn new(shared: Arc<Shared>) -> Self {
        DefaultNamespaceSetting {
            schema: schema(),
            shared,
        }
    }

    fn remote(resp: &Json) -> Remote {
        let mut attrs = Object::default();
        let value = resp
            .get("namespace")
            .and_then(|n| n.get("value"))
            .map_or(Value::Null, Value::from_json);
        attrs.insert(
            "namespace".into(),
            Value::object(Object::from_iter([("value".to_string(), value)])),
        );
        for k in ["etag", "setting_name"] {
            attrs.insert(k.into(), resp.get(k).map_or(Value::Null, Value::from_json));
        }
        attrs.insert("id".into(), Value::from(ID));
        Remote {
            id: ID.to_string(),
            attrs,
        }
    }

    /// PATCHes the configured value with `etag`, once more with the fresh etag the service
    /// answers a stale (409) or missing (404) one with.
    async fn write(&self, config: &Object, etag: Option<&str>) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let value = config
            .get("namespace")
            .and_then(Value::as_object)
            .and_then(|n| str_attr(n, "value"))
            .ok_or_else(|| ProviderError::invalid("namespace.value is not set"))?
            .to_string();
        let body = |etag: Option<&str>| {
            let mut setting = json!({"setting_name": "default", "namespace": {"value": value}});
            if let Some(e) = etag {
                setting["etag"] = json!(e);
            }
            json!({"allow_missing": true, "field_mask": "namespace.value", "setting": setting})
        };
        let resp = match client.patch(PATH, &body(etag)).await {
            Err(e) if retriable(&e, true) => {
                let fresh = e.etag.clone();
                client
                    .patch(PATH, &body(fresh.as_deref()))
                    .await
                    .map_err(err)?
            }
            r => r.map_err(err)?,
        };
        Ok(Self::remote(&resp))
    }
}

/// Whether the service answered with a fresh etag to retry with: a conflict (a write by
/// someone else since the etag was read), or for a write a setting not set yet.
fn retriable(e: &ApiError, write: bool) -> bool {
    e.etag.is_some()
        && (e.kind == ErrorKind::Conflict
            || e.status == 409
            || (write && (e.status == 404 || e.kind == ErrorKind::NotFound)))
}

async fn delete_with(client: &Client, etag: &str) -> Result<Json, ApiError> {
    client.delete(PATH, &[("etag", etag.to_string())]).await
}

#[async_trait]
impl ResourceKind for DefaultNamespaceSetting {
    fn type_name(&self) -> &'static str {
        "databricks_default_namespace_setting"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Writes the setting whether or not someone set it before, as the provider does (no
    /// natural key: the one setting of a workspace is not "taken"); a repeat after a lost
    /// answer writes the same value.
    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.write(config, None).await
    }

    async fn read(
        &self,
        _: &OpContext,
        _id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        // The answer is at least as fresh as the etag given.
        let query: Vec<(&str, String)> = str_attr(prior, "etag")
            .map(|e| vec![("etag", e.to_string())])
            .unwrap_or_default();
        Ok(none_if_missing(client.get(PATH, &query).await)?.map(|r| Self::remote(&r)))
    }

    /// One setting per workspace: any id imports it (the provider's is `global`).
    async fn import(&self, ctx: &OpContext, _id: &str) -> ProviderResult<Option<Remote>> {
        self.read(ctx, ID, &Object::default()).await
    }

    async fn update(
        &self,
        _: &OpContext,
        _id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.write(config, str_attr(prior, "etag")).await
    }

    async fn delete(&self, _: &OpContext, _id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let etag = str_attr(prior, "etag").unwrap_or_default();
        let result = match delete_with(&client, etag).await {
            Err(e) if retriable(&e, false) => {
                let fresh = e.etag.clone().unwrap_or_default();
                delete_with(&client, &fresh).await
            }
            r => r,
        };
        match result {
            Ok(_) => Ok(()),
            // Not set: nothing to delete.
            Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn answers_become_attributes() {
        let r = DefaultNamespaceSetting::remote(&json!({
            "etag": "e1", "setting_name": "default", "namespace": {"value": "sales"}
        }));
        assert_eq!(r.id, "global");
        assert_eq!(r.attrs["etag"], Value::from("e1"));
        let ns = r.attrs["namespace"].as_object().unwrap();
        assert_eq!(ns["value"], Value::from("sales"));
    }
}
