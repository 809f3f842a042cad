//! States written by an earlier brickform plan, apply and destroy with this one as with its
//! own: no upgrade step, no spurious change.
//!
//! `tests/fixtures/state-from-41bb2e4/` holds two examples as they were at commit 41bb2e4
//! (before plans measured changes against what was sent and drift against what the service
//! answered), each applied to its local workspace by the brickform of that commit: `saved/`
//! is the `.brickform` directory that apply left (the state and the local workspace).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{run, tree_copy};
use std::path::Path;

/// The fixture `name`, with its saved `.brickform` directory in place.
fn restored(name: &str) -> tempfile::TempDir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/state-from-41bb2e4")
        .join(name);
    let dir = tree_copy(&from);
    std::fs::rename(dir.path().join("saved"), dir.path().join(".brickform")).unwrap();
    dir
}

#[test]
fn a_state_an_earlier_brickform_wrote_plans_no_change_and_destroys_everything() {
    for (name, state_file, objects) in [
        ("lfc-demo", "default.json", 20),
        ("medallion", "dev.json", 15),
    ] {
        let dir = restored(name);
        let d = dir.path();
        let state_path = d.join(".brickform/state").join(state_file);
        let before: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&state_path).unwrap()).unwrap();

        let (code, out, err) = run(
            d,
            &["plan", "--local", "--detailed-exitcode", "-no-color"],
            &[],
        );
        assert_eq!(
            code, 0,
            "{name}: the first plan changes nothing\n{out}{err}"
        );
        assert!(out.contains("No changes."), "{name}\n{out}");

        // An apply finds nothing to do, and what it saves keeps every object and the format.
        let (code, out, err) = run(d, &["apply", "--local", "--auto-approve", "-no-color"], &[]);
        assert_eq!(code, 0, "{name}\n{out}{err}");
        assert!(out.contains("No changes."), "{name}\n{out}");
        let after: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&state_path).unwrap()).unwrap();
        assert_eq!(after["version"], before["version"], "{name}");
        assert_eq!(after["lineage"], before["lineage"], "{name}");
        let ids = |s: &serde_json::Value| -> Vec<(String, String)> {
            s["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r["address"].as_str().unwrap().to_string(),
                        r["id"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        assert_eq!(ids(&after), ids(&before), "{name}");

        let (code, out, err) = run(
            d,
            &["destroy", "--local", "--auto-approve", "-no-color"],
            &[],
        );
        assert_eq!(code, 0, "{name}\n{out}{err}");
        assert!(
            out.contains(&format!("{objects} destroyed, 0 left behind")),
            "{name}\n{out}"
        );
    }
}
