//! Workspace settings (`/api/2.0/settings/types/{type}/names/default`): the default namespace
//! (`default_namespace_ws`), the catalog queries use when they name no catalog.
//!
//! A setting is versioned by an etag that changes on every write. A write (PATCH, DELETE)
//! names the etag it read; a stale one is refused with 409 `RESOURCE_CONFLICT` whose
//! `google.rpc.ErrorInfo` detail holds the fresh etag, and a GET of a setting never set
//! answers 404 `NOT_FOUND` with the etag in the same place (Behaviour::SettingEtags). Unset,
//! the default namespace is the metastore assignment's `default_catalog_name` (see
//! `uc::metastore`), which the setting replaces.

use crate::app::{App, AppState};
use crate::behaviours::Behaviour;
use crate::body::{JsonBody, Obj, Params};
use crate::errors::{ApiError, ApiResult};
use crate::journal::{Journaled, Tracked, journaled};
use crate::store::{Ctx, Domain, State};
use axum::extract::State as AxState;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

/// What settings keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Workspace settings by their type (`default_namespace_ws`: the value and the version
    /// its etag names), and the workspace's metastore assignment once changed
    /// (`metastore_assignment`; absent: assigned to the workspace's metastore, as a new
    /// workspace is). Files written before had none.
    #[serde(default)]
    pub settings: Tracked<String, Value>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, settings)
    }
}

/// The settings key of the default namespace, as its path names it.
pub const DEFAULT_NAMESPACE: &str = "default_namespace_ws";

/// The default namespace set on the workspace, if it is.
pub fn default_namespace(st: &State) -> Option<String> {
    st.settings
        .settings
        .get(DEFAULT_NAMESPACE)
        .and_then(|s| s.get("value"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

pub fn routes() -> Router<Arc<App>> {
    Router::new().route(
        &format!("/api/2.0/settings/types/{DEFAULT_NAMESPACE}/names/default"),
        get(get_setting).patch(patch_setting).delete(delete_setting),
    )
}

/// The version of the setting (0: never written) and its etag.
fn version(st: &State) -> u64 {
    st.settings
        .settings
        .get(DEFAULT_NAMESPACE)
        .and_then(|s| s.get("version"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// An opaque etag naming a version of the workspace's setting.
fn etag(st: &State, version: u64) -> String {
    format!("{:x}{version:08}", st.workspace_id)
}

fn answer(st: &State) -> Option<Value> {
    let value = default_namespace(st)?;
    Some(json!({
        "etag": etag(st, version(st)),
        "setting_name": "default",
        "namespace": {"value": value},
    }))
}

/// 404 for a setting never set (or deleted), with the etag to write it with.
fn not_set(st: &State) -> ApiError {
    ApiError::not_found(
        "NOT_FOUND",
        "Setting default_namespace_ws/default was not found.",
    )
    .with_error_info("NOT_FOUND", json!({"etag": etag(st, version(st))}))
}

/// 409 for a write naming another version than the current one, with the current etag.
fn stale(st: &State) -> ApiError {
    ApiError::conflict(
        "RESOURCE_CONFLICT",
        "The setting was updated concurrently: the etag does not match the current version. Read it again and retry with the new etag.",
    )
    .with_error_info("RESOURCE_CONFLICT", json!({"etag": etag(st, version(st))}))
}

/// Whether a write naming `given` may go ahead; the error to answer otherwise.
fn check_etag(st: &State, ctx: &Ctx, given: Option<&str>) -> ApiResult<()> {
    if !ctx.behaviours.on(Behaviour::SettingEtags) {
        return Ok(());
    }
    match given.filter(|e| !e.is_empty()) {
        Some(e) if e == etag(st, version(st)) => Ok(()),
        // A first write without an etag: the etag to write with (the provider's create
        // test, settings/generic_setting_test.go, answers NOT_FOUND with etag1).
        None if default_namespace(st).is_none() => Err(not_set(st)),
        _ => Err(stale(st)),
    }
}

fn put(st: &mut State, value: Option<&str>) -> u64 {
    let v = version(st) + 1;
    let mut m = json!({"version": v});
    if let Some(value) = value {
        m["value"] = json!(value);
    }
    st.settings
        .settings
        .insert(DEFAULT_NAMESPACE.to_string(), m);
    v
}

/// `GET …?etag=`: the setting, at least as fresh as the etag (the current one here).
async fn get_setting(AxState(app): AppState) -> ApiResult<Json<Value>> {
    app.view(|st, _| answer(st).map(Json).ok_or_else(|| not_set(st)))
}

/// `PATCH {allow_missing, field_mask, setting: {etag, namespace: {value}}}`.
async fn patch_setting(AxState(app): AppState, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let root = Obj::root(&b);
    if root.bool("allow_missing")? != Some(true) {
        return Err(ApiError::invalid(
            "allow_missing must be set to true for the Settings API.",
        ));
    }
    let mask = root.req_str("field_mask")?;
    if mask != "namespace.value" {
        return Err(ApiError::invalid(format!(
            "field_mask {mask:?} names no field of the default namespace setting: it is namespace.value."
        )));
    }
    let setting = Obj::at(root.req_obj("setting")?, "setting");
    let given = setting.str("etag")?.map(str::to_string);
    let namespace = Obj::at(setting.req_obj("namespace")?, "setting.namespace");
    let value = namespace.req_str("value")?.to_string();
    if value.trim().is_empty() {
        return Err(ApiError::invalid(
            "setting.namespace.value must not be empty.",
        ));
    }
    app.mutate(|st, ctx| {
        check_etag(st, ctx, given.as_deref())?;
        put(st, Some(&value));
        answer(st)
            .map(Json)
            .ok_or_else(|| ApiError::internal("the setting was written but is not there"))
    })
}

/// `DELETE …?etag=`: back to the metastore assignment's default catalog; answers the new
/// etag.
async fn delete_setting(AxState(app): AppState, q: Params) -> ApiResult<Json<Value>> {
    let given = q.str("etag").map(str::to_string);
    app.mutate(|st, ctx| {
        if default_namespace(st).is_none() {
            return Err(not_set(st));
        }
        check_etag(st, ctx, given.as_deref())?;
        let v = put(st, None);
        Ok(Json(json!({"etag": etag(st, v)})))
    })
}
