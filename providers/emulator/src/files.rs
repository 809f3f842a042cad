//! Files API for UC volumes: `/api/2.0/fs/files{path}` and `/api/2.0/fs/directories{path}`.

use crate::app::App;
use crate::body::{Params, PathParam};
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::store::{State, b64};
use crate::util::{http_date, remove_prefix, rename_prefix, with_prefix};
use axum::body::{Body, Bytes};
use axum::extract::State as AxState;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, put};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FsEntry {
    Directory {
        modified: i64,
    },
    File {
        #[serde(with = "b64")]
        content: Vec<u8>,
        modified: i64,
    },
}

/// Uploads under this path carry file contents (their own body limit, logged by size).
pub const FILES_PREFIX: &str = "/api/2.0/fs/files/";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/api/2.0/fs/files/{*path}",
            put(put_file)
                .get(get_file)
                .head(head_file)
                .delete(delete_file),
        )
        .route(
            "/api/2.0/fs/directories/{*path}",
            put(put_dir).get(list_dir).head(head_dir).delete(delete_dir),
        )
        .route("/api/2.0/fs/create-download-url", post(no_presigned_urls))
        .route("/api/2.0/fs/create-upload-url", post(no_presigned_urls))
        .route(
            "/api/2.0/fs/create-upload-part-urls",
            post(no_presigned_urls),
        )
}

/// Moves a directory tree (a volume, schema or catalog rename).
pub fn rename_tree(st: &mut State, old: &str, new: &str) {
    rename_prefix(&mut st.files, old, new, |_, _| {});
}

pub fn remove_tree(st: &mut State, prefix: &str) {
    remove_prefix(&mut st.files, prefix);
}

fn not_found(path: &str) -> ApiError {
    ApiError::not_found(
        "NOT_FOUND",
        format!("The file or directory '{path}' does not exist."),
    )
}

/// `/Volumes/Cat/Sch/Vol/a//b/` → `/Volumes/cat/sch/vol/a/b`: the UC part is
/// case-insensitive like UC names, the rest is kept as is.
fn normalize(raw: &str) -> ApiResult<String> {
    let segs: Vec<&str> = raw.split('/').filter(|s| !s.is_empty()).collect();
    if segs.iter().any(|s| *s == "." || *s == "..") {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '{raw}' must be absolute without '.' or '..'"
        )));
    }
    if segs.first() != Some(&"Volumes") || segs.len() < 4 {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '/{raw}' is not in a volume (/Volumes/<catalog>/<schema>/<volume>/...)"
        )));
    }
    let mut out = String::new();
    for (i, s) in segs.iter().enumerate() {
        out.push('/');
        if (1..4).contains(&i) {
            out.push_str(&s.to_lowercase())
        } else {
            out.push_str(s)
        }
    }
    Ok(out)
}

fn check_volume(st: &State, path: &str) -> ApiResult<String> {
    crate::uc::volume_root(st, path).ok_or_else(|| {
        ApiError::not_found(
            "NOT_FOUND",
            format!("The volume of '{path}' does not exist."),
        )
    })
}

fn is_dir(st: &State, root: &str, path: &str) -> bool {
    path == root || matches!(st.files.get(path), Some(FsEntry::Directory { .. }))
}

/// Creates the missing directories between the volume root and `dir` (inclusive).
fn mkdirs(st: &mut State, root: &str, dir: &str, now: i64) -> ApiResult<()> {
    let mut cur = root.to_string();
    for seg in dir[root.len()..].split('/').filter(|s| !s.is_empty()) {
        cur = format!("{cur}/{seg}");
        match st.files.get(&cur) {
            Some(FsEntry::File { .. }) => {
                return Err(ApiError::conflict(
                    "ALREADY_EXISTS",
                    format!("'{cur}' is a file, not a directory."),
                ));
            }
            Some(FsEntry::Directory { .. }) => {}
            None => {
                st.files
                    .insert(cur.clone(), FsEntry::Directory { modified: now });
            }
        }
    }
    Ok(())
}

async fn put_file(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
    q: Params,
    body: Bytes,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    let overwrite = q.bool("overwrite")?.unwrap_or(true);
    app.mutate(|st, ctx| {
        let root = check_volume(st, &path)?;
        if path == root {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'path': '{path}' is a volume, not a file"
            )));
        }
        match st.files.get(&path) {
            Some(FsEntry::Directory { .. }) => {
                return Err(ApiError::conflict(
                    "ALREADY_EXISTS",
                    format!("'{path}' is a directory."),
                ));
            }
            Some(FsEntry::File { .. }) if !overwrite => {
                return Err(ApiError::conflict(
                    "ALREADY_EXISTS",
                    format!("The file '{path}' already exists and overwrite is false."),
                ));
            }
            _ => {}
        }
        let parent = path
            .rsplit_once('/')
            .map_or(root.as_str(), |(p, _)| p)
            .to_string();
        mkdirs(st, &root, &parent, ctx.now)?;
        st.files.insert(
            path.clone(),
            FsEntry::File {
                content: body.to_vec(),
                modified: ctx.now,
            },
        );
        Ok(StatusCode::NO_CONTENT.into_response())
    })
}

fn file_headers(len: usize, modified: i64) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    if let Ok(v) = HeaderValue::from_str(&http_date(modified)) {
        h.insert(header::LAST_MODIFIED, v);
    }
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h
}

/// `bytes=a-b`, `bytes=a-` or `bytes=-n`; `None` means the whole file.
fn parse_range(headers: &HeaderMap, len: usize) -> Result<Option<(usize, usize)>, ()> {
    let Some(v) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    let spec = v.strip_prefix("bytes=").ok_or(())?;
    let (a, b) = spec.split_once('-').ok_or(())?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: usize = n.parse().map_err(|_| ())?;
            (len.saturating_sub(n), len.saturating_sub(1))
        }
        (a, "") => (a.parse().map_err(|_| ())?, len.saturating_sub(1)),
        (a, b) => (
            a.parse().map_err(|_| ())?,
            b.parse::<usize>()
                .map_err(|_| ())?
                .min(len.saturating_sub(1)),
        ),
    };
    if start >= len || start > end {
        Err(())
    } else {
        Ok(Some((start, end)))
    }
}

async fn get_file(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    let (content, modified) = app.view(|st, _| match st.files.get(&path) {
        Some(FsEntry::File { content, modified }) => Ok((content.clone(), *modified)),
        _ => Err(not_found(&path)),
    })?;
    let len = content.len();
    match parse_range(&headers, len) {
        Ok(None) => Ok((file_headers(len, modified), Body::from(content)).into_response()),
        Ok(Some((a, b))) => {
            let mut h = file_headers(b + 1 - a, modified);
            if let Ok(v) = HeaderValue::from_str(&format!("bytes {a}-{b}/{len}")) {
                h.insert(header::CONTENT_RANGE, v);
            }
            Ok((
                StatusCode::PARTIAL_CONTENT,
                h,
                Body::from(content[a..=b].to_vec()),
            )
                .into_response())
        }
        Err(()) => Err(ApiError::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            "INVALID_PARAMETER_VALUE",
            format!("Invalid Range for a file of {len} bytes"),
        )),
    }
}

async fn head_file(AxState(app): AxState<Arc<App>>, PathParam(raw): PathParam<String>) -> Response {
    let path = match normalize(&raw) {
        Ok(p) => p,
        Err(e) => return e.status.into_response(),
    };
    let meta = app.view(|st, _| match st.files.get(&path) {
        Some(FsEntry::File { content, modified }) => Ok((content.len(), *modified)),
        _ => Err(not_found(&path)),
    });
    match meta {
        Ok((len, modified)) => (file_headers(len, modified), Body::empty()).into_response(),
        // HEAD answers carry no body.
        Err(e) => e.status.into_response(),
    }
}

async fn delete_file(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    app.mutate(|st, _| match st.files.get(&path) {
        Some(FsEntry::File { .. }) => {
            st.files.remove(&path);
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        Some(FsEntry::Directory { .. }) => Err(ApiError::invalid(format!(
            "'{path}' is a directory; use the directories API."
        ))),
        None => Err(not_found(&path)),
    })
}

async fn put_dir(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    app.mutate(|st, ctx| {
        let root = check_volume(st, &path)?;
        mkdirs(st, &root, &path, ctx.now)?;
        Ok(StatusCode::NO_CONTENT.into_response())
    })
}

async fn head_dir(AxState(app): AxState<Arc<App>>, PathParam(raw): PathParam<String>) -> Response {
    let Ok(path) = normalize(&raw) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let exists = app
        .view(|st, _| {
            Ok(crate::uc::volume_root(st, &path).is_some_and(|root| is_dir(st, &root, &path)))
        })
        .unwrap_or(false);
    if exists {
        StatusCode::OK.into_response()
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

async fn list_dir(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
    q: Params,
) -> ApiResult<Json<Value>> {
    let path = normalize(&raw)?;
    let page = Page::new(
        q.str("page_token"),
        q.int("page_size")?,
        1000,
        1000,
        "page_size",
    )?;
    app.view(|st, _| {
        let root = check_volume(st, &path)?;
        if !is_dir(st, &root, &path) {
            return Err(not_found(&path));
        }
        let prefix = format!("{path}/");
        let iter = with_prefix(&st.files, &prefix)
            .filter(|(k, _)| !k[prefix.len()..].contains('/'))
            .filter(|(k, _)| page.after.as_deref().is_none_or(|a| k.as_str() > a))
            .map(|(k, e)| {
                let name = &k[prefix.len()..];
                let entry = match e {
                    FsEntry::Directory { modified } => json!({"path": k, "name": name, "is_directory": true, "last_modified": modified}),
                    FsEntry::File { content, modified } => {
                        json!({"path": k, "name": name, "is_directory": false, "file_size": content.len(), "last_modified": modified})
                    }
                };
                (k.clone(), entry)
            });
        let (contents, next) = page.collect(iter);
        let mut out = json!({"contents": contents});
        if let Some(t) = next {
            out["next_page_token"] = json!(t);
        }
        Ok(Json(out))
    })
}

async fn delete_dir(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    app.mutate(|st, _| {
        let root = check_volume(st, &path)?;
        if path == root {
            return Err(ApiError::invalid(format!(
                "'{path}' is a volume; delete the volume instead."
            )));
        }
        if !matches!(st.files.get(&path), Some(FsEntry::Directory { .. })) {
            return Err(not_found(&path));
        }
        if with_prefix(&st.files, &format!("{path}/")).next().is_some() {
            return Err(ApiError::not_empty(
                "DIRECTORY_NOT_EMPTY",
                format!("The directory '{path}' is not empty."),
            ));
        }
        st.files.remove(&path);
        Ok(StatusCode::NO_CONTENT.into_response())
    })
}

/// This workspace has no presigned URLs; the SDK then falls back to the Files API.
async fn no_presigned_urls() -> ApiError {
    ApiError::not_found(
        "NOT_FOUND",
        "Presigned URLs are not enabled in this workspace.",
    )
}

/// Whether a file exists at a volume path (used by job runs).
pub fn file_exists(st: &State, raw: &str) -> bool {
    normalize(raw).is_ok_and(|p| matches!(st.files.get(&p), Some(FsEntry::File { .. })))
}
