//! `databricks_job_run`: a run of a job, started on create and whenever `triggers` change
//! (like Terraform's `terraform_data` with `triggers_replace`), waited for, and failing the
//! apply with the run's error when the run fails. A run is history: destroy only forgets it.

use super::job::{get_job, job_missing};
use super::{err, str_attr};
use crate::Shared;
use crate::run::{Progress, RunError, start_job_run, wait_job_run};
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, OpContext, ProviderError, ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use std::sync::Arc;
use std::time::Duration;

pub struct JobRun {
    schema: Schema,
    shared: Arc<Shared>,
}

impl JobRun {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("A run of a job, started when it is created or its triggers change; apply waits for it and fails if it fails. The workspace removes a run 60 days after it ends; the run stays recorded, and a plan neither fails nor starts a new run for that: only a change of job_id, triggers or job_parameters starts one (or a new job, when the job is gone too).")
            .attr(Attribute::required("job_id", AttrType::String).force_new())
            .attr(Attribute::optional("triggers", AttrType::Map(Box::new(AttrType::String))).force_new().describe("Any change starts a new run."))
            .attr(Attribute::optional("job_parameters", AttrType::Map(Box::new(AttrType::String))).force_new())
            .attr(Attribute::optional("timeout_seconds", AttrType::Number).describe("How long apply waits (default 1 hour)."))
            .attr(Attribute::computed("id", AttrType::String))
            .attr(Attribute::computed("run_id", AttrType::String))
            .attr(Attribute::computed("result_state", AttrType::String).one_of(&[
                "SUCCESS",
                "SUCCESS_WITH_FAILURES",
                "FAILED",
                "TIMEDOUT",
                "CANCELED",
                "MAXIMUM_CONCURRENT_RUNS_REACHED",
                "EXCLUDED",
                "UPSTREAM_FAILED",
                "UPSTREAM_CANCELED",
                "DISABLED",
            ]))
            .attr(Attribute::computed("run_page_url", AttrType::String));
        JobRun { schema, shared }
    }
}

#[async_trait]
impl ResourceKind for JobRun {
    fn type_name(&self) -> &'static str {
        "databricks_job_run"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// jobs/run-now takes an `idempotency_token`: "if a run with the provided token already
    /// exists, the request does not create a new run but returns the ID of the existing run".
    fn create_token(&self) -> bool {
        true
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let job_id: i64 = str_attr(config, "job_id")
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ProviderError::invalid("job_id must be the numeric id of a job"))?;
        let params: Vec<(String, String)> = config
            .get("job_parameters")
            .and_then(Value::as_object)
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let timeout = config
            .get("timeout_seconds")
            .and_then(Value::as_f64)
            .map(Duration::from_secs_f64)
            .unwrap_or(Duration::from_secs(3600));
        // The token the engine gives makes the run-now safe to repeat: a lost answer, or a
        // kill before it came, is resolved by sending it again, which returns the run it
        // started (a run has no name to be found by).
        let token = ctx.create_token.as_deref();
        let run_id = start_job_run(&client, job_id, &params, token)
            .await
            .map_err(|e| match e {
                RunError::Api(e) => err(e),
                e => ProviderError::other(e.to_string()),
            })?;
        let address = ctx.address.clone();
        let on = move |p: Progress| {
            if let Progress::State { state, elapsed } = p {
                tracing::info!(target: "brickform::run", "{address}: run {run_id} {state} after {}s", elapsed.as_secs());
            }
        };
        let outcome = wait_job_run(&client, run_id, timeout, &on)
            .await
            .map_err(|e| {
                // The run was started and how it ends is unknown: with the token, the create
                // may be repeated, which finds this run and waits for it again.
                let unknown = token.is_some() && matches!(e, RunError::Api(_));
                ProviderError::other(format!("run {run_id}: {e}")).uncertain(unknown)
            })?;
        if !outcome.succeeded {
            return Err(ProviderError::other(format!(
                "run {run_id} of job {job_id} ended {}",
                outcome.result
            ))
            .with_detail(format!(
                "{}{}",
                outcome.message,
                outcome
                    .url
                    .map(|u| format!("\nRun page: {u}"))
                    .unwrap_or_default()
            )));
        }
        let mut attrs = config.clone();
        attrs.insert("id".into(), Value::from(run_id.to_string()));
        attrs.insert("run_id".into(), Value::from(run_id.to_string()));
        attrs.insert("result_state".into(), Value::from(outcome.result));
        if let Some(u) = outcome.url {
            attrs.insert("run_page_url".into(), Value::from(u));
        }
        Ok(Remote {
            id: run_id.to_string(),
            attrs,
        })
    }

    /// A finished run does not change; it stays as recorded while its job exists, also once
    /// the service no longer keeps it: runs are removed 60 days after they end, and runs/get
    /// then answers `Run: N in job: M doesn't exist` (the client calls that not-found, as the
    /// official SDK does). The run happened; its record is what starts no other, so only a
    /// change of what triggers a run starts a new one. When the job is gone, so is the run,
    /// and a new one is planned with the new job. Nothing recorded (an import) of a run that
    /// is not there is nothing found.
    async fn read(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let kept = Some(Remote {
            id: id.to_string(),
            attrs: prior.clone(),
        });
        match client
            .get("/api/2.2/jobs/runs/get", &[("run_id", id.to_string())])
            .await
        {
            Ok(_) => Ok(kept),
            Err(e) if e.is_not_found() || job_missing(&e) => {
                let job = str_attr(prior, "job_id").and_then(|j| j.parse::<i64>().ok());
                let Some(job) = job.filter(|_| prior.contains_key("run_id")) else {
                    return Ok(None);
                };
                match get_job(&client, job).await.map_err(err)? {
                    Some(_) => {
                        tracing::info!(target: "brickform::run", "run {id} of job {job} is no longer kept by the workspace (runs are removed 60 days after they end); its record stays");
                        Ok(kept)
                    }
                    None => Ok(None),
                }
            }
            Err(e) => Err(err(e)),
        }
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        _config: &Object,
    ) -> ProviderResult<Remote> {
        // Every configurable attribute forces a new run; only timeout_seconds lands here.
        self.read(ctx, id, prior)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("run {id} no longer exists")))
    }

    async fn delete(&self, _ctx: &OpContext, _id: &str, _prior: &Object) -> ProviderResult<()> {
        Ok(())
    }
}
