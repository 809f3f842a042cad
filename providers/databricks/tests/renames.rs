//! Renaming a catalog that holds a schema and a volume: the service moves them with it, so
//! they follow the rename in place instead of being replaced.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use brickform_core::plan::{Action, PlanMode};
use common::Harness;

fn config(catalog: &str) -> String {
    format!(
        r#"
resource "databricks_catalog" "c" {{
  name = "{catalog}"
}}
resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.name
  name         = "s"
}}
resource "databricks_volume" "v" {{
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s.name
  name         = "v"
  volume_type  = "MANAGED"
}}
"#
    )
}

#[tokio::test]
async fn children_follow_a_renamed_catalog() {
    let h = Harness::start().await;
    h.run(&config("before"), PlanMode::Normal, true).await;
    let (plan, report) = h.run(&config("after"), PlanMode::Normal, true).await;
    for a in [
        "databricks_catalog.c",
        "databricks_schema.s",
        "databricks_volume.v",
    ] {
        let c = plan.changes.iter().find(|c| c.address == a).unwrap();
        assert_eq!(c.action, Action::Update, "{a}: {:?}", c.fields);
    }
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!((report.added, report.changed, report.destroyed), (0, 3, 0));
    let state = h.state().await;
    assert_eq!(state.get("databricks_volume.v").unwrap().id, "after.s.v");
    let (plan, _) = h.run(&config("after"), PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    h.run(&config("after"), PlanMode::Destroy, true).await;
}
