//! The Terraform configurations written for this project (tests/fixtures/terraform-configs,
//! one per directory; its README says what they are) go through the whole life cycle: each
//! is converted with `brickform convert` (the renames of docs/from-terraform.md, nothing left
//! out), validates, plans something to do, applies to the local workspace, re-plans empty
//! and destroys, leaving nothing behind. `tests/fixtures/terraform-configs/manifest.json`
//! must describe every configuration, and only configurations.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{local_dump, objects, run};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The fields a manifest entry may have.
const FIELDS: &[&str] = &["covers", "existing"];
/// The directories of an empty local workspace.
const EMPTY_WORKSPACE_DIRS: &[&str] = &["/Shared", "/Users", "/Users/local-user@brickform.local"];
/// The tables of a local workspace dump that hold objects a configuration makes, beyond
/// those [`objects`] lists: each must be empty after destroy.
const OBJECT_TABLES: &[&str] = &[
    "jobs",
    "pipelines",
    "tables",
    "clusters",
    "cluster_policies",
    "instance_pools",
    "warehouses",
    "sql_objects",
];
/// The tables a configuration changes entries of that the workspace starts with (the
/// built-in groups' members and entitlements, grants on the catalog main) as well as adds
/// to: after destroy each must be as it was before the apply.
const RESTORED_TABLES: &[&str] = &["principals", "scim_attrs", "grants", "permissions"];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/terraform-configs")
}

fn manifest() -> Value {
    let path = fixtures_dir().join("manifest.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The configurations' entries, by directory name.
fn entries(m: &Value) -> Vec<(String, Value)> {
    m["configurations"]
        .as_object()
        .expect("manifest.json has a `configurations` object")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The configuration directories of the fixture folder.
fn configuration_names() -> BTreeSet<String> {
    std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
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

#[test]
fn the_manifest_describes_every_configuration_and_only_configurations() {
    let m = manifest();
    let listed: BTreeSet<String> = entries(&m).into_iter().map(|(k, _)| k).collect();
    let dirs = configuration_names();
    let undescribed: Vec<&String> = dirs.difference(&listed).collect();
    let missing: Vec<&String> = listed.difference(&dirs).collect();
    assert!(
        undescribed.is_empty(),
        "configurations not in tests/fixtures/terraform-configs/manifest.json (describe them): {undescribed:?}"
    );
    assert!(
        missing.is_empty(),
        "manifest.json entries without a configuration directory: {missing:?}"
    );

    let mut problems = Vec::new();
    for (name, e) in entries(&m) {
        let Some(fields) = e.as_object() else {
            problems.push(format!("{name}: not an object"));
            continue;
        };
        for f in fields.keys() {
            if !FIELDS.contains(&f.as_str()) {
                problems.push(format!("{name}: unknown field {f:?} (one of {FIELDS:?})"));
            }
        }
        if e["covers"].as_str().is_none_or(|c| c.trim().is_empty()) {
            problems.push(format!(
                "{name}: `covers` says what the configuration tests"
            ));
        }
        let tf = std::fs::read_dir(fixtures_dir().join(&name))
            .unwrap()
            .filter(|f| {
                f.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "tf")
            })
            .count();
        if tf == 0 {
            problems.push(format!("{name}: no .tf file"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Runs `brickform ARGS` in `dir`; the error names the configuration and shows the output.
fn step(name: &str, dir: &Path, args: &[&str], want: i32) -> Result<String, String> {
    let (code, out, err) = run(dir, args, &[]);
    if code == want {
        Ok(out)
    } else {
        Err(format!(
            "{name}: `brickform {}` exited {code} (expected {want})\nstdout:\n{out}\nstderr:\n{err}",
            args.join(" ")
        ))
    }
}

/// The keys of `table` whose entries differ between two dumps.
fn changed(table: &str, before: &Value, after: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let b = before[table].as_object().unwrap_or(&empty);
    let a = after[table].as_object().unwrap_or(&empty);
    let keys: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
    keys.into_iter()
        .filter(|k| b.get(*k) != a.get(*k))
        .map(|k| format!("{table}:{k}"))
        .collect()
}

/// What the local workspace still holds after destroy: every object [`objects`] lists, those
/// of [`OBJECT_TABLES`], what differs in [`RESTORED_TABLES`] from before the apply, and
/// directories but those of an empty workspace and the parents made for something the apply
/// put under them (the provider leaves those too).
fn leftovers(initial: &Value, applied: &Value, after: &Value) -> Vec<String> {
    let mut left = objects(after);
    // A deleted warehouse reads DELETING for a while, and a destroyed query, alert or
    // dashboard is in the trash: both are gone, as the service answers them.
    let gone = |o: &Value| {
        matches!(o["state"].as_str(), Some("DELETING" | "DELETED"))
            || o["lifecycle_state"] == "TRASHED"
    };
    for kind in OBJECT_TABLES {
        if let Some(m) = after[kind].as_object() {
            left.extend(
                m.iter()
                    .filter(|(_, o)| !gone(o))
                    .map(|(k, _)| format!("{kind}:{k}")),
            );
        }
    }
    for table in RESTORED_TABLES {
        left.extend(changed(table, initial, after));
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

const LOCAL_PROVIDER: &str = "provider \"databricks\" {\n  host = \"local\"\n}\n";

/// Converts, validates, applies, re-plans and destroys one configuration.
fn check_configuration(name: &str, entry: &Value) -> Result<(), String> {
    let tf = common::tree_copy(&fixtures_dir().join(name));
    std::fs::write(tf.path().join("provider.tf"), LOCAL_PROVIDER).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let bf = root.join("bf");

    let out = step(
        name,
        tf.path(),
        &["convert", ".", "--out", &bf.to_string_lossy()],
        0,
    )?;
    if !out.contains("Everything was converted.") {
        return Err(format!(
            "{name}: `brickform convert` left something out\n{out}"
        ));
    }
    if let Some(existing) = hcl(entry, "existing") {
        // Objects made outside this configuration (for its import blocks): applied in a
        // directory of their own, whose local workspace then becomes this one's, without
        // the state that knows them.
        let pre = root.join("existing");
        std::fs::create_dir(&pre).unwrap();
        std::fs::write(pre.join("main.bf.hcl"), existing).unwrap();
        std::fs::write(pre.join("provider.bf.hcl"), LOCAL_PROVIDER).unwrap();
        step(name, &pre, &["apply", "--auto-approve"], 0)?;
        std::fs::create_dir_all(bf.join(".brickform")).unwrap();
        std::fs::rename(pre.join(".brickform/local"), bf.join(".brickform/local")).unwrap();
    }
    step(name, &bf, &["validate"], 0)?;
    // Something to do (exit 2); this first plan also makes the local workspace when new.
    step(name, &bf, &["plan", "--detailed-exitcode"], 2)
        .map_err(|e| format!("{e}\n(the plan before apply has nothing to do)"))?;
    let initial = local_dump(&bf);
    step(name, &bf, &["apply", "--auto-approve"], 0)?;
    step(name, &bf, &["plan", "--detailed-exitcode"], 0)
        .map_err(|e| format!("{e}\n(the plan after apply is not empty)"))?;
    let applied = local_dump(&bf);
    step(name, &bf, &["destroy", "--auto-approve"], 0)?;
    let left = leftovers(&initial, &applied, &local_dump(&bf));
    if !left.is_empty() {
        return Err(format!(
            "{name}: the local workspace still holds after destroy: {left:?}"
        ));
    }
    Ok(())
}

#[test]
fn every_configuration_applies_replans_empty_and_destroys() {
    let all = entries(&manifest());
    assert!(all.len() >= 10, "only {} configurations to run", all.len());
    common::bin(); // built once, before the threads start
    let threads = 4;
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let mine: Vec<&(String, Value)> = all.iter().skip(t).step_by(threads).collect();
                s.spawn(move || {
                    mine.into_iter()
                        .filter_map(|(name, e)| check_configuration(name, e).err())
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
        "{} of {} configurations failed:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
}
