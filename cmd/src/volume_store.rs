//! The object store of the `volume` state backend: a directory in a Unity Catalog volume,
//! through the client's Files API calls (docs/architecture.md, Wire facts).
//!
//! - get: no file is "no object";
//! - put-if-absent: a write without overwrite; `ALREADY_EXISTS` is "an object is there";
//! - put: a write with overwrite, one single-shot request that replaces the object;
//! - delete: a file already gone is "there was none";
//! - list: the directory's files (a directory that does not exist is empty).
//!
//! Parent directories are made once per process before the first write into them, since the
//! Files API does not make them.

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
    match e.status {
        0 => StoreError::NoResponse(Box::new(e)),
        status => StoreError::Status {
            status,
            source: Box::new(e),
        },
    }
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
        self.client.directory_make(dir).await.map_err(store_error)?;
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
        self.client
            .file_get(&self.path(key))
            .await
            .map_err(store_error)
    }

    async fn put_if_absent(&self, key: &str, bytes: &[u8]) -> Result<bool, StoreError> {
        self.ensure_parent(key).await?;
        match self
            .client
            .file_put(&self.path(key), bytes.to_vec(), false)
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
            .file_put(&self.path(key), bytes.to_vec(), true)
            .await
            .map_err(store_error)
    }

    async fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.client
            .file_delete(&self.path(key))
            .await
            .map_err(store_error)
    }

    async fn list(&self, dir: &str) -> Result<Vec<String>, StoreError> {
        let entries = self
            .client
            .directory_list(&self.path(dir))
            .await
            .map_err(store_error)?;
        Ok(entries
            .iter()
            .filter(|e| e["is_directory"] != Value::Bool(true))
            .filter_map(|e| e["name"].as_str().map(str::to_string))
            .collect())
    }
}
