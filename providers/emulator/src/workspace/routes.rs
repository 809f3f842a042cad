//! The Workspace API over HTTP: imports read from JSON or multipart bodies, exports
//! answered as JSON or raw bytes.

use super::model;
use super::{FORMATS, LANGUAGES};
use crate::app::{App, AppState};
use crate::body::done;
use crate::body::{JsonBody, Obj, Params, parse_object};
use crate::errors::{ApiError, ApiResult};
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request, State as AxState};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::sync::Arc;

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.0/workspace/mkdirs", post(mkdirs))
        .route("/api/2.0/workspace/import", post(import))
        .route("/api/2.0/workspace/export", get(export))
        .route("/api/2.0/workspace/get-status", get(get_status))
        .route("/api/2.0/workspace/list", get(list))
        .route("/api/2.0/workspace/delete", post(delete))
}

async fn mkdirs(AxState(app): AppState, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let path = model::normalize(Obj::root(&b).req_str("path")?)?;
    app.mutate(|st, ctx| model::mkdirs_in(st, &path, ctx.now).map(|()| done()))
}

fn from_json(b: &serde_json::Map<String, Value>) -> ApiResult<model::ImportRequest> {
    let o = Obj::root(b);
    let path = model::normalize(o.req_str("path")?)?;
    let content = match o.str("content")? {
        None => Vec::new(),
        Some(c) => STANDARD.decode(c).map_err(|_| {
            ApiError::invalid("Invalid value for field 'content': not valid base64")
        })?,
    };
    Ok(model::ImportRequest {
        path,
        content,
        format: o
            .enum_str("format", FORMATS)?
            .unwrap_or("SOURCE")
            .to_string(),
        language: o.enum_str("language", LANGUAGES)?.map(str::to_string),
        overwrite: o.bool("overwrite")?.unwrap_or(false),
    })
}

async fn from_multipart(mut mp: Multipart) -> ApiResult<model::ImportRequest> {
    let (mut path, mut content, mut format, mut language, mut overwrite) =
        (None, Vec::new(), None, None, false);
    let bad = |e: axum::extract::multipart::MultipartError| {
        ApiError::invalid(format!("Malformed multipart body: {e}"))
    };
    while let Some(field) = mp.next_field().await.map_err(bad)? {
        let name = field.name().unwrap_or_default().to_string();
        let data = field.bytes().await.map_err(bad)?;
        let text = || String::from_utf8_lossy(&data).trim().to_string();
        match name.as_str() {
            "path" => path = Some(text()),
            "content" => content = data.to_vec(),
            "format" => format = Some(model::check_enum("format", &text(), FORMATS)?),
            "language" => language = Some(model::check_enum("language", &text(), LANGUAGES)?),
            "overwrite" => overwrite = text().eq_ignore_ascii_case("true"),
            _ => {}
        }
    }
    let path = model::normalize(
        &path
            .filter(|p| !p.is_empty())
            .ok_or_else(|| crate::body::missing("path"))?,
    )?;
    Ok(model::ImportRequest {
        path,
        content,
        format: format.unwrap_or_else(|| "SOURCE".into()),
        language,
        overwrite,
    })
}

async fn import(AxState(app): AppState, req: Request) -> ApiResult<Json<Value>> {
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    let r = if multipart {
        let mp = Multipart::from_request(req, &())
            .await
            .map_err(|e| ApiError::invalid(format!("Malformed multipart body: {e}")))?;
        from_multipart(mp).await?
    } else {
        let bytes = Bytes::from_request(req, &())
            .await
            .map_err(|e| ApiError::invalid(format!("Cannot read the request body: {e}")))?;
        from_json(&parse_object(&bytes)?)?
    };
    app.mutate(|st, ctx| model::do_import(st, ctx, r).map(|()| done()))
}

async fn export(AxState(app): AppState, q: Params) -> ApiResult<Response> {
    let path = model::normalize(q.req_str("path")?)?;
    if let Some(f) = q.str("format") {
        model::check_enum("format", f, FORMATS)?;
    }
    let direct = q.bool("direct_download")?.unwrap_or(false);
    let (content, ftype) = app.view(|st, _| model::export(st, &path))?;
    if direct {
        let mut r = content.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
        return Ok(r);
    }
    Ok(Json(json!({"content": STANDARD.encode(content), "file_type": ftype})).into_response())
}

async fn get_status(AxState(app): AppState, q: Params) -> ApiResult<Json<Value>> {
    let raw = q.req_str("path")?;
    let path = model::normalize(raw)?;
    let mut info = app.view(|st, _| model::get_status(st, &path))?;
    // The answer names the object as the request spelled it.
    if model::mounted(raw) {
        info["path"] = Value::from(format!("/Workspace{}", path.trim_end_matches('/')));
    }
    Ok(Json(info))
}

async fn list(AxState(app): AppState, q: Params) -> ApiResult<Json<Value>> {
    let path = model::normalize(q.req_str("path")?)?;
    let after = q.int("notebooks_modified_after")?;
    app.view(|st, _| Ok(Json(json!({"objects": model::list(st, &path, after)?}))))
}

async fn delete(AxState(app): AppState, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let path = model::normalize(o.req_str("path")?)?;
    let recursive = o.bool("recursive")?.unwrap_or(false);
    app.mutate(|st, _| model::delete(st, &path, recursive).map(|()| done()))
}
