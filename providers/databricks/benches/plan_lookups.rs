//! Benchmark (issue 13): a plan that reads 200 data sources and imports 200 objects against
//! the local workspace with 50 ms of latency per request, against the bound
//! `calls × latency / parallelism` — the reads overlap up to `--parallelism`, within a
//! resource's instances and across independent resources — and against the same plan with
//! a parallelism of 1 (one read after another).
//!
//! Run with `cargo bench -p brickform-databricks --bench plan_lookups`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic

mod common;

use brickform_core::engine::PlanRequest;
use brickform_emulator::{Emulator, EmulatorConfig};
use brickform_state::StateDocument;
use common::{PARALLELISM, Setup, control, count_requests, reset_requests};
use std::time::{Duration, Instant};

const LOOKUPS: usize = 200;
const IMPORTS: usize = 200;
const LATENCY_MS: u64 = 50;

fn config() -> String {
    let mut text = format!(
        r#"
data "databricks_catalog" "looked_up" {{
  count = {LOOKUPS}
  name  = "l${{count.index}}"
}}
resource "databricks_catalog" "imported" {{
  count = {IMPORTS}
  name  = "i${{count.index}}"
}}
"#
    );
    for i in 0..IMPORTS {
        text.push_str(&format!(
            "import {{\n  to = databricks_catalog.imported[{i}]\n  id = \"i{i}\"\n}}\n"
        ));
    }
    text
}

async fn create_catalogs(url: &str) {
    let client = reqwest::Client::new();
    for name in (0..LOOKUPS)
        .map(|i| format!("l{i}"))
        .chain((0..IMPORTS).map(|i| format!("i{i}")))
    {
        let r = client
            .post(format!("{url}/api/2.1/unity-catalog/catalogs"))
            .bearer_auth("t")
            .json(&serde_json::json!({ "name": name }))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    }
}

async fn plan(setup: &Setup, url: &str, parallelism: usize) -> (Duration, usize) {
    let engine = setup.engine();
    let state = StateDocument::new("bench");
    let req = PlanRequest {
        refresh: true,
        parallelism,
        ..Default::default()
    };
    reset_requests(url).await;
    let started = Instant::now();
    let (planned, d) = engine.plan(&state, &req).await;
    let took = started.elapsed();
    let planned = planned.unwrap_or_else(|| panic!("{d:?}"));
    let imports = planned
        .plan
        .changes
        .iter()
        .filter(|c| c.importing.is_some())
        .count();
    assert_eq!(imports, IMPORTS);
    (took, count_requests(url).await)
}

#[tokio::main]
async fn main() {
    let mut cfg = EmulatorConfig::for_tests();
    cfg.request_log_capacity = 100_000;
    let emu = Emulator::start(cfg).await.unwrap();
    let url = emu.url();
    create_catalogs(&url).await;
    control(
        &url,
        "latency",
        serde_json::json!({ "fixed_ms": LATENCY_MS }),
    )
    .await;
    let setup = Setup::new(&url, &config());
    let (one, calls_one) = plan(&setup, &url, 1).await;
    let (many, calls) = plan(&setup, &url, PARALLELISM).await;
    emu.shutdown().await;
    let lookups = LOOKUPS + IMPORTS;
    let bound = lookups as f64 * LATENCY_MS as f64 / 1000.0 / PARALLELISM as f64;
    println!("\nplan of {LOOKUPS} data sources and {IMPORTS} imports, {LATENCY_MS} ms latency");
    println!(
        "  parallelism {PARALLELISM:>2}  {:>6.2} s  {calls:>4} calls  bound {bound:.2} s  ratio {:.2}",
        many.as_secs_f64(),
        many.as_secs_f64() / bound
    );
    println!(
        "  parallelism  1  {:>6.2} s  {calls_one:>4} calls  ({:.1}× the parallel plan)",
        one.as_secs_f64(),
        one.as_secs_f64() / many.as_secs_f64()
    );
}
