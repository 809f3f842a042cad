//! The lookups a plan makes before each create (is the object there already, and whose
//! is it?): the jobs and the pipelines of one plan are looked up in one listing per kind,
//! and a block of new objects has that listing started with the plan, not in its turn; a
//! destroy lists the tables its pipelines publish once per schema.

use crate::common;

use brickform_core::plan::PlanMode;
use common::Harness;
use serde_json::json;

const NEW_JOBS: &str = r#"
resource "databricks_pipeline" "p" {
  count      = 3
  name       = "p${count.index}"
  catalog    = "main"
  schema     = "s"
  serverless = true
}
resource "databricks_job" "j" {
  count = 3
  name  = "j${count.index}"
  task {
    task_key = "t"
    pipeline_task { pipeline_id = databricks_pipeline.p[count.index].id }
  }
}
"#;

fn count(paths: &[String], path: &str) -> usize {
    paths.iter().filter(|p| *p == path).count()
}

#[tokio::test]
async fn new_jobs_and_pipelines_are_looked_up_in_one_listing_per_kind() {
    let h = Harness::start().await;
    let (plan, d) = h.try_plan(NEW_JOBS, PlanMode::Normal).await;
    assert!(plan.is_some(), "{d:?}");
    let gets = h.requests("GET").await;
    assert_eq!(count(&gets, "/api/2.2/jobs/list"), 1, "{gets:?}");
    assert_eq!(count(&gets, "/api/2.0/pipelines"), 1, "{gets:?}");
}

/// A plan of objects state already holds looks nothing up ahead: no listing is made that
/// the plan does not use.
#[tokio::test]
async fn nothing_is_listed_ahead_for_blocks_state_holds() {
    let h = Harness::start().await;
    h.run(NEW_JOBS, PlanMode::Normal, true).await;
    h.control(reqwest::Method::DELETE, "requests", json!(null))
        .await;
    let (plan, d) = h.try_plan(NEW_JOBS, PlanMode::Normal).await;
    assert!(!plan.expect("planned").has_changes(), "{d:?}");
    let gets = h.requests("GET").await;
    assert_eq!(count(&gets, "/api/2.0/pipelines"), 0, "{gets:?}");
}

/// A destroy lists the tables of the schema its pipelines publish into once, though each
/// pipeline starts that listing ahead and then asks it for its data impact; a plan that
/// deletes nothing lists none.
#[tokio::test]
async fn a_destroy_lists_each_schema_s_tables_once() {
    let h = Harness::start().await;
    h.run(NEW_JOBS, PlanMode::Normal, true).await;
    let tables = "/api/2.1/unity-catalog/tables";
    h.control(reqwest::Method::DELETE, "requests", json!(null))
        .await;
    let (plan, d) = h.try_plan(NEW_JOBS, PlanMode::Normal).await;
    assert!(!plan.expect("planned").has_changes(), "{d:?}");
    let gets = h.requests("GET").await;
    assert_eq!(count(&gets, tables), 0, "{gets:?}");

    let (plan, d) = h.try_plan(NEW_JOBS, PlanMode::Destroy).await;
    assert!(plan.is_some(), "{d:?}");
    let gets = h.requests("GET").await;
    assert_eq!(count(&gets, tables), 1, "{gets:?}");
}
