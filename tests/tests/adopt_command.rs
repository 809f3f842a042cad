//! `brickform adopt` over what each example makes: the examples are applied in one
//! directory, their workspace handed to a second directory that has no state and no
//! configuration but a provider block, and everything there is adopted by rule. The plan of
//! what adopt wrote imports every object and changes nothing else; after the apply the plan
//! is empty; destroy removes every adopted object and leaves only what adopt does not take.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{example_copy, local_dump, objects, run, run_ok};
use std::path::Path;

/// A directory whose local workspace is `maker`'s, with no state of its own.
fn adopter_of(maker: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = maker.join(".brickform/local");
    let to = dir.path().join(".brickform/local");
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "workspace.lock" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    std::fs::write(
        dir.path().join("main.bf.hcl"),
        "provider \"databricks\" {\n  host = \"local\"\n}\n",
    )
    .unwrap();
    dir
}

/// The number `adopt` says it adopts.
fn adopted_count(out: &str) -> usize {
    out.lines()
        .find_map(|l| l.strip_prefix("Adopting ")?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count in\n{out}"))
}

#[test]
fn what_any_example_made_is_adopted_planned_as_imports_only_and_destroyed() {
    for example in ["quickstart", "medallion", "flows-from-csv", "lfc-demo"] {
        let maker = example_copy(example);
        run_ok(maker.path(), &["apply", "--local", "--auto-approve"], &[]);
        let adopter = adopter_of(maker.path());
        let d = adopter.path();
        let before = objects(&local_dump(d));

        // A rule is needed; what adopt wrote is never overwritten.
        let (code, _, err) = run(d, &["adopt"], &[]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("say what to adopt"), "{err}");
        let out = run_ok(d, &["adopt", "--creator", "me"], &[]);
        let (code, _, err) = run(d, &["adopt", "--creator", "me"], &[]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("adopted.bf.hcl exists already"), "{err}");
        let n = adopted_count(&out);
        assert!(n >= 4, "{example}: {out}");
        let secrets: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim().strip_prefix("var."))
            .collect();
        let mut vars: Vec<String> = Vec::new();
        for s in &secrets {
            vars.push("--var".into());
            vars.push(format!("{s}={{host=\"h\"}}"));
        }
        let with_vars = |args: &[&str]| -> Vec<String> {
            args.iter()
                .map(|a| a.to_string())
                .chain(vars.iter().cloned())
                .collect()
        };
        let plan_args = with_vars(&["plan", "-no-color"]);
        let plan_args: Vec<&str> = plan_args.iter().map(String::as_str).collect();
        let plan = run_ok(d, &plan_args, &[]);
        // A write-only value (a connection's password) is written once: nothing can show the
        // service holds it.
        let changes = secrets.len();
        assert!(
            plan.contains(&format!(
                "Plan: {n} to import, 0 to add, {changes} to change, 0 to destroy."
            )),
            "{example}:\n{plan}"
        );
        let apply_args = with_vars(&["apply", "--auto-approve"]);
        let apply_args: Vec<&str> = apply_args.iter().map(String::as_str).collect();
        let out = run_ok(d, &apply_args, &[]);
        assert!(
            out.contains(&format!("{n} imported, 0 added")),
            "{example}:\n{out}"
        );
        assert_eq!(objects(&local_dump(d)), before, "{example}: nothing made");
        let mut again = with_vars(&["plan", "-detailed-exitcode"]);
        let again: Vec<&str> = again.iter_mut().map(|s| s.as_str()).collect();
        let (code, out, err) = run(d, &again, &[]);
        assert_eq!(
            code, 0,
            "{example}: the plan after apply is not empty\n{out}{err}"
        );

        let destroy_args = with_vars(&["destroy", "--auto-approve"]);
        let destroy_args: Vec<&str> = destroy_args.iter().map(String::as_str).collect();
        let out = run_ok(d, &destroy_args, &[]);
        assert!(
            out.contains(&format!("{n} destroyed, 0 left behind")),
            "{example}:\n{out}"
        );
        let left = objects(&local_dump(d));
        assert!(
            left.iter()
                .all(|o| o.starts_with("scope:") || o.starts_with("secret:")),
            "{example}: left behind {left:?}"
        );
        let dump = local_dump(d);
        for k in ["jobs", "pipelines"] {
            assert_eq!(
                dump[k].as_object().map_or(0, |m| m.len()),
                0,
                "{example}: {k} left: {}",
                dump[k]
            );
        }
    }
}
