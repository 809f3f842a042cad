//! A parent replaced together with its children: the children are deleted first, the
//! parent is deleted and created again, then the children are created in it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_core::plan::{Action, PlanMode};
use common::Harness;

fn config(root: &str) -> String {
    format!(
        r#"
resource "databricks_catalog" "c" {{
  name         = "replaced"
  storage_root = "s3://bucket/{root}"
}}
resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.id
  name         = "s"
}}
resource "databricks_volume" "v" {{
  catalog_name = databricks_catalog.c.id
  schema_name  = databricks_schema.s.name
  name         = "v"
  volume_type  = "MANAGED"
}}
"#
    )
}

#[tokio::test]
async fn a_parent_and_its_children_are_replaced_in_order() {
    let h = Harness::start().await;
    let (_, report) = h.run(&config("one"), PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());

    let (plan, report) = h.run(&config("two"), PlanMode::Normal, true).await;
    for a in [
        "databricks_catalog.c",
        "databricks_schema.s",
        "databricks_volume.v",
    ] {
        let c = plan.changes.iter().find(|c| c.address() == a).unwrap();
        assert_eq!(c.action, Action::DeleteThenCreate, "{a}");
    }
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!((report.added, report.destroyed), (3, 3));
    let cat = h.api_get("/api/2.1/unity-catalog/catalogs/replaced").await;
    assert_eq!(cat["storage_root"], "s3://bucket/two");
    let (plan, _) = h.run(&config("two"), PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    h.run(&config("two"), PlanMode::Destroy, true).await;
}
