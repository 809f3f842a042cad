//! Jobs API 2.2: jobs, runs, and the run engine that executes tasks in dependency order.
//!
//! [`settings`] checks and normalizes job settings; [`model`] is what the API does to the
//! state; [`engine`] advances runs with the clock; [`tasks`] is the table of task types
//! (their checks and simulators); [`routes`] the HTTP side.

mod engine;
mod model;
mod routes;
mod settings;
mod tasks;

pub use engine::tick;
pub use routes::routes;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

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
    /// Every attempt of every task: a repair appends new attempts of the tasks it re-runs
    /// and keeps the earlier ones, as `runs/get` lists them.
    pub tasks: Vec<RunTask>,
    /// The original run and each repair of it, oldest first; empty until the first repair
    /// (`runs/get` then shows the run itself as its original).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repair_history: Vec<RepairItem>,
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
}
