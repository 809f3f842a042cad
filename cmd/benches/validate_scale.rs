//! Benchmark (issue 13): what `brickform validate` costs as a configuration grows — instances
//! (blocks of 100 schemas each) and errors (one mistyped argument per block) — reported as
//! the time per doubling, which stays near ×2 when the cost is linear.
//!
//! Run with `cargo bench -p brickform --bench validate_scale`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic

use std::process::Command;
use std::time::{Duration, Instant};

fn instances(n: usize) -> String {
    (0..n / 100)
        .map(|b| {
            format!(
                "resource \"databricks_schema\" \"s{b}\" {{\n  count        = 100\n  catalog_name = \"main\"\n  name         = \"s{b}_${{count.index}}\"\n  comment      = \"schema ${{count.index}} of block {b}\"\n}}\n"
            )
        })
        .collect()
}

fn errors(n: usize) -> String {
    (0..n)
        .map(|b| {
            format!(
                "resource \"databricks_schema\" \"s{b}\" {{\n  catalog_name = \"main\"\n  name         = \"s{b}\"\n  commnt       = \"typo\"\n}}\n"
            )
        })
        .collect()
}

/// Runs `validate` in a directory holding `text`; the exit code it must end with.
fn validate(text: &str, code: i32) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.bf.hcl"), text).unwrap();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_brickform"))
        .arg("validate")
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn series(what: &str, sizes: &[usize], make: fn(usize) -> String, code: i32) {
    println!("\nvalidate, {what}");
    let mut before: Option<Duration> = None;
    for &n in sizes {
        let took = validate(&make(n), code);
        let per_doubling = before
            .map(|b| format!("×{:.2}", took.as_secs_f64() / b.as_secs_f64()))
            .unwrap_or_default();
        println!("  {n:>7}  {:>7.2} s  {per_doubling}", took.as_secs_f64());
        before = Some(took);
    }
}

fn main() {
    series(
        "instances",
        &[12_500, 25_000, 50_000, 100_000],
        instances,
        0,
    );
    series("errors", &[1_250, 2_500, 5_000, 10_000], errors, 1);
}
