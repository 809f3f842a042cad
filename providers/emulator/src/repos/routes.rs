//! The Repos API over HTTP: `/api/2.0/repos` (POST create, GET list) and
//! `/api/2.0/repos/{repo_id}` (GET, PATCH, DELETE), as databricks-sdk-go's
//! service/workspace/impl.go calls them.

use super::model::{self, CreateRequest, UpdateRequest};
use crate::app::{App, AppState};
use crate::body::{JsonBody, Obj, Params, PathParam, done};
use crate::errors::ApiResult;
use crate::pages::Page;
use axum::extract::State as AxState;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The page size of a listing, which the API does not let a caller choose; the service's is
/// not documented, so a small one that makes clients follow `next_page_token`.
const PAGE: usize = 20;

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.0/repos", get(list).post(create))
        .route(
            "/api/2.0/repos/{repo_id}",
            get(read).patch(update).delete(delete),
        )
}

type Reply = ApiResult<Json<Value>>;

/// `sparse_checkout.patterns`, when the body has a `sparse_checkout`.
fn patterns(b: &Map<String, Value>) -> ApiResult<Option<Vec<String>>> {
    let o = Obj::root(b);
    let Some(sc) = o.obj("sparse_checkout")? else {
        return Ok(None);
    };
    let at = Obj::at(sc, "sparse_checkout");
    Ok(Some(
        at.strs("patterns")?
            .into_iter()
            .map(str::to_string)
            .collect(),
    ))
}

async fn create(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    // git_credential_id picks the credential the clone authenticates with; nothing is
    // cloned here, so it is checked and not kept (the service does not keep it either:
    // terraform-provider-databricks repos/resource_repo.go sends it again on every update).
    o.int("git_credential_id")?;
    let r = CreateRequest {
        url: o.req_str("url")?.to_string(),
        provider: o.req_str("provider")?.to_string(),
        path: o.str("path")?.filter(|p| !p.is_empty()).map(str::to_string),
        sparse_checkout: patterns(&b)?,
    };
    app.mutate(|st, ctx| model::create(st, ctx, r).map(Json))
}

async fn read(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.view(|st, _| model::get(st, &id).map(Json))
}

async fn update(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let o = Obj::root(&b);
    o.int("git_credential_id")?;
    let u = UpdateRequest {
        branch: o
            .str("branch")?
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        tag: o.str("tag")?.filter(|s| !s.is_empty()).map(str::to_string),
        sparse_checkout: patterns(&b)?,
    };
    app.mutate(|st, _| model::update(st, &id, u).map(|()| done()))
}

async fn delete(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, _| model::delete(st, &id).map(|()| done()))
}

async fn list(AxState(app): AppState, q: Params) -> Reply {
    let page = Page::new(
        q.str("next_page_token"),
        None,
        PAGE,
        PAGE,
        "next_page_token",
    )?;
    let prefix = q.str("path_prefix").map(str::to_string);
    app.view(|st, _| model::list(st, prefix.as_deref(), &page).map(Json))
}
