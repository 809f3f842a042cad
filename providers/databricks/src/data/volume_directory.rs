//! `data "databricks_volume_directory"`: what a directory of a Unity Catalog volume holds
//! (`GET /api/2.0/fs/directories{path}`, every page): the names of its sub-directories and
//! of its files. A landing volume with one sub-folder per table (sdp-meta's `from_volume`
//! recipe) becomes one flow per folder with `for_each`. A directory that does not exist is
//! an error, not an empty list: a mistyped path must not plan every flow away.

use crate::Shared;
use crate::volume_path::VolumePath;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, Normalize, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct VolumeDirectory {
    schema: Schema,
    shared: Arc<Shared>,
}

impl VolumeDirectory {
    pub fn new(shared: Arc<Shared>) -> Self {
        let names = || AttrType::List(Box::new(AttrType::String));
        let schema = Schema::new()
            .describe("What a directory of a volume holds: its sub-directories and files, by name.")
            .attr(
                Attribute::required("path", AttrType::String)
                    .normalize(Normalize::TrimTrailingSlash)
                    .describe("/Volumes/CATALOG/SCHEMA/VOLUME[/DIR…]"),
            )
            .attr(
                Attribute::computed("directories", names())
                    .describe("The names of its sub-directories, sorted."),
            )
            .attr(
                Attribute::computed("files", names()).describe("The names of its files, sorted."),
            );
        VolumeDirectory { schema, shared }
    }
}

#[async_trait]
impl DataSource for VolumeDirectory {
    fn type_name(&self) -> &'static str {
        "databricks_volume_directory"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let given = config.get("path").and_then(Value::as_str).unwrap_or("");
        let path = VolumePath::parse(given)
            .ok_or_else(|| {
                ProviderError::invalid(format!(
                    "databricks_volume_directory: {given:?} is not a path in a volume (/Volumes/CATALOG/SCHEMA/VOLUME[/DIR…])"
                ))
            })?
            .path();
        let client = self.shared.client()?;
        let entries = client
            .directory_entries(&path)
            .await
            .map_err(crate::resources::err)?
            .ok_or_else(|| {
                ProviderError::not_found(format!(
                    "databricks_volume_directory: there is no directory {path}"
                ))
            })?;
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        for e in &entries {
            let name = e
                .get("name")
                .and_then(Json::as_str)
                .map(str::to_string)
                .or_else(|| {
                    let p = e.get("path").and_then(Json::as_str)?;
                    Some(p.trim_end_matches('/').rsplit('/').next()?.to_string())
                });
            let Some(name) = name else { continue };
            if e.get("is_directory")
                .and_then(Json::as_bool)
                .unwrap_or(false)
            {
                dirs.push(name);
            } else {
                files.push(name);
            }
        }
        dirs.sort();
        files.sort();
        let list = |v: Vec<String>| Value::List(v.into_iter().map(Value::from).collect());
        let mut out = config.clone();
        out.insert("directories".into(), list(dirs));
        out.insert("files".into(), list(files));
        Ok(out)
    }
}
