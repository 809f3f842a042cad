//! Renaming a catalog that holds a schema and a volume: the service moves them with it, so
//! they follow the rename in place instead of being replaced.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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
        let c = plan.changes.iter().find(|c| c.address() == a).unwrap();
        assert_eq!(c.action, Action::Update, "{a}: {:?}", c.fields);
    }
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!((report.added, report.changed, report.destroyed), (0, 3, 0));
    let state = h.state().await;
    assert_eq!(
        state
            .get(&brickform_core::addrs::InstanceAddr::parse("databricks_volume.v").unwrap())
            .unwrap()
            .id,
        "after.s.v"
    );
    let (plan, _) = h.run(&config("after"), PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    h.run(&config("after"), PlanMode::Destroy, true).await;
}

/// A PATCH against the workspace API, as someone working in the UI would send it.
async fn rename_outside(h: &Harness, collection: &str, full_name: &str, new_name: &str) {
    let r = reqwest::Client::new()
        .patch(format!(
            "{}/api/2.1/unity-catalog/{collection}/{full_name}",
            h.url
        ))
        .bearer_auth("t")
        .json(&serde_json::json!({ "new_name": new_name }))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
}

#[tokio::test]
async fn an_object_renamed_outside_is_renamed_back_not_made_again() {
    let h = Harness::start().await;
    h.run(&config("out"), PlanMode::Normal, true).await;
    let volume_id = h.api_get("/api/2.1/unity-catalog/volumes/out.s.v").await["volume_id"].clone();
    // The volume renamed in the UI: found by its volume_id, renamed back in place.
    rename_outside(&h, "volumes", "out.s.v", "v_ui").await;
    let (plan, report) = h.run(&config("out"), PlanMode::Normal, true).await;
    let v = plan
        .changes
        .iter()
        .find(|c| c.address() == "databricks_volume.v")
        .unwrap();
    assert_eq!(v.action, Action::Update, "{:?}", v.fields);
    assert_eq!(v.id.as_deref(), Some("out.s.v_ui"));
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!((report.added, report.changed, report.destroyed), (0, 1, 0));
    let back = h.api_get("/api/2.1/unity-catalog/volumes/out.s.v").await;
    assert_eq!(back["volume_id"], volume_id, "{back}");
    assert_eq!(
        h.state()
            .await
            .get(&brickform_core::addrs::InstanceAddr::parse("databricks_volume.v").unwrap())
            .unwrap()
            .id,
        "out.s.v"
    );

    // The schema renamed in the UI (an empty one: a schema's volumes are read under the
    // schema's last known name, so this case keeps the volume out).
    let only_schema = r#"
resource "databricks_catalog" "c" {
  name = "out"
}
resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "s"
}
"#;
    h.run(only_schema, PlanMode::Normal, true).await;
    rename_outside(&h, "schemas", "out.s", "s_ui").await;
    let (plan, report) = h.run(only_schema, PlanMode::Normal, true).await;
    let s = plan
        .changes
        .iter()
        .find(|c| c.address() == "databricks_schema.s")
        .unwrap();
    assert_eq!(s.action, Action::Update, "{:?}", s.fields);
    assert!(report.unwrap().failed.is_empty());
    let listed = h
        .api_get("/api/2.1/unity-catalog/schemas?catalog_name=out")
        .await;
    let names: Vec<&str> = listed["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(
        names.contains(&"s") && !names.contains(&"s_ui"),
        "{names:?}"
    );
    let (plan, _) = h.run(only_schema, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);

    // Deleted outside, it is still made again (the service id finds nothing).
    let r = reqwest::Client::new()
        .delete(format!("{}/api/2.1/unity-catalog/schemas/out.s", h.url))
        .bearer_auth("t")
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    let (plan, _) = h.run(only_schema, PlanMode::Normal, false).await;
    let s = plan
        .changes
        .iter()
        .find(|c| c.address() == "databricks_schema.s")
        .unwrap();
    assert_eq!(s.action, Action::Create);
    h.run(only_schema, PlanMode::Destroy, true).await;
}
