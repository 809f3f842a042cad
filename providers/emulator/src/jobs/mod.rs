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

pub use engine::advance;
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
