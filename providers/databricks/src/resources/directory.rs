//! `databricks_directory`: a workspace folder, as the Terraform provider spells it. Declaring
//! the folder a configuration's notebooks and files live in lets destroy remove it too, so a
//! demo leaves no empty folders behind; `delete_recursive` also removes what others put there.
//! The folders above it that its create made (`workspace/mkdirs` makes every missing one) are
//! recorded and removed again by its delete when empty, as a notebook's are.

use super::place::Place;
use super::{err, gone_ok, none_if_missing, str_attr, volume_files, workspace_folders};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, Normalize, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

pub struct Directory {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Directory {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("A workspace folder. Destroy removes it when it is empty, or with everything in it when delete_recursive = true.")
            .attr(
                Attribute::required("path", AttrType::String)
                    .force_new()
                    .normalize(Normalize::TrimTrailingSlash)
                    .describe("Absolute workspace path, e.g. /Users/me@example.com/project."),
            )
            .attr(
                Attribute::optional("delete_recursive", AttrType::Bool)
                    .server_default(false)
                    .describe("On destroy, also delete whatever the folder still holds."),
            )
            .attr(workspace_folders::attribute())
            .attr(Attribute::computed("object_id", AttrType::Number))
            .attr(Attribute::computed("id", AttrType::String))
            .attr(
                Attribute::computed("workspace_path", AttrType::String)
                    .derived_from(&["path"])
                    .describe("/Workspace<path>, the path as seen from clusters."),
            );
        Directory { schema, shared }
    }

    async fn status(&self, path: &str, prior: &Object) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let Some(resp) = none_if_missing(
            client
                .get(
                    "/api/2.0/workspace/get-status",
                    &[("path", path.to_string())],
                )
                .await,
        )?
        else {
            return Ok(None);
        };
        if resp.get("object_type").and_then(Json::as_str) != Some("DIRECTORY") {
            return Err(ProviderError::invalid(format!(
                "{path} exists but is not a folder"
            )));
        }
        let mut attrs = Object::default();
        attrs.insert("path".into(), Value::from(path));
        attrs.insert("id".into(), Value::from(path));
        attrs.insert(
            "workspace_path".into(),
            Value::from(format!("/Workspace{path}")),
        );
        if let Some(id) = resp.get("object_id").and_then(Json::as_i64) {
            attrs.insert("object_id".into(), Value::from_i64(id));
        }
        // Brickform's own: the service does not know them.
        for key in ["delete_recursive", workspace_folders::ATTRIBUTE] {
            if let Some(v) = prior.get(key) {
                attrs.insert(key.into(), v.clone());
            }
        }
        Ok(Some(Remote {
            id: path.to_string(),
            attrs,
        }))
    }
}

#[async_trait]
impl ResourceKind for Directory {
    fn type_name(&self) -> &'static str {
        "databricks_directory"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn plan_computed(&self, config: &Object) -> Object {
        str_attr(config, "path")
            .map(|p| {
                Object::from_iter([(
                    "workspace_path".to_string(),
                    Value::from(format!("/Workspace{}", p.trim_end_matches('/'))),
                )])
            })
            .unwrap_or_default()
    }
    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let path = str_attr(config, "path").unwrap_or("").trim_end_matches('/');
        let created = match volume_files::parent(path) {
            Some(parent) => workspace_folders::make(&client, &self.shared, parent).await?,
            None => Vec::new(),
        };
        client
            .idempotent()
            .post("/api/2.0/workspace/mkdirs", &json!({ "path": path }))
            .await
            .map_err(err)?;
        let mut known = config.clone();
        known.insert(
            workspace_folders::ATTRIBUTE.into(),
            Value::List(created.into_iter().map(Value::from).collect()),
        );
        self.status(path, &known).await?.ok_or_else(|| {
            ProviderError::other(format!("{path} was created but cannot be read back"))
        })
    }
    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        self.status(id, prior).await
    }
    async fn update(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        // Only delete_recursive can change in place, and only brickform reads it; what the
        // create made stays recorded.
        let mut known = config.clone();
        if let Some(folders) = prior.get(workspace_folders::ATTRIBUTE) {
            known.insert(workspace_folders::ATTRIBUTE.into(), folders.clone());
        }
        self.status(id, &known)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("folder {id} no longer exists")))
    }
    async fn delete(&self, ctx: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let recursive = prior
            .get("delete_recursive")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let deleted = client
            .idempotent()
            .post(
                "/api/2.0/workspace/delete",
                &json!({ "path": id, "recursive": recursive }),
            )
            .await;
        match deleted {
            // What is left in it is not this state's: its own contents went first.
            Err(e) if e.error_code == "DIRECTORY_NOT_EMPTY" => {
                let left: Vec<String> = super::locations::workspace_objects(&client, id)
                    .await?
                    .iter()
                    .filter_map(|o| o.get("path").and_then(Json::as_str))
                    .map(str::to_string)
                    .collect();
                let shown = left.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
                let more = left.len().saturating_sub(5);
                Err(ProviderError::invalid(format!(
                    "folder {id} is not empty: it holds what this state does not manage ({shown}{}); move or delete those, or set delete_recursive = true to delete them with the folder (the plan then lists them)",
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )))
            }
            other => {
                gone_ok(other)?;
                workspace_folders::remove_empty(&client, &self.shared, ctx, id, prior).await
            }
        }
    }
    async fn import(&self, _: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        self.status(id, &Object::default()).await
    }
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, "path").map(|p| p.trim_end_matches('/').to_string())
    }
    fn location(&self, attrs: &Object) -> Option<Location> {
        str_attr(attrs, "path").map(|p| Place::workspace(p).into())
    }
    /// Only a recursive delete takes what is inside; otherwise the service refuses to
    /// delete a folder that is not empty.
    fn deletes_contents(&self, attrs: &Object) -> bool {
        attrs
            .get("delete_recursive")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
    fn show_location(&self, location: &Location) -> String {
        Place::shown(location)
    }
    async fn contents(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Vec<Location>> {
        let client = self.shared.client()?;
        super::locations::workspace_tree(&client, id).await
    }
    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.read(ctx, key, &Object::default()).await
    }

    async fn find_existing(
        &self,
        ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<brickform_core::provider::Existing>> {
        let Some(path) = self.natural_key(ctx, config).filter(|p| !p.is_empty()) else {
            return Ok(Vec::new());
        };
        Ok(self
            .read(ctx, &path, config)
            .await?
            .map(|r| super::existing_at("folder", r))
            .into_iter()
            .collect())
    }
}
