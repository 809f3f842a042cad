//! `databricks_job`: a Jobs API 2.2 job with its whole settings.
//!
//! Tasks are keyed by `task_key`, so reordering them in the file changes nothing; updates
//! send the complete settings with `jobs/reset`, so what the configuration says is what the
//! job holds; reads follow `next_page_token` for jobs with more than 100 tasks. A refresh
//! of many jobs reads them from `jobs/list` with their tasks, 100 jobs a call (see
//! [`Job::read_listed`]). The job
//! carries a `brickform` tag naming its owner (state lineage, environment and address; see
//! `ownership`), stripped on read, so an interrupted create or a lost state entry can be
//! found again.

mod checks;
mod schema;
mod task_types;
use brickform_core::fan_out;
use checks::*;
pub use schema::schema;
use schema::*;
use task_types::TASK_TYPES;

use super::values;
use super::values::ty::{b, map, n, s, strings};
use super::wire::{Renames, absent_is_unset, from_wire, to_wire};
use super::{err, str_attr};
use crate::Shared;
use crate::client::{ApiError, Client, PageSize};
use async_trait::async_trait;
use brickform_core::diagnostics::did_you_mean_value;
use brickform_core::provider::Reference;
use brickform_core::provider::{
    Attribute, BlockType, ErrorKind, Existing, Finding, Normalize, OpContext, ProviderError,
    ProviderResult, Remote, ResourceKind, Schema, quoted_list,
};
use brickform_core::value::{Object, PathStep, Value, quote};
use serde_json::{Value as Json, json};
use std::sync::Arc;

pub use super::ownership::OWNER_TAG;
use super::ownership::{self, Tagged};

const RENAMES: Renames = &[
    ("", "task", "tasks"),
    ("", "parameter", "parameters"),
    ("", "job_cluster", "job_clusters"),
    ("", "environment", "environments"),
    ("task", "library", "libraries"),
    ("new_cluster", "cluster_mount_info", "cluster_mount_infos"),
    ("task", "depends_on", "depends_on"),
    ("git_source", "url", "git_url"),
    ("git_source", "provider", "git_provider"),
    ("git_source", "branch", "git_branch"),
    ("git_source", "tag", "git_tag"),
    ("git_source", "commit", "git_commit"),
];

/// `RunIf`.
const RUN_IF: &[&str] = &[
    "ALL_SUCCESS",
    "ALL_DONE",
    "NONE_FAILED",
    "AT_LEAST_ONE_SUCCESS",
    "AT_LEAST_ONE_FAILED",
    "ALL_FAILED",
];
/// What to do instead of `outcome` when the dependency is not a condition (`outcome` is
/// only the result a condition_task gives; the service refuses it elsewhere: "Outcomes can
/// only be specified for if/else condition dependencies").
fn use_run_if() -> String {
    format!(
        "to run this task when a dependency failed (or whatever it gave), set the task's run_if: \"AT_LEAST_ONE_FAILED\", \"ALL_DONE\" and the rest of {}",
        brickform_core::provider::quoted_list(RUN_IF)
    )
}

/// A depends_on `outcome` is "true" or "false", the result of a condition task.
/// A value that is one of those in another case is left to the allowed values' check,
/// which suggests it in its right case.
fn outcome_value(v: &str) -> Result<(), brickform_core::provider::Rejection> {
    if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") {
        return Ok(());
    }
    Err(brickform_core::provider::Rejection::new(format!(
        "{} is not an outcome: outcome is the result a condition_task dependency must give, \"true\" or \"false\"",
        quote(v)
    ))
    .hint(use_run_if()))
}

/// What the service calls a job created without a name.
const UNTITLED: &str = "Untitled";

/// Attributes only brickform reads: never sent, kept from the configuration or the prior
/// state on read.
const LOCAL: &[&str] = &["always_running", "control_run_state", "timeouts"];

/// The task a `for_each_task` runs for each input, if `task` is one.
fn for_each_inner(task: &Object) -> Option<&Object> {
    task.get("for_each_task")
        .and_then(Value::as_object)
        .and_then(|f| f.get("task"))
        .and_then(Value::as_object)
}

fn key(k: &str) -> PathStep {
    PathStep::Key(k.to_string())
}

fn known_str<'a>(o: &'a Object, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

/// Whether the job starts runs by itself: a schedule, trigger or continuous run (or one of
/// `triggers`) that is not paused.
fn starts_on_its_own(config: &Object) -> bool {
    let unpaused = |v: &Value| -> bool {
        let blocks: Vec<&Object> = match v {
            Value::Object(o) => vec![o],
            Value::List(items) => items.iter().filter_map(Value::as_object).collect(),
            _ => Vec::new(),
        };
        blocks
            .iter()
            .any(|b| known_str(b, "pause_status") != Some("PAUSED"))
    };
    ["schedule", "trigger", "continuous"]
        .iter()
        .any(|k| config.get(*k).is_some_and(unpaused))
        || list(config, "triggers").any(|(_, t)| known_str(t, "pause_status") != Some("PAUSED"))
}

/// What a task's run resets, when it runs a full refresh: its pipeline
/// (`pipeline_task.full_refresh`), tables of it (`full_refresh_selection`), or the pipelines
/// of the job it runs (`run_job_task.pipeline_params`, the same two settings); and which
/// tables are truncated, as the message says it.
fn full_refresh_of(task: &Object) -> Option<(String, &'static str)> {
    let of = |settings: &Object, whole: &str| {
        if settings.get("full_refresh").and_then(Value::as_bool) == Some(true) {
            return Some((whole.to_string(), "every table is"));
        }
        let tables: Vec<&str> = settings
            .get("full_refresh_selection")
            .and_then(Value::as_list)
            .unwrap_or(&[])
            .iter()
            .filter_map(Value::as_str)
            .collect();
        (!tables.is_empty()).then(|| {
            let quoted: Vec<String> = tables.iter().map(|t| quote(t)).collect();
            (
                format!("{} of {whole}", quoted.join(", ")),
                "those tables are",
            )
        })
    };
    if let Some(p) = single(task, "pipeline_task") {
        return of(p, "its pipeline");
    }
    let params = single(task, "run_job_task").and_then(|r| single(r, "pipeline_params"))?;
    of(params, "the pipelines of the job it runs")
}

/// The tasks of a job (or the task a for_each task runs) that run a full refresh, by key,
/// with what each resets (see [`full_refresh_of`]).
fn full_refresh_tasks(config: &Object) -> Vec<(String, (String, &'static str))> {
    let mut out = Vec::new();
    for (_, task) in list(config, "task") {
        let name = known_str(task, "task_key").unwrap_or("?").to_string();
        let inner = task
            .get("for_each_task")
            .and_then(Value::as_object)
            .and_then(|f| f.get("task"))
            .and_then(Value::as_object);
        if let Some(what) = full_refresh_of(task).or_else(|| inner.and_then(full_refresh_of)) {
            out.push((name, what));
        }
    }
    out
}

/// What a job's full-refresh tasks do on every run it starts by itself: a full refresh
/// resets the pipeline's streaming state and reprocesses its sources, and data no longer in
/// a source is lost (its tables are truncated first). One finding per task, each naming its
/// task, so a policy can allow one task and refuse another.
fn scheduled_full_refresh(config: &Object) -> Vec<brickform_core::plan::DataEffect> {
    if !starts_on_its_own(config) {
        return Vec::new();
    }
    full_refresh_tasks(config)
        .into_iter()
        .map(|(task, (what, truncated))| brickform_core::plan::DataEffect {
            kind: brickform_core::plan::DataImpactKind::FullRefresh,
            tables: None,
            message: format!(
                "task {} runs a full refresh of {what} on every run the job's schedule starts: streaming state is reset, {truncated} truncated and loaded again, and data no longer in the source is lost",
                quote(&task)
            ),
            details: [("task".to_string(), task)].into(),
            hint: Some(
                "leave full_refresh out of scheduled tasks and refresh once when needed (`brickform run PIPELINE --full-refresh`), or pause the schedule"
                    .into(),
            ),
        })
        .collect()
}

/// The objects of a list block, with their indexes.
fn list<'a>(o: &'a Object, block: &str) -> impl Iterator<Item = (usize, &'a Object)> {
    o.get(block)
        .and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.as_object().map(|o| (i, o)))
}

/// The key the one task of a job written in the deprecated single-task syntax gets.
const SINGLE_TASK_KEY: &str = "main";

/// The top-level fields of the deprecated single-task syntax a configuration sets, in
/// schema order.
fn single_task_set(config: &Object) -> Vec<&'static str> {
    let schema_names = task_types::single_task_types()
        .map(|t| t.name)
        .chain(SINGLE_TASK_SETTINGS.iter().copied());
    schema_names
        .filter(|k| match config.get(*k) {
            None | Some(Value::Null) => false,
            Some(Value::List(l)) => !l.is_empty(),
            Some(_) => true,
        })
        .collect()
}

/// The task settings the single-task syntax takes at the top level besides its task type.
const SINGLE_TASK_SETTINGS: &[&str] = &[
    "new_cluster",
    "existing_cluster_id",
    "library",
    "max_retries",
    "min_retry_interval_millis",
    "retry_on_timeout",
];

/// The `task { }` block a single-task configuration is the same as, for the warning: its
/// fields as written, an expression known only after apply as `…` (copy it from where it is).
fn single_task_rewrite(schema: &Schema, config: &Object, set: &[&str]) -> String {
    let mut out = format!("task {{\n  task_key = \"{SINGLE_TASK_KEY}\"\n");
    for k in set {
        if let Some(v) = config.get(*k) {
            write_field(schema, k, v, 1, &mut out);
        }
    }
    out.push('}');
    out
}

/// One attribute or block of a decoded configuration as HCL, at `depth`; unset ones are
/// left out.
fn write_field(schema: &Schema, name: &str, v: &Value, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    if let Some(block) = schema.block_type(name) {
        let items: Vec<&Object> = match v {
            Value::Object(o) => vec![o],
            Value::List(l) => l.iter().filter_map(Value::as_object).collect(),
            _ => Vec::new(),
        };
        for o in items {
            out.push_str(&format!("{pad}{name} {{\n"));
            for (k, inner) in o {
                write_field(&block.schema, k, inner, depth + 1, out);
            }
            out.push_str(&format!("{pad}}}\n"));
        }
        return;
    }
    match v {
        Value::Null => {}
        v if v.is_wholly_known() => out.push_str(&format!("{pad}{name} = {v}\n")),
        _ => out.push_str(&format!("{pad}{name} = …\n")),
    }
}

/// The single-task syntax: a warning at its first field with the rewrite; an error when
/// it is mixed with `task` blocks (the service takes one or the other).
fn check_single_task(schema: &Schema, config: &Object, out: &mut Vec<Finding>) {
    let set = single_task_set(config);
    let Some(first) = set.first() else {
        return;
    };
    let has_tasks = list(config, "task").next().is_some();
    if has_tasks {
        for k in &set {
            out.push(
                Finding::error(&[k], format!("{k} at the top level of a job with task blocks"))
                    .hint("a job is written either with task blocks or in the deprecated single-task syntax: move it into the task it belongs to"),
            );
        }
        return;
    }
    let single: Vec<&str> = task_types::single_task_types().map(|t| t.name).collect();
    if !set.iter().any(|k| single.contains(k)) {
        out.push(
            Finding::error(
                &[first],
                format!("{first} at the top level of a job without a task"),
            )
            .hint(format!(
                "add a task block, or one of {} beside it",
                single.join(", ")
            )),
        );
        return;
    }
    out.push(
        Finding::warning(
            &[first],
            "the single-task job syntax is deprecated; it is planned as the job with this one task",
        )
        .hint(format!(
            "write the job's task as a task block (the same job, so the plan stays empty):\n{}",
            single_task_rewrite(schema, config, &set)
        )),
    );
}

/// Rewrites the deprecated single-task syntax into the one-task job it stands for: the
/// top-level fields move into a task keyed [`SINGLE_TASK_KEY`], so what is sent, stored and
/// compared is that job, and a configuration rewritten by hand plans the same.
fn single_task_to_task(schema: &Schema, config: &mut Object) {
    let set = single_task_set(config);
    if set.is_empty() || list(config, "task").next().is_some() {
        return;
    }
    let Some(task_schema) = schema.block_type("task").map(|b| &b.schema) else {
        return;
    };
    let mut task = Object::default();
    absent_is_unset(task_schema, &mut task);
    task.insert("task_key".into(), Value::from(SINGLE_TASK_KEY));
    for k in set {
        if let Some(v) = config.get_mut(k) {
            let empty = match v {
                Value::List(_) => Value::List(Vec::new()),
                _ => Value::Null,
            };
            task.insert(k.to_string(), std::mem::replace(v, empty));
        }
    }
    config.insert("task".into(), Value::List(vec![Value::object(task)]));
}

/// Where a task's code says it comes from: `(task type, the object holding source)`.
const SOURCES: &[(&str, &[&str])] = &[
    ("notebook_task", &[]),
    ("spark_python_task", &[]),
    ("dbt_task", &[]),
    ("sql_task", &["file"]),
];

/// Code from Git needs the job's `git_source`: the service refuses a task whose `source` is
/// `GIT` in a job without one.
fn check_git_sources(config: &Object, out: &mut Vec<Finding>) {
    if config.get("git_source").is_some_and(|v| !v.is_null()) {
        return;
    }
    let mut tasks: Vec<(Vec<PathStep>, &Object)> = Vec::new();
    for (i, t) in list(config, "task") {
        let at = vec![key("task"), PathStep::Index(i)];
        if let Some(inner) = for_each_inner(t) {
            let mut p = at.clone();
            p.extend([key("for_each_task"), key("task")]);
            tasks.push((p, inner));
        }
        tasks.push((at, t));
    }
    for (at, task) in tasks {
        for (kind, inner) in SOURCES {
            let mut o = task.get(*kind).and_then(Value::as_object);
            let mut p = at.clone();
            p.push(key(kind));
            for step in *inner {
                o = o.and_then(|o| o.get(*step)).and_then(Value::as_object);
                p.push(key(step));
            }
            if o.and_then(|o| known_str(o, "source")) == Some("GIT") {
                p.push(key("source"));
                out.push(
                    Finding::error(&[], format!("{kind} takes its code from Git, and the job has no git_source"))
                        .at(p)
                        .hint("add a git_source block naming the repository, or set source = \"WORKSPACE\""),
                );
            }
        }
    }
}

/// The object of the single block `name` of `o`.
fn single<'a>(o: &'a Object, name: &str) -> Option<&'a Object> {
    o.get(name).and_then(Value::as_object)
}

fn single_mut<'a>(o: &'a mut Object, name: &str) -> Option<&'a mut Object> {
    match o.get_mut(name) {
        Some(Value::Object(b)) => Some(Arc::make_mut(b)),
        _ => None,
    }
}

/// The item of the keyed block `block` of `configured` with the key `item` has.
fn configured_item<'a>(
    configured: &'a Object,
    block: &str,
    key_name: &str,
    item: &Object,
) -> Option<&'a Object> {
    let k = known_str(item, key_name)?;
    list(configured, block)
        .map(|(_, o)| o)
        .find(|o| known_str(o, key_name) == Some(k))
}

/// Values the service derives where the job leaves them out, read as unset unless
/// `configured` (the configuration, or the state being refreshed) sets them: the source a
/// task's code is read from (GIT for a job with a git_source, WORKSPACE otherwise:
/// databricks/cli libs/testserver/jobs.go, setSourceIfNotSet) and a cluster's driver node
/// type (its workers': libs/testserver/clusters.go, clusterFixUps). They follow what they
/// derive from, so they are the service's to hold and never drift, and a job imported with
/// a configuration that leaves them out plans no change.
fn unset_derived(attrs: &mut Object, configured: &Object) {
    let source = if attrs.get("git_source").is_some_and(|g| !g.is_null()) {
        "GIT"
    } else {
        "WORKSPACE"
    };
    let none = Object::default();
    if let Some(Value::List(tasks)) = attrs.get_mut("task") {
        for t in tasks.iter_mut() {
            let Value::Object(t) = t else { continue };
            let ct = configured_item(configured, "task", "task_key", t).unwrap_or(&none);
            unset_derived_in_task(Arc::make_mut(t), ct, source);
            let inner_c = single(ct, "for_each_task")
                .and_then(|f| single(f, "task"))
                .unwrap_or(&none);
            if let Some(inner) =
                single_mut(Arc::make_mut(t), "for_each_task").and_then(|f| single_mut(f, "task"))
            {
                unset_derived_in_task(inner, inner_c, source);
            }
        }
    }
    if let Some(Value::List(clusters)) = attrs.get_mut("job_cluster") {
        for jc in clusters.iter_mut() {
            let Value::Object(jc) = jc else { continue };
            let cjc = configured_item(configured, "job_cluster", "job_cluster_key", jc);
            let cc = cjc.and_then(|c| single(c, "new_cluster")).unwrap_or(&none);
            if let Some(c) = single_mut(Arc::make_mut(jc), "new_cluster") {
                unset_derived_driver(c, cc);
            }
        }
    }
}

fn unset_derived_in_task(task: &mut Object, configured: &Object, source: &str) {
    for (kind, inner) in SOURCES {
        let mut have = single_mut(task, kind);
        let mut want = single(configured, kind);
        for step in *inner {
            have = have.and_then(|o| single_mut(o, step));
            want = want.and_then(|o| single(o, step));
        }
        let Some(have) = have else { continue };
        let set = want.is_some_and(|w| w.get("source").is_some_and(|v| !v.is_null()));
        if !set && known_str(have, "source") == Some(source) {
            have.insert("source".into(), Value::Null);
        }
    }
    if let Some(c) = single_mut(task, "new_cluster") {
        let none = Object::default();
        unset_derived_driver(c, single(configured, "new_cluster").unwrap_or(&none));
    }
}

fn unset_derived_driver(cluster: &mut Object, configured: &Object) {
    let set = configured
        .get("driver_node_type_id")
        .is_some_and(|v| !v.is_null());
    let workers = known_str(cluster, "node_type_id");
    if !set && workers.is_some() && known_str(cluster, "driver_node_type_id") == workers {
        cluster.insert("driver_node_type_id".into(), Value::Null);
    }
}

/// The page size of `jobs/list`: its largest page.
pub const LIST_PAGE: PageSize = PageSize::new("limit", "100");

pub struct Job {
    schema: Schema,
    shared: Arc<Shared>,
    /// The plan's lookups of jobs, answered from one listing (see `listed_for_plan`).
    listing: Arc<ownership::SharedListing>,
}

/// The listing of every job that a plan's lookups share (`jobs/list` with tasks).
const JOBS_LIST: ownership::ListCall = ownership::ListCall {
    path: "/api/2.2/jobs/list",
    items_key: "jobs",
    page: LIST_PAGE,
};

/// Where a job's tasks name other objects: the pipelines, jobs, notebooks, files,
/// warehouses and clusters they run (on), ids passed as a notebook's or the job's parameters (a job told
/// which job runs after it), and paths in a volume passed so.
const REFERENCES: &[Reference] = &[
    Reference::to("task.pipeline_task.pipeline_id", PIPELINES, "id"),
    Reference::to("task.run_job_task.job_id", &["databricks_job"], "id"),
    Reference::to(
        "task.notebook_task.notebook_path",
        &["databricks_notebook"],
        "path",
    ),
    Reference::to("task.notebook_task.base_parameters.*", RUNNABLE, "id"),
    Reference::to("parameter.default", RUNNABLE, "id").loose(),
    Reference::to(
        "task.notebook_task.base_parameters.*",
        &["databricks_volume"],
        "volume_path",
    )
    .prefix(),
    Reference::to("parameter.default", &["databricks_volume"], "volume_path").prefix(),
    Reference::to(
        "task.python_wheel_task.named_parameters.*",
        &["databricks_volume"],
        "volume_path",
    )
    .prefix(),
    Reference::to(
        "task.spark_python_task.python_file",
        &["databricks_workspace_file"],
        "path",
    ),
    Reference::to(
        "task.sql_task.warehouse_id",
        &["databricks_sql_endpoint"],
        "id",
    ),
    Reference::to("task.existing_cluster_id", &["databricks_cluster"], "id"),
    Reference::to(
        "task.sql_task.file.path",
        &["databricks_workspace_file"],
        "path",
    ),
    Reference::to(
        "task.notebook_task.warehouse_id",
        &["databricks_sql_endpoint"],
        "id",
    ),
];

const PIPELINES: &[&str] = &[
    "databricks_pipeline",
    "databricks_ingestion_pipeline",
    "databricks_ingestion_gateway",
];

const RUNNABLE: &[&str] = &[
    "databricks_job",
    "databricks_pipeline",
    "databricks_ingestion_pipeline",
];

impl Job {
    pub fn new(shared: Arc<Shared>) -> Self {
        Job {
            schema: schema(),
            shared,
            listing: Default::default(),
        }
    }

    /// The settings to send: the configuration plus the ownership tag.
    fn settings(&self, ctx: &OpContext, config: &Object) -> Json {
        let mut settings = to_wire(&self.schema, config, RENAMES, "");
        if let Some(m) = settings.as_object_mut() {
            for k in LOCAL {
                m.remove(*k);
            }
            ownership::tag_body(m, ctx);
        }
        settings
    }

    /// The job as brickform shows it. `run_as` naming the job's owner is the service's
    /// default and reads as unset, unless `configured` (the configuration or the state
    /// being refreshed) sets it: then it is shown as the service holds it.
    fn remote(&self, job: &Json, configured: &Object) -> Remote {
        let id = job.get("job_id").map(|v| v.to_string()).unwrap_or_default();
        let empty = json!({});
        let settings = job.get("settings").unwrap_or(&empty);
        let mut attrs = from_wire(&self.schema, settings, RENAMES, "");
        absent_is_unset(&self.schema, &mut attrs);
        // What the service holds in its own spelling of what was written reads as written.
        brickform_core::plan::diff::as_written(&self.schema, &mut attrs, configured);
        unset_derived(&mut attrs, configured);
        let sets_run_as = configured.get("run_as").is_some_and(|v| !v.is_null());
        if !sets_run_as
            && settings.get("run_as").is_some()
            && settings.get("run_as") == default_run_as(job).as_ref()
        {
            attrs.insert("run_as".into(), Value::Null);
        }
        ownership::strip(&mut attrs);
        for k in LOCAL {
            let kept = configured.get(*k).cloned().unwrap_or(Value::Null);
            attrs.insert(k.to_string(), kept);
        }
        attrs.insert("id".into(), Value::from(id.as_str()));
        // The job's page, as the Terraform provider forms it.
        attrs.insert(
            "url".into(),
            Value::from(self.shared.web_url(&format!("#job/{id}"))),
        );
        for k in ["creator_user_name", "run_as_user_name"] {
            if let Some(v) = job.get(k) {
                attrs.insert(k.into(), Value::from_json(v));
            }
        }
        Remote { id, attrs }
    }
}

impl Job {
    /// Reads many jobs from `jobs/list` with their tasks (`expand_tasks`), 100 jobs a call,
    /// instead of one `jobs/get` each; `None` when a listing cannot be had (the engine then
    /// reads them one by one).
    ///
    /// - The listing stops early once it has cost as many calls as the jobs not yet found
    ///   would cost read one by one, so a workspace of many more jobs than the state holds
    ///   costs at most about twice the single reads.
    /// - A listed job holds at most 100 tasks and job clusters, and says `has_more` when it
    ///   has more: it is read in full with `jobs/get`, as the SDK's `list` does.
    /// - A job the listing does not hold (deleted outside brickform, or not reached) is read
    ///   with `jobs/get`, which says whether it is gone: absence from a list is no proof.
    /// - A listed job carries no `run_as_user_name` ([`listed_run_as`]); a job whose
    ///   identity the listing does not tell is read with `jobs/get`.
    async fn read_listed(
        &self,
        client: &Client,
        items: &[(String, Object)],
    ) -> Result<Vec<ProviderResult<Option<Remote>>>, ApiError> {
        let mut wanted: std::collections::HashMap<i64, usize> = Default::default();
        for (i, (id, _)) in items.iter().enumerate() {
            if let Ok(n) = id.parse::<i64>() {
                wanted.insert(n, i);
            }
        }
        let mut listed: Vec<Option<Json>> = vec![None; items.len()];
        let (mut found, mut calls) = (0usize, 0usize);
        let mut token: Option<String> = None;
        loop {
            let mut query = vec![("expand_tasks", "true".to_string())];
            query.push((LIST_PAGE.param, LIST_PAGE.value.to_string()));
            if let Some(t) = &token {
                query.push(("page_token", t.clone()));
            }
            let page = client.get("/api/2.2/jobs/list", &query).await?;
            calls += 1;
            for job in page
                .get("jobs")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                let index = job
                    .get("job_id")
                    .and_then(Json::as_i64)
                    .and_then(|id| wanted.get(&id));
                if let Some(&i) = index
                    && listed[i].is_none()
                {
                    listed[i] = Some(job.clone());
                    found += 1;
                }
            }
            let next = page
                .get("next_page_token")
                .and_then(Json::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            let missing = wanted.len() - found;
            match next {
                // A server that hands back the token it was given would loop forever.
                Some(t) if missing > 0 && calls < missing && token.as_deref() != Some(&t) => {
                    token = Some(t)
                }
                _ => break,
            }
        }
        let mut out: Vec<Option<ProviderResult<Option<Remote>>>> = vec![None; items.len()];
        let mut to_get = Vec::new();
        for (i, ((id, prior), job)) in items.iter().zip(listed).enumerate() {
            let whole = job.filter(|j| j.get("has_more").and_then(Json::as_bool) != Some(true));
            match whole.map(|j| {
                let run_as = listed_run_as(&j, prior);
                (j, run_as)
            }) {
                Some((mut j, Some(run_as))) => {
                    j["run_as_user_name"] = Json::String(run_as);
                    out[i] = Some(Ok(Some(self.remote(&j, prior))));
                }
                _ => to_get.push((i, id.clone())),
            }
        }
        let gets = fan_out::bounded("reading jobs", to_get, GETS_IN_FLIGHT, |(i, id)| {
            let client = client.clone();
            async move {
                let read = match job_id(&id) {
                    Ok(n) => get_job(&client, n).await.map_err(err),
                    Err(e) => Err(e),
                };
                (i, read)
            }
        });
        for (i, read) in gets.await.into_iter().flatten() {
            let prior = &items[i].1;
            out[i] = Some(read.map(|j| j.map(|j| self.remote(&j, prior))));
        }
        Ok(out
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(ProviderError::other("the job read was lost"))))
            .collect())
    }
}

/// Whether `s` is a UUID: a service principal's application id, not a user name.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The identity a job runs as when nothing else is said: its owner, who is its creator
/// unless ownership was handed on. `jobs/reset` without `run_as` keeps the previous
/// identity instead of going back to this one, so an update whose configuration has no
/// `run_as` sends it.
fn default_run_as(job: &Json) -> Option<Json> {
    let owner = job.get("creator_user_name").and_then(Json::as_str)?;
    Some(if is_uuid(owner) {
        json!({ "service_principal_name": owner })
    } else {
        json!({ "user_name": owner })
    })
}

/// The name a job has on the service: the configured one, or what the service calls a job
/// without one.
fn job_name(config: &Object) -> &str {
    str_attr(config, "name").unwrap_or(UNTITLED)
}

fn job_id(id: &str) -> ProviderResult<i64> {
    id.parse()
        .map_err(|_| ProviderError::invalid(format!("a job id is a number, got {id:?}")))
}

/// Jobs answer a missing job with `400 INVALID_PARAMETER_VALUE "Job N does not exist."`.
/// The client already calls that not-found for jobs/get and runs/get (the official SDK's
/// overrides, `client::errors::sdk_override`); the writes (jobs/reset, jobs/delete) answer
/// with the same words, which the SDK leaves as bad input, so they are read here.
pub fn job_missing(e: &ApiError) -> bool {
    e.kind == ErrorKind::NotFound
        || (e.error_code == "INVALID_PARAMETER_VALUE" && e.message.contains("does not exist"))
}

/// How long apply waits for the runs `always_running` and `control_run_state` move, when
/// the `timeouts` block does not say (the Terraform provider's default).
const RUN_WAIT: std::time::Duration = std::time::Duration::from_secs(20 * 60);

/// The wait limit the configuration's `timeouts` block sets for `op` (`create`, `update`).
fn wait_limit(config: &Object, op: &str) -> std::time::Duration {
    config
        .get("timeouts")
        .and_then(Value::as_object)
        .and_then(|t| t.get(op))
        .and_then(Value::as_str)
        .and_then(values::parse_duration)
        .unwrap_or(RUN_WAIT)
}

/// A job's active runs.
async fn active_runs(client: &Client, id: i64) -> ProviderResult<Vec<i64>> {
    let runs = client
        .get(
            "/api/2.2/jobs/runs/list",
            &[("job_id", id.to_string()), ("active_only", "true".into())],
        )
        .await
        .map_err(err)?;
    Ok(runs
        .get("runs")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("run_id").and_then(Json::as_i64))
        .collect())
}

/// Sleeps before the next look at a run, or fails once `deadline` has passed.
async fn pause_until(deadline: std::time::Instant, attempt: u32, what: &str) -> ProviderResult<()> {
    if std::time::Instant::now() >= deadline {
        return Err(ProviderError::other(format!(
            "timed out waiting for {what} (raise the wait with timeouts {{ create = \"…\", update = \"…\" }})"
        )));
    }
    let step = std::time::Duration::from_millis((100u64 << attempt.min(4)).min(1_000));
    tokio::time::sleep(step).await;
    Ok(())
}

/// Cancels the job's active runs and waits until they have ended.
async fn cancel_runs(client: &Client, id: i64, deadline: std::time::Instant) -> ProviderResult<()> {
    for run in active_runs(client, id).await? {
        client
            .idempotent()
            .post("/api/2.2/jobs/runs/cancel", &json!({ "run_id": run }))
            .await
            .map_err(err)?;
    }
    let mut attempt = 0;
    while !active_runs(client, id).await?.is_empty() {
        pause_until(deadline, attempt, &format!("the runs of job {id} to end")).await?;
        attempt += 1;
    }
    Ok(())
}

/// Starts a run and waits until it runs (or has already ended well).
async fn start_and_wait(
    client: &Client,
    id: i64,
    deadline: std::time::Instant,
) -> ProviderResult<()> {
    // A token, so a repeated run-now (its answer lost) does not start a second run.
    let token = uuid::Uuid::new_v4().to_string();
    let run = crate::run::start_job_run(client, id, &[], Some(&token))
        .await
        .map_err(|e| ProviderError::other(format!("job {id}: starting its run: {e}")))?;
    let mut attempt = 0;
    loop {
        let got = client
            .get("/api/2.2/jobs/runs/get", &[("run_id", run.to_string())])
            .await
            .map_err(err)?;
        let state = |p: &str| {
            got.pointer(p)
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string()
        };
        match state("/state/life_cycle_state").as_str() {
            "RUNNING" => return Ok(()),
            "TERMINATED" if state("/state/result_state") == "SUCCESS" => return Ok(()),
            "TERMINATED" | "INTERNAL_ERROR" | "SKIPPED" => {
                return Err(ProviderError::other(format!(
                    "job {id}: run {run} ended {} {}: {}",
                    state("/state/life_cycle_state"),
                    state("/state/result_state"),
                    state("/state/state_message"),
                )));
            }
            _ => {}
        }
        pause_until(
            deadline,
            attempt,
            &format!("run {run} of job {id} to start"),
        )
        .await?;
        attempt += 1;
    }
}

/// What the job's runs do after a write, as the Terraform provider's lifecycle flags say:
/// `always_running` restarts the job's run (starts it after a create), `control_run_state`
/// cancels a continuous job's active run on update so the service starts one with the new
/// settings. `op` is `create` or `update`, whose wait limit applies.
async fn control_runs(client: &Client, id: i64, config: &Object, op: &str) -> ProviderResult<()> {
    let flag = |k: &str| config.get(k).and_then(Value::as_bool) == Some(true);
    let deadline = std::time::Instant::now() + wait_limit(config, op);
    if flag("always_running") {
        if op == "update" {
            cancel_runs(client, id, deadline).await?;
        }
        return start_and_wait(client, id, deadline).await;
    }
    if flag("control_run_state") && op == "update" {
        cancel_runs(client, id, deadline).await?;
    }
    Ok(())
}

/// The jobs named `name` (the list filter is exact, case-insensitive), without their tasks.
async fn named_jobs(client: &Client, name: &str) -> Result<Vec<Json>, ApiError> {
    client
        .list_all(
            "/api/2.2/jobs/list",
            &[("name", name.to_string())],
            "jobs",
            Some(LIST_PAGE),
        )
        .await
}

/// The ownership tag a listed or read job carries, as written.
fn tag_of(job: &Json) -> Option<&str> {
    ownership::tag_of(job, Job::TAGS)
}

/// How messages name a job: `job 123 "nightly"`.
fn what(job: &Json) -> String {
    let id = job.get("job_id").and_then(Json::as_i64).unwrap_or_default();
    let name = job
        .pointer("/settings/name")
        .and_then(Json::as_str)
        .unwrap_or("Untitled");
    format!("job {id} \"{name}\"")
}

/// The ids of jobs named `name` that carry the ownership tag `owner`.
async fn owned_jobs(client: &Client, name: &str, owner: &str) -> Result<Vec<i64>, ApiError> {
    Ok(named_jobs(client, name)
        .await?
        .iter()
        .filter(|j| tag_of(j) == Some(owner))
        .filter_map(|j| j.get("job_id").and_then(Json::as_i64))
        .collect())
}

/// Jobs are found by name and ownership tag; a listed job carries its tags.
#[async_trait]
impl Tagged for Job {
    const TAGS: &'static str = "/settings/tags";
    const LISTED_WITH_TAGS: bool = true;

    async fn listed(&self, client: &Client, name: &str) -> ProviderResult<Vec<Json>> {
        named_jobs(client, name).await.map_err(err)
    }
    /// From a listing of every job shared by the plan's lookups; by name in a workspace of
    /// many jobs.
    async fn listed_for_plan(&self, client: &Client, name: &str) -> ProviderResult<Vec<Json>> {
        // The list call's name filter: exact, ignoring case.
        let lower = name.to_lowercase();
        let named = |j: &Json| {
            j.pointer("/settings/name")
                .and_then(Json::as_str)
                .is_some_and(|n| n.to_lowercase() == lower)
        };
        self.listing
            .find_or(self.shared.plan(), client, &JOBS_LIST, named, || {
                self.listed(client, name)
            })
            .await
    }
    async fn full(&self, client: &Client, listed: &Json) -> ProviderResult<Option<Json>> {
        match listed.get("job_id").and_then(Json::as_i64) {
            Some(id) => get_job(client, id).await.map_err(err),
            None => Ok(None),
        }
    }
    fn remote(&self, full: &Json) -> Option<Remote> {
        Some(Job::remote(self, full, &Object::default()))
    }
    fn what(&self, full: &Json) -> String {
        what(full)
    }
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

/// Below this many jobs a refresh reads them one by one: a listing starts paying off only
/// when it answers for several.
const LIST_READ_MIN: usize = 3;

/// Reads at most this many jobs at once where a listing leaves some to `jobs/get`.
const GETS_IN_FLIGHT: usize = 10;

/// The identity a listed job runs as. `jobs/list` answers a `BaseJob`, which has no
/// `run_as_user_name`; the settings say it when they name `run_as`. Otherwise the job runs
/// as its owner, and the value recorded before still holds when it was the owner too (the
/// creator). `None` when neither tells: the job is read with `jobs/get`.
fn listed_run_as(job: &Json, prior: &Object) -> Option<String> {
    if let Some(v) = job.get("run_as_user_name").and_then(Json::as_str) {
        return Some(v.to_string());
    }
    if let Some(r) = job.pointer("/settings/run_as") {
        return r
            .get("user_name")
            .or_else(|| r.get("service_principal_name"))
            .and_then(Json::as_str)
            .map(str::to_string);
    }
    let recorded = str_attr(prior, "run_as_user_name")?;
    let creator = job.get("creator_user_name").and_then(Json::as_str)?;
    (recorded == creator).then(|| recorded.to_string())
}

/// A job is run with `brickform run`: `run-now`, then its tasks as they end.
#[async_trait]
impl super::DatabricksKind for Job {
    fn runner(&self) -> Option<Arc<dyn crate::run::Runner>> {
        Some(Arc::new(crate::run::JobRunner))
    }

    /// Every job with its tasks (`expand_tasks`), so what the jobs run is known from the
    /// listing.
    async fn listing(
        &self,
        client: &Client,
        _scope: &crate::resources::adoption::Scope<'_>,
    ) -> Option<ProviderResult<Vec<crate::resources::adoption::Listed>>> {
        let jobs = crate::resources::adoption::list(
            client,
            "/api/2.2/jobs/list",
            &[("expand_tasks", "true".to_string())],
            "jobs",
            Some(LIST_PAGE),
        )
        .await;
        Some(jobs.map(|jobs| {
            jobs.iter()
                .map(|j| {
                    let remote = self.remote(j, &Object::default());
                    let text = |p: &str| j.pointer(p).and_then(Json::as_str).map(str::to_string);
                    crate::resources::adoption::Listed {
                        id: remote.id.clone(),
                        name: text("/settings/name").unwrap_or_default(),
                        catalog: None,
                        creator: text("/creator_user_name"),
                        tags: string_map(j.pointer("/settings/tags")),
                        attrs: Some(remote.attrs),
                    }
                })
                .collect()
        }))
    }

    /// The job as read, its tasks written in the order they run (tasks are compared by
    /// key, so the order is the reader's).
    async fn adoption(
        &self,
        _client: &Client,
        remote: &Remote,
        _adopted: &[brickform_core::location::Location],
    ) -> ProviderResult<crate::resources::adoption::Adoption> {
        let mut values = remote.attrs.clone();
        if let Some(Value::List(tasks)) = values.get_mut("task") {
            in_run_order(tasks);
        }
        Ok(crate::resources::adoption::Adoption { values, file: None })
    }
}

/// Orders tasks so each comes after the tasks it depends on, keeping the given order where
/// nothing decides it; tasks in a cycle (refused by the service) keep theirs, at the end.
fn in_run_order(tasks: &mut Vec<Value>) {
    let key = |t: &Value| {
        t.as_object()
            .and_then(|o| o.get("task_key"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let needs = |t: &Value| -> Vec<String> {
        match t.as_object().and_then(|o| o.get("depends_on")) {
            Some(Value::List(deps)) => deps
                .iter()
                .filter_map(|d| d.as_object()?.get("task_key")?.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    let keys: std::collections::HashSet<String> = tasks.iter().map(key).collect();
    let mut left = std::mem::take(tasks);
    let mut placed: std::collections::HashSet<String> = Default::default();
    while !left.is_empty() {
        let ready = left.iter().position(|t| {
            needs(t)
                .iter()
                .all(|d| placed.contains(d) || !keys.contains(d))
        });
        let Some(i) = ready else {
            tasks.append(&mut left);
            return;
        };
        let t = left.remove(i);
        placed.insert(key(&t));
        tasks.push(t);
    }
}

/// A JSON object of strings as a map (tags).
pub(crate) fn string_map(j: Option<&Json>) -> std::collections::BTreeMap<String, String> {
    j.and_then(Json::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

#[async_trait]
impl ResourceKind for Job {
    fn references(&self) -> &'static [Reference] {
        REFERENCES
    }

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
        // A job without a name is the service's "Untitled": a developer's is told apart
        // by the prefix like any other.
        if config.get("name").is_none_or(Value::is_null) {
            config.insert("name".into(), Value::from(UNTITLED));
        }
        let mut changes: Vec<_> = super::presets::name(p, config).into_iter().collect();
        changes.extend(super::presets::pause(
            config,
            &["schedule", "trigger", "continuous", "triggers"],
        ));
        changes
    }

    fn production_findings(&self, config: &Object) -> Vec<brickform_core::provider::Finding> {
        super::presets::no_paused(config, &["schedule", "trigger", "continuous", "triggers"])
    }

    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = check_tasks(config);
        check_job(&self.schema, config, &mut out);
        out
    }

    async fn data_impact(
        &self,
        _ctx: &OpContext,
        change: &brickform_core::provider::PlannedChange<'_>,
    ) -> Vec<brickform_core::plan::DataEffect> {
        change.after.map(scheduled_full_refresh).unwrap_or_default()
    }

    fn prepare_config(
        &self,
        config: &mut Object,
        _base_dir: &std::path::Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        single_task_to_task(&self.schema, config);
        Ok(())
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
            let name = job_name(config).to_string();
            let tag = ownership::value(ctx);
            for other in owned_jobs(&client, &name, &tag).await.map_err(err)? {
                if other != id {
                    match client
                        .idempotent()
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
        let remote = self.remote(&job, config);
        // The job exists whatever its run does: a run that does not start fails the
        // create with the job kept.
        control_runs(&client, id, config, "create")
            .await
            .map_err(|e| e.made(remote.clone()))?;
        Ok(remote)
    }

    async fn read(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        Ok(get_job(&client, job_id(id)?)
            .await
            .map_err(err)?
            .map(|j| self.remote(&j, prior)))
    }

    /// As `import` reads it (a read with no prior), with the ownership tag the job carries.
    async fn import_existing(
        &self,
        _ctx: &OpContext,
        id: &str,
    ) -> ProviderResult<Option<Existing>> {
        let client = self.shared.client()?;
        Ok(get_job(&client, job_id(id)?)
            .await
            .map_err(err)?
            .map(|j| ownership::existing(self, &j, self.remote(&j, &Object::default()), false)))
    }

    /// Many jobs from `jobs/list`, 100 a call ([`Job::read_listed`]).
    async fn read_many(
        &self,
        _ctx: &OpContext,
        items: &[(String, Object)],
    ) -> Option<Vec<ProviderResult<Option<Remote>>>> {
        if items.len() < LIST_READ_MIN {
            return None;
        }
        let client = self.shared.client().ok()?;
        self.read_listed(&client, items).await.ok()
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let id = job_id(id)?;
        let mut settings = self.settings(ctx, config);
        if config.get("run_as").is_none_or(Value::is_null) {
            // Back to the owner: the service would keep whatever identity the job had. Sent
            // only when the job runs as someone else, since only admins may name another
            // user and a job may be updated by someone other than its creator.
            let current = match (
                str_attr(prior, "creator_user_name"),
                str_attr(prior, "run_as_user_name"),
            ) {
                (Some(c), Some(r)) => json!({ "creator_user_name": c, "run_as_user_name": r }),
                _ => get_job(&client, id).await.map_err(err)?.ok_or_else(|| {
                    ProviderError::not_found(format!("job {id} no longer exists"))
                })?,
            };
            let runs_as = current.get("run_as_user_name").and_then(Json::as_str);
            if runs_as.is_some()
                && runs_as != current.get("creator_user_name").and_then(Json::as_str)
            {
                let run_as = default_run_as(&current).ok_or_else(|| {
                    ProviderError::other(format!(
                        "job {id} runs as {} and has no creator to go back to; set run_as in the configuration",
                        runs_as.unwrap_or_default()
                    ))
                })?;
                settings["run_as"] = run_as;
            }
        }
        let body = json!({ "job_id": id, "new_settings": settings });
        client
            .idempotent()
            .post("/api/2.2/jobs/reset", &body)
            .await
            .map_err(err)?;
        let job = get_job(&client, id)
            .await
            .map_err(err)?
            .ok_or_else(|| ProviderError::not_found(format!("job {id} no longer exists")))?;
        control_runs(&client, id, config, "update").await?;
        Ok(self.remote(&job, config))
    }

    async fn delete(&self, _ctx: &OpContext, id: &str, _prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        match client
            .idempotent()
            .post("/api/2.2/jobs/delete", &json!({ "job_id": job_id(id)? }))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if job_missing(&e) => Ok(()),
            Err(e) => Err(err(e)),
        }
    }

    async fn name_taken(
        &self,
        ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Option<Existing>> {
        let Some(name) = str_attr(config, "name") else {
            return Ok(None);
        };
        let client = self.shared.client()?;
        let mine = ownership::value(ctx);
        // The listing carries the settings' tags and the creator: enough to say whose it is.
        Ok(self
            .listed_for_plan(&client, name)
            .await?
            .iter()
            .find(|j| tag_of(j) != Some(mine.as_str()))
            .map(|j| ownership::existing(self, j, Job::remote(self, j, &Object::default()), false)))
    }

    /// Every job of the configured name, with the ownership tag it carries and its creator:
    /// names are not unique, so a job of the same name is not in the way of a create.
    async fn find_existing(
        &self,
        _ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<Existing>> {
        let client = self.shared.client()?;
        ownership::find_existing(self, &client, job_name(config), false).await
    }

    fn natural_key(&self, ctx: &OpContext, config: &Object) -> Option<String> {
        Some(ownership::key(job_name(config), ctx))
    }

    /// The jobs' listing its creates' lookups share, started before their turn.
    fn lookups_ahead(&self, _ctx: &OpContext) -> Option<brickform_core::provider::Ahead> {
        let client = self.shared.client().ok()?;
        Some(self.listing.ahead(self.shared.plan(), client, &JOBS_LIST))
    }

    async fn find_by_key(&self, _ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let (name, tag) = ownership::split_key(key).unwrap_or(("", key));
        ownership::find_by_key(self, &client, name, tag).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::decoded;
    use super::*;

    #[test]
    fn what_the_service_derives_reads_as_unset_unless_configured() {
        let schema = schema();
        let read = |settings: Json, configured: Json| {
            let mut attrs = from_wire(&schema, &settings, RENAMES, "");
            let configured = from_wire(&schema, &configured, RENAMES, "");
            unset_derived(&mut attrs, &configured);
            to_wire(&schema, &attrs, RENAMES, "")
        };
        let cluster = json!({"node_type_id": "i3.xlarge", "driver_node_type_id": "i3.xlarge"});
        let answered = json!({
            "git_source": {"git_url": "u", "git_provider": "gitHub"},
            "job_clusters": [{"job_cluster_key": "k", "new_cluster": cluster}],
            "tasks": [
                {"task_key": "n", "notebook_task": {"notebook_path": "n", "source": "GIT"},
                 "new_cluster": cluster},
                {"task_key": "e", "for_each_task": {"inputs": "[1]", "task": {"task_key": "e_i",
                    "spark_python_task": {"python_file": "p.py", "source": "GIT"}}}},
                {"task_key": "w", "notebook_task": {"notebook_path": "/w", "source": "WORKSPACE"}},
                {"task_key": "d", "new_cluster": {"node_type_id": "i3.xlarge",
                    "driver_node_type_id": "r5.xlarge"}, "notebook_task": {"notebook_path": "d"}},
            ],
        });
        let got = read(answered.clone(), json!({}));
        assert_eq!(got.pointer("/tasks/0/notebook_task/source"), None);
        assert_eq!(
            got.pointer("/tasks/0/new_cluster/driver_node_type_id"),
            None
        );
        assert_eq!(
            got.pointer("/tasks/1/for_each_task/task/spark_python_task/source"),
            None
        );
        assert_eq!(
            got.pointer("/job_clusters/0/new_cluster/driver_node_type_id"),
            None
        );
        // Not what the service derives: a workspace notebook in a Git job, another driver.
        assert_eq!(got["tasks"][2]["notebook_task"]["source"], "WORKSPACE");
        assert_eq!(
            got["tasks"][3]["new_cluster"]["driver_node_type_id"],
            "r5.xlarge"
        );
        // Configured, it reads as the service holds it.
        let configured = json!({"tasks": [{"task_key": "n",
            "notebook_task": {"notebook_path": "n", "source": "GIT"},
            "new_cluster": {"node_type_id": "i3.xlarge", "driver_node_type_id": "i3.xlarge"}}]});
        let got = read(answered, configured);
        assert_eq!(got["tasks"][0]["notebook_task"]["source"], "GIT");
        assert_eq!(
            got["tasks"][0]["new_cluster"]["driver_node_type_id"],
            "i3.xlarge"
        );
    }

    #[test]
    fn adopted_tasks_are_written_in_the_order_they_run() {
        let task = |k: &str, deps: &[&str]| {
            Value::from_json(&json!({
                "task_key": k,
                "depends_on": deps.iter().map(|d| json!({"task_key": d})).collect::<Vec<_>>(),
            }))
        };
        let keys = |tasks: &[Value]| -> Vec<String> {
            tasks
                .iter()
                .map(|t| {
                    t.as_object().unwrap()["task_key"]
                        .as_str()
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        // As the service keys them: alphabetically.
        let mut tasks = vec![
            task("a_silver", &["ingest"]),
            task("b_gold", &["a_silver"]),
            task("ingest", &[]),
            task("report", &["b_gold", "gone"]),
        ];
        in_run_order(&mut tasks);
        assert_eq!(keys(&tasks), ["ingest", "a_silver", "b_gold", "report"]);
        let mut cycle = vec![task("x", &["y"]), task("y", &["x"]), task("z", &[])];
        in_run_order(&mut cycle);
        assert_eq!(keys(&cycle), ["z", "x", "y"]);
    }
    use brickform_core::provider::FindingLevel;

    fn findings(set: Json) -> Vec<Finding> {
        let schema = schema();
        let config = decoded(&schema, set);
        let mut out = check_tasks(&config);
        check_job(&schema, &config, &mut out);
        out
    }

    #[test]
    fn a_scheduled_full_refresh_is_named_as_what_it_does_to_data() {
        let job = |schedule: Json, full_refresh: bool| {
            let mut j = json!({"name": "j", "task": [
                {"task_key": "load", "pipeline_task": {"pipeline_id": "p", "full_refresh": full_refresh}},
                {"task_key": "each", "for_each_task": {"inputs": "[1]", "task":
                    {"task_key": "inner", "pipeline_task": {"pipeline_id": "q", "full_refresh": full_refresh}}}},
            ]});
            if !schedule.is_null() {
                j["schedule"] = schedule;
            }
            decoded(&schema(), j)
        };
        let cron = |pause: &str| json!({"quartz_cron_expression": "0 0 * * * ?", "timezone_id": "UTC", "pause_status": pause});
        let found = scheduled_full_refresh(&job(cron("UNPAUSED"), true));
        let tasks: Vec<&str> = found.iter().map(|f| f.details["task"].as_str()).collect();
        assert_eq!(tasks, ["load", "each"], "one finding per task: {found:?}");
        for (f, task) in found.iter().zip(&tasks) {
            assert_eq!(f.kind, brickform_core::plan::DataImpactKind::FullRefresh);
            assert!(
                f.message
                    .starts_with(&format!("task \"{task}\" runs a full refresh")),
                "{}",
                f.message
            );
            assert!(f.message.contains("data no longer in the source is lost"));
        }
        assert!(scheduled_full_refresh(&job(cron("PAUSED"), true)).is_empty());
        assert!(
            scheduled_full_refresh(&job(Json::Null, true)).is_empty(),
            "run by hand only"
        );
        assert!(scheduled_full_refresh(&job(cron("UNPAUSED"), false)).is_empty());
        // A selection of tables, and the pipelines of a job a task runs, are reset too.
        let mut j = json!({"name": "j", "schedule": cron("UNPAUSED"), "task": [
            {"task_key": "some", "pipeline_task": {"pipeline_id": "p", "full_refresh_selection": ["a", "b"]}},
            {"task_key": "other", "run_job_task": {"job_id": 1, "pipeline_params": {"full_refresh": true}}},
            {"task_key": "picked", "run_job_task": {"job_id": 1, "pipeline_params": {"full_refresh_selection": ["c"]}}},
            {"task_key": "plain", "run_job_task": {"job_id": 1, "pipeline_params": {"full_refresh": false}}},
        ]});
        let found = scheduled_full_refresh(&decoded(&schema(), j.take()));
        let said: Vec<&str> = found.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(
            said[0]
                .starts_with("task \"some\" runs a full refresh of \"a\", \"b\" of its pipeline"),
            "{}",
            said[0]
        );
        assert!(
            said[0].contains("those tables are truncated"),
            "{}",
            said[0]
        );
        assert!(
            said[1].starts_with(
                "task \"other\" runs a full refresh of the pipelines of the job it runs"
            ),
            "{}",
            said[1]
        );
        assert!(
            said[2].starts_with("task \"picked\" runs a full refresh of \"c\" of the pipelines"),
            "{}",
            said[2]
        );
    }

    #[test]
    fn outcome_is_refused_on_a_dependency_that_is_not_a_condition() {
        let job = |outcome: &str| {
            json!({"name": "j", "task": [
                {"task_key": "check", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}},
                {"task_key": "load", "notebook_task": {"notebook_path": "/n"}},
                {"task_key": "after", "notebook_task": {"notebook_path": "/n"},
                 "depends_on": [{"task_key": "check", "outcome": "true"},
                                {"task_key": "load", "outcome": outcome}]},
            ]})
        };
        let found = findings(job("false"));
        let outcome: Vec<&Finding> = found
            .iter()
            .filter(|f| f.message.contains("outcome"))
            .collect();
        assert_eq!(outcome.len(), 1, "{found:?}");
        let f = outcome[0];
        assert_eq!(f.level, FindingLevel::Error);
        assert!(
            f.message
                .contains("\"load\", which is not a condition_task"),
            "{}",
            f.message
        );
        assert_eq!(
            f.path,
            vec![
                key("task"),
                PathStep::Index(2),
                key("depends_on"),
                PathStep::Index(1),
                key("outcome")
            ]
        );
        let hint = f.hint.as_deref().unwrap_or_default();
        assert!(
            hint.contains("run_if") && hint.contains("AT_LEAST_ONE_FAILED"),
            "{hint}"
        );
        // A value that is no outcome says the same, not "did you mean \"false\"".
        let r = outcome_value("failed").unwrap_err();
        assert!(
            r.hint
                .as_deref()
                .unwrap_or_default()
                .contains("AT_LEAST_ONE_FAILED")
        );
        assert!(
            outcome_value("True").is_ok(),
            "case is the allowed values' to fix"
        );
    }

    #[test]
    fn the_single_task_syntax_becomes_a_task_keyed_main() {
        let schema = schema();
        let mut config = decoded(
            &schema,
            json!({"name": "j", "notebook_task": {"notebook_path": "/n"},
                   "new_cluster": {"num_workers": 1}, "library": [{"jar": "/a.jar"}],
                   "max_retries": 2}),
        );
        single_task_to_task(&schema, &mut config);
        let task = config["task"].as_list().unwrap()[0].as_object().unwrap();
        assert_eq!(task["task_key"], Value::from("main"));
        assert_eq!(task["max_retries"], Value::from(2i64));
        assert!(task["notebook_task"].as_object().is_some());
        assert_eq!(task["library"].as_list().map(<[Value]>::len), Some(1));
        // The task is shaped as a decoded task block: every attribute present.
        assert_eq!(task["run_if"], Value::Null);
        assert_eq!(config["notebook_task"], Value::Null);
        assert_eq!(config["library"], Value::List(Vec::new()));
        // What is sent is the one-task job.
        let wire = to_wire(&schema, &config, RENAMES, "");
        assert_eq!(wire["tasks"][0]["libraries"][0]["jar"], "/a.jar");
        assert!(wire.get("notebook_task").is_none());
    }

    #[test]
    fn the_single_task_syntax_warns_with_its_rewrite_and_refuses_mixing() {
        let f = findings(
            json!({"spark_python_task": {"python_file": "a.py"}, "retry_on_timeout": true}),
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].level, FindingLevel::Warning);
        let hint = f[0].hint.clone().unwrap_or_default();
        assert!(hint.contains("python_file = \"a.py\""), "{hint}");
        assert!(hint.contains("retry_on_timeout = true"), "{hint}");
        let f = findings(json!({"max_retries": 1,
            "task": [{"task_key": "t", "notebook_task": {"notebook_path": "/n"}}]}));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].level, FindingLevel::Error);
        let f = findings(json!({"new_cluster": {"num_workers": 1}}));
        assert!(f[0].message.contains("without a task"), "{f:?}");
    }

    #[test]
    fn a_sql_task_runs_one_thing_and_control_run_state_needs_continuous() {
        let sql = |forms: Json| {
            let mut t = json!({"task_key": "t", "sql_task": {"warehouse_id": "w"}});
            for (k, v) in forms.as_object().unwrap() {
                t["sql_task"][k] = v.clone();
            }
            findings(json!({"task": [t]}))
        };
        assert!(sql(json!({"alert": {"alert_id": "a"}})).is_empty());
        assert!(sql(json!({}))[0].message.contains("runs nothing"));
        let two = sql(json!({"query": {"query_id": "q"}, "file": {"path": "p"}}));
        assert!(two[0].message.contains("both query and file"), "{two:?}");
        let nb = json!([{"task_key": "t", "notebook_task": {"notebook_path": "/n"}}]);
        assert!(
            findings(json!({"control_run_state": true, "task": nb}))[0]
                .message
                .contains("continuous")
        );
        assert!(
            findings(json!({"control_run_state": true, "continuous": {}, "task": nb})).is_empty()
        );
    }

    #[test]
    fn code_from_git_needs_a_git_source() {
        let task = json!([{"task_key": "t", "dbt_task": {"commands": ["dbt run"], "source": "GIT"}},
                          {"task_key": "f", "sql_task": {"warehouse_id": "w",
                              "file": {"path": "q.sql", "source": "GIT"}}}]);
        let f = findings(json!({"task": task}));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f[0].message.contains("no git_source"), "{f:?}");
        assert_eq!(
            f[1].path,
            vec![
                key("task"),
                PathStep::Index(1),
                key("sql_task"),
                key("file"),
                key("source")
            ]
        );
        let with = json!({"task": task, "git_source": {"url": "https://x", "provider": "gitHub"}});
        assert!(findings(with).is_empty());
    }

    #[test]
    fn spark_submit_needs_a_cluster_of_its_own() {
        let submit = |extra: Json| {
            let mut t = json!({"task_key": "s", "spark_submit_task": {"parameters": ["a.jar"]}});
            for (k, v) in extra.as_object().unwrap() {
                t[k] = v.clone();
            }
            findings(json!({"task": [t]}))
        };
        assert!(
            submit(json!({"existing_cluster_id": "c"}))[0]
                .message
                .contains("cluster of its own")
        );
        assert!(submit(json!({"new_cluster": {"num_workers": 1}})).is_empty());
    }

    #[test]
    fn a_nameless_job_of_a_developer_is_prefixed_like_any_other() {
        let job = Job::new(Arc::new(Shared::default()));
        let mut config = decoded(&schema(), json!({}));
        let presets = brickform_core::provider::Presets::new("alice", &Object::default());
        job.apply_presets(&presets, &mut config);
        assert_eq!(config["name"], Value::from("[dev alice] Untitled"));
    }

    #[test]
    fn development_pauses_each_of_triggers_and_production_refuses_a_paused_one() {
        let job = Job::new(Arc::new(Shared::default()));
        let periodic = json!({"periodic": {"interval": 1, "unit": "HOURS"}});
        let mut config = decoded(
            &schema(),
            json!({"name": "j", "triggers": [periodic, periodic]}),
        );
        let presets = brickform_core::provider::Presets::new("alice", &Object::default());
        let changes = job.apply_presets(&presets, &mut config);
        assert!(
            changes
                .iter()
                .any(|c| c.field == "triggers[1].pause_status"),
            "{changes:?}"
        );
        let found = job.production_findings(&config);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[1].path,
            vec![key("triggers"), PathStep::Index(1), key("pause_status")]
        );
    }

    #[test]
    fn local_settings_are_never_sent() {
        let schema = schema();
        let config = decoded(
            &schema,
            json!({"always_running": true, "control_run_state": false,
                   "timeouts": {"create": "5m"}}),
        );
        let ctx = OpContext {
            address: "databricks_job.j".into(),
            lineage: "L".into(),
            environment: "default".into(),
            base_dir: std::path::PathBuf::new(),
            create_token: None,
            output: None,
            planned: None,
        };
        let job = Job::new(Arc::new(Shared::default()));
        let sent = job.settings(&ctx, &config);
        let keys: Vec<&String> = sent.as_object().unwrap().keys().collect();
        // Only the ownership tag is sent.
        assert_eq!(keys, ["tags"], "{sent}");
        // Read back, they keep what the configuration said.
        let read = job.remote(&json!({"job_id": 1, "settings": {}}), &config);
        assert_eq!(read.attrs["always_running"], Value::Bool(true));
        assert_eq!(read.attrs["timeouts"], config["timeouts"]);
        assert_eq!(
            wait_limit(&config, "create"),
            std::time::Duration::from_secs(300)
        );
        assert_eq!(wait_limit(&config, "update"), RUN_WAIT);
    }
}
