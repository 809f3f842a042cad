//! The Files API for paths in Unity Catalog volumes, in one place: what `databricks_file`,
//! `sdp_meta_onboarding`, container listings and the `volume` state backend send. Paths are
//! given raw (`/Volumes/c/s/v/my file.csv`): the client percent-encodes them once.
//!
//! - files: `GET`, `HEAD`, `PUT ?overwrite=`, `DELETE /api/2.0/fs/files{path}`; with
//!   `overwrite=false` an existing file is `ALREADY_EXISTS`;
//! - what is safe to repeat is sent again after a server error or a lost answer: an upload
//!   with `overwrite=true`, making a directory, a delete (a repeat of one that took effect
//!   answers 404, which counts as deleted). An upload without `overwrite` is not: a repeat
//!   of one that took effect would be `ALREADY_EXISTS`.
//! - directories: `PUT /api/2.0/fs/directories{dir}` (idempotent; a file's directory is not
//!   made by the upload), `GET` (paged `contents`), `DELETE` (only when empty).

use super::{ApiError, Client, FileMeta, PageSize};
use brickform_core::provider::ErrorKind;
use serde_json::Value;

/// The page size of a directory's listing: its largest page.
pub const DIRECTORY_PAGE: PageSize = PageSize::new("page_size", "1000");

fn file(path: &str) -> String {
    format!("/api/2.0/fs/files{path}")
}

fn directory(path: &str) -> String {
    format!("/api/2.0/fs/directories{path}")
}

/// `Ok(None)` for a 404.
fn found<T>(r: Result<T, ApiError>) -> Result<Option<T>, ApiError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

impl Client {
    /// A file's content; `None` when there is none.
    pub async fn file_get(&self, path: &str) -> Result<Option<Vec<u8>>, ApiError> {
        found(self.get_bytes(&file(path)).await)
    }

    /// A file's size and modification time; `None` when there is none.
    pub async fn file_head(&self, path: &str) -> Result<Option<FileMeta>, ApiError> {
        Ok(found(self.head(&file(path)).await)?.flatten())
    }

    /// Writes a file in one request. Without `overwrite`, an existing file is refused with
    /// `ALREADY_EXISTS`. Its directory must exist ([`Client::directory_make`]).
    pub async fn file_put(
        &self,
        path: &str,
        bytes: Vec<u8>,
        overwrite: bool,
    ) -> Result<(), ApiError> {
        let query = [("overwrite", overwrite.to_string())];
        if overwrite {
            self.idempotent()
                .put_bytes(&file(path), &query, bytes)
                .await
        } else {
            self.put_bytes(&file(path), &query, bytes).await
        }
    }

    /// Deletes a file: `true` when it was there, `false` when it was already gone.
    pub async fn file_delete(&self, path: &str) -> Result<bool, ApiError> {
        Ok(found(self.idempotent().delete(&file(path), &[]).await)?.is_some())
    }

    /// Makes a directory and its parents; one that exists is fine.
    pub async fn directory_make(&self, path: &str) -> Result<(), ApiError> {
        self.idempotent()
            .put_bytes(&directory(path), &[], Vec::new())
            .await
    }

    /// The entries of a directory (`path`, `name`, `is_directory`, …), every page; a
    /// directory that does not exist is empty.
    pub async fn directory_list(&self, path: &str) -> Result<Vec<Value>, ApiError> {
        Ok(self.directory_entries(path).await?.unwrap_or_default())
    }

    /// The entries of a directory, every page; `None` when there is no such directory.
    pub async fn directory_entries(&self, path: &str) -> Result<Option<Vec<Value>>, ApiError> {
        found(
            self.list_all(&directory(path), &[], "contents", Some(DIRECTORY_PAGE))
                .await,
        )
    }

    /// Deletes a directory if it is empty: `Ok(true)` when deleted or already gone.
    pub async fn directory_delete(&self, path: &str) -> Result<bool, ApiError> {
        found(self.idempotent().delete(&directory(path), &[]).await).map(|_| true)
    }
}
