//! The Files API over HTTP: raw bodies in and out, ranges, and the headers the SDK reads.

use super::model::{self, normalize};
use crate::app::{App, AppState};
use crate::body::{Params, PathParam};
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::util::http_date;
use axum::body::{Body, Bytes};
use axum::extract::State as AxState;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, put};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

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

fn no_content() -> Response {
    StatusCode::NO_CONTENT.into_response()
}

async fn put_file(
    AxState(app): AppState,
    PathParam(raw): PathParam<String>,
    q: Params,
    body: Bytes,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    let overwrite = q.bool("overwrite")?.unwrap_or(true);
    app.mutate(|st, ctx| {
        model::put_file(st, ctx, &path, body.to_vec(), overwrite).map(|()| no_content())
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
    AxState(app): AppState,
    PathParam(raw): PathParam<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    let (content, modified) = app.view(|st, _| {
        model::read_file(st, &path).map(|(content, modified)| (content.to_vec(), modified))
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

async fn head_file(AxState(app): AppState, PathParam(raw): PathParam<String>) -> Response {
    let path = match normalize(&raw) {
        Ok(p) => p,
        Err(e) => return e.status.into_response(),
    };
    let meta = app.view(|st, _| {
        model::read_file(st, &path).map(|(content, modified)| (content.len(), modified))
    });
    match meta {
        Ok((len, modified)) => (file_headers(len, modified), Body::empty()).into_response(),
        // HEAD answers carry no body.
        Err(e) => e.status.into_response(),
    }
}

async fn delete_file(
    AxState(app): AppState,
    PathParam(raw): PathParam<String>,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    app.mutate(|st, _| model::delete_file(st, &path).map(|()| no_content()))
}

async fn put_dir(AxState(app): AppState, PathParam(raw): PathParam<String>) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    app.mutate(|st, ctx| model::put_dir(st, ctx, &path).map(|()| no_content()))
}

async fn head_dir(AxState(app): AppState, PathParam(raw): PathParam<String>) -> Response {
    let Ok(path) = normalize(&raw) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let exists = app
        .view(|st, _| Ok(model::dir_exists(st, &path)))
        .unwrap_or(false);
    if exists {
        StatusCode::OK.into_response()
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

async fn list_dir(
    AxState(app): AppState,
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
        let (entries, next) = model::list_dir(st, &path, &page)?;
        let contents: Vec<Value> = entries
            .into_iter()
            .map(|e| match e.file_size {
                None => json!({"path": e.path, "name": e.name, "is_directory": true, "last_modified": e.last_modified}),
                Some(size) => json!({"path": e.path, "name": e.name, "is_directory": false, "file_size": size, "last_modified": e.last_modified}),
            })
            .collect();
        let mut out = json!({"contents": contents});
        if let Some(t) = next {
            out["next_page_token"] = json!(t);
        }
        Ok(Json(out))
    })
}

async fn delete_dir(
    AxState(app): AppState,
    PathParam(raw): PathParam<String>,
) -> ApiResult<Response> {
    let path = normalize(&raw)?;
    app.mutate(|st, _| model::delete_dir(st, &path).map(|()| no_content()))
}

/// This workspace has no presigned URLs; the SDK then falls back to the Files API.
async fn no_presigned_urls() -> ApiError {
    ApiError::not_found(
        "NOT_FOUND",
        "Presigned URLs are not enabled in this workspace.",
    )
}
