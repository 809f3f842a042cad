//! What `databricks_query`, `databricks_alert` and `databricks_dashboard` send: the requests
//! the Terraform provider makes (terraform-provider-databricks sql/resource_query.go,
//! sql/resource_alert.go, dashboards/resource_dashboard.go), checked in the local
//! workspace's request log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_core::plan::PlanMode;
use common::Harness;
use serde_json::{Value, json};

/// The logged requests with this method whose path starts with `prefix`: (path, query, body).
async fn logged(h: &Harness, method: &str, prefix: &str) -> Vec<(String, Value, Value)> {
    let log = h
        .control(
            reqwest::Method::GET,
            &format!("requests?method={method}"),
            Value::Null,
        )
        .await;
    log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"].as_str().unwrap().starts_with(prefix))
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["query"].clone(),
                r["body"].clone(),
            )
        })
        .collect()
}

fn query(description: &str) -> String {
    format!(
        r#"
resource "databricks_query" "q" {{
  display_name    = "q"
  warehouse_id    = "w"
  query_text      = "select 1"
  description     = "{description}"
  owner_user_name = "local-user@brickform.local"
  parameter {{
    name = "p"
    numeric_value {{
      value = 2
    }}
  }}
}}
"#
    )
}

#[tokio::test]
async fn a_query_is_created_without_its_owner_and_updated_by_mask() {
    let h = Harness::start().await;
    let (_, report) = h.run(&query("one"), PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let posts = logged(&h, "POST", "/api/2.0/sql/queries").await;
    assert_eq!(posts.len(), 1, "{posts:?}");
    let body = &posts[0].2;
    assert_eq!(body["auto_resolve_display_name"], false);
    assert!(body["query"].get("owner_user_name").is_none(), "{body}");
    assert_eq!(
        body["query"]["parameters"],
        json!([{"name": "p", "numeric_value": {"value": 2}}])
    );
    // The owner is set by an update right after.
    let patches = logged(&h, "PATCH", "/api/2.0/sql/queries/").await;
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert_eq!(patches[0].2["update_mask"], "owner_user_name");

    let (plan, _) = h.run(&query("one"), PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    let (_, report) = h.run(&query("two"), PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let patches = logged(&h, "PATCH", "/api/2.0/sql/queries/").await;
    assert_eq!(patches.len(), 2, "{patches:?}");
    // The fields every update names, and what changed: not the unchanged owner.
    assert_eq!(
        patches[1].2["update_mask"],
        "display_name,query_text,warehouse_id,parameters,description"
    );
    assert_eq!(patches[1].2["query"]["description"], "two");
}

const DASHBOARD: &str = r#"
resource "databricks_dashboard" "d" {
  display_name         = "d"
  warehouse_id         = "w"
  parent_path          = "/Shared/new/folder"
  embed_credentials    = false
  dataset_catalog      = "main"
  serialized_dashboard = jsonencode({ pages = [{ name = "p" }] })
}
"#;

#[tokio::test]
async fn a_dashboard_is_created_in_a_new_folder_and_published() {
    let h = Harness::start().await;
    let (_, report) = h.run(DASHBOARD, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    // The first create meets a folder that does not exist: made, and the create repeated
    // with the dataset catalog as a query parameter.
    let creates = logged(&h, "POST", "/api/2.0/lakeview/dashboards").await;
    let made: Vec<_> = creates
        .iter()
        .filter(|(p, _, _)| p == "/api/2.0/lakeview/dashboards")
        .collect();
    assert_eq!(made.len(), 2, "{creates:?}");
    assert!(
        made[1]
            .1
            .as_str()
            .unwrap_or_default()
            .contains("dataset_catalog=main"),
        "{:?}",
        made[1]
    );
    let mkdirs = logged(&h, "POST", "/api/2.0/workspace/mkdirs").await;
    assert_eq!(mkdirs[0].2["path"], "/Shared/new/folder");
    let publish: Vec<_> = creates
        .iter()
        .filter(|(p, _, _)| p.ends_with("/published"))
        .collect();
    assert_eq!(publish.len(), 1, "{creates:?}");
    assert_eq!(
        publish[0].2,
        json!({"warehouse_id": "w", "embed_credentials": false})
    );
    let (plan, _) = h.run(DASHBOARD, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
}

const LOST: &str = r#"
resource "databricks_query" "q" {
  display_name    = "lost query"
  warehouse_id    = "w"
  query_text      = "select 1 as value"
  owner_user_name = "someone@example.com"
}

resource "databricks_alert" "a" {
  display_name = "lost alert"
  query_id     = databricks_query.q.id
  parent_path  = "/Workspace/Shared"
  condition {
    op = "IS_NULL"
    operand {
      column {
        name = "value"
      }
    }
  }
}

resource "databricks_dashboard" "d" {
  display_name         = "lost dashboard"
  warehouse_id         = "w"
  parent_path          = "/Shared"
  serialized_dashboard = jsonencode({ pages = [] })
}
"#;

/// A create whose answer is lost after the service made the object: found again by its
/// folder and name (the caller's home folder for the query that names none), not made twice.
#[tokio::test]
async fn lost_create_answers_leave_one_object_each() {
    let h = Harness::start().await;
    for path in [
        "/api/2.0/sql/queries",
        "/api/2.0/sql/alerts",
        "/api/2.0/lakeview/dashboards",
    ] {
        h.control(
            reqwest::Method::POST,
            "faults",
            json!({ "method": "POST", "path": path, "status": 503, "times": 1, "after_side_effect": true }),
        )
        .await;
    }
    let (_, report) = h.run(LOST, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.added, 3);
    let faults = h.control(reqwest::Method::GET, "faults", Value::Null).await;
    assert_eq!(
        faults.to_string().matches("\"fired\":1").count(),
        3,
        "every fault fired: {faults}"
    );
    for (list, items) in [
        ("/api/2.0/sql/queries", "results"),
        ("/api/2.0/sql/alerts", "results"),
        ("/api/2.0/lakeview/dashboards", "dashboards"),
    ] {
        let listed = h.api_get(list).await;
        assert_eq!(
            listed[items].as_array().map(Vec::len),
            Some(1),
            "{list}: {listed}"
        );
    }
    // The query found again has not got its owner, and the dashboard is not published: the
    // next plan sets the one and publishes the other.
    let (plan, _) = h.run(LOST, PlanMode::Normal, false).await;
    assert!(plan.has_changes(), "{:#?}", plan.changes);
    let (_, report) = h.run(LOST, PlanMode::Normal, true).await;
    assert_eq!(report.unwrap().changed, 2);
    let q = h.api_get("/api/2.0/sql/queries").await;
    assert_eq!(q["results"][0]["owner_user_name"], "someone@example.com");
    let id = h.api_get("/api/2.0/lakeview/dashboards").await["dashboards"][0]["dashboard_id"]
        .as_str()
        .unwrap()
        .to_string();
    let published = h
        .api_get(&format!("/api/2.0/lakeview/dashboards/{id}/published"))
        .await;
    assert_eq!(published["embed_credentials"], true, "{published}");
    let (plan, _) = h.run(LOST, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
}
