//! A no-op plan reads Unity Catalog children with one list call per parent, not one GET per
//! object; and it still notices an object deleted outside brickform.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use brickform_core::engine::apply::ApplyOptions;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::{Action, ActionReason};
use brickform_core::provider::Registry;
use brickform_databricks::client::MemoryStore;
use brickform_databricks::{DatabricksProvider, Options};
use brickform_emulator::{Emulator, EmulatorConfig};
use brickform_state::{Backend, LocalBackend, recover};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

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

async fn requests(url: &str, method: &str) -> Vec<String> {
    let log: serde_json::Value = reqwest::get(format!("{url}/__emulator/requests?method={method}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn no_op_plan_lists_children_per_parent() {
    let emu = Emulator::start(EmulatorConfig::for_tests()).await.unwrap();
    let url = emu.url();
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::new();
    registry.register(Arc::new(DatabricksProvider::new(Options {
        local: Some((url.clone(), "t".into())),
        secrets: Arc::new(MemoryStore::new()),
        env: Arc::new(|_: &str| None),
    })));
    let (config, d) = load_sources(
        dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), CONFIG.into())],
    );
    assert!(!d.has_errors());
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &registry, &vars, "default");
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(dir.path()));

    let rec = recover(backend.clone(), "default").await.unwrap();
    let mut doc = rec.document;
    backend.save("default", &mut doc).await.unwrap();
    let req = PlanRequest {
        refresh: true,
        ..Default::default()
    };
    let (planned, d) = engine.plan(&doc, &req).await;
    let planned = planned.unwrap_or_else(|| panic!("{d:?}"));
    let opts = ApplyOptions {
        parallelism: 10,
        cancel: CancellationToken::new(),
        on_event: Arc::new(|_| {}),
    };
    let (mut doc, report) = engine.apply(&planned, doc, rec.journal, opts).await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.added, 9);
    backend.save("default", &mut doc).await.unwrap();

    reqwest::Client::new()
        .delete(format!("{url}/__emulator/requests"))
        .send()
        .await
        .unwrap();
    let (planned, _) = engine.plan(&doc, &req).await;
    let planned = planned.unwrap();
    assert!(!planned.plan.has_changes(), "{:#?}", planned.plan.changes);
    let gets = requests(&url, "GET").await;
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
            "{url}/api/2.1/unity-catalog/volumes/refresh_test.s1.v3"
        ))
        .bearer_auth("t")
        .send()
        .await
        .unwrap();
    let (planned, _) = engine.plan(&doc, &req).await;
    let plan = planned.unwrap().plan;
    let v3 = plan
        .changes
        .iter()
        .find(|c| c.address == "databricks_volume.v[3]")
        .unwrap();
    assert_eq!(v3.action, Action::Create);
    assert_eq!(v3.reason, Some(ActionReason::CreateBecauseDeletedOutside));
    emu.shutdown().await;
}
