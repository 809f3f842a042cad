//! `databricks_artifact` end to end on the local workspace: a file built by a command from
//! local sources, uploaded to a volume and used by a job. Built again only when an input
//! changes; a new version replaces the old file and the job follows it; a failed build
//! shows its output and changes nothing; a file removed outside is built and uploaded
//! again; destroy leaves nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{local_dump, objects, run, run_ok};
use std::path::Path;

const CONFIG: &str = r#"
provider "databricks" {
  host = "local"
}

resource "databricks_catalog" "c" {
  name          = "art"
  force_destroy = true
}

resource "databricks_schema" "s" {
  catalog_name  = databricks_catalog.c.name
  name          = "libs"
  force_destroy = true
}

resource "databricks_volume" "v" {
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s.name
  name         = "dist"
  volume_type  = "MANAGED"
}

resource "databricks_artifact" "tool" {
  source_dir = "tool"
  build      = ["python3", "make.py"]
  inputs     = ["make.py", "VERSION", "src/*.txt"]
  output     = "out/tool-*.zip"
  path       = "${databricks_volume.v.volume_path}/tool"
}

resource "databricks_job" "j" {
  name = "uses-tool"
  environment {
    environment_key = "e"
    spec {
      client       = "1"
      dependencies = [databricks_artifact.tool.remote_path]
    }
  }
  task {
    task_key        = "t"
    environment_key = "e"
    python_wheel_task {
      package_name = "tool"
      entry_point  = "main"
    }
  }
}
"#;

/// A build with nothing but Python's standard library: zips src/ into out/tool-VERSION.zip,
/// and counts its runs in a file that is not an input.
const MAKE: &str = r#"
import os, sys, zipfile
if os.path.exists("FAIL"):
    print("compiling src/a.txt")
    print("error: " + open("FAIL").read().strip(), file=sys.stderr)
    sys.exit(2)
with open("builds.log", "a") as log:
    log.write("built\n")
version = open("VERSION").read().strip()
os.makedirs("out", exist_ok=True)
with zipfile.ZipFile(f"out/tool-{version}.zip", "w") as z:
    for name in sorted(os.listdir("src")):
        z.write(os.path.join("src", name), name)
print(f"wrote out/tool-{version}.zip")
"#;

/// The project in a directory of its own, its configuration's `from` written as `to`.
fn project_with(from: &str, to: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let config = std::fs::read_to_string(dir.path().join("main.bf.hcl")).unwrap();
    assert!(config.contains(from), "{from} is not in the configuration");
    std::fs::write(dir.path().join("main.bf.hcl"), config.replace(from, to)).unwrap();
    dir
}

fn project(d: &Path) {
    std::fs::write(d.join("main.bf.hcl"), CONFIG).unwrap();
    let tool = d.join("tool");
    std::fs::create_dir_all(tool.join("src")).unwrap();
    std::fs::write(tool.join("make.py"), MAKE).unwrap();
    std::fs::write(tool.join("VERSION"), "1.0\n").unwrap();
    std::fs::write(tool.join("src/a.txt"), "a").unwrap();
}

fn builds(d: &Path) -> usize {
    std::fs::read_to_string(d.join("tool/builds.log"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn files(d: &Path) -> Vec<String> {
    objects(&local_dump(d))
        .into_iter()
        .filter(|o| o.starts_with("file:"))
        .collect()
}

fn job_dependencies(d: &Path) -> serde_json::Value {
    let dump = local_dump(d);
    let job = dump["jobs"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    job["settings"]["environments"][0]["spec"]["dependencies"].clone()
}

const V1: &str = "/Volumes/art/libs/dist/tool/tool-1.0.zip";
const V2: &str = "/Volumes/art/libs/dist/tool/tool-2.0.zip";

#[test]
fn an_artifact_is_built_when_its_inputs_change_and_only_then() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    project(d);

    // Nothing is built to plan.
    run_ok(d, &["plan", "--local"], &[]);
    assert_eq!(builds(d), 0);

    let out = run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert!(out.contains("Resources: 5 added"), "{out}");
    assert_eq!(builds(d), 1);
    // The build's output goes by under the artifact's address, as it runs.
    assert!(
        out.contains("databricks_artifact.tool (output): running `python3 make.py` in "),
        "{out}"
    );
    assert!(
        out.contains("databricks_artifact.tool (output): wrote out/tool-1.0.zip"),
        "{out}"
    );
    assert_eq!(files(d), [format!("file:{V1}")]);
    assert_eq!(job_dependencies(d), serde_json::json!([V1]));

    // Unchanged inputs: nothing to do, nothing built. A file the build reads but the inputs
    // do not name (its log) changes nothing either.
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert_eq!(builds(d), 1);

    // A new version: the artifact and the job change, the old file goes.
    std::fs::write(d.join("tool/VERSION"), "2.0\n").unwrap();
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        out.contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "{out}"
    );
    assert!(
        out.contains(
            "remote_path  = \"/Volumes/art/libs/dist/tool/tool-1.0.zip\" -> (known after apply)"
        ),
        "{out}"
    );
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert_eq!(builds(d), 2);
    assert_eq!(files(d), [format!("file:{V2}")]);
    assert_eq!(job_dependencies(d), serde_json::json!([V2]));
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");

    // A build that fails shows what it printed and changes nothing: the uploaded file and
    // the job stay, and the change is still planned.
    std::fs::write(d.join("tool/src/a.txt"), "a, edited").unwrap();
    std::fs::write(d.join("tool/FAIL"), "a.txt: unexpected end of file").unwrap();
    let (code, out, err) = run(d, &["apply", "--local", "--auto-approve"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("`python3 make.py`"), "{all}");
    assert!(all.contains("exited with 2"), "{all}");
    assert!(all.contains("compiling src/a.txt"), "{all}");
    assert!(
        all.contains("error: a.txt: unexpected end of file"),
        "{all}"
    );
    assert_eq!(files(d), [format!("file:{V2}")]);
    assert_eq!(job_dependencies(d), serde_json::json!([V2]));
    std::fs::remove_file(d.join("tool/FAIL")).unwrap();
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    // The file uploaded is the one built from the edited input (stored, not compressed).
    use base64::Engine as _;
    let zip = base64::engine::general_purpose::STANDARD
        .decode(local_dump(d)["files"][V2]["content"].as_str().unwrap())
        .unwrap();
    assert!(zip.starts_with(b"PK"));
    assert!(
        zip.windows(9).any(|w| w == b"a, edited"),
        "the new build was uploaded"
    );
    assert_eq!(builds(d), 3);

    // Replaced outside brickform: planned back as an update, which builds and uploads it.
    {
        let serve = common::Serve::start_local(d);
        let (status, _) = common::http_auth(
            "PUT",
            &format!("{}/api/2.0/fs/files{V2}?overwrite=true", serve.url),
            Some(b"not the build"),
            "application/octet-stream",
            &serve.token,
        );
        assert_eq!(status, 204);
    }
    let (code, out, _) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("databricks_artifact.tool will be updated in-place"),
        "{out}"
    );
    assert!(out.contains("changed outside brickform"), "{out}");
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert_eq!(builds(d), 4);
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");

    // Removed outside brickform: built and uploaded again.
    {
        let serve = common::Serve::start_local(d);
        let (status, _) = serve.call("DELETE", &format!("/api/2.0/fs/files{V2}"), None);
        assert_eq!(status, 204);
    }
    let (code, out, _) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("databricks_artifact.tool"), "{out}");
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    assert_eq!(files(d), [format!("file:{V2}")]);

    // The uploaded file is this state's: the volume's destroy names it as such, not as
    // something its delete takes unmanaged.
    let out = run_ok(d, &["plan", "--local", "--destroy"], &[]);
    assert!(
        out.contains("(deletes with it what lies inside: databricks_artifact.tool)"),
        "{out}"
    );
    assert!(!out.contains("this state does not manage"), "{out}");
    let out = run_ok(d, &["destroy", "--local", "--auto-approve"], &[]);
    assert!(out.contains("0 left behind"), "{out}");
    assert_eq!(objects(&local_dump(d)), Vec::<String>::new());
}

#[test]
fn an_artifact_that_cannot_be_built_is_stopped_at_plan_or_validate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    project(d);
    let config = std::fs::read_to_string(d.join("main.bf.hcl")).unwrap();

    // An input pattern that matches nothing (a typo) is an error before anything is sent.
    std::fs::write(
        d.join("main.bf.hcl"),
        config.replace("\"src/*.txt\"", "\"scr/*.txt\""),
    )
    .unwrap();
    let (code, _, err) = run(d, &["plan", "--local"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("inputs pattern \"scr/*.txt\" matches no file"),
        "{err}"
    );

    // Patterns that leave source_dir are refused by validate.
    std::fs::write(
        d.join("main.bf.hcl"),
        config.replace("\"src/*.txt\"", "\"../secrets/*\""),
    )
    .unwrap();
    let (code, _, err) = run(d, &["validate"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("leaves source_dir"), "{err}");
    assert_eq!(builds(d), 0);
}

#[test]
fn an_artifact_goes_to_a_workspace_folder_too() {
    let dir = project_with(
        "path       = \"${databricks_volume.v.volume_path}/tool\"",
        "path       = \"/Workspace/Shared/tools\"",
    );
    let d = dir.path();
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    let dump = local_dump(d);
    let held: Vec<String> = objects(&dump)
        .into_iter()
        .filter(|o| o.contains("tool-1.0.zip"))
        .collect();
    // The service takes /Workspace/Shared as /Shared: the same folder.
    assert_eq!(held, ["workspace:/Shared/tools/tool-1.0.zip"]);
    assert_eq!(
        job_dependencies(d),
        serde_json::json!(["/Workspace/Shared/tools/tool-1.0.zip"])
    );
    let (code, out, err) = run(d, &["plan", "--local", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::write(d.join("tool/VERSION"), "2.0\n").unwrap();
    run_ok(d, &["apply", "--local", "--auto-approve"], &[]);
    let held: Vec<String> = objects(&local_dump(d))
        .into_iter()
        .filter(|o| o.contains("tool-"))
        .collect();
    assert_eq!(held, ["workspace:/Shared/tools/tool-2.0.zip"]);
    let out = run_ok(d, &["destroy", "--local", "--auto-approve"], &[]);
    assert!(out.contains("0 left behind"), "{out}");
}

#[test]
fn a_build_tool_that_is_not_there_stops_the_plan() {
    let dir = project_with(
        "[\"python3\", \"make.py\"]",
        "[\"no-such-builder-xyz\", \"make.py\"]",
    );
    let d = dir.path();
    let (code, out, err) = run(d, &["plan", "--local"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("the build command \"no-such-builder-xyz\" is not on PATH"),
        "{err}"
    );
    assert!(!err.contains("the service rejected"), "{err}");
    assert_eq!(builds(d), 0);
}
