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
    /// Job parameters by name, as resolved for the run.
    pub params: &'a BTreeMap<String, String>,
    pub run_id: i64,
    pub job_id: i64,
    /// `run-now` asked for a full refresh of the pipelines it runs.
    pub full_refresh: bool,
    /// The whole task spec (its libraries, its cluster), for work that depends on more
    /// than the task type's own object.
    pub task: &'a Map<String, Value>,
}

impl TaskEnv<'_> {
    /// `{{job.parameters.x}}`, `{{job.id}}` and `{{job.run_id}}` references resolved.
    pub fn sub(&self, s: &str) -> String {
        substitute(s, self.params, self.run_id, self.job_id)
    }
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
    checked("for_each_task", check_for_each),
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

/// `{{job.parameters.x}}`, `{{job.id}}` and `{{job.run_id}}` references in task parameters.
pub fn substitute(s: &str, params: &BTreeMap<String, String>, run_id: i64, job_id: i64) -> String {
    let mut out = s
        .replace("{{job.id}}", &job_id.to_string())
        .replace("{{job.run_id}}", &run_id.to_string())
        .replace("{{run.id}}", &run_id.to_string());
    for (k, v) in params {
        out = out
            .replace(&format!("{{{{job.parameters.{k}}}}}", k = k), v)
            .replace(&format!("{{{{job.parameters.`{k}`}}}}"), v);
    }
    out
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

fn check_for_each(o: Obj) -> ApiResult<()> {
    o.req_str("inputs")?;
    o.req_obj("task")?;
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
fn notebook(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let path = env.sub(text(o, "notebook_path"));
    let git = o.get("source").and_then(Value::as_str) == Some("GIT");
    if !git && !crate::workspace::runnable_exists(st, &path) {
        return Started::failure(format!("Notebook not found: {path}"));
    }
    Started::success()
}

/// A file in a volume or the workspace must exist; a relative path is a Git file.
fn spark_python(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let file = env.sub(text(o, "python_file"));
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
            jars.push(env.sub(j));
        }
        maven |= lib.get("maven").is_some();
    }
    if let Some(uri) = o.get("jar_uri").and_then(Value::as_str) {
        jars.push(env.sub(uri));
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
fn spark_submit(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let args: Vec<String> = o
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|a| env.sub(a))
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
    let warehouse = env.sub(text(o, "warehouse_id"));
    let busy_until = env.ctx.now.saturating_add(env.ctx.timings.task_ms());
    if let Err(message) = crate::warehouses::use_for_query(st, env.ctx, &warehouse, busy_until) {
        return Started::Refused(message);
    }
    if let Some(f) = o.get("file").and_then(Value::as_object)
        && f.get("source").and_then(Value::as_str) != Some("GIT")
    {
        let path = env.sub(text(f, "path"));
        if !readable(st, &path) {
            return Started::failure(format!("File not found: {path}"));
        }
    }
    Started::success()
}

/// A workspace dbt project must hold its `dbt_project.yml`; a Git one is cloned at run
/// time.
fn dbt(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    if o.get("source").and_then(Value::as_str) == Some("WORKSPACE") {
        let dir = env.sub(text(o, "project_directory"));
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
    if !st.connections.contains_key(&conn.to_lowercase()) {
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
        if !st.schemas.contains_key(&schema) {
            return Started::failure(format!("Schema '{schema}' does not exist."));
        }
    }
    Started::success()
}

/// An alert given by its workspace path must be there; alerts given by id are not
/// modelled, so they run.
fn alert(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    if let Some(path) = o.get("workspace_path").and_then(Value::as_str) {
        let path = env.sub(path);
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
    if st.connections.contains_key(&conn.to_lowercase()) {
        Started::success()
    } else {
        Started::Refused(format!("Connection '{conn}' does not exist."))
    }
}

/// A training script in the workspace must be there; one from Git is fetched at run time.
fn gen_ai(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    for k in ["training_script_path", "yaml_parameters_file_path"] {
        if let Some(path) = o.get(k).and_then(Value::as_str)
            && o.get("source").and_then(Value::as_str) != Some("GIT")
        {
            let path = env.sub(path);
            if !readable(st, &path) {
                return Started::failure(format!("File not found: {path}"));
            }
        }
    }
    Started::success()
}

/// The workload's code must be there.
fn ai_runtime(st: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    if let Some(path) = o.get("code_source_path").and_then(Value::as_str) {
        let path = env.sub(path);
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
fn condition(_: &mut State, o: &Map<String, Value>, env: &TaskEnv) -> Started {
    let (l, r) = (env.sub(text(o, "left")), env.sub(text(o, "right")));
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

/// The job it runs must exist.
fn run_job(st: &mut State, o: &Map<String, Value>, _: &TaskEnv) -> Started {
    let id = o
        .get("job_id")
        .and_then(|v| v.as_i64().or_else(|| v.as_str()?.parse().ok()))
        .unwrap_or(0);
    if st.jobs.contains_key(&id) {
        Started::success()
    } else {
        Started::failure(format!("Job {id} does not exist."))
    }
}

/// sdp-meta's onboarding wheel (`databricks_labs_sdp_meta`, entry point `run`) reads its
/// onboarding file from a volume and writes into an existing `database` schema; any other
/// wheel succeeds.
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
        named.insert(k.clone(), env.sub(v.as_str().unwrap_or_default()));
    }
    for p in w
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if let Some((k, v)) = p.trim_start_matches('-').split_once('=') {
            named.insert(k.to_string(), env.sub(v));
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
        && !st.schemas.contains_key(&db.to_lowercase())
    {
        return Started::failure(format!(
            "sdp-meta onboarding: database '{db}' is not an existing schema (catalog.schema)."
        ));
    }
    Started::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx<'static> {
        Ctx::for_test(1_000, 100)
    }

    fn run(st: &mut State, spec: Value) -> Started {
        let ctx = ctx();
        let params = BTreeMap::from([("env".to_string(), "dev".to_string())]);
        let Value::Object(spec) = spec else {
            panic!("not an object")
        };
        let env = TaskEnv {
            ctx: &ctx,
            params: &params,
            run_id: 7,
            job_id: 9,
            full_refresh: false,
            task: &spec,
        };
        start(st, &spec, &env)
    }

    /// A stopped warehouse of this id, for SQL tasks to run on.
    fn stopped_warehouse(st: &mut State, id: &str) {
        st.warehouses.insert(
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
        assert_eq!(st.warehouses["w"].state, "STARTING");
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

    #[test]
    fn parameters_are_substituted() {
        let p = BTreeMap::from([("env".to_string(), "dev".to_string())]);
        assert_eq!(
            substitute("/Volumes/c/{{job.parameters.env}}/x", &p, 7, 9),
            "/Volumes/c/dev/x"
        );
        assert_eq!(substitute("{{job.id}}-{{job.run_id}}", &p, 7, 9), "9-7");
    }
}
