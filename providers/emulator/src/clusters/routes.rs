//! The Clusters API and the cluster side of the Libraries API over HTTP.

use super::model;
use crate::app::{App, AppState};
use crate::body::{JsonBody, Obj, Params};
use crate::errors::ApiResult;
use axum::extract::State as AxState;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

/// The Go and Python SDKs call the 2.1 paths (databricks-sdk-py
/// databricks/sdk/service/compute.py, ClustersAPI; databricks/cli libs/testserver/handlers.go).
const BASE: &str = "/api/2.1/clusters";
const LIBRARIES: &str = "/api/2.0/libraries";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(&format!("{BASE}/create"), post(create))
        .route(&format!("{BASE}/edit"), post(edit))
        .route(&format!("{BASE}/get"), get(read))
        .route(&format!("{BASE}/list"), get(list))
        .route(&format!("{BASE}/start"), post(start))
        .route(&format!("{BASE}/resize"), post(resize))
        .route(&format!("{BASE}/delete"), post(terminate))
        .route(&format!("{BASE}/permanent-delete"), post(permanent_delete))
        .route(&format!("{BASE}/pin"), post(pin))
        .route(&format!("{BASE}/unpin"), post(unpin))
        .route(&format!("{LIBRARIES}/cluster-status"), get(library_status))
        .route(&format!("{LIBRARIES}/install"), post(install))
        .route(&format!("{LIBRARIES}/uninstall"), post(uninstall))
}

type Reply = ApiResult<Json<Value>>;

fn cluster_id(b: &serde_json::Map<String, Value>) -> ApiResult<String> {
    Ok(Obj::root(b).req_str("cluster_id")?.to_string())
}

/// The create answer holds the id alone; the cluster is PENDING.
async fn create(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let spec = model::settings(&b)?;
    let token = Obj::root(&b).str("idempotency_token")?.map(str::to_string);
    app.mutate(|st, ctx| {
        model::create(st, ctx, spec, token).map(|id| Json(json!({ "cluster_id": id })))
    })
}

async fn edit(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    let spec = model::settings(&b)?;
    app.mutate(|st, ctx| model::edit(st, ctx, &id, spec).map(|()| Json(json!({}))))
}

async fn read(AxState(app): AppState, q: Params) -> Reply {
    let id = q.req_str("cluster_id")?.to_string();
    app.view(|st, _| model::get(st, &id).map(|c| Json(model::view(c))))
}

/// `filter_by.is_pinned=true` lists the pinned clusters only (how the Terraform provider
/// reads `is_pinned`: clusters/resource_cluster.go, setPinnedStatus).
async fn list(AxState(app): AppState, q: Params) -> Reply {
    let pinned_only = q.str("filter_by.is_pinned") == Some("true");
    app.view(|st, _| Ok(Json(model::list(st, pinned_only))))
}

async fn resize(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    app.mutate(|st, ctx| model::resize(st, ctx, &id, &b).map(|()| Json(json!({}))))
}

async fn start(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    app.mutate(|st, ctx| model::start(st, ctx, &id).map(|()| Json(json!({}))))
}

async fn terminate(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    app.mutate(|st, ctx| model::terminate(st, ctx, &id).map(|()| Json(json!({}))))
}

async fn permanent_delete(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    app.mutate(|st, _| model::permanent_delete(st, &id).map(|()| Json(json!({}))))
}

async fn pin(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    app.mutate(|st, _| model::set_pinned(st, &id, true).map(|()| Json(json!({}))))
}

async fn unpin(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    app.mutate(|st, _| model::set_pinned(st, &id, false).map(|()| Json(json!({}))))
}

async fn library_status(AxState(app): AppState, q: Params) -> Reply {
    let id = q.req_str("cluster_id")?.to_string();
    app.view(|st, _| model::library_statuses(st, &id).map(Json))
}

async fn install(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    let libs = model::libraries(&b)?;
    app.mutate(|st, _| model::install(st, &id, libs).map(|()| Json(json!({}))))
}

async fn uninstall(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = cluster_id(&b)?;
    let libs = model::libraries(&b)?;
    app.mutate(|st, _| model::uninstall(st, &id, libs).map(|()| Json(json!({}))))
}
