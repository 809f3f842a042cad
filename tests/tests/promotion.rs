//! `examples/promotion`: one configuration, dev (development mode) and prod (production,
//! protected) on two local workspaces. Dev gets the development presets; `promote` plans prod
//! and explains every difference; prod ends up holding the same objects but for the declared
//! differences; protect refuses to destroy prod's data without --allow-destroy; production
//! refuses development settings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{example_copy, objects, run, run_ok};
use serde_json::Value;
use std::path::Path;

fn workspace(d: &Path, name: &str) -> Value {
    common::workspace_dump(&d.join(format!(".brickform/local-{name}")))
}

fn by_name(dump: &Value, kind: &str, name: fn(&Value) -> &Value) -> Vec<(String, Value)> {
    let mut v: Vec<(String, Value)> = dump[kind]
        .as_object()
        .unwrap()
        .values()
        .map(|x| (name(x).as_str().unwrap().to_string(), x.clone()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn dev_presets_promote_to_prod_with_every_difference_explained() {
    let dir = example_copy("promotion");
    let d = dir.path();

    // dev: the default environment, development mode.
    let out = run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(
        out.contains("job_name = \"[dev local-user] orders-nightly\""),
        "{out}"
    );
    let dev = workspace(d, "dev");
    assert_eq!(
        objects(&dev)
            .into_iter()
            .filter(|o| !o.starts_with("workspace:"))
            .collect::<Vec<_>>(),
        [
            "catalog:orders_dev",
            "schema:orders_dev.dev_local_user_bronze",
            "schema:orders_dev.dev_local_user_silver",
            "volume:orders_dev.dev_local_user_bronze.landing",
        ]
    );
    let jobs = by_name(&dev, "jobs", |j| &j["settings"]["name"]);
    assert_eq!(jobs[0].0, "[dev local-user] orders-nightly");
    assert_eq!(jobs[0].1["settings"]["schedule"]["pause_status"], "PAUSED");
    let pipelines = by_name(&dev, "pipelines", |p| &p["spec"]["name"]);
    assert_eq!(pipelines[0].0, "[dev local-user] orders-refine");
    assert_eq!(pipelines[0].1["spec"]["development"], true);
    assert_eq!(pipelines[0].1["spec"]["schema"], "dev_local_user_silver");
    assert!(
        !d.join(".brickform/local-prod").exists(),
        "dev never touched prod's workspace"
    );

    // promote: the prod plan, and the differences with what explains them.
    let (code, out, err) = run(
        d,
        &[
            "promote",
            "--from",
            "dev",
            "--to",
            "prod",
            "--detailed-exitcode",
        ],
        &[],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("Plan: 7 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    let table = &out[out.find("Differences between dev and prod").expect(&out)..];
    for (row, why) in [
        ("databricks_catalog.orders   name", "variable catalog"),
        (
            "databricks_job.nightly      email_notifications.on_failure",
            "variable ops_email",
        ),
        (
            "databricks_job.nightly      name",
            "development preset (name prefixed with \"[dev local-user] \")",
        ),
        (
            "databricks_job.nightly      schedule.pause_status",
            "development preset (schedule paused)",
        ),
        (
            "databricks_pipeline.refine  development",
            "development preset (pipelines in development mode)",
        ),
        (
            "databricks_pipeline.refine  schema",
            "follows databricks_schema.silver.name",
        ),
        (
            "databricks_schema.bronze    name",
            "development preset (schema name prefixed with \"dev_local_user_\")",
        ),
        (
            "databricks_volume.landing   schema_name",
            "follows databricks_schema.bronze.name",
        ),
    ] {
        let line = table
            .lines()
            .find(|l| l.trim_start().starts_with(row))
            .unwrap_or_else(|| panic!("no row {row:?}:\n{table}"));
        assert!(line.ends_with(why), "{line}");
    }
    assert!(!table.contains("NOTHING DECLARED EXPLAINS"), "{table}");

    // prod: applied from the same files, on its own workspace.
    run_ok(d, &["--env", "prod", "apply", "--auto-approve"], &[]);
    let prod = workspace(d, "prod");
    // The same objects, but for the declared differences: the catalog variable (and the
    // environment name in the code folder) and the development prefixes.
    let dev_as_prod: Vec<String> = objects(&dev)
        .into_iter()
        .map(|o| {
            o.replace("orders_dev", "orders_prod")
                .replace("dev_local_user_", "")
        })
        .collect();
    assert_eq!(dev_as_prod, objects(&prod));
    assert!(objects(&prod).contains(&"schema:orders_prod.bronze".to_string()));
    let jobs = by_name(&prod, "jobs", |j| &j["settings"]["name"]);
    assert_eq!(jobs[0].0, "orders-nightly");
    assert_ne!(jobs[0].1["settings"]["schedule"]["pause_status"], "PAUSED");
    assert_eq!(
        jobs[0].1["settings"]["email_notifications"]["on_failure"],
        serde_json::json!(["orders-oncall@example.com"])
    );
    let pipelines = by_name(&prod, "pipelines", |p| &p["spec"]["name"]);
    assert_eq!(pipelines[0].0, "orders-refine");
    assert_ne!(pipelines[0].1["spec"]["development"], true);
    assert_eq!(pipelines[0].1["spec"]["schema"], "silver");

    // Promoted: nothing left to do in prod, the differences stay explained.
    let (code, out, err) = run(
        d,
        &[
            "promote",
            "--from",
            "dev",
            "--to",
            "prod",
            "--detailed-exitcode",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");

    // prod is protected: its data objects are not destroyed without --allow-destroy.
    let (code, out, err) = run(d, &["--env", "prod", "destroy", "--auto-approve"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "databricks_catalog.orders would be destroyed in protected environment \"prod\""
        ),
        "{err}"
    );
    assert!(err.contains("--allow-destroy"), "{err}");
    // The kinds that declare themselves protected are named, as the provider registers them.
    assert!(
        err.contains("do not delete or replace objects of type databricks_catalog, databricks_ingestion_gateway, databricks_ingestion_pipeline, databricks_pipeline, databricks_registered_model, databricks_schema or databricks_volume: the data in them would go too."),
        "{err}"
    );
    assert_eq!(
        objects(&workspace(d, "prod")),
        objects(&prod),
        "nothing was deleted"
    );
    let out = run_ok(
        d,
        &[
            "--env",
            "prod",
            "destroy",
            "--auto-approve",
            "--allow-destroy",
        ],
        &[],
    );
    assert!(out.contains("0 left behind"), "{out}");
    run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert_eq!(
        objects(&workspace(d, "dev"))
            .iter()
            .filter(|o| !o.starts_with("workspace:"))
            .count(),
        0
    );
}

#[test]
fn production_refuses_development_settings() {
    let dir = common::config(&[(
        "main.bf.hcl",
        r#"
provider "databricks" {
  host = "local"
}
environment "prod" {
  mode = "production"
}
resource "databricks_pipeline" "p" {
  name        = "p"
  serverless  = true
  development = true
}
resource "databricks_job" "j" {
  name = "j"
  schedule {
    quartz_cron_expression = "0 0 3 * * ?"
    timezone_id            = "UTC"
    pause_status           = "PAUSED"
  }
}
"#,
    )]);
    let d = dir.path();
    // Fine outside production.
    run_ok(d, &["validate"], &[]);
    let (code, out, err) = run(d, &["--env", "prod", "validate"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("databricks_pipeline.p: development = true in a production environment"),
        "{err}"
    );
    assert!(
        err.contains(
            "databricks_job.j: schedule.pause_status = \"PAUSED\" in a production environment"
        ),
        "{err}"
    );
    assert!(
        err.contains("main.bf.hcl:11:3"),
        "located at the attribute: {err}"
    );
}

#[test]
fn a_development_state_does_not_take_over_what_another_state_made() {
    let dir = common::config(&[(
        "main.bf.hcl",
        r#"
provider "databricks" {
  host = "local"
}
environment "alice" {
  mode = "development"
}
environment "bob" {
  mode = "development"
}
# Catalogs are never prefixed: both states name the same one.
resource "databricks_catalog" "team" {
  name = "team_sandbox"
}
resource "databricks_job" "etl" {
  name = "etl"
}
"#,
    )]);
    let d = dir.path();
    run_ok(d, &["--env", "alice", "apply", "--auto-approve"], &[]);
    // bob is the same user here (one local workspace, one user), so the job names collide
    // too: both come out as "[dev local-user] etl".
    let (code, out, err) = run(d, &["--env", "bob", "plan"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("databricks_catalog.team: the name is taken by catalog team_sandbox (owner local-user@brickform.local)"),
        "{err}"
    );
    assert!(
        err.contains("databricks_job.etl: the name is taken by job")
            && err.contains("\"[dev local-user] etl\""),
        "{err}"
    );
    assert!(err.contains("import the existing object"), "{err}");
    // Who holds each: alice's state, by its environment.
    let err = words(&err);
    for address in ["databricks_catalog.team", "databricks_job.etl"] {
        assert!(
            err.contains(&format!(
                "the state of environment \"alice\" manages it as {address}"
            )),
            "{err}"
        );
    }
    // alice's own plan is unaffected.
    let (code, out, err) = run(d, &["--env", "alice", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Diagnostics as one line of words: the renderer wraps long lines and frames them.
fn words(text: &str) -> String {
    text.replace(['│', '╭', '╮', '╰', '╯', '─', '·', '×'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
