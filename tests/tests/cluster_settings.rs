//! The cluster settings of jobs and pipelines as the service answers them, each a behaviour
//! of the local workspace (on by default): a job cluster's `apply_policy_default_values` is
//! never answered; `data_security_mode` DATA_SECURITY_MODE_DEDICATED / STANDARD / AUTO come
//! back as SINGLE_USER / USER_ISOLATION; `driver_node_type_id` is filled from
//! `node_type_id` (jobs and pipelines); a task's code `source` is filled (WORKSPACE, or GIT
//! with a git_source). None of these shows as a change on any plan: after an apply, in a
//! plan that changes something else, after `brickform import` of the object, or when an
//! object made outside brickform is taken over by its configuration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{SERVED_PROVIDER as PROVIDER, Serve, config};
use common::{served as bf, served_ok as bf_ok, served_plan_is_empty as plan_is_empty};
use serde_json::{Value, json};
use std::path::Path;

const NEW_CLUSTER: &str = r#"spark_version = "15.4.x-scala2.12"
      node_type_id  = "i3.xlarge""#;

/// The one job the workspace holds, as `jobs/get` answers it.
fn only_job(serve: &Serve) -> (i64, Value) {
    let jobs = serve.ok("GET", "/api/2.2/jobs/list", None);
    let id = jobs["jobs"][0]["job_id"].as_i64().expect("a job");
    let got = serve.ok("GET", &format!("/api/2.2/jobs/get?job_id={id}"), None);
    (id, got)
}

fn task<'v>(job: &'v Value, key: &str) -> &'v Value {
    job["settings"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_key"] == key)
        .unwrap_or_else(|| panic!("no task {key} in {job}"))
}

/// A plan that changes something: it shows `change`, and none of the attributes `hidden`
/// as changing (added, removed or changed).
fn plan_shows_only_the_change(d: &Path, serve: &Serve, change: &str, hidden: &[&str]) {
    let (code, out, err) = bf(d, serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains(change),
        "the change {change:?} is not shown:\n{out}"
    );
    for line in out.lines() {
        let Some(rest) = ["~ ", "+ ", "- "]
            .iter()
            .find_map(|sym| line.trim_start().strip_prefix(sym))
        else {
            continue;
        };
        for h in hidden {
            let named = rest
                .strip_prefix(h)
                .is_some_and(|r| r.starts_with(' ') || r.starts_with('='));
            assert!(
                !named,
                "{h} shows as a change, and the service holds it already:\n{out}"
            );
        }
    }
}

/// Forgets `address` and imports it again by `id`, as an object brickform never wrote: the
/// state then holds what the service answers, and the plan must still be empty.
fn imported_again_plans_nothing(d: &Path, serve: &Serve, address: &str, id: &str) {
    bf_ok(d, serve, &["state", "rm", address]);
    bf_ok(d, serve, &["import", address, id]);
    plan_is_empty(d, serve);
}

fn destroy(d: &Path, serve: &Serve) {
    let out = bf_ok(d, serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("Destroy complete"), "{out}");
    let jobs = serve.ok("GET", "/api/2.2/jobs/list", None);
    assert!(jobs.get("jobs").is_none_or(|j| j == &json!([])), "{jobs}");
}

fn write(d: &Path, cfg: &str) {
    std::fs::write(d.join("main.bf.hcl"), cfg).unwrap();
}

#[test]
fn apply_policy_default_values_is_consumed_and_never_shows_as_a_change() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "j" {{
  name = "policy"
  job_cluster {{
    job_cluster_key = "shared"
    new_cluster {{
      {NEW_CLUSTER}
      num_workers                 = 1
      policy_id                   = "pol"
      apply_policy_default_values = true
    }}
  }}
  task {{
    task_key        = "a"
    job_cluster_key = "shared"
    notebook_task {{ notebook_path = "/Shared/a" }}
  }}
  task {{
    task_key = "b"
    notebook_task {{ notebook_path = "/Shared/b" }}
    new_cluster {{
      {NEW_CLUSTER}
      num_workers                 = 2
      policy_id                   = "pol"
      apply_policy_default_values = true
    }}
  }}
  task {{
    task_key = "each"
    for_each_task {{
      inputs = "[1, 2]"
      task {{
        task_key = "each_one"
        notebook_task {{ notebook_path = "/Shared/c" }}
        new_cluster {{
          {NEW_CLUSTER}
          num_workers                 = 1
          policy_id                   = "pol"
          apply_policy_default_values = true
        }}
      }}
    }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // The service acted on the flag and answers none of the three.
    let (id, job) = only_job(&serve);
    let clusters = [
        &job["settings"]["job_clusters"][0]["new_cluster"],
        &task(&job, "b")["new_cluster"],
        &task(&job, "each")["for_each_task"]["task"]["new_cluster"],
    ];
    for c in clusters {
        assert_eq!(c["policy_id"], "pol", "{c}");
        assert!(c.get("apply_policy_default_values").is_none(), "{c}");
    }
    plan_is_empty(d, &serve);

    // Another change of the job is planned without the flag.
    let more = cfg.replace(
        "num_workers                 = 2",
        "num_workers                 = 3",
    );
    write(d, &more);
    plan_shows_only_the_change(d, &serve, "num_workers", &["apply_policy_default_values"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);

    // Turning it off is a change of what is sent, though the service answers neither.
    let off = more.replacen(
        "apply_policy_default_values = true",
        "apply_policy_default_values = false",
        1,
    );
    write(d, &off);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("apply_policy_default_values"), "{out}");
    write(d, &more);
    imported_again_plans_nothing(d, &serve, "databricks_job.j", &id.to_string());
    destroy(d, &serve);
}

#[test]
fn access_modes_answered_by_their_older_names_never_show_as_a_change() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "j" {{
  name = "modes"
  job_cluster {{
    job_cluster_key = "dedicated"
    new_cluster {{
      {NEW_CLUSTER}
      num_workers        = 1
      data_security_mode = "DATA_SECURITY_MODE_DEDICATED"
      single_user_name   = "local-user@brickform.local"
    }}
  }}
  task {{
    task_key        = "a"
    job_cluster_key = "dedicated"
    notebook_task {{ notebook_path = "/Shared/a" }}
  }}
  task {{
    task_key = "b"
    notebook_task {{ notebook_path = "/Shared/b" }}
    new_cluster {{
      {NEW_CLUSTER}
      num_workers        = 2
      data_security_mode = "DATA_SECURITY_MODE_STANDARD"
    }}
  }}
  task {{
    task_key = "c"
    notebook_task {{ notebook_path = "/Shared/c" }}
    new_cluster {{
      {NEW_CLUSTER}
      num_workers        = 1
      data_security_mode = "DATA_SECURITY_MODE_AUTO"
    }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // Held and answered in the older names; AUTO as the mode the service chose.
    let (id, job) = only_job(&serve);
    let mode = |c: &Value| c["data_security_mode"].as_str().unwrap().to_string();
    assert_eq!(
        mode(&job["settings"]["job_clusters"][0]["new_cluster"]),
        "SINGLE_USER"
    );
    assert_eq!(mode(&task(&job, "b")["new_cluster"]), "USER_ISOLATION");
    assert_eq!(mode(&task(&job, "c")["new_cluster"]), "USER_ISOLATION");
    plan_is_empty(d, &serve);

    write(
        d,
        &cfg.replace("num_workers        = 2", "num_workers        = 3"),
    );
    plan_shows_only_the_change(d, &serve, "num_workers", &["data_security_mode"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
    imported_again_plans_nothing(d, &serve, "databricks_job.j", &id.to_string());

    // A mode the service answers in none of the configured one's names moved: drift.
    let (_, mut job) = only_job(&serve);
    job["settings"]["tasks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["task_key"] == "b")
        .unwrap()["new_cluster"]["data_security_mode"] = json!("SINGLE_USER");
    serve.ok(
        "POST",
        "/api/2.2/jobs/reset",
        Some(json!({"job_id": id, "new_settings": job["settings"]})),
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("DATA_SECURITY_MODE_STANDARD"), "{out}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
    destroy(d, &serve);
}

#[test]
fn driver_node_types_filled_from_the_workers_never_show_as_a_change() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "j" {{
  name = "drivers"
  job_cluster {{
    job_cluster_key = "shared"
    new_cluster {{
      {NEW_CLUSTER}
      num_workers = 1
    }}
  }}
  task {{
    task_key        = "a"
    job_cluster_key = "shared"
    notebook_task {{ notebook_path = "/Shared/a" }}
  }}
  task {{
    task_key = "b"
    notebook_task {{ notebook_path = "/Shared/b" }}
    new_cluster {{
      spark_version = "15.4.x-scala2.12"
      node_type_id  = "WORKERS"
      num_workers   = 2
    }}
  }}
}}

resource "databricks_pipeline" "p" {{
  name    = "drivers"
  storage = "/pipelines/drivers"
  cluster {{
    node_type_id = "m5.large"
    num_workers  = 1
  }}
  library {{
    notebook {{ path = "/Shared/dlt" }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg.replace("WORKERS", "i3.xlarge"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // The drivers run on the workers' node type.
    let (id, job) = only_job(&serve);
    let driver = |c: &Value| c["driver_node_type_id"].as_str().unwrap().to_string();
    assert_eq!(
        driver(&job["settings"]["job_clusters"][0]["new_cluster"]),
        "i3.xlarge"
    );
    assert_eq!(driver(&task(&job, "b")["new_cluster"]), "i3.xlarge");
    let pipelines = serve.ok("GET", "/api/2.0/pipelines", None);
    let pid = pipelines["statuses"][0]["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    let p = serve.ok("GET", &format!("/api/2.0/pipelines/{pid}"), None);
    assert_eq!(driver(&p["spec"]["clusters"][0]), "m5.large");
    plan_is_empty(d, &serve);

    // Other workers: the driver follows them, and is not planned back to the old type.
    write(d, &cfg.replace("WORKERS", "m5.xlarge"));
    plan_shows_only_the_change(d, &serve, "m5.xlarge", &["driver_node_type_id"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (_, job) = only_job(&serve);
    assert_eq!(driver(&task(&job, "b")["new_cluster"]), "m5.xlarge");
    plan_is_empty(d, &serve);
    imported_again_plans_nothing(d, &serve, "databricks_job.j", &id.to_string());
    imported_again_plans_nothing(d, &serve, "databricks_pipeline.p", &pid);
    destroy(d, &serve);
}

#[test]
fn the_source_of_task_code_the_service_fills_in_never_shows_as_a_change() {
    let tasks = r#"
  task {
    task_key = "nb"
    notebook_task { notebook_path = "PATH/nb" }
  }
  task {
    task_key = "py"
    spark_python_task { python_file = "PATH/main.py" }
    new_cluster {
      spark_version = "15.4.x-scala2.12"
      node_type_id  = "i3.xlarge"
      num_workers   = 1
    }
  }
  task {
    task_key = "each"
    for_each_task {
      inputs = "[1, 2]"
      task {
        task_key = "each_one"
        notebook_task { notebook_path = "PATH/each" }
      }
    }
  }
"#;
    for (git, path, source) in [
        ("", "/Shared", "WORKSPACE"),
        (
            r#"
  git_source {
    url      = "https://github.com/example/etl"
    provider = "gitHub"
    branch   = "main"
  }"#,
            "etl",
            "GIT",
        ),
    ] {
        let cfg = format!(
            "{PROVIDER}\nresource \"databricks_job\" \"j\" {{\n  name = \"sources\"\n  description = \"first\"{git}\n{}}}\n",
            tasks.replace("PATH", path)
        );
        let dir = config(&[("main.bf.hcl", &cfg)]);
        let d = dir.path();
        let serve = Serve::start(&d.join(".brickform/local"), &[]);
        bf_ok(d, &serve, &["apply", "--auto-approve"]);
        // Each task's code reads as coming from where the service takes it.
        let (id, job) = only_job(&serve);
        assert_eq!(task(&job, "nb")["notebook_task"]["source"], source);
        assert_eq!(task(&job, "py")["spark_python_task"]["source"], source);
        assert_eq!(
            task(&job, "each")["for_each_task"]["task"]["notebook_task"]["source"],
            source
        );
        plan_is_empty(d, &serve);

        write(d, &cfg.replace("\"first\"", "\"second\""));
        plan_shows_only_the_change(d, &serve, "second", &["source"]);
        bf_ok(d, &serve, &["apply", "--auto-approve"]);
        plan_is_empty(d, &serve);
        imported_again_plans_nothing(d, &serve, "databricks_job.j", &id.to_string());
        destroy(d, &serve);
    }
}

/// A job and a pipeline made outside brickform with every one of these settings, and a
/// configuration that says the same: taken over (adopted by the plan), or imported by id,
/// they plan no change.
#[test]
fn objects_made_outside_with_these_settings_are_taken_over_without_a_change() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "j" {{
  name = "outside"
  job_cluster {{
    job_cluster_key = "shared"
    new_cluster {{
      {NEW_CLUSTER}
      num_workers                 = 1
      data_security_mode          = "DATA_SECURITY_MODE_DEDICATED"
      single_user_name            = "local-user@brickform.local"
      policy_id                   = "pol"
      apply_policy_default_values = true
    }}
  }}
  task {{
    task_key        = "nb"
    job_cluster_key = "shared"
    notebook_task {{ notebook_path = "/Shared/nb" }}
  }}
  task {{
    task_key = "py"
    spark_python_task {{ python_file = "/Shared/main.py" }}
    new_cluster {{
      {NEW_CLUSTER}
      num_workers        = 2
      data_security_mode = "DATA_SECURITY_MODE_AUTO"
    }}
  }}
  task {{
    task_key = "each"
    new_cluster {{
      {NEW_CLUSTER}
      num_workers        = 1
      data_security_mode = "DATA_SECURITY_MODE_STANDARD"
    }}
    for_each_task {{
      inputs = "[1, 2]"
      task {{
        task_key = "each_one"
        notebook_task {{ notebook_path = "/Shared/each" }}
      }}
    }}
  }}
}}

resource "databricks_pipeline" "p" {{
  name    = "outside"
  storage = "/pipelines/outside"
  cluster {{
    node_type_id = "m5.large"
    num_workers  = 1
  }}
  library {{
    notebook {{ path = "/Shared/dlt" }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let cluster = |extra: Value| {
        let mut c = json!({"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge"});
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let job = serve.ok(
        "POST",
        "/api/2.2/jobs/create",
        Some(json!({
            "name": "outside",
            "job_clusters": [{"job_cluster_key": "shared", "new_cluster": cluster(json!({
                "num_workers": 1, "data_security_mode": "DATA_SECURITY_MODE_DEDICATED",
                "single_user_name": "local-user@brickform.local", "policy_id": "pol",
                "apply_policy_default_values": true}))}],
            "tasks": [
                {"task_key": "nb", "job_cluster_key": "shared",
                 "notebook_task": {"notebook_path": "/Shared/nb"}},
                {"task_key": "py", "spark_python_task": {"python_file": "/Shared/main.py"},
                 "new_cluster": cluster(json!({"num_workers": 2,
                    "data_security_mode": "DATA_SECURITY_MODE_AUTO"}))},
                {"task_key": "each", "new_cluster": cluster(json!({"num_workers": 1,
                    "data_security_mode": "DATA_SECURITY_MODE_STANDARD"})),
                 "for_each_task": {"inputs": "[1, 2]", "task": {"task_key": "each_one",
                    "notebook_task": {"notebook_path": "/Shared/each"}}}},
            ],
        })),
    );
    let id = job["job_id"].as_i64().unwrap().to_string();
    let pid = serve.ok(
        "POST",
        "/api/2.0/pipelines",
        Some(json!({"name": "outside", "storage": "/pipelines/outside",
            "clusters": [{"node_type_id": "m5.large", "num_workers": 1}],
            "libraries": [{"notebook": {"path": "/Shared/dlt"}}]})),
    )["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();

    // Taken over by the plan: imported, nothing to change.
    let (code, out, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("Plan: 2 to import, 0 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);

    // Imported by id: the state holds what the service answers, and still nothing changes.
    imported_again_plans_nothing(d, &serve, "databricks_job.j", &id);
    imported_again_plans_nothing(d, &serve, "databricks_pipeline.p", &pid);

    // The first write after an import sends the configuration as it is spelled, which the
    // state did not know (the service answered the access modes in their older names and
    // never the policy flag): only what the service fills in stays out of it.
    let more = cfg.replace("num_workers        = 2", "num_workers        = 3");
    write(d, &more);
    plan_shows_only_the_change(d, &serve, "num_workers", &["source", "driver_node_type_id"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
    write(
        d,
        &more.replace("num_workers        = 3", "num_workers        = 4"),
    );
    plan_shows_only_the_change(
        d,
        &serve,
        "num_workers",
        &[
            "apply_policy_default_values",
            "data_security_mode",
            "source",
            "driver_node_type_id",
        ],
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
    destroy(d, &serve);
}
