//! Throughput and memory of the local workspace on loopback.
//!
//! `cargo bench -p brickform-emulator --bench throughput` prints requests per second and
//! latency percentiles for GET catalog and jobs/create, and the resident memory taken by
//! 100,000 stored objects. Bounded in count; talks only to 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark aborts on any failure

use brickform_emulator::{Emulator, EmulatorConfig};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CONCURRENCY: usize = 32;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Sends `total` requests from `CONCURRENCY` workers; `make(i)` builds request `i`.
async fn load<F>(name: &str, total: usize, make: F)
where
    F: Fn(&reqwest::Client, usize) -> reqwest::RequestBuilder + Send + Sync + 'static,
{
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONCURRENCY)
        .build()
        .unwrap();
    let make = Arc::new(make);
    let start = Instant::now();
    let mut workers = Vec::new();
    for w in 0..CONCURRENCY {
        let (client, make) = (client.clone(), make.clone());
        workers.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(total / CONCURRENCY + 1);
            let mut i = w;
            while i < total {
                let t = Instant::now();
                let r = make(&client, i).send().await.unwrap();
                assert!(r.status().is_success(), "{}", r.status());
                let _ = r.bytes().await.unwrap();
                lat.push(t.elapsed());
                i += CONCURRENCY;
            }
            lat
        }));
    }
    let mut lat: Vec<Duration> = Vec::with_capacity(total);
    for w in workers {
        lat.extend(w.await.unwrap());
    }
    let elapsed = start.elapsed();
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    println!(
        "{name:<28} {total:>7} requests  {:>8.0} req/s  p50 {:>6.2} ms  p99 {:>6.2} ms  max {:>6.2} ms",
        total as f64 / elapsed.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        lat[lat.len() - 1].as_secs_f64() * 1e3
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let emu = Emulator::start(EmulatorConfig { request_log_capacity: 1000, ..EmulatorConfig::for_tests() }).await.unwrap();
        let base = emu.url();
        let http = reqwest::Client::new();
        http.post(format!("{base}/api/2.1/unity-catalog/catalogs")).bearer_auth("t").json(&json!({"name": "main"})).send().await.unwrap();

        let url = format!("{base}/api/2.1/unity-catalog/catalogs/main");
        load("warm-up", 2_000, move |c, _| c.get(&url).bearer_auth("t")).await;
        let url = format!("{base}/api/2.1/unity-catalog/catalogs/main");
        load("GET catalog", 50_000, move |c, _| c.get(&url).bearer_auth("t")).await;

        let url = format!("{base}/api/2.2/jobs/create");
        let job = json!({"name": "bench", "tasks": [
            {"task_key": "a", "notebook_task": {"notebook_path": "/Shared/nb"}},
            {"task_key": "b", "depends_on": [{"task_key": "a"}], "notebook_task": {"notebook_path": "/Shared/nb"}}],
            "schedule": {"quartz_cron_expression": "0 0 * * * ?", "timezone_id": "UTC"}});
        load("POST jobs/create", 20_000, move |c, _| c.post(&url).bearer_auth("t").json(&job)).await;

        // Memory of 100,000 stored objects: schemas with comments and properties.
        let before = rss_kib();
        let url = format!("{base}/api/2.1/unity-catalog/schemas");
        load("POST schemas (100k objects)", 100_000, move |c, i| {
            c.post(&url).bearer_auth("t").json(&json!({"name": format!("schema_{i:06}"), "catalog_name": "main", "comment": "benchmark", "properties": {"team": "data"}}))
        })
        .await;
        let after = rss_kib();
        println!(
            "memory: {} objects stored (20,000 jobs + 100,000 schemas), RSS {:.1} MiB -> {:.1} MiB (+{:.1} MiB for the 100,000 schemas)",
            120_000,
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            (after.saturating_sub(before)) as f64 / 1024.0
        );
        let url = format!("{base}/api/2.1/unity-catalog/catalogs/main");
        load("GET catalog (120k stored)", 50_000, move |c, _| c.get(&url).bearer_auth("t")).await;
        emu.shutdown().await;
    });
}
