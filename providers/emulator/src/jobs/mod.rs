//! Jobs API 2.2: jobs, runs, and the run engine that executes tasks in dependency order.
//!
//! [`settings`] checks and normalizes job settings; [`model`] is what the API does to the
//! state; [`engine`] advances runs with the clock; [`tasks`] is the table of task types
//! (their checks and simulators); [`refs`] resolves dynamic value references; [`routes`]
//! the HTTP side.

mod engine;
mod model;
mod refs;
mod routes;
mod settings;
mod tasks;

pub use engine::tick;
pub use model::{TaskValues, clear_task_values, list_task_values, set_task_values};
pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// What jobs keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    pub jobs: Tracked<i64, Job>,
    pub runs: Tracked<i64, Run>,
    /// Runs that have not terminated, so advancing time touches only these. Journal
    /// records carry the set whole, so it is not among the journaled tables.
    #[serde(default)]
    pub active_runs: BTreeSet<i64>,
    /// Runs the service no longer keeps (removed 60 days after they ended), by run id: the
    /// job each was a run of, which `runs/get` names when asked for one (files written
    /// before had none).
    #[serde(default)]
    pub purged_runs: Tracked<i64, i64>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, jobs, runs, purged_runs)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub job_id: i64,
    pub created_time: i64,
    pub creator: String,
    pub settings: Map<String, Value>,
    /// Task values the simulated tasks of this job's runs set, by task key (given through
    /// `POST /__emulator/task-values`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_values: BTreeMap<String, Map<String, Value>>,
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
    /// Every attempt of every task: a repair appends new attempts of the tasks it re-runs
    /// and keeps the earlier ones, as `runs/get` lists them.
    pub tasks: Vec<RunTask>,
    /// The original run and each repair of it, oldest first; empty until the first repair
    /// (`runs/get` then shows the run itself as its original).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repair_history: Vec<RepairItem>,
    /// The Run Job task whose run started this one, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triggered_by: Option<TriggeredBy>,
    /// The jobs whose runs started this one through Run Job tasks, nearest first: how
    /// deep Run Job tasks nest, and whether they would start a job that is already running
    /// in the chain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lineage: Vec<i64>,
    /// Task values this run's simulated tasks set, by task key, over the job's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_values: BTreeMap<String, Map<String, Value>>,
}

/// A run started by a Run Job task: the job run and the task run it belongs to.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct TriggeredBy {
    pub run_id: i64,
    pub task_run_id: i64,
}

/// One entry of a run's repair history: the original run or one repair of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RepairItem {
    /// The repair's id; `None` for the original run.
    pub id: Option<i64>,
    pub start_time: i64,
    /// `None` while this repair is the one running; its state is then the run's own.
    pub end_time: Option<i64>,
    pub life_cycle_state: String,
    pub result_state: Option<String>,
    pub state_message: String,
    /// The task runs that ran as part of it.
    pub task_run_ids: Vec<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunTask {
    pub run_id: i64,
    pub task_key: String,
    /// 0 for a task's first run; each repair that re-runs it adds one.
    #[serde(default)]
    pub attempt_number: i64,
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
    /// The task values the task set when it ran.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub values: Map<String, Value>,
    /// A For each task's iterations, once it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<ForEachRun>,
    /// The run a Run Job task started, and waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_run: Option<i64>,
    /// The task's parameters with their references resolved, as `runs/get` shows them
    /// (`resolved_values`, with `include_resolved_values`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Value>,
    /// An iteration's element of its For each task's inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

impl RunTask {
    /// A task run that has not started.
    pub fn pending(
        run_id: i64,
        task_key: String,
        attempt_number: i64,
        spec: Map<String, Value>,
    ) -> RunTask {
        RunTask {
            run_id,
            task_key,
            attempt_number,
            spec,
            state: "PENDING".into(),
            result: None,
            message: String::new(),
            start_time: 0,
            end_time: 0,
            planned: None,
            outcome: None,
            pipeline_update: None,
            error: None,
            values: Map::new(),
            for_each: None,
            child_run: None,
            resolved: None,
            input: None,
        }
    }
}

/// A For each task that started: its inputs, how many iterations may run at once, and
/// the iterations started so far, in input order. An iteration's spec is the nested task
/// (`for_each_task.task` of the For each task's spec), not copied into each.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForEachRun {
    pub inputs: Vec<Value>,
    pub concurrency: usize,
    pub iterations: Vec<RunTask>,
}
