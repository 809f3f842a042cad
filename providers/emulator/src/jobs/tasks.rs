//! The task types a job task may set, as one table: what each checks in job settings and
//! what a run of it does. A task type without a simulator succeeds once the run's task
//! duration has passed; one without checks accepts its object as it is.

use crate::body::Obj;
use crate::errors::ApiResult;
use crate::store::{Ctx, State};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// One task type: the key of its object in a task (`notebook_task`), the checks of that
/// object, and the simulation of its work.
pub struct TaskType {
    pub name: &'static str,
    pub check: Option<fn(Obj) -> ApiResult<()>>,
    pub simulate: Option<Simulator>,
}

/// Decides, when a task starts, what its work does. It receives the task type's object
/// (the value of `notebook_task`, …) and what the run passes to its tasks.
pub type Simulator = fn(&mut State, &Map<String, Value>, &TaskEnv) -> Started;

/// What a run passes to a task that starts.
pub struct TaskEnv<'a> {
    /// The clock at the task's start (its dependencies' end, or the run's setup end).
    pub ctx: &'a Ctx<'a>,
    pub run_id: i64,
    pub job_id: i64,
    /// The task run's own id.
    pub task_run_id: i64,
    /// `run-now` asked for a full refresh of the pipelines it runs.
    pub full_refresh: bool,
    /// The whole task spec (its libraries, its cluster), its dynamic value references
    /// resolved, for work that depends on more than the task type's own object.
    pub task: &'a Map<String, Value>,
    /// The task spec as the job holds it, references unresolved.
    pub raw: &'a Map<String, Value>,
    /// The jobs whose runs started this run through Run Job tasks, nearest first.
    pub lineage: &'a [i64],
}

/// What the work of a task that started does.
#[derive(Debug, PartialEq)]
pub enum Started {
    /// The code ran: the task ends after the run's task duration with this result (and, for
    /// a condition task, this outcome).
    Ran {
        result: String,
        message: String,
        outcome: Option<String>,
    },
    /// The work could not begin: the task fails at once with this message.
    Refused(String),
    /// The task ends when this pipeline update ends: `(pipeline id, update id)`.
    AwaitsUpdate(String, String),
    /// The task ends when this job run ends (a Run Job task).
    AwaitsRun(i64),
    /// A For each task: it runs its nested task once per input, at most `concurrency` at
    /// a time, and ends when they all have.
    ForEach {
        inputs: Vec<Value>,
        concurrency: usize,
    },
}

impl Started {
    fn success() -> Started {
        Started::Ran {
            result: "SUCCESS".into(),
            message: String::new(),
            outcome: None,
        }
    }

    fn failure(message: String) -> Started {
        Started::Ran {
            result: "FAILED".into(),
            message,
            outcome: None,
        }
    }
}

const fn checked(name: &'static str, check: fn(Obj) -> ApiResult<()>) -> TaskType {
    TaskType {
        name,
        check: Some(check),
        simulate: None,
    }
}

/// Every task type of the Jobs API 2.2. A task sets exactly one of these (or a `*_task`
/// this list does not know yet, which is accepted and succeeds).
pub const TASK_TYPES: &[TaskType] = &[
    TaskType {
        name: "notebook_task",
        check: Some(check_notebook),
        simulate: Some(notebook),
    },
    TaskType {
        name: "pipeline_task",
        check: Some(check_pipeline),
        simulate: Some(pipeline),
    },
    TaskType {
        name: "python_wheel_task",
        check: Some(check_wheel),
        simulate: Some(wheel),
    },
    TaskType {
        name: "spark_python_task",
        check: Some(check_spark_python),
        simulate: Some(spark_python),
    },
    TaskType {
        name: "spark_jar_task",
        check: Some(check_spark_jar),
        simulate: Some(spark_jar),
    },
    TaskType {
        name: "spark_submit_task",
        check: Some(check_spark_submit),
        simulate: Some(spark_submit),
    },
    TaskType {
        name: "sql_task",
        check: Some(check_sql),
        simulate: Some(sql),
    },
    TaskType {
        name: "condition_task",
        check: Some(check_condition),
        simulate: Some(condition),
    },
    TaskType {
        name: "for_each_task",
        check: Some(check_for_each),
        simulate: Some(for_each),
    },
    TaskType {
        name: "run_job_task",
        check: Some(check_run_job),
        simulate: Some(run_job),
    },
    TaskType {
        name: "dbt_task",
        check: Some(check_dbt),
        simulate: Some(dbt),
    },
    checked("dashboard_task", check_dashboard),
    TaskType {
        name: "alert_task",
        check: Some(check_alert),
        simulate: Some(alert),
    },
    TaskType {
        name: "power_bi_task",
        check: Some(check_power_bi),
        simulate: Some(power_bi),
    },
    TaskType {
        name: "clean_rooms_notebook_task",
        check: Some(check_clean_rooms),
        simulate: Some(clean_rooms),
    },
    TaskType {
        name: "dbt_platform_task",
        check: Some(check_dbt_platform),
        simulate: Some(dbt_platform),
    },
    TaskType {
        name: "dbt_cloud_task",
        check: Some(check_dbt_cloud),
        simulate: Some(dbt_platform),
    },
    TaskType {
        name: "gen_ai_compute_task",
        check: Some(check_gen_ai),
        simulate: Some(gen_ai),
    },
    TaskType {
        name: "python_operator_task",
        check: Some(check_python_operator),
        simulate: None,
    },
    TaskType {
        name: "ai_runtime_task",
        check: Some(check_ai_runtime),
        simulate: Some(ai_runtime),
    },
];

pub fn is_known(name: &str) -> bool {
    TASK_TYPES.iter().any(|t| t.name == name)
}

/// The known task type a task spec sets (the first in table order), with its object.
pub fn of(spec: &Map<String, Value>) -> Option<(&'static TaskType, &Map<String, Value>)> {
    TASK_TYPES
        .iter()
        .find_map(|t| spec.get(t.name).and_then(Value::as_object).map(|o| (t, o)))
}

/// Starts the work of a task: its type's simulator, or success.
pub fn start(st: &mut State, spec: &Map<String, Value>, env: &TaskEnv) -> Started {
    match of(spec) {
        Some((
            TaskType {
                simulate: Some(sim),
                ..
            },
            object,
        )) => sim(st, object, env),
        _ => Started::success(),
    }
}

/// The parameters of a started task as `runs/get` shows them with
/// `include_resolved_values` (`RunTask.resolved_values`, databricks-sdk-py
/// databricks/sdk/service/jobs.py `ResolvedValues`): per task type, the fields that take
/// parameters, their references resolved. `None` for a type without any, or none set.
pub fn resolved_values(spec: &Map<String, Value>) -> Option<Value> {
    let (t, o) = of(spec)?;
    let fields: &[&str] = match t.name {
        "notebook_task" => &["base_parameters"],
        "condition_task" => &["left", "right"],
        "spark_python_task" | "spark_jar_task" | "spark_submit_task" => &["parameters"],
        "python_wheel_task" => &["parameters", "named_parameters"],
        "run_job_task" => &["job_parameters"],
        "sql_task" | "pipeline_task" => &["parameters"],
        "dbt_task" => &["commands"],
        _ => return None,
    };
    let picked: Map<String, Value> = fields
        .iter()
        .filter_map(|f| o.get(*f).map(|v| ((*f).to_string(), v.clone())))
        .collect();
    (!picked.is_empty()).then(|| json!({ t.name: picked }))
}

fn text<'a>(o: &'a Map<String, Value>, key: &str) -> &'a str {
    o.get(key).and_then(Value::as_str).unwrap_or_default()
}

// ---------- checks ----------

fn check_notebook(o: Obj) -> ApiResult<()> {
    o.req_str("notebook_path")?;
    o.str_map("base_parameters")?;
    o.enum_str("source", &["WORKSPACE", "GIT"])?;
    Ok(())
}

fn check_pipeline(o: Obj) -> ApiResult<()> {
    o.req_str("pipeline_id")?;
    check_pipeline_params(o)
}

/// What a pipeline task and a run-job task's `pipeline_params` say about the update.
fn check_pipeline_params(o: Obj) -> ApiResult<()> {
    let full = o.bool("full_refresh")?;
    for k in [
        "full_refresh_selection",
        "refresh_selection",
        "refresh_flow_selection",
        "reset_checkpoint_selection",
    ] {
        o.strs(k)?;
    }
    if full == Some(true)
        && (!o.strs("full_refresh_selection")?.is_empty()
            || !o.strs("refresh_selection")?.is_empty())
    {
        return Err(crate::errors::ApiError::invalid(format!(
            "Invalid value for field '{}': full_refresh cannot be combined with full_refresh_selection or refresh_selection",
            o.path("full_refresh")
        )));
    }
    o.str_map("parameters")?;
    Ok(())
}

fn check_spark_jar(o: Obj) -> ApiResult<()> {
    o.req_str("main_class_name")?;
    o.str("jar_uri")?;
    o.strs("parameters")?;
    o.bool("run_as_repl")?;
    Ok(())
}

fn check_spark_submit(o: Obj) -> ApiResult<()> {
    o.strs("parameters")?;
    Ok(())
}

fn check_dbt(o: Obj) -> ApiResult<()> {
    let commands = o.strs("commands")?;
    if commands.is_empty() {
        return Err(crate::body::missing(&o.path("commands")));
    }
    if let Some(c) = commands.iter().find(|c| !c.trim_start().starts_with("dbt")) {
        return Err(crate::errors::ApiError::invalid(format!(
            "Invalid value for field '{}': '{c}' is not a dbt command (each starts with 'dbt')",
            o.path("commands")
        )));
    }
    for k in [
        "project_directory",
        "profiles_directory",
        "catalog",
        "schema",
        "warehouse_id",
    ] {
        o.str(k)?;
    }
    if o.enum_str("source", &["WORKSPACE", "GIT"])? == Some("WORKSPACE") {
        o.req_str("project_directory")?;
    }
    Ok(())
}

fn check_subscriptions(o: Obj, key: &str) -> ApiResult<()> {
    for (p, s) in o.objs(key)? {
        Obj::at(s, &p).one_of(&["user_name", "destination_id"])?;
    }
    Ok(())
}

fn check_dashboard(o: Obj) -> ApiResult<()> {
    o.req_str("dashboard_id")?;
    o.str("warehouse_id")?;
    o.str_map("filters")?;
    if let Some(s) = o.obj("subscription")? {
        let p = o.path("subscription");
        let s = Obj::at(s, &p);
        s.str("custom_subject")?;
        s.bool("paused")?;
        check_subscriptions(s, "subscribers")?;
    }
    Ok(())
}

const POWER_BI_STORAGE: &[&str] = &["DIRECT_QUERY", "IMPORT", "DUAL"];

fn check_power_bi(o: Obj) -> ApiResult<()> {
    o.req_str("warehouse_id")?;
    o.req_str("connection_resource_name")?;
    o.bool("refresh_after_update")?;
    let mp = o.path("power_bi_model");
    let m = Obj::at(o.req_obj("power_bi_model")?, &mp);
    m.req_str("workspace_name")?;
    m.req_str("model_name")?;
    m.enum_str("storage_mode", POWER_BI_STORAGE)?
        .ok_or_else(|| crate::body::missing(&m.path("storage_mode")))?;
    m.enum_str("authentication_method", &["OAUTH", "PAT"])?
        .ok_or_else(|| crate::body::missing(&m.path("authentication_method")))?;
    m.bool("overwrite_existing")?;
    let tables = o.objs("tables")?;
    if tables.is_empty() {
        return Err(crate::body::missing(&o.path("tables")));
    }
    for (p, t) in tables {
        let t = Obj::at(t, &p);
        t.req_str("catalog")?;
        t.req_str("schema")?;
        t.str("name")?;
        t.enum_str("storage_mode", POWER_BI_STORAGE)?
            .ok_or_else(|| crate::body::missing(&t.path("storage_mode")))?;
    }
    Ok(())
}

fn check_alert(o: Obj) -> ApiResult<()> {
    o.one_of(&["alert_id", "workspace_path"])?;
    o.str("alert_id")?;
    o.str("workspace_path")?;
    o.str("warehouse_id")?;
    o.str_map("parameters")?;
    check_subscriptions(o, "subscribers")
}

fn check_dbt_platform(o: Obj) -> ApiResult<()> {
    o.req_str("connection_resource_name")?;
    o.req_str("dbt_platform_job_id")?;
    Ok(())
}

fn check_dbt_cloud(o: Obj) -> ApiResult<()> {
    o.req_str("connection_resource_name")?;
    o.req_int("dbt_cloud_job_id")?;
    Ok(())
}

fn check_gen_ai(o: Obj) -> ApiResult<()> {
    o.req_str("dl_runtime_image")?;
    for k in [
        "command",
        "training_script_path",
        "mlflow_experiment_name",
        "yaml_parameters",
        "yaml_parameters_file_path",
    ] {
        o.str(k)?;
    }
    o.enum_str("source", &["WORKSPACE", "GIT"])?;
    if let Some(c) = o.obj("compute")? {
        let p = o.path("compute");
        Obj::at(c, &p).req_int("num_gpus")?;
    }
    Ok(())
}

fn check_python_operator(o: Obj) -> ApiResult<()> {
    o.req_str("main")?;
    for (p, m) in o.objs("parameters")? {
        let m = Obj::at(m, &p);
        m.str("name")?;
        m.str("value")?;
    }
    Ok(())
}

fn check_ai_runtime(o: Obj) -> ApiResult<()> {
    o.req_str("experiment")?;
    o.enum_str("priority_class", &["BEST_EFFORT", "NORMAL"])?;
    let deployments = o.objs("deployments")?;
    if deployments.is_empty() {
        return Err(crate::body::missing(&o.path("deployments")));
    }
    for (p, d) in deployments {
        let d = Obj::at(d, &p);
        let cp = d.path("compute");
        let c = Obj::at(d.req_obj("compute")?, &cp);
        c.enum_str(
            "accelerator_type",
            &["GPU_1xA10", "GPU_1xH100", "GPU_8xH100", "GPU_8xB300"],
        )?
        .ok_or_else(|| crate::body::missing(&c.path("accelerator_type")))?;
        c.req_int("accelerator_count")?;
    }
    Ok(())
}

fn check_clean_rooms(o: Obj) -> ApiResult<()> {
    o.req_str("clean_room_name")?;
    o.req_str("notebook_name")?;
    o.str("etag")?;
    o.str_map("notebook_base_parameters")?;
    Ok(())
}

fn check_wheel(o: Obj) -> ApiResult<()> {
    o.req_str("package_name")?;
    o.req_str("entry_point")?;
    o.strs("parameters")?;
    o.str_map("named_parameters")?;
    Ok(())
}

fn check_spark_python(o: Obj) -> ApiResult<()> {
    o.req_str("python_file")?;
    o.strs("parameters")?;
    Ok(())
}

fn check_sql(o: Obj) -> ApiResult<()> {
    o.req_str("warehouse_id")?;
    o.str_map("parameters")?;
    match o.one_of(&["query", "file", "alert", "dashboard"])? {
        "query" => {
            Obj::at(o.req_obj("query")?, &o.path("query")).req_str("query_id")?;
        }
        "file" => {
            let p = o.path("file");
            let f = Obj::at(o.req_obj("file")?, &p);
            f.req_str("path")?;
            f.enum_str("source", &["WORKSPACE", "GIT"])?;
        }
        k => {
            let p = o.path(k);
            let f = Obj::at(o.req_obj(k)?, &p);
            f.req_str(if k == "alert" {
                "alert_id"
            } else {
                "dashboard_id"
            })?;
            f.bool("pause_subscriptions")?;
            f.str("custom_subject")?;
            check_subscriptions(f, "subscriptions")?;
        }
    }
    Ok(())
}

const CONDITION_OPS: &[&str] = &[
    "EQUAL_TO",
    "NOT_EQUAL",
    "GREATER_THAN",
    "GREATER_THAN_OR_EQUAL",
    "LESS_THAN",
    "LESS_THAN_OR_EQUAL",
];

fn check_condition(o: Obj) -> ApiResult<()> {
    o.enum_str("op", CONDITION_OPS)?
        .ok_or_else(|| crate::body::missing(&o.path("op")))?;
    o.str("left")?
        .ok_or_else(|| crate::body::missing(&o.path("left")))?;
    o.str("right")?
        .ok_or_else(|| crate::body::missing(&o.path("right")))?;
    Ok(())
}

/// The most iterations of a For each task that may run at once, and how many when the
/// task does not say: "Controls the number of active iteration task runs. Default is 20,
/// maximum allowed is 100." (terraform-provider-databricks docs/resources/job.md:211). The
/// Jobs UI fills in 1 ("The default value is 1", https://docs.databricks.com/en/jobs/for-each.html),
/// which reaches the API as a value set.
pub const FOR_EACH_MAX_CONCURRENCY: i64 = 100;
pub const FOR_EACH_DEFAULT_CONCURRENCY: i64 = 20;

fn check_for_each(o: Obj) -> ApiResult<()> {
    o.req_str("inputs")?;
    let task = o.req_obj("task")?;
    if let Some(c) = o.int("concurrency")?
        && !(1..=FOR_EACH_MAX_CONCURRENCY).contains(&c)
    {
        return Err(crate::errors::ApiError::invalid(format!(
            "Invalid value for field '{}': {c} (must be between 1 and {FOR_EACH_MAX_CONCURRENCY})",
            o.path("concurrency")
        )));
    }
    // "You cannot add another For each task as the nested task."
    // (https://docs.databricks.com/en/jobs/for-each.html)
    if task.contains_key("for_each_task") {
        return Err(crate::errors::ApiError::invalid(format!(
            "Invalid value for field '{}.for_each_task': the nested task of a For each task cannot be another For each task",
            o.path("task")
        )));
    }
    Ok(())
}

fn check_run_job(o: Obj) -> ApiResult<()> {
    o.req_int("job_id")?;
    for k in [
        "job_parameters",
        "notebook_params",
        "python_named_params",
        "sql_params",
    ] {
        o.str_map(k)?;
    }
    for k in [
        "python_params",
        "jar_params",
        "spark_submit_params",
        "dbt_commands",
    ] {
        o.strs(k)?;
    }
    if let Some(p) = o.obj("pipeline_params")? {
        let path = o.path("pipeline_params");
        check_pipeline_params(Obj::at(p, &path))?;
    }
    Ok(())
}

// ---------- simulators ----------

/// A workspace notebook must exist (a Git one is fetched at run time, so it is not checked).
fn notebook(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    let path = String::from(text(o, "notebook_path"));
    let git = o.get("source").and_then(Value::as_str) == Some("GIT");
    if !git && !crate::workspace::runnable_exists(st, &path) {
        return Started::failure(format!("Notebook not found: {path}"));
    }
    Started::success()
}

/// A file in a volume or the workspace must exist; a relative path is a Git file.
fn spark_python(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    let file = String::from(text(o, "python_file"));
    let missing = if file.starts_with("/Volumes/") {
        !crate::files::file_exists(st, &file)
    } else {
        file.starts_with('/') && !crate::workspace::runnable_exists(st, &file)
    };
    if missing {
        Started::failure(format!("File not found: {file}"))
    } else {
        Started::success()
    }
}

/// Starts an update of the pipeline; the task ends with it. A pipeline that cannot start
/// (missing, being deleted, busy) fails the task at once.
fn pipeline(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let pid = text(o, "pipeline_id").to_string();
    let mut req = Map::new();
    if env.full_refresh
        || o.get("full_refresh")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    {
        req.insert("full_refresh".into(), json!(true));
    }
    // The tables to refresh, as the pipeline's own start takes them.
    for k in [
        "full_refresh_selection",
        "refresh_selection",
        "reset_checkpoint_selection",
        "parameters",
    ] {
        if let Some(v) = o.get(k) {
            req.insert(k.into(), v.clone());
        }
    }
    match crate::pipelines::start(st, env.ctx, &pid, "JOB_TASK", req) {
        Ok(uid) => Started::AwaitsUpdate(pid, uid),
        Err(e) => Started::Refused(e.message),
    }
}

/// A path the task reads must be there: a volume file, a workspace file or notebook, or a
/// file on a cloud or DBFS location (not modelled, so taken as there).
fn readable(st: &State, path: &str) -> bool {
    if path.starts_with("/Volumes/") {
        crate::files::file_exists(st, path)
    } else if let Some(rest) = path.strip_prefix("/Workspace/") {
        // The workspace's files as a cluster sees them.
        crate::workspace::runnable_exists(st, &format!("/{rest}"))
    } else if path.starts_with('/') {
        crate::workspace::runnable_exists(st, path)
    } else {
        true
    }
}

/// The JAR libraries of the task must be there, and one of them must hold the main class:
/// without any JAR the class cannot be found.
fn spark_jar(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let class = text(o, "main_class_name");
    let mut jars: Vec<String> = Vec::new();
    let mut maven = false;
    for lib in env
        .task
        .get("libraries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(j) = lib.get("jar").and_then(Value::as_str) {
            jars.push(String::from(j));
        }
        maven |= lib.get("maven").is_some();
    }
    if let Some(uri) = o.get("jar_uri").and_then(Value::as_str) {
        jars.push(String::from(uri));
    }
    if let Some(missing) = jars.iter().find(|j| !readable(st, j)) {
        return Started::Refused(format!(
            "Library installation failed for library due to user error. Error messages: File {missing} does not exist"
        ));
    }
    if jars.is_empty() && !maven {
        return Started::failure(format!("java.lang.ClassNotFoundException: {class}"));
    }
    Started::success()
}

/// spark-submit needs an application (a JAR or a Python file after the options), and what
/// it names must be there.
fn spark_submit(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    let args: Vec<String> = o
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    // Options take a value, except these flags.
    const FLAGS: &[&str] = &[
        "--verbose",
        "-v",
        "--supervise",
        "--help",
        "-h",
        "--version",
    ];
    let mut i = 0;
    let mut app = None;
    while i < args.len() {
        let a = &args[i];
        if a.starts_with('-') {
            i += if FLAGS.contains(&a.as_str()) || a.contains('=') {
                1
            } else {
                2
            };
            continue;
        }
        app = Some(a.clone());
        break;
    }
    match app {
        None => Started::failure("Error: Missing application resource.".into()),
        Some(a) if !readable(st, &a) => Started::failure(format!(
            "java.io.FileNotFoundException: File {a} does not exist"
        )),
        Some(_) => Started::success(),
    }
}

/// A SQL file from the workspace must be there; queries, alerts and dashboards are not
/// modelled, so they run.
/// The warehouse runs the query: one that does not exist fails the task at once; a
/// stopped one is started for it (as the service does), and stays up while the task runs.
fn sql(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let warehouse = String::from(text(o, "warehouse_id"));
    let busy_until = env.ctx.now.saturating_add(env.ctx.timings.task_ms());
    if let Err(e) = crate::warehouses::use_for_query(st, env.ctx, &warehouse, busy_until) {
        return Started::Refused(e.to_string());
    }
    if let Some(f) = o.get("file").and_then(Value::as_object)
        && f.get("source").and_then(Value::as_str) != Some("GIT")
    {
        let path = String::from(text(f, "path"));
        if !readable(st, &path) {
            return Started::failure(format!("File not found: {path}"));
        }
    }
    Started::success()
}

/// A workspace dbt project must hold its `dbt_project.yml`; a Git one is cloned at run
/// time.
fn dbt(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    if o.get("source").and_then(Value::as_str) == Some("WORKSPACE") {
        let dir = String::from(text(o, "project_directory"));
        let project = format!("{}/dbt_project.yml", dir.trim_end_matches('/'));
        if !readable(st, &project) {
            return Started::failure(format!(
                "Runtime Error: fatal: Not a dbt project (or any of the parent directories). Missing dbt_project.yml file in {dir}"
            ));
        }
    }
    Started::success()
}

/// The connection to Power BI must be a Unity Catalog connection, and the schemas whose
/// tables are published must exist.
fn power_bi(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    let conn = text(o, "connection_resource_name");
    if !st.uc.connections.contains_key(&conn.to_lowercase()) {
        return Started::Refused(format!("Connection '{conn}' does not exist."));
    }
    for t in o
        .get("tables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
    {
        let schema = format!("{}.{}", text(t, "catalog"), text(t, "schema")).to_lowercase();
        if !st.uc.schemas.contains_key(&schema) {
            return Started::failure(format!("Schema '{schema}' does not exist."));
        }
    }
    Started::success()
}

/// An alert given by its workspace path must be there; alerts given by id are not
/// modelled, so they run.
fn alert(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    if let Some(path) = o.get("workspace_path").and_then(Value::as_str) {
        let path = String::from(path);
        if !readable(st, &path) {
            return Started::Refused(format!("Alert not found: {path}"));
        }
    }
    Started::success()
}

/// A dbt platform (or dbt Cloud) job runs through a Unity Catalog connection, which must
/// exist.
fn dbt_platform(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    let conn = text(o, "connection_resource_name");
    if st.uc.connections.contains_key(&conn.to_lowercase()) {
        Started::success()
    } else {
        Started::Refused(format!("Connection '{conn}' does not exist."))
    }
}

/// A training script in the workspace must be there; one from Git is fetched at run time.
fn gen_ai(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    for k in ["training_script_path", "yaml_parameters_file_path"] {
        if let Some(path) = o.get(k).and_then(Value::as_str)
            && o.get("source").and_then(Value::as_str) != Some("GIT")
        {
            let path = String::from(path);
            if !readable(st, &path) {
                return Started::failure(format!("File not found: {path}"));
            }
        }
    }
    Started::success()
}

/// The workload's code must be there.
fn ai_runtime(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    if let Some(path) = o.get("code_source_path").and_then(Value::as_str) {
        let path = String::from(path);
        if !readable(st, &path) {
            return Started::failure(format!("File not found: {path}"));
        }
    }
    Started::success()
}

/// Clean rooms are not modelled: no clean room exists, so its notebook cannot run.
fn clean_rooms(_: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    Started::Refused(format!(
        "Clean room '{}' does not exist.",
        text(o, "clean_room_name")
    ))
}

/// Compares `left` and `right` (as numbers, except for equality); the outcome is the answer.
fn condition(_: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    let (l, r) = (
        String::from(text(o, "left")),
        String::from(text(o, "right")),
    );
    let op = o.get("op").and_then(Value::as_str).unwrap_or("EQUAL_TO");
    let result = match op {
        "EQUAL_TO" => Some(l == r),
        "NOT_EQUAL" => Some(l != r),
        _ => match (l.trim().parse::<f64>(), r.trim().parse::<f64>()) {
            (Ok(a), Ok(b)) => Some(match op {
                "GREATER_THAN" => a > b,
                "GREATER_THAN_OR_EQUAL" => a >= b,
                "LESS_THAN" => a < b,
                _ => a <= b,
            }),
            _ => None,
        },
    };
    match result {
        Some(b) => Started::Ran {
            result: "SUCCESS".into(),
            message: String::new(),
            outcome: Some(b.to_string()),
        },
        None => Started::failure(format!(
            "Cannot compare '{l}' and '{r}' numerically with {op}"
        )),
    }
}

/// How deep Run Job tasks may nest: "Databricks does not support jobs with circular
/// dependencies or that nest more than three Run Job tasks"
/// (https://docs.databricks.com/aws/en/jobs/tasks/run-job). The service does not refuse
/// such jobs when they are saved; here the Run Job task that would go deeper, or start a
/// job already running in its chain, fails when it starts, so a cycle (job A runs job B
/// runs job A) ends instead of starting runs forever.
pub const MAX_RUN_JOB_NESTING: usize = 3;

/// The most job runs a workspace runs at once (see `run_job`).
pub const MAX_ACTIVE_RUNS: usize = 1000;

/// Starts a run of the job (`trigger: RUN_JOB_TASK`, with this task's run as its
/// `trigger_info.run_id`), which shows in that job's `runs/list`; the task ends when that
/// run ends. The run takes the task's `job_parameters`, and a full refresh of its
/// pipelines with `pipeline_params.full_refresh`.
fn run_job(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let id = o
        .get("job_id")
        .and_then(|v| v.as_i64().or_else(|| v.as_str()?.trim().parse().ok()))
        .unwrap_or(0);
    if !st.jobs.jobs.contains_key(&id) {
        return Started::failure(format!("Job {id} does not exist."));
    }
    let chain = || {
        std::iter::once(env.job_id)
            .chain(env.lineage.iter().copied())
            .rev()
            .map(|j| format!("job {j}"))
            .collect::<Vec<_>>()
            .join(" -> ")
    };
    if id == env.job_id || env.lineage.contains(&id) {
        return Started::Refused(format!(
            "Run Job tasks cannot trigger each other in a circle: job {id} is already running in this chain ({} -> job {id}).",
            chain()
        ));
    }
    // "A workspace is limited to 1000 concurrent job runs"
    // (https://docs.databricks.com/data-engineering/jobs/jobs-user-guide.html): a Run Job
    // task does not start one more.
    if st.jobs.active_runs.len() >= MAX_ACTIVE_RUNS {
        return Started::Refused(format!(
            "The workspace already has {MAX_ACTIVE_RUNS} active job runs, the most it runs at once."
        ));
    }
    if env.lineage.len() >= MAX_RUN_JOB_NESTING {
        return Started::Refused(format!(
            "Run Job tasks nest at most {MAX_RUN_JOB_NESTING} deep: this run is already at that depth ({} -> job {id}).",
            chain()
        ));
    }
    let job_parameters = o
        .get("job_parameters")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let full_refresh = o
        .get("pipeline_params")
        .and_then(|p| p.get("full_refresh"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let request = super::model::RunNow {
        job_id: id,
        job_parameters,
        full_refresh,
        ..super::model::RunNow::default()
    };
    let by = super::TriggeredBy {
        run_id: env.run_id,
        task_run_id: env.task_run_id,
    };
    let mut lineage = vec![env.job_id];
    lineage.extend_from_slice(env.lineage);
    match super::model::start_run(st, env.ctx, request, Some(by), lineage) {
        Ok(started) => Started::AwaitsRun(started.run_id),
        Err(e) => Started::Refused(e.message),
    }
}

/// How long a For each task's input array may be: "Parameter arrays are limited to 10,000
/// characters, or 48 KB if you use task value references to pass them"
/// (https://docs.databricks.com/gcp/jobs/for-each-lookup-example); the newer pages of
/// that example say 5,000 characters (https://docs.databricks.com/aws/pt/jobs/tasks/for-each-lookup-example,
/// https://docs.azure.cn/zh-cn/databricks/jobs/tasks/for-each-lookup-example), which is
/// taken here. A longer array fails the task when it starts.
pub const FOR_EACH_INPUTS_CHARS: usize = 5_000;
pub const FOR_EACH_INPUTS_TASK_VALUE_BYTES: usize = 48 * 1024;

/// A For each task: its `inputs` (references resolved) must be a JSON array within the
/// service's size limits; each element becomes an iteration of the nested task.
fn for_each(_: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let inputs = text(o, "inputs");
    let written = env
        .raw
        .get("for_each_task")
        .and_then(|f| f.get("inputs"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let from_task_value = written.contains("{{") && written.contains(".values.");
    let too_long = if from_task_value {
        (inputs.len() > FOR_EACH_INPUTS_TASK_VALUE_BYTES).then(|| {
            format!(
                "The inputs of the For each task are {} bytes long; an array passed through a task value may hold at most {FOR_EACH_INPUTS_TASK_VALUE_BYTES}.",
                inputs.len()
            )
        })
    } else {
        let chars = inputs.chars().count();
        (chars > FOR_EACH_INPUTS_CHARS).then(|| {
            format!(
                "The inputs of the For each task are {chars} characters long; at most {FOR_EACH_INPUTS_CHARS} are allowed (48 KB when passed through a task value)."
            )
        })
    };
    if let Some(message) = too_long {
        return Started::Refused(message);
    }
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(inputs) else {
        let shown: String = inputs.chars().take(200).collect();
        return Started::Refused(format!(
            "The inputs of the For each task must be a JSON array: {shown}"
        ));
    };
    let concurrency = o
        .get("concurrency")
        .and_then(Value::as_i64)
        .unwrap_or(FOR_EACH_DEFAULT_CONCURRENCY)
        .clamp(1, FOR_EACH_MAX_CONCURRENCY);
    Started::ForEach {
        inputs: items,
        concurrency: usize::try_from(concurrency).unwrap_or(1),
    }
}

/// sdp-meta's onboarding wheel (`databricks_labs_sdp_meta`, entry point `run`) reads its
/// onboarding file from a volume and writes its dataflowspec tables into an existing
/// `database` schema (`crate::pipelines::onboard`); any other wheel succeeds.
fn wheel(st: &mut State, w: &Map<String, Value>, env: &TaskEnv) -> Started {
    if text(w, "package_name") != "databricks_labs_sdp_meta" || text(w, "entry_point") != "run" {
        return Started::success();
    }
    let mut named: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in w
        .get("named_parameters")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        named.insert(k.clone(), String::from(v.as_str().unwrap_or_default()));
    }
    for p in w
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if let Some((k, v)) = p.trim_start_matches('-').split_once('=') {
            named.insert(k.to_string(), String::from(v));
        }
    }
    let Some(path) = named.get("onboarding_file_path") else {
        return Started::failure(
            "sdp-meta onboarding: the named parameter onboarding_file_path is missing.".into(),
        );
    };
    if !path.starts_with("/Volumes/") || !crate::files::file_exists(st, path) {
        return Started::failure(format!(
            "sdp-meta onboarding: onboarding_file_path '{path}' is not a file in a volume."
        ));
    }
    let uc = named
        .get("uc_enabled")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if uc
        && let Some(db) = named.get("database")
        && !st.uc.schemas.contains_key(&db.to_lowercase())
    {
        return Started::failure(format!(
            "sdp-meta onboarding: database '{db}' is not an existing schema (catalog.schema)."
        ));
    }
    match crate::pipelines::onboard(st, env.ctx, &named) {
        Ok(()) => Started::success(),
        Err(e) => Started::failure(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx<'static> {
        Ctx::for_test(1_000, 100)
    }

    /// Starts the task `spec` as a run (job 9, run 7, job parameter `env=dev`) would: its
    /// references resolved first.
    fn run(st: &mut State, spec: Value) -> Started {
        let ctx = ctx();
        let params = BTreeMap::from([("env".to_string(), "dev".to_string())]);
        let Value::Object(raw) = spec else {
            panic!("not an object")
        };
        let sc = super::super::refs::Scope {
            job_id: 9,
            job_name: "j",
            run_id: 7,
            start_time: 0,
            repair_count: 0,
            workspace_id: 1,
            params: Some(&params),
            tasks: &[],
            task: None,
            input: None,
        };
        let mut budget = super::super::refs::MAX_RESOLVED_BYTES;
        let spec = super::super::refs::resolve_map(&raw, &sc, &mut budget, None).unwrap();
        let env = TaskEnv {
            ctx: &ctx,
            run_id: 7,
            job_id: 9,
            task_run_id: 8,
            full_refresh: false,
            task: &spec,
            raw: &raw,
            lineage: &[],
        };
        start(st, &spec, &env)
    }

    /// A stopped warehouse of this id, for SQL tasks to run on.
    fn stopped_warehouse(st: &mut State, id: &str) {
        st.warehouses.warehouses.insert(
            id.into(),
            crate::warehouses::Warehouse {
                id: id.into(),
                spec: Map::new(),
                creator_name: "u@x".into(),
                data_source_id: "d".into(),
                state: "STOPPED".into(),
                until: 0,
                idle_since: 0,
            },
        );
    }

    fn failed(m: &str) -> Started {
        Started::failure(m.to_string())
    }

    #[test]
    fn every_task_type_is_listed_once() {
        let mut names: Vec<_> = TASK_TYPES.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TASK_TYPES.len());
        assert!(names.iter().all(|n| n.ends_with("_task")));
    }

    #[test]
    fn tasks_fail_on_what_their_type_needs_and_succeed_otherwise() {
        let mut st = State::new("u@x", 1);
        assert_eq!(
            run(
                &mut st,
                json!({"notebook_task": {"notebook_path": "/x/{{job.parameters.env}}"}})
            ),
            failed("Notebook not found: /x/dev")
        );
        assert_eq!(
            run(
                &mut st,
                json!({"notebook_task": {"notebook_path": "nb", "source": "GIT"}})
            ),
            Started::success()
        );
        assert_eq!(
            run(
                &mut st,
                json!({"spark_python_task": {"python_file": "/Volumes/c/s/v/a.py"}})
            ),
            failed("File not found: /Volumes/c/s/v/a.py")
        );
        assert_eq!(
            run(
                &mut st,
                json!({"spark_python_task": {"python_file": "a.py"}})
            ),
            Started::success()
        );
        assert_eq!(
            run(&mut st, json!({"run_job_task": {"job_id": 5}})),
            failed("Job 5 does not exist.")
        );
        assert_eq!(
            run(&mut st, json!({"sql_task": {"warehouse_id": "w"}})),
            Started::Refused(
                "SQL warehouse w does not exist or you do not have permission to use it.".into()
            )
        );
        stopped_warehouse(&mut st, "w");
        assert_eq!(
            run(&mut st, json!({"sql_task": {"warehouse_id": "w"}})),
            Started::success()
        );
        // The run started the stopped warehouse.
        assert_eq!(st.warehouses.warehouses["w"].state, "STARTING");
        assert_eq!(
            run(&mut st, json!({"some_future_task": {}})),
            Started::success()
        );
    }

    #[test]
    fn the_newer_task_types_fail_on_what_they_need() {
        let mut st = State::new("u@x", 1);
        assert_eq!(
            run(
                &mut st,
                json!({"spark_jar_task": {"main_class_name": "a.Main"}})
            ),
            failed("java.lang.ClassNotFoundException: a.Main")
        );
        assert_eq!(
            run(
                &mut st,
                json!({"spark_jar_task": {"main_class_name": "a.Main"},
                       "libraries": [{"maven": {"coordinates": "a:b:1"}}]})
            ),
            Started::success()
        );
        match run(
            &mut st,
            json!({"spark_jar_task": {"main_class_name": "a.Main"},
                   "libraries": [{"jar": "/Volumes/c/s/v/a.jar"}]}),
        ) {
            Started::Refused(m) => assert!(m.contains("/Volumes/c/s/v/a.jar"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            run(
                &mut st,
                json!({"spark_submit_task": {"parameters": ["--class", "a.Main"]}})
            ),
            failed("Error: Missing application resource.")
        );
        assert_eq!(
            run(
                &mut st,
                json!({"spark_submit_task": {"parameters": ["--class", "a.Main", "dbfs:/a.jar", "x"]}})
            ),
            Started::success()
        );
        assert_eq!(
            run(
                &mut st,
                json!({"dbt_task": {"commands": ["dbt run"], "source": "WORKSPACE", "project_directory": "/p"}})
            ),
            failed(
                "Runtime Error: fatal: Not a dbt project (or any of the parent directories). Missing dbt_project.yml file in /p"
            )
        );
        assert_eq!(
            run(&mut st, json!({"dbt_task": {"commands": ["dbt run"]}})),
            Started::success()
        );
        stopped_warehouse(&mut st, "w");
        assert_eq!(
            run(
                &mut st,
                json!({"sql_task": {"warehouse_id": "w", "file": {"path": "/q.sql"}}})
            ),
            failed("File not found: /q.sql")
        );
        assert_eq!(
            run(
                &mut st,
                json!({"power_bi_task": {"connection_resource_name": "pbi", "tables": []}})
            ),
            Started::Refused("Connection 'pbi' does not exist.".into())
        );
        assert_eq!(
            run(
                &mut st,
                json!({"clean_rooms_notebook_task": {"clean_room_name": "cr", "notebook_name": "n"}})
            ),
            Started::Refused("Clean room 'cr' does not exist.".into())
        );
        assert_eq!(
            run(
                &mut st,
                json!({"dbt_platform_task": {"connection_resource_name": "dbt", "dbt_platform_job_id": "1"}})
            ),
            Started::Refused("Connection 'dbt' does not exist.".into())
        );
        assert_eq!(
            run(
                &mut st,
                json!({"gen_ai_compute_task": {"dl_runtime_image": "i", "training_script_path": "/Workspace/t.py"}})
            ),
            failed("File not found: /Workspace/t.py")
        );
        assert_eq!(
            run(
                &mut st,
                json!({"alert_task": {"workspace_path": "/Shared/a.dbalert.json"}})
            ),
            Started::Refused("Alert not found: /Shared/a.dbalert.json".into())
        );
        assert_eq!(
            run(&mut st, json!({"alert_task": {"alert_id": "a1"}})),
            Started::success()
        );
    }

    #[test]
    fn a_condition_task_answers_with_its_outcome() {
        let mut st = State::new("u@x", 1);
        let outcome = |s: Started| match s {
            Started::Ran { outcome, .. } => outcome,
            other => panic!("{other:?}"),
        };
        let cond = |op: &str, l: &str, r: &str| json!({"condition_task": {"op": op, "left": l, "right": r}});
        assert_eq!(
            outcome(run(
                &mut st,
                cond("EQUAL_TO", "{{job.parameters.env}}", "dev")
            )),
            Some("true".into())
        );
        assert_eq!(
            outcome(run(&mut st, cond("GREATER_THAN", "2", "10"))),
            Some("false".into())
        );
        assert_eq!(
            run(&mut st, cond("LESS_THAN", "a", "1")),
            failed("Cannot compare 'a' and '1' numerically with LESS_THAN")
        );
    }

    #[test]
    fn a_pipeline_task_that_cannot_start_is_refused() {
        let mut st = State::new("u@x", 1);
        match run(&mut st, json!({"pipeline_task": {"pipeline_id": "nope"}})) {
            Started::Refused(m) => assert!(m.contains("nope"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_onboarding_wheel_needs_its_file() {
        let mut st = State::new("u@x", 1);
        let w = |params: Value| {
            json!({"python_wheel_task": {"package_name": "databricks_labs_sdp_meta",
                "entry_point": "run", "named_parameters": params}})
        };
        assert_eq!(
            run(&mut st, w(json!({}))),
            failed("sdp-meta onboarding: the named parameter onboarding_file_path is missing.")
        );
        assert_eq!(
            run(
                &mut st,
                w(json!({"onboarding_file_path": "/Volumes/c/s/v/o.json"}))
            ),
            failed(
                "sdp-meta onboarding: onboarding_file_path '/Volumes/c/s/v/o.json' is not a file in a volume."
            )
        );
        assert_eq!(
            run(
                &mut st,
                json!({"python_wheel_task": {"package_name": "other", "entry_point": "main"}})
            ),
            Started::success()
        );
    }
}
