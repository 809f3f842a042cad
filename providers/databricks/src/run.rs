//! Running things: a job run (run-now, then waiting for its end) and a pipeline update.
//! Used by the `databricks_job_run` kind and by `brickform run`, which asks a kind for its
//! [`Runner`] (see `resources::DatabricksKind::runner`): the kind says how its objects are
//! started and followed, the command only prints.

use crate::client::{ApiError, Client};
use serde_json::{Value as Json, json};
use std::time::{Duration, Instant};

/// What a wait reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// The run or update moved to a new state.
    State { state: String, elapsed: Duration },
    /// Still waiting, after each look at the run: its state, the time since it started and
    /// the tasks running now (job runs only), so a terminal can keep its line current.
    Waiting {
        state: String,
        elapsed: Duration,
        running: Vec<String>,
    },
    /// Where the run can be watched in the workspace; told once, when first known.
    Link { url: String },
    /// A task of a job run finished.
    Task {
        task_key: String,
        result: String,
        message: String,
    },
}

/// How a run or update ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub id: String,
    /// `SUCCESS`, `FAILED`, `CANCELED`, `COMPLETED`, …
    pub result: String,
    pub succeeded: bool,
    pub message: String,
    pub url: Option<String>,
    /// Per task: key, result, message (job runs only).
    pub tasks: Vec<(String, String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Api(#[from] ApiError),
    #[error("gave up waiting after {0:?}")]
    Timeout(Duration),
    #[error("{0}")]
    Unexpected(String),
}

/// What `brickform run` was asked to do, as given on its command line. A runner reads what
/// applies to it and ignores the rest (a job has no full refresh, a pipeline no parameters).
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Job parameters, `NAME=VALUE` each.
    pub params: Vec<String>,
    pub update: UpdateRequest,
}

/// A run or update that has started.
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    /// The id of the object run (the job, the pipeline).
    pub object: String,
    /// The id of the run or update.
    pub id: String,
    /// What started, after the address: `started run 7 of job 3`.
    pub message: String,
}

/// A question `brickform run` must have answered `yes` before it starts a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    /// Why it asks, for the error when there is no terminal to ask in.
    pub why: String,
    /// The question's first line.
    pub prompt: String,
}

/// How a runnable kind's objects are started and followed to their end.
#[async_trait::async_trait]
pub trait Runner: Send + Sync {
    /// What must be confirmed before this run starts, if anything.
    fn confirmation(&self, _address: &str, _req: &RunRequest) -> Option<Confirmation> {
        None
    }
    /// Starts a run of the object `id` (the id in the state) of `address`.
    async fn start(
        &self,
        client: &Client,
        address: &str,
        id: &str,
        req: &RunRequest,
    ) -> Result<Started, RunError>;
    /// Waits for a started run to end, reporting its progress.
    async fn wait(
        &self,
        client: &Client,
        started: &Started,
        timeout: Duration,
        on: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<Outcome, RunError>;
    /// Asks the service to stop a started run (it ends as cancelled; [`Runner::wait`] then
    /// reports how).
    async fn cancel(&self, client: &Client, started: &Started) -> Result<(), RunError>;
}

/// The runner of jobs: `run-now` with the parameters, then the run's state and its tasks.
pub struct JobRunner;

#[async_trait::async_trait]
impl Runner for JobRunner {
    async fn start(
        &self,
        client: &Client,
        address: &str,
        id: &str,
        req: &RunRequest,
    ) -> Result<Started, RunError> {
        let job_id: i64 = id.parse().map_err(|_| {
            RunError::Unexpected(format!("{address} has a non-numeric job id {id:?}"))
        })?;
        let mut params = Vec::new();
        for p in &req.params {
            let (k, v) = p.split_once('=').ok_or_else(|| {
                RunError::Unexpected(format!("invalid --param {p:?}: expected NAME=VALUE"))
            })?;
            params.push((k.to_string(), v.to_string()));
        }
        // A fresh token for this run: the client repeats a run-now whose answer was lost,
        // and the token makes the service answer the repeat with the run it started.
        let token = uuid::Uuid::new_v4().to_string();
        let run_id = start_job_run(client, job_id, &params, Some(&token)).await?;
        Ok(Started {
            object: id.to_string(),
            id: run_id.to_string(),
            message: format!("started run {run_id} of job {job_id}"),
        })
    }

    async fn wait(
        &self,
        client: &Client,
        started: &Started,
        timeout: Duration,
        on: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<Outcome, RunError> {
        let run_id: i64 = started.id.parse().map_err(|_| {
            RunError::Unexpected(format!("run-now returned run id {:?}", started.id))
        })?;
        wait_job_run(client, run_id, timeout, on).await
    }

    async fn cancel(&self, client: &Client, started: &Started) -> Result<(), RunError> {
        let run_id: i64 = started.id.parse().map_err(|_| {
            RunError::Unexpected(format!("run-now returned run id {:?}", started.id))
        })?;
        client
            .post("/api/2.2/jobs/runs/cancel", &json!({ "run_id": run_id }))
            .await?;
        Ok(())
    }
}

/// The runner of pipelines (and of the Lakeflow Connect kinds, which are pipelines): an
/// update, then its state. A full refresh recomputes every table, so it is confirmed first.
pub struct PipelineRunner;

#[async_trait::async_trait]
impl Runner for PipelineRunner {
    fn confirmation(&self, address: &str, req: &RunRequest) -> Option<Confirmation> {
        req.update.full_refresh.then(|| Confirmation {
            why: "a full refresh recomputes every table from scratch".into(),
            prompt: format!(
                "A full refresh of {address} recomputes every table from scratch and may take long."
            ),
        })
    }

    async fn start(
        &self,
        client: &Client,
        _address: &str,
        id: &str,
        req: &RunRequest,
    ) -> Result<Started, RunError> {
        let update_id = start_pipeline_update(client, id, &req.update).await?;
        Ok(Started {
            object: id.to_string(),
            message: format!("started update {update_id} of pipeline {id}"),
            id: update_id,
        })
    }

    async fn wait(
        &self,
        client: &Client,
        started: &Started,
        timeout: Duration,
        on: &(dyn Fn(Progress) + Send + Sync),
    ) -> Result<Outcome, RunError> {
        wait_pipeline_update(client, &started.object, &started.id, timeout, on).await
    }

    async fn cancel(&self, client: &Client, started: &Started) -> Result<(), RunError> {
        client
            .post(
                &format!("/api/2.0/pipelines/{}/stop", started.object),
                &json!({}),
            )
            .await?;
        Ok(())
    }
}

/// The pause between polls: quick at first so short runs end quickly, then once a second,
/// so task results are reported close to when they happen.
fn poll_interval(attempt: u32) -> Duration {
    Duration::from_millis((100u64 << attempt.min(4)).min(1_000))
}

/// Starts a run of a job; returns its run id. With `token` (the service's
/// `idempotency_token`, at most 64 characters), a repeat of the call returns the run the
/// first call with that token started instead of starting another.
pub async fn start_job_run(
    client: &Client,
    job_id: i64,
    params: &[(String, String)],
    token: Option<&str>,
) -> Result<i64, RunError> {
    let mut body = json!({ "job_id": job_id });
    if let Some(t) = token {
        body["idempotency_token"] = Json::String(t.to_string());
    }
    if !params.is_empty() {
        body["job_parameters"] = Json::Object(
            params
                .iter()
                .map(|(k, v)| (k.clone(), Json::String(v.clone())))
                .collect(),
        );
    }
    let resp = client.post("/api/2.2/jobs/run-now", &body).await?;
    resp.get("run_id")
        .and_then(Json::as_i64)
        .ok_or_else(|| RunError::Unexpected("run-now returned no run_id".into()))
}

fn text(j: &Json, ptr: &str) -> String {
    j.pointer(ptr)
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string()
}

/// Results of a task whose own code failed; its run output holds the cause.
fn ran_and_failed(result: &str) -> bool {
    matches!(result, "FAILED" | "TIMEDOUT" | "INTERNAL_ERROR")
}

/// Why a task failed, from `runs/get-output`: the service reports a failed task only as
/// "Workload failed, see run output for details", and keeps the exception (`error`) and
/// its traceback (`error_trace`) in the task's output. Empty when the output says nothing
/// or cannot be read: the task's own message stands then.
async fn task_error(client: &Client, task_run_id: i64) -> String {
    match client
        .get(
            "/api/2.2/jobs/runs/get-output",
            &[("run_id", task_run_id.to_string())],
        )
        .await
    {
        Ok(out) => text(&out, "/error"),
        Err(e) => {
            tracing::debug!(target: "brickform::run", "runs/get-output of task run {task_run_id}: {e}");
            String::new()
        }
    }
}

/// Waits for a job run to end, reporting state changes and task results.
pub async fn wait_job_run(
    client: &Client,
    run_id: i64,
    timeout: Duration,
    on: &(dyn Fn(Progress) + Send + Sync),
) -> Result<Outcome, RunError> {
    let started = Instant::now();
    let mut last_state = String::new();
    let mut reported: std::collections::HashSet<String> = Default::default();
    // Each failed task's cause, from its output, fetched once.
    let mut causes: std::collections::HashMap<String, String> = Default::default();
    let mut attempt = 0;
    let mut linked = false;
    loop {
        let run = client
            .get("/api/2.2/jobs/runs/get", &[("run_id", run_id.to_string())])
            .await?;
        if !linked && let Some(url) = run.get("run_page_url").and_then(Json::as_str) {
            on(Progress::Link {
                url: url.to_string(),
            });
            linked = true;
        }
        let life = text(&run, "/state/life_cycle_state");
        if life != last_state {
            on(Progress::State {
                state: life.clone(),
                elapsed: started.elapsed(),
            });
            last_state = life.clone();
        }
        let running: Vec<String> = run
            .get("tasks")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter(|t| text(t, "/state/life_cycle_state") == "RUNNING")
            .map(|t| text(t, "/task_key"))
            .collect();
        on(Progress::Waiting {
            state: life.clone(),
            elapsed: started.elapsed(),
            running,
        });
        let mut tasks: Vec<(String, String, String)> = Vec::new();
        for t in run
            .get("tasks")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let result = text(t, "/state/result_state");
            if result.is_empty() {
                continue;
            }
            let key = text(t, "/task_key");
            let mut message = text(t, "/state/state_message");
            if ran_and_failed(&result) {
                if !causes.contains_key(&key)
                    && let Some(id) = t.get("run_id").and_then(Json::as_i64)
                {
                    causes.insert(key.clone(), task_error(client, id).await);
                }
                if let Some(cause) = causes.get(&key).filter(|c| !c.is_empty()) {
                    message = cause.clone();
                }
            }
            tasks.push((key, result, message));
        }
        for (key, result, message) in &tasks {
            if reported.insert(key.clone()) {
                on(Progress::Task {
                    task_key: key.clone(),
                    result: result.clone(),
                    message: message.clone(),
                });
            }
        }
        if matches!(life.as_str(), "TERMINATED" | "SKIPPED" | "INTERNAL_ERROR") {
            let result = text(&run, "/state/result_state");
            let result = if result.is_empty() {
                life.clone()
            } else {
                result
            };
            let message = text(&run, "/state/state_message");
            let failed_tasks: Vec<String> = tasks
                .iter()
                .filter(|(_, r, _)| !matches!(r.as_str(), "SUCCESS" | "EXCLUDED"))
                // The run's own message may already say all there is about a task.
                .filter(|(k, _, m)| {
                    !(message.contains(&format!("Task {k} ")) && message.contains(m.as_str()))
                })
                .map(|(k, r, m)| {
                    if m.is_empty() {
                        format!("{k}: {r}")
                    } else {
                        format!("{k}: {r}: {m}")
                    }
                })
                .collect();
            let message = if failed_tasks.is_empty() {
                message
            } else {
                format!(
                    "{message}{}{}",
                    if message.is_empty() { "" } else { "; " },
                    failed_tasks.join("; ")
                )
            };
            return Ok(Outcome {
                id: run_id.to_string(),
                succeeded: result == "SUCCESS",
                result,
                message,
                url: run
                    .get("run_page_url")
                    .and_then(Json::as_str)
                    .map(str::to_string),
                tasks,
            });
        }
        if started.elapsed() > timeout {
            return Err(RunError::Timeout(timeout));
        }
        tokio::time::sleep(poll_interval(attempt)).await;
        attempt += 1;
    }
}

/// What a pipeline update should do.
#[derive(Debug, Clone, Default)]
pub struct UpdateRequest {
    pub full_refresh: bool,
    pub refresh_selection: Vec<String>,
    pub validate_only: bool,
}

/// Starts a pipeline update; returns its update id.
pub async fn start_pipeline_update(
    client: &Client,
    pipeline_id: &str,
    req: &UpdateRequest,
) -> Result<String, RunError> {
    let mut body = json!({ "full_refresh": req.full_refresh });
    if !req.refresh_selection.is_empty() {
        body["refresh_selection"] = json!(req.refresh_selection);
    }
    if req.validate_only {
        body["validate_only"] = json!(true);
    }
    let resp = client
        .post(&format!("/api/2.0/pipelines/{pipeline_id}/updates"), &body)
        .await?;
    resp.get("update_id")
        .and_then(Json::as_str)
        .map(str::to_string)
        .ok_or_else(|| RunError::Unexpected("the update request returned no update_id".into()))
}

/// Waits for a pipeline update to end (COMPLETED, FAILED or CANCELED).
pub async fn wait_pipeline_update(
    client: &Client,
    pipeline_id: &str,
    update_id: &str,
    timeout: Duration,
    on: &(dyn Fn(Progress) + Send + Sync),
) -> Result<Outcome, RunError> {
    let started = Instant::now();
    let mut last_state = String::new();
    let mut attempt = 0;
    loop {
        let resp = client
            .get(
                &format!("/api/2.0/pipelines/{pipeline_id}/updates/{update_id}"),
                &[],
            )
            .await?;
        let state = text(&resp, "/update/state");
        if state != last_state {
            on(Progress::State {
                state: state.clone(),
                elapsed: started.elapsed(),
            });
            last_state = state.clone();
        }
        on(Progress::Waiting {
            state: state.clone(),
            elapsed: started.elapsed(),
            running: Vec::new(),
        });
        if matches!(state.as_str(), "COMPLETED" | "FAILED" | "CANCELED") {
            return Ok(Outcome {
                id: update_id.to_string(),
                succeeded: state == "COMPLETED",
                message: if state == "COMPLETED" {
                    String::new()
                } else {
                    format!("the update ended {state}")
                },
                result: state,
                url: None,
                tasks: Vec::new(),
            });
        }
        if started.elapsed() > timeout {
            return Err(RunError::Timeout(timeout));
        }
        tokio::time::sleep(poll_interval(attempt)).await;
        attempt += 1;
    }
}
