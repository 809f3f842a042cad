//! The Instance Pools API over HTTP.

use super::model;
use crate::app::{App, AppState};
use crate::body::{JsonBody, Obj, Params};
use crate::errors::ApiResult;
use axum::extract::State as AxState;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

const BASE: &str = "/api/2.0/instance-pools";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(&format!("{BASE}/create"), post(create))
        .route(&format!("{BASE}/edit"), post(edit))
        .route(&format!("{BASE}/get"), get(read))
        .route(&format!("{BASE}/delete"), post(delete))
        .route(&format!("{BASE}/list"), get(list))
}

type Reply = ApiResult<Json<Value>>;

/// The create answer holds the id alone.
async fn create(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let spec = model::settings(&b)?;
    app.mutate(|st, ctx| {
        model::create(st, ctx, spec).map(|id| Json(json!({ "instance_pool_id": id })))
    })
}

async fn edit(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = Obj::root(&b).req_str("instance_pool_id")?.to_string();
    let sent = model::settings(&b)?;
    app.mutate(|st, _| model::edit(st, &id, sent).map(|()| Json(json!({}))))
}

async fn read(AxState(app): AppState, q: Params) -> Reply {
    let id = q.req_str("instance_pool_id")?.to_string();
    app.view(|st, _| model::get(st, &id).map(|p| Json(Value::Object(p.clone()))))
}

async fn delete(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = Obj::root(&b).req_str("instance_pool_id")?.to_string();
    app.mutate(|st, _| model::delete(st, &id).map(|()| Json(json!({}))))
}

async fn list(AxState(app): AppState) -> Reply {
    app.view(|st, _| Ok(Json(model::list(st))))
}
