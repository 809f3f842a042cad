//! The `/__emulator/…` endpoints.

use super::{Fault, Latency, Matcher, RateLimit, non_negative};
use crate::app::App;
use crate::body::{JsonBody, Obj};
use crate::config::Timings;
use crate::errors::{ApiError, ApiResult};
use crate::store::lock;
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use regex::Regex;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/__emulator/faults",
            post(add_fault).get(list_faults).delete(clear_faults),
        )
        .route(
            "/__emulator/latency",
            post(set_latency).get(get_latency).delete(clear_latency),
        )
        .route(
            "/__emulator/rate-limits",
            post(add_limit).get(list_limits).delete(clear_limits),
        )
        .route("/__emulator/requests", get(requests).delete(clear_requests))
        .route("/__emulator/reset", post(reset))
        .route("/__emulator/state", get(state))
        .route("/__emulator/timings", get(get_timings).post(set_timings))
        .route("/__emulator/clock", get(get_clock).post(advance_clock))
        .route(
            "/__emulator/behaviours",
            get(get_behaviours).post(set_behaviours),
        )
        .route(
            "/__emulator/normalise",
            get(get_normalise).post(set_normalise),
        )
        .route("/__emulator/tables", post(put_table))
        .route(
            "/__emulator/task-values",
            post(set_task_values)
                .get(list_task_values)
                .delete(clear_task_values),
        )
        .route(
            "/__emulator/health",
            get(|| async { Json(json!({"status": "ok"})) }),
        )
}

async fn add_fault(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let mut faults = lock(&app.control.faults);
    let id = faults.iter().map(|f| f.id).max().unwrap_or(0) + 1;
    faults.push(Fault::parse(id, &b)?);
    Ok(Json(json!({"id": id})))
}

async fn list_faults(State(app): State<Arc<App>>) -> Json<Value> {
    let faults = lock(&app.control.faults);
    let list: Vec<Value> = faults
        .iter()
        .map(|f| {
            let mut m = f.matcher.describe();
            m.insert("id".into(), json!(f.id));
            m.insert("status".into(), json!(f.status.map(|s| s.as_u16())));
            m.insert("drop".into(), json!(f.drop));
            m.insert(
                "delay_ms".into(),
                json!(
                    f.delay
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                ),
            );
            m.insert("body".into(), f.body.clone());
            m.insert("after".into(), json!(f.after));
            m.insert("times".into(), json!(f.times));
            m.insert("after_side_effect".into(), json!(f.after_side_effect));
            m.insert("probability".into(), json!(f.probability));
            m.insert("fired".into(), json!(f.fired));
            Value::Object(m)
        })
        .collect();
    Json(json!({"faults": list}))
}

async fn clear_faults(State(app): State<Arc<App>>) -> Json<Value> {
    lock(&app.control.faults).clear();
    Json(json!({}))
}

async fn set_latency(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let l = match (
        non_negative(o, "fixed_ms")?,
        non_negative(o, "min_ms")?,
        non_negative(o, "max_ms")?,
    ) {
        (Some(f), None, None) => Latency {
            min_ms: f,
            max_ms: f,
        },
        (None, Some(a), Some(b)) if a <= b => Latency {
            min_ms: a,
            max_ms: b,
        },
        _ => {
            return Err(ApiError::invalid(
                "Set either 'fixed_ms', or 'min_ms' and 'max_ms' with min_ms <= max_ms",
            ));
        }
    };
    *lock(&app.control.latency) = l;
    Ok(Json(json!({"min_ms": l.min_ms, "max_ms": l.max_ms})))
}

async fn get_latency(State(app): State<Arc<App>>) -> Json<Value> {
    let l = *lock(&app.control.latency);
    Json(json!({"min_ms": l.min_ms, "max_ms": l.max_ms}))
}

async fn clear_latency(State(app): State<Arc<App>>) -> Json<Value> {
    *lock(&app.control.latency) = Latency::default();
    Json(json!({}))
}

async fn add_limit(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let matcher = Matcher::parse(o)?;
    let per_second = match o.get("per_second") {
        Some(Value::Number(n)) => n.as_f64().filter(|f| *f > 0.0),
        _ => None,
    }
    .ok_or_else(|| {
        ApiError::invalid("Invalid value for field 'per_second': expected a number > 0")
    })?;
    let burst = non_negative(o, "burst")?
        .map_or(per_second.ceil(), |b| b as f64)
        .max(1.0);
    lock(&app.control.limits).push(RateLimit {
        matcher,
        per_second,
        burst,
        tokens: burst,
        last: Instant::now(),
        retry_after: non_negative(o, "retry_after")?,
    });
    Ok(Json(json!({})))
}

async fn list_limits(State(app): State<Arc<App>>) -> Json<Value> {
    let limits = lock(&app.control.limits);
    let list: Vec<Value> = limits
        .iter()
        .map(|l| {
            let mut m = l.matcher.describe();
            m.insert("per_second".into(), json!(l.per_second));
            m.insert("burst".into(), json!(l.burst));
            Value::Object(m)
        })
        .collect();
    Json(json!({"rate_limits": list}))
}

async fn clear_limits(State(app): State<Arc<App>>) -> Json<Value> {
    lock(&app.control.limits).clear();
    Json(json!({}))
}

async fn requests(
    State(app): State<Arc<App>>,
    crate::body::Params(q): crate::body::Params,
) -> ApiResult<Json<Value>> {
    let q = crate::body::Params(q);
    let path =
        match q.str("path") {
            Some(p) => Some(Regex::new(&format!("^(?:{p})$")).map_err(|e| {
                ApiError::invalid(format!("Invalid value for parameter 'path': {e}"))
            })?),
            None => None,
        };
    let method = q.str("method").map(str::to_ascii_uppercase);
    let log = lock(&app.control.log);
    let list: Vec<Value> = log
        .entries
        .iter()
        .filter(|e| method.as_deref().is_none_or(|m| e["method"] == m))
        .filter(|e| {
            path.as_ref()
                .is_none_or(|r| e["path"].as_str().is_some_and(|p| r.is_match(p)))
        })
        .cloned()
        .collect();
    Ok(Json(json!({"requests": list})))
}

async fn clear_requests(State(app): State<Arc<App>>) -> Json<Value> {
    lock(&app.control.log).entries.clear();
    Json(json!({}))
}

async fn reset(State(app): State<Arc<App>>) -> ApiResult<Json<Value>> {
    app.reset()?;
    app.control.clear();
    Ok(Json(json!({})))
}

async fn state(State(app): State<Arc<App>>) -> ApiResult<Json<Value>> {
    app.dump().map(Json)
}

/// `{"task_key", "values": {NAME: JSON, …}, "job_id" | "run_id"}`: the task values the
/// simulated task `task_key` sets (`dbutils.jobs.taskValues.set` in its code), read by
/// `{{tasks.KEY.values.NAME}}` in later tasks: for one run, or for every later run of a
/// job. The jobs domain keeps them (src/jobs/model.rs, `set_task_values`).
async fn set_task_values(
    State(app): State<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let request = crate::jobs::TaskValues {
        job_id: o.int("job_id")?,
        run_id: o.int("run_id")?,
        task_key: o.req_str("task_key")?.to_string(),
        values: o.req_obj("values")?.clone(),
    };
    app.mutate(|st, _| crate::jobs::set_task_values(st, request))?;
    Ok(Json(json!({})))
}

async fn list_task_values(State(app): State<Arc<App>>) -> ApiResult<Json<Value>> {
    app.view(|st, _| Ok(Json(crate::jobs::list_task_values(st))))
}

async fn clear_task_values(State(app): State<Arc<App>>) -> ApiResult<Json<Value>> {
    app.mutate(|st, _| {
        crate::jobs::clear_task_values(st);
        Ok(Json(json!({})))
    })
}

async fn get_timings(State(app): State<Arc<App>>) -> Json<Value> {
    Json(serde_json::to_value(app.timings()).unwrap_or(Value::Null))
}

async fn set_timings(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let mut t = app.timings();
    let ms = |k: &str| -> ApiResult<Option<Duration>> {
        Ok(non_negative(o, k)?.map(Duration::from_millis))
    };
    if let Some(d) = ms("update_step")? {
        t.update_step = d;
    }
    if let Some(d) = ms("run_setup")? {
        t.run_setup = d;
    }
    if let Some(d) = ms("task")? {
        t.task = d;
    }
    app.set_timings(t);
    Ok(Json(
        serde_json::to_value(Timings { ..t }).unwrap_or(Value::Null),
    ))
}

/// `{"behaviours": {"name": on, …}, "descriptions": {"name": "what the service does"}}`.
async fn get_behaviours(State(app): State<Arc<App>>) -> Json<Value> {
    let descriptions: Map<String, Value> = crate::behaviours::BEHAVIOURS
        .iter()
        .map(|(_, n, d)| ((*n).to_string(), Value::String((*d).to_string())))
        .collect();
    Json(json!({"behaviours": app.behaviours().to_json(), "descriptions": descriptions}))
}

/// `{"async_pipeline_delete": false, …}` turns the named behaviours on or off; the others
/// stay as they are. An unknown name is a 400 naming the known ones, and changes nothing.
async fn set_behaviours(
    State(app): State<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let mut now = app.behaviours();
    now.apply(&b)
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    app.set_behaviours(now);
    Ok(Json(json!({"behaviours": now.to_json()})))
}

/// `{"seed": N, "on": bool}`: the seed of `normalise_answers`, and whether it is on.
async fn get_normalise(State(app): State<Arc<App>>) -> Json<Value> {
    Json(normalise_json(&app))
}

/// `{"seed": N}` sets the seed `normalise_answers` hashes its choices with (0: every
/// rewriting). It does not turn the behaviour on: `POST /__emulator/behaviours` does.
async fn set_normalise(
    State(app): State<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let seed = non_negative(Obj::root(&b), "seed")?.ok_or_else(|| crate::body::missing("seed"))?;
    app.set_normalise_seed(seed);
    Ok(Json(normalise_json(&app)))
}

fn normalise_json(app: &App) -> Value {
    json!({
        "seed": app.normalise_seed(),
        "on": app.behaviours().on(crate::behaviours::Behaviour::NormaliseAnswers),
    })
}

async fn get_clock(State(app): State<Arc<App>>) -> Json<Value> {
    Json(json!({"now_ms": app.now()}))
}

async fn advance_clock(
    State(app): State<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let ms = non_negative(Obj::root(&b), "advance_ms")?
        .ok_or_else(|| crate::body::missing("advance_ms"))?;
    app.advance_clock(i64::try_from(ms).unwrap_or(i64::MAX));
    Ok(Json(json!({"now_ms": app.now()})))
}

/// `POST /__emulator/tables {full_name, table_type}`: a table made where brickform does not
/// look (SQL, a notebook, another team's job), `MANAGED` unless told. Its schema must exist.
async fn put_table(State(app): State<Arc<App>>, JsonBody(b): JsonBody) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let full = o.req_str("full_name")?.to_string();
    let table_type = o
        .enum_str(
            "table_type",
            &[
                "MANAGED",
                "EXTERNAL",
                "VIEW",
                "STREAMING_TABLE",
                "MATERIALIZED_VIEW",
            ],
        )?
        .unwrap_or("MANAGED")
        .to_string();
    app.mutate(|st, ctx| crate::uc::put_table(st, ctx, &full, &table_type, None).map(Json))
}
