//! Dynamic value references (`{{job.run_id}}`, `{{tasks.KEY.values.NAME}}`, `{{input}}`):
//! the run replaces them with their values in a task's parameters when the task starts.
//!
//! What the service does, and where it says so (https://docs.databricks.com/aws/en/jobs/dynamic-value-references,
//! also https://docs.databricks.com/en/jobs/parameter-value-references.html):
//! - "When a job or task runs, a string literal replaces the dynamic value reference."
//! - "User-provided value identifiers support alphanumeric and underscore characters.
//!   Escape keys that contain special characters by surrounding the identifier with
//!   backticks": `{{job.parameters.`my-param`}}`.
//! - "Syntax errors, including non-existent dynamic reference values and missing braces,
//!   are silently ignored and are treated as literal strings. An error message is
//!   displayed if you provide an not valid reference belonging to a known namespace, for
//!   example, {{job.notebook_url}}." Here a reference outside the known namespaces stays
//!   as written, and one inside them that cannot be resolved fails the task that uses it
//!   when it starts (an upstream task value that was never set included: the Databricks
//!   CLI's issue #3827 shows a run failing on "the depending task variable not found").
//! - `{{job.start_time.<argument>}}` is the run's start in UTC; its arguments are
//!   `iso_weekday`, `is_weekday`, `iso_date`, `iso_datetime`, `year`, `month`, `day`,
//!   `hour`, `minute`, `second` and `timestamp_ms`.
//! - `{{tasks.<task_name>.result_state}}` is lower case: `success`, `failed`, `excluded`,
//!   `canceled`, `timedout`, `upstream_canceled`, `upstream_failed`, … .
//! - In a For each task's nested task, `{{input}}` is the iteration's element and
//!   `{{input.<key>}}` a field of it (https://docs.databricks.com/en/jobs/for-each.html).
//! - A task value that is not a string is written as JSON: "If a task value was set to a
//!   boolean value, it will be serialized to "true" or "false" for the comparison"
//!   (databricks-sdk-py databricks/sdk/service/jobs.py, `ConditionTask.op`).
//!
//! References the service knows but the local workspace does not model (the trigger,
//! `workspace.url`, `task.notebook_path`, execution counts, SQL task output, backfills)
//! stay as written.

use super::RunTask;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The most a task's parameters may hold once their references are resolved. Not a limit
/// of the service (its own are smaller: a task value is at most 48 KiB, a For each input
/// array 48 KB); it keeps a value referenced many times from filling the memory.
pub const MAX_RESOLVED_BYTES: usize = 1 << 20;

/// Why a task's parameters cannot be resolved: its message fails the task that uses them
/// when it starts, as the service refuses it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    /// A reference of a known namespace that names nothing the run has.
    #[error("Could not resolve {{{{{reference}}}}}: {cause}.")]
    Unresolved {
        /// The reference as written between the braces, trimmed.
        reference: String,
        cause: Unresolvable,
    },
    /// The parameters grow past [`MAX_RESOLVED_BYTES`] once resolved.
    #[error(
        "The task's parameters are longer than {MAX_RESOLVED_BYTES} bytes once their dynamic value references are resolved."
    )]
    TooLarge,
}

/// Why a reference of a known namespace cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unresolvable {
    #[error("it is not a dynamic value reference")]
    NotAReference,
    #[error(
        "'{0}' is not one of iso_weekday, is_weekday, iso_date, iso_datetime, year, month, day, hour, minute, second, timestamp_ms"
    )]
    StartTimeArgument(String),
    #[error("the job has no parameter '{0}'")]
    NoParameter(String),
    #[error("the run has no task '{0}'")]
    NoTask(String),
    #[error("task '{0}' has not ended")]
    NotEnded(String),
    #[error("task '{key}' did not set the task value '{name}'")]
    NoTaskValue { key: String, name: String },
    #[error("the input has no field '{0}'")]
    NoInputField(String),
    #[error("the input is not an object with that field")]
    InputNotAnObject,
}

/// What references resolve against: the run, its tasks, and the task being started.
pub struct Scope<'a> {
    pub job_id: i64,
    pub job_name: &'a str,
    pub run_id: i64,
    /// The run's start, in milliseconds since the epoch.
    pub start_time: i64,
    /// How many times the run has been repaired.
    pub repair_count: usize,
    pub workspace_id: i64,
    /// The run's job parameters; `None` while the job parameters themselves are resolved
    /// (they cannot refer to each other).
    pub params: Option<&'a BTreeMap<String, String>>,
    /// Every task run of the run; `tasks.KEY.*` reads the latest attempt of `KEY`.
    pub tasks: &'a [RunTask],
    /// The task being started: its key and task run id (`task.name`, `task.run_id`).
    pub task: Option<(&'a str, i64)>,
    /// In an iteration of a For each task, its element.
    pub input: Option<&'a Value>,
}

/// `s` with every reference the scope resolves replaced by its value. `Err` names the
/// first reference of a known namespace that cannot be resolved.
pub fn resolve(s: &str, sc: &Scope) -> Result<String, RefError> {
    let mut budget = MAX_RESOLVED_BYTES;
    resolve_within(s, sc, &mut budget)
}

/// Every string in `v` resolved, all of them within one [`MAX_RESOLVED_BYTES`] budget.
pub fn resolve_value(v: &Value, sc: &Scope, budget: &mut usize) -> Result<Value, RefError> {
    Ok(match v {
        Value::String(s) => Value::String(resolve_within(s, sc, budget)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| resolve_value(i, sc, budget))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => Value::Object(resolve_map(m, sc, budget, None)?),
        other => other.clone(),
    })
}

/// The strings of `m` resolved, except under the key `skip` (a For each task's nested
/// task, which is resolved per iteration, with its input).
pub fn resolve_map(
    m: &Map<String, Value>,
    sc: &Scope,
    budget: &mut usize,
    skip: Option<&str>,
) -> Result<Map<String, Value>, RefError> {
    let mut out = Map::new();
    for (k, v) in m {
        let v = if Some(k.as_str()) == skip {
            v.clone()
        } else {
            resolve_value(v, sc, budget)?
        };
        out.insert(k.clone(), v);
    }
    Ok(out)
}

fn resolve_within(s: &str, sc: &Scope, budget: &mut usize) -> Result<String, RefError> {
    if !s.contains("{{") {
        return spend(s.to_string(), budget);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            // Missing braces: the text stays as it is.
            break;
        };
        // `{{ {{job.id}}`: the reference is the innermost opening before the close.
        let inner_open = after[..close].rfind("{{").map_or(0, |i| i + 2);
        out.push_str(&rest[..open + inner_open]);
        let inner = &after[inner_open..close];
        match lookup(inner.trim(), sc)? {
            Some(value) => out.push_str(&value),
            None => {
                out.push_str("{{");
                out.push_str(inner);
                out.push_str("}}");
            }
        }
        if out.len() > *budget {
            return Err(RefError::TooLarge);
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    spend(out, budget)
}

fn spend(s: String, budget: &mut usize) -> Result<String, RefError> {
    *budget = budget.checked_sub(s.len()).ok_or(RefError::TooLarge)?;
    Ok(s)
}

/// The segments of a reference: identifiers of letters, digits and `_`, or anything but a
/// backtick between backticks, joined by dots. `None`: not a reference (a syntax error,
/// which stays literal).
fn segments(inner: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = inner;
    loop {
        let (seg, tail) = if let Some(quoted) = rest.strip_prefix('`') {
            let end = quoted.find('`')?;
            (&quoted[..end], &quoted[end + 1..])
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        if seg.is_empty() {
            return None;
        }
        out.push(seg);
        if tail.is_empty() {
            return Some(out);
        }
        rest = tail.strip_prefix('.')?;
    }
}

/// The value of one reference: `Ok(None)` leaves it as written (not a reference, or one
/// the local workspace does not model); `Err` fails the task.
fn lookup(inner: &str, sc: &Scope) -> Result<Option<String>, RefError> {
    let Some(path) = segments(inner) else {
        return Ok(None);
    };
    let fail = |cause: Unresolvable| {
        Err(RefError::Unresolved {
            reference: inner.to_string(),
            cause,
        })
    };
    let not_a_reference = || fail(Unresolvable::NotAReference);
    match path.as_slice() {
        ["job", "id"] => Ok(Some(sc.job_id.to_string())),
        ["job", "run_id"] => Ok(Some(sc.run_id.to_string())),
        ["job", "name"] => Ok(Some(sc.job_name.to_string())),
        ["job", "repair_count"] => Ok(Some(sc.repair_count.to_string())),
        ["job", "start_time", arg] => match start_time(sc.start_time, arg) {
            Some(v) => Ok(Some(v)),
            None => fail(Unresolvable::StartTimeArgument(arg.to_string())),
        },
        ["job", "parameters", name] => match sc.params {
            Some(params) => match params.get(*name) {
                Some(v) => Ok(Some(v.clone())),
                None => fail(Unresolvable::NoParameter(name.to_string())),
            },
            // Job parameters are resolved before they exist; one naming another stays.
            None => Ok(None),
        },
        ["job", "trigger", ..] => Ok(None),
        ["job", ..] => not_a_reference(),
        ["task", "name"] => Ok(sc.task.map(|(k, _)| k.to_string())),
        ["task", "run_id"] => Ok(sc.task.map(|(_, id)| id.to_string())),
        ["task", "execution_count" | "notebook_path"] => Ok(None),
        ["task", ..] => not_a_reference(),
        ["tasks", key, rest @ ..] => {
            if sc.params.is_none() {
                // Job parameters are resolved when the run starts, before any task ran.
                return Ok(None);
            }
            let Some(t) = sc.tasks.iter().rfind(|t| t.task_key == *key) else {
                return fail(Unresolvable::NoTask(key.to_string()));
            };
            match rest {
                ["run_id"] => Ok(Some(t.run_id.to_string())),
                ["result_state"] => match &t.result {
                    Some(r) => Ok(Some(r.to_lowercase())),
                    None => fail(Unresolvable::NotEnded(key.to_string())),
                },
                ["values", name] => match t.values.get(*name) {
                    Some(v) => Ok(Some(text(v))),
                    None => fail(Unresolvable::NoTaskValue {
                        key: key.to_string(),
                        name: name.to_string(),
                    }),
                },
                ["error_code" | "execution_count" | "notebook_path"] | ["output", ..] => Ok(None),
                _ => not_a_reference(),
            }
        }
        ["workspace", "id"] => Ok(Some(sc.workspace_id.to_string())),
        ["workspace", "url"] => Ok(None),
        ["workspace", ..] => not_a_reference(),
        ["input", rest @ ..] => match (sc.input, rest) {
            // Outside a For each task `input` is no namespace: the text stays.
            (None, _) => Ok(None),
            (Some(v), []) => Ok(Some(text(v))),
            (Some(Value::Object(m)), [field]) => match m.get(*field) {
                Some(v) => Ok(Some(text(v))),
                None => fail(Unresolvable::NoInputField(field.to_string())),
            },
            (Some(_), _) => fail(Unresolvable::InputNotAnObject),
        },
        // The emulator's earlier spelling of the run id, kept for configurations that use it.
        ["run", "id"] => Ok(Some(sc.run_id.to_string())),
        _ => Ok(None),
    }
}

/// A JSON value as a reference writes it: a string as it is, anything else as JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `{{job.start_time.<arg>}}` of a run that started at `ms` (UTC).
fn start_time(ms: i64, arg: &str) -> Option<String> {
    let ts = jiff::Timestamp::from_millisecond(ms).ok()?;
    let t = ts.to_zoned_datetime(jiff::tz::TimeZone::UTC);
    let weekday = t.weekday().to_monday_one_offset();
    Some(match arg {
        "iso_weekday" => weekday.to_string(),
        "is_weekday" => (weekday <= 5).to_string(),
        "iso_date" => t.strftime("%Y-%m-%d").to_string(),
        "iso_datetime" => t.strftime("%Y-%m-%dT%H:%M:%S").to_string(),
        "year" => t.year().to_string(),
        "month" => t.month().to_string(),
        "day" => t.day().to_string(),
        "hour" => t.hour().to_string(),
        "minute" => t.minute().to_string(),
        "second" => t.second().to_string(),
        "timestamp_ms" => ms.to_string(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(key: &str, run_id: i64, result: Option<&str>, values: Value) -> RunTask {
        let mut t = RunTask::pending(run_id, key.into(), 0, Map::new());
        t.result = result.map(str::to_string);
        if let Value::Object(v) = values {
            t.values = v;
        }
        t
    }

    fn with<T>(input: Option<&Value>, f: impl FnOnce(&Scope) -> T) -> T {
        let params = BTreeMap::from([
            ("env".to_string(), "dev".to_string()),
            ("my-param".to_string(), "dashed".to_string()),
        ]);
        let tasks = vec![
            task(
                "setup",
                11,
                Some("SUCCESS"),
                json!({"flag": true, "n": 3, "who": "ann", "list": [1, "a"]}),
            ),
            task("broken", 12, Some("UPSTREAM_FAILED"), json!({})),
            task("later", 13, None, json!({})),
        ];
        // 2024-01-06T07:08:09.010Z, a Saturday.
        let sc = Scope {
            job_id: 9,
            job_name: "nightly",
            run_id: 7,
            start_time: 1_704_524_889_010,
            repair_count: 2,
            workspace_id: 42,
            params: Some(&params),
            tasks: &tasks,
            task: Some(("check", 14)),
            input,
        };
        f(&sc)
    }

    fn ok(s: &str) -> String {
        with(None, |sc| resolve(s, sc)).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        with(None, |sc| resolve(s, sc)).expect_err(s).to_string()
    }

    #[test]
    fn job_and_task_references_are_replaced() {
        assert_eq!(ok("job_{{job.run_id}}"), "job_7");
        assert_eq!(
            ok("{{job.id}}/{{job.name}}/{{job.repair_count}}"),
            "9/nightly/2"
        );
        assert_eq!(ok("{{ job.parameters.env }}"), "dev");
        assert_eq!(ok("{{job.parameters.`my-param`}}"), "dashed");
        assert_eq!(ok("{{task.name}}:{{task.run_id}}"), "check:14");
        assert_eq!(ok("{{tasks.setup.run_id}}"), "11");
        assert_eq!(ok("{{tasks.broken.result_state}}"), "upstream_failed");
        assert_eq!(ok("{{workspace.id}}"), "42");
        assert_eq!(ok("{{run.id}}"), "7");
    }

    #[test]
    fn the_start_time_is_the_runs_start_in_utc() {
        let s = "{{job.start_time.iso_date}} {{job.start_time.iso_datetime}} {{job.start_time.iso_weekday}} {{job.start_time.is_weekday}}";
        assert_eq!(ok(s), "2024-01-06 2024-01-06T07:08:09 6 false");
        assert_eq!(
            ok(
                "{{job.start_time.year}}-{{job.start_time.month}}-{{job.start_time.day}} {{job.start_time.hour}}:{{job.start_time.minute}}:{{job.start_time.second}}"
            ),
            "2024-1-6 7:8:9"
        );
        assert_eq!(ok("{{job.start_time.timestamp_ms}}"), "1704524889010");
        assert!(err("{{job.start_time.week}}").contains("'week' is not one of"));
    }

    #[test]
    fn task_values_are_written_as_json_unless_they_are_strings() {
        assert_eq!(ok("{{tasks.setup.values.flag}}"), "true");
        assert_eq!(ok("{{tasks.setup.values.n}}"), "3");
        assert_eq!(ok("{{tasks.setup.values.who}}"), "ann");
        assert_eq!(ok("{{tasks.setup.values.list}}"), r#"[1,"a"]"#);
    }

    #[test]
    fn what_cannot_be_resolved_in_a_known_namespace_fails_and_the_rest_stays() {
        assert_eq!(
            err("{{tasks.setup.values.missing}}"),
            "Could not resolve {{tasks.setup.values.missing}}: task 'setup' did not set the task value 'missing'."
        );
        assert!(err("{{tasks.nope.run_id}}").contains("the run has no task 'nope'"));
        assert!(err("{{tasks.later.result_state}}").contains("has not ended"));
        assert!(err("{{job.parameters.nope}}").contains("no parameter 'nope'"));
        assert!(err("{{job.notebook_url}}").contains("not a dynamic value reference"));
        // Outside the known namespaces, syntax errors, missing braces, and references the
        // local workspace does not model: left as written.
        for literal in [
            "{{foo.bar}}",
            "{{job.parameters.my-param}}",
            "{{job.id",
            "{{ }}",
            "{{job.trigger.type}}",
            "{{workspace.url}}",
            "{{tasks.setup.output.rows}}",
            "{{input}}",
        ] {
            assert_eq!(ok(literal), literal);
        }
        assert_eq!(ok("a {{ {{job.id}} b"), "a {{ 9 b");
    }

    #[test]
    fn an_iteration_resolves_its_input() {
        let input = json!({"table": "orders", "n": 2});
        let got = with(Some(&input), |sc| {
            resolve("{{input.table}}:{{input.n}}:{{input}}", sc)
        });
        assert_eq!(got.unwrap(), r#"orders:2:{"table":"orders","n":2}"#);
        let got = with(Some(&input), |sc| resolve("{{input.nope}}", sc));
        assert!(got.unwrap_err().to_string().contains("no field 'nope'"));
        let plain = json!("a");
        assert_eq!(
            with(Some(&plain), |sc| resolve("{{input}}", sc)).unwrap(),
            "a"
        );
    }

    #[test]
    fn resolving_stops_at_a_megabyte() {
        let big = "x".repeat(40_000);
        let tasks = vec![task("t", 1, Some("SUCCESS"), json!({ "big": big }))];
        let params = BTreeMap::new();
        let sc = Scope {
            job_id: 1,
            job_name: "j",
            run_id: 2,
            start_time: 0,
            repair_count: 0,
            workspace_id: 3,
            params: Some(&params),
            tasks: &tasks,
            task: None,
            input: None,
        };
        let many = "{{tasks.t.values.big}}".repeat(100);
        assert!(
            resolve(&many, &sc)
                .unwrap_err()
                .to_string()
                .contains("longer than")
        );
        // The budget spans every string of the parameters.
        let list = Value::Array(vec![json!("{{tasks.t.values.big}}".repeat(20)); 3]);
        let mut budget = MAX_RESOLVED_BYTES;
        assert!(resolve_value(&list, &sc, &mut budget).is_err());
        assert_eq!(
            resolve("{{tasks.t.values.big}}", &sc).unwrap().len(),
            40_000
        );
    }
}
