//! Files in Unity Catalog volumes through the Files API: what `databricks_file` and
//! `sdp_meta_onboarding` both upload, fingerprint and delete. Paths are given raw: the
//! client percent-encodes them (once).

use super::{err, gone_ok, none_if_missing};
use crate::client::{Client, PageSize};

/// The page size of a volume directory's listing (`fs/directories`): its largest page.
pub const DIRECTORY_PAGE: PageSize = PageSize::new("page_size", "1000");
use brickform_core::provider::ProviderResult;

/// Uploads `bytes` to `path`, creating its directory first (the Files API does not).
pub async fn upload(client: &Client, path: &str, bytes: Vec<u8>) -> ProviderResult<()> {
    if let Some(dir) = parent(path) {
        client
            .put_bytes(&format!("/api/2.0/fs/directories{dir}"), &[], Vec::new())
            .await
            .map_err(err)?;
    }
    client
        .put_bytes(
            &format!("/api/2.0/fs/files{path}"),
            &[("overwrite", "true".into())],
            bytes,
        )
        .await
        .map_err(err)
}

/// Size and modification time, so a refresh notices a change without downloading the file.
/// `None` when the file is gone.
pub async fn fingerprint(client: &Client, path: &str) -> ProviderResult<Option<String>> {
    let meta = none_if_missing(client.head(&format!("/api/2.0/fs/files{path}")).await)?;
    Ok(meta.flatten().map(|m| {
        format!(
            "size:{};modified:{}",
            m.content_length.unwrap_or(0),
            m.last_modified.unwrap_or_default()
        )
    }))
}

/// The file's content; `None` when it is gone.
pub async fn download(client: &Client, path: &str) -> ProviderResult<Option<Vec<u8>>> {
    none_if_missing(client.get_bytes(&format!("/api/2.0/fs/files{path}")).await)
}

/// Deletes a file; a file already gone counts as deleted.
pub async fn delete(client: &Client, path: &str) -> ProviderResult<()> {
    gone_ok(
        client
            .delete(&format!("/api/2.0/fs/files{path}"), &[])
            .await,
    )
}

/// Deletes an empty directory; one that is gone or still holds something is left alone.
pub async fn remove_empty_directory(client: &Client, path: &str) {
    let _ = client
        .delete(&format!("/api/2.0/fs/directories{path}"), &[])
        .await;
}

pub fn parent(path: &str) -> Option<&str> {
    path.rsplit_once('/')
        .map(|(p, _)| p)
        .filter(|p| !p.is_empty())
}
