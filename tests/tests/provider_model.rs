//! Jobs and pipelines written as the Terraform provider writes them: every task type it has,
//! the cluster fields of `new_cluster` and of a pipeline's `cluster`, the deprecated
//! single-task syntax, `always_running` with its `timeouts`, and names left out. Each
//! configuration is applied to the local workspace, planned again (empty) and destroyed;
//! bad values are refused by `validate`, located.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use common::{served as bf, served_ok as bf_ok};
use serde_json::Value;

use common::{SERVED_PROVIDER as PROVIDER, served_plan_is_empty as plan_is_empty};

fn jobs(serve: &Serve) -> Vec<Value> {
    let listed = serve.ok("GET", "/api/2.2/jobs/list", None);
    listed["jobs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|j| {
            let id = j["job_id"].as_i64().unwrap();
            serve.ok("GET", &format!("/api/2.2/jobs/get?job_id={id}"), None)
        })
        .collect()
}

fn task<'a>(job: &'a Value, key: &str) -> &'a Value {
    job["settings"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_key"] == key)
        .unwrap_or_else(|| panic!("no task {key} in {job}"))
}

/// Every task type of the Terraform provider, the provider's cluster fields, a nameless
/// job, and a second job in the deprecated single-task syntax.
const EVERY_TASK_TYPE: &str = r#"
resource "databricks_job" "all" {
  git_source {
    url      = "https://github.com/example/dbt-project"
    provider = "gitHub"
    branch   = "main"
  }
  deployment {
    kind               = "BUNDLE"
    metadata_file_path = "/Workspace/bundle/metadata.json"
  }
  timeouts {
    create = "20m"
    update = "1h30m"
  }
  health {
    rules {
      metric = "RUN_DURATION_SECONDS"
      op     = "GREATER_THAN"
      value  = 3600
    }
  }
  job_cluster {
    job_cluster_key = "big"
    new_cluster {
      spark_version               = "15.4.x-scala2.12"
      node_type_id                = "i3.xlarge"
      num_workers                 = 2
      policy_id                   = "ABC123"
      apply_policy_default_values = true
      enable_elastic_disk         = true
      data_security_mode          = "SINGLE_USER"
      single_user_name            = "someone@example.com"
      runtime_engine              = "PHOTON"
      kind                        = "CLASSIC_PREVIEW"
      is_single_node              = false
      use_ml_runtime              = true
      ssh_public_keys             = ["ssh-ed25519 AAAA example"]
      spark_env_vars              = { PYSPARK_PYTHON = "/databricks/python3/bin/python3" }
      custom_tags                 = { team = "data" }
      aws_attributes {
        availability     = "SPOT_WITH_FALLBACK"
        zone_id          = "auto"
        first_on_demand  = 1
        ebs_volume_type  = "GENERAL_PURPOSE_SSD"
        ebs_volume_count = 1
        ebs_volume_size  = 100
      }
      init_scripts {
        workspace { destination = "/Shared/init.sh" }
      }
      init_scripts {
        volumes { destination = "/Volumes/main/default/scripts/init.sh" }
      }
      cluster_log_conf {
        volumes { destination = "/Volumes/main/default/logs" }
      }
      docker_image {
        url = "databricksruntime/standard:latest"
      }
      workload_type {
        clients {
          jobs      = true
          notebooks = false
        }
      }
    }
  }
  task {
    task_key = "jar"
    job_cluster_key = "big"
    min_retry_interval_millis = 60000
    max_retries = 2
    spark_jar_task {
      main_class_name = "com.example.Main"
      parameters      = ["--day", "today"]
    }
    library {
      maven { coordinates = "com.example:job:1.0" }
    }
  }
  task {
    task_key = "submit"
    new_cluster {
      spark_version           = "15.4.x-scala2.12"
      instance_pool_id        = "pool-workers"
      driver_instance_pool_id = "pool-driver"
      autoscale {
        min_workers = 1
        max_workers = 4
      }
    }
    spark_submit_task {
      parameters = ["--class", "com.example.Main", "dbfs:/jars/job.jar", "arg"]
    }
  }
  task {
    task_key = "dbt"
    dbt_task {
      commands     = ["dbt deps", "dbt run"]
      warehouse_id = "wh1"
      catalog      = "main"
      schema       = "analytics"
      source       = "GIT"
    }
  }
  task {
    task_key = "alert"
    sql_task {
      warehouse_id = "wh1"
      alert {
        alert_id = "alert-1"
        subscriptions { user_name = "someone@example.com" }
        pause_subscriptions = false
      }
    }
  }
  task {
    task_key = "legacy_dashboard"
    sql_task {
      warehouse_id = "wh1"
      dashboard {
        dashboard_id   = "dash-1"
        custom_subject = "Daily"
        subscriptions { destination_id = "dest-1" }
      }
    }
  }
  task {
    task_key = "sql_file"
    sql_task {
      warehouse_id = "wh1"
      parameters   = { day = "today" }
      file {
        path   = "queries/daily.sql"
        source = "GIT"
      }
    }
  }
  task {
    task_key = "dashboard"
    dashboard_task {
      dashboard_id = "lakeview-1"
      warehouse_id = "wh1"
      subscription {
        custom_subject = "Snapshot"
        paused         = false
        subscribers { user_name = "someone@example.com" }
      }
    }
  }
  task {
    task_key = "power_bi"
    power_bi_task {
      warehouse_id             = "wh1"
      connection_resource_name = "pbi"
      refresh_after_update     = true
      power_bi_model {
        workspace_name        = "Sales"
        model_name            = "sales"
        storage_mode          = "DIRECT_QUERY"
        authentication_method = "OAUTH"
        overwrite_existing    = true
      }
      tables {
        catalog      = "main"
        schema       = "sales"
        name         = "orders"
        storage_mode = "DIRECT_QUERY"
      }
    }
  }
  task {
    task_key = "clean_room"
    clean_rooms_notebook_task {
      clean_room_name          = "partners"
      notebook_name            = "overlap"
      notebook_base_parameters = { day = "today" }
    }
  }
  task {
    task_key = "refresh"
    pipeline_task {
      pipeline_id            = "0000-pipeline"
      refresh_selection      = ["orders"]
      full_refresh_selection = ["customers"]
    }
  }
  task {
    task_key = "child"
    run_job_task {
      job_id              = databricks_job.single.id
      jar_params          = ["a", "b"]
      notebook_params     = { day = "today" }
      python_params       = ["--x", "1"]
      python_named_params = { x = "1" }
      spark_submit_params = ["--conf", "a=b"]
      sql_params          = { day = "today" }
      dbt_commands        = ["dbt run"]
      pipeline_params {
        full_refresh = true
      }
    }
  }
}

resource "databricks_job" "single" {
  name = "single task"
  new_cluster {
    spark_version = "15.4.x-scala2.12"
    node_type_id  = "i3.xlarge"
    num_workers   = 1
  }
  notebook_task {
    notebook_path = "/Shared/report"
  }
  max_retries = 1
}
"#;

#[test]
fn every_task_type_and_cluster_field_round_trips() {
    let cfg = format!("{PROVIDER}{EVERY_TASK_TYPE}");
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    // The deprecated syntax is accepted with a warning located at its task type that
    // shows the task block it stands for.
    assert!(
        err.contains("single-task job syntax is deprecated"),
        "{err}"
    );
    assert!(err.contains("main.bf.hcl:217:3"), "{err}");
    assert!(err.contains("task_key = \"main\""), "{err}");
    // The rewrite holds the fields as written, ready to paste.
    assert!(err.contains("max_retries = 1"), "{err}");
    assert!(
        err.contains("spark_version = \"15.4.x-scala2.12\""),
        "{err}"
    );

    let all = jobs(&serve);
    assert_eq!(all.len(), 2);
    let untitled = all
        .iter()
        .find(|j| j["settings"]["name"] == "Untitled")
        .expect("the nameless job is the service's Untitled");
    let big = &untitled["settings"]["job_clusters"][0]["new_cluster"];
    assert_eq!(big["aws_attributes"]["ebs_volume_size"], 100, "{big}");
    assert_eq!(
        big["init_scripts"][1]["volumes"]["destination"],
        "/Volumes/main/default/scripts/init.sh"
    );
    assert_eq!(big["workload_type"]["clients"]["notebooks"], false);
    assert_eq!(big["kind"], "CLASSIC_PREVIEW");
    assert_eq!(task(untitled, "jar")["min_retry_interval_millis"], 60000);
    assert_eq!(
        task(untitled, "submit")["new_cluster"]["driver_instance_pool_id"],
        "pool-driver"
    );
    assert_eq!(
        task(untitled, "power_bi")["power_bi_task"]["tables"][0]["name"],
        "orders"
    );
    assert_eq!(
        task(untitled, "child")["run_job_task"]["pipeline_params"]["full_refresh"],
        true
    );
    assert_eq!(
        task(untitled, "refresh")["pipeline_task"]["full_refresh_selection"][0],
        "customers"
    );
    assert_eq!(untitled["settings"]["health"]["rules"][0]["value"], 3600);
    assert_eq!(untitled["settings"]["deployment"]["kind"], "BUNDLE");
    // brickform's own settings never reach the service.
    assert!(untitled["settings"].get("timeouts").is_none());
    // The single-task job is the one-task job it stands for.
    let single = all
        .iter()
        .find(|j| j["settings"]["name"] == "single task")
        .unwrap();
    let main = task(single, "main");
    assert_eq!(main["notebook_task"]["notebook_path"], "/Shared/report");
    assert_eq!(main["max_retries"], 1);
    assert_eq!(main["new_cluster"]["num_workers"], 1);
    assert!(single["settings"].get("notebook_task").is_none());

    plan_is_empty(d, &serve);
    // Found again by its ownership tag although it has no name of its own.
    let state = common::run_ok(d, &["state", "show", "databricks_job.all", "--json"], &[]);
    assert!(state.contains("CLASSIC_PREVIEW"), "{state}");

    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(jobs(&serve).is_empty());
}

#[test]
fn the_single_task_syntax_plans_the_same_as_its_rewrite() {
    let single = r#"
resource "databricks_job" "single" {
  name = "single"
  existing_cluster_id = "0101-cluster"
  spark_python_task {
    python_file = "dbfs:/jobs/main.py"
  }
  retry_on_timeout = true
}
"#;
    let rewritten = r#"
resource "databricks_job" "single" {
  name = "single"
  task {
    task_key = "main"
    existing_cluster_id = "0101-cluster"
    spark_python_task {
      python_file = "dbfs:/jobs/main.py"
    }
    retry_on_timeout = true
  }
}
"#;
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{single}"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
    // Rewritten by hand as the warning shows, the job is the same: nothing to do.
    std::fs::write(d.join("main.bf.hcl"), format!("{PROVIDER}{rewritten}")).unwrap();
    plan_is_empty(d, &serve);
    // Mixed with task blocks, it is an error at the top-level field.
    let mixed = rewritten.replace(
        "  name = \"single\"\n",
        "  name = \"single\"\n  max_retries = 3\n",
    );
    std::fs::write(d.join("main.bf.hcl"), format!("{PROVIDER}{mixed}")).unwrap();
    let (code, out, err) = bf(d, &serve, &["validate"]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains("max_retries at the top level of a job with task blocks"),
        "{err}"
    );
    assert!(err.contains("main.bf.hcl:"), "{err}");
    std::fs::write(d.join("main.bf.hcl"), format!("{PROVIDER}{rewritten}")).unwrap();
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

#[test]
fn always_running_restarts_the_run_within_its_timeouts() {
    let cfg = |description: &str| {
        format!(
            r#"{PROVIDER}
resource "databricks_job" "stream" {{
  name           = "stream"
  description    = "{description}"
  always_running = true
  timeouts {{
    create = "2m"
    update = "2m"
  }}
  task {{
    task_key = "t"
    spark_python_task {{ python_file = "dbfs:/stream.py" }}
  }}
}}
"#
        )
    };
    let dir = config(&[("main.bf.hcl", &cfg("one"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let runs = |serve: &Serve| {
        let id = jobs(serve)[0]["job_id"].as_i64().unwrap();
        serve.ok("GET", &format!("/api/2.2/jobs/runs/list?job_id={id}"), None)["runs"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(runs(&serve).len(), 1, "the create starts the job's run");
    plan_is_empty(d, &serve);
    std::fs::write(d.join("main.bf.hcl"), cfg("two")).unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let after = runs(&serve);
    assert_eq!(after.len(), 2, "the update starts a new run: {after:?}");
    plan_is_empty(d, &serve);
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

#[test]
fn a_nameless_pipeline_with_cluster_blocks_round_trips() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_pipeline" "p" {{
  catalog = "main"
  schema  = "default"
  library {{
    notebook {{ path = "/Shared/dlt" }}
  }}
  cluster {{
    label                   = "default"
    num_workers             = 2
    instance_pool_id        = "pool-workers"
    driver_instance_pool_id = "pool-driver"
    ssh_public_keys         = ["ssh-ed25519 AAAA example"]
    aws_attributes {{
      availability = "ON_DEMAND"
      zone_id      = "us-east-1a"
    }}
    init_scripts {{
      workspace {{ destination = "/Shared/init.sh" }}
    }}
    cluster_log_conf {{
      dbfs {{ destination = "dbfs:/logs" }}
    }}
  }}
  cluster {{
    label = "maintenance"
    autoscale {{
      min_workers = 1
      max_workers = 3
      mode        = "ENHANCED"
    }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let listed = serve.ok("GET", "/api/2.0/pipelines", None);
    let id = listed["statuses"][0]["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    let got = serve.ok("GET", &format!("/api/2.0/pipelines/{id}"), None);
    let cluster = &got["spec"]["clusters"][0];
    assert_eq!(cluster["aws_attributes"]["zone_id"], "us-east-1a", "{got}");
    assert_eq!(
        cluster["init_scripts"][0]["workspace"]["destination"],
        "/Shared/init.sh"
    );
    plan_is_empty(d, &serve);
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    let left = serve.ok("GET", "/api/2.0/pipelines", None);
    assert!(
        left["statuses"].as_array().is_none_or(Vec::is_empty),
        "{left}"
    );
}

#[test]
fn bad_values_are_refused_where_they_are_written() {
    let cases: &[(&str, &str)] = &[
        (
            r#"
resource "databricks_job" "j" {
  task {
    task_key = "t"
    power_bi_task {
      warehouse_id             = "w"
      connection_resource_name = "c"
      power_bi_model {
        workspace_name        = "w"
        model_name            = "m"
        storage_mode          = "direct_query"
        authentication_method = "OAUTH"
      }
      tables {
        catalog      = "c"
        schema       = "s"
        storage_mode = "IMPORT"
      }
    }
  }
}
"#,
            "DIRECT_QUERY",
        ),
        (
            r#"
resource "databricks_job" "j" {
  job_cluster {
    job_cluster_key = "k"
    new_cluster {
      spark_version = "15.4.x-scala2.12"
      aws_attributes {
        availability = "SPOTTY"
      }
    }
  }
  task {
    task_key = "t"
    job_cluster_key = "k"
    notebook_task { notebook_path = "/n" }
  }
}
"#,
            "SPOTTY",
        ),
        (
            r#"
resource "databricks_job" "j" {
  task {
    task_key = "t"
    sql_task {
      warehouse_id = "w"
      query { query_id = "q" }
      alert { alert_id = "a" }
    }
  }
}
"#,
            "sql_task has both query and alert",
        ),
        (
            r#"
resource "databricks_job" "j" {
  control_run_state = true
  task {
    task_key = "t"
    notebook_task { notebook_path = "/n" }
  }
}
"#,
            "control_run_state is for continuous jobs",
        ),
        (
            r#"
resource "databricks_job" "j" {
  task {
    task_key = "t"
    dbt_task {
      commands = ["dbt run"]
      source   = "GIT"
    }
  }
}
"#,
            "dbt_task takes its code from Git, and the job has no git_source",
        ),
        (
            r#"
resource "databricks_job" "j" {
  timeouts { create = "soon" }
  task {
    task_key = "t"
    notebook_task { notebook_path = "/n" }
  }
}
"#,
            "is not a duration",
        ),
    ];
    for (body, expected) in cases {
        let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{body}"))]);
        let (code, out, err) = common::run(dir.path(), &["validate"], &[]);
        assert_ne!(code, 0, "{body}\n{out}{err}");
        assert!(err.contains(expected), "{expected:?} not in:\n{err}");
        assert!(err.contains("main.bf.hcl:"), "not located:\n{err}");
    }
}

#[test]
fn the_timeouts_block_bounds_the_wait_for_the_run() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "stream" {{
  name           = "slow"
  always_running = true
  timeouts {{ create = "1s" }}
  task {{
    task_key = "t"
    spark_python_task {{ python_file = "dbfs:/stream.py" }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    // Runs stay PENDING for a minute: longer than the one second the create may wait.
    let serve = Serve::start(&d.join(".brickform/local"), &["--run-setup-ms", "60000"]);
    let started = std::time::Instant::now();
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(err.contains("timed out waiting for run"), "{err}");
    // The job was made, and the state knows it.
    let state = common::run_ok(d, &["state", "list"], &[]);
    assert!(state.contains("databricks_job.stream"), "{state}");
    assert_eq!(jobs(&serve).len(), 1);
}

#[test]
fn control_run_state_cancels_the_active_run_of_a_continuous_job_on_update() {
    let cfg = |description: &str| {
        format!(
            r#"{PROVIDER}
resource "databricks_job" "stream" {{
  name              = "stream"
  description       = "{description}"
  control_run_state = true
  continuous {{ pause_status = "PAUSED" }}
  task {{
    task_key = "t"
    spark_python_task {{ python_file = "dbfs:/stream.py" }}
  }}
}}
"#
        )
    };
    let dir = config(&[("main.bf.hcl", &cfg("one"))]);
    let d = dir.path();
    // A task runs for ten minutes: the run is active when the update comes.
    let serve = Serve::start(&d.join(".brickform/local"), &["--task-ms", "600000"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let id = jobs(&serve)[0]["job_id"].as_i64().unwrap();
    let run = serve.ok(
        "POST",
        "/api/2.2/jobs/run-now",
        Some(serde_json::json!({ "job_id": id })),
    )["run_id"]
        .as_i64()
        .unwrap();
    let state = |serve: &Serve| {
        serve.ok("GET", &format!("/api/2.2/jobs/runs/get?run_id={run}"), None)["state"].clone()
    };
    assert_ne!(state(&serve)["life_cycle_state"], "TERMINATED");
    plan_is_empty(d, &serve);
    std::fs::write(d.join("main.bf.hcl"), cfg("two")).unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // The run that ran the old settings is cancelled.
    let after = state(&serve);
    assert_eq!(after["life_cycle_state"], "TERMINATED", "{after}");
    assert_eq!(after["result_state"], "CANCELED", "{after}");
    plan_is_empty(d, &serve);
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

#[test]
fn the_new_task_types_run_when_well_formed_and_fail_as_the_service_does() {
    let cfg = format!(
        r#"{PROVIDER}
# The warehouse the SQL task's alert runs on: a run needs it to exist.
resource "databricks_sql_endpoint" "wh" {{
  name         = "alerts"
  cluster_size = "2X-Small"
}}

resource "databricks_job" "ok" {{
  name = "ok"
  git_source {{
    url      = "https://github.com/example/project"
    provider = "gitHub"
    branch   = "main"
  }}
  task {{
    task_key = "jar"
    new_cluster {{
      spark_version = "15.4.x-scala2.12"
      num_workers   = 1
    }}
    spark_jar_task {{ main_class_name = "com.example.Main" }}
    library {{
      maven {{ coordinates = "com.example:job:1.0" }}
    }}
  }}
  task {{
    task_key = "submit"
    new_cluster {{
      spark_version = "15.4.x-scala2.12"
      num_workers   = 1
    }}
    spark_submit_task {{ parameters = ["--class", "com.example.Main", "dbfs:/jars/job.jar"] }}
  }}
  task {{
    task_key = "dbt"
    dbt_task {{
      commands = ["dbt run"]
      source   = "GIT"
    }}
  }}
  task {{
    task_key = "alert"
    sql_task {{
      warehouse_id = databricks_sql_endpoint.wh.id
      alert {{ alert_id = "a1" }}
    }}
  }}
}}

resource "databricks_job" "broken" {{
  name = "broken"
  task {{
    task_key = "jar"
    new_cluster {{
      spark_version = "15.4.x-scala2.12"
      num_workers   = 1
    }}
    spark_jar_task {{ main_class_name = "com.example.Main" }}
  }}
  task {{
    task_key = "clean_room"
    clean_rooms_notebook_task {{
      clean_room_name = "partners"
      notebook_name   = "overlap"
    }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.ok"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.broken"]);
    assert_eq!(code, 1, "{out}{err}");
    let text = format!("{out}{err}");
    // A JAR task without its JAR cannot find its class; a clean room that is not there
    // cannot run its notebook.
    assert!(
        text.contains("ClassNotFoundException: com.example.Main"),
        "{text}"
    );
    assert!(
        text.contains("Clean room 'partners' does not exist."),
        "{text}"
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

#[test]
fn a_nameless_job_and_pipeline_are_found_again_by_their_ownership_tag() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "nameless" {{
  task {{
    task_key = "t"
    notebook_task {{ notebook_path = "/n" }}
  }}
}}
resource "databricks_pipeline" "nameless" {{
  catalog    = "main"
  schema     = "default"
  serverless = true
  library {{
    notebook {{ path = "/Shared/dlt" }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // The state forgets them; the next plan finds them by their tag, not by a name.
    common::run_ok(
        d,
        &[
            "state",
            "rm",
            "databricks_job.nameless",
            "databricks_pipeline.nameless",
        ],
        &[],
    );
    let (code, out, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 to import, 0 to add"), "{out}{err}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    plan_is_empty(d, &serve);
    assert_eq!(jobs(&serve).len(), 1, "no second job was made");
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(jobs(&serve).is_empty());
}

#[test]
fn the_go_sdk_task_types_and_triggers_of_the_provider_round_trip() {
    let cfg = format!(
        r#"{PROVIDER}
resource "databricks_job" "triggered" {{
  name = "triggered"
  triggers {{
    model {{
      condition      = "MODEL_VERSION_READY"
      securable_name = "main.ml.churn"
    }}
  }}
  triggers {{
    schedule {{
      quartz_cron_expression = "0 0 2 * * ?"
      timezone_id            = "UTC"
    }}
    sql_condition {{
      sql_query_id = "q1"
      warehouse_id = "wh1"
      trigger_mode = "QUERY_RETURNS_ROWS"
    }}
    pause_status = "PAUSED"
  }}
  task {{
    task_key = "alert"
    alert_task {{
      alert_id     = "a1"
      warehouse_id = "wh1"
      subscribers {{ user_name = "someone@example.com" }}
    }}
  }}
  task {{
    task_key = "dbt_platform"
    dbt_platform_task {{
      connection_resource_name = "dbt"
      dbt_platform_job_id      = "42"
    }}
  }}
  task {{
    task_key = "operator"
    python_operator_task {{
      main = "my_operators.Refresh"
      parameters {{
        name  = "table"
        value = "orders"
      }}
    }}
  }}
  task {{
    task_key = "gen_ai"
    gen_ai_compute_task {{
      dl_runtime_image = "databricks/dl-runtime:1"
      command          = "python train.py"
      compute {{ num_gpus = 1 }}
    }}
  }}
  task {{
    task_key = "ai_runtime"
    ai_runtime_task {{
      experiment = "/Shared/experiments/churn"
      deployments {{
        name = "train"
        compute {{
          accelerator_type  = "GPU_1xA10"
          accelerator_count = 1
        }}
      }}
    }}
  }}
}}

resource "databricks_job" "model_triggered" {{
  name = "model triggered"
  trigger {{
    model {{
      condition = "MODEL_ALIAS_SET"
      aliases   = ["champion"]
    }}
  }}
  task {{
    task_key = "t"
    notebook_task {{ notebook_path = "/Shared/n" }}
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &cfg)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let all = jobs(&serve);
    let job = all
        .iter()
        .find(|j| j["settings"]["name"] == "triggered")
        .unwrap();
    assert_eq!(
        job["settings"]["triggers"][1]["sql_condition"]["trigger_mode"],
        "QUERY_RETURNS_ROWS"
    );
    assert_eq!(
        task(job, "ai_runtime")["ai_runtime_task"]["deployments"][0]["compute"]["accelerator_count"],
        1
    );
    assert_eq!(
        task(job, "operator")["python_operator_task"]["parameters"][0]["value"],
        "orders"
    );
    plan_is_empty(d, &serve);
    // The dbt platform task runs through a connection this workspace does not have.
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.triggered"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        format!("{out}{err}").contains("Connection 'dbt' does not exist."),
        "{out}{err}"
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);

    // triggers replaces schedule, trigger and continuous: both is refused, located.
    let both = r#"
resource "databricks_job" "j" {
  schedule {
    quartz_cron_expression = "0 0 2 * * ?"
    timezone_id            = "UTC"
  }
  triggers {
    periodic {
      interval = 1
      unit     = "HOURS"
    }
  }
  task {
    task_key = "t"
    notebook_task { notebook_path = "/n" }
  }
}
"#;
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{both}"))]);
    let (code, out, err) = common::run(dir.path(), &["validate"], &[]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(err.contains("schedule beside triggers"), "{err}");
    assert!(err.contains("main.bf.hcl:6:3"), "{err}");
}
