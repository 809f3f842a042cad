//! Running things: a job run (run-now, then waiting for its end) and a pipeline update.
//! Used by the `databricks_job_run` kind and by `brickform run`, which asks a kind for its
//! [`Runner`] (see `resources::DatabricksKind::runner`): the kind says how its objects are
//! started and followed, the command only prints.

use crate::client::{ApiError, Client, PageSize};
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
    /// Per task: key, result, message (job runs only; after a repair, each task's latest
    /// run).
    pub tasks: Vec<(String, String, String)>,
    /// A repair's: the tasks it re-ran.
    pub rerun: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    // Transparent: its message once, not again as its own source.
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error("gave up waiting after {0:?}")]
    Timeout(Duration),
    #[error("{0}")]
    Unexpected(String),
    /// What was asked cannot be done to this kind of object, or to this run.
    #[error("{0}")]
    Refused(String),
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
    /// Set when what started is a repair of the run `id`.
    pub repair: Option<RepairStarted>,
}

/// A repair of a job run that was started: the run goes on with the tasks it re-runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RepairStarted {
    pub repair_id: i64,
    /// The task runs the run had before the repair: any other is a task it re-runs.
    pub earlier: std::collections::BTreeSet<i64>,
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
    /// Starts a repair of a run of the object `id`: the run `run`, or by default the
    /// object's latest run that did not succeed. [`Runner::wait`] follows it.
    async fn repair(
        &self,
        _client: &Client,
        address: &str,
        _id: &str,
        _run: Option<&str>,
        _req: &RunRequest,
    ) -> Result<Started, RunError> {
        Err(RunError::Refused(format!(
            "{address} is not a job: only job runs can be repaired (--repair)."
        )))
    }
    /// The runs of the object `id` that are going, to be cancelled with [`Runner::cancel`]:
    /// the run `run` (refused when it has ended), or by default every active one.
    async fn active(
        &self,
        _client: &Client,
        address: &str,
        _id: &str,
        _run: Option<&str>,
    ) -> Result<Vec<Started>, RunError> {
        Err(RunError::Refused(format!(
            "{address} is not a job: only job runs can be cancelled (--cancel)."
        )))
    }
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
        let job_id = job_id(address, id)?;
        let params = job_params(req)?;
        // A fresh token for this run: the client repeats a run-now whose answer was lost,
        // and the token makes the service answer the repeat with the run it started.
        let token = uuid::Uuid::new_v4().to_string();
        let run_id = start_job_run(client, job_id, &params, Some(&token)).await?;
        Ok(Started {
            object: id.to_string(),
            id: run_id.to_string(),
            message: format!("started run {run_id} of job {job_id}"),
            repair: None,
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
        follow_job_run(client, run_id, started.repair.as_ref(), timeout, on).await
    }

    async fn cancel(&self, client: &Client, started: &Started) -> Result<(), RunError> {
        let run_id: i64 = started.id.parse().map_err(|_| {
            RunError::Unexpected(format!("run-now returned run id {:?}", started.id))
        })?;
        // Cancelling a run that has ended changes nothing: safe to send again.
        client
            .idempotent()
            .post("/api/2.2/jobs/runs/cancel", &json!({ "run_id": run_id }))
            .await?;
        Ok(())
    }

    async fn repair(
        &self,
        client: &Client,
        address: &str,
        id: &str,
        run: Option<&str>,
        req: &RunRequest,
    ) -> Result<Started, RunError> {
        let job_id = job_id(address, id)?;
        let params = job_params(req)?;
        let (run_id, before) = match run {
            Some(r) => {
                let then = format!(
                    "it cannot be repaired: start a new run with `brickform run {address}`"
                );
                run_of_job(client, address, job_id, r, &then).await?
            }
            None => {
                let run_id = latest_unsuccessful_run(client, job_id)
                    .await?
                    .ok_or_else(|| {
                        RunError::Refused(format!(
                            "{address}: job {job_id} has no failed run to repair."
                        ))
                    })?;
                (run_id, get_run_with_history(client, run_id).await?)
            }
        };
        let (repair_id, earlier) = repair_job_run(client, run_id, &before, &params).await?;
        Ok(Started {
            object: id.to_string(),
            id: run_id.to_string(),
            message: format!(
                "started repair {repair_id} of run {run_id} of job {job_id}, re-running its failed tasks"
            ),
            repair: Some(RepairStarted { repair_id, earlier }),
        })
    }

    async fn active(
        &self,
        client: &Client,
        address: &str,
        id: &str,
        run: Option<&str>,
    ) -> Result<Vec<Started>, RunError> {
        let job_id = job_id(address, id)?;
        let started = |run_id: i64| Started {
            object: id.to_string(),
            id: run_id.to_string(),
            message: format!("run {run_id} of job {job_id}"),
            repair: None,
        };
        if let Some(r) = run {
            let then = "there is nothing to cancel".to_string();
            let (run_id, got) = run_of_job(client, address, job_id, r, &then).await?;
            let life = text(&got, "/state/life_cycle_state");
            if ended(&life) {
                return Err(RunError::Refused(format!(
                    "{address}: run {run_id} of job {job_id} has already ended {}; there is nothing to cancel.",
                    result_of(&got)
                )));
            }
            return Ok(vec![started(run_id)]);
        }
        let runs = client
            .list_all(
                "/api/2.2/jobs/runs/list",
                &[
                    ("job_id", job_id.to_string()),
                    ("active_only", "true".to_string()),
                ],
                "runs",
                Some(RUNS_PAGE),
            )
            .await?;
        Ok(runs
            .iter()
            .filter_map(|r| r.get("run_id").and_then(Json::as_i64))
            .map(started)
            .collect())
    }
}

/// The largest page `runs/list` gives: "if a request specifies a limit of 0, the service
/// instead uses the maximum limit" (the Jobs API reference).
const RUNS_PAGE: PageSize = PageSize::new("limit", "0");

fn job_id(address: &str, id: &str) -> Result<i64, RunError> {
    id.parse()
        .map_err(|_| RunError::Unexpected(format!("{address} has a non-numeric job id {id:?}")))
}

/// `--param NAME=VALUE`s as pairs.
fn job_params(req: &RunRequest) -> Result<Vec<(String, String)>, RunError> {
    req.params
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| {
                    RunError::Unexpected(format!("invalid --param {p:?}: expected NAME=VALUE"))
                })
        })
        .collect()
}

/// `job_parameters` of a run-now or a repair.
fn params_json(params: &[(String, String)]) -> Json {
    Json::Object(
        params
            .iter()
            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
            .collect(),
    )
}

/// States a run or task has ended in.
fn ended(life_cycle_state: &str) -> bool {
    matches!(
        life_cycle_state,
        "TERMINATED" | "SKIPPED" | "INTERNAL_ERROR"
    )
}

/// How a run ended: its result, or its life cycle state when it has none.
fn result_of(run: &Json) -> String {
    let result = text(run, "/state/result_state");
    if result.is_empty() {
        text(run, "/state/life_cycle_state")
    } else {
        result
    }
}

/// The run `run` (an id given on the command line) with its repair history, checked to be a
/// run of the job: a run of another job is never repaired or cancelled by mistake. A run the
/// workspace does not know is refused, saying `then`: runs are removed 60 days after they
/// end ("Runs are automatically removed after 60 days", the runs/get-output reference), and
/// runs/get then answers `Run: N in job: M doesn't exist`, which the client calls not-found
/// as the official SDK does (databricks-sdk-py databricks/sdk/errors/overrides.py).
async fn run_of_job(
    client: &Client,
    address: &str,
    job_id: i64,
    run: &str,
    then: &str,
) -> Result<(i64, Json), RunError> {
    let run_id: i64 = run
        .parse()
        .map_err(|_| RunError::Refused(format!("{run:?} is not a run id")))?;
    let got = match get_run_with_history(client, run_id).await {
        Ok(got) => got,
        Err(RunError::Api(e)) if e.is_not_found() => {
            return Err(RunError::Refused(format!(
                "{address}: run {run_id} no longer exists: the workspace keeps a job's runs for 60 days after they end ({}); {then}.",
                e.message
            )));
        }
        Err(e) => return Err(e),
    };
    match got.get("job_id").and_then(Json::as_i64) {
        Some(j) if j == job_id => Ok((run_id, got)),
        Some(j) => Err(RunError::Refused(format!(
            "run {run_id} is a run of job {j}, not of {address} (job {job_id})."
        ))),
        None => Err(RunError::Unexpected(format!(
            "runs/get of run {run_id} named no job"
        ))),
    }
}

async fn get_run_with_history(client: &Client, run_id: i64) -> Result<Json, RunError> {
    Ok(client
        .get(
            "/api/2.2/jobs/runs/get",
            &[
                ("run_id", run_id.to_string()),
                ("include_history", "true".to_string()),
            ],
        )
        .await?)
}

/// Results of a run that a repair can mend: some task did not succeed.
fn repairable(run: &Json) -> bool {
    matches!(
        result_of(run).as_str(),
        "FAILED"
            | "TIMEDOUT"
            | "CANCELED"
            | "INTERNAL_ERROR"
            | "UPSTREAM_FAILED"
            | "UPSTREAM_CANCELED"
            | "SUCCESS_WITH_FAILURES"
    )
}

/// The job's newest run that ended without succeeding. `runs/list` gives runs newest
/// first, so the pages are read only until one is found.
async fn latest_unsuccessful_run(client: &Client, job_id: i64) -> Result<Option<i64>, RunError> {
    let mut token: Option<String> = None;
    loop {
        let mut q = vec![
            ("job_id", job_id.to_string()),
            ("completed_only", "true".to_string()),
            (RUNS_PAGE.param, RUNS_PAGE.value.to_string()),
        ];
        if let Some(t) = &token {
            q.push(("page_token", t.clone()));
        }
        let page = client.get("/api/2.2/jobs/runs/list", &q).await?;
        if let Some(run) = page
            .get("runs")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .find(|r| repairable(r))
        {
            return Ok(run.get("run_id").and_then(Json::as_i64));
        }
        match page.get("next_page_token").and_then(Json::as_str) {
            Some(t) if !t.is_empty() && token.as_deref() != Some(t) => token = Some(t.to_string()),
            _ => return Ok(None),
        }
    }
}

/// The id of a run's latest repair, from its repair history (the original run has none).
fn latest_repair(run: &Json) -> Option<i64> {
    run.get("repair_history")
        .and_then(Json::as_array)?
        .iter()
        .rev()
        .find_map(|i| i.get("id").and_then(Json::as_i64))
}

/// Asks for a repair of the run `run_id` (as `before`, read with its history) that re-runs
/// its failed tasks and the tasks downstream of them (those a failure left upstream-failed,
/// and any that ran anyway); returns the repair's id and the task runs the run had before
/// it. A run repaired before is repaired again only by naming its latest repair.
async fn repair_job_run(
    client: &Client,
    run_id: i64,
    before: &Json,
    params: &[(String, String)],
) -> Result<(i64, std::collections::BTreeSet<i64>), RunError> {
    let earlier = task_runs(before).collect();
    let latest = latest_repair(before);
    let mut body = json!({
        "run_id": run_id,
        "rerun_all_failed_tasks": true,
        "rerun_dependent_tasks": true,
    });
    if let Some(l) = latest {
        body["latest_repair_id"] = json!(l);
    }
    if !params.is_empty() {
        body["job_parameters"] = params_json(params);
    }
    match client.post("/api/2.2/jobs/runs/repair", &body).await {
        Ok(resp) => resp
            .get("repair_id")
            .and_then(Json::as_i64)
            .map(|id| (id, earlier))
            .ok_or_else(|| RunError::Unexpected("runs/repair returned no repair_id".into())),
        Err(e) => {
            // The client repeats a request whose answer was lost, and a repeated repair is
            // refused (the run is being repaired): a repair that appeared since is this one.
            match get_run_with_history(client, run_id).await {
                Ok(now) => match latest_repair(&now) {
                    Some(id) if Some(id) != latest => Ok((id, earlier)),
                    _ => Err(e.into()),
                },
                Err(_) => Err(e.into()),
            }
        }
    }
}

/// The id of every task run a run lists (each attempt of each task).
fn task_runs(run: &Json) -> impl Iterator<Item = i64> + '_ {
    run.get("tasks")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("run_id")?.as_i64())
}

/// The runner of pipelines (and of the Lakeflow Connect kinds, which are pipelines): an
/// update, then its state. A full refresh recomputes every table, so it is confirmed first.
pub struct PipelineRunner;

#[async_trait::async_trait]
impl Runner for PipelineRunner {
    fn confirmation(&self, address: &str, req: &RunRequest) -> Option<Confirmation> {
        req.update.full_refresh.then(|| Confirmation {
            why: "a full refresh recomputes every table from scratch, resets streaming state and loses data no longer in the source".into(),
            prompt: format!(
                "A full refresh of {address} truncates every table it publishes and recomputes it from scratch, which may take long. Streaming tables start again from the beginning of their sources: their checkpoints (streaming state) are reset, and rows whose source data is no longer there (expired from a Kafka topic or a change feed, deleted from files) are lost for good."
            ),
        })
    }

    async fn start(
        &self,
        client: &Client,
        address: &str,
        id: &str,
        req: &RunRequest,
    ) -> Result<Started, RunError> {
        let update_id = match start_pipeline_update(client, id, &req.update).await {
            Err(RunError::Api(e)) if e.error_code == "RESOURCE_CONFLICT" => {
                return Err(continuous_conflict(client, address, id)
                    .await
                    .unwrap_or(RunError::Api(e)));
            }
            other => other?,
        };
        Ok(Started {
            object: id.to_string(),
            message: format!("started update {update_id} of pipeline {id}"),
            id: update_id,
            repair: None,
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

/// Why an update of a continuous pipeline cannot start, when that is why the service
/// answered RESOURCE_CONFLICT: a continuous pipeline's update runs until it is stopped, so
/// another cannot start beside it. `None` when the pipeline is not continuous or not
/// running (the conflict is another one: an update someone else started, a delete), so the
/// service's own message is shown.
async fn continuous_conflict(client: &Client, address: &str, id: &str) -> Option<RunError> {
    let p = client
        .get(&format!("/api/2.0/pipelines/{id}"), &[])
        .await
        .ok()?;
    if p.pointer("/spec/continuous").and_then(Json::as_bool) != Some(true) {
        return None;
    }
    let running = p
        .get("latest_updates")
        .and_then(Json::as_array)
        .and_then(|u| u.first())
        .and_then(|u| u.get("update_id"))
        .and_then(Json::as_str)
        .map_or_else(String::new, |u| format!(" (update {u})"));
    Some(RunError::Refused(format!(
        "{address} is a continuous pipeline: its update{running} runs until it is stopped, so another cannot start. To restart it now (new source code, or a full refresh), stop it first (`databricks pipelines stop {id}`, or Stop on its page), then run `brickform run {address}` again"
    )))
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
        body["job_parameters"] = params_json(params);
    }
    let resp = client.post("/api/2.2/jobs/run-now", &body).await?;
    resp.get("run_id")
        .and_then(Json::as_i64)
        .ok_or_else(|| RunError::Unexpected("run-now returned no run_id".into()))
}

/// Pages of `runs/get` a run of many tasks is read in, at most: a server that never stops
/// paging is not followed forever.
const MAX_RUN_PAGES: usize = 100;

/// A run with all its tasks: `runs/get` answers at most 100 tasks (and job clusters,
/// parameters, repairs) a page, and `next_page_token` for the rest, whose lists are added to
/// the first page's.
async fn whole_run(client: &Client, query: &[(&str, String)]) -> Result<Json, ApiError> {
    let mut run = client.get("/api/2.2/jobs/runs/get", query).await?;
    let mut token = next_token(&run);
    let mut pages = 1;
    while let Some(t) = token.take() {
        if pages >= MAX_RUN_PAGES {
            break;
        }
        let mut q = query.to_vec();
        q.push(("page_token", t.clone()));
        let page = client.get("/api/2.2/jobs/runs/get", &q).await?;
        pages += 1;
        for key in [
            "tasks",
            "job_clusters",
            "job_parameters",
            "repair_history",
            "iterations",
        ] {
            if let Some(more) = page
                .get(key)
                .and_then(Json::as_array)
                .filter(|m| !m.is_empty())
            {
                match run.get_mut(key).and_then(Json::as_array_mut) {
                    Some(have) => have.extend(more.iter().cloned()),
                    None => {
                        // A first page with a token is an object (the token is one of its
                        // fields); anything else has nothing to add to.
                        if let Some(o) = run.as_object_mut() {
                            o.insert(key.to_string(), Json::Array(more.clone()));
                        }
                    }
                }
            }
        }
        // A server that hands back the token it was given would loop forever.
        token = next_token(&page).filter(|n| *n != t);
    }
    Ok(run)
}

fn next_token(page: &Json) -> Option<String> {
    page.get("next_page_token")
        .and_then(Json::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

fn text(j: &Json, ptr: &str) -> String {
    j.pointer(ptr)
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string()
}

/// What a For each task that ended without a message of its own says: how many of its
/// iterations succeeded, from its `for_each_task.stats` (databricks-sdk-py
/// databricks/sdk/service/jobs.py `RunForEachTask.stats`, `ForEachTaskTaskRunStats`).
fn iterations_note(task: &Json) -> Option<String> {
    let stats = task.pointer("/for_each_task/stats/task_run_stats")?;
    let total = stats.get("total_iterations")?.as_i64()?;
    let succeeded = stats
        .get("succeeded_iterations")
        .and_then(Json::as_i64)
        .unwrap_or(0);
    Some(format!("{succeeded} of {total} iterations succeeded"))
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
    follow_job_run(client, run_id, None, timeout, on).await
}

/// Waits for a job run, or a repair of it, to end, reporting state changes and the results
/// of its tasks. A repair reports only the tasks it re-runs, and ends when the run has
/// ended again: the service may still show the ended run for a while after it accepted the
/// repair, so an end is taken only once the repair shows in the run's history (or the run
/// has been seen going again).
pub async fn follow_job_run(
    client: &Client,
    run_id: i64,
    repair: Option<&RepairStarted>,
    timeout: Duration,
    on: &(dyn Fn(Progress) + Send + Sync),
) -> Result<Outcome, RunError> {
    let mut follower = JobRunFollower::new(client, repair, on);
    let mut attempt = 0;
    let mut query = vec![("run_id", run_id.to_string())];
    if repair.is_some() {
        query.push(("include_history", "true".to_string()));
    }
    loop {
        let run = whole_run(client, &query).await?;
        follower.report_link(&run);
        let life = text(&run, "/state/life_cycle_state");
        follower.note_repair_reflected(&run, &life);
        let all: Vec<&Json> = run
            .get("tasks")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .collect();
        follower.report_state(&life, &all);
        let (tasks, rerun) = follower.read_tasks(&all).await;
        if follower.reflected && ended(&life) {
            return Ok(job_run_outcome(run_id, &run, tasks, rerun));
        }
        if follower.started.elapsed() > timeout {
            return Err(RunError::Timeout(timeout));
        }
        tokio::time::sleep(poll_interval(attempt)).await;
        attempt += 1;
    }
}

/// What following a job run remembers from one look at the run to the next, so each
/// state change, link and task result is told once.
struct JobRunFollower<'a> {
    client: &'a Client,
    repair: Option<&'a RepairStarted>,
    on: &'a (dyn Fn(Progress) + Send + Sync),
    started: Instant,
    last_state: String,
    /// Task runs already told, by task run id: after a repair a task has a run per attempt.
    reported: std::collections::HashSet<i64>,
    /// Each failed task run's cause, from its output, fetched once.
    causes: std::collections::HashMap<i64, String>,
    linked: bool,
    /// Whether the run as read is the one to follow: always without a repair; with one,
    /// once the run shows the repair (or has been seen going again).
    reflected: bool,
}

impl<'a> JobRunFollower<'a> {
    fn new(
        client: &'a Client,
        repair: Option<&'a RepairStarted>,
        on: &'a (dyn Fn(Progress) + Send + Sync),
    ) -> Self {
        JobRunFollower {
            client,
            repair,
            on,
            started: Instant::now(),
            last_state: String::new(),
            reported: repair
                .map(|r| r.earlier.iter().copied().collect())
                .unwrap_or_default(),
            causes: Default::default(),
            linked: false,
            reflected: repair.is_none(),
        }
    }

    /// Tells the run's page once it is first known.
    fn report_link(&mut self, run: &Json) {
        if !self.linked
            && let Some(url) = run.get("run_page_url").and_then(Json::as_str)
        {
            (self.on)(Progress::Link {
                url: url.to_string(),
            });
            self.linked = true;
        }
    }

    /// Whether the repair shows yet: the run is going, or its history has the repair.
    fn note_repair_reflected(&mut self, run: &Json, life: &str) {
        if let Some(r) = self.repair
            && !self.reflected
        {
            self.reflected = !ended(life)
                || run
                    .get("repair_history")
                    .and_then(Json::as_array)
                    .is_some_and(|h| {
                        h.iter()
                            .any(|i| i.get("id").and_then(Json::as_i64) == Some(r.repair_id))
                    });
        }
    }

    /// Tells a new state of the run (once the repair shows), then that it is still being
    /// waited for, with the tasks running now.
    fn report_state(&mut self, life: &str, all: &[&Json]) {
        if self.reflected && life != self.last_state {
            (self.on)(Progress::State {
                state: life.to_string(),
                elapsed: self.started.elapsed(),
            });
            self.last_state = life.to_string();
        }
        let running: Vec<String> = all
            .iter()
            .filter(|t| text(t, "/state/life_cycle_state") == "RUNNING")
            .map(|t| text(t, "/task_key"))
            .collect();
        (self.on)(Progress::Waiting {
            state: life.to_string(),
            elapsed: self.started.elapsed(),
            running,
        });
    }

    /// Tells each task run that ended and was not told yet. Returns each task's latest
    /// result (key, result, message) and, for a repair, the tasks it re-runs.
    async fn read_tasks(&mut self, all: &[&Json]) -> (Vec<(String, String, String)>, Vec<String>) {
        let latest = latest_attempts(all);
        let mut tasks: Vec<(String, String, String)> = Vec::new();
        let mut rerun: Vec<String> = Vec::new();
        for t in all {
            let result = text(t, "/state/result_state");
            let key = text(t, "/task_key");
            let id = t.get("run_id").and_then(Json::as_i64);
            if self
                .repair
                .is_some_and(|r| id.is_some_and(|id| !r.earlier.contains(&id)))
                && !rerun.contains(&key)
            {
                rerun.push(key.clone());
            }
            if result.is_empty() {
                continue;
            }
            let message = self.task_message(t, &result, id).await;
            if let Some(id) = id
                && self.reported.insert(id)
            {
                (self.on)(Progress::Task {
                    task_key: key.clone(),
                    result: result.clone(),
                    message: message.clone(),
                });
            }
            if latest.iter().any(|l| std::ptr::eq(*l, *t)) {
                tasks.push((key, result, message));
            }
        }
        (tasks, rerun)
    }

    /// What to say about a task run that ended: its state message, else how its iterations
    /// went; for one that failed, the cause its output holds, when it holds one.
    async fn task_message(&mut self, t: &Json, result: &str, id: Option<i64>) -> String {
        let mut message = text(t, "/state/state_message");
        if message.is_empty()
            && let Some(note) = iterations_note(t)
        {
            message = note;
        }
        if ran_and_failed(result)
            && let Some(id) = id
        {
            if let std::collections::hash_map::Entry::Vacant(e) = self.causes.entry(id) {
                e.insert(task_error(self.client, id).await);
            }
            if let Some(cause) = self.causes.get(&id).filter(|c| !c.is_empty()) {
                message = cause.clone();
            }
        }
        message
    }
}

/// Each task's latest run, which decides its result: an earlier attempt's failure was
/// repaired.
fn latest_attempts<'j>(all: &[&'j Json]) -> Vec<&'j Json> {
    let mut latest: Vec<&Json> = Vec::new();
    for t in all {
        let key = text(t, "/task_key");
        let attempt_of = |t: &Json| t.get("attempt_number").and_then(Json::as_i64);
        match latest.iter_mut().find(|l| text(l, "/task_key") == key) {
            Some(l) if attempt_of(t) >= attempt_of(l) => *l = t,
            Some(_) => {}
            None => latest.push(t),
        }
    }
    latest
}

/// How a job run that ended went: its result, and its message followed by each task that
/// did not succeed (unless the run's message already says all there is about it).
fn job_run_outcome(
    run_id: i64,
    run: &Json,
    tasks: Vec<(String, String, String)>,
    rerun: Vec<String>,
) -> Outcome {
    let result = result_of(run);
    let message = text(run, "/state/state_message");
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
    Outcome {
        id: run_id.to_string(),
        succeeded: result == "SUCCESS",
        result,
        message,
        url: run
            .get("run_page_url")
            .and_then(Json::as_str)
            .map(str::to_string),
        tasks,
        rerun,
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

/// Why a pipeline update failed, as its event log says: the messages of the update's
/// ERROR events (their exceptions' messages, else their own), oldest first, each once. The
/// Pipelines API keeps the reason there, not on the update (databricks/cli
/// bundle/run/pipeline.go, logErrorEvent: `level='ERROR'`, 100 events, those of the update).
/// `None` when the log cannot be read or says nothing.
async fn update_errors(client: &Client, pipeline_id: &str, update_id: &str) -> Option<String> {
    let resp = client
        .get(
            &format!("/api/2.0/pipelines/{pipeline_id}/events"),
            &[
                ("filter", "level='ERROR'".to_string()),
                ("max_results", "100".to_string()),
            ],
        )
        .await
        .ok()?;
    let mut messages: Vec<String> = Vec::new();
    // Most recent first: read backwards.
    for event in resp
        .get("events")
        .and_then(Json::as_array)?
        .iter()
        .rev()
        .filter(|e| text(e, "/origin/update_id") == update_id)
    {
        let exceptions: Vec<String> = event
            .pointer("/error/exceptions")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .map(|x| text(x, "/message"))
            .filter(|m| !m.is_empty())
            .collect();
        let said = if exceptions.is_empty() {
            vec![text(event, "/message")]
        } else {
            exceptions
        };
        for m in said {
            if !m.is_empty() && !messages.contains(&m) {
                messages.push(m);
            }
        }
    }
    (!messages.is_empty()).then(|| messages.join("; "))
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
            let why = if state == "FAILED" {
                update_errors(client, pipeline_id, update_id).await
            } else {
                None
            };
            return Ok(Outcome {
                id: update_id.to_string(),
                succeeded: state == "COMPLETED",
                message: if state == "COMPLETED" {
                    String::new()
                } else {
                    why.unwrap_or_else(|| format!("the update ended {state}"))
                },
                result: state,
                url: None,
                tasks: Vec::new(),
                rerun: Vec::new(),
            });
        }
        if started.elapsed() > timeout {
            return Err(RunError::Timeout(timeout));
        }
        tokio::time::sleep(poll_interval(attempt)).await;
        attempt += 1;
    }
}
