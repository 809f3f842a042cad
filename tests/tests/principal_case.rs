//! One user written two ways is one principal: the service answers a user in the spelling
//! SCIM holds for it (the emulator's `principals_as_scim_holds`, on by default), and a
//! configuration that names the user in another case applies, plans nothing afterwards,
//! changes and is destroyed, with no change set that both adds and removes privileges for
//! that user (Terraform provider issue #3654). Grants (`databricks_grants`,
//! `databricks_grant`), permissions, a secret ACL and a job's `run_as`, each way round.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, served as bf, served_ok as bf_ok, served_plan_is_empty};
use serde_json::{Value, json};

const CONFIG: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "c" {
  name          = "casing"
  force_destroy = true
}

resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}

resource "databricks_grants" "c" {
  catalog = databricks_catalog.c.name
  grant {
    principal  = "WHO"
    privileges = CATALOG_PRIVILEGES
  }
  grant {
    principal  = "account users"
    privileges = ["USE_CATALOG"]
  }
}

resource "databricks_grant" "s" {
  schema     = databricks_schema.s.full_name
  principal  = "WHO"
  privileges = SCHEMA_PRIVILEGES
}

resource "databricks_notebook" "etl" {
  path           = "/Shared/casing/etl.py"
  content_base64 = base64encode("print(1)")
}

resource "databricks_job" "j" {
  name = "casing_job"
  run_as {
    user_name = "WHO"
  }
  task {
    task_key = "etl"
    notebook_task {
      notebook_path = databricks_notebook.etl.path
    }
  }
}

resource "databricks_permissions" "job" {
  job_id = databricks_job.j.id
  access_control {
    user_name        = "WHO"
    permission_level = "JOB_LEVEL"
  }
}

resource "databricks_secret_scope" "app" {
  name = "casing"
}

resource "databricks_secret_acl" "who" {
  scope      = databricks_secret_scope.app.name
  principal  = "WHO"
  permission = "SECRET_LEVEL"
}
"#;

fn text(who: &str, step: usize) -> String {
    let (catalog, schema, job, secret) = match step {
        0 => (
            r#"["USE_CATALOG"]"#,
            r#"["USE_SCHEMA"]"#,
            "CAN_VIEW",
            "READ",
        ),
        _ => (
            r#"["USE_CATALOG", "CREATE_SCHEMA"]"#,
            r#"["USE_SCHEMA", "SELECT"]"#,
            "CAN_MANAGE_RUN",
            "WRITE",
        ),
    };
    CONFIG
        .replace("WHO", who)
        .replace("CATALOG_PRIVILEGES", catalog)
        .replace("SCHEMA_PRIVILEGES", schema)
        .replace("JOB_LEVEL", job)
        .replace("SECRET_LEVEL", secret)
}

/// Every grants PATCH sent so far; none may add and remove for one user (in any spelling),
/// nor name one user twice.
fn grants_patches_are_one_change_per_user(serve: &Serve, at: &str) -> usize {
    let log = serve.ok(
        "GET",
        "/__emulator/requests?path=/api/2.1/unity-catalog/permissions/.*&method=PATCH",
        None,
    );
    let patches = log["requests"].as_array().unwrap();
    for p in patches {
        let changes = p["body"]["changes"].as_array().unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for c in changes {
            let who = c["principal"].as_str().unwrap().to_lowercase();
            assert!(seen.insert(who.clone()), "{at}: {who} named twice in {p}");
            assert!(
                c.get("add").is_none() || c.get("remove").is_none(),
                "{at}: one change both adds and removes for {who}: {p}"
            );
        }
    }
    patches.len()
}

/// The SCIM user `scim` and a configuration naming it `written`.
fn one_user_written_another_way(scim: &str, written: &str) {
    let dir = config(&[("main.bf.hcl", &text(written, 0))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.ok(
        "POST",
        "/api/2.0/preview/scim/v2/Users",
        Some(json!({ "userName": scim })),
    );
    let at = format!("SCIM {scim}, configuration {written}");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 9 added"), "{at}: {out}");
    // The workspace holds the user in SCIM's spelling, under one principal.
    let grants = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/permissions/catalog/casing",
        None,
    );
    let held: std::collections::BTreeMap<&str, &Value> = grants["privilege_assignments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["principal"].as_str().unwrap(), &a["privileges"]))
        .collect();
    assert_eq!(
        held,
        [
            ("account users", &json!(["USE_CATALOG"])),
            (scim, &json!(["USE_CATALOG"])),
        ]
        .into_iter()
        .collect(),
        "{at}"
    );
    let acls = serve.ok("GET", "/api/2.0/secrets/acls/list?scope=casing", None);
    assert!(
        acls["items"]
            .as_array()
            .unwrap()
            .contains(&json!({"principal": scim, "permission": "READ"})),
        "{at}: {acls}"
    );
    served_plan_is_empty(d, &serve);
    let first = grants_patches_are_one_change_per_user(&serve, &at);
    assert_eq!(first, 2, "{at}: one PATCH per grants resource");

    // Imported under another spelling of the user: no replace ("the name is taken"), no
    // grant taken off and given back, nothing planned.
    for address in [
        "databricks_grants.c",
        "databricks_grant.s",
        "databricks_secret_acl.who",
    ] {
        bf_ok(d, &serve, &["state", "rm", address]);
    }
    bf_ok(
        d,
        &serve,
        &["import", "databricks_grants.c", "catalog/casing"],
    );
    let upper = format!("schema/casing.raw/{}", scim.to_uppercase());
    bf_ok(d, &serve, &["import", "databricks_grant.s", &upper]);
    let acl = format!("casing|||{scim}");
    bf_ok(d, &serve, &["import", "databricks_secret_acl.who", &acl]);
    served_plan_is_empty(d, &serve);

    // A change of every privilege and level: in place, and nothing planned after it.
    std::fs::write(d.join("main.bf.hcl"), text(written, 1)).unwrap();
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{at}: {plan}\n{err}");
    assert!(
        plan.contains("Plan: 0 to add, 4 to change, 0 to destroy."),
        "{at}: {plan}"
    );
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(
        out.contains("Resources: 0 added, 4 changed, 0 destroyed."),
        "{at}: {out}"
    );
    served_plan_is_empty(d, &serve);
    let grants = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/permissions/schema/casing.raw",
        None,
    );
    assert_eq!(
        grants["privilege_assignments"],
        json!([{"principal": scim, "privileges": ["SELECT", "USE_SCHEMA"]}]),
        "{at}"
    );
    let patches = grants_patches_are_one_change_per_user(&serve, &at);
    assert_eq!(patches, first + 2, "{at}: one PATCH per grants resource");

    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("0 left behind"), "{at}: {out}");
    grants_patches_are_one_change_per_user(&serve, &at);
    let dump: Value = serve.dump();
    assert_eq!(dump["grants"], json!({}), "{at}: {}", dump["grants"]);
}

#[test]
fn a_user_scim_holds_in_mixed_case_named_in_lower_case_is_one_principal() {
    one_user_written_another_way("Mixed.Case@Example.com", "mixed.case@example.com");
}

#[test]
fn a_user_scim_holds_in_lower_case_named_in_mixed_case_is_one_principal() {
    one_user_written_another_way("mixed.case@example.com", "Mixed.Case@Example.com");
}
