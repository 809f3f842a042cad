//! An sdp-meta job on the local workspace does the work its pipelines declare: onboarding
//! writes the dataflowspec tables, and a bronze pipeline reads the delta source its spec
//! names. Before that table has landed, the run fails at the bronze task with Spark's
//! `TABLE_OR_VIEW_NOT_FOUND` naming it (silver never starts); once it is there, the same run
//! succeeds and bronze and silver have set up their tables (`sdp_meta_reads_its_sources`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{SERVED_PROVIDER as PROVIDER, Serve, config};
use common::{served as bf, served_ok as bf_ok, served_plan_is_empty};
use serde_json::{Value, json};

const CONFIG: &str = r#"
resource "sdp_meta_flow" "orders" {
  data_flow_id    = "1"
  data_flow_group = "G"

  source {
    format = "delta"
    table  = "${databricks_catalog.main.name}.${databricks_schema.layer["raw"].name}.orders"
  }

  bronze {
    database = "${databricks_catalog.main.name}.${databricks_schema.layer["bronze"].name}"
    table    = "orders"
  }

  silver {
    database = "${databricks_catalog.main.name}.${databricks_schema.layer["silver"].name}"
    table    = "orders"
  }
}

resource "sdp_meta_onboarding" "all" {
  volume_path      = databricks_volume.conf.volume_path
  env              = "dev"
  flows            = [sdp_meta_flow.orders]
  database         = "${databricks_catalog.main.name}.${databricks_schema.layer["specs"].name}"
  sdp_meta_version = "0.1.0"
  dependency       = "databricks-labs-sdp-meta==0.1.0"
}

resource "databricks_notebook" "runner" {
  path           = "/Shared/sdp_sources/init_sdp_meta_pipeline"
  language       = "PYTHON"
  content_base64 = base64encode("from databricks.labs.sdp_meta.dataflow_pipeline import DataflowPipeline\nDataflowPipeline.invoke_dlt_pipeline(spark, spark.conf.get('layer'))\n")
}

resource "databricks_pipeline" "layer" {
  for_each   = toset(["bronze", "silver"])
  name       = "sdp-sources-${each.key}"
  catalog    = databricks_catalog.main.name
  schema     = databricks_schema.layer[each.key].name
  serverless = true

  configuration = sdp_meta_onboarding.all.pipeline_configuration["G"][each.key]

  library {
    notebook {
      path = databricks_notebook.runner.path
    }
  }
}

# Onboarding, then bronze, then silver.
resource "databricks_job" "refresh" {
  name = "sdp-sources-refresh"

  environment {
    environment_key = "sdp_meta"
    spec {
      client       = "1"
      dependencies = [sdp_meta_onboarding.all.dependency]
    }
  }

  task {
    task_key        = "onboarding"
    environment_key = "sdp_meta"
    python_wheel_task {
      package_name     = "databricks_labs_sdp_meta"
      entry_point      = "run"
      named_parameters = sdp_meta_onboarding.all.named_parameters
    }
  }

  task {
    task_key = "bronze"
    depends_on {
      task_key = "onboarding"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.layer["bronze"].id
    }
  }

  task {
    task_key = "silver"
    depends_on {
      task_key = "bronze"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.layer["silver"].id
    }
  }
}
"#;

const UC: &str = "/api/2.1/unity-catalog";

/// The table `full`, or the error the service answers for it.
fn table(serve: &Serve, full: &str) -> (u16, Value) {
    serve.call("GET", &format!("{UC}/tables/{full}"), None)
}

/// The id of the pipeline named `name`.
fn pipeline_id(serve: &Serve, name: &str) -> String {
    let list = serve.ok("GET", "/api/2.0/pipelines", None);
    list["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p["pipeline_id"].as_str())
        .unwrap_or_else(|| panic!("no pipeline {name} in {list}"))
        .to_string()
}

/// The states of the pipeline's updates, newest first.
fn update_states(serve: &Serve, id: &str) -> Vec<Value> {
    let list = serve.ok("GET", &format!("/api/2.0/pipelines/{id}/updates"), None);
    list["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["state"].clone())
        .collect()
}

#[test]
fn a_bronze_pipeline_fails_until_its_delta_source_has_landed_then_sets_up_its_tables() {
    let layers = common::sdp_meta_layers("sdp_sources", "sdp_meta");
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{layers}{CONFIG}"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.ok(
        "POST",
        "/__emulator/timings",
        Some(json!({"update_step": 20, "run_setup": 20, "task": 50})),
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    served_plan_is_empty(d, &serve);
    let bronze = pipeline_id(&serve, "sdp-sources-bronze");

    // The raw table has not landed: onboarding succeeds, bronze fails naming the table, and
    // silver never starts.
    let (code, out, err) = bf(d, &serve, &["run", "databricks_job.refresh"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "Task bronze failed with message: [TABLE_OR_VIEW_NOT_FOUND] The table or view `sdp_sources`.`raw`.`orders` cannot be found. Verify the spelling and correctness of the schema and catalog."
        ),
        "{out}{err}"
    );
    assert!(err.contains("silver: UPSTREAM_FAILED"), "{err}");
    assert_eq!(update_states(&serve, &bronze), [json!("FAILED")]);
    // Onboarding wrote its dataflowspec tables; bronze set up nothing.
    for spec in ["bronze_dataflowspec", "silver_dataflowspec"] {
        let (status, t) = table(&serve, &format!("sdp_sources.specs.{spec}"));
        assert_eq!(status, 200, "{t}");
        assert_eq!(t["table_type"], "MANAGED", "{t}");
    }
    assert_eq!(table(&serve, "sdp_sources.bronze.orders").0, 404);

    // The table lands (an ingestion, another team's job); the same run succeeds.
    serve.ok(
        "POST",
        "/__emulator/tables",
        Some(json!({"full_name": "sdp_sources.raw.orders"})),
    );
    let out = bf_ok(d, &serve, &["run", "databricks_job.refresh"]);
    for t in ["onboarding", "bronze", "silver"] {
        assert!(out.contains(&format!("task {t}: SUCCESS")), "{out}");
    }
    assert_eq!(
        update_states(&serve, &bronze),
        [json!("COMPLETED"), json!("FAILED")]
    );
    for (full, layer) in [
        ("sdp_sources.bronze.orders", "bronze"),
        ("sdp_sources.silver.orders", "silver"),
    ] {
        let (status, t) = table(&serve, full);
        assert_eq!(status, 200, "{full}: {t}");
        assert_eq!(t["table_type"], "STREAMING_TABLE", "{t}");
        assert_eq!(
            t["pipeline_id"],
            json!(pipeline_id(&serve, &format!("sdp-sources-{layer}"))),
            "{t}"
        );
    }
    // What the runs made is no drift of what brickform manages.
    served_plan_is_empty(d, &serve);

    // Without the behaviour, a run succeeds whatever the sources, and sets up nothing.
    serve.ok(
        "POST",
        "/__emulator/behaviours",
        Some(json!({"sdp_meta_reads_its_sources": false})),
    );
    serve.ok(
        "DELETE",
        &format!("{UC}/tables/sdp_sources.raw.orders"),
        None,
    );
    let out = bf_ok(d, &serve, &["run", "databricks_job.refresh"]);
    assert!(out.contains("task bronze: SUCCESS"), "{out}");

    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("Destroy complete!"), "{out}");
    let (status, _) = table(&serve, "sdp_sources.bronze.orders");
    assert_eq!(status, 404);
}
