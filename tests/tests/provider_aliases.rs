//! Two workspaces in one configuration: the default provider configuration and an aliased
//! one (`provider "databricks" { alias = "prod" … }`), each served by its own local
//! workspace. Resources, data sources and a module choose one with `provider = …` and
//! `providers = { … }`; each object lands in its workspace alone, the next plan is empty,
//! and destroy empties both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, objects, run, workspace_dump};
use std::path::Path;

const CONFIG: &str = r#"
variable "dev_host" {}
variable "prod_host" {}

provider "databricks" {
  host = var.dev_host
}

provider "databricks" {
  alias = "prod"
  host  = var.prod_host
}

data "databricks_current_user" "prod_me" {
  provider = databricks.prod
}

resource "databricks_catalog" "dev" {
  name = "sales_dev"
}

resource "databricks_catalog" "prod" {
  provider = databricks.prod
  name     = "sales_prod"
  comment  = "owned by ${data.databricks_current_user.prod_me.user_name}"
}

module "prod_area" {
  source    = "./modules/area"
  providers = { databricks = databricks.prod }
  catalog   = databricks_catalog.prod.name
}

module "dev_area" {
  source  = "./modules/area"
  catalog = databricks_catalog.dev.name
}

resource "databricks_workspace_file" "sql" {
  provider       = databricks.prod
  path           = "/Shared/aliases/refine.sql"
  content_base64 = base64encode("CREATE MATERIALIZED VIEW x AS SELECT 1")
}

resource "databricks_pipeline" "refine" {
  provider   = databricks.prod
  name       = "prod_refine"
  catalog    = databricks_catalog.prod.name
  schema     = module.prod_area.schema
  serverless = true
  library {
    file { path = databricks_workspace_file.sql.path }
  }
}

resource "databricks_job" "nightly" {
  provider = databricks.prod
  name     = "prod_nightly"
  task {
    task_key = "refine"
    pipeline_task { pipeline_id = databricks_pipeline.refine.id }
  }
}
"#;

const AREA: &str = r#"
variable "catalog" { type = string }
resource "databricks_schema" "raw" {
  catalog_name = var.catalog
  name         = "raw"
}
output "schema" { value = databricks_schema.raw.name }
"#;

fn both(dir: &Path, dev: &Serve, prod: &Serve, args: &[&str]) -> (i32, String, String) {
    let dev_host = format!("dev_host={}", dev.url);
    let prod_host = format!("prod_host={}", prod.url);
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--var", &dev_host, "--var", &prod_host]);
    run(dir, &a, &[("DATABRICKS_TOKEN", "e2e-token")])
}

fn both_ok(dir: &Path, dev: &Serve, prod: &Serve, args: &[&str]) -> String {
    let (code, out, err) = both(dir, dev, prod, args);
    assert_eq!(code, 0, "brickform {args:?}\n{out}\n{err}");
    out
}

#[test]
fn each_alias_applies_to_its_own_workspace() {
    let (dev_data, prod_data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dev = Serve::start(dev_data.path(), &[]);
    let prod = Serve::start(prod_data.path(), &[]);
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    std::fs::create_dir_all(d.join("modules/area")).unwrap();
    std::fs::write(d.join("modules/area/main.bf.hcl"), AREA).unwrap();

    let json = both_ok(d, &dev, &prod, &["plan", "--json"]);
    let plan = common::valid_plan_json(&common::schema(), "two workspaces", &json);
    assert_eq!(
        plan["configuration"]["provider_config"]["databricks.prod"]["alias"],
        "prod"
    );
    let out = both_ok(d, &dev, &prod, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 7 added"), "{out}");
    let on = |data: &Path| objects(&workspace_dump(data));
    assert_eq!(
        on(dev_data.path()),
        ["catalog:sales_dev", "schema:sales_dev.raw"]
    );
    assert_eq!(
        on(prod_data.path()),
        [
            "catalog:sales_prod",
            "schema:sales_prod.raw",
            "workspace:/Shared/aliases/refine.sql"
        ]
    );
    let jobs = |data: &Path| {
        workspace_dump(data)["jobs"]
            .as_object()
            .map_or(0, |j| j.len())
    };
    assert_eq!((jobs(dev_data.path()), jobs(prod_data.path())), (0, 1));

    // `brickform run` follows the job in the workspace it was made in.
    let out = both_ok(d, &dev, &prod, &["run", "databricks_job.nightly"]);
    assert!(out.contains("succeeded"), "{out}");

    // State records which configuration each object belongs to.
    let state = std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    let provider_of = |address: &str| {
        state["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["address"] == address)
            .map(|r| r["provider"].clone())
            .unwrap()
    };
    assert_eq!(provider_of("databricks_catalog.prod"), "databricks.prod");
    assert_eq!(
        provider_of("module.prod_area.databricks_schema.raw"),
        "databricks.prod"
    );
    assert_eq!(
        provider_of("module.dev_area.databricks_schema.raw"),
        "databricks"
    );

    let (code, out, err) = both(d, &dev, &prod, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "no changes after apply\n{out}{err}");

    // A change made in the prod workspace is found there, and only there.
    let (status, _) = common::http_auth(
        "PATCH",
        &format!("{}/api/2.1/unity-catalog/catalogs/sales_prod", prod.url),
        Some(br#"{"comment":"edited by hand"}"#),
        "application/json",
        "e2e-token",
    );
    assert_eq!(status, 200);
    let out = both_ok(d, &dev, &prod, &["plan"]);
    assert!(
        out.contains("# databricks_catalog.prod will be updated in-place"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{out}"
    );

    let out = both_ok(d, &dev, &prod, &["destroy", "--auto-approve"]);
    assert!(out.contains("7 destroyed, 0 left behind"), "{out}");
    assert!(on(dev_data.path()).is_empty() && on(prod_data.path()).is_empty());
}

#[test]
fn an_undeclared_alias_is_an_error_at_validate() {
    let dir = config(&[(
        "main.bf.hcl",
        r#"
resource "databricks_catalog" "c" {
  provider = databricks.staging
  name     = "c"
}
"#,
    )]);
    let (code, _, err) = run(dir.path(), &["validate"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Provider configuration not present"), "{err}");
    assert!(
        err.contains("provider \"databricks\" { alias = \"staging\""),
        "{err}"
    );
}
