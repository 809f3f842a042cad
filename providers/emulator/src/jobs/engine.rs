//! The run engine: runs advance lazily, before any request reads or writes the workspace,
//! moving every active run forward to "now" with the durations it was started with. Tasks
//! start in dependency order (`run_if`), do what their task type's simulator decides, and
//! end; the run ends when its tasks have.

use super::{Run, RunTask, tasks};
use crate::behaviours::Behaviour;
use crate::store::{Ctx, State};
use serde_json::Value;
use std::collections::HashSet;

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
        .runs
        .values()
        .filter(|r| {
            r.end_time
                .is_some_and(|end| ctx.now.saturating_sub(end) > RUN_RETENTION_MS)
        })
        .map(|r| (r.run_id, r.job_id))
        .collect();
    for (run, job) in &old {
        st.runs.remove(run);
        st.active_runs.remove(run);
        st.purged_runs.insert(*run, *job);
    }
    !old.is_empty()
}

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

pub fn advance_run(st: &mut State, id: i64, ctx: &Ctx) -> bool {
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

pub fn step_run(st: &mut State, run: &mut Run, ctx: &Ctx) {
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
                .map(|t| format!("Task {} failed with message: {}.", t.task_key, t.message))
                .unwrap_or_default(),
        };
        run.result_state = Some(result.into());
        close_repair(run);
    }
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

pub fn try_start(st: &mut State, run: &mut Run, i: usize, t0: i64, ctx: &Ctx) -> bool {
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
        task: &t.spec,
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

pub fn try_finish(st: &State, t: &mut RunTask, now: i64) -> bool {
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
        close_repair(&mut run);
        st.active_runs.remove(&id);
    }
    st.runs.insert(id, run);
}

pub fn finish(t: &mut RunTask, result: &str, message: &str, at: i64) {
    t.state = "TERMINATED".into();
    t.result = Some(result.to_string());
    t.message = message.to_string();
    t.end_time = at;
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
}
