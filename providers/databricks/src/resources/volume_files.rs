//! Files in Unity Catalog volumes as `databricks_file` and `sdp_meta_onboarding` both
//! upload, fingerprint and delete them, over the client's Files API calls
//! (`crate::client::files`), with provider errors.

use super::err;
use crate::client::Client;
use brickform_core::provider::ProviderResult;

/// Uploads `bytes` to `path`, creating its directory first (the Files API does not).
pub async fn upload(client: &Client, path: &str, bytes: Vec<u8>) -> ProviderResult<()> {
    if let Some(dir) = parent(path) {
        client.directory_make(dir).await.map_err(err)?;
    }
    client.file_put(path, bytes, true).await.map_err(err)
}

/// Size and modification time, so a refresh notices a change without downloading the file.
/// `None` when the file is gone.
pub async fn fingerprint(client: &Client, path: &str) -> ProviderResult<Option<String>> {
    let meta = client.file_head(path).await.map_err(err)?;
    Ok(meta.map(|m| {
        format!(
            "size:{};modified:{}",
            m.content_length.unwrap_or(0),
            m.last_modified.unwrap_or_default()
        )
    }))
}

/// The file's content; `None` when it is gone.
pub async fn download(client: &Client, path: &str) -> ProviderResult<Option<Vec<u8>>> {
    client.file_get(path).await.map_err(err)
}

/// Deletes a file; a file already gone counts as deleted.
pub async fn delete(client: &Client, path: &str) -> ProviderResult<()> {
    client.file_delete(path).await.map(|_| ()).map_err(err)
}

/// Deletes an empty directory; one that is gone or still holds something is left alone.
pub async fn remove_empty_directory(client: &Client, path: &str) {
    let _ = client.directory_delete(path).await;
}

pub fn parent(path: &str) -> Option<&str> {
    path.rsplit_once('/')
        .map(|(p, _)| p)
        .filter(|p| !p.is_empty())
}
