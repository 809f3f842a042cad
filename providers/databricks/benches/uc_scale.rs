//! Benchmark (issue 4): apply, no-op plan and destroy of 500 Unity Catalog objects against
//! the local workspace with 20 ms of latency per request, reported against the bound
//! `max(depth × latency, calls × latency / parallelism, calls / rate limit)` and against the
//! same objects created one by one with the official Python SDK.
//!
//! Run with `cargo bench -p brickform-databricks --bench uc_scale`. The SDK baseline runs when
//! the project's venv exists (`scripts/python-env`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic

mod common;

use brickform_emulator::{Emulator, EmulatorConfig};
use common::{LATENCY_MS, Needs, PARALLELISM, Workload, control, scenario};
use std::time::Duration;

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
    // What the guarantees need. Reads of what state holds, a listing per parent (volumes
    // are listed unpaged): the catalog, its schemas, each schema's volumes.
    let reads = 1 + 1 + SCHEMAS;
    // What a destroy takes along, as its plan shows it: the catalog's schemas, each schema's
    // volumes and tables, each volume's files; each volume is listed again just before its
    // delete, so that it takes only what the plan showed.
    let contents = 1 + 2 * SCHEMAS + VOLUMES;
    let work = |rate: Option<f64>| Workload {
        config: config(rate),
        objects: 500,
        // One write per object; the chain: catalog, schema, volume.
        apply: Needs {
            calls: 500,
            depth: DEPTH,
        },
        no_op: Needs {
            calls: reads,
            depth: 1,
        },
        // The chain: a read; the catalog's, a schema's and a volume's listings; the volume
        // listed again and deleted; its schema's delete; the catalog's.
        destroy: Needs {
            calls: reads + contents + VOLUMES + 500,
            depth: 1 + DEPTH + 2 + 1 + 1,
        },
    };
    let default_start = scenario(
        "no service rate limit, client limiter at its default start",
        &work(None),
        None,
    )
    .await;
    // BENCH_QUICK=1: only the figures that count (the default start), for quick iterations.
    if std::env::var_os("BENCH_QUICK").is_some() {
        return;
    }
    let fast_start = scenario(
        "no service rate limit, client limiter started at 1000 req/s",
        &work(Some(1000.0)),
        None,
    )
    .await;
    let limited = scenario(
        "service limit 20 req/s (429 beyond), client limiter at its default start",
        &work(None),
        Some(20.0),
    )
    .await;
    if let Some(sdk) = sdk_baseline().await {
        for (label, phases) in [
            ("default start", &default_start),
            ("started at 1000 req/s", &fast_start),
            ("20 req/s limit", &limited),
        ] {
            // The SDK's baseline has no service limit: under one, brickform may be slower.
            let ratio = sdk.as_secs_f64() / phases[0].took.as_secs_f64();
            let (by, than) = if ratio >= 1.0 {
                (ratio, "faster")
            } else {
                (1.0 / ratio, "slower")
            };
            println!("  brickform apply ({label}) is {by:.1}× {than} than the SDK one by one");
        }
    }
}
