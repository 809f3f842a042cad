//! The Permissions API over HTTP: an object's permissions read (GET), replaced (PUT) or
//! added to (PATCH), and the levels its type takes. Warehouses are reached under
//! `sql/warehouses` (the Terraform provider's path) as under `warehouses` (the SDK's);
//! queries and alerts under `sql/queries` and `sql/alerts`.

use super::model::{self, Requested};
use crate::app::{App, AppState};
use crate::body::{JsonBody, Obj, PathParam};
use crate::errors::ApiResult;
use axum::extract::State as AxState;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::Value;
use std::sync::Arc;

const BASE: &str = "/api/2.0/permissions";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            &format!("{BASE}/{{object_type}}/{{object_id}}"),
            get(get_one).put(put).patch(patch),
        )
        .route(
            &format!("{BASE}/{{object_type}}/{{object_id}}/permissionLevels"),
            get(levels),
        )
        // Objects of Databricks SQL are reached under `sql/` (`sql/warehouses`,
        // `sql/queries`, `sql/alerts`: terraform-provider-databricks
        // permissions/permission_definitions.go, requestObjectType).
        .route(
            &format!("{BASE}/sql/{{sql_type}}/{{object_id}}"),
            get(
                |app: AppState, PathParam((ty, id)): PathParam<(String, String)>| {
                    get_one(app, PathParam((format!("sql/{ty}"), id)))
                },
            )
            .put(
                |app: AppState, PathParam((ty, id)): PathParam<(String, String)>, b: JsonBody| {
                    put(app, PathParam((format!("sql/{ty}"), id)), b)
                },
            )
            .patch(
                |app: AppState, PathParam((ty, id)): PathParam<(String, String)>, b: JsonBody| {
                    patch(app, PathParam((format!("sql/{ty}"), id)), b)
                },
            ),
        )
        .route(
            &format!("{BASE}/sql/{{sql_type}}/{{object_id}}/permissionLevels"),
            get(
                |app: AppState, PathParam((ty, id)): PathParam<(String, String)>| {
                    levels(app, PathParam((format!("sql/{ty}"), id)))
                },
            ),
        )
}

type Reply = ApiResult<Json<Value>>;

async fn get_one(
    AxState(app): AppState,
    PathParam((ty, id)): PathParam<(String, String)>,
) -> Reply {
    app.view(|st, _| model::get(st, &ty, &id).map(Json))
}

async fn levels(AxState(app): AppState, PathParam((ty, id)): PathParam<(String, String)>) -> Reply {
    app.view(|st, _| model::levels(st, &ty, &id).map(Json))
}

/// The entries of a request body, each with exactly one principal and a level.
fn entries(b: &serde_json::Map<String, Value>) -> ApiResult<Vec<Requested>> {
    let o = Obj::root(b);
    let mut out = Vec::new();
    for (path, item) in o.objs("access_control_list")? {
        let e = Obj::at(item, &path);
        let field = e.one_of(&["user_name", "group_name", "service_principal_name"])?;
        out.push(Requested {
            field,
            name: e.req_str(field)?.to_string(),
            level: e.req_str("permission_level")?.to_string(),
        });
    }
    Ok(out)
}

async fn put(
    AxState(app): AppState,
    PathParam((ty, id)): PathParam<(String, String)>,
    JsonBody(b): JsonBody,
) -> Reply {
    let mut requested = entries(&b)?;
    app.mutate(|st, ctx| {
        model::as_held(st, ctx.behaviours, &mut requested);
        model::write(st, &ty, &id, &requested, true).map(Json)
    })
}

async fn patch(
    AxState(app): AppState,
    PathParam((ty, id)): PathParam<(String, String)>,
    JsonBody(b): JsonBody,
) -> Reply {
    let mut requested = entries(&b)?;
    app.mutate(|st, ctx| {
        model::as_held(st, ctx.behaviours, &mut requested);
        model::write(st, &ty, &id, &requested, false).map(Json)
    })
}
