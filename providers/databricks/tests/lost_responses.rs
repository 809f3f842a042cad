//! A create whose response is lost after the service made the change: the client repeats
//! it, and brickform must end with exactly one object, recorded in state.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_core::plan::PlanMode;
use common::Harness;
use reqwest::Method;
use serde_json::json;

const CONFIG: &str = r#"
resource "databricks_catalog" "c" {
  name          = "lost"
  force_destroy = true
}
resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "s"
}
resource "databricks_job" "j" {
  name = "lost-job"
  task {
    task_key = "t"
    condition_task {
      op    = "EQUAL_TO"
      left  = "1"
      right = "1"
    }
  }
}
"#;

#[tokio::test]
async fn lost_create_responses_leave_no_duplicate() {
    let h = Harness::start().await;
    for path in [
        "/api/2.1/unity-catalog/catalogs",
        "/api/2.1/unity-catalog/schemas",
        "/api/2.2/jobs/create",
    ] {
        h.control(Method::POST, "faults", json!({ "method": "POST", "path": path, "status": 503, "times": 1, "after_side_effect": true })).await;
    }
    let (_, report) = h.run(CONFIG, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.added, 3);
    let faults = h
        .control(Method::GET, "faults", serde_json::Value::Null)
        .await;
    assert!(
        faults.to_string().contains("\"fired\":1"),
        "every fault fired: {faults}"
    );

    let jobs = h.api_get("/api/2.2/jobs/list?name=lost-job").await;
    assert_eq!(
        jobs["jobs"].as_array().map(Vec::len),
        Some(1),
        "one job: {jobs}"
    );
    let schemas = h
        .api_get("/api/2.1/unity-catalog/schemas?catalog_name=lost")
        .await;
    let names: Vec<&str> = schemas["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names.iter().filter(|n| **n == "s").count(), 1, "{names:?}");
    let state = h.state().await;
    assert_eq!(
        state
            .get(&brickform_core::addrs::InstanceAddr::parse("databricks_job.j").unwrap())
            .unwrap()
            .id,
        jobs["jobs"][0]["job_id"].to_string()
    );

    let (plan, _) = h.run(CONFIG, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    h.run(CONFIG, PlanMode::Destroy, true).await;
}
