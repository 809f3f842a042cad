//! `brickform adopt` over what each example makes: the examples are applied in one
//! directory, their workspace handed to a second directory that has no state and no
//! configuration but a provider block, and everything there is adopted by rule. The plan of
//! what adopt wrote imports every object and changes nothing else; after the apply the plan
//! is empty; destroy removes every adopted object and leaves only what adopt does not take.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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
        // What the example made carries the ownership tag of the maker's state: taken from
        // it only when asked.
        let out = run_ok(d, &["adopt", "--creator", "me"], &[]);
        if example != "quickstart" {
            assert!(
                out.contains("owned by another brickform state, left out: databricks_job"),
                "{example}: {out}"
            );
            std::fs::remove_file(d.join("adopted.bf.hcl")).unwrap();
            std::fs::remove_dir_all(d.join("adopted")).ok();
        }
        let out = match example {
            "quickstart" => out,
            _ => run_ok(
                d,
                &["adopt", "--creator", "me", "--take-from-other-states"],
                &[],
            ),
        };
        let (code, _, err) = run(d, &["adopt", "--creator", "me"], &[]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("adopted.bf.hcl exists already"), "{err}");
        let n = adopted_count(&out);
        assert!(n >= 4, "{example}: {out}");
        if example == "flows-from-csv" {
            // A path in an adopted volume is written below the volume's path.
            let text = std::fs::read_to_string(d.join("adopted.bf.hcl")).unwrap();
            assert!(
                text.contains(
                    "onboarding_file_path      = \"${databricks_volume.sdp_meta.volume_path}/conf/onboarding.json\""
                ),
                "{text}"
            );
        }
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

#[test]
fn adopted_objects_refer_to_what_the_configuration_manages() {
    use common::{SERVED_PROVIDER, Serve, config, served, served_ok};
    let team_config = format!(
        "{SERVED_PROVIDER}\nresource \"databricks_catalog\" \"c\" {{\n  name          = \"team_cat\"\n  force_destroy = true\n}}\n"
    );
    let team = config(&[("main.bf.hcl", &team_config)]);
    let t = team.path();
    let serve = Serve::start(&t.join(".brickform/local"), &[]);
    served_ok(t, &serve, &["apply", "--auto-approve"]);

    // A script adds a schema and a volume to the team's catalog (played by a configuration
    // whose state is then thrown away).
    let script_config = format!(
        r#"{SERVED_PROVIDER}
resource "databricks_schema" "s" {{
  catalog_name = "team_cat"
  name         = "script_raw"
}}
resource "databricks_volume" "v" {{
  catalog_name = "team_cat"
  schema_name  = databricks_schema.s.name
  name         = "script_landing"
  volume_type  = "MANAGED"
}}
"#
    );
    let script = config(&[("main.bf.hcl", &script_config)]);
    served_ok(script.path(), &serve, &["apply", "--auto-approve"]);
    std::fs::remove_dir_all(script.path().join(".brickform/state")).unwrap();

    let out = served_ok(t, &serve, &["adopt", "--prefix", "script_"]);
    assert!(out.contains("Adopting 2 object(s):"), "{out}");
    let text = std::fs::read_to_string(t.join("adopted.bf.hcl")).unwrap();
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "resource \"databricks_schema\" \"script_raw\" { catalog_name = databricks_catalog.c.name",
        "catalog_name = databricks_catalog.c.name schema_name = databricks_schema.script_raw.name",
    ] {
        assert!(flat.contains(want), "{want}\n{text}");
    }
    let plan = served_ok(t, &serve, &["plan", "-no-color"]);
    assert!(
        plan.contains("Plan: 2 to import, 0 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    served_ok(t, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = served(t, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}{err}");
    // Adopted again: nothing is left to adopt, and what is managed is said so.
    std::fs::rename(t.join("adopted.bf.hcl"), t.join("kept.bf.hcl")).unwrap();
    let out = served_ok(t, &serve, &["adopt", "--prefix", "script_"]);
    assert!(
        out.contains("managed already, left out: databricks_schema"),
        "{out}"
    );
    assert!(out.contains("Nothing to adopt"), "{out}");
    assert!(!t.join("adopted.bf.hcl").exists());

    let out = served_ok(t, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("3 destroyed, 0 left behind"), "{out}");
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

#[test]
fn bad_rules_and_outputs_write_nothing_and_one_object_is_never_imported_twice() {
    let maker = example_copy("quickstart");
    run_ok(maker.path(), &["apply", "--local", "--auto-approve"], &[]);
    let adopter = adopter_of(maker.path());
    let d = adopter.path();
    // No provider block: `--local` is enough, as for plan.
    std::fs::remove_file(d.join("main.bf.hcl")).unwrap();
    let nothing_written = |what: &str| {
        let names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".brickform")
            .collect();
        assert!(names.is_empty(), "{what}: wrote {names:?}");
    };
    for (args, says) in [
        (
            &["--catalog", "quickstart_dve"][..],
            // `main` is the one a new workspace starts with.
            "there is no catalog \"quickstart_dve\" in the workspace (it has main, quickstart_dev)",
        ),
        (&["--prefix", ""][..], "--prefix is empty"),
        (
            &["--catalog", "quickstart_dev", "--out", "sub/x.bf.hcl"][..],
            "give a file name ending in .bf.hcl, with no folder",
        ),
        (
            &["--catalog", "quickstart_dev", "--out", "x.hcl"][..],
            "give a file name ending in .bf.hcl",
        ),
        (
            &["--catalog", "quickstart_dev", "--out", "../x.bf.hcl"][..],
            "with no folder",
        ),
    ] {
        let args: Vec<&str> = ["adopt", "--local"].iter().chain(args).copied().collect();
        let (code, out, err) = run(d, &args, &[]);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        nothing_written(&format!("{args:?}"));
    }

    // A rule given twice chooses each object once; the file is in fmt's form.
    let out = run_ok(
        d,
        &[
            "adopt",
            "--local",
            "--catalog",
            "quickstart_dev",
            "--catalog",
            "QUICKSTART_DEV",
        ],
        &[],
    );
    let n = adopted_count(&out);
    assert_eq!(n, 4, "the catalog, two schemas and the volume: {out}");
    run_ok(d, &["fmt", "--check"], &[]);

    // Adopted again before the first is applied: the plan refuses to import one object at
    // two addresses.
    run_ok(
        d,
        &[
            "adopt",
            "--local",
            "--catalog",
            "quickstart_dev",
            "--out",
            "again.bf.hcl",
        ],
        &[],
    );
    let (code, out, err) = run(d, &["plan", "--local", "-no-color"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "databricks_catalog.quickstart_dev and databricks_catalog.quickstart_dev_2 would both import databricks_catalog quickstart_dev"
        ),
        "{err}"
    );
    std::fs::remove_file(d.join("again.bf.hcl")).unwrap();
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);

    // An import of what the state manages already, at another address, is refused too.
    std::fs::write(
        d.join("dup.bf.hcl"),
        "import {\n  to = databricks_schema.copy\n  id = \"quickstart_dev.raw\"\n}\nresource \"databricks_schema\" \"copy\" {\n  catalog_name = \"quickstart_dev\"\n  name         = \"raw\"\n}\n",
    )
    .unwrap();
    let (code, out, err) = run(d, &["plan", "--local", "-no-color"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("databricks_schema.copy would import databricks_schema quickstart_dev.raw, which this state manages already as databricks_schema.raw"),
        "{err}"
    );
    std::fs::remove_file(d.join("dup.bf.hcl")).unwrap();
    // The same object under two spellings of its id: a workspace path with its `/Workspace`
    // mount prefix is the notebook without it, in one plan and against the state.
    let home = "/Users/local-user@brickform.local/quickstart/hello";
    let notebook = |name: &str, id: &str, import: bool| {
        let block = format!(
            "resource \"databricks_notebook\" \"{name}\" {{\n  path   = \"{id}\"\n  source = \"copy.py\"\n}}\n"
        );
        match import {
            true => format!(
                "import {{\n  to = databricks_notebook.{name}\n  id = \"{id}\"\n}}\n{block}"
            ),
            false => block,
        }
    };
    std::fs::write(d.join("copy.py"), "print('hello')\n").unwrap();
    std::fs::write(d.join("nb.bf.hcl"), notebook("plain", home, true)).unwrap();
    let mounted = format!("/Workspace{home}");
    std::fs::write(d.join("dup.bf.hcl"), notebook("mounted", &mounted, true)).unwrap();
    let (code, out, err) = run(d, &["plan", "--local", "-no-color"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "databricks_notebook.mounted and databricks_notebook.plain would both import databricks_notebook"
        ),
        "{err}"
    );
    std::fs::remove_file(d.join("dup.bf.hcl")).unwrap();
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    std::fs::write(d.join("nb.bf.hcl"), notebook("plain", home, false)).unwrap();
    std::fs::write(d.join("dup.bf.hcl"), notebook("mounted", &mounted, true)).unwrap();
    let (code, out, err) = run(d, &["plan", "--local", "-no-color"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("databricks_notebook.mounted would import databricks_notebook {mounted}, which this state manages already as databricks_notebook.plain")),
        "{err}"
    );
    std::fs::remove_file(d.join("dup.bf.hcl")).unwrap();

    // After a destroy, the import blocks name nothing: one error each, none that follows
    // from them.
    run_ok(d, &["destroy", "--local", "--auto-approve"], &[]);
    let (code, _, err) = run(d, &["plan", "--local", "-no-color"], &[]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.matches("Cannot import non-existent remote object")
            .count(),
        4,
        "{err}"
    );
    assert!(!err.contains("null value"), "{err}");
}

/// The ownership tag `brickform = "<lineage>/<environment>/<address>"` another
/// configuration directory's state wrote: that directory's state manages the object, so
/// adopt in a second directory (its own state, which cannot see the first one's) leaves it
/// out and names the owner, unless told to take it; taken, the written comment and the plan
/// of the import name the previous owner.
#[test]
fn what_another_state_tagged_is_left_out_unless_taken_and_the_plan_names_its_owner() {
    use common::{SERVED_PROVIDER, Serve, config, served, served_ok};
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &[]);
    let first_config = format!(
        r#"{SERVED_PROVIDER}
data "databricks_current_user" "me" {{}}
resource "databricks_catalog" "c" {{
  name          = "owned_cat"
  force_destroy = true
}}
resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}}
resource "databricks_notebook" "nb" {{
  path           = "${{data.databricks_current_user.me.home}}/owned/etl.py"
  content_base64 = base64encode("print('etl')\n")
}}
resource "databricks_pipeline" "refine" {{
  name       = "shared_refine"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = true
  library {{
    notebook {{
      path = databricks_notebook.nb.path
    }}
  }}
}}
resource "databricks_job" "nightly" {{
  name = "shared_nightly"
  task {{
    task_key = "refine"
    pipeline_task {{
      pipeline_id = databricks_pipeline.refine.id
    }}
  }}
}}
"#
    );
    let first = config(&[("main.bf.hcl", &first_config)]);
    served_ok(first.path(), &serve, &["apply", "--auto-approve"]);
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(first.path().join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    let lineage = state["lineage"].as_str().unwrap().to_string();
    let owner = |address: &str| format!("state {lineage}, environment default, as {address}");

    // A second directory with a state of its own, whose job the same rule chooses.
    let second_config = format!(
        "{SERVED_PROVIDER}\nresource \"databricks_job\" \"mine\" {{\n  name = \"shared_mine\"\n}}\n"
    );
    let second = config(&[("main.bf.hcl", &second_config)]);
    let d = second.path();
    served_ok(d, &serve, &["apply", "--auto-approve"]);

    // `import ADDR ID` of another state's job takes it, and says whose it was.
    let job_id = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == "databricks_job.nightly")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let third = config(&[(
        "main.bf.hcl",
        &format!(
            "{SERVED_PROVIDER}\nresource \"databricks_job\" \"taken\" {{\n  name = \"shared_nightly\"\n}}\n"
        ),
    )]);
    let (code, out, err) = served(
        third.path(),
        &serve,
        &["import", "databricks_job.taken", &job_id],
    );
    assert_eq!(code, 0, "{out}{err}");
    let flat: String = format!("{out}{err}")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let said = format!(
        "carries the ownership tag of another brickform state ({})",
        owner("databricks_job.nightly")
    );
    assert!(flat.contains(&said), "{said}\n{out}{err}");
    assert!(flat.contains("Import successful!"), "{out}{err}");

    let out = served_ok(d, &serve, &["adopt", "--prefix", "shared_"]);
    for (what, address) in [
        (
            "databricks_job \"shared_nightly\"",
            "databricks_job.nightly",
        ),
        (
            "databricks_pipeline \"shared_refine\"",
            "databricks_pipeline.refine",
        ),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("{what} not listed:\n{out}"));
        assert!(
            line.trim_start()
                .starts_with("owned by another brickform state, left out: ")
                && line.ends_with(&format!("({})", owner(address))),
            "{line}\n{out}"
        );
    }
    // This state's own job is managed already, as before; what the left-out pipeline reads
    // (its notebook) is not chosen for it.
    assert!(
        out.contains("managed already, left out: databricks_job \"shared_mine\""),
        "{out}"
    );
    assert!(!out.contains("etl.py"), "{out}");
    assert!(out.contains("--take-from-other-states"), "{out}");
    assert!(out.contains("Nothing to adopt"), "{out}");
    assert!(!d.join("adopted.bf.hcl").exists());

    // Taken when asked: the comment and the plan name the previous owner.
    let out = served_ok(
        d,
        &serve,
        &["adopt", "--prefix", "shared_", "--take-from-other-states"],
    );
    assert!(out.contains("Adopting 3 object(s):"), "{out}");
    let text = std::fs::read_to_string(d.join("adopted.bf.hcl")).unwrap();
    for address in ["databricks_job.nightly", "databricks_pipeline.refine"] {
        let said = format!("# Taken from another brickform state ({})", owner(address));
        assert!(text.contains(&said), "{said}\n{text}");
    }
    let (code, plan, err) = served(d, &serve, &["plan", "-no-color"]);
    assert_eq!(code, 0, "{plan}{err}");
    assert!(
        plan.contains("Plan: 3 to import, 0 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    let flat: String = format!("{plan}{err}")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for address in ["databricks_job.nightly", "databricks_pipeline.refine"] {
        let said = format!(
            "carries the ownership tag of another brickform state ({})",
            owner(address)
        );
        assert!(flat.contains(&said), "{said}\n{plan}{err}");
    }
}
