//! The Queries, Alerts and Lakeview dashboards APIs over HTTP.

use super::model::{self, ALERT, QUERY, Spec};
use crate::app::{App, AppState};
use crate::body::{JsonBody, Params, PathParam};
use crate::errors::ApiResult;
use axum::extract::State as AxState;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

const DASHBOARDS: &str = "/api/2.0/lakeview/dashboards";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/api/2.0/sql/queries",
            post(|app: AppState, b: JsonBody| create(app, &QUERY, b))
                .get(|app: AppState, q: Params| list(app, &QUERY, q)),
        )
        .route(
            "/api/2.0/sql/queries/{id}",
            get(|app: AppState, id: PathParam<String>| read(app, &QUERY, id))
                .patch(|app: AppState, id: PathParam<String>, b: JsonBody| {
                    update(app, &QUERY, id, b)
                })
                .delete(|app: AppState, id: PathParam<String>| delete(app, &QUERY, id)),
        )
        .route(
            "/api/2.0/sql/alerts",
            post(|app: AppState, b: JsonBody| create(app, &ALERT, b))
                .get(|app: AppState, q: Params| list(app, &ALERT, q)),
        )
        .route(
            "/api/2.0/sql/alerts/{id}",
            get(|app: AppState, id: PathParam<String>| read(app, &ALERT, id))
                .patch(|app: AppState, id: PathParam<String>, b: JsonBody| {
                    update(app, &ALERT, id, b)
                })
                .delete(|app: AppState, id: PathParam<String>| delete(app, &ALERT, id)),
        )
        .route(DASHBOARDS, post(create_dashboard).get(list_dashboards))
        .route(
            &format!("{DASHBOARDS}/{{id}}"),
            get(read_dashboard)
                .patch(update_dashboard)
                .delete(trash_dashboard),
        )
        .route(
            &format!("{DASHBOARDS}/{{id}}/published"),
            post(publish).get(read_published).delete(unpublish),
        )
}

type Reply = ApiResult<Json<Value>>;

async fn create(AxState(app): AppState, spec: &'static Spec, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, ctx| model::create(st, ctx, spec, &b).map(Json))
}

async fn read(
    AxState(app): AppState,
    spec: &'static Spec,
    PathParam(id): PathParam<String>,
) -> Reply {
    app.view(|st, _| model::get(st, spec, &id).map(|o| Json(Value::Object(o.clone()))))
}

async fn update(
    AxState(app): AppState,
    spec: &'static Spec,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    app.mutate(|st, ctx| model::update(st, ctx, spec, &id, &b).map(Json))
}

/// A delete moves the object to the trash and answers an empty object.
async fn delete(
    AxState(app): AppState,
    spec: &'static Spec,
    PathParam(id): PathParam<String>,
) -> Reply {
    app.mutate(|st, _| model::trash(st, spec, &id).map(|()| Json(json!({}))))
}

async fn list(AxState(app): AppState, spec: &'static Spec, q: Params) -> Reply {
    let size = q.int("page_size")?;
    app.view(|st, _| model::list(st, spec, "results", q.str("page_token"), size).map(Json))
}

async fn create_dashboard(AxState(app): AppState, q: Params, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, ctx| {
        model::create_dashboard(
            st,
            ctx,
            &b,
            q.str("dataset_catalog"),
            q.str("dataset_schema"),
        )
        .map(Json)
    })
}

async fn read_dashboard(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.view(|st, _| model::get_dashboard(st, &id).map(|o| Json(Value::Object(o.clone()))))
}

async fn update_dashboard(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    q: Params,
    JsonBody(b): JsonBody,
) -> Reply {
    app.mutate(|st, ctx| {
        model::update_dashboard(
            st,
            ctx,
            &id,
            &b,
            q.str("dataset_catalog"),
            q.str("dataset_schema"),
        )
        .map(Json)
    })
}

async fn trash_dashboard(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, ctx| model::trash_dashboard(st, ctx, &id).map(|()| Json(json!({}))))
}

async fn list_dashboards(AxState(app): AppState, q: Params) -> Reply {
    let size = q.int("page_size")?;
    app.view(|st, _| model::list_dashboards(st, q.str("page_token"), size).map(Json))
}

async fn publish(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    app.mutate(|st, ctx| model::publish(st, ctx, &id, &b).map(Json))
}

async fn read_published(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.view(|st, _| model::published(st, &id).map(|o| Json(Value::Object(o.clone()))))
}

async fn unpublish(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, _| model::unpublish(st, &id).map(|()| Json(json!({}))))
}
