//! Benchmark (issue 5): apply and no-op plan of 200 jobs with 20 tasks each and 100
//! pipelines against the local workspace with 20 ms of latency per request, reported against
//! the bound `max(depth × latency, calls × latency / parallelism)`.
//!
//! Run with `cargo bench -p brickform-databricks --bench jobs_scale`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic

use brickform_core::engine::apply::ApplyOptions;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::PlanMode;
use brickform_core::provider::Registry;
use brickform_databricks::client::MemoryStore;
use brickform_databricks::{DatabricksProvider, Options};
use brickform_emulator::{Emulator, EmulatorConfig};
use brickform_state::{Backend, LocalBackend, recover};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const LATENCY_MS: u64 = 20;
const PARALLELISM: usize = 10;
const JOBS: usize = 200;
const TASKS: usize = 20;
const PIPELINES: usize = 100;
const OBJECTS: usize = JOBS + PIPELINES + 1;
/// workspace file → pipelines → jobs
const DEPTH: usize = 3;

fn config() -> String {
    format!(
        r#"
provider "databricks" {{
  initial_rate = 1000
}}
resource "databricks_workspace_file" "src" {{
  path           = "/Shared/bench/pipeline.sql"
  content_base64 = base64encode("CREATE MATERIALIZED VIEW x AS SELECT 1")
}}
resource "databricks_pipeline" "p" {{
  count      = {PIPELINES}
  name       = "bench-p${{count.index}}"
  catalog    = "main"
  schema     = "bench"
  serverless = true
  library {{
    file {{ path = databricks_workspace_file.src.path }}
  }}
}}
resource "databricks_job" "j" {{
  count = {JOBS}
  name  = "bench-j${{count.index}}"
  dynamic "task" {{
    for_each = range({TASKS})
    content {{
      task_key = "t${{task.value}}"
      dynamic "depends_on" {{
        for_each = task.value == 0 ? [] : [task.value - 1]
        content {{ task_key = "t${{depends_on.value}}" }}
      }}
      pipeline_task {{ pipeline_id = databricks_pipeline.p[(count.index + task.value) % {PIPELINES}].id }}
    }}
  }}
}}
"#
    )
}
async fn count_requests(url: &str) -> usize {
    let log: serde_json::Value = reqwest::get(format!("{url}/__emulator/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    log["requests"].as_array().map(Vec::len).unwrap_or(0)
}

async fn control(url: &str, path: &str, body: serde_json::Value) {
    let c = reqwest::Client::new();
    let r = c
        .post(format!("{url}/__emulator/{path}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(
        r.status().is_success(),
        "{path}: {}",
        r.text().await.unwrap_or_default()
    );
}

fn bound(calls: usize, rate_limit: Option<f64>) -> Duration {
    let lat = LATENCY_MS as f64 / 1000.0;
    let by_depth = DEPTH as f64 * lat;
    let by_parallelism = calls as f64 * lat / PARALLELISM as f64;
    let by_rate = rate_limit.map(|r| calls as f64 / r).unwrap_or(0.0);
    Duration::from_secs_f64(by_depth.max(by_parallelism).max(by_rate))
}

struct Phase {
    name: &'static str,
    took: Duration,
    calls: usize,
}

async fn scenario(label: &str, rate_limit: Option<f64>, _initial_rate: Option<f64>) -> Vec<Phase> {
    let mut cfg = EmulatorConfig::for_tests();
    cfg.request_log_capacity = 100_000;
    let emu = Emulator::start(cfg).await.unwrap();
    let url = emu.url();
    control(
        &url,
        "latency",
        serde_json::json!({ "fixed_ms": LATENCY_MS }),
    )
    .await;
    if let Some(r) = rate_limit {
        control(
            &url,
            "rate-limits",
            // Whole numbers: the control API takes burst and retry_after as integers.
            serde_json::json!({ "per_second": r as u64, "burst": r as u64, "retry_after": 1 }),
        )
        .await;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::new();
    registry.register(Arc::new(DatabricksProvider::new(Options {
        local: Some((url.clone(), "t".into())),
        secrets: Arc::new(MemoryStore::new()),
        env: Arc::new(|_: &str| None),
    })));
    let (config, d) = load_sources(
        dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), config())],
    );
    assert!(!d.has_errors(), "{d:?}");
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &registry, &vars, "bench");
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(dir.path()));
    let mut phases = Vec::new();

    for (name, mode) in [
        ("apply", PlanMode::Normal),
        ("no-op plan", PlanMode::Normal),
        ("destroy", PlanMode::Destroy),
    ] {
        let rec = recover(backend.clone(), "bench").await.unwrap();
        let mut doc = rec.document;
        if !rec.existed {
            backend.save("bench", &mut doc).await.unwrap();
        }
        reqwest::Client::new()
            .delete(format!("{url}/__emulator/requests"))
            .send()
            .await
            .unwrap();
        let started = Instant::now();
        let req = PlanRequest {
            mode,
            refresh: true,
            parallelism: PARALLELISM,
            ..Default::default()
        };
        let (planned, d) = engine.plan(&doc, &req).await;
        let planned = planned.unwrap_or_else(|| panic!("{d:?}"));
        if name == "no-op plan" {
            assert!(!planned.plan.has_changes());
        } else {
            let opts = ApplyOptions {
                parallelism: PARALLELISM,
                cancel: CancellationToken::new(),
                on_event: Arc::new(|_| {}),
            };
            let (mut doc, report) = engine.apply(&planned, doc, rec.journal, opts).await;
            assert!(
                report.failed.is_empty(),
                "{label} {name}: {:?}",
                report.failed
            );
            backend.save("bench", &mut doc).await.unwrap();
        }
        let took = started.elapsed();
        let calls = count_requests(&url).await;
        phases.push(Phase { name, took, calls });
    }
    emu.shutdown().await;
    println!("\n{label}");
    for p in &phases {
        let b = bound(p.calls, rate_limit);
        println!(
            "  {:<11} {:>7.2} s  {:>5} calls ({:.3} per object)  bound {:>6.2} s  ratio {:.2}",
            p.name,
            p.took.as_secs_f64(),
            p.calls,
            p.calls as f64 / OBJECTS as f64,
            b.as_secs_f64(),
            p.took.as_secs_f64() / b.as_secs_f64().max(1e-9)
        );
    }
    phases
}

#[tokio::main]
async fn main() {
    println!(
        "{JOBS} jobs of {TASKS} tasks, {PIPELINES} pipelines, 1 workspace file; {LATENCY_MS} ms latency, parallelism {PARALLELISM}"
    );
    scenario("no service rate limit", None, None).await;
}
