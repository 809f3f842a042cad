//! The MLflow experiments and model registry APIs over HTTP, at the paths and with the
//! methods of databricks-sdk-go service/ml/impl.go.

use super::model;
use crate::app::{App, AppState};
use crate::body::{JsonBody, Obj, Params};
use crate::errors::ApiResult;
use axum::extract::State as AxState;
use axum::routing::{delete, get, patch, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

const EXPERIMENTS: &str = "/api/2.0/mlflow/experiments";
const MODELS: &str = "/api/2.0/mlflow/registered-models";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(&format!("{EXPERIMENTS}/create"), post(create_experiment))
        .route(&format!("{EXPERIMENTS}/get"), get(get_experiment))
        .route(
            &format!("{EXPERIMENTS}/get-by-name"),
            get(experiment_by_name),
        )
        .route(&format!("{EXPERIMENTS}/update"), post(update_experiment))
        .route(
            &format!("{EXPERIMENTS}/set-experiment-tag"),
            post(set_experiment_tag),
        )
        .route(&format!("{EXPERIMENTS}/delete"), post(delete_experiment))
        .route(&format!("{MODELS}/create"), post(create_model))
        .route(&format!("{MODELS}/get"), get(get_model_open))
        .route(
            "/api/2.0/mlflow/databricks/registered-models/get",
            get(get_model),
        )
        .route(&format!("{MODELS}/update"), patch(update_model))
        .route(&format!("{MODELS}/set-tag"), post(set_model_tag))
        .route(&format!("{MODELS}/delete-tag"), delete(delete_model_tag))
        .route(&format!("{MODELS}/delete"), delete(delete_model))
}

type Reply = ApiResult<Json<Value>>;

/// The create answers the id alone.
async fn create_experiment(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, ctx| {
        model::create_experiment(st, ctx, &b).map(|id| Json(json!({ "experiment_id": id })))
    })
}

async fn get_experiment(AxState(app): AppState, q: Params) -> Reply {
    let id = q.req_str("experiment_id")?.to_string();
    app.view(|st, _| model::get_experiment(st, &id).map(|e| Json(json!({ "experiment": e }))))
}

async fn experiment_by_name(AxState(app): AppState, q: Params) -> Reply {
    let name = q.req_str("experiment_name")?.to_string();
    app.view(|st, _| model::experiment_by_name(st, &name).map(|e| Json(json!({ "experiment": e }))))
}

/// Renames; an update without a new name changes nothing.
async fn update_experiment(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let id = o.req_str("experiment_id")?.to_string();
    let new_name = o
        .str("new_name")?
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    app.mutate(|st, ctx| {
        match &new_name {
            Some(n) => model::rename_experiment(st, ctx, &id, n)?,
            None => {
                model::get_experiment(st, &id)?;
            }
        }
        Ok(Json(json!({})))
    })
}

async fn set_experiment_tag(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let id = o.req_str("experiment_id")?.to_string();
    let key = o.req_str("key")?.to_string();
    let value = o.str("value")?.unwrap_or_default().to_string();
    app.mutate(|st, ctx| {
        model::set_experiment_tag(st, ctx, &id, &key, &value).map(|()| Json(json!({})))
    })
}

async fn delete_experiment(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = Obj::root(&b).req_str("experiment_id")?.to_string();
    app.mutate(|st, ctx| model::delete_experiment(st, ctx, &id).map(|()| Json(json!({}))))
}

async fn create_model(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, ctx| {
        model::create_model(st, ctx, &b).map(|m| Json(json!({ "registered_model": m })))
    })
}

/// The Databricks get: the model with its `id` and the caller's permission level.
async fn get_model(AxState(app): AppState, q: Params) -> Reply {
    let name = q.req_str("name")?.to_string();
    app.view(|st, _| {
        model::get_model(st, &name).map(|m| Json(json!({ "registered_model_databricks": m })))
    })
}

async fn get_model_open(AxState(app): AppState, q: Params) -> Reply {
    let name = q.req_str("name")?.to_string();
    app.view(|st, _| {
        model::get_model_open(st, &name).map(|m| Json(json!({ "registered_model": m })))
    })
}

async fn update_model(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let name = o.req_str("name")?.to_string();
    let description = o.str("description")?.map(str::to_string);
    app.mutate(|st, ctx| {
        model::update_model(st, ctx, &name, description.as_deref())
            .map(|m| Json(json!({ "registered_model": m })))
    })
}

async fn set_model_tag(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let name = o.req_str("name")?.to_string();
    let key = o.req_str("key")?.to_string();
    let value = o.str("value")?.unwrap_or_default().to_string();
    app.mutate(|st, ctx| {
        model::set_model_tag(st, ctx, &name, &key, &value).map(|()| Json(json!({})))
    })
}

/// The tag's key and the model's name are query parameters (the SDK's `url` tags).
async fn delete_model_tag(AxState(app): AppState, q: Params) -> Reply {
    let name = q.req_str("name")?.to_string();
    let key = q.req_str("key")?.to_string();
    app.mutate(|st, ctx| model::delete_model_tag(st, ctx, &name, &key).map(|()| Json(json!({}))))
}

async fn delete_model(AxState(app): AppState, q: Params) -> Reply {
    let name = q.req_str("name")?.to_string();
    app.mutate(|st, _| model::delete_model(st, &name).map(|()| Json(json!({}))))
}
