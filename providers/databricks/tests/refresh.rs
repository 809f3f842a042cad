//! A no-op plan reads Unity Catalog children with one list call per parent, not one GET per
//! object; and it still notices an object deleted outside brickform.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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
        .find(|c| c.address() == "databricks_volume.v[3]")
        .unwrap();
    assert_eq!(v3.action, Action::Create);
    assert_eq!(v3.reason, Some(ActionReason::CreateBecauseDeletedOutside));
}

/// 120 small jobs, one of 130 tasks, and a few pipelines.
const JOBS: &str = r#"
resource "databricks_job" "j" {
  count = 120
  name  = "listed-${count.index}"
  task {
    task_key = "a"
    notebook_task { notebook_path = "/Shared/a" }
  }
}
resource "databricks_job" "big" {
  name = "big"
  dynamic "task" {
    for_each = range(130)
    content {
      task_key = "t${task.value}"
      notebook_task { notebook_path = "/Shared/t${task.value}" }
    }
  }
}
resource "databricks_pipeline" "p" {
  count      = 3
  name       = "listed-p${count.index}"
  catalog    = "main"
  schema     = "jobs"
  serverless = true
  library {
    notebook { path = "/Shared/p" }
  }
}
"#;

fn change<'a>(
    plan: &'a brickform_core::plan::Plan,
    address: &str,
) -> &'a brickform_core::plan::ResourceChange {
    plan.changes
        .iter()
        .find(|c| c.address() == address)
        .unwrap_or_else(|| panic!("{address} not planned"))
}

/// A no-op plan reads jobs from `jobs/list` with their tasks, 100 jobs a call, and only a
/// job with more than 100 tasks (which the listing cuts) with `jobs/get`; pipelines stay one
/// GET each. The refresh stays whole: drift on a listed job and beyond the first 100 tasks
/// of the big one is planned back, a job deleted outside brickform is created again, and
/// the identity a job runs as, which a listing does not carry, is kept.
#[tokio::test]
async fn no_op_plan_reads_jobs_from_the_listing() {
    let h = Harness::start().await;
    let (_, report) = h.run(JOBS, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.added, 124);
    let state = h.state().await;
    let id_of = |address: &str| {
        state
            .resources()
            .iter()
            .find(|r| r.address() == address)
            .unwrap()
            .id
            .clone()
    };

    h.control(Method::DELETE, "requests", serde_json::Value::Null)
        .await;
    let (plan, _) = h.run(JOBS, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    let gets = h.requests("GET").await;
    let count = |p: &str| gets.iter().filter(|g| g.as_str() == p).count();
    assert_eq!(
        count("/api/2.2/jobs/list"),
        2,
        "121 jobs, 100 a page: {gets:#?}"
    );
    assert_eq!(
        count("/api/2.2/jobs/get"),
        2,
        "only the job of 130 tasks, in its two pages: {gets:#?}"
    );
    let pipeline_gets = gets
        .iter()
        .filter(|g| g.starts_with("/api/2.0/pipelines/"))
        .count();
    assert_eq!(pipeline_gets, 3, "{gets:#?}");
    assert_eq!(gets.len(), 7, "{gets:#?}");
    let after = change(&plan, "databricks_job.j[0]").after.as_ref().unwrap();
    assert_eq!(
        after.0["run_as_user_name"], after.0["creator_user_name"],
        "{after:?}"
    );
    assert!(after.0["run_as_user_name"].as_str().is_some(), "{after:?}");

    // Drift outside brickform: a setting of a listed job, a task beyond the big job's first
    // 100; and a job deleted.
    let post = |path: &'static str, body: serde_json::Value| {
        let url = format!("{}{path}", h.url);
        async move {
            let r = reqwest::Client::new()
                .post(url)
                .bearer_auth("t")
                .json(&body)
                .send()
                .await
                .unwrap();
            assert!(r.status().is_success(), "{}", r.text().await.unwrap());
        }
    };
    let j7: i64 = id_of("databricks_job.j[7]").parse().unwrap();
    let big: i64 = id_of("databricks_job.big").parse().unwrap();
    let j3: i64 = id_of("databricks_job.j[3]").parse().unwrap();
    post(
        "/api/2.2/jobs/update",
        serde_json::json!({"job_id": j7, "new_settings": {"max_concurrent_runs": 4}}),
    )
    .await;
    post(
        "/api/2.2/jobs/update",
        serde_json::json!({"job_id": big, "new_settings": {"tasks": [
            {"task_key": "t125", "notebook_task": {"notebook_path": "/Shared/elsewhere"}}
        ]}}),
    )
    .await;
    post("/api/2.2/jobs/delete", serde_json::json!({"job_id": j3})).await;

    let (plan, _) = h.run(JOBS, PlanMode::Normal, false).await;
    let j7 = change(&plan, "databricks_job.j[7]");
    assert_eq!(j7.action, Action::Update, "{j7:#?}");
    assert!(
        j7.fields
            .iter()
            .any(|f| format!("{:?}", f.path).contains("max_concurrent_runs")),
        "{:#?}",
        j7.fields
    );
    let big = change(&plan, "databricks_job.big");
    assert_eq!(big.action, Action::Update, "{big:#?}");
    assert!(
        big.fields
            .iter()
            .any(|f| format!("{:?}", f.after).contains("/Shared/t125")),
        "the task beyond the first 100 is put back: {:#?}",
        big.fields
    );
    let j3 = change(&plan, "databricks_job.j[3]");
    assert_eq!(j3.action, Action::Create);
    assert_eq!(j3.reason, Some(ActionReason::CreateBecauseDeletedOutside));
    let others: Vec<_> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| c.address())
        .collect();
    assert_eq!(others.len(), 3, "{others:?}");
}

/// A plan of new objects looks up whether each already exists (so a lost state does not
/// make a second copy), but nothing can lie inside a container that does not exist: the
/// schemas and volumes of a new catalog are not looked up one by one.
#[tokio::test]
async fn nothing_is_looked_up_inside_a_container_found_absent() {
    let h = Harness::start().await;
    let (plan, _) = h.run(CONFIG, PlanMode::Normal, false).await;
    assert_eq!(
        plan.changes
            .iter()
            .filter(|c| c.action == Action::Create)
            .count(),
        9
    );
    let gets = h.requests("GET").await;
    assert_eq!(
        gets,
        ["/api/2.1/unity-catalog/catalogs/refresh_test"],
        "only the catalog is looked up"
    );
}

/// A plan of new jobs looks each up by name and ownership tag (a lost state must not make a
/// second copy), but the plan's lookups share one listing of every job: 121 new jobs cost
/// one listing, not a list call each. The next plan lists again.
#[tokio::test]
async fn lookups_of_new_jobs_share_listings() {
    let h = Harness::start().await;
    let (plan, _) = h.run(JOBS, PlanMode::Normal, false).await;
    assert_eq!(
        plan.changes
            .iter()
            .filter(|c| c.action == Action::Create)
            .count(),
        124
    );
    let listings = || async {
        h.requests("GET")
            .await
            .into_iter()
            .filter(|p| p == "/api/2.2/jobs/list")
            .count()
    };
    let first = listings().await;
    assert_eq!(first, 1, "{first} listings for 121 jobs");
    h.run(JOBS, PlanMode::Normal, false).await;
    assert_eq!(listings().await, 2, "the next plan lists again");
}

/// The same for pipelines: 40 new pipelines cost one listing.
#[tokio::test]
async fn lookups_of_new_pipelines_share_listings() {
    let h = Harness::start().await;
    let config = r#"
resource "databricks_pipeline" "p" {
  count      = 40
  name       = "shared-${count.index}"
  catalog    = "main"
  schema     = "jobs"
  serverless = true
  library {
    notebook { path = "/Shared/p" }
  }
}
"#;
    let (plan, _) = h.run(config, PlanMode::Normal, false).await;
    assert_eq!(plan.changes.len(), 40);
    let listings = h
        .requests("GET")
        .await
        .into_iter()
        .filter(|p| p == "/api/2.0/pipelines")
        .count();
    assert_eq!(listings, 1, "{listings} listings for 40 pipelines");
}
