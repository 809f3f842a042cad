//! The CI templates that docs/review-plans-in-ci.md includes, run as the CIs run them: every
//! `run:` of ci-templates/github/brickform.yml, of ci-templates/github/brickform-action.yml
//! (whose `uses: OWNER/REPO@REF` runs the composite action's steps, action.yml), and every
//! `script:` of ci-templates/gitlab/.gitlab-ci.yml, in bash, with the variables each CI sets,
//! against `brickform local serve` holding the state in one of its volumes (runners start
//! empty, so the templates keep the state there).
//!
//! What the CI services do is played here: `actions/checkout` writes the commit's files,
//! `actions/upload-artifact` and GitLab's `artifacts:` keep the job's files; `gh` (GitHub's
//! CLI, on its runners) is a stand-in that hands its arguments to a fake GitHub, GitLab's API a
//! fake HTTP server, both in this process; `pip` and `apt-get` are stand-ins that record what
//! they were asked to install (the `brickform` on PATH is the one built here).
//!
//! Each template goes through the same story (story.rs): a pull (merge) request planned, its
//! comment (note) posted; a push to it, the same comment updated (found past the first page of
//! comments); the merge, the saved plan handed from the plan job to the apply job and applied;
//! the apply run again, refused (the state moved on); a request whose merged configuration is
//! not the planned one, refused; a merge with no plan, failing.
//!
//! The pieces: project.rs (the templates and docs read from this checkout), repository.rs (the
//! commits), world.rs (the workspace, the fake forge, the tools, the repository together),
//! forge.rs (the fake GitHub and GitLab, one HTTP server), gh.rs (GitHub through the `gh`
//! stand-in), gitlab_api.rs (GitLab's API), shell.rs (bash and the stand-ins on PATH),
//! expressions.rs (`${{ }}`, `if:` and GitLab's `rules: if:`), github.rs and gitlab.rs (the
//! runners), outcome.rs (how a job went).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;
mod expressions;
mod forge;
mod gh;
mod github;
mod gitlab;
mod gitlab_api;
mod outcome;
mod project;
mod repository;
mod shell;
mod story;
mod world;

use project::{read, version, yaml};
use serde_json::Value;

const REPO: &str = "acme/lakehouse";
const GH_TOKEN: &str = "ghs_fake_installation_token";
const GITLAB_TOKEN: &str = "glpat-fake-project-token";
const PROJECT_ID: u64 = 42;
/// The CI's secrets (GitHub) and masked variables (GitLab).
const CLIENT_ID: &str = "ci-service-principal";
const CLIENT_SECRET: &str = "ci-client-secret";
const DB_PASSWORD: &str = "s3cret-db-password";

#[test]
fn github_workflow_plans_comments_applies_and_refuses_stale_plans() {
    story::play(&github::Workflow::read("ci-templates/github/brickform.yml"));
}

#[test]
fn github_workflow_with_the_action_plans_comments_applies_and_refuses_stale_plans() {
    story::play(&github::Workflow::read(
        "ci-templates/github/brickform-action.yml",
    ));
}

#[test]
fn gitlab_pipeline_plans_notes_applies_and_refuses_stale_plans() {
    story::play(&gitlab::Pipelines::read(
        "ci-templates/gitlab/.gitlab-ci.yml",
    ));
}

/// The step that posts the comment is the same in the written-out workflow and the action,
/// and both install the documented release with pip.
#[test]
fn templates_share_the_comment_step_and_install_the_release() {
    let wf = yaml("ci-templates/github/brickform.yml");
    let action = yaml("action.yml");
    let step = |steps: &Value, name: &str| {
        steps
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no step {name}"))
            .clone()
    };
    let in_workflow = step(&wf["jobs"]["plan"]["steps"], "Comment on the pull request");
    let in_action = step(&action["runs"]["steps"], "Comment on the pull request");
    assert_eq!(
        in_workflow["run"], in_action["run"],
        "the two comment steps differ"
    );
    let names = |s: &Value| {
        s["env"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&in_workflow), names(&in_action));

    let v = version();
    assert_eq!(wf["env"]["BRICKFORM_VERSION"], v.as_str());
    let gitlab = yaml("ci-templates/gitlab/.gitlab-ci.yml");
    assert_eq!(gitlab["variables"]["BRICKFORM_VERSION"], v.as_str());
    let with_action = yaml("ci-templates/github/brickform-action.yml");
    for job in ["plan", "apply"] {
        let uses: Vec<&Value> = with_action["jobs"][job]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["uses"] == "OWNER/REPO@REF")
            .collect();
        assert_eq!(uses.len(), 1, "{job} uses the action once");
        assert_eq!(uses[0]["with"]["version"], v.as_str());
    }
    // `pip install brickform` is how the README installs it.
    assert!(read("README.md").contains("pip install brickform"));
}

/// docs/review-plans-in-ci.md lists the action's inputs and outputs as action.yml declares
/// them.
#[test]
fn guide_lists_the_action_inputs_and_outputs() {
    let action = yaml("action.yml");
    let guide = read("docs/review-plans-in-ci.md");
    for (kind, heading) in [("inputs", "| input |"), ("outputs", "| output |")] {
        let table = &guide[guide
            .find(heading)
            .unwrap_or_else(|| panic!("the guide has no table of the action's {kind}"))..];
        let table = &table[..table.find("\n\n").unwrap_or(table.len())];
        let listed: Vec<String> = table
            .lines()
            .skip(2)
            .map(|row| {
                row.trim_start_matches("| `")
                    .split('`')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let declared: Vec<String> = action[kind].as_object().unwrap().keys().cloned().collect();
        assert_eq!(listed, declared, "the guide's table of the action's {kind}");
    }
}

// ---------------------------------------------------------------------------------------
// Errors about a plan file name it as resolved (the GitLab template once wrote
// infra/prod.bfplan with `-C infra plan --out prod.bfplan` and looked for ./prod.bfplan).

#[test]
fn plan_file_errors_name_the_resolved_path() {
    let top = tempfile::tempdir().unwrap();
    let top_path = top.path().canonicalize().unwrap();
    let infra = top_path.join("infra");
    std::fs::create_dir(&infra).unwrap();
    std::fs::write(
        infra.join("main.bf.hcl"),
        "resource \"databricks_catalog\" \"c\" {\n  name = \"demo\"\n}\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::new(common::bin())
            .current_dir(&top_path)
            .env("NO_COLOR", "1")
            .env_remove("BRICKFORM_ENV")
            .args(args)
            .output()
            .unwrap();
        let (o, e) = common::texts(&out);
        (out.status.code().unwrap_or(-1), o, e)
    };
    let as_given = |file: &str| {
        format!(
            "{} ({file}, relative to the configuration directory infra given with -C)",
            infra.join(file).display()
        )
    };

    // Runs `brickform ARGS`, whose error says every one of `messages`; its exit code.
    let error = |args: &[&str], messages: &[&str]| {
        let (code, _, err) = run(args);
        assert!(messages.iter().all(|m| err.contains(m)), "{err}");
        code
    };

    // Saved with -C infra: in infra/, where a relative path is read from.
    let (code, _, err) = run(&["-C", "infra", "plan", "--local", "--out", "prod.bfplan"]);
    assert_eq!(code, 0, "{err}");
    assert!(infra.join("prod.bfplan").is_file());
    std::fs::rename(infra.join("prod.bfplan"), top_path.join("prod.bfplan")).unwrap();

    // Missing: looked for in infra/, which the error says.
    let missing = format!("Error: no plan file exists at {}", as_given("prod.bfplan"));
    let args = ["-C", "infra", "apply", "--local", "prod.bfplan"];
    assert_eq!(error(&args, &[&missing]), 1);
    // Also without -C: the path resolved from where the command runs.
    let missing = top_path.join("missing.bfplan");
    let missing = format!("no plan file exists at {}", missing.display());
    assert_eq!(
        error(&["apply", "--local", "missing.bfplan"], &[&missing]),
        1
    );
    // Not a file, not a plan, another format.
    std::fs::create_dir(infra.join("dir.bfplan")).unwrap();
    let dir = format!(
        "cannot read the plan file {}: it is a directory",
        as_given("dir.bfplan")
    );
    error(&["-C", "infra", "apply", "--local", "dir.bfplan"], &[&dir]);
    std::fs::write(infra.join("junk.bfplan"), "junk").unwrap();
    let junk = format!("{} is not a brickform plan file", as_given("junk.bfplan"));
    error(&["-C", "infra", "show", "junk.bfplan"], &[&junk]);
    std::fs::write(
        infra.join("newer.bfplan"),
        r#"{"format": "brickform-plan", "format_version": 99}"#,
    )
    .unwrap();
    let newer = format!(
        "Saved plan cannot be read by this brickform: {} is in plan file format version 99",
        as_given("newer.bfplan")
    );
    let args = ["-C", "infra", "apply", "--local", "newer.bfplan"];
    error(&args, &[&newer]);
    // Unreadable (when the test's user cannot read a file without permission: not root).
    let locked = infra.join("locked.bfplan");
    std::fs::copy(top_path.join("prod.bfplan"), &locked).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&locked).is_err() {
        let unreadable = format!("cannot read the plan file {}", as_given("locked.bfplan"));
        let args = ["-C", "infra", "apply", "--local", "locked.bfplan"];
        error(&args, &[&unreadable, "ermission denied"]);
    }
    // Not writable: a directory that does not exist.
    let unwritable = format!(
        "cannot write the plan file {}",
        as_given("nowhere/p.bfplan")
    );
    let args = [
        "-C",
        "infra",
        "plan",
        "--local",
        "--out",
        "nowhere/p.bfplan",
    ];
    assert_eq!(error(&args, &[&unwritable]), 1);
    // Refused plans name the file they refuse: another environment, a stale plan.
    let other_env = "the plan was made for environment \"default\", not \"dev\"";
    let named = format!("\n  Plan file: {}", as_given("../prod.bfplan"));
    let args = [
        "-C",
        "infra",
        "apply",
        "--local",
        "--env",
        "dev",
        "../prod.bfplan",
    ];
    error(&args, &[other_env, &named]);
    std::fs::write(
        infra.join("main.bf.hcl"),
        "resource \"databricks_catalog\" \"c\" {\n  name = \"demo2\"\n}\n",
    )
    .unwrap();
    let abs = top_path.join("prod.bfplan");
    let stale = "Saved plan is stale: the configuration files changed";
    let named = format!("\n  Plan file: {}\n", abs.display());
    let args = ["-C", "infra", "apply", "--local", abs.to_str().unwrap()];
    assert_eq!(error(&args, &[stale, &named]), 1);
}
