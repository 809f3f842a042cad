//! The object store of the `volume` state backend: a directory in a Unity Catalog volume,
//! through the Files API (docs/architecture.md, Wire facts).
//!
//! - get: `GET /api/2.0/fs/files{path}`, 404 is "no object";
//! - put-if-absent: `PUT /api/2.0/fs/files{path}?overwrite=false`, `ALREADY_EXISTS` (409) is
//!   "an object is there";
//! - put: the same with `overwrite=true`, one single-shot request that replaces the object;
//! - delete: `DELETE /api/2.0/fs/files{path}`, 404 is "there was none";
//! - list: `GET /api/2.0/fs/directories{path}`, paged, 404 is an empty directory.
//!
//! Parent directories are created (`PUT /api/2.0/fs/directories{dir}`, idempotent) once per
//! process before the first write into them, since the Files API does not create them.
//! Paths are passed raw: the client escapes them as the official SDK does.

use async_trait::async_trait;
use brickform_core::provider::ErrorKind;
use brickform_databricks::client::{ApiError, Client};
use brickform_state::{ObjectStore, StoreError};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

#[derive(Debug)]
pub struct FilesApiStore {
    client: Client,
    /// `/Volumes/CATALOG/SCHEMA/VOLUME[/DIR…]`, without a trailing slash.
    root: String,
    /// Directories this process created or found.
    dirs: Mutex<HashSet<String>>,
}

fn store_error(e: ApiError) -> StoreError {
    StoreError(if e.status == 0 {
        format!("no response from the workspace ({e})")
    } else {
        format!("HTTP {}: {e}", e.status)
    })
}

impl FilesApiStore {
    pub fn new(client: Client, root: &str) -> FilesApiStore {
        FilesApiStore {
            client,
            root: root.trim_end_matches('/').to_string(),
            dirs: Mutex::new(HashSet::new()),
        }
    }

    fn path(&self, key: &str) -> String {
        if key.is_empty() {
            self.root.clone()
        } else {
            format!("{}/{key}", self.root)
        }
    }

    fn file(&self, key: &str) -> String {
        format!("/api/2.0/fs/files{}", self.path(key))
    }

    async fn ensure_parent(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(key);
        let Some((dir, _)) = path.rsplit_once('/') else {
            return Ok(());
        };
        if self
            .dirs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(dir)
        {
            return Ok(());
        }
        self.client
            .put_bytes(&format!("/api/2.0/fs/directories{dir}"), &[], Vec::new())
            .await
            .map_err(store_error)?;
        self.dirs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(dir.to_string());
        Ok(())
    }
}

#[async_trait]
impl ObjectStore for FilesApiStore {
    fn location(&self, key: &str) -> String {
        self.path(key)
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.client.get_bytes(&self.file(key)).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(store_error(e)),
        }
    }

    async fn put_if_absent(&self, key: &str, bytes: &[u8]) -> Result<bool, StoreError> {
        self.ensure_parent(key).await?;
        match self
            .client
            .put_bytes(
                &self.file(key),
                &[("overwrite", "false".into())],
                bytes.to_vec(),
            )
            .await
        {
            Ok(()) => Ok(true),
            // With overwrite=false the Files API answers an existing file with
            // `ALREADY_EXISTS`. When it answers a retry of a request that landed, the object
            // is ours; the backend reads it back and tells.
            Err(e) if e.kind == ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(store_error(e)),
        }
    }

    async fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.ensure_parent(key).await?;
        self.client
            .put_bytes(
                &self.file(key),
                &[("overwrite", "true".into())],
                bytes.to_vec(),
            )
            .await
            .map_err(store_error)
    }

    async fn delete(&self, key: &str) -> Result<bool, StoreError> {
        match self.client.delete(&self.file(key), &[]).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(store_error(e)),
        }
    }

    async fn list(&self, dir: &str) -> Result<Vec<String>, StoreError> {
        let path = format!("/api/2.0/fs/directories{}", self.path(dir));
        let page = Some(brickform_databricks::resources::volume_files::DIRECTORY_PAGE);
        let entries = match self.client.list_all(&path, &[], "contents", page).await {
            Ok(entries) => entries,
            Err(e) if e.is_not_found() => return Ok(Vec::new()),
            Err(e) => return Err(store_error(e)),
        };
        Ok(entries
            .iter()
            .filter(|e| e["is_directory"] != Value::Bool(true))
            .filter_map(|e| e["name"].as_str().map(str::to_string))
            .collect())
    }
}
