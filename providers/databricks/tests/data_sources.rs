//! A data source that looks up something the same plan creates is read during apply, after
//! that object exists; and what was built from the lookup is destroyed before the object.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_core::plan::{Action, ActionReason, PlanMode};
use common::Harness;

const CONFIG: &str = r#"
resource "databricks_catalog" "c" {
  name = "lookup_cat"
}
data "databricks_catalog" "c" {
  name = databricks_catalog.c.name
}
resource "databricks_schema" "s" {
  catalog_name = data.databricks_catalog.c.full_name
  name         = "s"
}
output "owner" { value = data.databricks_catalog.c.owner }
"#;

#[tokio::test]
async fn lookups_of_pending_objects_are_read_during_apply() {
    let h = Harness::start().await;
    let (plan, report) = h.run(CONFIG, PlanMode::Normal, true).await;
    let read = plan
        .changes
        .iter()
        .find(|c| c.address() == "data.databricks_catalog.c")
        .unwrap();
    assert_eq!(read.action, Action::Read);
    assert_eq!(
        read.reason,
        Some(ActionReason::ReadBecauseDependencyPending)
    );
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.added, 2);
    let (plan, _) = h.run(CONFIG, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);

    let (_, report) = h.run(CONFIG, PlanMode::Destroy, true).await;
    let report = report.unwrap();
    assert!(
        report.failed.is_empty(),
        "the schema goes before the catalog: {:?}",
        report.failed
    );
    assert_eq!(report.destroyed, 2);
}
