//! The run engine: runs advance lazily, before any request reads or writes the workspace,
//! moving every active run forward to "now" with the durations it was started with. Tasks
//! start in dependency order (`run_if`), their dynamic value references resolved, do what
//! their task type's simulator decides, and end; the run ends when its tasks have. A For
//! each task runs its nested task once per input, a Run Job task waits for the run it
//! started.

use super::refs::{self, Scope};
use super::tasks::Started;
use super::{ForEachRun, Run, RunTask, tasks};
use crate::behaviours::Behaviour;
use crate::store::{Ctx, State};
use serde_json::{Map, Value};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet};

/// What the service reports, on the task and (wrapped) on the run, for a task whose code
/// failed; the exception is in `runs/get-output`.
pub const WORKLOAD_FAILED: &str = "Workload failed, see run output for details";

/// How long the service keeps a run after it ended: "Runs are automatically removed after
/// 60 days" (the runs/get-output reference; databricks-sdk-py docs/workspace/jobs/jobs.rst).
pub const RUN_RETENTION_MS: i64 = 60 * 24 * 60 * 60 * 1000;

/// What time does to the jobs domain (its clock hook): active runs move forward to
/// `ctx.now`, then runs that ended more than [`RUN_RETENTION_MS`] ago are removed. Returns
/// whether anything changed.
pub fn tick(st: &mut State, ctx: &Ctx) -> bool {
    let moved = advance(st, ctx);
    purge_old_runs(st, ctx) | moved
}

/// Removes the runs that ended more than [`RUN_RETENTION_MS`] before `ctx.now` (behaviour
/// `purge_old_runs`), remembering the job of each: `runs/get` then answers
/// `Run: N in job: M doesn't exist`. A run that is going (or being repaired) is kept.
pub fn purge_old_runs(st: &mut State, ctx: &Ctx) -> bool {
    if !ctx.behaviours.on(Behaviour::PurgeOldRuns) {
        return false;
    }
    let old: Vec<(i64, i64)> = st
        .jobs
        .runs
        .values()
        .filter(|r| {
            r.end_time
                .is_some_and(|end| ctx.now.saturating_sub(end) > RUN_RETENTION_MS)
        })
        .map(|r| (r.run_id, r.job_id))
        .collect();
    for (run, job) in &old {
        st.jobs.runs.remove(run);
        st.jobs.active_runs.remove(run);
        st.jobs.purged_runs.insert(*run, *job);
    }
    !old.is_empty()
}

/// The most tasks, iterations and runs one move of the clock starts. Not a limit of the
/// service: the local workspace's guard, so that no request works without end, whatever
/// the jobs (a For each task of thousands of inputs whose iterations run jobs that loop
/// over thousands more). What is not started waits for the next request, and starts at
/// the time it was due then (a task's start is computed from its dependencies' ends, an
/// iteration's from its slot), so only how soon a read shows it changes.
pub const STARTS_PER_MOVE: u32 = 100_000;

thread_local! {
    /// Starts left in the current move of the clock (see [`STARTS_PER_MOVE`]).
    static STARTS_LEFT: std::cell::Cell<u32> = const { std::cell::Cell::new(STARTS_PER_MOVE) };
}

/// Takes one start from the current move's allowance; `false` when none is left.
fn take_start() -> bool {
    STARTS_LEFT.with(|left| {
        let n = left.get();
        left.set(n.saturating_sub(1));
        n > 0
    })
}

/// Moves every active run forward to `ctx.now`. Returns whether anything changed.
pub fn advance(st: &mut State, ctx: &Ctx) -> bool {
    STARTS_LEFT.with(|left| left.set(STARTS_PER_MOVE));
    if st.jobs.active_runs.is_empty() {
        return false;
    }
    let ids: Vec<i64> = st.jobs.active_runs.iter().copied().collect();
    let mut changed = false;
    for id in ids {
        changed |= advance_run(st, id, ctx);
    }
    changed
}

pub fn advance_run(st: &mut State, id: i64, ctx: &Ctx) -> bool {
    let Some(mut run) = st.jobs.runs.remove(&id) else {
        st.jobs.active_runs.remove(&id);
        return true;
    };
    let before = fingerprint(&run);
    // Tasks that moved inside (iterations, the runs Run Job tasks wait for) change what
    // the fingerprint does not see.
    let stepped = step_run(st, &mut run, ctx);
    if run.end_time.is_some() {
        st.jobs.active_runs.remove(&id);
    }
    let changed = stepped || fingerprint(&run) != before;
    st.jobs.runs.insert(id, run);
    changed
}

/// Everything `step_run` can change, cheaply comparable: whether a run moved.
pub type Fingerprint = (String, Option<i64>, Option<i64>, Vec<(u8, bool)>);

pub fn fingerprint(run: &Run) -> Fingerprint {
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

/// What a run's tasks read of it while it moves: fixed for one step.
pub struct RunFacts {
    pub job_id: i64,
    pub job_name: String,
    pub run_id: i64,
    pub start_time: i64,
    pub repair_count: usize,
    pub workspace_id: i64,
    pub params: BTreeMap<String, String>,
    pub full_refresh: bool,
    pub task_ms: i64,
    pub lineage: Vec<i64>,
    /// Task values given for this run, by task key.
    pub task_values: BTreeMap<String, Map<String, Value>>,
}

impl RunFacts {
    pub fn of(run: &Run, workspace_id: i64) -> RunFacts {
        RunFacts {
            job_id: run.job_id,
            job_name: run.run_name.clone(),
            run_id: run.run_id,
            start_time: run.start_time,
            repair_count: run.repair_history.iter().filter(|i| i.id.is_some()).count(),
            workspace_id,
            params: run.params.clone(),
            full_refresh: run.full_refresh,
            task_ms: run.task_ms,
            lineage: run.lineage.clone(),
            task_values: run.task_values.clone(),
        }
    }

    /// What references in the parameters of `task` (key, task run id) resolve against.
    pub fn scope<'a>(
        &'a self,
        tasks: &'a [RunTask],
        task: (&'a str, i64),
        input: Option<&'a Value>,
    ) -> Scope<'a> {
        Scope {
            job_id: self.job_id,
            job_name: &self.job_name,
            run_id: self.run_id,
            start_time: self.start_time,
            repair_count: self.repair_count,
            workspace_id: self.workspace_id,
            params: Some(&self.params),
            tasks,
            task: Some(task),
            input,
        }
    }
}

/// Moves a run to `ctx.now`. Returns whether any of its tasks moved (started, ended, or
/// moved inside: iterations, the runs Run Job tasks wait for).
pub fn step_run(st: &mut State, run: &mut Run, ctx: &Ctx) -> bool {
    let now = ctx.now;
    if run.tasks_from.is_none() {
        let max = st
            .jobs
            .jobs
            .get(&run.job_id)
            .and_then(|j| j.settings.get("max_concurrent_runs"))
            .and_then(Value::as_i64)
            .unwrap_or(1);
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
        if running >= max {
            return false;
        }
        run.tasks_from = Some(now.saturating_add(run.setup_ms));
        run.life_cycle_state = "PENDING".into();
        run.state_message.clear();
    }
    let Some(t0) = run.tasks_from else {
        return false;
    };
    if now < t0 {
        return false;
    }
    run.life_cycle_state = "RUNNING".into();
    let facts = RunFacts::of(run, st.workspace_id);
    let mut stepped = false;
    loop {
        let mut progress = false;
        for i in 0..run.tasks.len() {
            match run.tasks[i].state.as_str() {
                "PENDING" => progress |= try_start(st, &facts, run, i, t0, ctx),
                "RUNNING" => progress |= try_finish(st, &facts, &mut run.tasks, i, ctx),
                _ => {}
            }
        }
        if !progress {
            break;
        }
        stepped = true;
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
        let latest = latest(&run.tasks);
        let result = run_result(&latest);
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
            _ => latest
                .iter()
                .find(|t| t.result.as_deref() == Some("FAILED"))
                // One period at the end, whether the task's message has its own or not.
                .map(|t| {
                    format!(
                        "Task {} failed with message: {}.",
                        t.task_key,
                        t.message.trim_end_matches('.')
                    )
                })
                .unwrap_or_default(),
        };
        run.result_state = Some(result.into());
        close_repair(run);
    }
    stepped
}

/// The latest attempt of each task, in run order: after a repair the earlier attempts stay
/// listed, but a task's dependents and the run's result go by its latest one.
pub fn latest(tasks: &[RunTask]) -> Vec<&RunTask> {
    let mut seen = HashSet::new();
    let mut out: Vec<&RunTask> = tasks
        .iter()
        .rev()
        .filter(|t| seen.insert(t.task_key.as_str()))
        .collect();
    out.reverse();
    out
}

/// A run that ended ends the repair it was running, if any: its history entry takes the
/// run's end and result.
pub fn close_repair(run: &mut Run) {
    let (end, life, result, message) = (
        run.end_time,
        run.life_cycle_state.clone(),
        run.result_state.clone(),
        run.state_message.clone(),
    );
    if let Some(item) = run.repair_history.last_mut()
        && item.end_time.is_none()
    {
        item.end_time = end;
        item.life_cycle_state = life;
        item.result_state = result;
        item.state_message = message;
    }
}

pub fn is_failed(r: &str) -> bool {
    matches!(
        r,
        "FAILED" | "UPSTREAM_FAILED" | "TIMEDOUT" | "INTERNAL_ERROR"
    )
}

pub fn is_canceled(r: &str) -> bool {
    matches!(r, "CANCELED" | "UPSTREAM_CANCELED")
}

/// `None`: run the task; `Some(result)`: skip it with that result.
pub fn run_if_decision(run_if: &str, deps: &[(String, bool)]) -> Option<&'static str> {
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

pub fn try_start(
    st: &mut State,
    facts: &RunFacts,
    run: &mut Run,
    i: usize,
    t0: i64,
    ctx: &Ctx,
) -> bool {
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
        // The latest attempt: a repaired dependency is waited for, not its failed run.
        let Some(dep) = run.tasks.iter().rfind(|t| &t.task_key == key) else {
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
    if ready > ctx.now || !take_start() {
        return false;
    }
    let run_if = run.tasks[i]
        .spec
        .get("run_if")
        .and_then(Value::as_str)
        .unwrap_or("ALL_SUCCESS")
        .to_string();
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
    let (key, id) = (t.task_key.clone(), t.run_id);
    let task = Starting {
        spec: &run.tasks[i].spec,
        key: &key,
        run_id: id,
        input: None,
    };
    let begun = begin(st, facts, &run.tasks, &task, &at);
    apply(&mut run.tasks[i], begun, ready, facts.task_ms, ctx);
    try_finish(st, facts, &mut run.tasks, i, ctx);
    true
}

/// A task (or an iteration) about to start: its spec as the job holds it, its key, its
/// task run id and, for an iteration, its input.
struct Starting<'a> {
    spec: &'a Map<String, Value>,
    key: &'a str,
    run_id: i64,
    input: Option<&'a Value>,
}

/// What a task's start decided: its work, its parameters as resolved (the
/// `resolved_values` view) and the task values its code sets.
struct Begun {
    started: Started,
    resolved: Option<Value>,
    values: Map<String, Value>,
}

/// Starts a task's work at `at.now`: the dynamic value references of its parameters
/// resolved (one that cannot be fails the task at once, as the service refuses it), then
/// its task type's simulator on them.
fn begin(st: &mut State, facts: &RunFacts, tasks: &[RunTask], task: &Starting, at: &Ctx) -> Begun {
    let sc = facts.scope(tasks, (task.key, task.run_id), task.input);
    let mut budget = refs::MAX_RESOLVED_BYTES;
    let mut resolved = task.spec.clone();
    // A task's parameters are in its task type's object (a For each task's nested task is
    // resolved per iteration, with its input); the path of a JAR library may use them too.
    let kind = tasks::of(task.spec).map(|(k, _)| k.name);
    for field in kind.into_iter().chain(["libraries"]) {
        let Some(v) = task.spec.get(field) else {
            continue;
        };
        let r = match v {
            Value::Object(m) => {
                let skip = (field == "for_each_task").then_some("task");
                refs::resolve_map(m, &sc, &mut budget, skip).map(Value::Object)
            }
            other => refs::resolve_value(other, &sc, &mut budget),
        };
        match r {
            Ok(r) => {
                resolved.insert(field.to_string(), r);
            }
            Err(e) => {
                return Begun {
                    started: Started::Refused(e.to_string()),
                    resolved: None,
                    values: Map::new(),
                };
            }
        }
    }
    let env = tasks::TaskEnv {
        ctx: at,
        run_id: facts.run_id,
        job_id: facts.job_id,
        task_run_id: task.run_id,
        full_refresh: facts.full_refresh,
        task: &resolved,
        raw: task.spec,
        lineage: &facts.lineage,
    };
    let started = tasks::start(st, &resolved, &env);
    // Iterations set no values others can read: there is one per input.
    let values = if task.input.is_none() {
        preset_values(st, facts, task.key)
    } else {
        Map::new()
    };
    Begun {
        started,
        resolved: tasks::resolved_values(&resolved),
        values,
    }
}

/// The task values the task `key` sets: those given for the job, and over them those
/// given for this run (`POST /__emulator/task-values`).
fn preset_values(st: &State, facts: &RunFacts, key: &str) -> Map<String, Value> {
    let mut out = st
        .jobs
        .jobs
        .get(&facts.job_id)
        .and_then(|j| j.task_values.get(key))
        .cloned()
        .unwrap_or_default();
    if let Some(run) = facts.task_values.get(key) {
        out.extend(run.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    out
}

/// Records on the task what its start decided.
fn apply(t: &mut RunTask, begun: Begun, ready: i64, task_ms: i64, ctx: &Ctx) {
    t.resolved = begun.resolved;
    t.values = begun.values;
    match begun.started {
        Started::AwaitsUpdate(pid, uid) => t.pipeline_update = Some((pid, uid)),
        Started::AwaitsRun(id) => t.child_run = Some(id),
        Started::ForEach {
            inputs,
            concurrency,
        } => {
            t.for_each = Some(ForEachRun {
                inputs,
                concurrency,
                iterations: Vec::new(),
            });
        }
        Started::Refused(message) => {
            t.planned = Some(("FAILED".into(), message));
            t.end_time = ready;
        }
        Started::Ran {
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
}

/// Ends the running task `i` of `tasks` if its work is done by `ctx.now`; a For each task
/// first starts the iterations that may start. Returns whether anything moved.
pub fn try_finish(
    st: &mut State,
    facts: &RunFacts,
    tasks: &mut [RunTask],
    i: usize,
    ctx: &Ctx,
) -> bool {
    if let Some(mut fe) = tasks[i].for_each.take() {
        let (progress, done) = step_for_each(st, facts, tasks, i, &mut fe, ctx);
        tasks[i].for_each = Some(fe);
        if let Some((result, message, end)) = done {
            finish(&mut tasks[i], result, &message, end);
            return true;
        }
        return progress;
    }
    finish_one(st, &mut tasks[i], ctx)
}

/// How a For each task ends: its result, message and end.
type ForEachEnd = (&'static str, String, i64);

/// Moves the iterations of the For each task `tasks[i]` to `ctx.now`: those running end
/// when their work is done, and the next inputs start as slots free up, at most
/// `concurrency` at a time, each at the moment a slot freed. Returns whether anything
/// moved, and the task's end once every iteration has ended.
///
/// Iteration `k` starts at the `k`-th smallest of: `concurrency` times the task's start,
/// and the end of every iteration that ended. The ends known are all those up to
/// `ctx.now` (an iteration still running ends later), and no iteration starts after
/// `ctx.now`, so the iterations started so far took the smallest of them, in order.
fn step_for_each(
    st: &mut State,
    facts: &RunFacts,
    tasks: &[RunTask],
    i: usize,
    fe: &mut ForEachRun,
    ctx: &Ctx,
) -> (bool, Option<ForEachEnd>) {
    let owner = &tasks[i];
    let empty = Map::new();
    let nested = owner
        .spec
        .get("for_each_task")
        .and_then(|f| f.get("task"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let nested_key = nested
        .get("task_key")
        .and_then(Value::as_str)
        .unwrap_or(&owner.task_key)
        .to_string();
    let mut progress = false;
    for it in fe.iterations.iter_mut().filter(|it| it.state == "RUNNING") {
        progress |= finish_one(st, it, ctx);
    }
    // Checked when the task started; a workspace file could say anything.
    let concurrency = fe.concurrency.clamp(
        1,
        usize::try_from(tasks::FOR_EACH_MAX_CONCURRENCY).unwrap_or(1),
    );
    let mut free: Vec<i64> = vec![owner.start_time; concurrency];
    free.extend(
        fe.iterations
            .iter()
            .filter(|it| it.state == "TERMINATED")
            .map(|it| it.end_time),
    );
    free.sort_unstable();
    let mut slots: BinaryHeap<Reverse<i64>> = free
        .into_iter()
        .skip(fe.iterations.len())
        .map(Reverse)
        .collect();
    while fe.iterations.len() < fe.inputs.len() {
        let Some(Reverse(at)) = slots.pop() else {
            break;
        };
        if at > ctx.now || !take_start() {
            break;
        }
        let input = fe.inputs[fe.iterations.len()].clone();
        let mut it = RunTask::pending(st.next_id(), nested_key.clone(), 0, Map::new());
        it.start_time = at;
        it.state = "RUNNING".into();
        let at_ctx = Ctx {
            now: at,
            user: ctx.user,
            timings: ctx.timings,
            behaviours: ctx.behaviours,
        };
        let task = Starting {
            spec: nested,
            key: &nested_key,
            run_id: it.run_id,
            input: Some(&input),
        };
        let mut begun = begin(st, facts, tasks, &task, &at_ctx);
        if matches!(begun.started, Started::ForEach { .. }) {
            // Refused when the job is saved; a job stored before that rule still ends.
            begun.started = Started::Refused(
                "The nested task of a For each task cannot be another For each task.".into(),
            );
        }
        it.input = Some(input);
        apply(&mut it, begun, at, facts.task_ms, ctx);
        finish_one(st, &mut it, ctx);
        if it.state == "TERMINATED" {
            slots.push(Reverse(it.end_time));
        }
        fe.iterations.push(it);
        progress = true;
    }
    if fe.iterations.len() < fe.inputs.len()
        || fe.iterations.iter().any(|it| it.state != "TERMINATED")
    {
        return (progress, None);
    }
    let end = fe
        .iterations
        .iter()
        .map(|it| it.end_time)
        .max()
        .unwrap_or(owner.start_time)
        .max(owner.start_time);
    let failed: Vec<&RunTask> = fe
        .iterations
        .iter()
        .filter(|it| it.result.as_deref().is_some_and(is_failed))
        .collect();
    let outcome = if let Some(first) = failed.first() {
        let why = first.error.as_deref().unwrap_or(&first.message);
        let input = first.input.as_ref().map(refs::text).unwrap_or_default();
        (
            "FAILED",
            format!(
                "{} of {} iterations failed; the first, for input {input}: {why}",
                failed.len(),
                fe.inputs.len()
            ),
            end,
        )
    } else if fe
        .iterations
        .iter()
        .any(|it| it.result.as_deref().is_some_and(is_canceled))
    {
        ("CANCELED", "An iteration was canceled.".to_string(), end)
    } else {
        ("SUCCESS", String::new(), end)
    };
    (true, Some(outcome))
}

/// Ends a running task (not a For each task) whose work is done by `ctx.now`: a pipeline
/// update that ended, a run started by a Run Job task that ended, or the run's task
/// duration passed. Returns whether anything moved.
fn finish_one(st: &mut State, t: &mut RunTask, ctx: &Ctx) -> bool {
    let now = ctx.now;
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
    if let Some(child) = t.child_run {
        // The run it waits for is brought to now first: it may have ended since.
        let moved = st.jobs.active_runs.contains(&child) && advance_run(st, child, ctx);
        let Some(r) = st.jobs.runs.get(&child) else {
            finish(
                t,
                "FAILED",
                &format!("The run {child} it started is gone."),
                now,
            );
            return true;
        };
        let Some(end) = r.end_time else {
            return moved;
        };
        let ended = r.result_state.as_deref().unwrap_or("FAILED");
        let (result, message) = match ended {
            // A run whose leaf tasks succeeded counts as a success.
            "SUCCESS" | "SUCCESS_WITH_FAILURES" => ("SUCCESS", String::new()),
            "CANCELED" => (
                "CANCELED",
                format!("The run {child} of job {} was canceled.", r.job_id),
            ),
            other if r.state_message.is_empty() => (
                "FAILED",
                format!("The run {child} of job {} ended {other}.", r.job_id),
            ),
            other => (
                "FAILED",
                format!(
                    "The run {child} of job {} ended {other}: {}",
                    r.job_id, r.state_message
                ),
            ),
        };
        finish(t, result, &message, end.min(now).max(t.start_time));
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

pub fn run_result(tasks: &[&RunTask]) -> &'static str {
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

pub fn cancel(st: &mut State, id: i64, now: i64) {
    let Some(mut run) = st.jobs.runs.remove(&id) else {
        return;
    };
    if run.end_time.is_none() {
        for t in &mut run.tasks {
            match t.state.as_str() {
                "RUNNING" => {
                    stop_work(st, t, now);
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
        close_repair(&mut run);
        st.jobs.active_runs.remove(&id);
    }
    st.jobs.runs.insert(id, run);
}

/// Stops the work of a running task that is cancelled: its pipeline update, the run a
/// Run Job task started, a For each task's running iterations (inputs not started yet
/// are not started).
fn stop_work(st: &mut State, t: &mut RunTask, now: i64) {
    if let Some((pid, uid)) = &t.pipeline_update {
        crate::pipelines::cancel_update(st, pid, uid, now);
    }
    if let Some(child) = t.child_run {
        cancel(st, child, now);
    }
    if let Some(fe) = &mut t.for_each {
        for it in fe.iterations.iter_mut().filter(|it| it.state == "RUNNING") {
            stop_work(st, it, now);
            finish(it, "CANCELED", "The run was canceled.", now);
        }
    }
}

pub fn finish(t: &mut RunTask, result: &str, message: &str, at: i64) {
    t.state = "TERMINATED".into();
    t.result = Some(result.to_string());
    t.message = message.to_string();
    t.end_time = at;
}

#[cfg(test)]
mod tests {
    use super::super::model::{
        RunNow, RunsQuery, TaskValues, cancel_run, create_job, get_output, get_run, list_runs,
        reset_job, run_now, set_task_values,
    };
    use super::super::settings::{check_settings, normalize};
    use super::*;
    use crate::behaviours::Behaviours;
    use crate::pages::Page;
    use serde_json::json;

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

    // ---------- For each, Run Job, references and task values ----------

    /// Every step (setup, task) takes 100 ms.
    fn ctx(now: i64) -> Ctx<'static> {
        Ctx::for_test(now, 100)
    }

    fn job(st: &mut State, v: Value) -> i64 {
        let Value::Object(m) = v else {
            panic!("not an object")
        };
        check_settings(&m).unwrap_or_else(|e| panic!("{}", e.message));
        create_job(st, &ctx(0), normalize(m, Behaviours::default())).unwrap()
    }

    fn start(st: &mut State, job_id: i64, now: i64) -> i64 {
        run_now(
            st,
            &ctx(now),
            RunNow {
                job_id,
                ..RunNow::default()
            },
        )
        .unwrap()
        .run_id
    }

    fn task<'a>(st: &'a State, run: i64, key: &str) -> &'a RunTask {
        st.jobs.runs[&run]
            .tasks
            .iter()
            .rfind(|t| t.task_key == key)
            .unwrap_or_else(|| panic!("no task {key}"))
    }

    fn result(st: &State, run: i64, key: &str) -> (String, String) {
        let t = task(st, run, key);
        (t.result.clone().unwrap_or_default(), t.message.clone())
    }

    fn view(st: &State, id: i64, page: usize) -> Value {
        get_run(st, &ctx(1_000_000), id, page, "http://h", false, true)
            .unwrap_or_else(|e| panic!("{}", e.message))
    }

    /// A nested condition task that compares its input with "c": it runs without any
    /// object in the workspace, and shows its resolved operands.
    fn each(inputs: &str, concurrency: Option<i64>) -> Value {
        let mut fe = json!({"inputs": inputs, "task": {"task_key": "inner",
            "condition_task": {"op": "EQUAL_TO", "left": "{{input}}", "right": "c"}}});
        if let Some(c) = concurrency {
            fe["concurrency"] = json!(c);
        }
        json!({"name": "loop", "tasks": [{"task_key": "each", "for_each_task": fe}]})
    }

    #[test]
    fn a_for_each_task_runs_its_nested_task_once_per_input_at_most_concurrency_at_a_time() {
        let mut st = State::new("u@x", 0);
        let j = job(&mut st, each(r#"["a","b","c","d","e"]"#, Some(2)));
        let run = start(&mut st, j, 0);
        // Setup ends at 100; two iterations start then, the next two at 200, the last at 300.
        advance(&mut st, &ctx(150));
        let fe = task(&st, run, "each").for_each.clone().unwrap();
        assert_eq!(fe.iterations.len(), 2);
        assert!(fe.iterations.iter().all(|it| it.state == "RUNNING"));
        let stats = view(&st, run, 0)["tasks"][0]["for_each_task"]["stats"].clone();
        assert_eq!(
            stats["task_run_stats"],
            json!({"total_iterations": 5, "scheduled_iterations": 2, "active_iterations": 2,
                "completed_iterations": 0, "succeeded_iterations": 0, "failed_iterations": 0})
        );
        advance(&mut st, &ctx(10_000));
        let t = task(&st, run, "each");
        let fe = t.for_each.clone().unwrap();
        let starts: Vec<i64> = fe.iterations.iter().map(|it| it.start_time).collect();
        assert_eq!(starts, [100, 100, 200, 200, 300]);
        assert_eq!((t.start_time, t.end_time), (100, 400));
        assert_eq!(result(&st, run, "each").0, "SUCCESS");
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("SUCCESS"));
        // Each iteration compared its own input.
        let outcomes: Vec<Option<String>> =
            fe.iterations.iter().map(|it| it.outcome.clone()).collect();
        let f = || Some("false".to_string());
        assert_eq!(outcomes, [f(), f(), Some("true".into()), f(), f()]);

        // runs/get of the job run: the For each task with its stats, no iteration.
        let v = view(&st, run, 0);
        let tasks = v["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 1);
        assert_eq!(
            tasks[0]["for_each_task"]["stats"]["task_run_stats"]["succeeded_iterations"],
            5
        );
        assert!(v.get("iterations").is_none());
        // runs/get of the For each task's run: that task alone, and its iterations.
        let v = view(&st, t.run_id, 0);
        assert_eq!(v["run_id"], json!(t.run_id));
        assert_eq!(v["job_run_id"], json!(run));
        assert_eq!(v["job_id"], json!(j));
        assert_eq!(v["tasks"].as_array().unwrap().len(), 1);
        assert_eq!(v["tasks"][0]["task_key"], "each");
        let its = v["iterations"].as_array().unwrap();
        assert_eq!(its.len(), 5);
        assert!(its.iter().all(|i| i["task_key"] == "inner"));
        assert_eq!(
            its[2]["resolved_values"],
            json!({"condition_task": {"left": "c", "right": "c"}})
        );
        assert_eq!(its[2]["condition_task"]["outcome"], "true");
        assert_eq!(its[2]["condition_task"]["left"], "{{input}}");
        assert!(v.get("next_page_token").is_none());
        // And of an iteration's run: that iteration.
        let it = its[4]["run_id"].as_i64().unwrap();
        let v = view(&st, it, 0);
        assert_eq!(v["tasks"][0]["task_key"], "inner");
        assert_eq!(v["state"]["result_state"], "SUCCESS");
    }

    #[test]
    fn iterations_come_in_pages_of_a_hundred() {
        let mut st = State::new("u@x", 0);
        let inputs = serde_json::to_string(&(0..150).collect::<Vec<i64>>()).unwrap();
        let j = job(&mut st, each(&inputs, Some(100)));
        let run = start(&mut st, j, 0);
        advance(&mut st, &ctx(10_000));
        let id = task(&st, run, "each").run_id;
        let first = view(&st, id, 0);
        assert_eq!(first["iterations"].as_array().unwrap().len(), 100);
        assert!(first["next_page_token"].is_string(), "{first}");
        let second = view(&st, id, 1);
        assert_eq!(second["iterations"].as_array().unwrap().len(), 50);
        assert!(second.get("next_page_token").is_none());
        // Concurrency 100: the first hundred at 100, the rest when the first ended.
        assert_eq!(task(&st, run, "each").end_time, 300);
    }

    #[test]
    fn a_failed_iteration_fails_the_for_each_task_after_the_others_ran() {
        let mut st = State::new("u@x", 0);
        let j = job(
            &mut st,
            json!({"name": "loop", "tasks": [{"task_key": "each", "for_each_task": {
                "inputs": r#"["a.py", "/Volumes/c/s/v/missing.py", "b.py"]"#, "concurrency": 3,
                "task": {"task_key": "inner", "spark_python_task": {"python_file": "{{input}}"}}}}]}),
        );
        let run = start(&mut st, j, 0);
        advance(&mut st, &ctx(10_000));
        assert_eq!(
            result(&st, run, "each"),
            (
                "FAILED".into(),
                "1 of 3 iterations failed; the first, for input /Volumes/c/s/v/missing.py: File not found: /Volumes/c/s/v/missing.py".into()
            )
        );
        let t = task(&st, run, "each");
        let stats = &view(&st, run, 0)["tasks"][0]["for_each_task"]["stats"];
        assert_eq!(stats["task_run_stats"]["succeeded_iterations"], 2);
        assert_eq!(stats["task_run_stats"]["failed_iterations"], 1);
        assert_eq!(
            stats["error_message_stats"],
            json!([{"error_message": "File not found: /Volumes/c/s/v/missing.py",
                "termination_category": "RUN_EXECUTION_ERROR", "count": 1}])
        );
        // The failed iteration's output holds its cause, as any task's.
        let failed = t.for_each.as_ref().unwrap().iterations[1].run_id;
        let out = get_output(&st, &ctx(10_000), failed, "http://h").unwrap();
        assert_eq!(out["error"], "File not found: /Volumes/c/s/v/missing.py");
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
    }

    #[test]
    fn for_each_inputs_are_held_to_the_services_limits() {
        let mut st = State::new("u@x", 0);
        let failed = |st: &mut State, inputs: &str| {
            let j = job(st, each(inputs, None));
            let run = start(st, j, 0);
            advance(st, &ctx(1_000_000));
            result(st, run, "each")
        };
        let (r, m) = failed(&mut st, r#"{"a": 1}"#);
        assert_eq!(r, "FAILED");
        assert!(m.contains("must be a JSON array"), "{m}");
        // 10,000 inputs written out are far over the 5,000 characters allowed.
        let many = serde_json::to_string(&vec![0; 10_000]).unwrap();
        let (r, m) = failed(&mut st, &many);
        assert_eq!(r, "FAILED");
        assert!(m.contains("20001 characters long; at most 5000"), "{m}");
        // Through a task value they may hold 48 KB: 10,000 inputs run, 100 at a time.
        let j = job(
            &mut st,
            json!({"name": "big", "tasks": [
                {"task_key": "list", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}},
                {"task_key": "each", "depends_on": [{"task_key": "list"}], "for_each_task": {
                    "inputs": "{{tasks.list.values.items}}", "concurrency": 100,
                    "task": {"task_key": "inner", "condition_task": {"op": "EQUAL_TO", "left": "{{input}}", "right": "0"}}}}]}),
        );
        let tv = |values: Value| TaskValues {
            job_id: Some(j),
            task_key: "list".into(),
            values: values.as_object().unwrap().clone(),
            ..TaskValues::default()
        };
        set_task_values(&mut st, tv(json!({"items": vec![0; 10_000]}))).unwrap();
        let run = start(&mut st, j, 0);
        let t0 = std::time::Instant::now();
        advance(&mut st, &ctx(1_000_000));
        assert!(t0.elapsed() < std::time::Duration::from_secs(20));
        let t = task(&st, run, "each");
        assert_eq!(result(&st, run, "each").0, "SUCCESS");
        assert_eq!(t.for_each.as_ref().unwrap().iterations.len(), 10_000);
        // list ends at 200; a hundred rounds of 100 ms follow.
        assert_eq!((t.start_time, t.end_time), (200, 10_200));
        // Past 48 KB, even through a task value, the task fails when it starts.
        let half = json!(vec![0; 15_000]);
        set_task_values(&mut st, tv(json!({"a": half, "b": half}))).unwrap();
        let mut settings = st.jobs.jobs[&j].settings.clone();
        settings["tasks"][1]["for_each_task"]["inputs"] =
            json!("[{{tasks.list.values.a}},{{tasks.list.values.b}}]");
        reset_job(&mut st, &ctx(0), j, settings).unwrap();
        let run = start(&mut st, j, 2_000_000);
        advance(&mut st, &ctx(3_000_000));
        let (r, m) = result(&st, run, "each");
        assert_eq!(r, "FAILED");
        assert!(m.contains("60005 bytes long"), "{m}");
        assert!(task(&st, run, "each").for_each.is_none());
    }

    #[test]
    fn a_for_each_task_nests_no_for_each_task_and_runs_at_most_a_hundred_at_once() {
        let settings = |fe: Value| {
            let v = json!({"name": "x", "tasks": [{"task_key": "each", "for_each_task": fe}]});
            check_settings(v.as_object().unwrap())
                .map_err(|e| e.message)
                .err()
                .unwrap_or_default()
        };
        let inner = json!({"task_key": "i", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}});
        assert!(
            settings(json!({"inputs": "[1]", "concurrency": 101, "task": inner}))
                .contains("must be between 1 and 100")
        );
        assert!(
            settings(json!({"inputs": "[1]", "concurrency": 0, "task": inner}))
                .contains("tasks[0].for_each_task.concurrency")
        );
        assert!(
            settings(json!({"inputs": "[1]", "task": {"task_key": "i",
                "for_each_task": {"inputs": "[1]", "task": inner}}}))
            .contains("cannot be another For each task")
        );
        assert_eq!(
            settings(json!({"inputs": "[1]", "concurrency": 100, "task": inner})),
            ""
        );
    }

    fn sql_job(st: &mut State, name: &str, warehouse: &str) -> i64 {
        st.warehouses.warehouses.insert(
            "w".into(),
            crate::warehouses::Warehouse {
                id: "w".into(),
                spec: Map::new(),
                creator_name: "u@x".into(),
                data_source_id: "d".into(),
                state: "RUNNING".into(),
                until: 0,
                idle_since: 0,
            },
        );
        job(
            st,
            json!({"name": name, "parameters": [{"name": "day", "default": "mon"}], "tasks": [
                {"task_key": "q", "sql_task": {"warehouse_id": warehouse, "query": {"query_id": "q"}}}]}),
        )
    }

    fn runs_of(st: &State, job: i64) -> Vec<Value> {
        let q = RunsQuery {
            page: Page::new(None, None, 20, 100, "limit").unwrap(),
            job_id: Some(job),
            active_only: false,
            completed_only: false,
            expand_tasks: false,
            start_time_from: None,
            start_time_to: None,
            offset: 0,
        };
        list_runs(st, &ctx(1_000_000), &q, "http://h").unwrap().0
    }

    fn run_job(child: i64) -> Value {
        json!({"task_key": "child", "run_job_task": {"job_id": child,
            "job_parameters": {"day": "from-{{job.id}}"}}})
    }

    #[test]
    fn a_run_job_task_starts_a_run_of_its_job_and_waits_for_it() {
        let mut st = State::new("u@x", 0);
        let child = sql_job(&mut st, "child", "w");
        let parent = job(
            &mut st,
            json!({"name": "parent", "parameters": [{"name": "day", "default": "tue"}],
                "tasks": [{"task_key": "child", "run_job_task": {"job_id": child,
                    "job_parameters": {"day": "{{job.parameters.day}}-{{job.id}}"}}}]}),
        );
        let run = start(&mut st, parent, 0);
        advance(&mut st, &ctx(150));
        // The child run started with the task, at 100, and shows in its job's runs.
        let listed = runs_of(&st, child);
        assert_eq!(listed.len(), 1);
        let child_run = listed[0]["run_id"].as_i64().unwrap();
        let t = task(&st, run, "child");
        assert_eq!(t.child_run, Some(child_run));
        assert_eq!(listed[0]["trigger"], "RUN_JOB_TASK");
        assert_eq!(listed[0]["trigger_info"], json!({"run_id": t.run_id}));
        assert_eq!(listed[0]["start_time"], 100);
        assert_eq!(t.state, "RUNNING");
        // It ran with the task's job parameters, resolved in the parent run.
        assert_eq!(
            st.jobs.runs[&child_run].params["day"],
            format!("tue-{parent}")
        );
        assert!(
            runs_of(&st, parent)
                .iter()
                .all(|r| r["trigger"] == "ONE_TIME")
        );
        // The child's setup and task take 200 ms: both end at 300.
        advance(&mut st, &ctx(1_000));
        assert_eq!(st.jobs.runs[&child_run].end_time, Some(300));
        let t = task(&st, run, "child");
        assert_eq!((t.result.as_deref(), t.end_time), (Some("SUCCESS"), 300));
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("SUCCESS"));
        let out = get_output(&st, &ctx(1_000), t.run_id, "http://h").unwrap();
        assert_eq!(out["run_job_output"], json!({"run_id": child_run}));
    }

    #[test]
    fn a_run_job_task_ends_as_its_run_ends_and_is_cancelled_with_its_run() {
        let mut st = State::new("u@x", 0);
        let child = sql_job(&mut st, "child", "missing");
        let parent = job(
            &mut st,
            json!({"name": "parent", "tasks": [run_job(child)]}),
        );
        let run = start(&mut st, parent, 0);
        advance(&mut st, &ctx(1_000));
        let (r, m) = result(&st, run, "child");
        assert_eq!(r, "FAILED");
        let child_run = task(&st, run, "child").child_run.unwrap();
        assert!(
            m.starts_with(&format!(
                "The run {child_run} of job {child} ended FAILED: Task q failed"
            )),
            "{m}"
        );
        // Cancelling the parent cancels the run it waits for.
        let ok = sql_job(&mut st, "child2", "w");
        let parent = job(&mut st, json!({"name": "parent2", "tasks": [run_job(ok)]}));
        let run = start(&mut st, parent, 2_000);
        advance(&mut st, &ctx(2_150));
        let child_run = task(&st, run, "child").child_run.unwrap();
        cancel_run(&mut st, &ctx(2_160), run).unwrap();
        assert_eq!(
            st.jobs.runs[&child_run].result_state.as_deref(),
            Some("CANCELED")
        );
        assert!(!st.jobs.active_runs.contains(&child_run));
        assert_eq!(result(&st, run, "child").0, "CANCELED");
    }

    #[test]
    fn run_job_tasks_in_a_circle_or_nested_deeper_than_three_end() {
        let mut st = State::new("u@x", 0);
        // Job A runs job B, which runs job A.
        let a = job(
            &mut st,
            json!({"name": "a", "tasks": [
            {"task_key": "x", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}}]}),
        );
        let b = job(&mut st, json!({"name": "b", "tasks": [run_job(a)]}));
        let settings = |child: i64| {
            let v = json!({"name": "a", "tasks": [run_job(child)]});
            normalize(v.as_object().unwrap().clone(), Behaviours::default())
        };
        reset_job(&mut st, &ctx(0), a, settings(b)).unwrap();
        let run = start(&mut st, a, 0);
        advance(&mut st, &ctx(100_000));
        assert_eq!(
            st.jobs.runs.len(),
            2,
            "A and the B it started, nothing more"
        );
        let b_run = task(&st, run, "child").child_run.unwrap();
        let (r, m) = result(&st, b_run, "child");
        assert_eq!(r, "FAILED");
        assert_eq!(
            m,
            format!(
                "Run Job tasks cannot trigger each other in a circle: job {a} is already running in this chain (job {a} -> job {b} -> job {a})."
            )
        );
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
        assert!(st.jobs.active_runs.is_empty());
        // A job that runs itself.
        let own = job(&mut st, json!({"name": "own", "tasks": [run_job(1)]}));
        reset_job(&mut st, &ctx(0), own, settings(own)).unwrap();
        let run = start(&mut st, own, 200_000);
        advance(&mut st, &ctx(300_000));
        assert!(result(&st, run, "child").1.contains("circle"));
        // e runs d runs c runs b2 runs a2: the fourth Run Job task is one too many.
        let leaf = sql_job(&mut st, "leaf", "w");
        let mut chain = vec![leaf];
        for name in ["c1", "c2", "c3", "c4"] {
            let below = *chain.last().unwrap();
            chain.push(job(
                &mut st,
                json!({"name": name, "tasks": [run_job(below)]}),
            ));
        }
        let before = st.jobs.runs.len();
        let top = *chain.last().unwrap();
        let run = start(&mut st, top, 400_000);
        advance(&mut st, &ctx(500_000));
        assert_eq!(
            st.jobs.runs.len(),
            before + 4,
            "c4, c3, c2 and c1 ran; leaf did not"
        );
        assert!(runs_of(&st, leaf).is_empty());
        let deepest = runs_of(&st, chain[1])[0]["run_id"].as_i64().unwrap();
        assert!(
            result(&st, deepest, "child")
                .1
                .contains("nest at most 3 deep")
        );
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
    }

    /// A For each task whose iterations run a job that loops 2,000 times: 200,000 starts,
    /// more than one move of the clock makes. Each request does its share; the times are
    /// those of a run made in one go.
    #[test]
    fn a_run_too_large_for_one_move_goes_on_at_the_next_with_its_times() {
        let mut st = State::new("u@x", 0);
        let inner = serde_json::to_string(&vec![0; 2_000]).unwrap();
        let child = job(
            &mut st,
            json!({"name": "child", "max_concurrent_runs": 100, "tasks": [{"task_key": "each",
                "for_each_task": {"inputs": inner, "concurrency": 100, "task": {"task_key": "one",
                    "condition_task": {"op": "EQUAL_TO", "left": "{{input}}", "right": "0"}}}}]}),
        );
        let outer = serde_json::to_string(&vec![0; 100]).unwrap();
        let parent = job(
            &mut st,
            json!({"name": "parent", "tasks": [{"task_key": "each", "for_each_task": {
                "inputs": outer, "concurrency": 100,
                "task": {"task_key": "child", "run_job_task": {"job_id": child}}}}]}),
        );
        let run = start(&mut st, parent, 0);
        let mut moves = 0;
        while st.jobs.runs[&run].end_time.is_none() {
            assert!(moves < 5, "the run does not end");
            advance(&mut st, &ctx(1_000_000));
            moves += 1;
        }
        assert!(moves >= 2, "{moves}");
        let count =
            |st: &State, job: i64| st.jobs.runs.values().filter(|r| r.job_id == job).count();
        assert_eq!(count(&st, child), 100);
        // Setup 100; each child run: setup 100, then 20 rounds of 100 iterations.
        assert_eq!(st.jobs.runs[&run].end_time, Some(2_200));
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("SUCCESS"));
    }

    /// "A workspace is limited to 1000 concurrent job runs": Run Job tasks past that fail.
    #[test]
    fn run_job_tasks_start_no_run_past_the_workspaces_thousand() {
        let mut st = State::new("u@x", 0);
        let child = job(
            &mut st,
            json!({"name": "child", "max_concurrent_runs": 1000, "tasks": [
                {"task_key": "x", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}}]}),
        );
        let inputs = serde_json::to_string(&vec![0; 100]).unwrap();
        let tasks: Vec<Value> = (0..11)
            .map(|i| {
                json!({"task_key": format!("each{i}"), "for_each_task": {
                    "inputs": inputs, "concurrency": 100,
                    "task": {"task_key": "child", "run_job_task": {"job_id": child}}}})
            })
            .collect();
        let parent = job(&mut st, json!({"name": "parent", "tasks": tasks}));
        let run = start(&mut st, parent, 0);
        advance(&mut st, &ctx(150));
        // The parent's run and 999 of the 1,100 runs its iterations asked for.
        assert_eq!(st.jobs.active_runs.len(), 1000);
        advance(&mut st, &ctx(10_000));
        assert_eq!(
            st.jobs.runs.values().filter(|r| r.job_id == child).count(),
            999
        );
        let failed = st.jobs.runs[&run]
            .tasks
            .iter()
            .flat_map(|t| t.for_each.iter().flat_map(|fe| fe.iterations.iter()))
            .filter(|it| it.message.contains("already has 1000 active job runs"))
            .count();
        assert_eq!(failed, 101);
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
    }

    /// A setter task, a condition on its task value, and a task run only when it holds.
    fn decide() -> Value {
        json!({"name": "decide", "parameters": [{"name": "date", "default": "{{job.start_time.iso_date}}"}], "tasks": [
            {"task_key": "setter", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}},
            {"task_key": "check", "depends_on": [{"task_key": "setter"}],
                "condition_task": {"op": "EQUAL_TO", "left": "{{tasks.setter.values.go}}", "right": "true"}},
            {"task_key": "then", "depends_on": [{"task_key": "check", "outcome": "true"}],
                "condition_task": {"op": "EQUAL_TO", "left": "{{tasks.setter.result_state}}/{{job.parameters.date}}", "right": "success/1970-01-01"}}]})
    }

    #[test]
    fn a_condition_task_reads_the_task_values_given_for_its_upstream_task() {
        let mut st = State::new("u@x", 0);
        let j = job(&mut st, decide());
        let given = |values: Value, job_id, run_id| TaskValues {
            job_id,
            run_id,
            task_key: "setter".into(),
            values: values.as_object().unwrap().clone(),
        };
        set_task_values(&mut st, given(json!({"go": true}), Some(j), None)).unwrap();
        let run = start(&mut st, j, 0);
        advance(&mut st, &ctx(10_000));
        assert_eq!(task(&st, run, "check").outcome.as_deref(), Some("true"));
        assert_eq!(task(&st, run, "then").outcome.as_deref(), Some("true"));
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("SUCCESS"));
        let v = view(&st, run, 0);
        assert_eq!(
            v["tasks"][1]["resolved_values"],
            json!({"condition_task": {"left": "true", "right": "true"}})
        );
        assert_eq!(v["job_parameters"][0]["value"], "1970-01-01");
        // A run's own values go over the job's, if given before the task starts.
        let run = start(&mut st, j, 20_000);
        set_task_values(&mut st, given(json!({"go": "no"}), None, Some(run))).unwrap();
        advance(&mut st, &ctx(30_000));
        assert_eq!(task(&st, run, "check").outcome.as_deref(), Some("false"));
        assert_eq!(result(&st, run, "then").0, "EXCLUDED");
    }

    #[test]
    fn a_condition_on_a_task_value_never_set_fails() {
        let mut st = State::new("u@x", 0);
        let j = job(&mut st, decide());
        let run = start(&mut st, j, 0);
        advance(&mut st, &ctx(10_000));
        assert_eq!(
            result(&st, run, "check"),
            (
                "FAILED".into(),
                "Could not resolve {{tasks.setter.values.go}}: task 'setter' did not set the task value 'go'.".into()
            )
        );
        // It failed as it started, without running its code.
        let t = task(&st, run, "check");
        assert_eq!(t.end_time, t.start_time);
        assert_eq!(result(&st, run, "then").0, "UPSTREAM_FAILED");
        assert_eq!(st.jobs.runs[&run].result_state.as_deref(), Some("FAILED"));
    }

    #[test]
    fn task_values_are_given_for_a_job_or_a_run_within_the_services_size() {
        let mut st = State::new("u@x", 0);
        let j = job(&mut st, decide());
        let tv = |job_id, run_id, values: Value| TaskValues {
            job_id,
            run_id,
            task_key: "setter".into(),
            values: values.as_object().unwrap().clone(),
        };
        let msg = |r: Result<(), crate::errors::ApiError>| r.unwrap_err().message;
        assert!(
            msg(set_task_values(&mut st, tv(None, None, json!({"a": 1})))).contains("exactly one")
        );
        assert!(
            msg(set_task_values(
                &mut st,
                tv(Some(j), Some(1), json!({"a": 1}))
            ))
            .contains("exactly one")
        );
        assert_eq!(
            msg(set_task_values(
                &mut st,
                tv(Some(j + 100), None, json!({"a": 1}))
            )),
            format!("Job {} does not exist.", j + 100)
        );
        assert!(
            msg(set_task_values(
                &mut st,
                tv(None, Some(j + 100), json!({"a": 1}))
            ))
            .contains("does not exist")
        );
        let big = "x".repeat(MAX_TASK_VALUE_BYTES_FOR_TEST);
        assert!(
            msg(set_task_values(
                &mut st,
                tv(Some(j), None, json!({"a": big}))
            ))
            .contains("at most 49152")
        );
        set_task_values(&mut st, tv(Some(j), None, json!({"a": 1}))).unwrap();
        set_task_values(&mut st, tv(Some(j), None, json!({"b": [2]}))).unwrap();
        let listed = super::super::model::list_task_values(&st);
        assert_eq!(
            listed,
            json!({"task_values": [{"job_id": j, "task_key": "setter", "values": {"a": 1, "b": [2]}}]})
        );
        set_task_values(&mut st, tv(Some(j), None, json!({}))).unwrap();
        assert_eq!(
            super::super::model::list_task_values(&st),
            json!({"task_values": []})
        );
        set_task_values(&mut st, tv(Some(j), None, json!({"a": 1}))).unwrap();
        super::super::model::clear_task_values(&mut st);
        assert!(st.jobs.jobs[&j].task_values.is_empty());
    }

    /// The JSON of a string of this many bytes is two bytes over the limit.
    const MAX_TASK_VALUE_BYTES_FOR_TEST: usize = 48 * 1024;
}
