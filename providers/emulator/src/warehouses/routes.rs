//! The SQL Warehouses API over HTTP, and the Databricks SQL data sources list.

use super::model;
use crate::app::{App, AppState};
use crate::behaviours::Behaviour;
use crate::body::{JsonBody, PathParam};
use crate::errors::ApiResult;
use axum::extract::State as AxState;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.0/sql/warehouses", post(create).get(list))
        .route("/api/2.0/sql/warehouses/{id}", get(read).delete(delete))
        .route("/api/2.0/sql/warehouses/{id}/edit", post(edit))
        .route("/api/2.0/sql/warehouses/{id}/start", post(start))
        .route("/api/2.0/sql/warehouses/{id}/stop", post(stop))
        .route("/api/2.0/preview/sql/data_sources", get(data_sources))
}

type Reply = ApiResult<Json<Value>>;

/// The workspace's default of `enable_serverless_compute`.
fn serverless_default(app: &App) -> bool {
    app.behaviours().on(Behaviour::WarehouseServerlessDefault)
}

/// The workspace's host name without the port: what JDBC and ODBC clients are given.
fn host(headers: &HeaderMap) -> String {
    let base = crate::auth::base_url(headers);
    let host = base.trim_start_matches("http://");
    host.rsplit_once(':').map_or(host, |(h, _)| h).to_string()
}

/// The create answer holds the id alone; the warehouse is read with a GET.
async fn create(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let spec = model::settings(&b, serverless_default(&app))?;
    app.mutate(|st, ctx| model::create(st, ctx, spec).map(|id| Json(json!({ "id": id }))))
}

async fn list(AxState(app): AppState, headers: HeaderMap) -> Reply {
    let host = host(&headers);
    app.view(|st, _| {
        let all: Vec<Value> = st
            .warehouses
            .warehouses
            .values()
            .map(|w| model::view(w, &host))
            .collect();
        Ok(Json(json!({ "warehouses": all })))
    })
}

async fn read(
    AxState(app): AppState,
    headers: HeaderMap,
    PathParam(id): PathParam<String>,
) -> Reply {
    let host = host(&headers);
    app.view(|st, _| model::get(st, &id).map(|w| Json(model::view(w, &host))))
}

async fn edit(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let spec = model::settings(&b, serverless_default(&app))?;
    app.mutate(|st, _| model::edit(st, &id, spec).map(|()| Json(json!({}))))
}

async fn delete(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, ctx| model::delete(st, ctx, &id).map(|()| Json(json!({}))))
}

async fn start(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, ctx| model::start(st, ctx, &id).map(|()| Json(json!({}))))
}

async fn stop(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, ctx| model::stop(st, ctx, &id).map(|()| Json(json!({}))))
}

async fn data_sources(AxState(app): AppState) -> Reply {
    app.view(|st, _| Ok(Json(model::data_sources(st))))
}
