//! The folders above a workspace object's path: its plan looks for them beside its lookup,
//! and its create goes by what the plan found, asking again only when a folder found there
//! is gone by the write.

use crate::common::Harness;
use brickform_core::plan::PlanMode;
use serde_json::json;

const FILE: &str = r#"
provider "databricks" {}
resource "databricks_workspace_file" "f" {
  path           = "/Shared/team/deep/x.sql"
  content_base64 = base64encode("SELECT 1")
}
"#;

/// The `get-status` asked of each path, in order.
async fn statuses(h: &Harness) -> Vec<String> {
    h.logged("GET")
        .await
        .iter()
        .filter(|r| r["path"] == "/api/2.0/workspace/get-status")
        .map(|r| r["query"].as_str().unwrap_or_default().replace("%2F", "/"))
        .collect()
}

async fn forget_requests(h: &Harness) {
    h.control(reqwest::Method::DELETE, "requests", serde_json::Value::Null)
        .await;
}

fn created_folders(state: &brickform_state::StateDocument) -> serde_json::Value {
    let f = state
        .resources()
        .iter()
        .find(|r| r.address() == "databricks_workspace_file.f")
        .unwrap();
    f.computed
        .get("created_folders")
        .or_else(|| f.config.get("created_folders"))
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn the_plan_of_a_create_looks_for_its_folders_and_the_create_does_not_again() {
    let h = Harness::start().await;
    forget_requests(&h).await;
    h.run(FILE, PlanMode::Normal, false).await;
    // The plan climbs from the object's folder until it finds one there.
    assert_eq!(
        statuses(&h).await,
        ["path=/Shared/team/deep", "path=/Shared/team"],
    );
    forget_requests(&h).await;
    let (_, report) = h.run(FILE, PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    // Each folder asked about once, by the plan; the create then asks only of what it
    // wrote (its read-back).
    assert_eq!(
        statuses(&h).await,
        [
            "path=/Shared/team/deep",
            "path=/Shared/team",
            "path=/Shared/team/deep/x.sql"
        ],
    );
    assert_eq!(
        created_folders(&h.state().await),
        json!(["/Shared/team", "/Shared/team/deep"])
    );
}

#[tokio::test]
async fn a_folder_there_at_the_plan_and_gone_by_the_write_is_made_again() {
    let h = Harness::start().await;
    let mkdirs = json!({ "path": "/Shared/team/deep" });
    reqwest::Client::new()
        .post(format!("{}/api/2.0/workspace/mkdirs", h.url))
        .bearer_auth("t")
        .json(&mkdirs)
        .send()
        .await
        .unwrap();
    let (_, report) = h
        .run_between(FILE, PlanMode::Normal, true, async || {
            // Removed by someone else between the plan and its apply.
            reqwest::Client::new()
                .post(format!("{}/api/2.0/workspace/delete", h.url))
                .bearer_auth("t")
                .json(&json!({ "path": "/Shared/team", "recursive": true }))
                .send()
                .await
                .unwrap();
        })
        .await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let status = h
        .api_get("/api/2.0/workspace/get-status?path=/Shared/team/deep/x.sql")
        .await;
    assert_eq!(status["object_type"], "FILE", "{status}");
    // Made by the create now, so its delete removes them again.
    assert_eq!(
        created_folders(&h.state().await),
        json!(["/Shared/team", "/Shared/team/deep"])
    );
}
