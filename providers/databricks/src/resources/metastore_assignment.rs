//! `databricks_metastore_assignment`: which Unity Catalog metastore a workspace uses, as
//! terraform-provider-databricks has it (catalog/resource_metastore_assignment.go) through the
//! workspace API: `PUT /api/2.1/unity-catalog/workspaces/{workspace_id}/metastore` assigns
//! (overwriting the workspace's assignment), `PATCH` changes the default catalog, `DELETE
//! ?metastore_id=` unassigns, and `GET current-metastore-assignment` reads it (the
//! workspace API sees only the workspace it talks to).
//!
//! The id is `WORKSPACE_ID|METASTORE_ID`, the provider's import id; a change of either
//! replaces the assignment (`ForceNew`). `default_catalog_name` is deprecated in the
//! provider for `databricks_default_namespace_setting`, which the service answers here when
//! it is set; it is accepted, and read back as the service answers it.

use super::{err, gone_ok, none_if_missing, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, OpContext, ProviderError, ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

pub struct MetastoreAssignment {
    schema: Schema,
    shared: Arc<Shared>,
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("The assignment of a Unity Catalog metastore to a workspace (the workspace brickform talks to).")
        .attr(
            // Required in the Terraform provider; here it defaults to the workspace brickform
            // talks to (the only one the workspace API acts on), which
            // current-metastore-assignment names.
            Attribute::optional_computed("workspace_id", AttrType::Number)
                .force_new()
                .describe("The workspace's id (by default the workspace brickform talks to); a change replaces the assignment."),
        )
        .attr(
            Attribute::required("metastore_id", AttrType::String)
                .force_new()
                .normalize(brickform_core::provider::Normalize::LowerCase)
                .describe("The metastore's id; a change replaces the assignment."),
        )
        .attr(
            Attribute::optional_computed("default_catalog_name", AttrType::String)
                .describe("Deprecated (as in the Terraform provider): use databricks_default_namespace_setting. The workspace's default catalog."),
        )
        .attr(
            Attribute::computed("id", AttrType::String)
                .derived_from(&["workspace_id", "metastore_id"])
                .describe("WORKSPACE_ID|METASTORE_ID"),
        )
}

impl MetastoreAssignment {
    pub fn new(shared: Arc<Shared>) -> Self {
        MetastoreAssignment {
            schema: schema(),
            shared,
        }
    }
}

/// The workspace id (a number) and metastore id of `WORKSPACE_ID|METASTORE_ID`.
fn split(id: &str) -> ProviderResult<(i64, &str)> {
    id.split_once('|')
        .and_then(|(w, m)| Some((w.trim().parse::<i64>().ok()?, m.trim())))
        .filter(|(_, m)| !m.is_empty())
        .ok_or_else(|| {
            ProviderError::invalid(format!(
                "a metastore assignment is imported as WORKSPACE_ID|METASTORE_ID (the Terraform provider's id); got {id:?}"
            ))
        })
}

fn workspace_of(config: &Object) -> Option<i64> {
    config.get("workspace_id").and_then(|v| match v {
        Value::String(s) => s.parse().ok(),
        other => other.to_json().as_i64(),
    })
}

/// The id of the workspace brickform talks to, as its current assignment names it.
async fn current_workspace(client: &crate::client::Client) -> ProviderResult<i64> {
    let resp = client
        .get("/api/2.1/unity-catalog/current-metastore-assignment", &[])
        .await
        .map_err(|e| {
            let mut e = err(e);
            e.message = format!("{}; set workspace_id to the workspace's id", e.message);
            e
        })?;
    resp.get("workspace_id")
        .and_then(|w| w.as_i64().or_else(|| w.as_str()?.parse().ok()))
        .ok_or_else(|| ProviderError::other("the workspace did not name its id; set workspace_id"))
}

fn path(workspace: i64) -> String {
    format!("/api/2.1/unity-catalog/workspaces/{workspace}/metastore")
}

#[async_trait]
impl ResourceKind for MetastoreAssignment {
    fn type_name(&self) -> &'static str {
        "databricks_metastore_assignment"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let ws = match workspace_of(config) {
            Some(ws) => ws,
            None => current_workspace(&client).await?,
        };
        let metastore = str_attr(config, "metastore_id")
            .unwrap_or("")
            .to_lowercase();
        let mut body = json!({"workspace_id": ws, "metastore_id": metastore});
        if let Some(d) = str_attr(config, "default_catalog_name") {
            body["default_catalog_name"] = json!(d);
        }
        // Assigning overwrites the workspace's assignment, as the provider does (every
        // workspace of a metastore is assigned already; no natural key, so nothing is
        // "taken"): a repeat after a lost answer does the same.
        client
            .idempotent()
            .put(&path(ws), &body)
            .await
            .map_err(err)?;
        let id = format!("{ws}|{metastore}");
        self.read(ctx, &id, config).await?.ok_or_else(|| {
            ProviderError::other(format!(
                "metastore {metastore} was assigned to workspace {ws} but the workspace reports no assignment"
            ))
        })
    }

    /// The workspace's current assignment; as the provider, the workspace id is the id's
    /// (the workspace API sees only its own), the metastore the one assigned now: another
    /// one plans a replacement.
    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        _prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let (ws, _) = split(id)?;
        let client = self.shared.client()?;
        let Some(resp) = none_if_missing(
            client
                .get("/api/2.1/unity-catalog/current-metastore-assignment", &[])
                .await,
        )?
        else {
            return Ok(None);
        };
        let metastore = resp
            .get("metastore_id")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_lowercase();
        let mut attrs = Object::default();
        attrs.insert("workspace_id".into(), Value::from_json(&json!(ws)));
        attrs.insert("metastore_id".into(), Value::from(metastore.as_str()));
        attrs.insert(
            "default_catalog_name".into(),
            resp.get("default_catalog_name")
                .map_or(Value::Null, Value::from_json),
        );
        let id = format!("{ws}|{metastore}");
        attrs.insert("id".into(), Value::from(id.as_str()));
        Ok(Some(Remote { id, attrs }))
    }

    async fn import(&self, ctx: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        let (ws, metastore) = split(id)?;
        let found = self
            .read(
                ctx,
                &format!("{ws}|{}", metastore.to_lowercase()),
                &Object::default(),
            )
            .await?;
        // The import id names the assignment it means: another metastore is not it.
        Ok(found.filter(|r| {
            str_attr(&r.attrs, "metastore_id").is_some_and(|m| m.eq_ignore_ascii_case(metastore))
        }))
    }

    /// Only the default catalog changes in place (the ids replace).
    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let (ws, metastore) = split(id)?;
        let mut body = json!({"workspace_id": ws, "metastore_id": metastore});
        if let Some(d) = str_attr(config, "default_catalog_name") {
            body["default_catalog_name"] = json!(d);
        }
        client.patch(&path(ws), &body).await.map_err(err)?;
        self.read(ctx, id, prior).await?.ok_or_else(|| {
            ProviderError::not_found(format!("the metastore assignment {id} no longer exists"))
        })
    }

    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let (ws, metastore) = split(id)?;
        gone_ok(
            client
                .idempotent()
                .delete(&path(ws), &[("metastore_id", metastore.to_string())])
                .await,
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ids_are_workspace_and_metastore() {
        assert_eq!(split("123|abc").unwrap(), (123, "abc"));
        assert!(split("abc|def").is_err());
        assert!(split("123").is_err());
        assert!(split("123|").is_err());
    }
}
