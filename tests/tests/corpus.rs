//! The corpus of invalid configurations (`tests/corpus/invalid/NAME/`): `brickform validate`
//! must fail on each with exit code 1, print every line of its `expected.txt` to stderr, and
//! report the first expected summary at the first expected `file:line:column` in
//! `validate --json` (so the summary and the location belong to the same diagnostic).
//!
//! A case directory holds one or more `*.bf.hcl` files, `expected.txt`, and optionally
//! `args.txt`: extra arguments for `validate`, one per line (e.g. `--var` and its value).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/invalid");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn lines(path: &Path) -> Vec<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => t
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// `main.bf.hcl:3:1` → (`main.bf.hcl`, 3, 1).
fn location(line: &str) -> Option<(String, u64, u64)> {
    let mut parts = line.rsplitn(3, ':');
    let col = parts.next()?.parse().ok()?;
    let row = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    file.ends_with(".hcl").then(|| (file.to_string(), row, col))
}

/// Checks one case; returns what is wrong with it.
fn check(dir: &Path) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let expected = lines(&dir.join("expected.txt"));
    if expected.is_empty() {
        return Err(format!("{name}: expected.txt is missing or empty"));
    }
    let args = lines(&dir.join("args.txt"));

    let out = common::brickform(dir)
        .arg("validate")
        .args(&args)
        .output()
        .unwrap();
    let (stdout, stderr) = common::texts(&out);
    let mut problems = Vec::new();
    if out.status.code() != Some(1) {
        problems.push(format!("exit code {:?}, expected 1", out.status.code()));
    }
    if stdout.contains("Success!") {
        problems.push("stdout says the configuration is valid".into());
    }
    if stderr.contains("panicked") || stderr.contains("stopped unexpectedly") {
        problems.push("the process panicked".into());
    }
    for line in &expected {
        if !stderr.contains(line.as_str()) {
            problems.push(format!("stderr lacks {line:?}"));
        }
    }

    // The same diagnostic carries the summary and the location.
    let out = common::brickform(dir)
        .args(["validate", "--json"])
        .args(&args)
        .output()
        .unwrap();
    if out.status.code() != Some(1) {
        problems.push(format!(
            "validate --json: exit code {:?}, expected 1",
            out.status.code()
        ));
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("{name}: validate --json printed no JSON: {e}"))?;
    if json["valid"] != false || json["error_count"].as_u64().unwrap_or(0) == 0 {
        problems.push(format!("validate --json says valid: {json}"));
    }
    let summary = &expected[0];
    let at = expected.iter().find_map(|l| location(l));
    let found = json["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|d| {
            d["summary"] == summary.as_str()
                && match &at {
                    None => d["range"].is_null(),
                    Some((file, row, col)) => {
                        d["range"]["filename"] == file.as_str()
                            && d["range"]["start"]["line"] == *row
                            && d["range"]["start"]["column"] == *col
                    }
                }
        });
    if !found {
        problems.push(format!(
            "validate --json has no diagnostic {summary:?} at {at:?}: {:#}",
            json["diagnostics"]
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name}:\n  {}\n--- stderr ---\n{stderr}",
            problems.join("\n  ")
        ))
    }
}

#[test]
fn every_invalid_configuration_fails_validate_with_located_diagnostics() {
    let cases = cases();
    assert!(
        cases.len() >= 40,
        "the corpus should hold at least 40 cases, found {}",
        cases.len()
    );
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
