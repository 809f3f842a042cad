//! A destroy plan names what each container's delete takes with it: a volume inside a
//! catalog deleted with it is not listed on its own, its files come from the catalog's
//! listing, and a file nobody manages is still named at the volume that holds it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_core::plan::PlanMode;
use common::Harness;
use reqwest::Method;

const CONFIG: &str = r#"
resource "databricks_catalog" "c" {
  name          = "contents_test"
  force_destroy = true
}
resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "s"
}
resource "databricks_volume" "v" {
  count        = 3
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s.name
  name         = "v${count.index}"
  volume_type  = "MANAGED"
}
"#;

#[tokio::test]
async fn inner_containers_take_their_contents_from_the_outer_listing() {
    let h = Harness::start().await;
    let (_, report) = h.run(CONFIG, PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    let r = reqwest::Client::new()
        .put(format!(
            "{}/api/2.0/fs/files/Volumes/contents_test/s/v1/dir/stray.csv",
            h.url
        ))
        .bearer_auth("t")
        .header("content-type", "application/octet-stream")
        .body("x")
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());

    h.control(Method::DELETE, "requests", serde_json::Value::Null)
        .await;
    let (plan, _) = h.run(CONFIG, PlanMode::Destroy, false).await;
    let unmanaged = |address: &str| {
        plan.changes
            .iter()
            .find(|c| c.address() == address)
            .and_then(|c| c.contents.as_ref())
            .and_then(|c| c.unmanaged.clone())
            .unwrap_or_else(|| panic!("{address}: no contents"))
    };
    let stray = "/Volumes/contents_test/s/v1/dir/stray.csv";
    assert_eq!(unmanaged("databricks_volume.v[1]"), [stray]);
    assert_eq!(unmanaged("databricks_volume.v[0]"), Vec::<String>::new());
    // Inside a managed volume, the file is the volume's to name, not the catalog's.
    assert_eq!(unmanaged("databricks_catalog.c"), Vec::<String>::new());
    let listings: Vec<String> = h
        .requests("GET")
        .await
        .into_iter()
        .filter(|p| p.starts_with("/api/2.0/fs/directories/"))
        .collect();
    // The catalog's listing: each volume's root, and v1's folder; nothing twice.
    assert_eq!(listings.len(), 4, "{listings:#?}");
}
