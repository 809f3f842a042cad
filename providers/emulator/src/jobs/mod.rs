//! Jobs API 2.2: jobs, runs, and the run engine that executes tasks in dependency order.
//!
//! Runs advance lazily: before any request reads or writes the workspace, `advance` moves
//! every active run forward to "now" using the durations it was started with.

use crate::app::App;
use crate::behaviours::{Behaviour, Behaviours};
use crate::body::{JsonBody, Obj, Params};
use crate::errors::{ApiError, ApiResult};
use crate::pages::{Page, encode};
use crate::store::{Ctx, State};
use crate::util::{compact, drop_empty};
use axum::extract::State as AxState;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;

mod tasks;

/// What the service reports, on the task and (wrapped) on the run, for a task whose code
/// failed; the exception is in `runs/get-output`.
const WORKLOAD_FAILED: &str = "Workload failed, see run output for details";
/// Reads return at most this many tasks / clusters / parameters / environments per page.
const GET_PAGE: usize = 100;
const RUN_IF: &[&str] = &[
    "ALL_SUCCESS",
    "ALL_DONE",
    "NONE_FAILED",
    "AT_LEAST_ONE_SUCCESS",
    "AT_LEAST_ONE_FAILED",
    "ALL_FAILED",
];
const PAUSE: &[&str] = &["PAUSED", "UNPAUSED"];
/// Keyed arrays that `jobs/update` merges by key instead of replacing.
const MERGED: &[(&str, &str)] = &[
    ("tasks", "task_key"),
    ("job_clusters", "job_cluster_key"),
    ("environments", "environment_key"),
];
/// Arrays that `jobs/get` pages at 100 items.
const PAGED: &[&str] = &["tasks", "job_clusters", "parameters", "environments"];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub job_id: i64,
    pub created_time: i64,
    pub creator: String,
    pub settings: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub run_id: i64,
    pub job_id: i64,
    pub number_in_job: i64,
    pub run_name: String,
    pub creator: String,
    pub start_time: i64,
    /// When tasks may begin (start + setup); `None` while queued behind other runs.
    pub tasks_from: Option<i64>,
    pub end_time: Option<i64>,
    pub life_cycle_state: String,
    pub result_state: Option<String>,
    pub state_message: String,
    pub canceled: bool,
    pub setup_ms: i64,
    pub task_ms: i64,
    pub job_parameters: Vec<Value>,
    pub params: BTreeMap<String, String>,
    pub full_refresh: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_token: Option<String>,
    pub tasks: Vec<RunTask>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunTask {
    pub run_id: i64,
    pub task_key: String,
    pub spec: Map<String, Value>,
    /// PENDING, RUNNING or TERMINATED.
    pub state: String,
    pub result: Option<String>,
    pub message: String,
    pub start_time: i64,
    pub end_time: i64,
    /// Decided when the task starts; applied when it ends.
    pub planned: Option<(String, String)>,
    /// A condition task's outcome, `"true"` or `"false"`.
    pub outcome: Option<String>,
    pub pipeline_update: Option<(String, String)>,
    /// Why a task that ran its code failed: what `runs/get-output` reports as `error` (the
    /// run itself only says "Workload failed, see run output for details").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

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
            .route(&format!("/api/{v}/jobs/runs/cancel"), post(cancel_run));
    }
    r
}

type Reply = ApiResult<Json<Value>>;

// ---------- settings validation ----------

/// Checks a complete JobSettings object (create, reset, and the result of an update).
fn check_settings(s: &Map<String, Value>) -> ApiResult<()> {
    let o = Obj::root(s);
    if let Some(n) = o.str("name")?
        && n.len() > 4096
    {
        return Err(ApiError::invalid(
            "Invalid value for field 'name': at most 4096 bytes",
        ));
    }
    o.str("description")?;
    for k in ["timeout_seconds", "max_concurrent_runs"] {
        if let Some(n) = o.int(k)?
            && n < 0
        {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{k}': must not be negative"
            )));
        }
    }
    if o.int("max_concurrent_runs")?.is_some_and(|n| n > 1000) {
        return Err(ApiError::invalid(
            "Invalid value for field 'max_concurrent_runs': at most 1000",
        ));
    }
    if let Some(t) = o.str_map("tags")?
        && t.len() > 25
    {
        return Err(ApiError::invalid(
            "Invalid value for field 'tags': at most 25 tags",
        ));
    }
    let mut keys = HashMap::new();
    for (kind, key) in [
        ("job_clusters", "job_cluster_key"),
        ("environments", "environment_key"),
    ] {
        let mut seen = HashSet::new();
        for (p, m) in o.objs(kind)? {
            let k = Obj::at(m, &p).req_str(key)?;
            if !seen.insert(k.to_string()) {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field '{p}.{key}': '{k}' is duplicated"
                )));
            }
        }
        keys.insert(kind, seen);
    }
    let mut names = HashSet::new();
    for (p, m) in o.objs("parameters")? {
        let po = Obj::at(m, &p);
        let n = po.req_str("name")?;
        po.str("default")?
            .ok_or_else(|| crate::body::missing(&po.path("default")))?;
        if !names.insert(n.to_string()) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}.name': '{n}' is duplicated"
            )));
        }
    }
    let tasks = o.objs("tasks")?;
    if tasks.len() > 1000 {
        return Err(ApiError::invalid(
            "Invalid value for field 'tasks': at most 1000 tasks",
        ));
    }
    let mut task_keys = HashSet::new();
    for (p, m) in &tasks {
        let t = Obj::at(m, p);
        let key = t.req_str("task_key")?;
        if key.len() > 100
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}.task_key': '{key}' (letters, digits, '-' and '_', at most 100)"
            )));
        }
        if !task_keys.insert(key.to_string()) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}.task_key': '{key}' is duplicated"
            )));
        }
    }
    let mut deps: HashMap<String, Vec<String>> = HashMap::new();
    for (p, m) in &tasks {
        let t = Obj::at(m, p);
        let key = t.req_str("task_key")?;
        t.enum_str("run_if", RUN_IF)?;
        for k in [
            "timeout_seconds",
            "max_retries",
            "min_retry_interval_millis",
        ] {
            t.int(k)?;
        }
        for k in ["disabled", "retry_on_timeout"] {
            t.bool(k)?;
        }
        let kinds: Vec<&tasks::TaskType> =
            tasks::TASK_TYPES.iter().filter(|k| t.has(k.name)).collect();
        let other_kind = t
            .map
            .keys()
            .any(|k| k.ends_with("_task") && !tasks::is_known(k));
        match kinds.len() {
            0 if !other_kind => {
                return Err(ApiError::invalid(format!(
                    "Task '{key}' ({p}) must set one task type, e.g. notebook_task or pipeline_task"
                )));
            }
            n if n > 1 => {
                return Err(ApiError::invalid(format!(
                    "Task '{key}' ({p}) sets more than one task type: {}",
                    kinds.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
                )));
            }
            _ => {}
        }
        for k in &kinds {
            if let Some(check) = k.check
                && let Some(m) = t.obj(k.name)?
            {
                check(Obj::at(m, &t.path(k.name)))?;
            }
        }
        for (field, kind) in [
            ("environment_key", "environments"),
            ("job_cluster_key", "job_clusters"),
        ] {
            if let Some(v) = t.str(field)?
                && !keys.get(kind).is_some_and(|s| s.contains(v))
            {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field '{p}.{field}': '{v}' is not defined in {kind}"
                )));
            }
        }
        let mut mine = Vec::new();
        for (dp, d) in t.objs("depends_on")? {
            let d = Obj::at(d, &dp);
            let dk = d.req_str("task_key")?;
            d.enum_str("outcome", &["true", "false"])?;
            if dk == key || !task_keys.contains(dk) {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field '{dp}.task_key': task '{key}' depends on '{dk}', which is not another task of this job"
                )));
            }
            mine.push(dk.to_string());
        }
        deps.insert(key.to_string(), mine);
    }
    if let Some(cycle) = find_cycle(&deps) {
        return Err(ApiError::invalid(format!(
            "The tasks have a dependency cycle: {}",
            cycle.join(" → ")
        )));
    }
    if let Some(sch) = o.obj("schedule")? {
        let sch = Obj::at(sch, "schedule");
        let cron = sch.req_str("quartz_cron_expression")?;
        let zone = sch.req_str("timezone_id")?;
        let quartz = croner::parser::CronParser::builder()
            .seconds(croner::parser::Seconds::Required)
            .alternative_weekdays(true)
            .sloppy_ranges(true)
            .build();
        if let Err(e) = quartz.parse(cron) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'schedule.quartz_cron_expression': '{cron}' is not a valid Quartz cron expression: {e}"
            )));
        }
        let known = jiff::tz::TimeZoneDatabase::bundled()
            .available()
            .any(|n| n.as_str() == zone);
        if !known && !matches!(zone, "UTC" | "GMT" | "Z") {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'schedule.timezone_id': '{zone}' is not a valid time zone id"
            )));
        }
        sch.enum_str("pause_status", PAUSE)?;
    }
    if let Some(c) = o.obj("continuous")? {
        Obj::at(c, "continuous").enum_str("pause_status", PAUSE)?;
    }
    if [o.has("schedule"), o.has("continuous"), o.has("trigger")]
        .iter()
        .filter(|b| **b)
        .count()
        > 1
    {
        return Err(ApiError::invalid(
            "Only one of schedule, continuous, trigger may be set",
        ));
    }
    if let Some(tr) = o.obj("trigger")? {
        let tr = Obj::at(tr, "trigger");
        tr.enum_str("pause_status", PAUSE)?;
        if let Some(p) = tr.obj("periodic")? {
            let p = Obj::at(p, "trigger.periodic");
            p.req_int("interval")?;
            p.enum_str("unit", &["MINUTES", "HOURS", "DAYS", "WEEKS"])?
                .ok_or_else(|| crate::body::missing("trigger.periodic.unit"))?;
        }
        if let Some(f) = tr.obj("file_arrival")? {
            Obj::at(f, "trigger.file_arrival").req_str("url")?;
        }
        if let Some(t) = tr.obj("table_update")? {
            let t = Obj::at(t, "trigger.table_update");
            if t.strs("table_names")?.is_empty() {
                return Err(crate::body::missing("trigger.table_update.table_names"));
            }
            t.enum_str("condition", &["ANY_UPDATED", "ALL_UPDATED"])?;
        }
    }
    if let Some(q) = o.obj("queue")? {
        Obj::at(q, "queue")
            .bool("enabled")?
            .ok_or_else(|| crate::body::missing("queue.enabled"))?;
    }
    if let Some(r) = o.obj("run_as")? {
        Obj::at(r, "run_as").one_of(&["user_name", "service_principal_name", "group_name"])?;
    }
    for k in [
        "email_notifications",
        "webhook_notifications",
        "notification_settings",
        "health",
        "git_source",
        "deployment",
    ] {
        o.obj(k)?;
    }
    if let Some(g) = o.obj("git_source")? {
        let g = Obj::at(g, "git_source");
        g.req_str("git_url")?;
        g.req_str("git_provider")?;
    }
    o.enum_str("edit_mode", &["UI_LOCKED", "EDITABLE"])?;
    o.enum_str("format", &["MULTI_TASK", "SINGLE_TASK"])?;
    o.enum_str("performance_target", &["PERFORMANCE_OPTIMIZED", "STANDARD"])?;
    Ok(())
}

fn find_cycle(deps: &HashMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        deps: &HashMap<String, Vec<String>>,
        color: &mut HashMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        color.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for d in deps.get(n).into_iter().flatten() {
            match color.get(d.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|s| s == d).unwrap_or(0);
                    let mut c = stack[start..].to_vec();
                    c.push(d.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(d, deps, color, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        color.insert(n.to_string(), 2);
        None
    }
    let mut color = HashMap::new();
    let mut keys: Vec<&String> = deps.keys().collect();
    keys.sort();
    for k in keys {
        if color.get(k.as_str()).copied().unwrap_or(0) == 0
            && let Some(c) = visit(k, deps, &mut color, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// The settings as stored: empty collections dropped (absent == empty), server defaults filled.
fn normalize(mut s: Map<String, Value>, b: Behaviours) -> Map<String, Value> {
    s.remove("access_control_list");
    drop_empty(&mut s);
    s.insert("format".into(), json!("MULTI_TASK"));
    s.entry("name").or_insert(json!("Untitled"));
    s.entry("max_concurrent_runs").or_insert(json!(1));
    s.entry("timeout_seconds").or_insert(json!(0));
    s.entry("email_notifications").or_insert(json!({}));
    s.entry("webhook_notifications").or_insert(json!({}));
    if let Some(Value::Array(tasks)) = s.get_mut("tasks") {
        for t in tasks.iter_mut() {
            if let Value::Object(t) = t {
                drop_empty(t);
                t.entry("run_if").or_insert(json!("ALL_SUCCESS"));
                t.entry("timeout_seconds").or_insert(json!(0));
                // The service answers with an empty block where the task has none.
                if b.on(Behaviour::TaskEmailNotifications) {
                    t.entry("email_notifications").or_insert(json!({}));
                }
                // ... and with the dependencies sorted by task key, not as sent.
                if b.on(Behaviour::SortDependsOn)
                    && let Some(Value::Array(deps)) = t.get_mut("depends_on")
                {
                    deps.sort_by(|a, b| {
                        let k = |v: &Value| {
                            v.get("task_key")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                        };
                        k(a).cmp(&k(b))
                    });
                }
                if b.on(Behaviour::NewClusterDefaults)
                    && let Some(Value::Object(c)) = t.get_mut("new_cluster")
                {
                    cluster_defaults(c);
                }
            }
        }
    }
    if let Some(Value::Array(clusters)) = s.get_mut("job_clusters") {
        for jc in clusters.iter_mut() {
            if b.on(Behaviour::NewClusterDefaults)
                && let Some(Value::Object(c)) = jc.get_mut("new_cluster")
            {
                cluster_defaults(c);
            }
        }
    }
    s
}

/// What the service fills into a job's `new_cluster` when the request leaves it out (an
/// AWS workspace, as the Databricks CLI's test server records it): the access mode, elastic
/// disk off, and the cloud attributes of where the cluster runs. A cluster that names its
/// own cloud's attributes keeps them.
fn cluster_defaults(c: &mut Map<String, Value>) {
    c.entry("data_security_mode")
        .or_insert(json!("SINGLE_USER"));
    c.entry("enable_elastic_disk").or_insert(json!(false));
    if !["aws_attributes", "azure_attributes", "gcp_attributes"]
        .iter()
        .any(|k| c.contains_key(*k))
    {
        c.insert(
            "aws_attributes".into(),
            json!({"availability": "SPOT_WITH_FALLBACK", "zone_id": "us-east-1c"}),
        );
    }
}

fn job_missing(id: i64) -> ApiError {
    ApiError::job_missing("Job", id)
}

fn settings_arg(o: Obj, key: &str) -> ApiResult<Map<String, Value>> {
    Ok(o.obj(key)?.cloned().unwrap_or_default())
}

// ---------- job handlers ----------

async fn create(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    o.objs("access_control_list")?;
    let mut settings = b.clone();
    settings.remove("access_control_list");
    check_settings(&settings)?;
    let settings = normalize(settings, app.behaviours());
    app.mutate(|st, ctx| {
        let id = st.next_id();
        st.jobs.insert(
            id,
            Job {
                job_id: id,
                created_time: ctx.now,
                creator: ctx.user.to_string(),
                settings,
            },
        );
        Ok(Json(json!({"job_id": id})))
    })
}

fn job_id_of(o: Obj) -> ApiResult<i64> {
    o.req_int("job_id")
}

/// `settings` with each paged array cut to page `page`; whether a later page has items.
fn paged_settings(
    settings: &Map<String, Value>,
    page: usize,
    b: Behaviours,
) -> (Map<String, Value>, bool) {
    if !b.on(Behaviour::TaskPaging) {
        return (settings.clone(), false);
    }
    let mut out = settings.clone();
    let mut more = false;
    for k in PAGED {
        if let Some(Value::Array(a)) = settings.get(*k) {
            let from = page * GET_PAGE;
            let slice: Vec<Value> = a.iter().skip(from).take(GET_PAGE).cloned().collect();
            more |= a.len() > from + GET_PAGE;
            if slice.is_empty() {
                out.remove(*k);
            } else {
                out.insert((*k).into(), Value::Array(slice));
            }
        }
    }
    (out, more)
}

fn page_number(token: Option<&str>) -> ApiResult<usize> {
    Ok(Page::new(token, None, 1, 1, "page_token")?
        .after_key::<usize>()?
        .unwrap_or(0))
}

fn run_as_name(settings: &Map<String, Value>, creator: &str) -> String {
    settings
        .get("run_as")
        .and_then(|r| {
            r.get("user_name")
                .or_else(|| r.get("service_principal_name"))
        })
        .and_then(Value::as_str)
        .unwrap_or(creator)
        .to_string()
}

async fn get_job(AxState(app): AxState<Arc<App>>, q: Params) -> Reply {
    let id = q
        .int("job_id")?
        .ok_or_else(|| crate::body::missing("job_id"))?;
    let page = page_number(q.str("page_token"))?;
    app.view(|st, ctx| {
        let job = st.jobs.get(&id).ok_or_else(|| job_missing(id))?;
        let (settings, more) = paged_settings(&job.settings, page, ctx.behaviours);
        let mut out = compact(json!({
            "job_id": job.job_id, "creator_user_name": job.creator, "run_as_user_name": run_as_name(&job.settings, &job.creator),
            "created_time": job.created_time, "settings": settings,
        }));
        // The SDK loops while the key is present: omit it on the last page, never "".
        // `has_more` comes with every paged answer, as the service sends it.
        if more {
            out.insert("next_page_token".into(), json!(encode(&(page + 1).to_string())));
            out.insert("has_more".into(), json!(true));
        } else if page > 0 {
            out.insert("has_more".into(), json!(false));
        }
        Ok(Json(Value::Object(out)))
    })
}

async fn reset(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let id = job_id_of(o)?;
    let new = o.req_obj("new_settings")?.clone();
    check_settings(&new)?;
    let mut new = normalize(new, app.behaviours());
    app.mutate(|st, _| {
        let job = st.jobs.get_mut(&id).ok_or_else(|| job_missing(id))?;
        // A full replace, except that settings without `run_as` keep the identity the job
        // ran as: the service does not go back to the owner (the Databricks CLI's test
        // server records this against the real service).
        if app.models(Behaviour::KeepRunAs)
            && !new.contains_key("run_as")
            && let Some(r) = job.settings.get("run_as")
        {
            new.insert("run_as".into(), r.clone());
        }
        job.settings = new;
        Ok(Json(json!({})))
    })
}

fn merge_by_key(old: &mut Vec<Value>, new: &[Value], key: &str) {
    for item in new {
        let k = item.get(key).cloned();
        match old.iter_mut().find(|o| o.get(key) == k.as_ref()) {
            Some(slot) => *slot = item.clone(),
            None => old.push(item.clone()),
        }
    }
}

async fn update(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let id = job_id_of(o)?;
    let new = settings_arg(o, "new_settings")?;
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
    app.mutate(|st, ctx| {
        let job = st.jobs.get(&id).ok_or_else(|| job_missing(id))?;
        let mut s = job.settings.clone();
        for f in &remove {
            match f.split_once('/') {
                Some((arr, key)) => {
                    let Some((_, kf)) = MERGED.iter().find(|(a, _)| *a == arr) else {
                        return Err(ApiError::invalid(format!("Invalid value for field 'fields_to_remove': '{f}' (nested removal is only for tasks, job_clusters, environments)")));
                    };
                    let list = s.get_mut(arr).and_then(Value::as_array_mut);
                    let Some(list) = list.filter(|l| l.iter().any(|x| x.get(*kf).and_then(Value::as_str) == Some(key))) else {
                        return Err(ApiError::invalid(format!("Invalid value for field 'fields_to_remove': '{f}' does not exist in the job")));
                    };
                    list.retain(|x| x.get(*kf).and_then(Value::as_str) != Some(key));
                }
                None => {
                    s.remove(f);
                }
            }
        }
        for (k, v) in &new {
            match (MERGED.iter().find(|(a, _)| a == k), s.get_mut(k), v) {
                (Some((_, key)), Some(Value::Array(old)), Value::Array(items)) => merge_by_key(old, items, key),
                _ => {
                    s.insert(k.clone(), v.clone());
                }
            }
        }
        check_settings(&s)?;
        let s = normalize(s, ctx.behaviours);
        if let Some(job) = st.jobs.get_mut(&id) {
            job.settings = s;
        }
        Ok(Json(json!({})))
    })
}

async fn delete(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let id = job_id_of(Obj::root(&b))?;
    app.mutate(|st, ctx| {
        st.jobs.remove(&id).ok_or_else(|| job_missing(id))?;
        let active: Vec<i64> = st
            .active_runs
            .iter()
            .copied()
            .filter(|r| st.runs.get(r).is_some_and(|r| r.job_id == id))
            .collect();
        for r in active {
            cancel(st, r, ctx.now);
        }
        Ok(Json(json!({})))
    })
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

fn base_job(job: &Job, expand: bool) -> Value {
    let mut settings = job.settings.clone();
    if !expand {
        for k in PAGED {
            settings.remove(*k);
        }
    }
    json!({"job_id": job.job_id, "creator_user_name": job.creator, "created_time": job.created_time, "settings": settings})
}

fn list_reply(key: &str, items: Vec<Value>, next: Option<String>) -> Json<Value> {
    let mut out = json!({key: items, "has_more": next.is_some()});
    if let Some(t) = next {
        out["next_page_token"] = json!(t);
    }
    Json(out)
}

async fn list(AxState(app): AxState<Arc<App>>, q: Params) -> Reply {
    let limit = list_limit(&q)?;
    let offset = usize::try_from(q.int("offset")?.unwrap_or(0).max(0)).unwrap_or(0);
    let page = Page {
        limit,
        ..Page::new(q.str("page_token"), None, limit, 100, "limit")?
    };
    let expand = q.bool("expand_tasks")?.unwrap_or(false);
    let name = q.str("name").map(str::to_lowercase);
    app.view(|st, _| {
        let start = page
            .after_key::<i64>()?
            .map_or(Bound::Unbounded, Bound::Excluded);
        let iter = st
            .jobs
            .range((start, Bound::Unbounded))
            .filter(|(_, j)| {
                name.as_deref().is_none_or(|n| {
                    j.settings
                        .get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|x| x.to_lowercase() == n)
                })
            })
            .skip(offset)
            .map(|(k, j)| (*k, base_job(j, expand)));
        let (jobs, next) = page.collect(iter);
        Ok(list_reply("jobs", jobs, next))
    })
}

// ---------- runs ----------

fn run_missing(id: i64) -> ApiError {
    ApiError::job_missing("Run", id)
}

async fn run_now(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let id = job_id_of(o)?;
    let job_params = o.obj("job_parameters")?.cloned().unwrap_or_default();
    for (k, v) in &job_params {
        if !(v.is_string() || v.is_number() || v.is_boolean()) {
            return Err(crate::body::wrong_type(
                &format!("job_parameters.{k}"),
                "a string",
                v,
            ));
        }
    }
    let token = o.str("idempotency_token")?.map(str::to_string);
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
    app.mutate(|st, ctx| {
        let job = st.jobs.get(&id).ok_or_else(|| job_missing(id))?.clone();
        if let Some(t) = &token
            && let Some(r) = st.runs.values().find(|r| r.job_id == id && r.idempotency_token.as_ref() == Some(t))
        {
            return Ok(Json(json!({"run_id": r.run_id, "number_in_job": r.number_in_job})));
        }
        let tasks = job.settings.get("tasks").and_then(Value::as_array).cloned().unwrap_or_default();
        for k in &only {
            if !tasks.iter().any(|t| t.get("task_key").and_then(Value::as_str) == Some(k)) {
                return Err(ApiError::invalid(format!("Invalid value for field 'only': task '{k}' is not in job {id}")));
            }
        }
        let mut params = BTreeMap::new();
        let mut job_parameters = Vec::new();
        for p in job.settings.get("parameters").and_then(Value::as_array).into_iter().flatten() {
            let name = p.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            let default = p.get("default").and_then(Value::as_str).unwrap_or_default().to_string();
            let value = job_params.get(&name).map(scalar).unwrap_or_else(|| default.clone());
            job_parameters.push(json!({"name": name, "default": default, "value": value}));
            params.insert(name, value);
        }
        for (k, v) in &job_params {
            params.entry(k.clone()).or_insert_with(|| scalar(v));
        }
        let run_id = st.next_id();
        let number_in_job = st.runs.values().filter(|r| r.job_id == id).count() as i64 + 1;
        let mut run_tasks = Vec::new();
        for t in tasks.iter().filter_map(Value::as_object) {
            let key = t.get("task_key").and_then(Value::as_str).unwrap_or_default().to_string();
            if !only.is_empty() && !only.contains(&key) {
                continue;
            }
            let mut spec = t.clone();
            if !only.is_empty()
                && let Some(Value::Array(d)) = spec.get_mut("depends_on")
            {
                d.retain(|x| x.get("task_key").and_then(Value::as_str).is_some_and(|k| only.iter().any(|o| o == k)));
            }
            let task_run_id = st.next_id();
            run_tasks.push(RunTask {
                run_id: task_run_id, task_key: key, spec, state: "PENDING".into(), result: None, message: String::new(),
                start_time: 0, end_time: 0, planned: None, outcome: None, pipeline_update: None, error: None,
            });
        }
        let max = job.settings.get("max_concurrent_runs").and_then(Value::as_i64).unwrap_or(1);
        let running = st.active_runs.iter().filter(|r| st.runs.get(r).is_some_and(|r| r.job_id == id && r.tasks_from.is_some())).count() as i64;
        let queue_enabled = queue.unwrap_or_else(|| job.settings.get("queue").and_then(|q| q.get("enabled")).and_then(Value::as_bool).unwrap_or(false));
        let setup_ms = ctx.timings.run_setup_ms();
        let mut run = Run {
            run_id, job_id: id, number_in_job,
            run_name: job.settings.get("name").and_then(Value::as_str).unwrap_or("Untitled").to_string(),
            creator: ctx.user.to_string(), start_time: ctx.now, tasks_from: Some(ctx.now.saturating_add(setup_ms)), end_time: None,
            life_cycle_state: "PENDING".into(), result_state: None, state_message: String::new(), canceled: false,
            setup_ms, task_ms: ctx.timings.task_ms(), job_parameters, params, full_refresh, idempotency_token: token, tasks: run_tasks,
        };
        if running >= max {
            if queue_enabled && max > 0 {
                run.tasks_from = None;
                run.life_cycle_state = "QUEUED".into();
                run.state_message = "Waiting for other runs of this job to finish (max_concurrent_runs).".into();
            } else {
                run.life_cycle_state = "SKIPPED".into();
                run.result_state = Some("MAXIMUM_CONCURRENT_RUNS_REACHED".into());
                run.state_message = format!("Skipped: the job already has {running} active run(s) and max_concurrent_runs is {max}.");
                run.end_time = Some(ctx.now);
            }
        }
        if run.end_time.is_none() {
            st.active_runs.insert(run_id);
        }
        st.runs.insert(run_id, run);
        advance(st, ctx);
        Ok(Json(json!({"run_id": run_id, "number_in_job": number_in_job})))
    })
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn result_details(result: &str) -> (&'static str, &'static str) {
    match result {
        "SUCCESS" | "SUCCESS_WITH_FAILURES" => ("SUCCESS", "SUCCESS"),
        "CANCELED" => ("USER_CANCELED", "SUCCESS"),
        "UPSTREAM_CANCELED" => ("USER_CANCELED", "SUCCESS"),
        "UPSTREAM_FAILED" => ("RUN_EXECUTION_ERROR", "CLIENT_ERROR"),
        "EXCLUDED" | "DISABLED" => ("SKIPPED", "SUCCESS"),
        "MAXIMUM_CONCURRENT_RUNS_REACHED" => ("MAX_CONCURRENT_RUNS_EXCEEDED", "CLIENT_ERROR"),
        _ => ("RUN_EXECUTION_ERROR", "CLIENT_ERROR"),
    }
}

fn state_json(life: &str, result: Option<&str>, message: &str, cancelled: bool) -> (Value, Value) {
    let state = Value::Object(compact(json!({
        "life_cycle_state": life, "result_state": result, "state_message": message,
        "user_cancelled_or_timedout": cancelled,
    })));
    let v2 = match life {
        "TERMINATED" | "SKIPPED" | "INTERNAL_ERROR" => {
            let (code, kind) = result_details(result.unwrap_or("FAILED"));
            json!({"state": "TERMINATED", "termination_details": {"code": code, "type": kind, "message": message}})
        }
        "QUEUED" => {
            json!({"state": "QUEUED", "queue_details": {"code": "MAX_CONCURRENT_RUNS_REACHED", "message": message}})
        }
        other => json!({"state": other}),
    };
    (state, v2)
}

fn task_view(t: &RunTask) -> Value {
    let mut m = t.spec.clone();
    let life = if t.state == "PENDING" {
        "PENDING"
    } else {
        t.state.as_str()
    };
    let (state, status) = state_json(
        life,
        t.result.as_deref(),
        &t.message,
        t.result.as_deref() == Some("CANCELED"),
    );
    m.insert("run_id".into(), json!(t.run_id));
    m.insert("state".into(), state);
    m.insert("status".into(), status);
    m.insert("start_time".into(), json!(t.start_time));
    m.insert("end_time".into(), json!(t.end_time));
    m.insert("setup_duration".into(), json!(0));
    m.insert(
        "execution_duration".into(),
        json!(if t.end_time > 0 {
            t.end_time - t.start_time
        } else {
            0
        }),
    );
    m.insert("cleanup_duration".into(), json!(0));
    m.insert("attempt_number".into(), json!(0));
    if let (Some(o), Some(Value::Object(c))) = (&t.outcome, m.get_mut("condition_task")) {
        c.insert("outcome".into(), json!(o));
    }
    Value::Object(m)
}

/// The run's page in the workspace UI, absolute as the service gives it:
/// `https://HOST/?o=WORKSPACE_ID#job/JOB/run/RUN`.
fn run_page_url(site: &str, r: &Run) -> String {
    format!("{site}#job/{}/run/{}", r.job_id, r.run_id)
}

/// The base of UI links: the address the client reached this workspace at, and its id.
fn site(headers: &axum::http::HeaderMap, st: &State) -> String {
    format!("{}/?o={}", crate::auth::base_url(headers), st.workspace_id)
}

fn run_view(r: &Run, page: Option<usize>, now: i64, site: &str) -> (Value, bool) {
    let (state, status) = state_json(
        &r.life_cycle_state,
        r.result_state.as_deref(),
        &r.state_message,
        r.canceled,
    );
    let end = r.end_time.unwrap_or(0);
    let mut m = compact(json!({
        "job_id": r.job_id, "run_id": r.run_id, "original_attempt_run_id": r.run_id, "number_in_job": r.number_in_job,
        "creator_user_name": r.creator, "run_name": r.run_name, "run_type": "JOB_RUN", "trigger": "ONE_TIME",
        "format": "MULTI_TASK", "start_time": r.start_time, "end_time": end,
        "setup_duration": r.setup_ms.min((if end > 0 { end } else { now }) - r.start_time).max(0),
        "execution_duration": if end > 0 { (end - r.start_time - r.setup_ms).max(0) } else { 0 },
        "cleanup_duration": 0, "run_duration": if end > 0 { end - r.start_time } else { now - r.start_time },
        "state": state, "status": status, "job_parameters": if r.job_parameters.is_empty() { Value::Null } else { json!(r.job_parameters) },
        "run_page_url": run_page_url(site, r),
    }));
    let mut more = false;
    if let Some(p) = page {
        let from = p * GET_PAGE;
        let tasks: Vec<Value> = r
            .tasks
            .iter()
            .skip(from)
            .take(GET_PAGE)
            .map(task_view)
            .collect();
        more = r.tasks.len() > from + GET_PAGE;
        if !tasks.is_empty() {
            m.insert("tasks".into(), Value::Array(tasks));
        }
    }
    (Value::Object(m), more)
}

async fn get_run(
    AxState(app): AxState<Arc<App>>,
    headers: axum::http::HeaderMap,
    q: Params,
) -> Reply {
    let id = q
        .int("run_id")?
        .ok_or_else(|| crate::body::missing("run_id"))?;
    let page = page_number(q.str("page_token"))?;
    app.view(|st, ctx| {
        let r = st.runs.get(&id).ok_or_else(|| run_missing(id))?;
        let (mut v, more) = run_view(r, Some(page), ctx.now, &site(&headers, st));
        if more {
            v["next_page_token"] = json!(encode(&(page + 1).to_string()));
        }
        Ok(Json(v))
    })
}

/// The output of one task run: its metadata, and for a failed task the cause as `error`
/// and `error_trace`. A job run with tasks has no output of its own, as on the service.
async fn get_output(
    AxState(app): AxState<Arc<App>>,
    headers: axum::http::HeaderMap,
    q: Params,
) -> Reply {
    let id = q
        .int("run_id")?
        .ok_or_else(|| crate::body::missing("run_id"))?;
    app.view(|st, ctx| {
        if st.runs.get(&id).is_some_and(|r| !r.tasks.is_empty()) {
            return Err(ApiError::invalid(format!(
                "Retrieving the output of runs with multiple tasks is not supported. Please retrieve the output of each individual task run instead. Run {id} has tasks."
            )));
        }
        let (run, task) = st
            .runs
            .values()
            .find_map(|r| r.tasks.iter().find(|t| t.run_id == id).map(|t| (r, t)))
            .ok_or_else(|| run_missing(id))?;
        let (mut meta, _) = run_view(run, None, ctx.now, &site(&headers, st));
        let view = task_view(task);
        for k in ["run_id", "task_key", "state", "status", "start_time", "end_time"] {
            if let Some(v) = view.get(k) {
                meta[k] = v.clone();
            }
        }
        let mut out = json!({ "metadata": meta });
        if let Some(e) = &task.error {
            out["error"] = json!(e);
            out["error_trace"] = json!(format!(
                "Traceback (most recent call last):\n  task {}\n{e}",
                task.task_key
            ));
        }
        Ok(Json(out))
    })
}

async fn list_runs(
    AxState(app): AxState<Arc<App>>,
    headers: axum::http::HeaderMap,
    q: Params,
) -> Reply {
    let limit = list_limit(&q)?;
    let page = Page {
        limit,
        ..Page::new(q.str("page_token"), None, limit, 100, "limit")?
    };
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
    let expand = q.bool("expand_tasks")?.unwrap_or(false);
    let from = q.int("start_time_from")?;
    let to = q.int("start_time_to")?;
    let offset = usize::try_from(q.int("offset")?.unwrap_or(0).max(0)).unwrap_or(0);
    app.view(|st, ctx| {
        if let Some(j) = job_id
            && !st.jobs.contains_key(&j)
            && !st.runs.values().any(|r| r.job_id == j)
        {
            return Err(job_missing(j));
        }
        let end = page
            .after_key::<i64>()?
            .map_or(Bound::Unbounded, Bound::Excluded);
        let base = site(&headers, st);
        let iter = st
            .runs
            .range((Bound::Unbounded, end))
            .rev()
            .filter(|(_, r)| job_id.is_none_or(|j| r.job_id == j))
            .filter(|(_, r)| !active_only || r.end_time.is_none())
            .filter(|(_, r)| !completed_only || r.end_time.is_some())
            .filter(|(_, r)| {
                from.is_none_or(|f| r.start_time >= f) && to.is_none_or(|t| r.start_time <= t)
            })
            .skip(offset)
            .map(|(k, r)| (*k, run_view(r, expand.then_some(0), ctx.now, &base).0));
        let (runs, next) = page.collect(iter);
        Ok(list_reply("runs", runs, next))
    })
}

async fn cancel_run(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let id = Obj::root(&b).req_int("run_id")?;
    app.mutate(|st, ctx| {
        if !st.runs.contains_key(&id) {
            return Err(run_missing(id));
        }
        cancel(st, id, ctx.now);
        Ok(Json(json!({})))
    })
}

fn cancel(st: &mut State, id: i64, now: i64) {
    let Some(mut run) = st.runs.remove(&id) else {
        return;
    };
    if run.end_time.is_none() {
        for t in &mut run.tasks {
            match t.state.as_str() {
                "RUNNING" => {
                    if let Some((pid, uid)) = &t.pipeline_update {
                        crate::pipelines::cancel_update(st, pid, uid, now);
                    }
                    finish(t, "CANCELED", "The run was canceled.", now);
                }
                "PENDING" => {
                    t.start_time = now;
                    finish(
                        t,
                        "UPSTREAM_CANCELED",
                        "The run was canceled before this task started.",
                        now,
                    );
                }
                _ => {}
            }
        }
        run.canceled = true;
        run.life_cycle_state = "TERMINATED".into();
        run.result_state = Some("CANCELED".into());
        run.state_message = "The run was canceled.".into();
        run.end_time = Some(now);
        st.active_runs.remove(&id);
    }
    st.runs.insert(id, run);
}

fn finish(t: &mut RunTask, result: &str, message: &str, at: i64) {
    t.state = "TERMINATED".into();
    t.result = Some(result.to_string());
    t.message = message.to_string();
    t.end_time = at;
}

// ---------- the run engine ----------

/// Moves every active run forward to `ctx.now`. Returns whether anything changed.
pub fn advance(st: &mut State, ctx: &Ctx) -> bool {
    if st.active_runs.is_empty() {
        return false;
    }
    let ids: Vec<i64> = st.active_runs.iter().copied().collect();
    let mut changed = false;
    for id in ids {
        changed |= advance_run(st, id, ctx);
    }
    changed
}

fn advance_run(st: &mut State, id: i64, ctx: &Ctx) -> bool {
    let Some(mut run) = st.runs.remove(&id) else {
        st.active_runs.remove(&id);
        return true;
    };
    let before = fingerprint(&run);
    step_run(st, &mut run, ctx);
    if run.end_time.is_some() {
        st.active_runs.remove(&id);
    }
    let changed = fingerprint(&run) != before;
    st.runs.insert(id, run);
    changed
}

/// Everything `step_run` can change, cheaply comparable: whether a run moved.
type Fingerprint = (String, Option<i64>, Option<i64>, Vec<(u8, bool)>);

fn fingerprint(run: &Run) -> Fingerprint {
    let phase = |t: &RunTask| match t.state.as_str() {
        "PENDING" => 0,
        "RUNNING" => 1,
        _ => 2,
    };
    let tasks = run
        .tasks
        .iter()
        .map(|t| (phase(t), t.result.is_some()))
        .collect();
    (
        run.life_cycle_state.clone(),
        run.tasks_from,
        run.end_time,
        tasks,
    )
}

fn step_run(st: &mut State, run: &mut Run, ctx: &Ctx) {
    let now = ctx.now;
    if run.tasks_from.is_none() {
        let max = st
            .jobs
            .get(&run.job_id)
            .and_then(|j| j.settings.get("max_concurrent_runs"))
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let running = st
            .active_runs
            .iter()
            .filter(|r| {
                st.runs
                    .get(r)
                    .is_some_and(|r| r.job_id == run.job_id && r.tasks_from.is_some())
            })
            .count() as i64;
        if running >= max {
            return;
        }
        run.tasks_from = Some(now.saturating_add(run.setup_ms));
        run.life_cycle_state = "PENDING".into();
        run.state_message.clear();
    }
    let Some(t0) = run.tasks_from else { return };
    if now < t0 {
        return;
    }
    run.life_cycle_state = "RUNNING".into();
    loop {
        let mut progress = false;
        for i in 0..run.tasks.len() {
            match run.tasks[i].state.as_str() {
                "PENDING" => progress |= try_start(st, run, i, t0, ctx),
                "RUNNING" => progress |= try_finish(st, &mut run.tasks[i], now),
                _ => {}
            }
        }
        if !progress {
            break;
        }
    }
    if run.tasks.iter().all(|t| t.state == "TERMINATED") {
        let end = run
            .tasks
            .iter()
            .map(|t| t.end_time)
            .max()
            .unwrap_or(t0)
            .max(t0);
        run.end_time = Some(end);
        let result = run_result(&run.tasks);
        // The service ends a run whose tasks failed in INTERNAL_ERROR, not TERMINATED, though
        // its tasks are TERMINATED (and `status` says TERMINATED, RUN_EXECUTION_ERROR): the
        // Databricks CLI's cloud-recorded acceptance test of a failed run shows it.
        run.life_cycle_state =
            if is_failed(result) && ctx.behaviours.on(Behaviour::FailedRunInternalError) {
                "INTERNAL_ERROR"
            } else {
                "TERMINATED"
            }
            .into();
        run.state_message = match result {
            "SUCCESS" => String::new(),
            _ => run
                .tasks
                .iter()
                .find(|t| t.result.as_deref() == Some("FAILED"))
                .map(|t| format!("Task {} failed with message: {}.", t.task_key, t.message))
                .unwrap_or_default(),
        };
        run.result_state = Some(result.into());
    }
}

fn is_failed(r: &str) -> bool {
    matches!(
        r,
        "FAILED" | "UPSTREAM_FAILED" | "TIMEDOUT" | "INTERNAL_ERROR"
    )
}
fn is_canceled(r: &str) -> bool {
    matches!(r, "CANCELED" | "UPSTREAM_CANCELED")
}

/// `None`: run the task; `Some(result)`: skip it with that result.
fn run_if_decision(run_if: &str, deps: &[(String, bool)]) -> Option<&'static str> {
    if deps.is_empty() {
        return None;
    }
    let success = |(r, ok): &(String, bool)| r == "SUCCESS" && *ok;
    let failed = |(r, _): &(String, bool)| is_failed(r);
    let canceled = |(r, _): &(String, bool)| is_canceled(r);
    let not_met = || {
        if deps.iter().any(failed) {
            Some("UPSTREAM_FAILED")
        } else if deps.iter().any(canceled) {
            Some("UPSTREAM_CANCELED")
        } else {
            Some("EXCLUDED")
        }
    };
    let run = match run_if {
        "ALL_DONE" => true,
        "NONE_FAILED" => !deps.iter().any(|d| failed(d) || canceled(d)),
        "AT_LEAST_ONE_SUCCESS" => deps.iter().any(success),
        "AT_LEAST_ONE_FAILED" => deps.iter().any(failed),
        "ALL_FAILED" => deps.iter().all(failed),
        _ => deps.iter().all(success),
    };
    if run {
        None
    } else if matches!(run_if, "AT_LEAST_ONE_FAILED" | "ALL_FAILED") {
        Some("EXCLUDED")
    } else {
        not_met()
    }
}

fn try_start(st: &mut State, run: &mut Run, i: usize, t0: i64, ctx: &Ctx) -> bool {
    let deps: Vec<(String, Option<String>)> = run.tasks[i]
        .spec
        .get("depends_on")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| {
            Some((
                d.get("task_key")?.as_str()?.to_string(),
                d.get("outcome").and_then(Value::as_str).map(str::to_string),
            ))
        })
        .collect();
    let mut ready = t0;
    let mut outcomes = Vec::new();
    for (key, want) in &deps {
        let Some(dep) = run.tasks.iter().find(|t| &t.task_key == key) else {
            continue;
        };
        if dep.state != "TERMINATED" {
            return false;
        }
        ready = ready.max(dep.end_time);
        let ok = want
            .as_ref()
            .is_none_or(|w| dep.outcome.as_deref() == Some(w.as_str()));
        outcomes.push((dep.result.clone().unwrap_or_default(), ok));
    }
    if ready > ctx.now {
        return false;
    }
    let run_if = run.tasks[i]
        .spec
        .get("run_if")
        .and_then(Value::as_str)
        .unwrap_or("ALL_SUCCESS")
        .to_string();
    let (task_ms, params, full_refresh, run_id, job_id) = (
        run.task_ms,
        run.params.clone(),
        run.full_refresh,
        run.run_id,
        run.job_id,
    );
    let t = &mut run.tasks[i];
    t.start_time = ready;
    if let Some(skip) = run_if_decision(&run_if, &outcomes) {
        finish(
            t,
            skip,
            "The task's run_if condition was not met by its dependencies.",
            ready,
        );
        return true;
    }
    t.state = "RUNNING".into();
    if t.spec
        .get("disabled")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        finish(t, "DISABLED", "The task is disabled.", ready);
        return true;
    }
    let at = Ctx {
        now: ready,
        user: ctx.user,
        timings: ctx.timings,
        behaviours: ctx.behaviours,
    };
    let env = tasks::TaskEnv {
        ctx: &at,
        params: &params,
        run_id,
        job_id,
        full_refresh,
    };
    match tasks::start(st, &t.spec, &env) {
        tasks::Started::AwaitsUpdate(pid, uid) => t.pipeline_update = Some((pid, uid)),
        tasks::Started::Refused(message) => {
            t.planned = Some(("FAILED".into(), message));
            t.end_time = ready;
        }
        tasks::Started::Ran {
            result,
            message,
            outcome,
        } => {
            t.outcome = outcome;
            // A task whose code fails says so only generically; the cause is in its output.
            let message =
                if result == "FAILED" && ctx.behaviours.on(Behaviour::FailedTaskGenericMessage) {
                    t.error = Some(message);
                    WORKLOAD_FAILED.to_string()
                } else {
                    message
                };
            t.planned = Some((result, message));
            t.end_time = ready.saturating_add(task_ms);
        }
    }
    try_finish(st, t, ctx.now);
    true
}

fn try_finish(st: &State, t: &mut RunTask, now: i64) -> bool {
    if let Some((pid, uid)) = t.pipeline_update.clone() {
        let Some((state, end, failure)) = crate::pipelines::update_outcome(st, &pid, &uid, now)
        else {
            finish(
                t,
                "FAILED",
                &format!("Pipeline '{pid}' was deleted during the update."),
                now,
            );
            return true;
        };
        let (result, msg) = match state {
            "COMPLETED" => ("SUCCESS", String::new()),
            "FAILED" => (
                "FAILED",
                failure.unwrap_or_else(|| "The pipeline update failed.".into()),
            ),
            "CANCELED" => ("CANCELED", "The pipeline update was canceled.".into()),
            _ => return false,
        };
        finish(
            t,
            result,
            &msg,
            end.unwrap_or(now).min(now).max(t.start_time),
        );
        return true;
    }
    if now < t.end_time {
        return false;
    }
    let (result, message) = t
        .planned
        .clone()
        .unwrap_or_else(|| ("SUCCESS".into(), String::new()));
    let end = t.end_time;
    finish(t, &result, &message, end);
    true
}

fn run_result(tasks: &[RunTask]) -> &'static str {
    let any_failed = tasks
        .iter()
        .any(|t| t.result.as_deref().is_some_and(is_failed));
    if !any_failed {
        return if tasks
            .iter()
            .any(|t| t.result.as_deref() == Some("CANCELED"))
        {
            "CANCELED"
        } else {
            "SUCCESS"
        };
    }
    let depended: HashSet<&str> = tasks
        .iter()
        .flat_map(|t| {
            t.spec
                .get("depends_on")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(|d| d.get("task_key").and_then(Value::as_str))
        .collect();
    let leaves_ok = tasks
        .iter()
        .filter(|t| !depended.contains(t.task_key.as_str()))
        .all(|t| {
            matches!(
                t.result.as_deref(),
                Some("SUCCESS" | "EXCLUDED" | "DISABLED")
            )
        });
    if leaves_ok {
        "SUCCESS_WITH_FAILURES"
    } else {
        "FAILED"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(r: &str) -> (String, bool) {
        (r.to_string(), true)
    }

    #[test]
    fn run_if_follows_the_dependency_results() {
        assert_eq!(
            run_if_decision("ALL_SUCCESS", &[d("SUCCESS"), d("FAILED")]),
            Some("UPSTREAM_FAILED")
        );
        assert_eq!(run_if_decision("ALL_DONE", &[d("FAILED")]), None);
        assert_eq!(
            run_if_decision("AT_LEAST_ONE_FAILED", &[d("SUCCESS")]),
            Some("EXCLUDED")
        );
        assert_eq!(
            run_if_decision("AT_LEAST_ONE_FAILED", &[d("FAILED"), d("SUCCESS")]),
            None
        );
        assert_eq!(
            run_if_decision("NONE_FAILED", &[d("EXCLUDED"), d("SUCCESS")]),
            None
        );
        assert_eq!(
            run_if_decision("ALL_FAILED", &[d("FAILED"), d("UPSTREAM_FAILED")]),
            None
        );
        assert_eq!(
            run_if_decision("ALL_SUCCESS", &[("SUCCESS".into(), false)]),
            Some("EXCLUDED")
        );
        assert_eq!(run_if_decision("ALL_SUCCESS", &[]), None);
    }

    #[test]
    fn cycles_are_named() {
        let mut deps = HashMap::new();
        deps.insert("a".to_string(), vec!["b".to_string()]);
        deps.insert("b".to_string(), vec!["a".to_string()]);
        assert_eq!(find_cycle(&deps).unwrap(), vec!["a", "b", "a"]);
    }
}
