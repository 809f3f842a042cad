//! The workspace's metastore and its assignment: `current-metastore-assignment`,
//! `metastore_summary`, `metastores` (the one metastore the local workspace knows) and
//! `workspaces/{workspace_id}/metastore` (assign, change, unassign).
//!
//! A workspace is assigned to one metastore (Behaviour::OneMetastoreAssignment): a new one
//! to its own, with `main` as the default catalog (Behaviour::NewWorkspaceMain). The
//! assignment is kept in the settings collection once it has been changed. Unassigning
//! it makes the current-assignment calls answer "No metastore assigned"; the other Unity
//! Catalog calls go on working (not modelled).

use super::model::{NEW_WORKSPACE_CATALOG, metastore_root};
use crate::app::{App, AppState};
use crate::behaviours::Behaviour;
use crate::body::{JsonBody, Obj, Params, PathParam};
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use axum::extract::State as AxState;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

const UC: &str = "/api/2.1/unity-catalog";
const KEY: &str = "metastore_assignment";
/// What a metastore is called here; `metastores` lists it under this name.
pub const METASTORE_NAME: &str = "brickform-local";
const REGION: &str = "us-east-1";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            &format!("{UC}/current-metastore-assignment"),
            get(current_assignment),
        )
        .route(&format!("{UC}/metastore_summary"), get(summary))
        .route(&format!("{UC}/metastores"), get(list))
        .route(&format!("{UC}/metastores/{{id}}"), get(get_one))
        .route(
            &format!("{UC}/workspaces/{{workspace_id}}/metastore"),
            get(current_assignment)
                .put(assign)
                .patch(update)
                .delete(unassign),
        )
}

/// The workspace's assignment: its metastore id (`None`: unassigned) and default catalog.
fn assignment(st: &State) -> (Option<String>, String) {
    match st.settings.settings.get(KEY) {
        None => (
            Some(st.metastore_id.clone()),
            NEW_WORKSPACE_CATALOG.to_string(),
        ),
        Some(a) => (
            a.get("metastore_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            a.get("default_catalog_name")
                .and_then(Value::as_str)
                .unwrap_or("hive_metastore")
                .to_string(),
        ),
    }
}

fn unassigned() -> ApiError {
    ApiError::not_found(
        "METASTORE_DOES_NOT_EXIST",
        "No metastore assigned for the current workspace.",
    )
}

/// The metastore this workspace is assigned to, or the 404 the service answers.
fn assigned(st: &State) -> ApiResult<(String, String)> {
    match assignment(st) {
        (Some(m), d) => Ok((m, d)),
        (None, _) => Err(unassigned()),
    }
}

/// `MetastoreAssignment`; the default catalog is the default namespace setting's when it
/// is set (it replaces the assignment's, which the SDK calls deprecated).
async fn current_assignment(AxState(app): AppState) -> ApiResult<Json<Value>> {
    app.view(|st, _| {
        let (metastore_id, default) = assigned(st)?;
        let default = crate::settings::default_namespace(st).unwrap_or(default);
        Ok(Json(json!({
            "metastore_id": metastore_id,
            "workspace_id": st.workspace_id,
            "default_catalog_name": default,
        })))
    })
}

/// `MetastoreInfo` of the workspace's own metastore.
fn info(st: &State) -> Value {
    json!({
        "metastore_id": st.metastore_id,
        "name": METASTORE_NAME,
        "region": REGION,
        "cloud": "aws",
        "storage_root": metastore_root(st),
        "global_metastore_id": format!("aws:{REGION}:{}", st.metastore_id),
        "delta_sharing_scope": "INTERNAL",
        "privilege_model_version": "1.0",
        "external_access_enabled": false,
        "owner": "System user",
    })
}

/// `GET metastore_summary`: the assigned metastore (`GetMetastoreSummaryResponse`).
async fn summary(AxState(app): AppState) -> ApiResult<Json<Value>> {
    app.view(|st, _| {
        assigned(st)?;
        Ok(Json(info(st)))
    })
}

/// `GET metastores`: the metastores of the region the workspace sees; one here.
async fn list(AxState(app): AppState) -> ApiResult<Json<Value>> {
    app.view(|st, _| Ok(Json(json!({"metastores": [info(st)]}))))
}

fn missing_metastore(id: &str) -> ApiError {
    ApiError::not_found(
        "METASTORE_DOES_NOT_EXIST",
        format!("Metastore '{id}' does not exist."),
    )
}

async fn get_one(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
) -> ApiResult<Json<Value>> {
    app.view(|st, _| {
        if id.eq_ignore_ascii_case(&st.metastore_id) {
            Ok(Json(info(st)))
        } else {
            Err(missing_metastore(&id))
        }
    })
}

/// The workspace id of the path, which must be this workspace's.
fn this_workspace(st: &State, ctx: &Ctx, raw: &str) -> ApiResult<()> {
    let ours = raw.parse::<i64>().ok() == Some(st.workspace_id);
    if ours || !ctx.behaviours.on(Behaviour::OneMetastoreAssignment) {
        return Ok(());
    }
    Err(ApiError::not_found(
        "WORKSPACE_DOES_NOT_EXIST",
        format!("Workspace {raw} does not exist or is not in this account."),
    ))
}

/// A metastore id the workspace can be assigned to: its own.
fn known_metastore(st: &State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    if id.eq_ignore_ascii_case(&st.metastore_id)
        || !ctx.behaviours.on(Behaviour::OneMetastoreAssignment)
    {
        return Ok(());
    }
    Err(missing_metastore(id))
}

fn store(st: &mut State, metastore_id: Option<String>, default: String) {
    st.settings.settings.insert(
        KEY.to_string(),
        json!({"metastore_id": metastore_id, "default_catalog_name": default}),
    );
}

/// `PUT workspaces/{workspace_id}/metastore {metastore_id, default_catalog_name}`: the
/// workspace's assignment, overwriting the one it had. A default catalog left out keeps
/// the one the workspace had (`hive_metastore` for a workspace that had none: assumed).
async fn assign(
    AxState(app): AppState,
    PathParam(ws): PathParam<String>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let root = Obj::root(&b);
    let metastore_id = root.req_str("metastore_id")?.to_string();
    let default = root.str("default_catalog_name")?.map(str::to_string);
    app.mutate(|st, ctx| {
        this_workspace(st, ctx, &ws)?;
        known_metastore(st, ctx, &metastore_id)?;
        let (had, had_default) = assignment(st);
        let default = default.unwrap_or(if had.is_some() {
            had_default
        } else {
            "hive_metastore".to_string()
        });
        store(st, Some(st.metastore_id.clone()), default);
        Ok(Json(json!({})))
    })
}

/// `PATCH workspaces/{workspace_id}/metastore {metastore_id?, default_catalog_name?}`.
async fn update(
    AxState(app): AppState,
    PathParam(ws): PathParam<String>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let root = Obj::root(&b);
    let metastore_id = root.str("metastore_id")?.map(str::to_string);
    let default = root.str("default_catalog_name")?.map(str::to_string);
    app.mutate(|st, ctx| {
        this_workspace(st, ctx, &ws)?;
        let (_, had_default) = assigned(st)?;
        if let Some(m) = &metastore_id {
            known_metastore(st, ctx, m)?;
        }
        store(
            st,
            Some(st.metastore_id.clone()),
            default.unwrap_or(had_default),
        );
        Ok(Json(json!({})))
    })
}

/// `DELETE workspaces/{workspace_id}/metastore?metastore_id=`: unassigns it.
async fn unassign(
    AxState(app): AppState,
    PathParam(ws): PathParam<String>,
    q: Params,
) -> ApiResult<Json<Value>> {
    let metastore_id = q.req_str("metastore_id")?.to_string();
    app.mutate(|st, ctx| {
        this_workspace(st, ctx, &ws)?;
        let (had, default) = assigned(st)?;
        if !had.eq_ignore_ascii_case(&metastore_id) {
            return Err(missing_metastore(&metastore_id));
        }
        store(st, None, default);
        Ok(Json(json!({})))
    })
}
