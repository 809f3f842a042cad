//! sdp-meta's topologies: a group's bronze and silver run as two pipelines (`split`) or as
//! one `bronze_silver` pipeline (`combined`), each configured from the onboarding's
//! `pipeline_configuration` without hand-written merges; and a YAML onboarding file comes
//! with YAML expectations and transformations files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{file_text, local_dump, objects, run, run_ok};
use serde_json::Value;

const CONFIG: &str = r##"
provider "databricks" {
  host = "local"
}

variable "pipeline_mode" {
  type    = string
  default = "combined"
}

resource "sdp_meta_flow" "orders" {
  data_flow_id    = "1"
  data_flow_group = "G"

  source {
    format = "delta"
    table  = "${databricks_catalog.main.name}.raw.orders"
  }

  bronze {
    database = "${databricks_catalog.main.name}.${databricks_schema.layer["bronze"].name}"
    table    = "orders"
    expectations {
      expect_or_drop = { valid_id = "id IS NOT NULL" }
    }
  }

  silver {
    database   = "${databricks_catalog.main.name}.${databricks_schema.layer["silver"].name}"
    table      = "orders"
    select_exp = ["id", "amount"]
  }
}

resource "sdp_meta_onboarding" "all" {
  volume_path   = databricks_volume.conf.volume_path
  env           = "dev"
  file_name     = "onboarding.yml"
  flows         = [sdp_meta_flow.orders]
  database      = "${databricks_catalog.main.name}.${databricks_schema.layer["specs"].name}"
  pipeline_mode = var.pipeline_mode
  dependency    = "databricks-labs-sdp-meta==0.1.0"
}

data "databricks_current_user" "me" {}

resource "databricks_notebook" "runner" {
  path           = "${data.databricks_current_user.me.home}/topology/runner"
  language       = "PYTHON"
  content_base64 = base64encode("# runs sdp-meta's DataflowPipeline")
}

# One pipeline per entry of the group's configuration, whatever the topology.
resource "databricks_pipeline" "run" {
  for_each   = sdp_meta_onboarding.all.pipeline_configuration["G"]
  name       = "topology-${each.key}"
  catalog    = databricks_catalog.main.name
  schema     = databricks_schema.layer[each.key == "silver" ? "silver" : "bronze"].name
  serverless = true

  configuration = each.value

  library {
    notebook {
      path = databricks_notebook.runner.id
    }
  }
}
"##;

/// Pipeline name → its configuration, from the local workspace.
fn pipelines(dump: &Value) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = dump["pipelines"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| {
            (
                p["spec"]["name"].as_str().unwrap().to_string(),
                p["spec"]["configuration"].clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn plan_is_empty(d: &std::path::Path, args: &[&str]) {
    let mut all = vec!["plan", "--local", "--detailed-exitcode"];
    all.extend_from_slice(args);
    let (code, out, err) = run(d, &all, &[]);
    assert_eq!(code, 0, "the plan is not empty:\n{out}{err}");
}

#[test]
fn combined_and_split_topologies_are_configured_from_the_onboarding() {
    let text = format!("{CONFIG}{}", common::sdp_meta_layers("topology", "conf"));
    let dir = common::config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    let dump = local_dump(d);
    let specs = "topology.specs";
    assert_eq!(
        pipelines(&dump),
        [(
            "topology-bronze_silver".to_string(),
            serde_json::json!({
                "layer": "bronze_silver",
                "bronze.group": "G",
                "bronze.dataflowspecTable": format!("{specs}.bronze_dataflowspec"),
                "silver.group": "G",
                "silver.dataflowspecTable": format!("{specs}.silver_dataflowspec"),
                "sdp_meta_dependency": "databricks-labs-sdp-meta==0.1.0",
                "sdp_meta_whl": "databricks-labs-sdp-meta==0.1.0",
            })
        )]
    );

    // The YAML onboarding's other files are YAML too, and its rows name them.
    let conf = "/Volumes/topology/specs/conf/conf";
    let onboarding = file_text(&dump, &format!("{conf}/onboarding.yml"));
    for (file, holds) in [
        (
            "dqe/1/bronze_expectations.yml",
            "\"valid_id\": \"id IS NOT NULL\"",
        ),
        ("silver_transformations.yml", "\"target_table\": \"orders\""),
    ] {
        let path = format!("{conf}/{file}");
        let text = file_text(&dump, &path);
        assert!(text.contains(holds), "{path}:\n{text}");
        assert!(onboarding.contains(&path), "{onboarding}");
    }
    assert!(
        !objects(&dump).iter().any(|o| o.ends_with(".json")),
        "{:?}",
        objects(&dump)
    );
    plan_is_empty(d, &[]);

    // Split: the combined pipeline goes, a bronze and a silver one come; the onboarding's
    // files stay as they are (only its setting and derived configuration change).
    let split = ["-var", "pipeline_mode=split"];
    let mut args = vec!["apply", "--local", "--auto-approve"];
    args.extend_from_slice(&split);
    let out = run_ok(d, &args, &[]);
    assert!(out.contains("2 added, 1 changed, 1 destroyed"), "{out}");
    assert!(!out.contains("Uploading"), "{out}");
    let dump = local_dump(d);
    let names: Vec<String> = pipelines(&dump).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["topology-bronze", "topology-silver"]);
    assert_eq!(
        pipelines(&dump)[1].1["layer"],
        "silver",
        "{:?}",
        pipelines(&dump)
    );
    plan_is_empty(d, &split);

    let mut args = vec!["destroy", "--local", "--auto-approve"];
    args.extend_from_slice(&split);
    run_ok(d, &args, &[]);
    let dump = local_dump(d);
    assert!(objects(&dump).is_empty(), "{:?}", objects(&dump));
    assert!(pipelines(&dump).is_empty());
}
