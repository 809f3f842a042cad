//! The examples of the Terraform Databricks provider's documentation for the kinds and data
//! sources brickform has (tests/fixtures/provider-docs, its README says where they come from)
//! work as written: each one `tests/fixtures/provider-docs/manifest.json` classifies as
//! `passes` or `passes-with-stand-ins` is converted with `brickform convert` (the renames of
//! docs/from-terraform.md, nothing left out), validates, applies to the local workspace,
//! re-plans empty and destroys, leaving nothing behind. The manifest must classify every
//! fixture, and only fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{local_dump, objects, run};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const EXPECTS: &[&str] = &["passes", "passes-with-stand-ins", "not-applicable", "fails"];
/// The fields that add stand-ins beside an example.
const STAND_INS: &[&str] = &[
    "stand_ins",
    "setup",
    "literals",
    "files",
    "files_base64",
    "groups",
    "service_principals",
];
/// The directories of an empty local workspace.
const EMPTY_WORKSPACE_DIRS: &[&str] = &["/Shared", "/Users", "/Users/local-user@brickform.local"];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/provider-docs")
}

fn manifest() -> Value {
    let path = fixtures_dir().join("manifest.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The examples' entries, by fixture name (`job-3` for `job-3.tf`).
fn entries(m: &Value) -> Vec<(String, Value)> {
    m["examples"]
        .as_object()
        .expect("manifest.json has an `examples` object")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The `*.tf` files of the fixture folder, without the extension.
fn fixture_names() -> BTreeSet<String> {
    std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".tf").map(String::from)
        })
        .collect()
}

fn example_text(name: &str) -> String {
    std::fs::read_to_string(fixtures_dir().join(format!("{name}.tf"))).unwrap()
}

/// A manifest field that holds HCL, written as an array of lines.
fn hcl(entry: &Value, field: &str) -> Option<String> {
    entry.get(field).map(|v| {
        let lines: Vec<&str> = v
            .as_array()
            .unwrap_or_else(|| panic!("`{field}` is an array of lines"))
            .iter()
            .map(|l| l.as_str().expect("a line is a string"))
            .collect();
        format!("{}\n", lines.join("\n"))
    })
}

/// `(name, text)` pairs of a manifest field that is an object of strings.
fn string_map(entry: &Value, field: &str) -> Vec<(String, String)> {
    entry
        .get(field)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_manifest_classifies_every_example_and_only_examples() {
    let m = manifest();
    let listed: BTreeSet<String> = entries(&m).into_iter().map(|(k, _)| k).collect();
    let files = fixture_names();
    let unclassified: Vec<&String> = files.difference(&listed).collect();
    let missing: Vec<&String> = listed.difference(&files).collect();
    assert!(
        unclassified.is_empty(),
        "examples not in tests/fixtures/provider-docs/manifest.json (classify them): {unclassified:?}"
    );
    assert!(
        missing.is_empty(),
        "manifest.json entries without a fixture file: {missing:?}"
    );

    // What brickform has: a literal may stand in only for a reference to something else.
    let dir = tempfile::tempdir().unwrap();
    let schema: Value =
        serde_json::from_str(&common::run_ok(dir.path(), &["schema"], &[])).unwrap();
    let has = |section: &str, ty: &str| schema[section].get(ty).is_some();

    let mut problems = Vec::new();
    for (name, e) in entries(&m) {
        let expect = e["expect"].as_str().unwrap_or("");
        if !EXPECTS.contains(&expect) {
            problems.push(format!(
                "{name}: expect {:?} is not one of {EXPECTS:?}",
                e["expect"]
            ));
            continue;
        }
        let stand_ins: Vec<&&str> = STAND_INS.iter().filter(|f| e.get(**f).is_some()).collect();
        match expect {
            "passes-with-stand-ins" if stand_ins.is_empty() => problems.push(format!(
                "{name}: passes-with-stand-ins but has no stand-ins"
            )),
            "passes-with-stand-ins" => {}
            _ if !stand_ins.is_empty() => {
                problems.push(format!("{name}: {expect} with stand-ins {stand_ins:?}"))
            }
            _ => {}
        }
        let reason = e.get("reason").and_then(Value::as_str).unwrap_or("");
        if matches!(expect, "not-applicable" | "fails") && reason.trim().is_empty() {
            problems.push(format!("{name}: {expect} needs a `reason`"));
        }
        let text = example_text(&name);
        for (from, to) in string_map(&e, "literals") {
            let parts: Vec<&str> = from.split('.').collect();
            let (section, ty) = match parts.as_slice() {
                ["data", ty, _, ..] => ("data_sources", *ty),
                [ty, _, ..] => ("resources", *ty),
                _ => ("", ""),
            };
            if section.is_empty() || has(section, ty) {
                problems.push(format!(
                    "{name}: literal for {from:?}: only references to kinds and data sources brickform does not have may be replaced"
                ));
            }
            if !text.contains(&from) {
                problems.push(format!("{name}: the example does not refer to {from:?}"));
            }
            let literal = to.starts_with('"') && to.ends_with('"') && to.len() >= 2
                || to.parse::<f64>().is_ok()
                || to == "true"
                || to == "false";
            if !literal {
                problems.push(format!("{name}: {to:?} (for {from}) is not a literal"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Runs `brickform ARGS` in `dir`; the error names the example and shows the output.
fn step(name: &str, dir: &Path, args: &[&str], want: i32) -> Result<String, String> {
    let (code, out, err) = run(dir, args, &[]);
    if code == want {
        Ok(out)
    } else {
        Err(format!(
            "{name}.tf: `brickform {}` exited {code} (expected {want})\nstdout:\n{out}\nstderr:\n{err}",
            args.join(" ")
        ))
    }
}

/// What the local workspace still holds after destroy: every object [`objects`] lists, jobs,
/// pipelines, tables, and directories but those of an empty workspace and the parents made
/// for something the apply put under them (the provider leaves those too).
fn leftovers(applied: &Value, after: &Value) -> Vec<String> {
    let mut left = objects(after);
    for kind in ["jobs", "pipelines", "tables"] {
        if let Some(m) = after[kind].as_object() {
            left.extend(m.keys().map(|k| format!("{kind}:{k}")));
        }
    }
    for (key, dir_marker) in [("workspace", "object_type"), ("files", "kind")] {
        let is_dir = |o: &Value| {
            o[dir_marker]
                .as_str()
                .is_some_and(|t| t.eq_ignore_ascii_case("directory"))
        };
        let made: Vec<&String> = applied[key]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(_, o)| !is_dir(o))
                    .map(|(p, _)| p)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(m) = after[key].as_object() {
            for (p, o) in m {
                let parent = made.iter().any(|x| x.starts_with(&format!("{p}/")));
                if is_dir(o) && !EMPTY_WORKSPACE_DIRS.contains(&p.as_str()) && !parent {
                    left.push(format!("{key} directory:{p}"));
                }
            }
        }
    }
    left
}

/// Converts, validates, applies, re-plans and destroys one example with its stand-ins.
fn check_example(name: &str, entry: &Value) -> Result<(), String> {
    use base64::Engine as _;
    let text = example_text(name);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let tf = root.join("tf");
    std::fs::create_dir(&tf).unwrap();
    let mut main = text.clone();
    for (from, to) in string_map(entry, "literals") {
        main = main.replace(&from, &to);
    }
    std::fs::write(tf.join("main.tf"), main).unwrap();
    if !text.contains("provider \"databricks\"") {
        std::fs::write(
            tf.join("provider.tf"),
            "provider \"databricks\" {\n  host = \"local\"\n}\n",
        )
        .unwrap();
    }
    if let Some(s) = hcl(entry, "stand_ins") {
        std::fs::write(tf.join("stand_ins.tf"), s).unwrap();
    }
    let setup = hcl(entry, "setup");
    if let Some(s) = &setup {
        std::fs::write(tf.join("setup.tf"), s).unwrap();
    }
    for (file, content) in string_map(entry, "files") {
        std::fs::write(tf.join(file), content).unwrap();
    }
    for (file, content) in string_map(entry, "files_base64") {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(content)
            .unwrap();
        std::fs::write(tf.join(file), bytes).unwrap();
    }

    let out = step(name, root, &["convert", "tf", "--out", "bf"], 0)?;
    if !out.contains("Everything was converted.") {
        return Err(format!(
            "{name}.tf: `brickform convert` left something out\n{out}"
        ));
    }
    let bf = root.join("bf");
    if let Some(groups) = entry["groups"].as_array() {
        // Account groups exist before any configuration names them.
        let serve = common::Serve::start_local(&bf);
        for g in groups {
            serve.ok(
                "POST",
                "/api/2.0/preview/scim/v2/Groups",
                Some(serde_json::json!({ "displayName": g })),
            );
        }
    }
    if let Some(sps) = entry["service_principals"].as_array() {
        // Service principals exist before a job names one to run as.
        let serve = common::Serve::start_local(&bf);
        for sp in sps {
            serve.service_principal(sp.as_str().unwrap());
        }
    }
    if setup.is_some() {
        // What the example reads must exist before it is planned: apply the setup alone.
        let held = root.join("held");
        std::fs::create_dir(&held).unwrap();
        let away = ["main.bf.hcl", "stand_ins.bf.hcl"];
        for f in away {
            if bf.join(f).exists() {
                std::fs::rename(bf.join(f), held.join(f)).unwrap();
            }
        }
        step(name, &bf, &["apply", "--auto-approve"], 0)?;
        for f in away {
            if held.join(f).exists() {
                std::fs::rename(held.join(f), bf.join(f)).unwrap();
            }
        }
    }
    step(name, &bf, &["validate"], 0)?;
    step(name, &bf, &["apply", "--auto-approve"], 0)?;
    step(name, &bf, &["plan", "--detailed-exitcode"], 0)
        .map_err(|e| format!("{e}\n(the plan after apply is not empty)"))?;
    let applied = local_dump(&bf);
    step(name, &bf, &["destroy", "--auto-approve"], 0)?;
    let left = leftovers(&applied, &local_dump(&bf));
    if !left.is_empty() {
        return Err(format!(
            "{name}.tf: the local workspace still holds after destroy: {left:?}"
        ));
    }
    Ok(())
}

#[test]
fn every_applicable_example_applies_replans_empty_and_destroys() {
    let all = entries(&manifest());
    let runnable: Vec<&(String, Value)> = all
        .iter()
        .filter(|(_, e)| {
            matches!(
                e["expect"].as_str(),
                Some("passes" | "passes-with-stand-ins")
            )
        })
        .collect();
    for (name, e) in &all {
        if e["expect"] == "fails" {
            eprintln!("not run, known to fail: {name}: {}", e["reason"]);
        }
    }
    assert!(
        runnable.len() >= 20,
        "only {} examples to run",
        runnable.len()
    );
    common::bin(); // built once, before the threads start
    let threads = 4;
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let mine: Vec<&(String, Value)> =
                    runnable.iter().skip(t).step_by(threads).copied().collect();
                s.spawn(move || {
                    mine.into_iter()
                        .filter_map(|(name, e)| check_example(name, e).err())
                        .collect::<Vec<String>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n\n{}",
        failures.len(),
        runnable.len(),
        failures.join("\n\n")
    );
}
