//! The `brickform` binary end to end, in temporary directories: exit codes and output of
//! validate, plan, apply, output, saved plans, variables, fmt, graph, state, env and the
//! state lock.
//!
//! These configurations hold variables, locals and outputs only, so they need no
//! workspace; resources are covered by the other end-to-end tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_state::{
    Intent, LocalBackend, LockInfo, Outcome, ResourceState, ResultRecord, StateDocument, WalOp,
    WalRecord,
};
use common::{brickform, config, texts};
use predicates::prelude::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const SECRET: &str = "hunter2-do-not-print";

fn outputs_config() -> String {
    format!(
        r#"variable "name" {{
  type    = string
  default = "dev"
}}

variable "password" {{
  type      = string
  default   = "{SECRET}"
  sensitive = true
}}

locals {{
  greeting = "hello ${{var.name}}"
}}

output "greeting" {{
  value = local.greeting
}}

output "password" {{
  value     = var.password
  sensitive = true
}}

output "count" {{
  value = 3
}}
"#
    )
}

/// Every file under `.brickform/state`, with its text.
fn state_files(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let state_dir = dir.join(".brickform/state");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&state_dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            out.push((p, text));
        }
    }
    out.sort();
    out
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// The planned value of output `name` in `plan --json`.
fn planned_output(
    dir: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
    name: &str,
) -> serde_json::Value {
    let mut cmd = brickform(dir);
    cmd.args(["plan", "--json"]).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "plan --json {args:?}: {stderr}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    j["output_changes"][name]["after"].clone()
}

#[test]
fn validate_reports_success_errors_with_locations_and_json() {
    let ok = config(&[("main.bf.hcl", &outputs_config())]);
    brickform(ok.path())
        .arg("validate")
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "Success! The configuration is valid.",
        ));
    let out = brickform(ok.path())
        .args(["validate", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["format_version"], "1.0");
    assert_eq!(j["valid"], true);
    assert_eq!(j["error_count"], 0);
    assert_eq!(j["warning_count"], 0);
    assert_eq!(j["diagnostics"], serde_json::json!([]));

    // Two problems in two files: both reported, each with its own location.
    let bad = config(&[
        (
            "a.bf.hcl",
            "variable \"region\" {}\n\nvarable \"zone\" {}\n",
        ),
        ("b.bf.hcl", "output \"o\" {\n  value = var.regin\n}\n"),
    ]);
    brickform(bad.path())
        .arg("validate")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("Success").not())
        .stderr(
            predicate::str::contains("Unsupported block type")
                .and(predicate::str::contains("a.bf.hcl:3:1"))
                .and(predicate::str::contains("did you mean `variable`?")),
        );
    // The load error stops validation before references are checked, as Terraform does;
    // fix it and the next problem shows, located in the other file.
    std::fs::write(bad.path().join("a.bf.hcl"), "variable \"region\" {}\n").unwrap();
    let out = brickform(bad.path())
        .args(["validate", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["valid"], false);
    assert_eq!(j["error_count"], 1);
    let d = &j["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["summary"], "Reference to undeclared input variable");
    assert!(d["detail"].as_str().unwrap().contains("\"regin\""), "{d}");
    assert_eq!(d["hint"], "did you mean `region`?");
    assert_eq!(d["range"]["filename"], "b.bf.hcl");
    assert_eq!(d["range"]["start"]["line"], 2);
    assert_eq!(d["range"]["start"]["column"], 11);
    assert_eq!(d["range"]["start"]["byte"], 23);
    assert_eq!(d["range"]["end"]["line"], 2);
    assert_eq!(d["range"]["end"]["column"], 20);
}

#[test]
fn plan_apply_output_and_sensitive_values() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    let mut printed = String::new();

    // Changes pending: --detailed-exitcode says 2.
    let out = brickform(d)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stdout.contains("Changes to Outputs:"), "{stdout}");
    assert!(stdout.contains("+ greeting = \"hello dev\""), "{stdout}");
    assert!(stdout.contains("(sensitive value)"), "{stdout}");
    printed += &stdout;
    printed += &stderr;

    let out = brickform(d)
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("Apply complete! Resources: 0 added, 0 changed, 0 destroyed."),
        "{stdout}"
    );
    assert!(stdout.contains("greeting = \"hello dev\""), "{stdout}");
    assert!(stdout.contains("password = <sensitive>"), "{stdout}");
    printed += &stdout;
    printed += &stderr;

    // Nothing left to do: 0.
    let out = brickform(d)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("No changes."), "{stdout}");

    let out = brickform(d).arg("output").output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("greeting = \"hello dev\"\n"), "{stdout}");
    assert!(stdout.contains("count = 3\n"), "{stdout}");
    assert!(stdout.contains("password = <sensitive>\n"), "{stdout}");
    printed += &stdout;

    brickform(d)
        .args(["output", "greeting", "--raw"])
        .assert()
        .code(0)
        .stdout("hello dev\n");
    brickform(d)
        .args(["output", "count", "--raw"])
        .assert()
        .code(0)
        .stdout("3\n");
    brickform(d)
        .args(["output", "greeting"])
        .assert()
        .code(0)
        .stdout("\"hello dev\"\n");

    let out = brickform(d).args(["output", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["greeting"]["value"], "hello dev");
    assert_eq!(j["greeting"]["sensitive"], false);
    assert_eq!(j["count"]["value"], 3);
    assert_eq!(j["password"]["sensitive"], true);
    printed += &String::from_utf8_lossy(&out.stdout);

    let out = brickform(d)
        .args(["output", "password", "--raw"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    printed += &texts(&out).0;
    printed += &texts(&out).1;
    brickform(d)
        .args(["output", "nope"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Output \"nope\" not found"));

    for args in [&["show"][..], &["show", "--json"], &["state", "pull"]] {
        let out = brickform(d).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        printed += &texts(&out).0;
        printed += &texts(&out).1;
    }

    // An error makes --detailed-exitcode 1.
    let broken = config(&[(
        "main.bf.hcl",
        "output \"o\" {\n  value = local.missing\n}\n",
    )]);
    brickform(broken.path())
        .args(["plan", "--detailed-exitcode"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("Reference to undeclared local value")
                .and(predicate::str::contains("main.bf.hcl:2:11")),
        );

    // A second apply (a changed value) keeps a backup; state and backup are private.
    std::fs::write(
        d.join("main.bf.hcl"),
        outputs_config().replace("\"dev\"", "\"prod\""),
    )
    .unwrap();
    let out = brickform(d)
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("greeting = \"hello prod\""), "{stdout}");
    printed += &stdout;
    printed += &stderr;
    let state = d.join(".brickform/state/default.json");
    let backup = d.join(".brickform/state/default.json.backup");
    assert_eq!(mode(&state), 0o600);
    assert!(backup.is_file(), "a backup of the previous state is kept");
    assert_eq!(mode(&backup), 0o600);
    assert!(
        std::fs::read_to_string(&backup)
            .unwrap()
            .contains("hello dev")
    );

    assert!(
        !printed.contains(SECRET),
        "a sensitive value was printed:\n{printed}"
    );
    let files = state_files(d);
    assert!(files.len() >= 2, "{files:?}");
    for (p, text) in files {
        assert!(
            !text.contains(SECRET),
            "{} holds the sensitive value",
            p.display()
        );
    }
}

#[test]
fn saved_plan_applies_in_another_process_and_only_once() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    let plan = d.join("changes.plan");
    let out = brickform(d)
        .args(["plan", "--out"])
        .arg(&plan)
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("Saved the plan to:"), "{stdout}");
    assert_eq!(mode(&plan), 0o600);
    assert!(
        !std::fs::read_to_string(&plan).unwrap().contains(SECRET),
        "plan files hold no secrets"
    );

    // No --auto-approve and no terminal: a saved plan applies without asking.
    let out = brickform(d)
        .arg("apply")
        .arg(&plan)
        .write_stdin("")
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("Apply complete!"), "{stdout}");
    assert!(!stdout.contains("Enter a value"), "{stdout}");
    brickform(d)
        .args(["output", "greeting", "--raw"])
        .assert()
        .stdout("hello dev\n");

    // The plan's state has moved on (its own apply): applying it again is refused.
    brickform(d)
        .arg("apply")
        .arg(&plan)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Saved plan is stale"));
}

#[test]
fn stale_saved_plans_are_refused() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    brickform(d)
        .args(["apply", "--auto-approve"])
        .assert()
        .code(0);

    // Another apply changes the state between plan and apply.
    let plan = d.join("p1");
    brickform(d)
        .args(["plan", "--var", "name=planned", "--out"])
        .arg(&plan)
        .assert()
        .code(0);
    brickform(d)
        .args(["apply", "--auto-approve", "--var", "name=other"])
        .assert()
        .code(0);
    let out = brickform(d).arg("apply").arg(&plan).output().unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stale") && stderr.contains("state was changed"),
        "{stderr}"
    );
    brickform(d)
        .args(["output", "greeting", "--raw"])
        .assert()
        .stdout("hello other\n");

    // The configuration is edited between plan and apply.
    let plan = d.join("p2");
    brickform(d)
        .args(["plan", "--out"])
        .arg(&plan)
        .assert()
        .code(0);
    std::fs::write(
        d.join("main.bf.hcl"),
        outputs_config().replace("hello ", "hi "),
    )
    .unwrap();
    let out = brickform(d).arg("apply").arg(&plan).output().unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stale") && stderr.contains("configuration files changed"),
        "{stderr}"
    );

    // Variables differ from the plan's.
    let plan = d.join("p3");
    brickform(d)
        .args(["plan", "--out"])
        .arg(&plan)
        .assert()
        .code(0);
    let out = brickform(d)
        .arg("apply")
        .arg(&plan)
        .args(["--var", "name=x"])
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stale") && stderr.contains("variable values differ"),
        "{stderr}"
    );
    brickform(d)
        .args(["output", "greeting", "--raw"])
        .assert()
        .stdout("hello other\n");
}

#[test]
fn plan_files_of_another_format_version_are_refused() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    let plan = d.join("p.plan");
    brickform(d)
        .args(["plan", "--out"])
        .arg(&plan)
        .assert()
        .code(0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(written["format_version"], 1);

    // A newer brickform's plan: version 2, and a layout this one does not know (its
    // `plan` field renamed), so only the version check can tell what is wrong.
    let mut newer = written.clone();
    newer["format_version"] = 2.into();
    newer["brickform_version"] = "9.9.9".into();
    let body = newer.as_object_mut().unwrap().remove("plan").unwrap();
    newer["plan_v2"] = body;
    let newer_file = d.join("newer.plan");
    std::fs::write(&newer_file, newer.to_string()).unwrap();
    for args in [&["apply"][..], &["show"]] {
        let out = brickform(d).args(args).arg(&newer_file).output().unwrap();
        let (stdout, stderr) = texts(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("format version 2")
                && stderr.contains("brickform 9.9.9")
                && stderr.contains("reads format version 1")
                && !stderr.contains("missing field")
                && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
        assert!(!stdout.contains("Apply complete"), "{stdout}");
    }

    // No version at all.
    let mut unversioned = written.clone();
    unversioned
        .as_object_mut()
        .unwrap()
        .remove("format_version");
    std::fs::write(&newer_file, unversioned.to_string()).unwrap();
    let out = brickform(d).arg("apply").arg(&newer_file).output().unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no plan file format version") && stderr.contains("format version 1"),
        "{stderr}"
    );
    // Nothing was applied; the original plan still applies.
    brickform(d)
        .args(["output", "--json"])
        .assert()
        .stdout("{}\n");
    brickform(d).arg("apply").arg(&plan).assert().code(0);
}

#[test]
fn saved_plans_belong_to_their_state_and_environment() {
    let text = outputs_config();
    let a = config(&[("main.bf.hcl", &text)]);
    let b = config(&[("main.bf.hcl", &text)]);
    brickform(b.path())
        .args(["apply", "--auto-approve", "--var", "name=b"])
        .assert()
        .code(0);
    let plan = a.path().join("a.plan");
    brickform(a.path())
        .args(["plan", "--out"])
        .arg(&plan)
        .assert()
        .code(0);
    // Same configuration, another state (another lineage): refused.
    brickform(b.path())
        .arg("apply")
        .arg(&plan)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "Saved plan does not match the given state",
        ));
    brickform(b.path())
        .args(["output", "greeting", "--raw"])
        .assert()
        .stdout("hello b\n");

    // A plan made for an environment applies to that environment's state (made on purpose
    // first: the configuration declares no environments).
    brickform(a.path())
        .args(["env", "new", "prod"])
        .assert()
        .code(0);
    let plan = a.path().join("prod.plan");
    brickform(a.path())
        .args(["--env", "prod", "plan", "--out"])
        .arg(&plan)
        .assert()
        .code(0);
    brickform(a.path()).arg("apply").arg(&plan).assert().code(0);
    brickform(a.path())
        .args(["--env", "prod", "output", "greeting", "--raw"])
        .assert()
        .stdout("hello dev\n");
    brickform(a.path())
        .args(["output", "--json"])
        .assert()
        .stdout("{}\n");
}

#[test]
fn apply_without_auto_approve_and_without_a_terminal_refuses() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    brickform(d)
        .arg("apply")
        // Not a terminal: even a "yes" on stdin does not approve.
        .write_stdin("yes\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No confirmation given"));
    brickform(d)
        .args(["output", "--json"])
        .assert()
        .code(0)
        .stdout("{}\n");
}

#[test]
fn variable_values_follow_their_precedence() {
    let dir = config(&[(
        "main.bf.hcl",
        r#"variable "v" {
  default = "default"
}
variable "n" {
  type    = number
  default = 1
}
environment "prod" {
  variables = {
    v = "environment block"
  }
}
output "v" { value = var.v }
output "n" { value = var.n * 2 }
"#,
    )]);
    let d = dir.path();
    let f1 = d.join("one.bfvars.hcl");
    let f2 = d.join("two.bfvars.hcl");
    std::fs::write(&f1, "v = \"file one\"\n").unwrap();
    std::fs::write(&f2, "v = \"file two\"\nn = 5\n").unwrap();
    let (f1, f2) = (f1.to_str().unwrap(), f2.to_str().unwrap());
    let v = |args: &[&str], envs: &[(&str, &str)]| planned_output(d, args, envs, "v");

    assert_eq!(v(&[], &[]), "default");
    assert_eq!(v(&["--env", "prod"], &[]), "environment block");
    assert_eq!(v(&[], &[("BRICKFORM_ENV", "prod")]), "environment block");
    assert_eq!(v(&["--env", "prod", "--var-file", f1], &[]), "file one");
    assert_eq!(
        v(&["--var-file", f2, "--var-file", f1], &[]),
        "file one",
        "the last file wins"
    );
    assert_eq!(v(&["--var-file", f1, "--var-file", f2], &[]), "file two");
    assert_eq!(
        v(
            &["--env", "prod", "--var-file", f1],
            &[("BRICKFORM_VAR_v", "from env")]
        ),
        "from env"
    );
    assert_eq!(
        v(
            &["--env", "prod", "--var-file", f1, "--var", "v=flag"],
            &[("BRICKFORM_VAR_v", "from env")]
        ),
        "flag"
    );
    assert_eq!(v(&["--var", "v=first", "--var", "v=second"], &[]), "second");
    // Command-line text is parsed as the declared type.
    assert_eq!(planned_output(d, &["--var", "n=21"], &[], "n"), 42);
    assert_eq!(
        planned_output(d, &["--var-file", f2], &[("BRICKFORM_VAR_n", "4")], "n"),
        8
    );
    brickform(d)
        .args(["plan", "--var", "n=many"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("Invalid value for input variable")
                .and(predicate::str::contains("var.n, which has type number")),
        );
}

#[test]
fn missing_and_undeclared_variables() {
    let dir = config(&[(
        "main.bf.hcl",
        "variable \"region\" {\n  description = \"Where to deploy\"\n}\noutput \"r\" { value = var.region }\n",
    )]);
    let d = dir.path();
    // validate checks without values.
    brickform(d).arg("validate").assert().code(0);
    brickform(d)
        .arg("plan")
        .write_stdin("")
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("No value for required variable \"region\"")
                .and(predicate::str::contains("main.bf.hcl:1:1"))
                .and(predicate::str::contains("BRICKFORM_VAR_region")),
        );
    brickform(d)
        .arg("plan")
        .env("BRICKFORM_VAR_region", "eu")
        .assert()
        .code(0);

    brickform(d)
        .args(["plan", "--var", "regoin=eu", "--var", "region=eu"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("Value for undeclared variable")
                .and(predicate::str::contains("did you mean `region`?")),
        );
    brickform(d)
        .args(["plan", "--var", "region"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("expected NAME=VALUE"));

    // Problems in a variables file are located in that file, not in the configuration.
    let vars = d.join("bad.bfvars.hcl");
    std::fs::write(&vars, "# values\n\nregion = = \"eu\"\n").unwrap();
    let out = brickform(d)
        .arg("plan")
        .arg("--var-file")
        .arg(&vars)
        .env("BRICKFORM_VAR_region", "eu")
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Invalid syntax"), "{stderr}");
    assert!(stderr.contains("bad.bfvars.hcl:3:10"), "{stderr}");
    assert!(!stderr.contains("main.bf.hcl"), "{stderr}");
}

#[test]
fn fmt_check_then_fmt() {
    let messy = "variable \"a\" {\ndefault=\"x\"\n  type = string\n}\n";
    let dir = config(&[("main.bf.hcl", messy)]);
    let d = dir.path();
    brickform(d)
        .args(["fmt", "--check"])
        .assert()
        .code(3)
        .stdout("main.bf.hcl\n");
    assert_eq!(
        std::fs::read_to_string(d.join("main.bf.hcl")).unwrap(),
        messy,
        "--check writes nothing"
    );
    brickform(d)
        .arg("fmt")
        .assert()
        .code(0)
        .stdout("main.bf.hcl\n");
    assert_eq!(
        std::fs::read_to_string(d.join("main.bf.hcl")).unwrap(),
        "variable \"a\" {\n  default = \"x\"\n  type    = string\n}\n"
    );
    brickform(d)
        .args(["fmt", "--check"])
        .assert()
        .code(0)
        .stdout("");

    // Named files and directories, --diff, and standard input, as terraform fmt takes them.
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(d.join("sub/x.bf.hcl"), messy).unwrap();
    std::fs::write(d.join("dev.bfvars.hcl"), "a=\"y\"\n").unwrap();
    brickform(d)
        .args(["fmt", "--check", "--diff", "sub"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "sub/x.bf.hcl\n--- old/sub/x.bf.hcl\n+++ new/sub/x.bf.hcl\n",
        ))
        .stdout(predicate::str::contains(
            "-default=\"x\"\n-  type = string\n+  default = \"x\"\n",
        ));
    assert_eq!(
        std::fs::read_to_string(d.join("sub/x.bf.hcl")).unwrap(),
        messy
    );
    brickform(d)
        .args(["fmt", "dev.bfvars.hcl", "sub/x.bf.hcl"])
        .assert()
        .code(0)
        .stdout("dev.bfvars.hcl\nsub/x.bf.hcl\n");
    assert_eq!(
        std::fs::read_to_string(d.join("dev.bfvars.hcl")).unwrap(),
        "a = \"y\"\n"
    );
    brickform(d)
        .args(["fmt", "-"])
        .write_stdin(messy)
        .assert()
        .code(0)
        .stdout("variable \"a\" {\n  default = \"x\"\n  type    = string\n}\n");
    brickform(d)
        .args(["fmt", "notes.txt"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("only configuration files"));

    std::fs::write(d.join("bad.bf.hcl"), "locals {\n  a =\n}\n").unwrap();
    brickform(d)
        .args(["fmt", "--check"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.bf.hcl"));
}

/// Plain `fmt` (not only `--check`) on a file it cannot parse exits 1 naming the file and
/// leaves it as it was, whether it formats the directory or the file by name: a script
/// running `fmt` before a commit must not take a broken file for a formatted one.
#[test]
fn fmt_of_a_file_with_a_syntax_error_exits_1_and_leaves_it_unchanged() {
    let broken = "locals {\n  a =\n}\n";
    let dir = config(&[("bad.bf.hcl", broken)]);
    let d = dir.path();
    let cases: [&[&str]; 2] = [&["fmt"], &["fmt", "bad.bf.hcl"]];
    for args in cases {
        brickform(d)
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains("bad.bf.hcl"));
        assert_eq!(
            std::fs::read_to_string(d.join("bad.bf.hcl")).unwrap(),
            broken,
            "{args:?}"
        );
    }
}

#[test]
fn graph_prints_dot_and_needs_graphviz_for_svg() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    brickform(d)
        .arg("graph")
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("digraph {").and(predicate::str::ends_with("}\n")));
    let empty = tempfile::tempdir().unwrap();
    brickform(d)
        .args(["graph", "--format", "svg"])
        .env("PATH", empty.path())
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("Graphviz").and(predicate::str::contains("`dot`")));
    brickform(d)
        .args(["graph", "--format", "pdf"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown graph format"));
    let broken = config(&[("main.bf.hcl", "locals {\n  a = local.b\n  b = local.a\n}\n")]);
    brickform(broken.path())
        .arg("graph")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "Cycle: local.a → local.b → local.a",
        ));
}

#[test]
fn state_and_env_commands() {
    let dir = config(&[(
        "main.bf.hcl",
        "environment \"prod\" {}\nenvironment \"staging\" {}\noutput \"o\" { value = 1 }\n",
    )]);
    let d = dir.path();
    let backend = LocalBackend::new(d);
    let mut doc = StateDocument::new("default");
    for (addr, id) in [
        ("test_thing.b", "id-b"),
        ("test_thing.a", "id-a"),
        ("data.test_info.me", "me"),
    ] {
        let mut r = ResourceState::new(addr, "test", id).unwrap();
        r.config.insert("name".into(), serde_json::json!("thing"));
        r.computed.insert("id".into(), serde_json::json!(id));
        r.computed
            .insert("created_by".into(), serde_json::json!("me"));
        r.sensitive.insert("token".into(), "fingerprint".into());
        doc.insert(r).unwrap();
    }
    backend.save_sync("default", &mut doc).unwrap();
    // As `terraform state show` prints it: id once and first, names aligned, a sensitive
    // attribute named but not shown; the state entry itself with --json.
    brickform(d)
        .args(["state", "show", "test_thing.a"])
        .assert()
        .code(0)
        .stdout(
            "# test_thing.a:\nresource \"test_thing\" \"a\" {\n    id         = \"id-a\"\n    created_by = \"me\"\n    name       = \"thing\"\n    token      = (sensitive value)\n}\n",
        );
    brickform(d)
        .args(["state", "show", "data.test_info.me"])
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with(
            "# data.test_info.me:\ndata \"test_info\" \"me\" {\n",
        ));
    let out = brickform(d)
        .args(["state", "show", "test_thing.a", "--json"])
        .output()
        .unwrap();
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["id"], "id-a");
    assert_eq!(shown["sensitive"]["token"], "fingerprint");
    backend
        .save_sync("qa", &mut StateDocument::new("qa"))
        .unwrap();

    let out = brickform(d).args(["state", "list"]).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "data.test_info.me\ntest_thing.a\ntest_thing.b\n");
    brickform(d)
        .args(["state", "mv", "test_thing.a", "test_thing.c"])
        .assert()
        .code(0);
    brickform(d)
        .args(["state", "rm", "test_thing.b"])
        .assert()
        .code(0);
    brickform(d)
        .args(["state", "list"])
        .assert()
        .stdout("data.test_info.me\ntest_thing.c\n");
    brickform(d)
        .args(["state", "show", "test_thing.zz"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No instance found"));
    // An environment the configuration does not declare is refused, even with a state.
    brickform(d)
        .args(["-e", "qa", "state", "list"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "There is no environment \"qa\" in the configuration",
        ));

    // Declared environments and those with a state; the current one starred.
    brickform(d)
        .args(["env", "list"])
        .assert()
        .code(0)
        .stdout("* default\n  prod\n  qa\n  staging\n");
    brickform(d)
        .args(["--env", "staging", "env", "list"])
        .assert()
        .stdout("  default\n  prod\n  qa\n* staging\n");
}

/// The names and contents of the files under `.brickform/state`, to show nothing was written.
fn state_snapshot(dir: &Path) -> Vec<(String, String)> {
    state_files(dir)
        .into_iter()
        .map(|(p, text)| (p.file_name().unwrap().to_string_lossy().into_owned(), text))
        .collect()
}

#[test]
fn a_misspelt_environment_without_environment_blocks_is_refused_and_nothing_is_written() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    brickform(d)
        .args(["apply", "--auto-approve"])
        .assert()
        .code(0);
    brickform(d).args(["env", "new", "prod"]).assert().code(0);
    let before = state_snapshot(d);
    let names: Vec<&str> = before.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["default.json", "default.json.backup", "prod.json"]);
    let commands: &[&[&str]] = &[
        &["plan"],
        &["apply", "--auto-approve"],
        &["destroy", "--auto-approve"],
        &["output"],
        &["show"],
        &["state", "list"],
        &["state", "pull"],
        &["state", "rm", "test_thing.a"],
        &["import", "test_thing.a", "id-a"],
        &["init"],
        &["env", "list"],
        &["force-unlock", "00000000-0000-0000-0000-000000000000"],
    ];
    for args in commands {
        let out = brickform(d)
            .args(["--env", "prdo"])
            .args(*args)
            .output()
            .unwrap();
        let (stdout, stderr) = texts(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}\n{stdout}\n{stderr}");
        assert!(
            stderr.contains("There is no environment \"prdo\"")
                && stderr.contains("did you mean `prod`?")
                && stderr.contains("brickform env new prdo"),
            "{args:?}\n{stderr}"
        );
    }
    // BRICKFORM_ENV is the same choice; the known environments are named.
    let out = brickform(d)
        .arg("plan")
        .env("BRICKFORM_ENV", "prdo")
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("\"default\", \"prod\""), "{stderr}");
    assert!(stderr.contains("did you mean `prod`?"), "{stderr}");
    // The implicit environment needs no state; a near miss of it is caught too.
    let out = brickform(d)
        .args(["--env", "defualt", "plan"])
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did you mean `default`?"), "{stderr}");
    assert_eq!(state_snapshot(d), before, "nothing was written");
    brickform(d)
        .args(["--env", "default", "plan", "--detailed-exitcode"])
        .assert()
        .code(0);
}

#[test]
fn env_new_makes_an_environment_that_env_then_selects() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    brickform(d)
        .args(["--env", "qa", "plan"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("There is no environment \"qa\""));
    brickform(d)
        .args(["env", "new", "qa"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("Created environment \"qa\""));
    let path = d.join(".brickform/state/qa.json");
    assert_eq!(mode(&path), 0o600);
    let doc = LocalBackend::new(d).load_sync("qa").unwrap().unwrap();
    assert_eq!(doc.environment(), "qa");
    assert!(doc.resources().is_empty() && doc.outputs().is_empty());
    brickform(d)
        .args(["env", "list"])
        .assert()
        .code(0)
        .stdout("* default\n  qa\n");
    brickform(d)
        .args(["--env", "qa", "apply", "--auto-approve", "--var", "name=qa"])
        .assert()
        .code(0);
    brickform(d)
        .args(["output", "greeting", "--raw"])
        .env("BRICKFORM_ENV", "qa")
        .assert()
        .code(0)
        .stdout("hello qa\n");
    brickform(d)
        .args(["--env", "qa", "env", "list"])
        .assert()
        .stdout("* qa\n");
    // Made once; a name that cannot be a file name never.
    brickform(d)
        .args(["env", "new", "qa"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "environment \"qa\" exists already",
        ));
    for bad in ["../x", "a b", "_x"] {
        brickform(d)
            .args(["env", "new", bad])
            .assert()
            .code(1)
            .stderr(predicate::str::contains("invalid environment name"));
    }
    brickform(d)
        .args(["--env", "qa", "output", "greeting", "--raw"])
        .assert()
        .stdout("hello qa\n");
}

#[test]
fn environment_blocks_added_to_an_applied_configuration_keep_its_state_after_env_rename() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    brickform(d)
        .args(["apply", "--auto-approve", "--var", "name=team"])
        .assert()
        .code(0);
    let backend = LocalBackend::new(d);
    let lineage = backend.load_sync("default").unwrap().unwrap().lineage();
    std::fs::write(
        d.join("environments.bf.hcl"),
        "environment \"dev\" {\n  default = true\n}\n\nenvironment \"prod\" {}\n",
    )
    .unwrap();
    // Without the rename, dev starts from nothing: everything would be made again.
    brickform(d)
        .args([
            "--env",
            "dev",
            "plan",
            "--detailed-exitcode",
            "--var",
            "name=team",
        ])
        .assert()
        .code(2);
    brickform(d)
        .args(["env", "rename", "default", "dev"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "Renamed environment \"default\" to \"dev\"",
        ));
    let moved = backend.load_sync("dev").unwrap().unwrap();
    assert_eq!(moved.environment(), "dev");
    assert_eq!(
        moved.lineage(),
        lineage,
        "the objects' ownership tags name it"
    );
    assert!(backend.load_sync("default").unwrap().is_none());
    let names: Vec<String> = state_snapshot(d).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["default.json.backup", "dev.json"]);
    for (p, _) in state_files(d) {
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }
    brickform(d)
        .args([
            "--env",
            "dev",
            "plan",
            "--detailed-exitcode",
            "--var",
            "name=team",
        ])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("No changes."));
    brickform(d)
        .args(["--env", "dev", "output", "greeting", "--raw"])
        .assert()
        .code(0)
        .stdout("hello team\n");
    brickform(d)
        .args(["env", "list"])
        .assert()
        .stdout("* dev\n  prod\n");

    // Refused: a name with no state, a name that has one, a locked state.
    brickform(d)
        .args(["env", "rename", "default", "staging"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "there is no state of environment \"default\" to rename",
        ));
    brickform(d).args(["env", "new", "prod"]).assert().code(0);
    brickform(d)
        .args(["env", "rename", "dev", "prod"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "environment \"prod\" exists already",
        ));
    let held = backend
        .try_lock_sync("dev", LockInfo::new("apply"))
        .unwrap();
    brickform(d)
        .args(["env", "rename", "dev", "staging"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Error acquiring the state lock"));
    drop(held);
    assert!(backend.load_sync("staging").unwrap().is_none());

    // A log that holds an operation whose outcome is unknown is resolved where it was made.
    let intent = |seq: u64, address: &str| Intent {
        seq,
        op: WalOp::Create,
        address: address.into(),
        resource_type: "test_thing".into(),
        natural_key: Some(address.into()),
        id: None,
        writer: None,
        token: None,
    };
    backend
        .wal_append_sync("dev", &WalRecord::Intent(intent(1, "test_thing.a")))
        .unwrap();
    brickform(d)
        .args(["env", "rename", "dev", "staging"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("left unresolved (test_thing.a)"));
    assert!(backend.load_sync("staging").unwrap().is_none());
    assert_eq!(backend.load_sync("dev").unwrap().unwrap(), moved);

    // Finished operations in the log move with the state.
    backend.wal_truncate_sync("dev").unwrap();
    let made = ResourceState::new("test_thing.b", "test", "id-b").unwrap();
    backend
        .wal_append_many_sync(
            "dev",
            &[
                WalRecord::Intent(intent(1, "test_thing.b")),
                WalRecord::Result(ResultRecord {
                    seq: 2,
                    intent_seq: 1,
                    outcome: Outcome::Created(made.clone()),
                    writer: None,
                    intent_writer: None,
                }),
            ],
        )
        .unwrap();
    brickform(d)
        .args(["env", "rename", "dev", "staging"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            "declares environments, and not \"staging\"",
        ));
    let staging = backend.load_sync("staging").unwrap().unwrap();
    assert_eq!(
        staging.get(&brickform_state::InstanceAddr::parse("test_thing.b").unwrap()),
        Some(&made)
    );
    assert_eq!(staging.lineage(), lineage);
    assert!(backend.wal_read_sync("staging").unwrap().is_empty());
    assert!(backend.wal_read_sync("dev").unwrap().is_empty());
}

#[test]
fn a_held_lock_stops_other_runs_and_is_force_unlocked_only_when_its_holder_is_gone_or_on_request() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    let backend = LocalBackend::new(d);
    let lock = backend
        .try_lock_sync("default", LockInfo::new("apply"))
        .unwrap();
    let id = lock.info().id.to_string();

    // With the default --lock-timeout of 0s the command gives up on its first attempt;
    // that is checked by its exit and message, not by timing it (a loaded machine makes
    // timings meaningless).
    let out = brickform(d)
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Error acquiring the state lock"),
        "{stderr}"
    );
    assert!(stderr.contains(&id), "the holder's id is shown: {stderr}");
    assert!(stderr.contains("Operation: apply"), "{stderr}");
    brickform(d)
        .args(["plan"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(&id));
    brickform(d)
        .args(["output", "--json"])
        .assert()
        .stdout("{}\n");

    brickform(d)
        .args(["force-unlock", "00000000-0000-0000-0000-000000000000"])
        .assert()
        .code(1);
    brickform(d).args(["plan"]).assert().code(1);
    // The holder (this test) still runs: removing its lock would let two runs write.
    brickform(d)
        .args(["force-unlock", &id])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "held by a run that is still going",
        ))
        .stderr(predicate::str::contains("--even-if-running"));
    brickform(d).args(["plan"]).assert().code(1);
    brickform(d)
        .args(["force-unlock", "--even-if-running", &id])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("successfully unlocked"));
    brickform(d)
        .args(["apply", "--auto-approve"])
        .assert()
        .code(0);
    brickform(d)
        .args(["output", "count", "--raw"])
        .assert()
        .stdout("3\n");
    drop(lock);
}

/// Every file under `dir` with its bytes, to show that a command wrote nothing.
fn tree_snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

/// The commands a `--help` text lists under `Commands:` (clap's own `help` left out).
fn listed_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A description wrapped onto the next line is indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

/// Every command and subcommand, by its words, with its `--help` text: found by walking
/// `--help` from the top, so a command added later is covered without being named here.
fn every_command(d: &Path) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        let help = brickform(d).args(&path).arg("--help").output().unwrap();
        let (text, stderr) = texts(&help);
        assert_eq!(help.status.code(), Some(0), "{path:?} --help: {stderr}");
        for c in listed_commands(&text) {
            let mut sub = path.clone();
            sub.push(c);
            todo.push(sub);
        }
        if !path.is_empty() {
            out.push((path, text));
        }
    }
    out.sort();
    out
}

/// Whether the first `Usage:` line of a help text names something outside brackets
/// (`<ADDRESS>`, `--to <ENV>`, a parent's `<COMMAND>`): what the command cannot run without.
fn needs_an_argument(help: &str) -> bool {
    let Some(usage) = help.lines().find_map(|l| l.strip_prefix("Usage: ")) else {
        return false;
    };
    let mut depth = 0i32;
    for ch in usage.chars() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            '<' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Every command and subcommand refuses an option it does not know, and every one that
/// needs an argument refuses to run without it, with exit 1, never 2 (what
/// `--detailed-exitcode` says of a plan with changes, which a CI script would act on), and
/// writes nothing; `--help` still exits 0.
#[test]
fn a_usage_error_exits_1_for_every_command() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let d = dir.path();
    // A state to change: a command that ran instead of refusing would write to it.
    brickform(d)
        .args(["apply", "--auto-approve"])
        .assert()
        .code(0);
    let before = tree_snapshot(d);
    let commands = every_command(d);
    let names: Vec<String> = commands.iter().map(|(p, _)| p.join(" ")).collect();
    for known in [
        "plan",
        "state list",
        "state migrate",
        "env rename",
        "local serve",
        "auth status",
        "flows import",
    ] {
        assert!(names.iter().any(|n| n == known), "{known} in {names:?}");
    }
    // Terraform's `workspace` is hidden from `--help` and refuses whatever it is given.
    let mut commands = commands;
    commands.push((vec!["workspace".to_string()], String::new()));
    let mut need = Vec::new();
    for (path, help) in &commands {
        let out = brickform(d)
            .args(path)
            .arg("--no-such-option")
            .write_stdin("")
            .output()
            .unwrap();
        let (_, stderr) = texts(&out);
        assert_eq!(out.status.code(), Some(1), "{path:?}: {stderr}");
        if path[0] != "workspace" {
            assert!(stderr.contains("--no-such-option"), "{path:?}: {stderr}");
        }
        if !needs_an_argument(help) {
            continue;
        }
        // The second kind of usage error: what it needs is missing.
        let out = brickform(d).args(path).write_stdin("").output().unwrap();
        let (_, stderr) = texts(&out);
        assert_eq!(out.status.code(), Some(1), "{path:?} alone: {stderr}");
        assert!(stderr.contains("Usage:"), "{path:?} alone: {stderr}");
        need.push(path.join(" "));
    }
    for known in [
        "state",
        "state mv",
        "env new",
        "import",
        "force-unlock",
        "flows import",
    ] {
        assert!(
            need.iter().any(|n| n == known),
            "{known} needs an argument: {need:?}"
        );
    }
    assert_eq!(tree_snapshot(d), before, "a refused command wrote nothing");
    // The case the CI workflows met: a Terraform flag brickform does not have, named in
    // full with what to do instead (not clap's "unexpected argument '-l'").
    let out = brickform(d)
        .args(["plan", "--detailed-exitcode", "-lock=false"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown option '-lock=false': brickform has no --lock")
            && stderr.contains("--lock-timeout"),
        "{stderr}"
    );
    assert!(!stderr.contains("'-l'"), "{stderr}");
    // The single-dash forms of options brickform has still work.
    brickform(d)
        .args([
            "plan",
            "-lock-timeout=1s",
            "-refresh=false",
            "-parallelism=3",
            "-input=false",
        ])
        .assert()
        .success();
}

/// Terraform's workspace commands say what brickform's environments do instead, and fail,
/// so a script that selected a workspace does not go on against the default state.
#[test]
fn workspace_commands_point_at_environments() {
    let dir = config(&[("main.bf.hcl", &outputs_config())]);
    let out = brickform(dir.path())
        .args(["workspace", "select", "prod"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("brickform has no workspaces")
            && stderr.contains("brickform --env prod plan"),
        "{stderr}"
    );
}

/// `fmt --recursive` (and Terraform's `-recursive`) formats the modules below the
/// configuration too, leaving hidden directories alone; `--check` lists them.
#[test]
fn fmt_recursive_formats_the_directories_below() {
    let messy = "variable \"a\" {\n  default=1\n}\n";
    let tidy = "variable \"a\" {\n  default = 1\n}\n";
    let dir = config(&[("main.bf.hcl", messy)]);
    let d = dir.path();
    for sub in ["modules/x", ".brickform/keep", "src"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    std::fs::write(d.join("modules/x/main.bf.hcl"), messy).unwrap();
    std::fs::write(d.join(".brickform/keep/main.bf.hcl"), messy).unwrap();
    std::fs::write(d.join("src/etl.py"), "print( 1 )\n").unwrap();
    brickform(d)
        .args(["fmt", "--check", "-recursive"])
        .assert()
        .code(3)
        .stdout("main.bf.hcl\nmodules/x/main.bf.hcl\n");
    brickform(d).args(["fmt"]).assert().success();
    assert_eq!(
        std::fs::read_to_string(d.join("modules/x/main.bf.hcl")).unwrap(),
        messy,
        "without --recursive the modules are left alone"
    );
    brickform(d).args(["fmt", "--recursive"]).assert().success();
    assert_eq!(
        std::fs::read_to_string(d.join("modules/x/main.bf.hcl")).unwrap(),
        tidy
    );
    assert_eq!(
        std::fs::read_to_string(d.join(".brickform/keep/main.bf.hcl")).unwrap(),
        messy
    );
    assert_eq!(
        std::fs::read_to_string(d.join("src/etl.py")).unwrap(),
        "print( 1 )\n"
    );
}

/// A value left as a template's placeholder is a warning at the attribute that holds it,
/// naming only the placeholder (the value around it may be sensitive), from a literal or
/// through a variable.
#[test]
fn validate_warns_of_placeholders_never_filled_in() {
    let dir = config(&[(
        "main.bf.hcl",
        r#"provider "databricks" {}
variable "owner" {
  default = "CHANGE_ME"
}
resource "databricks_schema" "s" {
  catalog_name = "<your-catalog>"
  name         = "landing"
  owner        = var.owner
}
"#,
    )]);
    let out = brickform(dir.path())
        .args(["validate", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["warning_count"], 2, "{j}");
    let warnings = j["diagnostics"].as_array().unwrap();
    let catalog = warnings
        .iter()
        .find(|d| {
            d["summary"]
                .as_str()
                .unwrap()
                .contains("\"<your-catalog>\"")
        })
        .unwrap_or_else(|| panic!("{j}"));
    assert!(
        catalog["summary"]
            .as_str()
            .unwrap()
            .starts_with("databricks_schema.s: catalog_name holds"),
        "{catalog}"
    );
    assert_eq!(catalog["range"]["start"]["line"], 6, "{catalog}");
    assert!(
        warnings.iter().any(|d| d["summary"]
            .as_str()
            .unwrap()
            .contains("owner holds \"CHANGE_ME\"")),
        "{j}"
    );
}
