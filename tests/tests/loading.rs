//! What a command reads as the configuration, end to end against the local workspace: a
//! configuration file that cannot be read is an error (never a silent "delete everything"),
//! a directory without configuration does not plan the deletion of what the state manages,
//! `--env` must name a declared environment, relative paths (`path.module`, `source`,
//! `file()`) mean the same file whatever `-C` and the working directory are, and the blocks
//! of files written for Terraform (`terraform`, `check`) are read for what they mean here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{brickform, config, local_dump, objects, run, run_ok};
use std::path::Path;
use std::time::Duration;

const PROVIDER: &str = "provider \"databricks\" {\n  host = \"local\"\n}\n";

const RESOURCES: &str = r#"resource "databricks_catalog" "c" {
  name = "load_cat"
}

resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}
"#;

/// A configuration whose resources live in `main.bf.hcl` and whose provider block lives in
/// another file, applied: losing `main.bf.hcl` alone would plan to delete both objects.
fn applied() -> tempfile::TempDir {
    let dir = config(&[("provider.bf.hcl", PROVIDER), ("main.bf.hcl", RESOURCES)]);
    let out = run_ok(dir.path(), &["apply", "--auto-approve"], &[]);
    assert!(out.contains("2 added"), "{out}");
    dir
}

fn live(d: &Path) -> Vec<String> {
    objects(&local_dump(d))
}

fn state_text(d: &Path) -> String {
    std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap()
}

/// Runs `args` with a time limit (a command that opens a named pipe would never return).
fn run_limited(d: &Path, args: &[&str]) -> (i32, String, String) {
    let out = brickform(d)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let (o, e) = common::texts(&out);
    (out.status.code().unwrap_or(-1), o, e)
}

#[test]
fn an_unreadable_configuration_file_is_an_error_and_nothing_is_deleted() {
    let dir = applied();
    let d = dir.path();
    let before = (live(d), state_text(d));
    assert_eq!(before.0, ["catalog:load_cat", "schema:load_cat.raw"]);
    let main = d.join("main.bf.hcl");
    let kept = d.join("resources.txt");
    std::fs::rename(&main, &kept).unwrap();

    type Setup = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Setup, &str)> = vec![
        (
            "dangling symlink",
            Box::new(|p: &Path| std::os::unix::fs::symlink("/nonexistent/main.hcl", p).unwrap()),
            "it is a symbolic link to /nonexistent/main.hcl, which does not exist",
        ),
        (
            "named pipe",
            Box::new(|p: &Path| {
                let made = std::process::Command::new("mkfifo")
                    .arg(p)
                    .status()
                    .unwrap();
                assert!(made.success());
            }),
            "it is a named pipe (FIFO), not a file",
        ),
        (
            "directory",
            Box::new(|p: &Path| std::fs::create_dir(p).unwrap()),
            "it is a directory, not a file",
        ),
        (
            "not UTF-8",
            Box::new(|p: &Path| std::fs::write(p, b"# caf\xe9\n").unwrap()),
            "it is not UTF-8 text (the first invalid byte is at line 1, column 6)",
        ),
        (
            "read error",
            Box::new(|p: &Path| std::os::unix::fs::symlink("/proc/self/mem", p).unwrap()),
            "Input/output error",
        ),
    ];
    for (what, setup, why) in cases {
        setup(&main);
        for args in [
            &["validate"][..],
            &["plan"],
            &["apply", "--auto-approve"],
            &["fmt", "--check"],
        ] {
            let (code, out, err) = run_limited(d, args);
            assert_ne!(code, 0, "{what}: {args:?} succeeded\n{out}\n{err}");
            assert!(
                err.contains("Cannot read the configuration file")
                    && err.contains("main.bf.hcl")
                    && err.contains(why),
                "{what}: {args:?}\n{err}"
            );
            assert!(!out.contains("Success!"), "{what}: {out}");
            assert!(!out.contains("destroy"), "{what}: {out}");
        }
        assert_eq!(
            (live(d), state_text(d)),
            before,
            "{what}: something changed"
        );
        if main.is_dir() && !main.is_symlink() {
            std::fs::remove_dir(&main).unwrap();
        } else {
            std::fs::remove_file(&main).unwrap();
        }
    }
    std::fs::rename(&kept, &main).unwrap();
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");
}

#[test]
fn a_file_without_read_permission_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = applied();
    let d = dir.path();
    let main = d.join("main.bf.hcl");
    std::fs::set_permissions(&main, std::fs::Permissions::from_mode(0o000)).unwrap();
    let (code, out, err) = run(d, &["apply", "--auto-approve"], &[]);
    // A privileged user (root in a container) reads the file anyway; then the configuration
    // is whole and there is nothing to do. Either way nothing is deleted.
    if std::fs::File::open(&main).is_err() {
        assert_eq!(code, 1, "{out}\n{err}");
        assert!(
            err.contains("Cannot read the configuration file") && err.contains("ermission denied"),
            "{err}"
        );
    } else {
        assert_eq!(code, 0, "{out}\n{err}");
    }
    assert!(!out.contains("Destroying"), "{out}");
    assert_eq!(live(d), ["catalog:load_cat", "schema:load_cat.raw"]);
}

#[test]
fn no_configuration_with_a_non_empty_state_refuses_to_plan_deleting_everything() {
    let dir = applied();
    let d = dir.path();
    std::fs::remove_file(d.join("main.bf.hcl")).unwrap();
    std::fs::remove_file(d.join("provider.bf.hcl")).unwrap();
    let before = state_text(d);
    for args in [
        &["--local", "plan"][..],
        &["--local", "apply", "--auto-approve"],
    ] {
        let (code, out, err) = run(d, args, &[]);
        assert_eq!(code, 1, "{args:?}\n{out}\n{err}");
        assert!(
            err.contains("No *.bf.hcl files in ")
                && err.contains("; the state of environment \"default\" manages 2 objects")
                && err.contains("`brickform destroy`"),
            "{args:?}\n{err}"
        );
        assert!(!out.contains("will be destroyed"), "{out}");
    }
    assert_eq!(state_text(d), before);
    assert_eq!(live(d), ["catalog:load_cat", "schema:load_cat.raw"]);

    // Saying so is what destroys them.
    let (code, out, err) = run(d, &["--local", "plan", "--destroy"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("2 to destroy"), "{out}");
    let out = run_ok(d, &["--local", "destroy", "--auto-approve"], &[]);
    assert!(out.contains("2 destroyed, 0 left behind"), "{out}");
    assert_eq!(live(d), Vec::<String>::new());

    // Nothing configured and nothing in state: nothing to plan, and the plan says why.
    let (code, out, err) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("No changes."), "{out}");
    assert!(err.contains("No *.bf.hcl files in "), "{err}");
    let (code, out, err) = run(d, &["validate"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("No *.bf.hcl files in "), "{err}");
}

#[test]
fn a_directory_of_terraform_files_says_brickform_reads_bf_hcl() {
    let dir = config(&[
        (
            "main.tf",
            "resource \"databricks_catalog\" \"c\" {\n  name = \"x\"\n}\n",
        ),
        ("variables.tf", "variable \"x\" {}\n"),
    ]);
    for args in [&["validate"][..], &["plan"], &["apply", "--auto-approve"]] {
        let (code, out, err) = run(dir.path(), args, &[]);
        assert_eq!(code, 1, "{args:?}\n{out}\n{err}");
        assert!(
            err.contains("No *.bf.hcl files in ")
                && err.contains("only Terraform files")
                && err.contains("main.tf, variables.tf")
                && err.contains("main.tf → main.bf.hcl"),
            "{args:?}\n{err}"
        );
    }
}

#[test]
fn an_undeclared_environment_is_an_error_with_did_you_mean_for_every_command() {
    let dir = config(&[(
        "main.bf.hcl",
        &format!(
            "{PROVIDER}{RESOURCES}\nenvironment \"dev\" {{\n  default = true\n}}\n\nenvironment \"prod\" {{}}\n"
        ),
    )]);
    let d = dir.path();
    run_ok(d, &["apply", "--auto-approve"], &[]);
    let made = live(d);
    let commands: &[&[&str]] = &[
        &["--env", "prd", "validate"],
        &["--env", "prd", "plan"],
        &["--env", "prd", "apply", "--auto-approve"],
        &["--env", "prd", "destroy", "--auto-approve"],
        &["--env", "prd", "init"],
        &["--env", "prd", "state", "list"],
        &["--env", "prd", "state", "pull"],
        &["--env", "prd", "output"],
        &["--env", "prd", "show"],
        &["--env", "prd", "import", "databricks_catalog.c", "load_cat"],
        &["--env", "prd", "run", "databricks_catalog.c"],
        &["--env", "prd", "env", "list"],
        &["promote", "--from", "dev", "--to", "prd"],
        &["promote", "--from", "prd", "--to", "prod"],
    ];
    for args in commands {
        let (code, out, err) = run(d, args, &[]);
        assert_eq!(code, 1, "{args:?}\n{out}\n{err}");
        assert!(
            err.contains("There is no environment \"prd\" in the configuration")
                && err.contains("did you mean `prod`?"),
            "{args:?}\n{err}"
        );
    }
    // BRICKFORM_ENV is the same choice.
    let (code, _, err) = run(d, &["plan"], &[("BRICKFORM_ENV", "prd")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("did you mean `prod`?"), "{err}");
    // Nothing was planned into, or created for, the misspelt environment.
    assert!(!d.join(".brickform/state/prd.json").exists());
    assert_eq!(live(d), made);
    // A declared one works.
    let (code, out, err) = run(d, &["--env", "prod", "validate"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Without environment blocks, --env names a state of its own once `env new` made it
    // (tests/tests/cli.rs has the rest).
    let plain = config(&[("main.bf.hcl", "output \"o\" {\n  value = 1\n}\n")]);
    let (code, out, err) = run(plain.path(), &["--env", "anything", "plan"], &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("brickform env new anything"), "{err}");
    run_ok(plain.path(), &["env", "new", "anything"], &[]);
    let (code, out, err) = run(plain.path(), &["--env", "anything", "plan"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");
}

/// Runs the binary in working directory `cwd` with `-C chdir` and `args`.
fn run_from(cwd: &Path, chdir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = brickform(chdir)
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap();
    let (o, e) = common::texts(&out);
    (out.status.code().unwrap_or(-1), o, e)
}

#[test]
fn relative_paths_read_the_configuration_directory_whatever_c_and_the_working_directory() {
    let top = tempfile::tempdir().unwrap();
    let cfg = top.path().join("cfg");
    let elsewhere = top.path().join("elsewhere");
    std::fs::create_dir_all(cfg.join("src")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(cfg.join("f.txt"), "in the configuration directory").unwrap();
    std::fs::write(cfg.join("src/etl.py"), "print('etl')").unwrap();
    // Decoys where a wrong base would find a file.
    std::fs::write(top.path().join("f.txt"), "in the working directory").unwrap();
    std::fs::create_dir_all(top.path().join("cfg/cfg")).unwrap();
    std::fs::write(top.path().join("cfg/cfg/f.txt"), "in DIR/DIR").unwrap();
    std::fs::write(
        cfg.join("main.bf.hcl"),
        format!(
            r#"{PROVIDER}
resource "databricks_notebook" "module" {{
  path   = "/Shared/paths/module.py"
  source = "${{path.module}}/src/etl.py"
}}

resource "databricks_notebook" "plain" {{
  path   = "/Shared/paths/plain.py"
  source = "src/etl.py"
}}

output "module_file" {{
  value = file("${{path.module}}/f.txt")
}}

output "plain_file" {{
  value = file("f.txt")
}}

output "module" {{
  value = path.module
}}

output "root" {{
  value = path.root
}}
"#
        ),
    )
    .unwrap();
    let absolute = cfg.canonicalize().unwrap();
    let runs: [(&Path, &Path); 3] = [
        (top.path(), Path::new("cfg")),
        (&cfg, Path::new(".")),
        (&elsewhere, &absolute),
    ];
    let (code, out, err) = run_from(runs[0].0, runs[0].1, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("2 added"), "{out}");
    for (cwd, chdir) in runs {
        let (code, out, err) = run_from(cwd, chdir, &["plan", "--detailed-exitcode"]);
        assert_eq!(
            code, 0,
            "from {cwd:?} with -C {chdir:?}: not empty\n{out}\n{err}"
        );
        let (code, out, err) = run_from(cwd, chdir, &["output", "--json"]);
        assert_eq!(code, 0, "{out}\n{err}");
        let o: serde_json::Value = serde_json::from_str(&out).unwrap();
        for name in ["module_file", "plain_file"] {
            assert_eq!(
                o[name]["value"], "in the configuration directory",
                "{name} from {cwd:?} with -C {chdir:?}"
            );
        }
        assert_eq!(o["module"]["value"], ".");
        assert_eq!(o["root"]["value"], ".");
    }
    // Both notebooks hold the file of the configuration directory.
    let dump = local_dump(&cfg);
    for p in ["/Shared/paths/module", "/Shared/paths/plain"] {
        assert!(objects(&dump).contains(&format!("workspace:{p}")), "{p}");
    }
    // A changed source file is seen the same way from every directory.
    std::fs::write(cfg.join("src/etl.py"), "print('etl 2')").unwrap();
    for (cwd, chdir) in runs {
        let (code, out, err) = run_from(cwd, chdir, &["plan", "--detailed-exitcode"]);
        assert_eq!(code, 2, "from {cwd:?} with -C {chdir:?}\n{out}\n{err}");
        assert!(out.contains("2 to change"), "{out}");
    }
    // As with Terraform's -chdir, relative paths given to the command are relative to DIR:
    // a plan saved with `-C cfg plan --out p.plan` lands in cfg and applies from there.
    let (code, out, err) = run_from(top.path(), Path::new("cfg"), &["plan", "--out", "p.plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        cfg.join("p.plan").is_file(),
        "the plan file is in the configuration directory"
    );
    assert!(!top.path().join("p.plan").exists());
    let (code, out, err) = run_from(top.path(), Path::new("cfg"), &["apply", "p.plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("2 changed"), "{out}");
}

#[test]
fn path_cwd_is_where_the_command_was_started_with_chdir() {
    let top = tempfile::tempdir().unwrap();
    let cfg = top.path().join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("main.bf.hcl"),
        "output \"cwd\" {\n  value = path.cwd\n}\n",
    )
    .unwrap();
    let (code, out, err) = run_from(top.path(), Path::new("cfg"), &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = run_from(top.path(), Path::new("cfg"), &["output", "--raw", "cwd"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        Path::new(out.trim()).canonicalize().unwrap(),
        top.path().canonicalize().unwrap()
    );
}

/// A file written for Terraform keeps its `terraform` block: the Databricks provider it
/// requires is brickform's own (a note says so, on stderr), the configuration applies and
/// destroys; a Terraform backend in it is refused before anything is planned.
#[test]
fn a_terraform_settings_block_is_read_for_what_applies() {
    let block = "terraform {\n  required_version = \">= 1.5\"\n  required_providers {\n    databricks = {\n      source  = \"databricks/databricks\"\n      version = \">= 1.50\"\n    }\n  }\n}\n";
    let dir = config(&[("main.bf.hcl", &format!("{block}{PROVIDER}{RESOURCES}"))]);
    let d = dir.path();
    let (code, out, err) = run(d, &["apply", "--auto-approve"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 added"), "{out}");
    assert!(err.contains("Terraform settings block"), "{err}");
    assert!(
        err.contains(
            "is brickform's built-in databricks provider; its version constraint is not used"
        ),
        "{err}"
    );
    let with_backend = block.replace(
        "  required_version",
        "  backend \"s3\" {\n    bucket = \"tf-state\"\n  }\n  required_version",
    );
    std::fs::write(
        d.join("main.bf.hcl"),
        format!("{with_backend}{PROVIDER}{RESOURCES}"),
    )
    .unwrap();
    let (code, out, err) = run(d, &["plan"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("Terraform backend \"s3\" is not where brickform keeps state"),
        "{err}"
    );
    let (code, out, err) = run(d, &["validate"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    std::fs::write(d.join("main.bf.hcl"), format!("{PROVIDER}{RESOURCES}")).unwrap();
    let out = run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert!(out.contains("0 left behind"), "{out}");
}

/// `check` blocks warn after plan (what is known then) and after apply (the rest), with
/// their error message, and never change an exit code.
#[test]
fn check_assertions_warn_after_plan_and_apply() {
    let checks = r#"
check "catalog" {
  assert {
    condition     = databricks_catalog.c.name == "load_cat"
    error_message = "named ${databricks_catalog.c.name}"
  }
  assert {
    condition     = databricks_catalog.c.comment == "documented"
    error_message = "catalog ${databricks_catalog.c.name} has no comment"
  }
  assert {
    condition     = length(databricks_catalog.c.id) > 100
    error_message = "the id ${databricks_catalog.c.id} is short"
  }
}
"#;
    let dir = config(&[("main.bf.hcl", &format!("{PROVIDER}{RESOURCES}{checks}"))]);
    let d = dir.path();
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(
        err.matches("Check block assertion failed").count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("check \"catalog\": catalog load_cat has no comment"),
        "{err}"
    );
    assert!(err.contains("main.bf.hcl:"), "{err}");
    // The id is known once the catalog exists: the apply reports that one too.
    let (code, out, err) = run(d, &["apply", "--auto-approve"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("the id load_cat is short"), "{err}");
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        err.matches("Check block assertion failed").count(),
        2,
        "{err}"
    );
    // A check that refers to nothing declared is an error at validate.
    std::fs::write(
        d.join("checks.bf.hcl"),
        "check \"typo\" {\n  assert {\n    condition     = databricks_catalog.cc.name != \"\"\n    error_message = \"x\"\n  }\n}\n",
    )
    .unwrap();
    let (code, out, err) = run(d, &["validate"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("Reference to undeclared resource"), "{err}");
    assert!(err.contains("checks.bf.hcl:3"), "{err}");
    std::fs::remove_file(d.join("checks.bf.hcl")).unwrap();
    let out = run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert!(out.contains("0 left behind"), "{out}");
}
