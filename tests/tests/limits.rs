//! Hostile input ends in a located error, never a hang, an abort or a panic: files that are
//! not regular files (a named pipe blocks its reader forever, a device never ends), limits
//! on instance counts, strings and collections, a closed output pipe, and what a panic that
//! still happens looks like.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{brickform, config, run_ok};
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const PROVIDER: &str = "provider \"databricks\" {\n  host = \"local\"\n}\n";

/// Runs `args` in `d` with a time limit: before the fix a named pipe blocked forever.
fn limited(d: &Path, args: &[&str]) -> (i32, String) {
    let out = brickform(d)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let (_, e) = common::texts(&out);
    (out.status.code().unwrap_or(-1), e)
}

fn mkfifo(p: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
fn a_named_pipe_is_refused_wherever_a_file_is_read() {
    let dir = config(&[]);
    let d = dir.path();
    mkfifo(&d.join("pipe"));
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "locals {\n  x = file(\"pipe\")\n}\n\noutput \"x\" {\n  value = local.x\n}\n",
            &["validate"],
            "main.bf.hcl:5:12",
        ),
        (
            "locals {\n  x = templatefile(\"pipe\", {})\n}\n\noutput \"x\" {\n  value = local.x\n}\n",
            &["validate"],
            "main.bf.hcl:5:20",
        ),
        (
            "resource \"databricks_notebook\" \"n\" {\n  path   = \"/Shared/n.py\"\n  source = \"pipe\"\n}\n",
            &["plan"],
            "databricks_notebook.n",
        ),
        ("", &["plan", "--var-file", "pipe"], "variables file pipe"),
    ];
    for (body, args, at) in cases {
        std::fs::write(d.join("main.bf.hcl"), format!("{PROVIDER}{body}")).unwrap();
        let (code, err) = limited(d, args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.contains("named pipe (FIFO), not a file"),
            "{args:?}: {err}"
        );
        assert!(err.contains(at), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_device_is_refused_by_the_file_functions() {
    let dir = config(&[(
        "main.bf.hcl",
        "locals {\n  x = filesha256(\"/dev/urandom\")\n}\n\noutput \"x\" {\n  value = local.x\n}\n",
    )]);
    let (code, err) = limited(dir.path(), &["validate"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("it is a device, not a file"), "{err}");
    assert!(err.contains("main.bf.hcl:2:18"), "{err}");
}

#[test]
fn limits_are_located_errors() {
    // Each once panicked (capacity overflow), aborted on allocation or ran out of memory.
    let doubling: String = (1..=40)
        .map(|i| format!("  s{i} = \"${{local.s{}}}${{local.s{}}}\"\n", i - 1, i - 1))
        .collect();
    // Each level wraps the one before: past 64, state and plan files could not be read
    // back, and walking the value could overflow a thread's stack.
    let nesting: String = (1..=65)
        .map(|i| format!("  n{i} = [local.n{}]\n", i - 1))
        .collect();
    let cases = [
        (
            "resource \"databricks_catalog\" \"c\" {\n  count = 1e18\n  name  = \"c${count.index}\"\n}\n".to_string(),
            "one resource may have at most 100000",
            "main.bf.hcl:5:11",
        ),
        (
            "resource \"databricks_catalog\" \"c\" {\n  count = 9007199254740993\n  name  = \"c${count.index}\"\n}\n".to_string(),
            "one resource may have at most 100000",
            "main.bf.hcl:5:11",
        ),
        (
            "locals {\n  x = indent(1e9, \"a\\nb\")\n}\n".to_string(),
            "more than the limit of 64 MiB",
            "main.bf.hcl:5:7",
        ),
        (
            "locals {\n  r = range(1000)\n  x = setproduct(local.r, local.r, local.r)\n}\n".to_string(),
            "more than the limit of 1000000",
            "main.bf.hcl:6:7",
        ),
        (
            format!("locals {{\n  n0 = 1\n{nesting}}}\n"),
            "65 levels deep, more than the limit of 64",
            "main.bf.hcl:",
        ),
        (
            format!("locals {{\n  n0 = 1\n{}}}\noutput \"o\" {{\n  value = [local.n64]\n}}\n", &nesting[..nesting.find("  n65").unwrap_or(0)]),
            "65 levels deep, more than the limit of 64",
            "main.bf.hcl:72:11",
        ),
        (
            format!("locals {{\n  s0 = \"0123456789abcdef\"\n{doubling}}}\n"),
            "more than the limit of 64 MiB",
            "main.bf.hcl:",
        ),
    ];
    for (body, why, at) in cases {
        let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{body}"))]);
        let (code, err) = limited(dir.path(), &["validate"]);
        assert_eq!(code, 1, "{body}\n{err}");
        assert!(err.contains(why), "{body}\n{err}");
        assert!(err.contains(at), "{body}\n{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_large_value_copied_into_many_places_stops_the_plan_at_a_limit() {
    // Each copy is one expression well within its own limit; together they would take
    // memory without end (before, 40 copies of 32 MiB were simply held).
    let doubling: String = (1..=21)
        .map(|i| format!("  s{i} = \"${{local.s{}}}${{local.s{}}}\"\n", i - 1, i - 1))
        .collect();
    let copies: String = (1..=40).map(|i| format!("  c{i} = local.s21\n")).collect();
    let body = format!("locals {{\n  s0 = \"0123456789abcdef\"\n{doubling}{copies}}}\n");
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{body}"))]);
    let (code, err) = limited(dir.path(), &["plan", "--local"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Plan limit reached"), "{err}");
    assert!(err.contains("more than 1024 MiB"), "{err}");
    assert!(err.contains("main.bf.hcl:"), "{err}");
}

#[test]
fn an_error_past_column_65522_is_reported_without_a_snippet() {
    // miette's renderer panics on such a column.
    let long = "a".repeat(70_000);
    let dir = config(&[(
        "main.bf.hcl",
        &format!("locals {{\n  x = [\"{long}\", 1 + true]\n}}\n"),
    )]);
    let (code, err) = limited(dir.path(), &["validate"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Invalid operand"), "{err}");
    assert!(err.contains("at main.bf.hcl:2:70012"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Runs `args` with stdout a pipe whose reader is gone before the first write.
fn closed_stdout(d: &Path, args: &[&str]) -> (i32, String) {
    // The same environment as `brickform()` gives, on a std Command (for a piped stdout).
    let mut cmd = std::process::Command::new(common::bin());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("BRICKFORM_") {
            cmd.env_remove(&k);
        }
    }
    let mut child = cmd
        .env("NO_COLOR", "1")
        .arg("-C")
        .arg(d)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code().unwrap_or(-1), err)
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    let dir = config(&[(
        "main.bf.hcl",
        &format!("{PROVIDER}resource \"databricks_catalog\" \"c\" {{\n  name = \"pipe_cat\"\n}}\n"),
    )]);
    let d = dir.path();
    run_ok(d, &["apply", "--auto-approve"], &[]);
    for args in [
        &["show"][..],
        &["schema"],
        &["show", "--json"],
        &["state", "list"],
    ] {
        let (code, err) = closed_stdout(d, args);
        // 141: what a shell reports for a tool ended by SIGPIPE (`yes | head`).
        assert_eq!(code, 141, "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
    }
}

#[test]
fn a_panic_exits_101_with_one_line() {
    let dir = config(&[]);
    let out = brickform(dir.path())
        .env("BRICKFORM_TEST_PANIC", "1")
        .arg("validate")
        .output()
        .unwrap();
    let (_, err) = common::texts(&out);
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("Error: brickform stopped on an internal error (a bug; please report it): BRICKFORM_TEST_PANIC is set at cmd/src/main.rs:"),
        "{err}"
    );
}
