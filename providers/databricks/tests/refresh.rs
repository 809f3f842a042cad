//! A no-op plan reads Unity Catalog children with one list call per parent, not one GET per
//! object; and it still notices an object deleted outside brickform.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use brickform_core::plan::{Action, ActionReason, PlanMode};
use common::Harness;
use reqwest::Method;

const CONFIG: &str = r#"
resource "databricks_catalog" "c" {
  name          = "refresh_test"
  force_destroy = true
}
resource "databricks_schema" "s" {
  count        = 2
  catalog_name = databricks_catalog.c.name
  name         = "s${count.index}"
}
resource "databricks_volume" "v" {
  count        = 6
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s[count.index % 2].name
  name         = "v${count.index}"
  volume_type  = "MANAGED"
}
"#;

#[tokio::test]
async fn no_op_plan_lists_children_per_parent() {
    let h = Harness::start().await;
    let (_, report) = h.run(CONFIG, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.added, 9);

    h.control(Method::DELETE, "requests", serde_json::Value::Null)
        .await;
    let (plan, _) = h.run(CONFIG, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    let gets = h.requests("GET").await;
    let volume_calls = gets
        .iter()
        .filter(|p| p.contains("/unity-catalog/volumes"))
        .count();
    let schema_calls = gets
        .iter()
        .filter(|p| p.contains("/unity-catalog/schemas"))
        .count();
    assert_eq!(
        volume_calls, 2,
        "one list per schema for 6 volumes: {gets:#?}"
    );
    assert_eq!(
        schema_calls, 1,
        "one list for the 2 schemas of the catalog: {gets:#?}"
    );

    // A volume deleted outside brickform is still noticed through the listing.
    reqwest::Client::new()
        .delete(format!(
            "{}/api/2.1/unity-catalog/volumes/refresh_test.s1.v3",
            h.url
        ))
        .bearer_auth("t")
        .send()
        .await
        .unwrap();
    let (plan, _) = h.run(CONFIG, PlanMode::Normal, false).await;
    let v3 = plan
        .changes
        .iter()
        .find(|c| c.address == "databricks_volume.v[3]")
        .unwrap();
    assert_eq!(v3.action, Action::Create);
    assert_eq!(v3.reason, Some(ActionReason::CreateBecauseDeletedOutside));
}
