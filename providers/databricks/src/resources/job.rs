//! `databricks_job`: a Jobs API 2.2 job with its whole settings.
//!
//! Tasks are keyed by `task_key`, so reordering them in the file changes nothing; updates
//! send the complete settings with `jobs/reset`, so what the configuration says is what the
//! job holds; reads follow `next_page_token` for jobs with more than 100 tasks. The job
//! carries a `brickform` tag naming its owner (state lineage and address), stripped on
//! read, so an interrupted create can be found again.

use super::wire::{Renames, absent_is_unset, from_wire, to_wire};
use super::{err, str_attr};
use crate::Shared;
use crate::client::{ApiError, Client};
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, ErrorKind, OpContext, ProviderError, ProviderResult, Remote,
    ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

/// The ownership tag's key.
pub const OWNER_TAG: &str = "brickform";

const RENAMES: Renames = &[
    ("", "task", "tasks"),
    ("", "parameter", "parameters"),
    ("", "job_cluster", "job_clusters"),
    ("", "environment", "environments"),
    ("task", "library", "libraries"),
    ("task", "depends_on", "depends_on"),
    ("health", "rule", "rules"),
    ("git_source", "url", "git_url"),
    ("git_source", "provider", "git_provider"),
    ("git_source", "branch", "git_branch"),
    ("git_source", "tag", "git_tag"),
    ("git_source", "commit", "git_commit"),
];

fn s() -> AttrType {
    AttrType::String
}
fn n() -> AttrType {
    AttrType::Number
}
fn b() -> AttrType {
    AttrType::Bool
}
fn strings() -> AttrType {
    AttrType::List(Box::new(AttrType::String))
}
fn map() -> AttrType {
    AttrType::Map(Box::new(AttrType::String))
}

fn email_notifications() -> BlockType {
    BlockType::single(
        "email_notifications",
        Schema::new()
            .attr(Attribute::optional("on_start", strings()))
            .attr(Attribute::optional("on_success", strings()))
            .attr(Attribute::optional("on_failure", strings()))
            .attr(Attribute::optional(
                "on_duration_warning_threshold_exceeded",
                strings(),
            ))
            .attr(Attribute::optional(
                "on_streaming_backlog_exceeded",
                strings(),
            ))
            .attr(Attribute::optional("no_alert_for_skipped_runs", b()).server_default(false)),
    )
}

fn webhook_notifications() -> BlockType {
    let ids = |name: &'static str| {
        BlockType::list(name, Schema::new().attr(Attribute::required("id", s())))
    };
    BlockType::single(
        "webhook_notifications",
        Schema::new()
            .block(ids("on_start"))
            .block(ids("on_success"))
            .block(ids("on_failure"))
            .block(ids("on_duration_warning_threshold_exceeded"))
            .block(ids("on_streaming_backlog_exceeded")),
    )
}

fn notification_settings() -> BlockType {
    BlockType::single(
        "notification_settings",
        Schema::new()
            .attr(Attribute::optional("no_alert_for_skipped_runs", b()).server_default(false))
            .attr(Attribute::optional("no_alert_for_canceled_runs", b()).server_default(false)),
    )
}

fn health() -> BlockType {
    BlockType::single(
        "health",
        Schema::new().block(BlockType::list(
            "rule",
            Schema::new()
                .attr(Attribute::required("metric", s()))
                .attr(Attribute::required("op", s()))
                .attr(Attribute::required("value", n())),
        )),
    )
}

fn new_cluster() -> BlockType {
    BlockType::single(
        "new_cluster",
        Schema::new()
            .attr(Attribute::optional("spark_version", s()))
            .attr(Attribute::optional("node_type_id", s()))
            .attr(Attribute::optional("driver_node_type_id", s()))
            .attr(Attribute::optional("num_workers", n()))
            .attr(Attribute::optional("policy_id", s()))
            .attr(Attribute::optional("data_security_mode", s()))
            .attr(Attribute::optional("single_user_name", s()))
            .attr(Attribute::optional("runtime_engine", s()))
            .attr(Attribute::optional("spark_conf", map()))
            .attr(Attribute::optional("spark_env_vars", map()))
            .attr(Attribute::optional("custom_tags", map()))
            .block(BlockType::single(
                "autoscale",
                Schema::new()
                    .attr(Attribute::required("min_workers", n()))
                    .attr(Attribute::required("max_workers", n())),
            )),
    )
}

fn library() -> BlockType {
    BlockType::list(
        "library",
        Schema::new()
            .attr(Attribute::optional("whl", s()))
            .attr(Attribute::optional("jar", s()))
            .attr(Attribute::optional("requirements", s()))
            .block(BlockType::single(
                "pypi",
                Schema::new()
                    .attr(Attribute::required("package", s()))
                    .attr(Attribute::optional("repo", s())),
            ))
            .block(BlockType::single(
                "maven",
                Schema::new()
                    .attr(Attribute::required("coordinates", s()))
                    .attr(Attribute::optional("repo", s()))
                    .attr(Attribute::optional("exclusions", strings())),
            )),
    )
}

/// A task; `nested` tasks (inside `for_each_task`) cannot hold another `for_each_task`.
fn task_schema(nested: bool) -> Schema {
    let mut schema = Schema::new()
        .attr(Attribute::required("task_key", s()))
        .attr(Attribute::optional("description", s()))
        .attr(Attribute::optional("run_if", s()).server_default("ALL_SUCCESS").describe("ALL_SUCCESS (default), ALL_DONE, NONE_FAILED, AT_LEAST_ONE_SUCCESS, AT_LEAST_ONE_FAILED, ALL_FAILED"))
        .attr(Attribute::optional("existing_cluster_id", s()))
        .attr(Attribute::optional("job_cluster_key", s()))
        .attr(Attribute::optional("environment_key", s()))
        .attr(Attribute::optional("timeout_seconds", n()).server_default(0i64))
        .attr(Attribute::optional("max_retries", n()).server_default(0i64))
        .attr(Attribute::optional("min_retry_interval_millis", n()).server_default(0i64))
        .attr(Attribute::optional("retry_on_timeout", b()).server_default(false))
        .attr(Attribute::optional("disabled", b()).server_default(false))
        .block(BlockType::list("depends_on", Schema::new().attr(Attribute::required("task_key", s())).attr(Attribute::optional("outcome", s()))))
        .block(BlockType::single(
            "notebook_task",
            Schema::new()
                .attr(Attribute::required("notebook_path", s()))
                .attr(Attribute::optional("base_parameters", map()))
                .attr(Attribute::optional("source", s()))
                .attr(Attribute::optional("warehouse_id", s())),
        ))
        .block(BlockType::single(
            "pipeline_task",
            Schema::new().attr(Attribute::required("pipeline_id", s())).attr(Attribute::optional("full_refresh", b()).server_default(false)),
        ))
        .block(BlockType::single(
            "python_wheel_task",
            Schema::new()
                .attr(Attribute::required("package_name", s()))
                .attr(Attribute::required("entry_point", s()))
                .attr(Attribute::optional("parameters", strings()))
                .attr(Attribute::optional("named_parameters", map())),
        ))
        .block(BlockType::single(
            "spark_python_task",
            Schema::new().attr(Attribute::required("python_file", s())).attr(Attribute::optional("parameters", strings())).attr(Attribute::optional("source", s())),
        ))
        .block(BlockType::single(
            "sql_task",
            Schema::new()
                .attr(Attribute::required("warehouse_id", s()))
                .attr(Attribute::optional("parameters", map()))
                .block(BlockType::single("query", Schema::new().attr(Attribute::required("query_id", s()))))
                .block(BlockType::single("file", Schema::new().attr(Attribute::required("path", s())).attr(Attribute::optional("source", s())))),
        ))
        .block(BlockType::single(
            "condition_task",
            Schema::new().attr(Attribute::required("op", s())).attr(Attribute::required("left", s())).attr(Attribute::required("right", s())),
        ))
        .block(BlockType::single(
            "run_job_task",
            Schema::new().attr(Attribute::required("job_id", n())).attr(Attribute::optional("job_parameters", map())),
        ))
        .block(new_cluster())
        .block(library())
        .block(email_notifications())
        .block(webhook_notifications())
        .block(notification_settings())
        .block(health());
    if !nested {
        schema = schema.block(BlockType::single(
            "for_each_task",
            Schema::new()
                .attr(Attribute::required("inputs", s()))
                .attr(Attribute::optional("concurrency", n()))
                .block(BlockType::single("task", task_schema(true)).min(1)),
        ));
    }
    schema
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("A job (Jobs API 2.2) with its tasks, compute, triggers and notifications.")
        // Every update is a jobs/reset: what the configuration leaves out is reset.
        .whole_writes()
        .attr(Attribute::required("name", s()))
        .attr(Attribute::optional("description", s()))
        .attr(Attribute::optional("timeout_seconds", n()).server_default(0i64))
        .attr(Attribute::optional("max_concurrent_runs", n()).server_default(1i64))
        .attr(Attribute::optional("tags", map()))
        .attr(Attribute::optional("edit_mode", s()))
        .attr(Attribute::optional("budget_policy_id", s()))
        .attr(Attribute::optional("performance_target", s()))
        .attr(Attribute::computed("id", s()))
        .attr(Attribute::computed("url", s()))
        .attr(Attribute::computed("creator_user_name", s()))
        .attr(Attribute::computed("run_as_user_name", s()))
        .block(
            BlockType::keyed("task", "task_key", task_schema(false))
                .describe("A task; tasks are matched by task_key, so their order does not matter."),
        )
        .block(BlockType::keyed(
            "job_cluster",
            "job_cluster_key",
            Schema::new()
                .attr(Attribute::required("job_cluster_key", s()))
                .block(new_cluster()),
        ))
        .block(BlockType::keyed(
            "environment",
            "environment_key",
            Schema::new()
                .attr(Attribute::required("environment_key", s()))
                .block(BlockType::single(
                    "spec",
                    Schema::new()
                        .attr(Attribute::optional("environment_version", s()))
                        .attr(Attribute::optional("client", s()))
                        .attr(Attribute::optional("dependencies", strings())),
                )),
        ))
        .block(BlockType::keyed(
            "parameter",
            "name",
            Schema::new()
                .attr(Attribute::required("name", s()))
                .attr(Attribute::required("default", s())),
        ))
        .block(BlockType::single(
            "schedule",
            Schema::new()
                .attr(Attribute::required("quartz_cron_expression", s()))
                .attr(Attribute::required("timezone_id", s()))
                .attr(Attribute::optional("pause_status", s()).server_default("UNPAUSED")),
        ))
        .block(BlockType::single(
            "continuous",
            Schema::new().attr(Attribute::optional("pause_status", s()).server_default("UNPAUSED")),
        ))
        .block(BlockType::single(
            "trigger",
            Schema::new()
                .attr(Attribute::optional("pause_status", s()).server_default("UNPAUSED"))
                .block(BlockType::single(
                    "file_arrival",
                    Schema::new()
                        .attr(Attribute::required("url", s()))
                        .attr(Attribute::optional(
                            "min_time_between_triggers_seconds",
                            n(),
                        ))
                        .attr(Attribute::optional("wait_after_last_change_seconds", n())),
                ))
                .block(BlockType::single(
                    "table_update",
                    Schema::new()
                        .attr(Attribute::required("table_names", strings()))
                        .attr(Attribute::optional("condition", s()))
                        .attr(Attribute::optional(
                            "min_time_between_triggers_seconds",
                            n(),
                        ))
                        .attr(Attribute::optional("wait_after_last_change_seconds", n())),
                ))
                .block(BlockType::single(
                    "periodic",
                    Schema::new()
                        .attr(Attribute::required("interval", n()))
                        .attr(Attribute::required("unit", s())),
                )),
        ))
        .block(email_notifications())
        .block(webhook_notifications())
        .block(notification_settings())
        .block(health())
        .block(BlockType::single(
            "queue",
            Schema::new().attr(Attribute::required("enabled", b())),
        ))
        .block(BlockType::single(
            "run_as",
            Schema::new()
                .attr(Attribute::optional("user_name", s()))
                .attr(Attribute::optional("service_principal_name", s())),
        ))
        .block(BlockType::single(
            "git_source",
            Schema::new()
                .attr(Attribute::required("url", s()))
                .attr(Attribute::required("provider", s()))
                .attr(Attribute::optional("branch", s()))
                .attr(Attribute::optional("tag", s()))
                .attr(Attribute::optional("commit", s())),
        ))
}

pub struct Job {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Job {
    pub fn new(shared: Arc<Shared>) -> Self {
        Job {
            schema: schema(),
            shared,
        }
    }

    /// The settings to send: the configuration plus the ownership tag.
    fn settings(&self, ctx: &OpContext, config: &Object) -> Json {
        let mut settings = to_wire(&self.schema, config, RENAMES, "");
        let tags = settings.as_object_mut().and_then(|m| {
            m.entry("tags").or_insert_with(|| json!({}));
            m.get_mut("tags").and_then(Json::as_object_mut)
        });
        if let Some(tags) = tags {
            tags.insert(OWNER_TAG.into(), Json::String(owner(ctx)));
        }
        settings
    }

    fn remote(&self, job: &Json) -> Remote {
        let id = job.get("job_id").map(|v| v.to_string()).unwrap_or_default();
        let empty = json!({});
        let settings = job.get("settings").unwrap_or(&empty);
        let mut attrs = from_wire(&self.schema, settings, RENAMES, "");
        absent_is_unset(&self.schema, &mut attrs);
        // The ownership tag is brickform's bookkeeping, not the user's tags.
        if let Some(Value::Object(tags)) = attrs.get_mut("tags") {
            tags.shift_remove(OWNER_TAG);
            if tags.is_empty() {
                attrs.insert("tags".into(), Value::Null);
            }
        }
        attrs.insert("id".into(), Value::from(id.as_str()));
        for k in ["creator_user_name", "run_as_user_name"] {
            if let Some(v) = job.get(k) {
                attrs.insert(k.into(), Value::from_json(v));
            }
        }
        Remote { id, attrs }
    }
}

/// The owner a job or pipeline is tagged with: the state lineage and the address.
pub fn owner(ctx: &OpContext) -> String {
    format!("{}/{}", ctx.lineage, ctx.address)
}

fn job_id(id: &str) -> ProviderResult<i64> {
    id.parse()
        .map_err(|_| ProviderError::invalid(format!("a job id is a number, got {id:?}")))
}

/// Jobs answer a missing job with `400 INVALID_PARAMETER_VALUE "Job N does not exist."`;
/// the official SDK maps that to not-found, and so does brickform.
pub fn job_missing(e: &ApiError) -> bool {
    e.kind == ErrorKind::NotFound
        || (e.error_code == "INVALID_PARAMETER_VALUE" && e.message.contains("does not exist"))
}

/// The ids of jobs named `name` that carry the ownership tag `owner`.
async fn owned_jobs(client: &Client, name: &str, owner: &str) -> Result<Vec<i64>, ApiError> {
    let jobs = client
        .list_all("/api/2.2/jobs/list", &[("name", name.to_string())], "jobs")
        .await?;
    Ok(jobs
        .iter()
        .filter(|j| {
            j.pointer(&format!("/settings/tags/{OWNER_TAG}"))
                .and_then(Json::as_str)
                == Some(owner)
        })
        .filter_map(|j| j.get("job_id").and_then(Json::as_i64))
        .collect())
}

/// Reads a job with every page of its tasks, clusters, parameters and environments.
pub async fn get_job(client: &Client, id: i64) -> Result<Option<Json>, ApiError> {
    let mut query = vec![("job_id", id.to_string())];
    let mut job = match client.get("/api/2.2/jobs/get", &query).await {
        Ok(j) => j,
        Err(e) if job_missing(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut token = job
        .get("next_page_token")
        .and_then(Json::as_str)
        .map(str::to_string);
    let mut pages = 0;
    while let Some(t) = token.take().filter(|t| !t.is_empty()) {
        pages += 1;
        if pages > 1000 {
            break;
        }
        query.retain(|(k, _)| *k != "page_token");
        query.push(("page_token", t));
        let page = client.get("/api/2.2/jobs/get", &query).await?;
        for key in ["tasks", "job_clusters", "parameters", "environments"] {
            if let Some(more) = page
                .pointer(&format!("/settings/{key}"))
                .and_then(Json::as_array)
                .cloned()
                && let Some(settings) = job.get_mut("settings").and_then(Json::as_object_mut)
            {
                match settings.get_mut(key).and_then(Json::as_array_mut) {
                    Some(existing) => existing.extend(more),
                    None => {
                        settings.insert(key.into(), Json::Array(more));
                    }
                }
            }
        }
        token = page
            .get("next_page_token")
            .and_then(Json::as_str)
            .map(str::to_string);
    }
    Ok(Some(job))
}

#[async_trait]
impl ResourceKind for Job {
    fn type_name(&self) -> &'static str {
        "databricks_job"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn apply_presets(
        &self,
        p: &brickform_core::provider::Presets,
        config: &mut Object,
    ) -> Vec<brickform_core::provider::PresetChange> {
        let mut changes: Vec<_> = super::presets::name(p, config).into_iter().collect();
        changes.extend(super::presets::pause(
            config,
            &["schedule", "trigger", "continuous"],
        ));
        changes
    }

    fn production_findings(&self, config: &Object) -> Vec<brickform_core::provider::Finding> {
        super::presets::no_paused(config, &["schedule", "trigger", "continuous"])
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let (resp, uncertain) = client
            .post_create("/api/2.2/jobs/create", &self.settings(ctx, config))
            .await
            .map_err(err)?;
        let id = resp
            .get("job_id")
            .and_then(Json::as_i64)
            .ok_or_else(|| ProviderError::other("jobs/create returned no job_id"))?;
        if uncertain {
            // An earlier attempt may have created the job before its answer was lost: keep
            // this one and delete any other job carrying the same owner tag.
            let name = str_attr(config, "name").unwrap_or("").to_string();
            for other in owned_jobs(&client, &name, &owner(ctx)).await.map_err(err)? {
                if other != id {
                    match client
                        .post("/api/2.2/jobs/delete", &json!({ "job_id": other }))
                        .await
                    {
                        Ok(_) => {}
                        Err(e) if job_missing(&e) => {}
                        Err(e) => return Err(err(e)),
                    }
                }
            }
        }
        let job = get_job(&client, id).await.map_err(err)?.ok_or_else(|| {
            ProviderError::other(format!("job {id} was created but cannot be read"))
        })?;
        Ok(self.remote(&job))
    }

    async fn read(
        &self,
        _ctx: &OpContext,
        id: &str,
        _prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        Ok(get_job(&client, job_id(id)?)
            .await
            .map_err(err)?
            .map(|j| self.remote(&j)))
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let id = job_id(id)?;
        let body = json!({ "job_id": id, "new_settings": self.settings(ctx, config) });
        client
            .post("/api/2.2/jobs/reset", &body)
            .await
            .map_err(err)?;
        let job = get_job(&client, id)
            .await
            .map_err(err)?
            .ok_or_else(|| ProviderError::not_found(format!("job {id} no longer exists")))?;
        Ok(self.remote(&job))
    }

    async fn delete(&self, _ctx: &OpContext, id: &str, _prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        match client
            .post("/api/2.2/jobs/delete", &json!({ "job_id": job_id(id)? }))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if job_missing(&e) => Ok(()),
            Err(e) => Err(err(e)),
        }
    }

    async fn name_taken(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Option<String>> {
        let Some(name) = str_attr(config, "name") else {
            return Ok(None);
        };
        let client = self.shared.client()?;
        let jobs = client
            .list_all("/api/2.2/jobs/list", &[("name", name.to_string())], "jobs")
            .await
            .map_err(err)?;
        let mine = owner(ctx);
        Ok(jobs
            .iter()
            .find(|j| {
                j.pointer(&format!("/settings/tags/{OWNER_TAG}"))
                    .and_then(Json::as_str)
                    != Some(mine.as_str())
            })
            .map(|j| {
                let id = j.get("job_id").and_then(Json::as_i64).unwrap_or_default();
                let by = j
                    .get("creator_user_name")
                    .and_then(Json::as_str)
                    .map(|c| format!(", created by {c}"))
                    .unwrap_or_default();
                format!("job {id} \"{name}\"{by}")
            }))
    }

    fn natural_key(&self, ctx: &OpContext, config: &Object) -> Option<String> {
        // The name narrows the search (jobs/list filters by it); the tag decides.
        Some(format!(
            "{}\u{1f}{}",
            str_attr(config, "name").unwrap_or(""),
            owner(ctx)
        ))
    }

    async fn find_by_key(&self, _ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let (name, owner) = key.split_once('\u{1f}').unwrap_or(("", key));
        for id in owned_jobs(&client, name, owner).await.map_err(err)? {
            if let Some(full) = get_job(&client, id).await.map_err(err)? {
                return Ok(Some(self.remote(&full)));
            }
        }
        Ok(None)
    }
}
