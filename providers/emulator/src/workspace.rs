//! Workspace objects: notebooks, files and directories under `/`.

use crate::app::App;
use crate::body::{JsonBody, Obj, Params, parse_object};
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State, b64};
use crate::util::{compact, with_prefix};
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request, State as AxState};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

const MAX_IMPORT: usize = 10 * 1024 * 1024;
const FORMATS: &[&str] = &[
    "SOURCE",
    "AUTO",
    "HTML",
    "JUPYTER",
    "DBC",
    "RAW",
    "R_MARKDOWN",
];
const LANGUAGES: &[&str] = &["PYTHON", "SQL", "SCALA", "R"];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WsObject {
    pub object_type: String,
    pub object_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(with = "b64")]
    pub content: Vec<u8>,
    pub created_at: i64,
    pub modified_at: i64,
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.0/workspace/mkdirs", post(mkdirs))
        .route("/api/2.0/workspace/import", post(import))
        .route("/api/2.0/workspace/export", get(export))
        .route("/api/2.0/workspace/get-status", get(get_status))
        .route("/api/2.0/workspace/list", get(list))
        .route("/api/2.0/workspace/delete", post(delete))
}

/// The folders every workspace starts with.
pub fn seed(st: &mut State, user: &str, now: i64) {
    for p in [
        "/Users".to_string(),
        format!("/Users/{user}"),
        "/Shared".to_string(),
    ] {
        let id = st.next_id();
        st.workspace.insert(p, dir_object(id, now));
    }
}

fn dir_object(id: i64, now: i64) -> WsObject {
    WsObject {
        object_type: "DIRECTORY".into(),
        object_id: id,
        language: None,
        content: Vec::new(),
        created_at: now,
        modified_at: now,
    }
}

fn missing(path: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Path ({path}) doesn't exist."),
    )
}

fn normalize(raw: &str) -> ApiResult<String> {
    if !raw.starts_with('/') {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '{raw}' must be absolute"
        )));
    }
    let segs: Vec<&str> = raw.split('/').filter(|s| !s.is_empty()).collect();
    if segs.iter().any(|s| *s == "." || *s == "..") {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '{raw}' must not contain '.' or '..'"
        )));
    }
    Ok(format!("/{}", segs.join("/")))
}

fn is_dir(st: &State, path: &str) -> bool {
    path == "/"
        || st
            .workspace
            .get(path)
            .is_some_and(|o| o.object_type == "DIRECTORY")
}

fn parent(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((p, _)) => p,
    }
}

fn children_prefix(path: &str) -> String {
    if path == "/" {
        "/".to_string()
    } else {
        format!("{path}/")
    }
}

/// A notebook or file at `path` (job notebook tasks and pipeline libraries need one).
pub fn runnable_exists(st: &State, path: &str) -> bool {
    normalize(path).is_ok_and(|p| {
        st.workspace
            .get(&p)
            .is_some_and(|o| o.object_type == "NOTEBOOK" || o.object_type == "FILE")
    })
}

fn mkdirs_in(st: &mut State, path: &str, now: i64) -> ApiResult<()> {
    let mut cur = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        cur = format!("{cur}/{seg}");
        match st.workspace.get(&cur) {
            Some(o) if o.object_type != "DIRECTORY" => {
                return Err(ApiError::conflict(
                    "RESOURCE_ALREADY_EXISTS",
                    format!("Path ({cur}) already exists and is not a directory."),
                ));
            }
            Some(_) => {}
            None => {
                let id = st.next_id();
                st.workspace.insert(cur.clone(), dir_object(id, now));
            }
        }
    }
    Ok(())
}

async fn mkdirs(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let path = normalize(Obj::root(&b).req_str("path")?)?;
    app.mutate(|st, ctx| {
        mkdirs_in(st, &path, ctx.now)?;
        Ok(Json(json!({})))
    })
}

struct ImportRequest {
    path: String,
    content: Vec<u8>,
    format: String,
    language: Option<String>,
    overwrite: bool,
}

fn check_enum(field: &str, v: &str, allowed: &[&str]) -> ApiResult<String> {
    if allowed.contains(&v) {
        Ok(v.to_string())
    } else {
        Err(ApiError::invalid(format!(
            "Invalid value for field '{field}': '{v}' is not one of {}",
            allowed.join(", ")
        )))
    }
}

fn from_json(b: &serde_json::Map<String, Value>) -> ApiResult<ImportRequest> {
    let o = Obj::root(b);
    let path = normalize(o.req_str("path")?)?;
    let content = match o.str("content")? {
        None => Vec::new(),
        Some(c) => STANDARD.decode(c).map_err(|_| {
            ApiError::invalid("Invalid value for field 'content': not valid base64")
        })?,
    };
    Ok(ImportRequest {
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

async fn from_multipart(mut mp: Multipart) -> ApiResult<ImportRequest> {
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
            "format" => format = Some(check_enum("format", &text(), FORMATS)?),
            "language" => language = Some(check_enum("language", &text(), LANGUAGES)?),
            "overwrite" => overwrite = text().eq_ignore_ascii_case("true"),
            _ => {}
        }
    }
    let path = normalize(
        &path
            .filter(|p| !p.is_empty())
            .ok_or_else(|| crate::body::missing("path"))?,
    )?;
    Ok(ImportRequest {
        path,
        content,
        format: format.unwrap_or_else(|| "SOURCE".into()),
        language,
        overwrite,
    })
}

fn language_of(path: &str) -> Option<(&'static str, &'static str)> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    match ext {
        "py" => Some(("PYTHON", "# Databricks notebook source")),
        "sql" => Some(("SQL", "-- Databricks notebook source")),
        "scala" => Some(("SCALA", "// Databricks notebook source")),
        "r" | "R" => Some(("R", "# Databricks notebook source")),
        _ => None,
    }
}

fn strip_ext(path: &str) -> String {
    path.rsplit_once('.').map_or(path, |(p, _)| p).to_string()
}

/// Decides what an import creates: `(final path, object type, language)`.
fn classify(r: &ImportRequest) -> ApiResult<(String, &'static str, Option<String>)> {
    match r.format.as_str() {
        "SOURCE" => {
            let lang = r
                .language
                .clone()
                .or_else(|| language_of(&r.path).map(|(l, _)| l.to_string()));
            let lang = lang.ok_or_else(|| {
                ApiError::invalid("Missing required field: language (required for a SOURCE import)")
            })?;
            Ok((r.path.clone(), "NOTEBOOK", Some(lang)))
        }
        "AUTO" => match language_of(&r.path) {
            Some((lang, header)) if r.content.starts_with(header.as_bytes()) => {
                Ok((strip_ext(&r.path), "NOTEBOOK", Some(lang.to_string())))
            }
            _ if r.path.ends_with(".ipynb") => {
                Ok((strip_ext(&r.path), "NOTEBOOK", Some("PYTHON".into())))
            }
            _ => Ok((r.path.clone(), "FILE", None)),
        },
        "RAW" => Ok((r.path.clone(), "FILE", None)),
        "JUPYTER" => Ok((
            strip_ext(&r.path),
            "NOTEBOOK",
            Some(r.language.clone().unwrap_or_else(|| "PYTHON".into())),
        )),
        "HTML" | "R_MARKDOWN" => Ok((
            strip_ext(&r.path),
            "NOTEBOOK",
            Some(r.language.clone().unwrap_or_else(|| "PYTHON".into())),
        )),
        other => Err(ApiError::invalid(format!(
            "Invalid value for field 'format': {other} imports are not supported by the local workspace"
        ))),
    }
}

fn do_import(st: &mut State, ctx: &Ctx, r: ImportRequest) -> ApiResult<()> {
    if r.content.len() > MAX_IMPORT {
        return Err(
            ApiError::invalid("The content exceeds the 10 MB import limit.")
                .with_code("MAX_NOTEBOOK_SIZE_EXCEEDED"),
        );
    }
    let (path, object_type, language) = classify(&r)?;
    if path == "/" {
        return Err(ApiError::invalid(
            "Invalid value for field 'path': cannot import to /",
        ));
    }
    let par = parent(&path);
    if !is_dir(st, par) {
        return Err(ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("The parent folder ({par}) does not exist."),
        ));
    }
    let existing = st.workspace.get(&path);
    let (object_id, created_at) = match existing {
        Some(o) if o.object_type == "DIRECTORY" => {
            return Err(ApiError::conflict(
                "RESOURCE_ALREADY_EXISTS",
                format!("Path ({path}) already exists as a directory."),
            ));
        }
        Some(_) if !r.overwrite => {
            return Err(ApiError::conflict(
                "RESOURCE_ALREADY_EXISTS",
                format!("Path ({path}) already exists."),
            ));
        }
        Some(o) => (o.object_id, o.created_at),
        None => (st.next_id(), ctx.now),
    };
    st.workspace.insert(
        path,
        WsObject {
            object_type: object_type.into(),
            object_id,
            language,
            content: r.content,
            created_at,
            modified_at: ctx.now,
        },
    );
    Ok(())
}

async fn import(AxState(app): AxState<Arc<App>>, req: Request) -> ApiResult<Json<Value>> {
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
    app.mutate(|st, ctx| {
        do_import(st, ctx, r)?;
        Ok(Json(json!({})))
    })
}

fn file_type(o: &WsObject, path: &str) -> String {
    match (o.object_type.as_str(), o.language.as_deref()) {
        ("NOTEBOOK", Some("PYTHON")) => "py".into(),
        ("NOTEBOOK", Some("SQL")) => "sql".into(),
        ("NOTEBOOK", Some("SCALA")) => "scala".into(),
        ("NOTEBOOK", Some("R")) => "r".into(),
        _ => path
            .rsplit_once('.')
            .map(|(_, e)| e.to_string())
            .unwrap_or_default(),
    }
}

async fn export(AxState(app): AxState<Arc<App>>, q: Params) -> ApiResult<Response> {
    let path = normalize(q.req_str("path")?)?;
    if let Some(f) = q.str("format") {
        check_enum("format", f, FORMATS)?;
    }
    let direct = q.bool("direct_download")?.unwrap_or(false);
    let (content, ftype) = app.view(|st, _| {
        let o = st.workspace.get(&path).ok_or_else(|| missing(&path))?;
        if o.object_type == "DIRECTORY" {
            return Err(ApiError::invalid(format!(
                "Path ({path}) is a directory; only DBC exports of directories are supported."
            )));
        }
        Ok((o.content.clone(), file_type(o, &path)))
    })?;
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

fn object_info(path: &str, o: &WsObject) -> Value {
    let size = (o.object_type == "FILE").then_some(o.content.len());
    Value::Object(compact(json!({
        "path": path, "object_type": o.object_type, "object_id": o.object_id, "resource_id": o.object_id.to_string(),
        "language": o.language, "created_at": o.created_at, "modified_at": o.modified_at, "size": size,
    })))
}

fn root_info() -> Value {
    json!({"path": "/", "object_type": "DIRECTORY", "object_id": 0, "resource_id": "0"})
}

async fn get_status(AxState(app): AxState<Arc<App>>, q: Params) -> ApiResult<Json<Value>> {
    let path = normalize(q.req_str("path")?)?;
    app.view(|st, _| {
        if path == "/" {
            return Ok(Json(root_info()));
        }
        st.workspace
            .get(&path)
            .map(|o| Json(object_info(&path, o)))
            .ok_or_else(|| missing(&path))
    })
}

async fn list(AxState(app): AxState<Arc<App>>, q: Params) -> ApiResult<Json<Value>> {
    let path = normalize(q.req_str("path")?)?;
    let after = q.int("notebooks_modified_after")?;
    app.view(|st, _| {
        if !is_dir(st, &path) {
            return match st.workspace.get(&path) {
                Some(o) => Ok(Json(json!({"objects": [object_info(&path, o)]}))),
                None => Err(missing(&path)),
            };
        }
        let prefix = children_prefix(&path);
        let objects: Vec<Value> = with_prefix(&st.workspace, &prefix)
            .filter(|(k, _)| !k[prefix.len()..].contains('/'))
            .filter(|(_, o)| o.object_type != "NOTEBOOK" || after.is_none_or(|a| o.modified_at > a))
            .map(|(k, o)| object_info(k, o))
            .collect();
        Ok(Json(json!({"objects": objects})))
    })
}

async fn delete(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let path = normalize(o.req_str("path")?)?;
    let recursive = o.bool("recursive")?.unwrap_or(false);
    app.mutate(|st, _| {
        if path == "/" {
            return Err(ApiError::invalid("The root folder cannot be deleted.")
                .with_code("DIRECTORY_PROTECTED"));
        }
        let obj = st.workspace.get(&path).ok_or_else(|| missing(&path))?;
        if obj.object_type == "DIRECTORY" {
            let prefix = children_prefix(&path);
            let has_children = with_prefix(&st.workspace, &prefix).next().is_some();
            if has_children && !recursive {
                return Err(ApiError::not_empty(
                    "DIRECTORY_NOT_EMPTY",
                    format!("Folder ({path}) is not empty."),
                ));
            }
            crate::util::remove_prefix(&mut st.workspace, &prefix);
        }
        st.workspace.remove(&path);
        Ok(Json(json!({})))
    })
}
