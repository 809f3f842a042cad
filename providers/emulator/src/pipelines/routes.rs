//! The Pipelines API over HTTP: bodies and queries checked and read into the model's
//! inputs, answers rendered as JSON.

use super::model::{self, PipelineRequest, parse_filter};
use super::spec::check_spec;
use crate::app::{App, AppState};
use crate::body::done;
use crate::body::{JsonBody, Obj, Params, PathParam};
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::util::drop_empty;
use axum::extract::State as AxState;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const CAUSES: &[&str] = &[
    "API_CALL",
    "JOB_TASK",
    "RETRY_ON_FAILURE",
    "SCHEMA_CHANGE",
    "SERVICE_UPGRADE",
    "USER_ACTION",
    "INFRASTRUCTURE_MAINTENANCE",
];

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.0/pipelines", post(create).get(list))
        .route(
            "/api/2.0/pipelines/{id}",
            get(get_pipeline).put(edit).delete(delete),
        )
        .route(
            "/api/2.0/pipelines/{id}/updates",
            post(start_update).get(list_updates),
        )
        .route(
            "/api/2.0/pipelines/{id}/updates/{update_id}",
            get(get_update),
        )
        .route("/api/2.0/pipelines/{id}/stop", post(stop))
        .route("/api/2.0/pipelines/{id}/events", get(list_events))
}

type Reply = ApiResult<Json<Value>>;

/// The fields of a create or edit body besides the spec (`check_spec` has checked it).
fn request<'a>(o: Obj<'a>, body: &'a Map<String, Value>) -> ApiResult<PipelineRequest<'a>> {
    Ok(PipelineRequest {
        body,
        name: o.str("name")?,
        allow_duplicate_names: o.bool("allow_duplicate_names")?.unwrap_or(false),
        run_as: o.obj("run_as")?.map(|m| Value::Object(m.clone())),
        parameters: o
            .str_map("parameters")?
            .filter(|m| !m.is_empty())
            .map(|m| Value::Object(m.clone())),
    })
}

/// A page of `max_results` (25 unless given, at most 100).
fn page(q: &Params) -> ApiResult<Page> {
    Page::new(
        q.str("page_token"),
        q.int("max_results")?,
        25,
        100,
        "max_results",
    )
}

fn list_reply(key: &str, (items, next): (Vec<Value>, Option<String>)) -> Json<Value> {
    let mut out = json!({key: items});
    if let Some(t) = next {
        out["next_page_token"] = json!(t);
    }
    Json(out)
}

async fn create(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    check_spec(o)?;
    // Read again by `request`; checked here because it is reported before `dry_run`.
    o.bool("allow_duplicate_names")?;
    let dry_run = o.bool("dry_run")?.unwrap_or(false);
    let r = request(o, &b)?;
    if dry_run {
        return app.view(|st, _| model::dry_run(st, &b).map(Json));
    }
    app.mutate(|st, ctx| {
        let id = model::create_pipeline(st, ctx, r)?;
        Ok(Json(json!({"pipeline_id": id})))
    })
}

async fn get_pipeline(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.view(|st, ctx| model::get_pipeline(st, ctx, &id).map(Json))
}

async fn edit(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let o = Obj::root(&b);
    check_spec(o)?;
    if let Some(body_id) = o.str("id")?.or(o.str("pipeline_id")?)
        && body_id != id
    {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'id': '{body_id}' does not match the pipeline id '{id}' in the path"
        )));
    }
    let expected = o.int("expected_last_modified")?;
    let r = request(o, &b)?;
    app.mutate(|st, ctx| model::edit_pipeline(st, ctx, &id, expected, r).map(|()| done()))
}

async fn delete(AxState(app): AppState, PathParam(id): PathParam<String>, q: Params) -> Reply {
    let cascade = q.bool("cascade")?.unwrap_or(true);
    q.bool("force")?;
    app.mutate(|st, ctx| model::delete_pipeline(st, ctx, &id, cascade).map(|()| done()))
}

async fn list(AxState(app): AppState, q: Params) -> Reply {
    let filter = parse_filter(q.str("filter"))?;
    let page = page(&q)?;
    if let Some(o) = q.str("order_by") {
        let ok = ["id", "name"]
            .iter()
            .any(|f| o.trim().to_ascii_lowercase().starts_with(f));
        if !ok {
            return Err(ApiError::invalid(format!(
                "Invalid value for parameter 'order_by': '{o}'"
            )));
        }
    }
    app.view(|st, ctx| {
        Ok(list_reply(
            "statuses",
            model::list_pipelines(st, ctx, &filter, &page),
        ))
    })
}

async fn start_update(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let o = Obj::root(&b);
    let full_refresh = o.bool("full_refresh")?;
    for k in [
        "full_refresh_selection",
        "refresh_selection",
        "full_refresh_selection_by_path",
        "refresh_selection_by_path",
        "reset_checkpoint_selection",
    ] {
        o.strs(k)?;
    }
    o.bool("validate_only")?;
    o.bool("development")?;
    o.str_map("parameters")?;
    let cause = o.enum_str("cause", CAUSES)?.unwrap_or("API_CALL");
    if full_refresh == Some(true)
        && (!o.arr("full_refresh_selection")?.is_empty() || !o.arr("refresh_selection")?.is_empty())
    {
        return Err(ApiError::invalid(
            "full_refresh cannot be combined with full_refresh_selection or refresh_selection",
        ));
    }
    let mut request = b.clone();
    request.remove("cause");
    drop_empty(&mut request);
    app.mutate(|st, ctx| {
        let uid = model::start(st, ctx, &id, cause, request)?;
        Ok(Json(json!({"update_id": uid})))
    })
}

async fn get_update(
    AxState(app): AppState,
    PathParam((id, uid)): PathParam<(String, String)>,
) -> Reply {
    app.view(|st, ctx| {
        let u = model::get_update(st, ctx, &id, &uid)?;
        Ok(Json(json!({"update": u})))
    })
}

async fn list_updates(
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
    q: Params,
) -> Reply {
    let page = page(&q)?;
    let until = q.str("until_update_id").map(str::to_string);
    app.view(|st, ctx| {
        let updates = model::list_updates(st, ctx, &id, until.as_deref(), &page)?;
        Ok(list_reply("updates", updates))
    })
}

/// `order_by` is `timestamp desc` (the default) or `timestamp asc`.
async fn list_events(AxState(app): AppState, PathParam(id): PathParam<String>, q: Params) -> Reply {
    let page = page(&q)?;
    let levels = super::events::parse_levels(q.str("filter"))?;
    let ascending = match q.str("order_by").map(|o| o.trim().to_ascii_lowercase()) {
        None => false,
        Some(o) if o == "timestamp" || o == "timestamp desc" => false,
        Some(o) if o == "timestamp asc" => true,
        Some(o) => {
            return Err(ApiError::invalid(format!(
                "Invalid value for parameter 'order_by': '{o}'"
            )));
        }
    };
    app.view(|st, ctx| {
        let events = super::events::list_events(st, ctx, &id, levels.as_deref(), ascending, &page)?;
        Ok(list_reply("events", events))
    })
}

async fn stop(AxState(app): AppState, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, ctx| model::stop(st, ctx, &id).map(|()| done()))
}
