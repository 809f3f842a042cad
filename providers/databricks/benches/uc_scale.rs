//! Benchmark (issue 4): apply, no-op plan and destroy of 500 Unity Catalog objects against
//! the local workspace with 20 ms of latency per request, reported against the bound
//! `max(depth × latency, calls × latency / parallelism, calls / rate limit)` and against the
//! same objects created one by one with the official Python SDK.
//!
//! Run with `cargo bench -p brickform-databricks --bench uc_scale`. The SDK baseline runs when
//! the project's venv exists (`scripts/python-env`).

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
const SCHEMAS: usize = 10;
const VOLUMES: usize = 489; // 1 catalog + 10 schemas + 489 volumes = 500 objects
const DEPTH: usize = 3;

fn config(initial_rate: Option<f64>) -> String {
    let rate = initial_rate
        .map(|r| format!("  initial_rate = {r}\n"))
        .unwrap_or_default();
    format!(
        r#"
provider "databricks" {{
{rate}}}
resource "databricks_catalog" "c" {{
  name          = "bench"
  force_destroy = true
}}
resource "databricks_schema" "s" {{
  count        = {SCHEMAS}
  catalog_name = databricks_catalog.c.name
  name         = "s${{count.index}}"
}}
resource "databricks_volume" "v" {{
  count        = {VOLUMES}
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s[count.index % {SCHEMAS}].name
  name         = "v${{count.index}}"
  volume_type  = "MANAGED"
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

async fn scenario(label: &str, rate_limit: Option<f64>, initial_rate: Option<f64>) -> Vec<Phase> {
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
        vec![(
            "main.bf.hcl".into(),
            "main.bf.hcl".into(),
            config(initial_rate),
        )],
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
            p.calls as f64 / 500.0,
            b.as_secs_f64(),
            p.took.as_secs_f64() / b.as_secs_f64().max(1e-9)
        );
    }
    phases
}

/// The same 500 objects created one after another with the official SDK.
async fn sdk_baseline() -> Option<Duration> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join(".venv/bin/python");
    if !python.exists() {
        println!("\nSDK baseline skipped: no venv (run scripts/python-env first)");
        return None;
    }
    let emu = Emulator::start(EmulatorConfig::for_tests()).await.unwrap();
    let url = emu.url();
    control(
        &url,
        "latency",
        serde_json::json!({ "fixed_ms": LATENCY_MS }),
    )
    .await;
    let script = format!(
        r#"
import time
from databricks.sdk import WorkspaceClient
from databricks.sdk.service.catalog import VolumeType
w = WorkspaceClient(host="{url}", token="t")
t = time.time()
w.catalogs.create(name="bench")
for s in range({SCHEMAS}):
    w.schemas.create(name=f"s{{s}}", catalog_name="bench")
for v in range({VOLUMES}):
    w.volumes.create(catalog_name="bench", schema_name=f"s{{v % {SCHEMAS}}}", name=f"v{{v}}", volume_type=VolumeType.MANAGED)
print(time.time() - t)
"#
    );
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python)
            .arg("-c")
            .arg(script)
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    emu.shutdown().await;
    let secs: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    println!("\nofficial Python SDK, one by one: create 500 objects in {secs:.2} s");
    Some(Duration::from_secs_f64(secs))
}

#[tokio::main]
async fn main() {
    println!(
        "500 UC objects (1 catalog, {SCHEMAS} schemas, {VOLUMES} volumes), {LATENCY_MS} ms latency, parallelism {PARALLELISM}"
    );
    let unlimited_default = scenario(
        "no service rate limit, client limiter at its default start",
        None,
        None,
    )
    .await;
    let unlimited = scenario(
        "no service rate limit, client limiter started at 1000 req/s",
        None,
        Some(1000.0),
    )
    .await;
    let limited = scenario(
        "service limit 20 req/s (429 beyond), client limiter at its default start",
        Some(20.0),
        None,
    )
    .await;
    if let Some(sdk) = sdk_baseline().await {
        for (label, phases) in [
            ("default start", &unlimited_default),
            ("started at 1000 req/s", &unlimited),
            ("20 req/s limit", &limited),
        ] {
            println!(
                "  brickform apply ({label}) is {:.1}× faster than the SDK one by one",
                sdk.as_secs_f64() / phases[0].took.as_secs_f64()
            );
        }
    }
}
