//! The Jobs API over HTTP (2.2, and 2.1 with the same shapes): requests read into the
//! model's inputs, answers rendered as JSON.

use super::model::{self, JobsQuery, Repair, RunNow, RunsQuery};
use super::settings::{MERGED, check_settings, normalize};
use crate::app::{App, AppState};
use crate::body::done;
use crate::body::{JsonBody, Obj, Params};
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use axum::extract::State as AxState;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

pub fn routes() -> Router<Arc<App>> {
    let mut r = Router::new();
    // 2.1 is served too: older clients still call it and the shapes are the same here.
    for v in ["2.1", "2.2"] {
        r = r
            .route(&format!("/api/{v}/jobs/create"), post(create))
            .route(&format!("/api/{v}/jobs/get"), get(get_job))
            .route(&format!("/api/{v}/jobs/reset"), post(reset))
            .route(&format!("/api/{v}/jobs/update"), post(update))
            .route(&format!("/api/{v}/jobs/delete"), post(delete))
            .route(&format!("/api/{v}/jobs/list"), get(list))
            .route(&format!("/api/{v}/jobs/run-now"), post(run_now))
            .route(&format!("/api/{v}/jobs/runs/get"), get(get_run))
            .route(&format!("/api/{v}/jobs/runs/get-output"), get(get_output))
            .route(&format!("/api/{v}/jobs/runs/list"), get(list_runs))
            .route(&format!("/api/{v}/jobs/runs/cancel"), post(cancel_run))
            .route(&format!("/api/{v}/jobs/runs/repair"), post(repair_run));
    }
    r
}

type Reply = ApiResult<Json<Value>>;

fn job_id_of(o: Obj) -> ApiResult<i64> {
    o.req_int("job_id")
}

fn page_number(token: Option<&str>) -> ApiResult<usize> {
    Ok(Page::new(token, None, 1, 1, "page_token")?
        .after_key::<usize>()?
        .unwrap_or(0))
}

fn list_limit(q: &Params) -> ApiResult<usize> {
    match q.int("limit")? {
        None | Some(0) => Ok(20),
        Some(n) if (1..=100).contains(&n) => Ok(usize::try_from(n).unwrap_or(20)),
        Some(n) => Err(ApiError::invalid(format!(
            "Invalid value for parameter 'limit': {n} (must be between 1 and 100)"
        ))),
    }
}

/// The page of a `limit`/`page_token` list call.
fn list_page(q: &Params) -> ApiResult<Page> {
    let limit = list_limit(q)?;
    Ok(Page {
        limit,
        ..Page::new(q.str("page_token"), None, limit, 100, "limit")?
    })
}

fn offset(q: &Params) -> ApiResult<usize> {
    Ok(usize::try_from(q.int("offset")?.unwrap_or(0).max(0)).unwrap_or(0))
}

fn list_reply(key: &str, (items, next): (Vec<Value>, Option<String>)) -> Json<Value> {
    let mut out = json!({key: items, "has_more": next.is_some()});
    if let Some(t) = next {
        out["next_page_token"] = json!(t);
    }
    Json(out)
}

async fn create(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    o.objs("access_control_list")?;
    let mut settings = b.clone();
    settings.remove("access_control_list");
    check_settings(&settings)?;
    let settings = normalize(settings, app.behaviours());
    app.mutate(|st, ctx| {
        let id = model::create_job(st, ctx, settings)?;
        Ok(Json(json!({"job_id": id})))
    })
}

async fn get_job(AxState(app): AppState, q: Params) -> Reply {
    let id = q
        .int("job_id")?
        .ok_or_else(|| crate::body::missing("job_id"))?;
    let page = page_number(q.str("page_token"))?;
    app.view(|st, ctx| model::get_job(st, ctx, id, page).map(|m| Json(Value::Object(m))))
}

async fn reset(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let id = job_id_of(o)?;
    let new = o.req_obj("new_settings")?.clone();
    check_settings(&new)?;
    let new = normalize(new, app.behaviours());
    app.mutate(|st, ctx| model::reset_job(st, ctx, id, new).map(|()| done()))
}

async fn update(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let id = job_id_of(o)?;
    let new = o.obj("new_settings")?.cloned().unwrap_or_default();
    let remove: Vec<String> = o
        .strs("fields_to_remove")?
        .into_iter()
        .map(str::to_string)
        .collect();
    // Type errors in the partial settings are reported before any merge.
    for (k, key) in MERGED {
        for (p, m) in Obj::root(&new).objs(k)? {
            Obj::at(m, &p).req_str(key)?;
        }
    }
    app.mutate(|st, ctx| model::update_job(st, ctx, id, &new, &remove).map(|()| done()))
}

async fn delete(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = job_id_of(Obj::root(&b))?;
    app.mutate(|st, ctx| model::delete_job(st, ctx, id).map(|()| done()))
}

async fn list(AxState(app): AppState, q: Params) -> Reply {
    let limit = list_limit(&q)?;
    let offset = offset(&q)?;
    let page = Page {
        limit,
        ..Page::new(q.str("page_token"), None, limit, 100, "limit")?
    };
    let query = JobsQuery {
        page,
        offset,
        expand_tasks: q.bool("expand_tasks")?.unwrap_or(false),
        name: q.str("name").map(str::to_lowercase),
    };
    app.view(|st, ctx| Ok(list_reply("jobs", model::list_jobs(st, ctx, &query)?)))
}

/// `job_parameters` of `run-now` and `runs/repair`: scalars by name.
fn job_parameters(o: Obj) -> ApiResult<serde_json::Map<String, Value>> {
    let params = o.obj("job_parameters")?.cloned().unwrap_or_default();
    for (k, v) in &params {
        if !(v.is_string() || v.is_number() || v.is_boolean()) {
            return Err(crate::body::wrong_type(
                &format!("job_parameters.{k}"),
                "a string",
                v,
            ));
        }
    }
    Ok(params)
}

async fn run_now(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let job_id = job_id_of(o)?;
    let job_parameters = job_parameters(o)?;
    let idempotency_token = o.str("idempotency_token")?.map(str::to_string);
    let only: Vec<String> = o.strs("only")?.into_iter().map(str::to_string).collect();
    let queue = o
        .obj("queue")?
        .map(|q| Obj::at(q, "queue").bool("enabled"))
        .transpose()?
        .flatten();
    let full_refresh = o
        .obj("pipeline_params")?
        .map(|p| Obj::at(p, "pipeline_params").bool("full_refresh"))
        .transpose()?
        .flatten()
        .unwrap_or(false);
    for k in ["notebook_params", "python_named_params"] {
        o.str_map(k)?;
    }
    let request = RunNow {
        job_id,
        job_parameters,
        idempotency_token,
        only,
        queue,
        full_refresh,
    };
    app.mutate(|st, ctx| {
        let r = model::run_now(st, ctx, request)?;
        Ok(Json(
            json!({"run_id": r.run_id, "number_in_job": r.number_in_job}),
        ))
    })
}

fn run_id_of(q: &Params) -> ApiResult<i64> {
    q.int("run_id")?
        .ok_or_else(|| crate::body::missing("run_id"))
}

async fn get_run(AxState(app): AppState, headers: HeaderMap, q: Params) -> Reply {
    let id = run_id_of(&q)?;
    let page = page_number(q.str("page_token"))?;
    let history = q.bool("include_history")?.unwrap_or(false);
    let resolved = q.bool("include_resolved_values")?.unwrap_or(false);
    let base = crate::auth::base_url(&headers);
    app.view(|st, ctx| model::get_run(st, ctx, id, page, &base, history, resolved).map(Json))
}

async fn get_output(AxState(app): AppState, headers: HeaderMap, q: Params) -> Reply {
    let id = run_id_of(&q)?;
    let base = crate::auth::base_url(&headers);
    app.view(|st, ctx| model::get_output(st, ctx, id, &base).map(Json))
}

async fn list_runs(AxState(app): AppState, headers: HeaderMap, q: Params) -> Reply {
    let page = list_page(&q)?;
    let job_id = q.int("job_id")?;
    let active_only = q.bool("active_only")?.unwrap_or(false);
    let completed_only = q.bool("completed_only")?.unwrap_or(false);
    if active_only && completed_only {
        return Err(ApiError::invalid(
            "Only one of active_only, completed_only may be true",
        ));
    }
    if let Some(t) = q.str("run_type")
        && !["JOB_RUN", "SUBMIT_RUN", "WORKFLOW_RUN"].contains(&t)
    {
        return Err(ApiError::invalid(format!(
            "Invalid value for parameter 'run_type': '{t}'"
        )));
    }
    let query = RunsQuery {
        page,
        job_id,
        active_only,
        completed_only,
        expand_tasks: q.bool("expand_tasks")?.unwrap_or(false),
        start_time_from: q.int("start_time_from")?,
        start_time_to: q.int("start_time_to")?,
        offset: offset(&q)?,
    };
    let base = crate::auth::base_url(&headers);
    app.view(|st, ctx| {
        Ok(list_reply(
            "runs",
            model::list_runs(st, ctx, &query, &base)?,
        ))
    })
}

async fn cancel_run(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let id = Obj::root(&b).req_int("run_id")?;
    app.mutate(|st, ctx| model::cancel_run(st, ctx, id).map(|()| done()))
}

async fn repair_run(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let job_parameters = job_parameters(o)?;
    let request = Repair {
        run_id: o.req_int("run_id")?,
        rerun_tasks: o
            .strs("rerun_tasks")?
            .into_iter()
            .map(str::to_string)
            .collect(),
        rerun_all_failed_tasks: o.bool("rerun_all_failed_tasks")?.unwrap_or(false),
        rerun_dependent_tasks: o.bool("rerun_dependent_tasks")?.unwrap_or(false),
        latest_repair_id: o.int("latest_repair_id")?,
        job_parameters,
    };
    app.mutate(|st, ctx| {
        let id = model::repair_run(st, ctx, request)?;
        Ok(Json(json!({"repair_id": id})))
    })
}
