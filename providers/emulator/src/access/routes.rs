//! The IP Access Lists and Workspace Conf APIs over HTTP.

use super::model;
use crate::app::{App, AppState};
use crate::body::{JsonBody, Params, PathParam};
use crate::errors::ApiResult;
use axum::extract::State as AxState;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

const LISTS: &str = "/api/2.0/ip-access-lists";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(LISTS, get(list).post(create))
        .route(
            &format!("{LISTS}/{{id}}"),
            get(read).patch(update).put(replace).delete(delete),
        )
        .route("/api/2.0/workspace-conf", get(conf_status).patch(set_conf))
}

type Reply = ApiResult<Json<Value>>;

/// The create and get answers hold the list under `ip_access_list`.
async fn create(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, ctx| model::create(st, ctx, &b))
        .map(|l| Json(json!({ "ip_access_list": l })))
}

async fn read(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.view(|st, _| model::get(st, &id))
        .map(|l| Json(json!({ "ip_access_list": l })))
}

async fn list(AxState(app): AppState) -> Reply {
    app.view(|st, _| Ok(Json(model::list(st))))
}

async fn update(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    app.mutate(|st, ctx| model::update(st, ctx, &id, &b, false))
        .map(|()| Json(json!({})))
}

async fn replace(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    app.mutate(|st, ctx| model::update(st, ctx, &id, &b, true))
        .map(|()| Json(json!({})))
}

async fn delete(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, _| model::delete(st, &id))
        .map(|()| Json(json!({})))
}

async fn conf_status(AxState(app): AppState, q: Params) -> Reply {
    let keys = q.str("keys").unwrap_or_default().to_string();
    app.view(|st, _| model::conf_status(st, &keys)).map(Json)
}

/// The answer is empty (204 on the service; an empty object here, as other writes).
async fn set_conf(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, _| model::set_conf(st, &b))
        .map(|()| Json(json!({})))
}
