//! Job settings: the checks of a complete `JobSettings` object, and the settings as stored
//! (server defaults filled in, empty collections dropped).

use super::tasks;
use crate::behaviours::{Behaviour, Behaviours};
use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use crate::util::drop_empty;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

pub const RUN_IF: &[&str] = &[
    "ALL_SUCCESS",
    "ALL_DONE",
    "NONE_FAILED",
    "AT_LEAST_ONE_SUCCESS",
    "AT_LEAST_ONE_FAILED",
    "ALL_FAILED",
];

pub const PAUSE: &[&str] = &["PAUSED", "UNPAUSED"];

/// Task types whose code is read from the workspace or from the job's Git repository, with
/// the object in them that holds its `source` (a SQL task's file).
const CODE_SOURCES: &[(&str, Option<&str>)] = &[
    ("notebook_task", None),
    ("spark_python_task", None),
    ("dbt_task", None),
    ("sql_task", Some("file")),
];

/// Keyed arrays that `jobs/update` merges by key instead of replacing.
pub const MERGED: &[(&str, &str)] = &[
    ("tasks", "task_key"),
    ("job_clusters", "job_cluster_key"),
    ("environments", "environment_key"),
];

/// Checks a complete JobSettings object (create, reset, and the result of an update).
pub fn check_settings(s: &Map<String, Value>) -> ApiResult<()> {
    let o = Obj::root(s);
    check_fields(&o)?;
    let keys = check_keyed(&o)?;
    check_parameters(&o)?;
    let tasks = o.objs("tasks")?;
    let task_keys = check_task_keys(&tasks)?;
    let job = Job {
        root: &o,
        keys: &keys,
        task_keys: &task_keys,
    };
    let mut deps: HashMap<String, Vec<String>> = HashMap::new();
    for (p, m) in &tasks {
        let t = Obj::at(m, p);
        let key = t.req_str("task_key")?;
        deps.insert(key.to_string(), check_task(&job, &t, p, key)?);
    }
    if let Some(cycle) = find_cycle(&deps) {
        return Err(ApiError::invalid(format!(
            "The tasks have a dependency cycle: {}",
            cycle.join(" → ")
        )));
    }
    check_starts(&o)?;
    if let Some(q) = o.obj("queue")? {
        Obj::at(q, "queue")
            .bool("enabled")?
            .ok_or_else(|| crate::body::missing("queue.enabled"))?;
    }
    if let Some(r) = o.obj("run_as")? {
        Obj::at(r, "run_as").one_of(&["user_name", "service_principal_name", "group_name"])?;
    }
    for k in [
        "email_notifications",
        "webhook_notifications",
        "notification_settings",
        "health",
        "git_source",
        "deployment",
    ] {
        o.obj(k)?;
    }
    if let Some(g) = o.obj("git_source")? {
        let g = Obj::at(g, "git_source");
        g.req_str("git_url")?;
        g.req_str("git_provider")?;
    }
    o.enum_str("edit_mode", &["UI_LOCKED", "EDITABLE"])?;
    o.enum_str("format", &["MULTI_TASK", "SINGLE_TASK"])?;
    o.enum_str("performance_target", &["PERFORMANCE_OPTIMIZED", "STANDARD"])?;
    Ok(())
}

/// The job's own scalar fields and their limits.
fn check_fields(o: &Obj) -> ApiResult<()> {
    if let Some(n) = o.str("name")?
        && n.len() > 4096
    {
        return Err(ApiError::invalid(
            "Invalid value for field 'name': at most 4096 bytes",
        ));
    }
    o.str("description")?;
    for k in ["timeout_seconds", "max_concurrent_runs"] {
        if let Some(n) = o.int(k)?
            && n < 0
        {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{k}': must not be negative"
            )));
        }
    }
    if o.int("max_concurrent_runs")?.is_some_and(|n| n > 1000) {
        return Err(ApiError::invalid(
            "Invalid value for field 'max_concurrent_runs': at most 1000",
        ));
    }
    if let Some(t) = o.str_map("tags")?
        && t.len() > 25
    {
        return Err(ApiError::invalid(
            "Invalid value for field 'tags': at most 25 tags",
        ));
    }
    Ok(())
}

/// The job clusters' and environments' keys, each unique, by the list they are defined in.
fn check_keyed(o: &Obj) -> ApiResult<HashMap<&'static str, HashSet<String>>> {
    let mut keys = HashMap::new();
    for (kind, key) in [
        ("job_clusters", "job_cluster_key"),
        ("environments", "environment_key"),
    ] {
        let mut seen = HashSet::new();
        for (p, m) in o.objs(kind)? {
            let k = Obj::at(m, &p).req_str(key)?;
            if let Some(c) = Obj::at(m, &p).obj("new_cluster")? {
                let cp = format!("{p}.new_cluster");
                crate::compute::check_cluster(Obj::at(c, &cp))?;
            }
            if !seen.insert(k.to_string()) {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field '{p}.{key}': '{k}' is duplicated"
                )));
            }
        }
        keys.insert(kind, seen);
    }
    Ok(keys)
}

/// The job's parameters: each named once, with a default.
fn check_parameters(o: &Obj) -> ApiResult<()> {
    let mut names = HashSet::new();
    for (p, m) in o.objs("parameters")? {
        let po = Obj::at(m, &p);
        let n = po.req_str("name")?;
        po.str("default")?
            .ok_or_else(|| crate::body::missing(&po.path("default")))?;
        if !names.insert(n.to_string()) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}.name': '{n}' is duplicated"
            )));
        }
    }
    Ok(())
}

/// The tasks' keys: well formed and unique.
fn check_task_keys(tasks: &[(String, &Map<String, Value>)]) -> ApiResult<HashSet<String>> {
    if tasks.len() > 1000 {
        return Err(ApiError::invalid(
            "Invalid value for field 'tasks': at most 1000 tasks",
        ));
    }
    let mut task_keys = HashSet::new();
    for (p, m) in tasks {
        let t = Obj::at(m, p);
        let key = t.req_str("task_key")?;
        if key.len() > 100
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}.task_key': '{key}' (letters, digits, '-' and '_', at most 100)"
            )));
        }
        if !task_keys.insert(key.to_string()) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}.task_key': '{key}' is duplicated"
            )));
        }
    }
    Ok(task_keys)
}

/// What a task is checked against: the job, its keyed clusters and environments, and the
/// keys of its tasks.
struct Job<'j, 'a> {
    root: &'j Obj<'a>,
    keys: &'j HashMap<&'static str, HashSet<String>>,
    task_keys: &'j HashSet<String>,
}

/// One task (`t`, at `p`, keyed `key`); the keys of the tasks it depends on.
fn check_task(job: &Job, t: &Obj, p: &str, key: &str) -> ApiResult<Vec<String>> {
    let (o, keys, task_keys) = (job.root, job.keys, job.task_keys);
    t.enum_str("run_if", RUN_IF)?;
    for k in [
        "timeout_seconds",
        "max_retries",
        "min_retry_interval_millis",
    ] {
        t.int(k)?;
    }
    for k in ["disabled", "retry_on_timeout"] {
        t.bool(k)?;
    }
    let kinds: Vec<&tasks::TaskType> = tasks::TASK_TYPES.iter().filter(|k| t.has(k.name)).collect();
    let other_kind = t
        .map
        .keys()
        .any(|k| k.ends_with("_task") && !tasks::is_known(k));
    match kinds.len() {
        0 if !other_kind => {
            return Err(ApiError::invalid(format!(
                "Task '{key}' ({p}) must set one task type, e.g. notebook_task or pipeline_task"
            )));
        }
        n if n > 1 => {
            return Err(ApiError::invalid(format!(
                "Task '{key}' ({p}) sets more than one task type: {}",
                kinds.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
            )));
        }
        _ => {}
    }
    if let Some(c) = t.obj("new_cluster")? {
        let cp = t.path("new_cluster");
        crate::compute::check_cluster(Obj::at(c, &cp))?;
    }
    // Code from Git is checked out from the job's repository.
    if !o.has("git_source") {
        for (kind, inner) in CODE_SOURCES {
            let holder = t.get(kind).and_then(|v| match inner {
                Some(i) => v.get(*i),
                None => Some(v),
            });
            if holder.and_then(|h| h.get("source")).and_then(Value::as_str) == Some("GIT") {
                return Err(ApiError::invalid(format!(
                    "Task '{key}' ({p}): {kind} has source GIT, but the job has no git_source"
                )));
            }
        }
    }
    // spark-submit starts its own driver: it runs on a cluster made for the run only.
    if t.has("spark_submit_task") && !t.has("new_cluster") && !t.has("job_cluster_key") {
        return Err(ApiError::invalid(format!(
            "Task '{key}' ({p}): a spark_submit_task runs only on a new cluster (new_cluster or job_cluster_key)"
        )));
    }
    for k in &kinds {
        if let Some(check) = k.check
            && let Some(m) = t.obj(k.name)?
        {
            check(Obj::at(m, &t.path(k.name)))?;
        }
    }
    for (field, kind) in [
        ("environment_key", "environments"),
        ("job_cluster_key", "job_clusters"),
    ] {
        if let Some(v) = t.str(field)?
            && !keys.get(kind).is_some_and(|s| s.contains(v))
        {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}.{field}': '{v}' is not defined in {kind}"
            )));
        }
    }
    let mut mine = Vec::new();
    for (dp, d) in t.objs("depends_on")? {
        let d = Obj::at(d, &dp);
        let dk = d.req_str("task_key")?;
        d.enum_str("outcome", &["true", "false"])?;
        if dk == key || !task_keys.contains(dk) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{dp}.task_key': task '{key}' depends on '{dk}', which is not another task of this job"
            )));
        }
        mine.push(dk.to_string());
    }
    Ok(mine)
}

/// How runs start: a schedule, continuous running, one trigger or several.
fn check_starts(o: &Obj) -> ApiResult<()> {
    if let Some(sch) = o.obj("schedule")? {
        let sch = Obj::at(sch, "schedule");
        let cron = sch.req_str("quartz_cron_expression")?;
        let zone = sch.req_str("timezone_id")?;
        let quartz = croner::parser::CronParser::builder()
            .seconds(croner::parser::Seconds::Required)
            .alternative_weekdays(true)
            .sloppy_ranges(true)
            .build();
        if let Err(e) = quartz.parse(cron) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'schedule.quartz_cron_expression': '{cron}' is not a valid Quartz cron expression: {e}"
            )));
        }
        let known = jiff::tz::TimeZoneDatabase::bundled()
            .available()
            .any(|n| n.as_str() == zone);
        if !known && !matches!(zone, "UTC" | "GMT" | "Z") {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'schedule.timezone_id': '{zone}' is not a valid time zone id"
            )));
        }
        sch.enum_str("pause_status", PAUSE)?;
    }
    if let Some(c) = o.obj("continuous")? {
        Obj::at(c, "continuous").enum_str("pause_status", PAUSE)?;
    }
    if [o.has("schedule"), o.has("continuous"), o.has("trigger")]
        .iter()
        .filter(|b| **b)
        .count()
        > 1
    {
        return Err(ApiError::invalid(
            "Only one of schedule, continuous, trigger may be set",
        ));
    }
    if !o.objs("triggers")?.is_empty()
        && ["schedule", "continuous", "trigger"]
            .iter()
            .any(|k| o.has(k))
    {
        return Err(ApiError::invalid(
            "triggers cannot be set in the same request as schedule, trigger or continuous",
        ));
    }
    for (p, t) in o.objs("triggers")? {
        let t = Obj::at(t, &p);
        t.enum_str("pause_status", PAUSE)?;
        // One way of starting a run each; a SQL condition may stand alone or guard it.
        const KINDS: &[&str] = &[
            "schedule",
            "continuous",
            "file_arrival",
            "table_update",
            "periodic",
            "model",
        ];
        let set: Vec<&str> = KINDS.iter().copied().filter(|k| t.has(k)).collect();
        if set.len() > 1 || (set.is_empty() && !t.has("sql_condition")) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}': a trigger sets exactly one of {}",
                KINDS.join(", ")
            )));
        }
    }
    if let Some(tr) = o.obj("trigger")? {
        let tr = Obj::at(tr, "trigger");
        tr.enum_str("pause_status", PAUSE)?;
        if let Some(p) = tr.obj("periodic")? {
            let p = Obj::at(p, "trigger.periodic");
            p.req_int("interval")?;
            p.enum_str("unit", &["MINUTES", "HOURS", "DAYS", "WEEKS"])?
                .ok_or_else(|| crate::body::missing("trigger.periodic.unit"))?;
        }
        if let Some(f) = tr.obj("file_arrival")? {
            Obj::at(f, "trigger.file_arrival").req_str("url")?;
        }
        if let Some(t) = tr.obj("table_update")? {
            let t = Obj::at(t, "trigger.table_update");
            if t.strs("table_names")?.is_empty() {
                return Err(crate::body::missing("trigger.table_update.table_names"));
            }
            t.enum_str("condition", &["ANY_UPDATED", "ALL_UPDATED"])?;
        }
    }
    Ok(())
}

pub fn find_cycle(deps: &HashMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        deps: &HashMap<String, Vec<String>>,
        color: &mut HashMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        color.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for d in deps.get(n).into_iter().flatten() {
            match color.get(d.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|s| s == d).unwrap_or(0);
                    let mut c = stack[start..].to_vec();
                    c.push(d.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(d, deps, color, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        color.insert(n.to_string(), 2);
        None
    }
    let mut color = HashMap::new();
    let mut keys: Vec<&String> = deps.keys().collect();
    keys.sort();
    for k in keys {
        if color.get(k.as_str()).copied().unwrap_or(0) == 0
            && let Some(c) = visit(k, deps, &mut color, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// The settings as stored: empty collections dropped (absent == empty), server defaults filled.
pub fn normalize(mut s: Map<String, Value>, b: Behaviours) -> Map<String, Value> {
    s.remove("access_control_list");
    // `continuous {}` means something by being there (the job runs continuously); the
    // service keeps it, with its pause status defaulted.
    let continuous = s.remove("continuous");
    drop_empty(&mut s);
    if let Some(Value::Object(mut c)) = continuous {
        c.entry("pause_status").or_insert(json!("UNPAUSED"));
        s.insert("continuous".into(), Value::Object(c));
    }
    s.insert("format".into(), json!("MULTI_TASK"));
    s.entry("name").or_insert(json!("Untitled"));
    s.entry("max_concurrent_runs").or_insert(json!(1));
    s.entry("timeout_seconds").or_insert(json!(0));
    s.entry("email_notifications").or_insert(json!({}));
    s.entry("webhook_notifications").or_insert(json!({}));
    if let Some(Value::Array(tasks)) = s.get_mut("tasks") {
        for t in tasks.iter_mut() {
            if let Value::Object(t) = t {
                drop_empty(t);
                t.entry("run_if").or_insert(json!("ALL_SUCCESS"));
                t.entry("timeout_seconds").or_insert(json!(0));
                // The service answers with an empty block where the task has none.
                if b.on(Behaviour::TaskEmailNotifications) {
                    t.entry("email_notifications").or_insert(json!({}));
                }
                // ... and with the dependencies sorted by task key, not as sent.
                if b.on(Behaviour::SortDependsOn)
                    && let Some(Value::Array(deps)) = t.get_mut("depends_on")
                {
                    deps.sort_by(|a, b| {
                        let k = |v: &Value| {
                            v.get("task_key")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                        };
                        k(a).cmp(&k(b))
                    });
                }
                if b.on(Behaviour::NewClusterDefaults)
                    && let Some(Value::Object(c)) = t.get_mut("new_cluster")
                {
                    cluster_defaults(c);
                }
            }
        }
    }
    if let Some(Value::Array(clusters)) = s.get_mut("job_clusters") {
        for jc in clusters.iter_mut() {
            if b.on(Behaviour::NewClusterDefaults)
                && let Some(Value::Object(c)) = jc.get_mut("new_cluster")
            {
                cluster_defaults(c);
            }
        }
    }
    // What the service does to every cluster the job defines, wherever it defines it.
    each_new_cluster(&mut s, &mut |c| {
        // Acted on when the cluster is made from its policy, never answered.
        if b.on(Behaviour::ApplyPolicyDefaultValuesConsumed) {
            c.remove("apply_policy_default_values");
        }
        if b.on(Behaviour::DataSecurityModeAliases) {
            crate::compute::resolve_access_mode(c);
        }
        if b.on(Behaviour::DriverNodeTypeFromNodeType) {
            crate::compute::fill_driver_node_type(c);
        }
    });
    s
}

/// Calls `f` with each `new_cluster` of the settings: a task's, a for-each task's inner
/// task's, a job cluster's.
fn each_new_cluster(s: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    if let Some(Value::Array(tasks)) = s.get_mut("tasks") {
        for t in tasks.iter_mut() {
            if let Some(Value::Object(c)) = t.get_mut("new_cluster") {
                f(c);
            }
            if let Some(Value::Object(c)) = t.pointer_mut("/for_each_task/task/new_cluster") {
                f(c);
            }
        }
    }
    if let Some(Value::Array(clusters)) = s.get_mut("job_clusters") {
        for jc in clusters.iter_mut() {
            if let Some(Value::Object(c)) = jc.get_mut("new_cluster") {
                f(c);
            }
        }
    }
}

/// The settings as `jobs/get` and `jobs/list` answer them (`task_source_filled`): each
/// task's code has the source it is read from, GIT when the job has a git_source and
/// WORKSPACE otherwise, where the job left it out. Filled in the answer only: the job holds
/// what it was sent, so a later change of its git_source moves the code with it.
pub fn fill_sources(s: &mut Map<String, Value>, b: Behaviours) {
    if !b.on(Behaviour::TaskSourceFilled) {
        return;
    }
    let source = if s.contains_key("git_source") {
        "GIT"
    } else {
        "WORKSPACE"
    };
    let Some(Value::Array(tasks)) = s.get_mut("tasks") else {
        return;
    };
    for t in tasks.iter_mut() {
        fill_task_source(t, source);
        if let Some(inner) = t.pointer_mut("/for_each_task/task") {
            fill_task_source(inner, source);
        }
    }
}

fn fill_task_source(t: &mut Value, source: &str) {
    for (kind, inner) in CODE_SOURCES {
        let holder = t.get_mut(*kind).and_then(|v| match inner {
            Some(i) => v.get_mut(*i),
            None => Some(v),
        });
        if let Some(Value::Object(h)) = holder {
            h.entry("source").or_insert(json!(source));
        }
    }
}

/// What the service fills into a job's `new_cluster` when the request leaves it out (an
/// AWS workspace, as the Databricks CLI's test server records it): the access mode, elastic
/// disk off, and the cloud attributes of where the cluster runs. A cluster that names its
/// own cloud's attributes keeps them.
pub fn cluster_defaults(c: &mut Map<String, Value>) {
    c.entry("data_security_mode")
        .or_insert(json!("SINGLE_USER"));
    c.entry("enable_elastic_disk").or_insert(json!(false));
    if !["aws_attributes", "azure_attributes", "gcp_attributes"]
        .iter()
        .any(|k| c.contains_key(*k))
    {
        c.insert(
            "aws_attributes".into(),
            json!({"availability": "SPOT_WITH_FALLBACK", "zone_id": "us-east-1c"}),
        );
    }
}

pub fn merge_by_key(old: &mut Vec<Value>, new: &[Value], key: &str) {
    for item in new {
        let k = item.get(key).cloned();
        match old.iter_mut().find(|o| o.get(key) == k.as_ref()) {
            Some(slot) => *slot = item.clone(),
            None => old.push(item.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(v: Value) -> String {
        let Value::Object(m) = v else {
            panic!("not an object")
        };
        match check_settings(&m) {
            Err(e) => e.message,
            Ok(()) => panic!("accepted: {m:?}"),
        }
    }

    #[test]
    fn tasks_are_refused_for_what_they_lack() {
        let m = refused(json!({"tasks": [{"task_key": "d",
            "dbt_task": {"commands": ["dbt run"], "source": "GIT"}}]}));
        assert!(m.contains("has no git_source"), "{m}");
        let m = refused(json!({"tasks": [{"task_key": "s",
            "spark_submit_task": {"parameters": ["a.jar"]}}]}));
        assert!(m.contains("only on a new cluster"), "{m}");
        let m = refused(
            json!({"tasks": [{"task_key": "c", "notebook_task": {"notebook_path": "/n"},
            "new_cluster": {"init_scripts": [{"workspace": {"destination": "/a"}, "dbfs": {"destination": "/b"}}]}}]}),
        );
        assert!(
            m.contains("Only one of tasks[0].new_cluster.init_scripts[0].workspace"),
            "{m}"
        );
        let m = refused(json!({"job_clusters": [{"job_cluster_key": "k",
            "new_cluster": {"aws_attributes": {"availability": "SPOTTY"}}}]}));
        assert!(
            m.contains("job_clusters[0].new_cluster.aws_attributes.availability"),
            "{m}"
        );
        let m = refused(json!({"tasks": [{"task_key": "b",
            "dbt_task": {"commands": ["run"]}}]}));
        assert!(m.contains("not a dbt command"), "{m}");
        let m = refused(json!({"tasks": [{"task_key": "q",
            "sql_task": {"warehouse_id": "w", "query": {"query_id": "q"}, "alert": {"alert_id": "a"}}}]}));
        assert!(m.contains("Only one of"), "{m}");
        let m = refused(json!({"tasks": [{"task_key": "p",
            "pipeline_task": {"pipeline_id": "x", "full_refresh": true, "refresh_selection": ["t"]}}]}));
        assert!(m.contains("full_refresh cannot be combined"), "{m}");
    }

    fn stored(v: Value, b: Behaviours) -> Value {
        let Value::Object(m) = v else {
            panic!("not an object")
        };
        Value::Object(normalize(m, b))
    }

    #[test]
    fn every_cluster_of_a_job_is_held_as_the_service_holds_it() {
        let cluster = json!({"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge",
            "apply_policy_default_values": true, "data_security_mode": "DATA_SECURITY_MODE_DEDICATED"});
        let sent = json!({
            "job_clusters": [{"job_cluster_key": "k", "new_cluster": cluster}],
            "tasks": [
                {"task_key": "a", "notebook_task": {"notebook_path": "/n"}, "new_cluster": cluster},
                {"task_key": "b", "for_each_task": {"inputs": "[1]", "task": {"task_key": "b_i",
                    "notebook_task": {"notebook_path": "/n"}, "new_cluster": cluster}}},
            ],
        });
        let got = stored(sent.clone(), Behaviours::default());
        for at in [
            "/job_clusters/0/new_cluster",
            "/tasks/0/new_cluster",
            "/tasks/1/for_each_task/task/new_cluster",
        ] {
            let c = &got.pointer(at).unwrap();
            assert!(c.get("apply_policy_default_values").is_none(), "{at}: {c}");
            assert_eq!(c["data_security_mode"], "SINGLE_USER", "{at}");
            assert_eq!(c["driver_node_type_id"], "i3.xlarge", "{at}");
        }
        let off = Behaviours::default()
            .without(Behaviour::ApplyPolicyDefaultValuesConsumed)
            .without(Behaviour::DataSecurityModeAliases)
            .without(Behaviour::DriverNodeTypeFromNodeType);
        let got = stored(sent, off);
        let c = &got["tasks"][1]["for_each_task"]["task"]["new_cluster"];
        assert_eq!(c["apply_policy_default_values"], true);
        assert_eq!(c["data_security_mode"], "DATA_SECURITY_MODE_DEDICATED");
        assert!(c.get("driver_node_type_id").is_none(), "{c}");
    }

    #[test]
    fn code_reads_from_git_when_the_job_has_a_repository_and_from_the_workspace_otherwise() {
        let tasks = json!([
            {"task_key": "n", "notebook_task": {"notebook_path": "n"}},
            {"task_key": "p", "spark_python_task": {"python_file": "p.py"}},
            {"task_key": "d", "dbt_task": {"commands": ["dbt run"]}},
            {"task_key": "q", "sql_task": {"warehouse_id": "w", "file": {"path": "q.sql"}}},
            {"task_key": "f", "for_each_task": {"inputs": "[1]", "task": {"task_key": "f_i",
                "notebook_task": {"notebook_path": "n"}}}},
            {"task_key": "s", "notebook_task": {"notebook_path": "/s", "source": "WORKSPACE"}},
            {"task_key": "r", "run_job_task": {"job_id": 1}},
        ]);
        let sources = |s: &Map<String, Value>| -> Vec<Value> {
            [
                "/tasks/0/notebook_task/source",
                "/tasks/1/spark_python_task/source",
                "/tasks/2/dbt_task/source",
                "/tasks/3/sql_task/file/source",
                "/tasks/4/for_each_task/task/notebook_task/source",
                "/tasks/5/notebook_task/source",
            ]
            .iter()
            .map(|p| {
                Value::Object(s.clone())
                    .pointer(p)
                    .cloned()
                    .unwrap_or(Value::Null)
            })
            .collect()
        };
        let mut s = Map::new();
        s.insert("tasks".into(), tasks.clone());
        let mut answered = s.clone();
        fill_sources(&mut answered, Behaviours::default());
        let mut want = vec![json!("WORKSPACE"); 6];
        assert_eq!(sources(&answered), want);
        assert_eq!(answered["tasks"][6], tasks[6]);
        s.insert(
            "git_source".into(),
            json!({"git_url": "u", "git_provider": "gitHub"}),
        );
        let mut answered = s.clone();
        fill_sources(&mut answered, Behaviours::default());
        want = vec![json!("GIT"); 5];
        want.push(json!("WORKSPACE"));
        assert_eq!(sources(&answered), want);
        let mut answered = s.clone();
        fill_sources(
            &mut answered,
            Behaviours::default().without(Behaviour::TaskSourceFilled),
        );
        assert_eq!(answered, s);
    }

    #[test]
    fn cycles_are_named() {
        let mut deps = HashMap::new();
        deps.insert("a".to_string(), vec!["b".to_string()]);
        deps.insert("b".to_string(), vec!["a".to_string()]);
        assert_eq!(find_cycle(&deps).unwrap(), vec!["a", "b", "a"]);
    }
}
