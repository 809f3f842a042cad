//! What a small change costs in a large persisted workspace.
//!
//! `cargo bench -p brickform-emulator --bench persistence [-- MIB]` stores MIB (default 100)
//! MiB of volume files in a persisted workspace, then times 20 catalog creates and counts
//! the bytes each wrote to the workspace directory. For comparison it times what the
//! previous persistence did for every change: serialize the whole workspace and write it
//! atomically (temp file, fsync, rename). Talks only to 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark aborts on any failure

use brickform_emulator::{Emulator, EmulatorConfig, JOURNAL_FILE, STATE_FILE};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

const WRITES: usize = 20;

fn dir_bytes(dir: &Path) -> u64 {
    [STATE_FILE, JOURNAL_FILE]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let mib: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir().unwrap();
    let emu = Emulator::start(EmulatorConfig {
        data_dir: Some(dir.path().to_path_buf()),
        ..EmulatorConfig::for_tests()
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let url = |p: &str| format!("{}{p}", emu.url());
    let post =
        |p: &str, body: serde_json::Value| http.post(url(p)).bearer_auth("t").json(&body).send();
    post("/api/2.1/unity-catalog/catalogs", json!({"name": "c"}))
        .await
        .unwrap();
    post(
        "/api/2.1/unity-catalog/schemas",
        json!({"name": "s", "catalog_name": "c"}),
    )
    .await
    .unwrap();
    post(
        "/api/2.1/unity-catalog/volumes",
        json!({"name": "v", "catalog_name": "c", "schema_name": "s", "volume_type": "MANAGED"}),
    )
    .await
    .unwrap();
    for i in 0..mib.div_ceil(10) {
        let r = http
            .put(url(&format!("/api/2.0/fs/files/Volumes/c/s/v/f{i}.bin")))
            .bearer_auth("t")
            .header("content-type", "application/octet-stream")
            .body(vec![b'x'; 10 << 20])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }
    let stored = dir_bytes(dir.path());

    let mut times = Vec::new();
    let mut bytes = Vec::new();
    for i in 0..WRITES {
        let before = dir_bytes(dir.path());
        let t = Instant::now();
        let r = post(
            "/api/2.1/unity-catalog/catalogs",
            json!({"name": format!("small{i}")}),
        )
        .await
        .unwrap();
        assert!(r.status().is_success());
        times.push(t.elapsed());
        bytes.push(dir_bytes(dir.path()).saturating_sub(before));
    }
    let journal = median(times);
    let journal_bytes = bytes.iter().sum::<u64>() / WRITES as u64;

    // The previous design, for every change: the whole workspace, serialized and written.
    let state = emu.state();
    let scratch = tempfile::tempdir().unwrap();
    let mut full = Vec::new();
    let mut full_bytes = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let b = serde_json::to_vec(&state).unwrap();
        let tmp = scratch.path().join(".workspace.json.tmp");
        let mut f = std::fs::File::create(&tmp).unwrap();
        f.write_all(&b).unwrap();
        f.sync_all().unwrap();
        std::fs::rename(&tmp, scratch.path().join(STATE_FILE)).unwrap();
        full.push(t.elapsed());
        full_bytes = b.len() as u64;
    }
    let full = median(full);
    println!("workspace on disk: {:.1} MiB", stored as f64 / 1048576.0);
    println!(
        "small change, journal:      median {journal:?}, {journal_bytes} bytes written (incl. the HTTP round trip)"
    );
    println!(
        "small change, full rewrite: median {full:?}, {full_bytes} bytes written (serialize + write + fsync only)"
    );
    println!(
        "ratio: {:.0}x less time, {:.0}x fewer bytes",
        full.as_secs_f64() / journal.as_secs_f64(),
        full_bytes as f64 / journal_bytes.max(1) as f64
    );
    emu.shutdown().await;
}
