//! What the Jobs API does to the workspace state, apart from HTTP: jobs created, read,
//! replaced, merged and deleted; runs started, read, listed and canceled; and the views the
//! API answers with.

use super::engine::{advance, cancel, is_failed, latest};
use super::settings::{MERGED, check_settings, fill_sources, merge_by_key, normalize};
use super::{ForEachRun, Job, RepairItem, Run, RunTask, TriggeredBy};
use crate::behaviours::{Behaviour, Behaviours};
use crate::errors::{ApiError, ApiResult};
use crate::pages::{Page, encode};
use crate::store::{Ctx, State};
use crate::util::compact;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;

/// Reads return at most this many tasks / clusters / parameters / environments per page.
pub const GET_PAGE: usize = 100;

/// Arrays that `jobs/get` pages at 100 items.
pub const PAGED: &[&str] = &["tasks", "job_clusters", "parameters", "environments"];

pub fn job_missing(id: i64) -> ApiError {
    ApiError::job_missing("Job", id)
}

pub fn run_missing(id: i64) -> ApiError {
    ApiError::job_missing("Run", id)
}

/// A run that is not there: one the service removed for its age (`purge_old_runs`) is
/// answered with the words the service uses for it, `Run: N in job: M doesn't exist`
/// (databricks-sdk-py databricks/sdk/errors/overrides.py matches them for runs/get, a 400
/// INVALID_PARAMETER_VALUE); any other, `Run N does not exist.`
pub fn run_gone(st: &State, id: i64) -> ApiError {
    match st.jobs.purged_runs.get(&id) {
        Some(job) => ApiError::invalid(format!("Run: {id} in job: {job} doesn't exist")),
        None => run_missing(id),
    }
}

/// `settings` with each paged array cut to page `page`; whether a later page has items.
pub fn paged_settings(
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

pub fn run_as_name(settings: &Map<String, Value>, creator: &str) -> String {
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

/// A job as `jobs/list` answers (a `BaseJob`: no `run_as_user_name`, which only `jobs/get`
/// reports). With `expand`, its tasks and other paged arrays come as the first page of
/// `jobs/get` would hold them, at most 100 each, and `has_more` marks a job with more (the
/// rest come from `jobs/get`); without, none of them.
pub fn base_job(job: &Job, expand: bool, b: Behaviours) -> Value {
    let mut settings = job.settings.clone();
    let mut more = false;
    if expand {
        (settings, more) = paged_settings(&job.settings, 0, b);
    } else {
        for k in PAGED {
            settings.remove(*k);
        }
    }
    fill_sources(&mut settings, b);
    let mut out = json!({"job_id": job.job_id, "creator_user_name": job.creator, "created_time": job.created_time, "settings": settings});
    if more {
        out["has_more"] = json!(true);
    }
    out
}

pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub fn result_details(result: &str) -> (&'static str, &'static str) {
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

pub fn state_json(
    life: &str,
    result: Option<&str>,
    message: &str,
    cancelled: bool,
) -> (Value, Value) {
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

/// A task run as `runs/get` lists it, with its spec as the job held it.
pub fn task_view(t: &RunTask, resolved: bool) -> Value {
    task_view_of(t, &t.spec, resolved)
}

/// A task run as `runs/get` lists it: `spec` (for an iteration, its For each task's nested
/// task) and its state; a For each task's `for_each_task.stats`; with `resolved`, its
/// parameters as they were resolved (`resolved_values`, what `include_resolved_values`
/// asks for: databricks-sdk-py databricks/sdk/service/jobs.py `get_run`, `RunTask`).
pub fn task_view_of(t: &RunTask, spec: &Map<String, Value>, resolved: bool) -> Value {
    let mut m = spec.clone();
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
    m.insert("task_key".into(), json!(t.task_key));
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
    m.insert("attempt_number".into(), json!(t.attempt_number));
    if let (Some(o), Some(Value::Object(c))) = (&t.outcome, m.get_mut("condition_task")) {
        c.insert("outcome".into(), json!(o));
    }
    if let (Some(fe), Some(Value::Object(f))) = (&t.for_each, m.get_mut("for_each_task")) {
        f.insert("stats".into(), for_each_stats(fe));
    }
    if resolved && let Some(r) = &t.resolved {
        m.insert("resolved_values".into(), r.clone());
    }
    Value::Object(m)
}

/// `for_each_task.stats` of a For each task that started (databricks-sdk-py
/// databricks/sdk/service/jobs.py `ForEachStats`, `ForEachTaskTaskRunStats`,
/// `ForEachTaskErrorMessageStats`): how many iterations there are, were scheduled, are
/// running, ended, succeeded and failed, and the three most common error messages.
fn for_each_stats(fe: &ForEachRun) -> Value {
    let result = |it: &RunTask| it.result.clone().unwrap_or_default();
    let succeeded = fe
        .iterations
        .iter()
        .filter(|it| result(it) == "SUCCESS")
        .count();
    let failed: Vec<&RunTask> = fe
        .iterations
        .iter()
        .filter(|it| is_failed(&result(it)))
        .collect();
    let active = fe
        .iterations
        .iter()
        .filter(|it| it.state == "RUNNING")
        .count();
    let mut messages: Vec<(String, &'static str, usize)> = Vec::new();
    for it in &failed {
        let m = it.error.clone().unwrap_or_else(|| it.message.clone());
        let category = result_details(&result(it)).0;
        match messages
            .iter_mut()
            .find(|(x, c, _)| *x == m && *c == category)
        {
            Some(e) => e.2 += 1,
            None => messages.push((m, category, 1)),
        }
    }
    messages.sort_by_key(|m| std::cmp::Reverse(m.2));
    let mut out = json!({"task_run_stats": {
        "total_iterations": fe.inputs.len(),
        "scheduled_iterations": fe.iterations.len(),
        "active_iterations": active,
        "completed_iterations": succeeded + failed.len(),
        "succeeded_iterations": succeeded,
        "failed_iterations": failed.len(),
    }});
    if !messages.is_empty() {
        out["error_message_stats"] = messages
            .into_iter()
            .take(3)
            .map(|(m, c, n)| json!({"error_message": m, "termination_category": c, "count": n}))
            .collect();
    }
    out
}

/// The run's page in the workspace UI, absolute as the service gives it:
/// `https://HOST/?o=WORKSPACE_ID#job/JOB/run/RUN`.
pub fn run_page_url(site: &str, r: &Run) -> String {
    format!("{site}#job/{}/run/{}", r.job_id, r.run_id)
}

/// A job run as `runs/get` and `runs/list` answer, with page `page` of its tasks. A run a
/// Run Job task started says so: `trigger: RUN_JOB_TASK`, and `trigger_info.run_id`, "the
/// run id of the Run Job task run" (databricks-sdk-py databricks/sdk/service/jobs.py
/// `TriggerType`, `TriggerInfo`).
pub fn run_view(
    r: &Run,
    page: Option<usize>,
    now: i64,
    site: &str,
    resolved: bool,
) -> (Value, bool) {
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
    if let Some(by) = &r.triggered_by {
        m.insert("trigger".into(), json!("RUN_JOB_TASK"));
        m.insert("trigger_info".into(), json!({"run_id": by.task_run_id}));
    }
    let mut more = false;
    if let Some(p) = page {
        let from = p * GET_PAGE;
        let tasks: Vec<Value> = r
            .tasks
            .iter()
            .skip(from)
            .take(GET_PAGE)
            .map(|t| task_view(t, resolved))
            .collect();
        more = r.tasks.len() > from + GET_PAGE;
        if !tasks.is_empty() {
            m.insert("tasks".into(), Value::Array(tasks));
        }
    }
    (Value::Object(m), more)
}

/// A task run found by its id: the job run it belongs to, the task run, the spec it runs
/// (an iteration's is its For each task's nested task).
struct TaskRunOf<'a> {
    run: &'a Run,
    task: &'a RunTask,
    spec: &'a Map<String, Value>,
}

/// The nested task of a For each task's spec.
fn nested_spec(spec: &Map<String, Value>) -> Option<&Map<String, Value>> {
    spec.get("for_each_task")?.get("task")?.as_object()
}

/// The task run (of any run, an iteration of a For each task included) whose id is `id`.
fn find_task_run(st: &State, id: i64) -> Option<TaskRunOf<'_>> {
    for run in st.jobs.runs.values() {
        for t in &run.tasks {
            if t.run_id == id {
                return Some(TaskRunOf {
                    run,
                    task: t,
                    spec: &t.spec,
                });
            }
            if let Some(fe) = &t.for_each
                // Iterations are started, and take their ids, in order.
                && let Ok(i) = fe.iterations.binary_search_by_key(&id, |it| it.run_id)
                && let Some(spec) = nested_spec(&t.spec)
            {
                return Some(TaskRunOf {
                    run,
                    task: &fe.iterations[i],
                    spec,
                });
            }
        }
    }
    None
}

/// A task run as `runs/get` answers for its id: a run of one task, in the job run
/// `job_run_id` ("For task runs, the field is populated with the ID of the job run that
/// the task run belongs to", databricks-sdk-py databricks/sdk/service/jobs.py `Run`). A For
/// each task's lists its iterations (`iterations`, 100 a page, with `next_page_token`
/// for more) beside the For each task itself in `tasks`, as databricks-sdk-py
/// databricks/sdk/mixins/jobs.py `get_run` reads them ("When querying a ForEach task run,
/// a page token is returned when there are more than 100 iterations. Only a single task
/// is returned, corresponding to the ForEach task itself.").
fn task_run_view(found: &TaskRunOf, page: usize, now: i64, site: &str, resolved: bool) -> Value {
    let (TaskRunOf { run, task, spec }, t) = (found, found.task);
    let (mut v, _) = run_view(run, None, now, site, false);
    let view = task_view_of(task, spec, resolved);
    for k in [
        "run_id",
        "state",
        "status",
        "start_time",
        "end_time",
        "setup_duration",
        "execution_duration",
        "cleanup_duration",
        "attempt_number",
    ] {
        if let Some(x) = view.get(k) {
            v[k] = x.clone();
        }
    }
    v["original_attempt_run_id"] = json!(t.run_id);
    v["job_run_id"] = json!(run.run_id);
    v["run_duration"] = json!(if t.end_time > 0 {
        t.end_time - t.start_time
    } else {
        (now - t.start_time).max(0)
    });
    v["run_page_url"] = json!(format!("{site}#job/{}/run/{}", run.job_id, t.run_id));
    v["tasks"] = json!([view]);
    if let (Some(fe), Some(nested)) = (&t.for_each, nested_spec(&t.spec)) {
        let from = page.saturating_mul(GET_PAGE);
        let items: Vec<Value> = fe
            .iterations
            .iter()
            .skip(from)
            .take(GET_PAGE)
            .map(|it| task_view_of(it, nested, resolved))
            .collect();
        if !items.is_empty() {
            v["iterations"] = Value::Array(items);
        }
        if fe.iterations.len() > from.saturating_add(GET_PAGE) {
            v["next_page_token"] = json!(encode(&(page + 1).to_string()));
        }
    }
    v
}

/// The base of UI links: the address the client reached this workspace at, and its id.
fn site(base_url: &str, st: &State) -> String {
    format!("{base_url}/?o={}", st.workspace_id)
}

// ---------- jobs ----------

/// A `run_as` naming a user or service principal in another case names the one SCIM holds,
/// and is kept in its spelling (`principals_as_scim_holds`).
fn run_as_held(st: &State, ctx: &Ctx, settings: &mut Map<String, Value>) {
    use crate::scim::PrincipalKind;
    let Some(Value::Object(r)) = settings.get_mut("run_as") else {
        return;
    };
    for (field, kind) in [
        ("user_name", PrincipalKind::User),
        ("service_principal_name", PrincipalKind::ServicePrincipal),
    ] {
        if let Some(Value::String(name)) = r.get_mut(field) {
            *name = crate::scim::held_name(st, ctx.behaviours, &[kind], name);
        }
    }
}

/// With `refuse_unknown_run_as`, a `run_as` naming a user (by user name) or a service
/// principal (by application id) the workspace does not have is refused, as the service
/// refuses it: `404 RESOURCE_DOES_NOT_EXIST`, `Principal: UserName(x) does not exist`. Both
/// are matched in any case; a group is not checked.
fn run_as_known(st: &State, ctx: &Ctx, settings: &Map<String, Value>) -> ApiResult<()> {
    use crate::scim::PrincipalKind;
    if !ctx.behaviours.on(Behaviour::RefuseUnknownRunAs) {
        return Ok(());
    }
    let Some(Value::Object(r)) = settings.get("run_as") else {
        return Ok(());
    };
    for (field, kind, word) in [
        ("user_name", PrincipalKind::User, "UserName"),
        (
            "service_principal_name",
            PrincipalKind::ServicePrincipal,
            "ServicePrincipalName",
        ),
    ] {
        if let Some(Value::String(name)) = r.get(field)
            && crate::scim::workspace_principal(st, kind, name).is_none()
        {
            return Err(ApiError::not_found(
                "RESOURCE_DOES_NOT_EXIST",
                format!("Principal: {word}({name}) does not exist"),
            ));
        }
    }
    Ok(())
}

/// Creates a job with settings already checked and stored as [`normalize`] makes them;
/// nothing is stored when its `run_as` names nobody the workspace has ([`run_as_known`]).
pub fn create_job(st: &mut State, ctx: &Ctx, mut settings: Map<String, Value>) -> ApiResult<i64> {
    run_as_known(st, ctx, &settings)?;
    run_as_held(st, ctx, &mut settings);
    let id = st.next_id();
    st.jobs.jobs.insert(
        id,
        Job {
            job_id: id,
            created_time: ctx.now,
            creator: ctx.user.to_string(),
            settings,
            task_values: BTreeMap::new(),
        },
    );
    Ok(id)
}

/// A job as `jobs/get` answers: page `page` of its paged arrays.
pub fn get_job(st: &State, ctx: &Ctx, id: i64, page: usize) -> ApiResult<Map<String, Value>> {
    let job = st.jobs.jobs.get(&id).ok_or_else(|| job_missing(id))?;
    let (mut settings, more) = paged_settings(&job.settings, page, ctx.behaviours);
    fill_sources(&mut settings, ctx.behaviours);
    let mut out = compact(json!({
        "job_id": job.job_id, "creator_user_name": job.creator,
        "run_as_user_name": run_as_name(&job.settings, &job.creator),
        "created_time": job.created_time, "settings": settings,
    }));
    // The SDK loops while the key is present: omit it on the last page, never "".
    // `has_more` comes with every paged answer, as the service sends it.
    if more {
        out.insert(
            "next_page_token".into(),
            json!(encode(&(page + 1).to_string())),
        );
        out.insert("has_more".into(), json!(true));
    } else if page > 0 {
        out.insert("has_more".into(), json!(false));
    }
    Ok(out)
}

/// Replaces a job's settings with `new` (checked and normalized).
pub fn reset_job(st: &mut State, ctx: &Ctx, id: i64, mut new: Map<String, Value>) -> ApiResult<()> {
    if !st.jobs.jobs.contains_key(&id) {
        return Err(job_missing(id));
    }
    run_as_known(st, ctx, &new)?;
    run_as_held(st, ctx, &mut new);
    let job = st.jobs.jobs.get_mut(&id).ok_or_else(|| job_missing(id))?;
    // A full replace, except that settings without `run_as` keep the identity the job
    // ran as: the service does not go back to the owner (the Databricks CLI's test
    // server records this against the real service).
    if ctx.behaviours.on(Behaviour::KeepRunAs)
        && !new.contains_key("run_as")
        && let Some(r) = job.settings.get("run_as")
    {
        new.insert("run_as".into(), r.clone());
    }
    job.settings = new;
    Ok(())
}

/// A `jobs/update`: the fields to remove (`tasks/KEY` removes one task), then the new
/// settings, keyed arrays merged by key; the result must be valid settings.
pub fn update_job(
    st: &mut State,
    ctx: &Ctx,
    id: i64,
    new: &Map<String, Value>,
    remove: &[String],
) -> ApiResult<()> {
    let job = st.jobs.jobs.get(&id).ok_or_else(|| job_missing(id))?;
    // Only a run_as the request names is checked: the job's own was checked when it came.
    run_as_known(st, ctx, new)?;
    let mut s = job.settings.clone();
    for f in remove {
        match f.split_once('/') {
            Some((arr, key)) => {
                let Some((_, kf)) = MERGED.iter().find(|(a, _)| *a == arr) else {
                    return Err(ApiError::invalid(format!(
                        "Invalid value for field 'fields_to_remove': '{f}' (nested removal is only for tasks, job_clusters, environments)"
                    )));
                };
                let list = s.get_mut(arr).and_then(Value::as_array_mut);
                let Some(list) = list.filter(|l| {
                    l.iter()
                        .any(|x| x.get(*kf).and_then(Value::as_str) == Some(key))
                }) else {
                    return Err(ApiError::invalid(format!(
                        "Invalid value for field 'fields_to_remove': '{f}' does not exist in the job"
                    )));
                };
                list.retain(|x| x.get(*kf).and_then(Value::as_str) != Some(key));
            }
            None => {
                s.remove(f);
            }
        }
    }
    for (k, v) in new {
        match (MERGED.iter().find(|(a, _)| a == k), s.get_mut(k), v) {
            (Some((_, key)), Some(Value::Array(old)), Value::Array(items)) => {
                merge_by_key(old, items, key);
            }
            _ => {
                s.insert(k.clone(), v.clone());
            }
        }
    }
    check_settings(&s)?;
    let mut s = normalize(s, ctx.behaviours);
    run_as_held(st, ctx, &mut s);
    if let Some(job) = st.jobs.jobs.get_mut(&id) {
        job.settings = s;
    }
    Ok(())
}

/// Deletes a job and cancels its active runs.
pub fn delete_job(st: &mut State, ctx: &Ctx, id: i64) -> ApiResult<()> {
    st.jobs.jobs.remove(&id).ok_or_else(|| job_missing(id))?;
    crate::permissions::forget(st, "jobs", &id.to_string());
    let active: Vec<i64> = st
        .jobs
        .active_runs
        .iter()
        .copied()
        .filter(|r| st.jobs.runs.get(r).is_some_and(|r| r.job_id == id))
        .collect();
    for r in active {
        cancel(st, r, ctx.now);
    }
    Ok(())
}

/// A `jobs/list` request.
pub struct JobsQuery {
    pub page: Page,
    pub offset: usize,
    pub expand_tasks: bool,
    /// Lower-cased: jobs whose name equals it, ignoring case.
    pub name: Option<String>,
}

pub fn list_jobs(st: &State, ctx: &Ctx, q: &JobsQuery) -> ApiResult<(Vec<Value>, Option<String>)> {
    let start = q
        .page
        .after_key::<i64>()?
        .map_or(Bound::Unbounded, Bound::Excluded);
    let iter = st
        .jobs
        .jobs
        .range((start, Bound::Unbounded))
        .filter(|(_, j)| {
            q.name.as_deref().is_none_or(|n| {
                j.settings
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|x| x.to_lowercase() == n)
            })
        })
        .skip(q.offset)
        .map(|(k, j)| (*k, base_job(j, q.expand_tasks, ctx.behaviours)));
    Ok(q.page.collect(iter))
}

// ---------- runs ----------

/// A `jobs/run-now` request, its fields checked.
#[derive(Debug, Default)]
pub struct RunNow {
    pub job_id: i64,
    /// Scalars by name.
    pub job_parameters: Map<String, Value>,
    pub idempotency_token: Option<String>,
    /// Task keys to run; empty: all.
    pub only: Vec<String>,
    /// `queue.enabled`, overriding the job's setting.
    pub queue: Option<bool>,
    /// `pipeline_params.full_refresh`.
    pub full_refresh: bool,
}

/// The run a `run-now` started (or, for a repeated idempotency token, started before).
#[derive(Debug, PartialEq, Eq)]
pub struct RunStarted {
    pub run_id: i64,
    pub number_in_job: i64,
}

pub fn run_now(st: &mut State, ctx: &Ctx, r: RunNow) -> ApiResult<RunStarted> {
    let started = start_run(st, ctx, r, None, Vec::new())?;
    advance(st, ctx);
    Ok(started)
}

/// Starts a run of a job at `ctx.now` without moving any run: `run-now`, or a Run Job task
/// (`by`, with the jobs whose runs started it in `lineage`, nearest first), which moves the
/// run it started itself.
pub fn start_run(
    st: &mut State,
    ctx: &Ctx,
    r: RunNow,
    by: Option<TriggeredBy>,
    lineage: Vec<i64>,
) -> ApiResult<RunStarted> {
    let id = r.job_id;
    let job = st
        .jobs
        .jobs
        .get(&id)
        .ok_or_else(|| job_missing(id))?
        .clone();
    if let Some(t) = &r.idempotency_token
        && let Some(started) = started_with_token(st, id, t)
    {
        return Ok(started);
    }
    let only = &r.only;
    check_only(&job.settings, only, id)?;
    let (job_parameters, params) = run_parameters(&job.settings, &r.job_parameters);
    let run_id = st.next_id();
    let number_in_job = next_number_in_job(st, id);
    // With `only`, the run has the tasks named and nothing else, so their dependencies on
    // the others are dropped; without it, every task of the job, as written.
    let attempts = job_task_specs(&job.settings)
        .filter(|t| only.is_empty() || only.iter().any(|o| o == task_key_of(t)))
        .map(|t| Attempt {
            key: task_key_of(t).to_string(),
            spec: t.clone(),
            number: 0,
        })
        .collect();
    let within: Option<HashSet<String>> =
        (!only.is_empty()).then(|| only.iter().cloned().collect());
    let tasks = pending_tasks(st, attempts, within.as_ref());
    let mut run = Run {
        run_id,
        job_id: id,
        number_in_job,
        run_name: job
            .settings
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("Untitled")
            .to_string(),
        creator: ctx.user.to_string(),
        start_time: ctx.now,
        // `set_pending` below settles the state and timings, as a repair's restart does.
        tasks_from: None,
        end_time: None,
        life_cycle_state: String::new(),
        result_state: None,
        state_message: String::new(),
        canceled: false,
        setup_ms: 0,
        task_ms: 0,
        job_parameters,
        params,
        full_refresh: r.full_refresh,
        idempotency_token: r.idempotency_token,
        tasks,
        repair_history: Vec::new(),
        triggered_by: by,
        lineage,
        task_values: BTreeMap::new(),
    };
    run.setup_ms = set_pending(&mut run, ctx);
    resolve_job_parameters(&mut run, st.workspace_id);
    apply_max_concurrent_runs(st, &job.settings, r.queue, &mut run, ctx.now);
    if run.end_time.is_none() {
        st.jobs.active_runs.insert(run_id);
    }
    st.jobs.runs.insert(run_id, run);
    Ok(RunStarted {
        run_id,
        number_in_job,
    })
}

/// The run an earlier `run-now` of the job with the same idempotency token started: the
/// service answers a repeated request with it rather than starting another.
fn started_with_token(st: &State, job_id: i64, token: &str) -> Option<RunStarted> {
    st.jobs
        .runs
        .values()
        .find(|run| run.job_id == job_id && run.idempotency_token.as_deref() == Some(token))
        .map(|run| RunStarted {
            run_id: run.run_id,
            number_in_job: run.number_in_job,
        })
}

/// Every task key `only` names must be one of the job's tasks.
fn check_only(settings: &Map<String, Value>, only: &[String], job_id: i64) -> ApiResult<()> {
    let tasks = settings.get("tasks").and_then(Value::as_array);
    for k in only {
        if !tasks
            .into_iter()
            .flatten()
            .any(|t| t.get("task_key").and_then(Value::as_str) == Some(k))
        {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'only': task '{k}' is not in job {job_id}"
            )));
        }
    }
    Ok(())
}

/// A starting run's job parameters: each the job declares, with the request's value over
/// its default (as `runs/get` lists them), and by name every value the run sees, including
/// ones the request passes that the job does not declare.
fn run_parameters(
    settings: &Map<String, Value>,
    overrides: &Map<String, Value>,
) -> (Vec<Value>, BTreeMap<String, String>) {
    let mut params = BTreeMap::new();
    let mut job_parameters = Vec::new();
    for p in settings
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = p
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let default = p
            .get("default")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let value = overrides
            .get(&name)
            .map(scalar)
            .unwrap_or_else(|| default.clone());
        job_parameters.push(json!({"name": name, "default": default, "value": value}));
        params.insert(name, value);
    }
    for (k, v) in overrides {
        params.entry(k.clone()).or_insert_with(|| scalar(v));
    }
    (job_parameters, params)
}

/// The number the job's next run takes. Runs the service removed for their age still took
/// their numbers.
fn next_number_in_job(st: &State, job_id: i64) -> i64 {
    (st.jobs.runs.values().filter(|r| r.job_id == job_id).count()
        + st.jobs
            .purged_runs
            .values()
            .filter(|j| **j == job_id)
            .count()) as i64
        + 1
}

/// The task specs a job's settings hold, in order.
fn job_task_specs(settings: &Map<String, Value>) -> impl Iterator<Item = &Map<String, Value>> {
    settings
        .get("tasks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn task_key_of(spec: &Map<String, Value>) -> &str {
    spec.get("task_key")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// An attempt of a task a run is about to make: a task of a run that starts, or one a
/// repair re-runs.
struct Attempt {
    key: String,
    spec: Map<String, Value>,
    /// 0 for a task's first run; each repair that re-runs it adds one.
    number: i64,
}

/// Each attempt as a pending task run with a new task run id. With `within`, the task keys
/// the run has, a dependency on any other task is dropped, since nothing would ever
/// satisfy it.
fn pending_tasks(
    st: &mut State,
    attempts: Vec<Attempt>,
    within: Option<&HashSet<String>>,
) -> Vec<RunTask> {
    let mut tasks = Vec::new();
    for Attempt {
        key,
        mut spec,
        number,
    } in attempts
    {
        if let Some(keys) = within
            && let Some(Value::Array(d)) = spec.get_mut("depends_on")
        {
            d.retain(|x| {
                x.get("task_key")
                    .and_then(Value::as_str)
                    .is_some_and(|k| keys.contains(k))
            });
        }
        let task_run_id = st.next_id();
        tasks.push(RunTask::pending(task_run_id, key, number, spec));
    }
    tasks
}

/// Puts a run that starts, or that a repair restarts, back at the beginning: pending, its
/// tasks due once the run's setup time has passed, at the timings the emulator runs with
/// now. Returns that setup time.
fn set_pending(run: &mut Run, ctx: &Ctx) -> i64 {
    let setup_ms = ctx.timings.run_setup_ms();
    run.tasks_from = Some(ctx.now.saturating_add(setup_ms));
    run.task_ms = ctx.timings.task_ms();
    run.end_time = None;
    run.life_cycle_state = "PENDING".into();
    run.result_state = None;
    run.state_message.clear();
    run.canceled = false;
    setup_ms
}

/// A run that would exceed its job's `max_concurrent_runs` waits in the queue when the
/// request (else the job) enables queueing, and is skipped, ended at `now`, otherwise.
fn apply_max_concurrent_runs(
    st: &State,
    settings: &Map<String, Value>,
    queue: Option<bool>,
    run: &mut Run,
    now: i64,
) {
    let max = settings
        .get("max_concurrent_runs")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    // Queued runs (no `tasks_from` yet) do not count: they are not running.
    let running = st
        .jobs
        .active_runs
        .iter()
        .filter(|r| {
            st.jobs
                .runs
                .get(r)
                .is_some_and(|r| r.job_id == run.job_id && r.tasks_from.is_some())
        })
        .count() as i64;
    if running < max {
        return;
    }
    let queue_enabled = queue.unwrap_or_else(|| {
        settings
            .get("queue")
            .and_then(|q| q.get("enabled"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    });
    if queue_enabled && max > 0 {
        run.tasks_from = None;
        run.life_cycle_state = "QUEUED".into();
        run.state_message =
            "Waiting for other runs of this job to finish (max_concurrent_runs).".into();
    } else {
        run.life_cycle_state = "SKIPPED".into();
        run.result_state = Some("MAXIMUM_CONCURRENT_RUNS_REACHED".into());
        run.state_message = format!(
            "Skipped: the job already has {running} active run(s) and max_concurrent_runs is {max}."
        );
        run.end_time = Some(now);
    }
}

/// The job parameters of a run that starts, their dynamic value references resolved
/// (the service's example: a parameter whose default is `{{job.start_time.iso_date}}`,
/// https://docs.databricks.com/aws/en/jobs/dynamic-value-references). A parameter cannot
/// use another, nor a task's values (none has run yet): a value whose references cannot
/// be resolved is kept as it is written.
fn resolve_job_parameters(run: &mut Run, workspace_id: i64) {
    let sc = super::refs::Scope {
        job_id: run.job_id,
        job_name: &run.run_name,
        run_id: run.run_id,
        start_time: run.start_time,
        repair_count: 0,
        workspace_id,
        params: None,
        tasks: &[],
        task: None,
        input: None,
    };
    let mut resolved = BTreeMap::new();
    for (k, v) in &run.params {
        resolved.insert(
            k.clone(),
            super::refs::resolve(v, &sc).unwrap_or_else(|_| v.clone()),
        );
    }
    for p in &mut run.job_parameters {
        if let Some(v) = p
            .get("name")
            .and_then(Value::as_str)
            .and_then(|n| resolved.get(n))
        {
            p["value"] = json!(v);
        }
    }
    run.params = resolved;
}

/// A run as `runs/get` answers: page `page` of its tasks, and with `include_history` its
/// repair history; with `include_resolved_values` each task's resolved parameters.
/// `base_url` is the address the client reached the workspace at (for the run's page URL).
/// The id of a task run answers that task run (see [`task_run_view`]).
pub fn get_run(
    st: &State,
    ctx: &Ctx,
    id: i64,
    page: usize,
    base_url: &str,
    include_history: bool,
    include_resolved_values: bool,
) -> ApiResult<Value> {
    let Some(r) = st.jobs.runs.get(&id) else {
        let found = find_task_run(st, id).ok_or_else(|| run_gone(st, id))?;
        return Ok(task_run_view(
            &found,
            page,
            ctx.now,
            &site(base_url, st),
            include_resolved_values,
        ));
    };
    let (mut v, more) = run_view(
        r,
        Some(page),
        ctx.now,
        &site(base_url, st),
        include_resolved_values,
    );
    if more {
        v["next_page_token"] = json!(encode(&(page + 1).to_string()));
    }
    if include_history {
        v["repair_history"] = Value::Array(history_view(r));
    }
    Ok(v)
}

/// `repair_history` as `runs/get` answers it: always the original run first (a run never
/// repaired has only that), then each repair with its id; the one running has the run's
/// own state.
pub fn history_view(r: &Run) -> Vec<Value> {
    let item = |kind: &str, i: &RepairItem| {
        let (life, result, message, end) = match i.end_time {
            Some(end) => (
                i.life_cycle_state.as_str(),
                i.result_state.as_deref(),
                i.state_message.as_str(),
                end,
            ),
            None => (
                r.life_cycle_state.as_str(),
                r.result_state.as_deref(),
                r.state_message.as_str(),
                0,
            ),
        };
        let (state, status) = state_json(life, result, message, result == Some("CANCELED"));
        let mut v = json!({
            "type": kind, "start_time": i.start_time, "end_time": end,
            "state": state, "status": status, "task_run_ids": i.task_run_ids,
        });
        if let Some(id) = i.id {
            v["id"] = json!(id);
        }
        v
    };
    if r.repair_history.is_empty() {
        let original = RepairItem {
            id: None,
            start_time: r.start_time,
            end_time: None,
            life_cycle_state: String::new(),
            result_state: None,
            state_message: String::new(),
            task_run_ids: r.tasks.iter().map(|t| t.run_id).collect(),
        };
        let mut v = item("ORIGINAL", &original);
        v["end_time"] = json!(r.end_time.unwrap_or(0));
        return vec![v];
    }
    r.repair_history
        .iter()
        .map(|i| item(if i.id.is_some() { "REPAIR" } else { "ORIGINAL" }, i))
        .collect()
}

/// The output of one task run: its metadata, for a failed task the cause as `error` and
/// `error_trace`, and for a Run Job task the run it started (`run_job_output.run_id`,
/// databricks-sdk-py databricks/sdk/service/jobs.py `RunOutput`, `RunJobOutput`). A job
/// run with tasks has no output of its own, as on the service.
pub fn get_output(st: &State, ctx: &Ctx, id: i64, base_url: &str) -> ApiResult<Value> {
    if st.jobs.runs.get(&id).is_some_and(|r| !r.tasks.is_empty()) {
        return Err(ApiError::invalid(format!(
            "Retrieving the output of runs with multiple tasks is not supported. Please retrieve the output of each individual task run instead. Run {id} has tasks."
        )));
    }
    let found = find_task_run(st, id).ok_or_else(|| run_gone(st, id))?;
    let task = found.task;
    let (mut meta, _) = run_view(found.run, None, ctx.now, &site(base_url, st), false);
    let view = task_view_of(task, found.spec, false);
    for k in [
        "run_id",
        "task_key",
        "state",
        "status",
        "start_time",
        "end_time",
    ] {
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
    if let Some(child) = task.child_run {
        out["run_job_output"] = json!({ "run_id": child });
    }
    Ok(out)
}

/// A `runs/list` request, its parameters checked.
pub struct RunsQuery {
    pub page: Page,
    pub job_id: Option<i64>,
    pub active_only: bool,
    pub completed_only: bool,
    pub expand_tasks: bool,
    pub start_time_from: Option<i64>,
    pub start_time_to: Option<i64>,
    pub offset: usize,
}

/// Runs newest first.
pub fn list_runs(
    st: &State,
    ctx: &Ctx,
    q: &RunsQuery,
    base_url: &str,
) -> ApiResult<(Vec<Value>, Option<String>)> {
    if let Some(j) = q.job_id
        && !st.jobs.jobs.contains_key(&j)
        && !st.jobs.runs.values().any(|r| r.job_id == j)
    {
        return Err(job_missing(j));
    }
    let end = q
        .page
        .after_key::<i64>()?
        .map_or(Bound::Unbounded, Bound::Excluded);
    let base = site(base_url, st);
    let (from, to) = (q.start_time_from, q.start_time_to);
    let iter = st
        .jobs
        .runs
        .range((Bound::Unbounded, end))
        .rev()
        .filter(|(_, r)| q.job_id.is_none_or(|j| r.job_id == j))
        .filter(|(_, r)| !q.active_only || r.end_time.is_none())
        .filter(|(_, r)| !q.completed_only || r.end_time.is_some())
        .filter(|(_, r)| {
            from.is_none_or(|f| r.start_time >= f) && to.is_none_or(|t| r.start_time <= t)
        })
        .skip(q.offset)
        .map(|(k, r)| {
            (
                *k,
                run_view(r, q.expand_tasks.then_some(0), ctx.now, &base, false).0,
            )
        });
    Ok(q.page.collect(iter))
}

/// A `runs/repair` request, its fields checked.
#[derive(Debug, Default)]
pub struct Repair {
    pub run_id: i64,
    pub rerun_tasks: Vec<String>,
    pub rerun_all_failed_tasks: bool,
    pub rerun_dependent_tasks: bool,
    pub latest_repair_id: Option<i64>,
    /// Scalars by name, replacing the run's values.
    pub job_parameters: Map<String, Value>,
}

/// Results a task may end with that a repair of "all failed tasks" leaves alone.
fn succeeded(result: Option<&str>) -> bool {
    matches!(result, Some("SUCCESS" | "EXCLUDED" | "DISABLED"))
}

/// Re-runs tasks of a run that ended, as part of that run: the failed ones (or those
/// named), and with `rerun_dependent_tasks` every task downstream of them. Each gets a new
/// attempt with a new task run id, from the job's current settings; the others keep their
/// result. The run goes back to running and ends by its tasks' latest attempts. Returns
/// the repair's id.
pub fn repair_run(st: &mut State, ctx: &Ctx, r: Repair) -> ApiResult<i64> {
    let id = r.run_id;
    let run = st.jobs.runs.get(&id).ok_or_else(|| run_gone(st, id))?;
    check_repairable(run, &r)?;
    let current = latest(&run.tasks);
    let rerun = tasks_to_rerun(&current, &r, id)?;
    let job = st
        .jobs
        .jobs
        .get(&run.job_id)
        .ok_or_else(|| job_missing(run.job_id))?;
    let attempts = rerun_attempts(&job.settings, &current, &rerun, run.job_id)?;
    let keys: HashSet<String> = current.iter().map(|t| t.task_key.clone()).collect();
    let mut run = st.jobs.runs.remove(&id).ok_or_else(|| run_missing(id))?;
    if run.repair_history.is_empty() {
        run.repair_history.push(original_attempt(&run));
    }
    for (k, v) in &r.job_parameters {
        let v = scalar(v);
        for p in &mut run.job_parameters {
            if p.get("name").and_then(Value::as_str) == Some(k) {
                p["value"] = json!(v);
            }
        }
        run.params.insert(k.clone(), v);
    }
    let repair_id = st.next_id();
    // A dependency on a task this run does not have (`run-now` with `only`) is dropped,
    // as the run was started with.
    let tasks = pending_tasks(st, attempts, Some(&keys));
    let new_ids = tasks.iter().map(|t| t.run_id).collect();
    run.tasks.extend(tasks);
    run.repair_history.push(RepairItem {
        id: Some(repair_id),
        start_time: ctx.now,
        end_time: None,
        life_cycle_state: "PENDING".into(),
        result_state: None,
        state_message: String::new(),
        task_run_ids: new_ids,
    });
    // Unlike a new run, a repaired one keeps the setup time it started with.
    set_pending(&mut run, ctx);
    st.jobs.runs.insert(id, run);
    st.jobs.active_runs.insert(id);
    advance(st, ctx);
    Ok(repair_id)
}

/// Whether a repair may be made of the run as requested: the run has ended, the request
/// names the latest repair (if any), and it says what to re-run in exactly one way.
fn check_repairable(run: &Run, r: &Repair) -> ApiResult<()> {
    let id = r.run_id;
    // "The run must not be in progress" (the API reference of runs/repair).
    if run.end_time.is_none() {
        return Err(ApiError::invalid(format!(
            "Run {id} is in progress and cannot be repaired; wait for it to end or cancel it."
        )));
    }
    // The service's words when a repaired run is repaired without the latest repair's id.
    let latest_repair = run.repair_history.iter().rev().find_map(|i| i.id);
    match (latest_repair, r.latest_repair_id) {
        (Some(_), None) => {
            return Err(ApiError::invalid(
                "The latest repair ID needs to be provided in order to create a new repair",
            ));
        }
        (Some(l), Some(g)) if l != g => {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'latest_repair_id': {g} is not the latest repair of run {id} (that is {l})"
            )));
        }
        (None, Some(g)) => {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'latest_repair_id': run {id} has not been repaired, so there is no repair {g}"
            )));
        }
        _ => {}
    }
    match (r.rerun_tasks.is_empty(), r.rerun_all_failed_tasks) {
        (false, true) => Err(ApiError::invalid(
            "Only one of rerun_tasks or rerun_all_failed_tasks can be used.",
        )),
        (true, false) => Err(ApiError::invalid(
            "Either rerun_tasks or rerun_all_failed_tasks must be given.",
        )),
        _ => Ok(()),
    }
}

/// The task keys a repair re-runs, of the run's tasks (`current`, their latest attempts):
/// those named, or every one that did not succeed, and with `rerun_dependent_tasks` every
/// task downstream of them. Refused when that is none.
fn tasks_to_rerun(current: &[&RunTask], r: &Repair, id: i64) -> ApiResult<HashSet<String>> {
    let mut seen = HashSet::new();
    for k in &r.rerun_tasks {
        if !seen.insert(k.as_str()) {
            // What the service answers, as seen against a live workspace.
            return Err(ApiError::invalid(
                "rerun_tasks cannot contain duplicate task keys.",
            ));
        }
        if !current.iter().any(|t| &t.task_key == k) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'rerun_tasks': task '{k}' is not in run {id}"
            )));
        }
    }
    let mut rerun: HashSet<String> = if r.rerun_all_failed_tasks {
        current
            .iter()
            .filter(|t| !succeeded(t.result.as_deref()))
            .map(|t| t.task_key.clone())
            .collect()
    } else {
        r.rerun_tasks.iter().cloned().collect()
    };
    if r.rerun_dependent_tasks {
        // Downstream of a re-run task, transitively.
        loop {
            let more: Vec<String> = current
                .iter()
                .filter(|t| !rerun.contains(&t.task_key))
                .filter(|t| depends_on(&t.spec).into_iter().any(|d| rerun.contains(d)))
                .map(|t| t.task_key.clone())
                .collect();
            if more.is_empty() {
                break;
            }
            rerun.extend(more);
        }
    }
    if rerun.is_empty() {
        return Err(ApiError::invalid(format!(
            "Run {id} has no failed tasks to repair."
        )));
    }
    Ok(rerun)
}

/// The next attempt of each re-run task: re-run tasks take the job's current settings, so
/// one the job no longer has cannot be re-run.
fn rerun_attempts(
    settings: &Map<String, Value>,
    current: &[&RunTask],
    rerun: &HashSet<String>,
    job_id: i64,
) -> ApiResult<Vec<Attempt>> {
    current
        .iter()
        .filter(|t| rerun.contains(&t.task_key))
        .map(|t| {
            let spec = job_task_specs(settings)
                .find(|s| s.get("task_key").and_then(Value::as_str) == Some(&t.task_key))
                .cloned()
                .ok_or_else(|| {
                    ApiError::invalid(format!(
                        "Invalid value for field 'rerun_tasks': task '{}' is no longer in job {}",
                        t.task_key, job_id
                    ))
                })?;
            Ok(Attempt {
                key: t.task_key.clone(),
                spec,
                number: t.attempt_number + 1,
            })
        })
        .collect()
}

/// The run as it first ran, the first entry of its repair history once it is repaired.
fn original_attempt(run: &Run) -> RepairItem {
    RepairItem {
        id: None,
        start_time: run.start_time,
        end_time: run.end_time,
        life_cycle_state: run.life_cycle_state.clone(),
        result_state: run.result_state.clone(),
        state_message: run.state_message.clone(),
        task_run_ids: run.tasks.iter().map(|t| t.run_id).collect(),
    }
}

/// The task keys a task spec depends on.
fn depends_on(spec: &Map<String, Value>) -> Vec<&str> {
    spec.get("depends_on")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("task_key").and_then(Value::as_str))
        .collect()
}

/// Cancels a run that is going; one that has ended is left as it ended, and the request is
/// still accepted, as the service does.
pub fn cancel_run(st: &mut State, ctx: &Ctx, id: i64) -> ApiResult<()> {
    if !st.jobs.runs.contains_key(&id) {
        return Err(run_gone(st, id));
    }
    cancel(st, id, ctx.now);
    Ok(())
}

/// A `POST /__emulator/task-values`: the task values (`dbutils.jobs.taskValues.set`) the
/// simulated task `task_key` sets when it runs, for one run (`run_id`, before the task
/// starts) or for every later run of a job (`job_id`). A run's values go over its job's.
/// Empty `values` forgets those given for that task.
#[derive(Debug, Default)]
pub struct TaskValues {
    pub job_id: Option<i64>,
    pub run_id: Option<i64>,
    pub task_key: String,
    pub values: Map<String, Value>,
}

/// How large a task value may be: "The size of the JSON representation of the value
/// cannot exceed 48 KiB." (https://docs.databricks.com/aws/en/jobs/task-values)
pub const MAX_TASK_VALUE_BYTES: usize = 48 * 1024;

pub fn set_task_values(st: &mut State, tv: TaskValues) -> ApiResult<()> {
    if tv.task_key.is_empty() {
        return Err(crate::body::missing("task_key"));
    }
    for (k, v) in &tv.values {
        let size = v.to_string().len();
        if size > MAX_TASK_VALUE_BYTES {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'values.{k}': its JSON is {size} bytes; a task value holds at most {MAX_TASK_VALUE_BYTES}"
            )));
        }
    }
    let slot = match (tv.job_id, tv.run_id) {
        (Some(j), None) => {
            &mut st
                .jobs
                .jobs
                .get_mut(&j)
                .ok_or_else(|| job_missing(j))?
                .task_values
        }
        (None, Some(r)) => {
            if !st.jobs.runs.contains_key(&r) {
                return Err(run_gone(st, r));
            }
            &mut st
                .jobs
                .runs
                .get_mut(&r)
                .ok_or_else(|| run_missing(r))?
                .task_values
        }
        _ => {
            return Err(ApiError::invalid(
                "Set exactly one of 'job_id' (every later run of the job) and 'run_id' (one run)",
            ));
        }
    };
    if tv.values.is_empty() {
        slot.remove(&tv.task_key);
    } else {
        slot.entry(tv.task_key).or_default().extend(tv.values);
    }
    Ok(())
}

/// Every task value given: `{"task_values": [{"job_id" or "run_id", "task_key", "values"}]}`.
pub fn list_task_values(st: &State) -> Value {
    let mut out = Vec::new();
    for (field, id, given) in st
        .jobs
        .jobs
        .values()
        .map(|j| ("job_id", j.job_id, &j.task_values))
        .chain(
            st.jobs
                .runs
                .values()
                .map(|r| ("run_id", r.run_id, &r.task_values)),
        )
    {
        for (key, values) in given {
            out.push(json!({field: id, "task_key": key, "values": values}));
        }
    }
    json!({ "task_values": out })
}

/// Forgets every task value given.
pub fn clear_task_values(st: &mut State) {
    let jobs: Vec<i64> = st
        .jobs
        .jobs
        .values()
        .filter(|j| !j.task_values.is_empty())
        .map(|j| j.job_id)
        .collect();
    for j in jobs {
        if let Some(job) = st.jobs.jobs.get_mut(&j) {
            job.task_values.clear();
        }
    }
    let runs: Vec<i64> = st
        .jobs
        .runs
        .values()
        .filter(|r| !r.task_values.is_empty())
        .map(|r| r.run_id)
        .collect();
    for r in runs {
        if let Some(run) = st.jobs.runs.get_mut(&r) {
            run.task_values.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(now: i64) -> Ctx<'static> {
        Ctx::for_test(now, 100)
    }

    fn settings(v: Value) -> Map<String, Value> {
        let Value::Object(m) = v else {
            panic!("not an object")
        };
        check_settings(&m).unwrap();
        normalize(m, Behaviours::default())
    }

    fn job(st: &mut State) -> i64 {
        let s = settings(json!({"name": "j", "tasks": [
            {"task_key": "a", "sql_task": {"warehouse_id": "w", "query": {"query_id": "q"}}},
            {"task_key": "b", "depends_on": [{"task_key": "a"}], "run_job_task": {"job_id": 1}},
        ]}));
        // The warehouse task a's query runs on.
        warehouse(st, "w");
        create_job(st, &ctx(0), s).unwrap()
    }

    fn warehouse(st: &mut State, id: &str) {
        st.warehouses.warehouses.insert(
            id.into(),
            crate::warehouses::Warehouse {
                id: id.into(),
                spec: Map::new(),
                creator_name: "u@x".into(),
                data_source_id: "d".into(),
                state: "RUNNING".into(),
                until: 0,
                idle_since: 0,
            },
        );
    }

    fn sql(key: &str, warehouse: &str, after: Option<&str>) -> Value {
        let mut t = json!({"task_key": key, "sql_task": {"warehouse_id": warehouse, "query": {"query_id": "q"}}});
        if let Some(a) = after {
            t["depends_on"] = json!([{"task_key": a}]);
        }
        t
    }

    /// A job of three tasks a -> b -> c whose b runs on a warehouse that does not exist yet,
    /// run to its end: a SUCCESS, b FAILED, c UPSTREAM_FAILED. Returns the job and the run.
    fn failed_run(st: &mut State) -> (i64, i64) {
        warehouse(st, "w");
        let s = settings(json!({"name": "chain", "tasks": [
            sql("a", "w", None), sql("b", "missing", Some("a")), sql("c", "w", Some("b")),
        ]}));
        let job = create_job(st, &ctx(0), s).unwrap();
        let run = run_now(
            st,
            &ctx(0),
            RunNow {
                job_id: job,
                ..RunNow::default()
            },
        )
        .unwrap()
        .run_id;
        advance(st, &ctx(10_000));
        (job, run)
    }

    /// `(task_key, attempt_number, result)` of every attempt of the run's tasks.
    fn attempts(st: &State, run: i64) -> Vec<(String, i64, Option<String>)> {
        st.jobs.runs[&run]
            .tasks
            .iter()
            .map(|t| (t.task_key.clone(), t.attempt_number, t.result.clone()))
            .collect()
    }

    fn all_failed(run_id: i64, latest_repair_id: Option<i64>) -> Repair {
        Repair {
            run_id,
            rerun_all_failed_tasks: true,
            rerun_dependent_tasks: true,
            latest_repair_id,
            ..Repair::default()
        }
    }

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn a_repair_reruns_only_the_failed_tasks_and_keeps_the_history() {
        let mut st = State::new("u@x", 0);
        let (_, run) = failed_run(&mut st);
        assert_eq!(
            attempts(&st, run),
            [
                ("a".into(), 0, some("SUCCESS")),
                ("b".into(), 0, some("FAILED")),
                ("c".into(), 0, some("UPSTREAM_FAILED")),
            ]
        );
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
        let original: Vec<i64> = st.jobs.runs[&run].tasks.iter().map(|t| t.run_id).collect();
        // The cause goes away; the repair re-runs b and c, not a.
        warehouse(&mut st, "missing");
        let repair = repair_run(&mut st, &ctx(20_000), all_failed(run, None)).unwrap();
        assert!(st.jobs.active_runs.contains(&run));
        let r = &st.jobs.runs[&run];
        assert_eq!(r.life_cycle_state, "PENDING");
        assert_eq!(r.end_time, None);
        advance(&mut st, &ctx(30_000));
        assert_eq!(
            attempts(&st, run),
            [
                ("a".into(), 0, some("SUCCESS")),
                ("b".into(), 0, some("FAILED")),
                ("c".into(), 0, some("UPSTREAM_FAILED")),
                ("b".into(), 1, some("SUCCESS")),
                ("c".into(), 1, some("SUCCESS")),
            ]
        );
        let r = &st.jobs.runs[&run];
        assert_eq!(r.result_state.as_deref(), Some("SUCCESS"));
        assert_eq!(r.tasks[0].run_id, original[0], "a kept its task run");
        let new: Vec<i64> = r.tasks[3..].iter().map(|t| t.run_id).collect();
        assert!(new.iter().all(|id| !original.contains(id)), "{new:?}");
        // runs/get with include_history: the original run, then the repair.
        let v = get_run(&st, &ctx(30_000), run, 0, "http://h", true, false).unwrap();
        let h = v["repair_history"].as_array().unwrap();
        assert_eq!(h.len(), 2, "{h:?}");
        assert_eq!(h[0]["type"], "ORIGINAL");
        assert_eq!(h[0]["state"]["result_state"], "FAILED");
        assert_eq!(h[0]["task_run_ids"], json!(original));
        assert!(h[0].get("id").is_none());
        assert_eq!(h[1]["type"], "REPAIR");
        assert_eq!(h[1]["id"], json!(repair));
        assert_eq!(h[1]["state"]["result_state"], "SUCCESS");
        assert_eq!(h[1]["task_run_ids"], json!(new));
        assert_eq!(h[1]["start_time"], json!(20_000));
        assert_eq!(v["tasks"][3]["attempt_number"], json!(1));
        // Without include_history there is none; a run never repaired has its original.
        let v = get_run(&st, &ctx(30_000), run, 0, "http://h", false, false).unwrap();
        assert!(v.get("repair_history").is_none());
    }

    #[test]
    fn a_run_never_repaired_has_only_its_original_in_the_history() {
        let mut st = State::new("u@x", 0);
        let (_, run) = failed_run(&mut st);
        let v = get_run(&st, &ctx(10_000), run, 0, "http://h", true, false).unwrap();
        let h = v["repair_history"].as_array().unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0]["type"], "ORIGINAL");
        assert_eq!(h[0]["state"]["result_state"], "FAILED");
        assert_eq!(h[0]["task_run_ids"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn a_second_repair_needs_the_latest_repair_id() {
        let mut st = State::new("u@x", 0);
        let (_, run) = failed_run(&mut st);
        // Still failing: the first repair fails again.
        let first = repair_run(&mut st, &ctx(20_000), all_failed(run, None)).unwrap();
        // A run that is being repaired is in progress.
        let e = repair_run(&mut st, &ctx(20_000), all_failed(run, Some(first))).unwrap_err();
        assert!(e.message.contains("in progress"), "{}", e.message);
        advance(&mut st, &ctx(30_000));
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
        let e = repair_run(&mut st, &ctx(40_000), all_failed(run, None)).unwrap_err();
        assert_eq!(
            e.message,
            "The latest repair ID needs to be provided in order to create a new repair"
        );
        let e = repair_run(&mut st, &ctx(40_000), all_failed(run, Some(first + 1000))).unwrap_err();
        assert!(e.message.contains("latest_repair_id"), "{}", e.message);
        warehouse(&mut st, "missing");
        let second = repair_run(&mut st, &ctx(40_000), all_failed(run, Some(first))).unwrap();
        assert_ne!(first, second);
        advance(&mut st, &ctx(50_000));
        let keys: Vec<(String, i64)> = attempts(&st, run)
            .into_iter()
            .map(|(k, n, _)| (k, n))
            .collect();
        assert_eq!(keys.iter().filter(|(k, _)| k == "a").count(), 1, "{keys:?}");
        assert!(keys.contains(&("c".into(), 2)), "{keys:?}");
        let v = get_run(&st, &ctx(50_000), run, 0, "http://h", true, false).unwrap();
        let types: Vec<&str> = v["repair_history"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["type"].as_str())
            .collect();
        assert_eq!(types, ["ORIGINAL", "REPAIR", "REPAIR"]);
        assert_eq!(v["repair_history"][1]["state"]["result_state"], "FAILED");
        assert_eq!(v["state"]["result_state"], "SUCCESS");
    }

    #[test]
    fn a_repair_names_what_to_rerun_once_and_needs_something_failed() {
        let mut st = State::new("u@x", 0);
        let (_, run) = failed_run(&mut st);
        let named = |tasks: &[&str]| Repair {
            run_id: run,
            rerun_tasks: tasks.iter().map(|t| t.to_string()).collect(),
            ..Repair::default()
        };
        let e = repair_run(&mut st, &ctx(20_000), named(&["b", "b"])).unwrap_err();
        assert_eq!(e.message, "rerun_tasks cannot contain duplicate task keys.");
        let e = repair_run(&mut st, &ctx(20_000), named(&["zz"])).unwrap_err();
        assert!(
            e.message.contains("task 'zz' is not in run"),
            "{}",
            e.message
        );
        let e = repair_run(
            &mut st,
            &ctx(20_000),
            Repair {
                rerun_all_failed_tasks: true,
                ..named(&["b"])
            },
        )
        .unwrap_err();
        assert!(e.message.contains("Only one of"), "{}", e.message);
        // Named tasks only, without their dependents unless asked.
        warehouse(&mut st, "missing");
        repair_run(&mut st, &ctx(20_000), named(&["b"])).unwrap();
        advance(&mut st, &ctx(30_000));
        let latest: Vec<(String, i64, Option<String>)> = attempts(&st, run);
        assert_eq!(latest.len(), 4, "{latest:?}");
        assert_eq!(latest[3], ("b".into(), 1, some("SUCCESS")));
        // c is still upstream-failed from the original: the run did not succeed.
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
        let repair = st.jobs.runs[&run].repair_history.last().and_then(|i| i.id);
        repair_run(&mut st, &ctx(40_000), all_failed(run, repair)).unwrap();
        advance(&mut st, &ctx(50_000));
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("SUCCESS"));
        // Nothing failed is left to re-run.
        let repair = st.jobs.runs[&run].repair_history.last().and_then(|i| i.id);
        let e = repair_run(&mut st, &ctx(60_000), all_failed(run, repair)).unwrap_err();
        assert_eq!(
            e.message,
            format!("Run {run} has no failed tasks to repair.")
        );
        let e = repair_run(&mut st, &ctx(60_000), all_failed(run + 1000, None)).unwrap_err();
        assert_eq!(e.message, format!("Run {} does not exist.", run + 1000));
    }

    #[test]
    fn cancel_ends_an_active_run_or_repair_and_leaves_an_ended_one() {
        let mut st = State::new("u@x", 0);
        let (job, run) = failed_run(&mut st);
        // An ended run is left as it ended; the request is still accepted.
        cancel_run(&mut st, &ctx(11_000), run).unwrap();
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
        // A repair that is cancelled ends the run, and its history entry, CANCELED.
        warehouse(&mut st, "missing");
        repair_run(&mut st, &ctx(20_000), all_failed(run, None)).unwrap();
        cancel_run(&mut st, &ctx(20_050), run).unwrap();
        let r = &st.jobs.runs[&run];
        assert_eq!(
            (r.life_cycle_state.as_str(), r.result_state.as_deref()),
            ("TERMINATED", Some("CANCELED"))
        );
        assert!(!st.jobs.active_runs.contains(&run));
        let v = get_run(&st, &ctx(20_050), run, 0, "http://h", true, false).unwrap();
        assert_eq!(v["repair_history"][1]["state"]["result_state"], "CANCELED");
        assert_eq!(v["repair_history"][1]["end_time"], json!(20_050));
        // A run that is going is cancelled: its tasks do not run on.
        let other = run_now(
            &mut st,
            &ctx(30_000),
            RunNow {
                job_id: job,
                ..RunNow::default()
            },
        )
        .unwrap()
        .run_id;
        cancel_run(&mut st, &ctx(30_050), other).unwrap();
        let results: Vec<Option<String>> = st.jobs.runs[&other]
            .tasks
            .iter()
            .map(|t| t.result.clone())
            .collect();
        assert_eq!(
            results,
            [
                some("UPSTREAM_CANCELED"),
                some("UPSTREAM_CANCELED"),
                some("UPSTREAM_CANCELED")
            ]
        );
        assert_eq!(
            st.jobs.runs[&other].result_state.as_deref(),
            Some("CANCELED")
        );
        let e = cancel_run(&mut st, &ctx(30_050), other + 1000).unwrap_err();
        assert_eq!(e.message, format!("Run {} does not exist.", other + 1000));
    }

    fn states(st: &State, run: i64) -> Vec<(String, Option<String>)> {
        st.jobs.runs[&run]
            .tasks
            .iter()
            .map(|t| (t.state.clone(), t.result.clone()))
            .collect()
    }

    #[test]
    fn a_run_walks_its_tasks_in_order_as_the_clock_advances() {
        let mut st = State::new("u@x", 0);
        let id = job(&mut st);
        let started = run_now(
            &mut st,
            &ctx(0),
            RunNow {
                job_id: id,
                ..RunNow::default()
            },
        )
        .unwrap();
        assert_eq!(started.number_in_job, 1);
        let run = started.run_id;
        assert_eq!(st.jobs.runs[&run].life_cycle_state, "PENDING");
        advance(&mut st, &ctx(150));
        assert_eq!(
            states(&st, run),
            [("RUNNING".into(), None), ("PENDING".into(), None)]
        );
        advance(&mut st, &ctx(1_000));
        assert_eq!(
            states(&st, run),
            [
                ("TERMINATED".into(), Some("SUCCESS".into())),
                ("TERMINATED".into(), Some("FAILED".into()))
            ]
        );
        let r = &st.jobs.runs[&run];
        assert_eq!(r.result_state.as_deref(), Some("FAILED"));
        assert!(st.jobs.active_runs.is_empty());
        // The run's view says why, from the failed task.
        let v = get_run(&st, &ctx(1_000), run, 0, "http://h", false, false).unwrap();
        assert_eq!(
            v["run_page_url"],
            json!(format!(
                "http://h/?o={}#job/{id}/run/{run}",
                st.workspace_id
            ))
        );
    }

    #[test]
    fn an_idempotency_token_returns_the_run_it_started() {
        let mut st = State::new("u@x", 0);
        let id = job(&mut st);
        let go = || RunNow {
            job_id: id,
            idempotency_token: Some("t".into()),
            ..RunNow::default()
        };
        let first = run_now(&mut st, &ctx(0), go()).unwrap();
        assert_eq!(run_now(&mut st, &ctx(10), go()).unwrap(), first);
        assert_eq!(st.jobs.runs.len(), 1);
        let e = run_now(
            &mut st,
            &ctx(0),
            RunNow {
                job_id: id,
                only: vec!["zz".into()],
                ..RunNow::default()
            },
        )
        .unwrap_err();
        assert!(
            e.message.contains("task 'zz' is not in job"),
            "{}",
            e.message
        );
    }

    #[test]
    fn an_update_merges_tasks_by_key_and_removes_fields() {
        let mut st = State::new("u@x", 0);
        let id = job(&mut st);
        let new = settings(
            json!({"tasks": [{"task_key": "c", "sql_task": {"warehouse_id": "x", "query": {"query_id": "q"}}}]}),
        );
        update_job(&mut st, &ctx(0), id, &new, &["tasks/b".into()]).unwrap();
        let keys: Vec<&str> = st.jobs.jobs[&id].settings["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["task_key"].as_str())
            .collect();
        assert_eq!(keys, ["a", "c"]);
        let e = update_job(&mut st, &ctx(0), id, &Map::new(), &["tasks/b".into()]).unwrap_err();
        assert!(
            e.message.contains("does not exist in the job"),
            "{}",
            e.message
        );
    }

    #[test]
    fn deleting_a_job_cancels_its_active_runs() {
        let mut st = State::new("u@x", 0);
        let id = job(&mut st);
        let run = run_now(
            &mut st,
            &ctx(0),
            RunNow {
                job_id: id,
                ..RunNow::default()
            },
        )
        .unwrap()
        .run_id;
        delete_job(&mut st, &ctx(50), id).unwrap();
        let r = &st.jobs.runs[&run];
        assert_eq!(
            (r.life_cycle_state.as_str(), r.result_state.as_deref()),
            ("TERMINATED", Some("CANCELED"))
        );
        assert_eq!(
            delete_job(&mut st, &ctx(60), id).unwrap_err().message,
            format!("Job {id} does not exist.")
        );
    }

    #[test]
    fn a_run_is_removed_once_the_clock_passes_sixty_days_after_its_end() {
        use super::super::engine::{RUN_RETENTION_MS, purge_old_runs, tick};
        let mut st = State::new("u@x", 0);
        let id = job(&mut st);
        let go = |st: &mut State, now: i64| {
            run_now(
                st,
                &ctx(now),
                RunNow {
                    job_id: id,
                    ..RunNow::default()
                },
            )
            .unwrap()
            .run_id
        };
        let old = go(&mut st, 0);
        advance(&mut st, &ctx(1_000));
        let end = st.jobs.runs[&old].end_time.unwrap();
        // A run started later, still going when the first one's time is up, is kept.
        let later = go(&mut st, end + RUN_RETENTION_MS);
        // Turned off, the service keeps every run.
        let off = Ctx {
            behaviours: Behaviours::default().without(Behaviour::PurgeOldRuns),
            ..ctx(end + RUN_RETENTION_MS + 1)
        };
        assert!(!purge_old_runs(&mut st, &off));
        // Sixty days to the millisecond: still there.
        assert!(!tick(&mut st, &ctx(end + RUN_RETENTION_MS)));
        assert!(get_run(&st, &ctx(0), old, 0, "http://h", false, false).is_ok());
        assert!(tick(&mut st, &ctx(end + RUN_RETENTION_MS + 1)));
        let now = ctx(end + RUN_RETENTION_MS + 1);
        assert!(!st.jobs.runs.contains_key(&old));
        assert!(st.jobs.runs.contains_key(&later));
        // runs/get names the job, in the service's words; an id never used keeps its answer.
        let e = get_run(&st, &now, old, 0, "http://h", false, false).unwrap_err();
        assert_eq!(
            (e.status.as_u16(), e.code.as_str(), e.message.as_str()),
            (
                400,
                "INVALID_PARAMETER_VALUE",
                format!("Run: {old} in job: {id} doesn't exist").as_str()
            )
        );
        let e = get_run(&st, &now, old + 1000, 0, "http://h", false, false).unwrap_err();
        assert_eq!(e.message, format!("Run {} does not exist.", old + 1000));
        // Nor is it listed, repaired, cancelled or its output read.
        let q = RunsQuery {
            page: Page::new(None, None, 20, 100, "limit").unwrap(),
            job_id: Some(id),
            active_only: false,
            completed_only: false,
            expand_tasks: false,
            start_time_from: None,
            start_time_to: None,
            offset: 0,
        };
        let (listed, _) = list_runs(&st, &now, &q, "http://h").unwrap();
        let listed: Vec<i64> = listed.iter().filter_map(|r| r["run_id"].as_i64()).collect();
        assert_eq!(listed, [later]);
        let gone = format!("Run: {old} in job: {id} doesn't exist");
        let e = repair_run(&mut st, &now, all_failed(old, None)).unwrap_err();
        assert_eq!(e.message, gone);
        assert_eq!(cancel_run(&mut st, &now, old).unwrap_err().message, gone);
        assert_eq!(
            get_output(&st, &now, old, "http://h").unwrap_err().message,
            gone
        );
        // A new run still takes the next number of the job.
        advance(&mut st, &now);
        let next = go(&mut st, end + RUN_RETENTION_MS + 2);
        assert_eq!(st.jobs.runs[&next].number_in_job, 3);
    }

    #[test]
    fn run_as_in_another_case_is_the_user_scim_holds() {
        let mut st = State::new("Ann@X.com", 0);
        let settings = |who: &str| {
            json!({"name": "j", "run_as": {"user_name": who}})
                .as_object()
                .unwrap()
                .clone()
        };
        let on = Ctx::for_test(1, 100);
        let id = create_job(&mut st, &on, settings("ann@x.com")).unwrap();
        assert_eq!(
            get_job(&st, &on, id, 0).unwrap()["run_as_user_name"],
            json!("Ann@X.com")
        );
        let off = Ctx {
            behaviours: Behaviours::default().without(Behaviour::PrincipalsAsScimHolds),
            ..Ctx::for_test(1, 100)
        };
        reset_job(&mut st, &off, id, settings("ANN@x.com")).unwrap();
        assert_eq!(
            get_job(&st, &off, id, 0).unwrap()["settings"]["run_as"],
            json!({"user_name": "ANN@x.com"})
        );
        reset_job(&mut st, &on, id, settings("ANN@x.com")).unwrap();
        assert_eq!(
            get_job(&st, &on, id, 0).unwrap()["settings"]["run_as"],
            json!({"user_name": "Ann@X.com"})
        );
    }

    #[test]
    fn a_run_as_naming_nobody_the_workspace_has_is_refused_and_nothing_is_stored() {
        use crate::scim::{Principal, PrincipalKind};
        let mut st = State::new("me@x.com", 0);
        let on = Ctx::for_test(1, 100);
        assert!(
            on.behaviours.on(Behaviour::RefuseUnknownRunAs),
            "on by default"
        );
        let run_as =
            |field: &str, who: &str| settings(json!({"name": "j", "run_as": {field: who}}));
        let refused = |e: ApiError, word: &str, who: &str| {
            assert_eq!(
                (e.status.as_u16(), e.code.as_str(), e.message),
                (
                    404,
                    "RESOURCE_DOES_NOT_EXIST",
                    format!("Principal: {word}({who}) does not exist")
                )
            );
        };

        // jobs/create: refused, no job and no id spent.
        let next = st.next_id;
        let e = create_job(&mut st, &on, run_as("user_name", "ann@x.com")).unwrap_err();
        refused(e, "UserName", "ann@x.com");
        let e = create_job(&mut st, &on, run_as("service_principal_name", "ab-12")).unwrap_err();
        refused(e, "ServicePrincipalName", "ab-12");
        assert!(st.jobs.jobs.is_empty());
        assert_eq!(st.next_id, next);

        // Once SCIM holds them, in any case, they are taken.
        for (id, kind, name) in [
            ("7001", PrincipalKind::User, "Ann@X.com"),
            ("7002", PrincipalKind::ServicePrincipal, "AB-12"),
        ] {
            st.scim.principals.insert(
                id.into(),
                Principal {
                    kind,
                    name: name.into(),
                    display_name: name.into(),
                    workspace_local: false,
                },
            );
        }
        let id = create_job(&mut st, &on, run_as("user_name", "ann@x.com")).unwrap();
        reset_job(&mut st, &on, id, run_as("service_principal_name", "ab-12")).unwrap();
        let held = |st: &State| st.jobs.jobs[&id].settings["run_as"].clone();
        assert_eq!(held(&st), json!({"service_principal_name": "AB-12"}));
        // A user name is not a service principal's application id, nor the other way round.
        let e = reset_job(
            &mut st,
            &on,
            id,
            run_as("service_principal_name", "ann@x.com"),
        )
        .unwrap_err();
        refused(e, "ServicePrincipalName", "ann@x.com");

        // jobs/reset and jobs/update naming nobody: refused, the job keeps its run_as.
        let e = reset_job(&mut st, &on, id, run_as("user_name", "bob@x.com")).unwrap_err();
        refused(e, "UserName", "bob@x.com");
        let new = json!({"run_as": {"user_name": "bob@x.com"}, "name": "renamed"});
        let e = update_job(&mut st, &on, id, new.as_object().unwrap(), &[]).unwrap_err();
        refused(e, "UserName", "bob@x.com");
        assert_eq!(held(&st), json!({"service_principal_name": "AB-12"}));
        assert_eq!(st.jobs.jobs[&id].settings["name"], json!("j"));
        // A reset that leaves run_as out keeps the job's, unchecked.
        reset_job(&mut st, &on, id, settings(json!({"name": "j"}))).unwrap();
        assert_eq!(held(&st), json!({"service_principal_name": "AB-12"}));
        // A missing job is still the first thing a reset says.
        let e = reset_job(&mut st, &on, 999, run_as("user_name", "bob@x.com")).unwrap_err();
        assert_eq!(e.message, "Job 999 does not exist.");

        // Off: any name is taken.
        let off = Ctx {
            behaviours: Behaviours::default().without(Behaviour::RefuseUnknownRunAs),
            ..Ctx::for_test(1, 100)
        };
        let other = create_job(&mut st, &off, run_as("user_name", "bob@x.com")).unwrap();
        assert_eq!(
            get_job(&st, &off, other, 0).unwrap()["run_as_user_name"],
            json!("bob@x.com")
        );
        update_job(&mut st, &off, id, new.as_object().unwrap(), &[]).unwrap();
        assert_eq!(held(&st), json!({"user_name": "bob@x.com"}));
    }
}
