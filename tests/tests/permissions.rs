//! Object permissions and secret ACLs end to end against `brickform local serve`: what
//! apply writes on a job, a pipeline, a notebook, a directory, a workspace file and a SQL
//! warehouse made in the same configuration; drift planned back as one update while
//! inherited entries are not drift; a destroy resetting the object; permissions found where
//! a create would write asking for an import; what `validate` refuses; the workspace's
//! token and password permissions and those of objects made elsewhere; and secret ACLs
//! applied, drifted, imported and destroyed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, run};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};
use std::collections::BTreeSet;

const ME: &str = "local-user@brickform.local";
const SP: &str = "7e1b2c3d-0000-4000-8000-00000000c1c1";

/// `(principal, level, inherited)` of every entry the service lists for an object
/// (`/jobs/123`).
fn acl(serve: &Serve, id: &str) -> BTreeSet<(String, String, bool)> {
    let got = serve.ok("GET", &format!("/api/2.0/permissions{id}"), None);
    let mut out = BTreeSet::new();
    for e in got["access_control_list"].as_array().unwrap() {
        let who = ["user_name", "group_name", "service_principal_name"]
            .iter()
            .find_map(|f| e[*f].as_str())
            .unwrap()
            .to_string();
        for p in e["all_permissions"].as_array().unwrap() {
            out.insert((
                who.clone(),
                p["permission_level"].as_str().unwrap().to_string(),
                p["inherited"].as_bool().unwrap(),
            ));
        }
    }
    out
}

/// The direct entries of an object: `(principal, level)`.
fn direct(serve: &Serve, id: &str) -> BTreeSet<(String, String)> {
    acl(serve, id)
        .into_iter()
        .filter(|(_, _, inherited)| !inherited)
        .map(|(p, l, _)| (p, l))
        .collect()
}

fn pairs(entries: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    entries
        .iter()
        .map(|(p, l)| (p.to_string(), l.to_string()))
        .collect()
}

fn state_id(d: &std::path::Path, serve: &Serve, address: &str) -> String {
    let shown: Value =
        serde_json::from_str(&bf_ok(d, serve, &["state", "show", address, "--json"])).unwrap();
    shown["id"].as_str().unwrap().to_string()
}

/// The changes a JSON plan makes (no-ops left out), by address.
fn planned(d: &std::path::Path, serve: &Serve) -> Vec<(String, Value)> {
    let (_, out, err) = bf(d, serve, &["plan", "--json"]);
    let j: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}\n{err}"));
    j["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"]["actions"] != json!(["no-op"]))
        .map(|c| (c["address"].as_str().unwrap().to_string(), c.clone()))
        .collect()
}

/// `(principal, level)` of a planned `access_control`.
fn declared(after: &Value) -> BTreeSet<(String, String)> {
    after["access_control"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let who = ["user_name", "group_name", "service_principal_name"]
                .iter()
                .find_map(|f| e[*f].as_str())
                .unwrap();
            (
                who.to_string(),
                e["permission_level"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const OBJECTS: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "c" {
  name          = "perm_cat"
  force_destroy = true
}

resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}

resource "databricks_directory" "team" {
  path = "/Shared/team"
}

resource "databricks_notebook" "etl" {
  path           = "${databricks_directory.team.path}/etl.py"
  content_base64 = base64encode("print(1)")
}

resource "databricks_workspace_file" "conf" {
  path           = "${databricks_directory.team.path}/conf.json"
  content_base64 = base64encode("{}")
}

resource "databricks_pipeline" "p" {
  name       = "perm_pipeline"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = true
  library {
    notebook {
      path = databricks_notebook.etl.path
    }
  }
}

resource "databricks_job" "j" {
  name = "perm_job"
  task {
    task_key = "etl"
    notebook_task {
      notebook_path = databricks_notebook.etl.path
    }
  }
}

resource "databricks_sql_endpoint" "w" {
  name         = "perm_wh"
  cluster_size = "2X-Small"
}
"#;

const PERMISSIONS: &str = r#"
resource "databricks_permissions" "job" {
  job_id = databricks_job.j.id
  access_control {
    group_name       = "users"
    permission_level = "CAN_VIEW"
  }
  access_control {
    group_name       = "eng"
    permission_level = "CAN_MANAGE_RUN"
  }
  access_control {
    service_principal_name = "7e1b2c3d-0000-4000-8000-00000000c1c1"
    permission_level       = "CAN_MANAGE"
  }
}

resource "databricks_permissions" "pipeline" {
  pipeline_id = databricks_pipeline.p.id
  access_control {
    group_name       = "eng"
    permission_level = "CAN_RUN"
  }
}

resource "databricks_permissions" "notebook" {
  notebook_path = databricks_notebook.etl.path
  access_control {
    group_name       = "eng"
    permission_level = "CAN_EDIT"
  }
}

resource "databricks_permissions" "folder" {
  directory_id = databricks_directory.team.object_id
  access_control {
    group_name       = "users"
    permission_level = "CAN_READ"
  }
}

resource "databricks_permissions" "file" {
  workspace_file_path = databricks_workspace_file.conf.path
  access_control {
    group_name       = "eng"
    permission_level = "CAN_READ"
  }
}

resource "databricks_permissions" "warehouse" {
  sql_endpoint_id = databricks_sql_endpoint.w.id
  access_control {
    group_name       = "users"
    permission_level = "CAN_USE"
  }
  access_control {
    group_name       = "eng"
    permission_level = "CAN_MONITOR"
  }
}
"#;

#[test]
fn permissions_on_each_object_type_are_applied_drift_is_planned_back_and_destroy_resets() {
    let dir = config(&[("main.bf.hcl", OBJECTS), ("perms.bf.hcl", PERMISSIONS)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("eng");
    serve.service_principal(SP);

    // What the plan says each object will hold.
    let plan = planned(d, &serve);
    let after: Vec<(String, BTreeSet<(String, String)>)> = plan
        .iter()
        .filter(|(a, _)| a.starts_with("databricks_permissions."))
        .map(|(a, c)| (a.clone(), declared(&c["change"]["after"])))
        .collect();
    assert_eq!(after.len(), 6, "{plan:?}");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Apply complete!"), "{out}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // The blocks' order means nothing: reversed, they plan no change.
    let users_first = "  access_control {\n    group_name       = \"users\"\n    permission_level = \"CAN_VIEW\"\n  }\n";
    let reordered = PERMISSIONS.replacen(users_first, "", 1).replacen(
        "resource \"databricks_permissions\" \"pipeline\"",
        "PLACEHOLDER",
        1,
    );
    let reordered = reordered
        .replacen(
            "    permission_level       = \"CAN_MANAGE\"\n  }\n}\n",
            &format!("    permission_level       = \"CAN_MANAGE\"\n  }}\n{users_first}}}\n"),
            1,
        )
        .replacen(
            "PLACEHOLDER",
            "resource \"databricks_permissions\" \"pipeline\"",
            1,
        );
    assert_ne!(reordered, PERMISSIONS);
    std::fs::write(d.join("perms.bf.hcl"), &reordered).unwrap();
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(
        code, 0,
        "reordered blocks plan a change:\n{reordered}\n{out}\n{err}"
    );

    // The service holds what the plan showed; jobs, pipelines and warehouses keep their
    // owner besides.
    let mut ids = std::collections::BTreeMap::new();
    for (address, want) in &after {
        let id = state_id(d, &serve, address);
        let mut want = want.clone();
        if ["job", "pipeline", "warehouse"]
            .iter()
            .any(|k| address.ends_with(&format!(".{k}")))
        {
            want.insert((ME.to_string(), "IS_OWNER".to_string()));
        }
        assert_eq!(direct(&serve, &id), want, "{address} {id}");
        ids.insert(
            address
                .trim_start_matches("databricks_permissions.")
                .to_string(),
            id,
        );
    }
    assert!(ids["job"].starts_with("/jobs/"), "{ids:?}");
    assert!(ids["pipeline"].starts_with("/pipelines/"), "{ids:?}");
    assert!(ids["notebook"].starts_with("/notebooks/"), "{ids:?}");
    assert!(ids["folder"].starts_with("/directories/"), "{ids:?}");
    assert!(ids["file"].starts_with("/files/"), "{ids:?}");
    assert!(ids["warehouse"].starts_with("/sql/warehouses/"), "{ids:?}");
    // The notebook and the file inherit the folder's entry: not drift (the plan was empty),
    // and not written on them.
    assert!(
        acl(&serve, &ids["notebook"]).contains(&("users".into(), "CAN_READ".into(), true)),
        "{:?}",
        acl(&serve, &ids["notebook"])
    );
    let log = serve.ok(
        "GET",
        "/__emulator/requests?method=PUT&path=/api/2.0/permissions/.*",
        None,
    );
    let puts = log["requests"].as_array().unwrap();
    assert_eq!(puts.len(), 6, "{log}");
    let job_put = puts
        .iter()
        .find(|r| r["path"] == format!("/api/2.0/permissions{}", ids["job"]))
        .unwrap();
    let sent: BTreeSet<String> = job_put["body"]["access_control_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        sent,
        [
            json!({"group_name": "eng", "permission_level": "CAN_MANAGE_RUN"}),
            json!({"group_name": "users", "permission_level": "CAN_VIEW"}),
            json!({"service_principal_name": SP, "permission_level": "CAN_MANAGE"}),
            json!({"user_name": ME, "permission_level": "IS_OWNER"}),
        ]
        .iter()
        .map(Value::to_string)
        .collect(),
        "{job_put}"
    );

    // Outside brickform: an entry added on the notebook.
    serve.group("analysts");
    serve.ok(
        "PATCH",
        &format!("/api/2.0/permissions{}", ids["notebook"]),
        Some(json!({"access_control_list": [{"group_name": "analysts", "permission_level": "CAN_RUN"}]})),
    );
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("# databricks_permissions.notebook will be updated in-place"),
        "{plan}"
    );
    assert!(plan.contains("\"analysts\""), "{plan}");
    assert!(
        plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    let changes = planned(d, &serve);
    assert_eq!(changes.len(), 1, "{changes:?}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        direct(&serve, &ids["notebook"]),
        pairs(&[("eng", "CAN_EDIT")])
    );

    // Outside brickform: an entry taken from the warehouse (its owner kept).
    serve.ok(
        "PUT",
        &format!("/api/2.0/permissions{}", ids["warehouse"]),
        Some(json!({"access_control_list": [{"group_name": "eng", "permission_level": "CAN_MONITOR"}]})),
    );
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("# databricks_permissions.warehouse will be updated in-place")
            && plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    let changes = planned(d, &serve);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        declared(&changes[0].1["change"]["after"]),
        pairs(&[("eng", "CAN_MONITOR"), ("users", "CAN_USE")])
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        direct(&serve, &ids["warehouse"]),
        pairs(&[
            ("eng", "CAN_MONITOR"),
            ("users", "CAN_USE"),
            (ME, "IS_OWNER")
        ])
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // Destroying the permissions resets their objects: what was added since goes too, the
    // owner stays, the objects stay.
    serve.ok(
        "PATCH",
        &format!("/api/2.0/permissions{}", ids["job"]),
        Some(json!({"access_control_list": [{"group_name": "analysts", "permission_level": "CAN_VIEW"}]})),
    );
    let targets: Vec<String> = ["job", "pipeline", "notebook", "folder", "file", "warehouse"]
        .iter()
        .flat_map(|k| {
            [
                "--target".to_string(),
                format!("databricks_permissions.{k}"),
            ]
        })
        .collect();
    let mut args = vec!["destroy", "--auto-approve"];
    args.extend(targets.iter().map(String::as_str));
    let out = bf_ok(d, &serve, &args);
    assert!(out.contains("6 destroyed"), "{out}");
    for k in ["job", "pipeline", "warehouse"] {
        assert_eq!(direct(&serve, &ids[k]), pairs(&[(ME, "IS_OWNER")]), "{k}");
    }
    for k in ["notebook", "folder", "file"] {
        assert_eq!(direct(&serve, &ids[k]), pairs(&[]), "{k}");
    }
    assert!(
        acl(&serve, &ids["notebook"]).contains(&("admins".into(), "CAN_MANAGE".into(), true)),
        "admins still manage it"
    );
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("0 left behind"), "{out}");
    assert_eq!(serve.dump()["permissions"], json!({}));
}

/// An owner named in the configuration is the object's; destroyed, the object is its
/// creator's again.
#[test]
fn a_declared_owner_takes_the_job_and_destroy_gives_it_back_to_its_creator() {
    let text = format!(
        "{OBJECTS}\nresource \"databricks_permissions\" \"job\" {{\n  job_id = databricks_job.j.id\n  access_control {{\n    service_principal_name = \"{SP}\"\n    permission_level       = \"IS_OWNER\"\n  }}\n  access_control {{\n    user_name        = \"{ME}\"\n    permission_level = \"CAN_MANAGE\"\n  }}\n}}\n"
    );
    let dir = config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.service_principal(SP);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let id = state_id(d, &serve, "databricks_permissions.job");
    assert_eq!(
        direct(&serve, &id),
        pairs(&[(SP, "IS_OWNER"), (ME, "CAN_MANAGE")])
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    bf_ok(
        d,
        &serve,
        &[
            "destroy",
            "--auto-approve",
            "--target",
            "databricks_permissions.job",
        ],
    );
    assert_eq!(direct(&serve, &id), pairs(&[(ME, "IS_OWNER")]));
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

/// An unknown principal is refused by the service with its own words; what else the apply
/// made is kept.
#[test]
fn an_unknown_principal_fails_apply_with_the_services_words() {
    let text = format!(
        "{OBJECTS}\nresource \"databricks_permissions\" \"job\" {{\n  job_id = databricks_job.j.id\n  access_control {{\n    group_name       = \"no-such-group\"\n    permission_level = \"CAN_VIEW\"\n  }}\n}}\n"
    );
    let dir = config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Principal: GroupName(no-such-group) does not exist"),
        "{err}"
    );
    let state = bf_ok(d, &serve, &["state", "list"]);
    assert!(state.contains("databricks_job.j"), "{state}");
    assert!(!state.contains("databricks_permissions"), "{state}");
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

/// Permissions already on an object where a create would write them ask for an import; the
/// provider's import id brings them under management.
#[test]
fn permissions_found_where_a_create_would_write_are_imported_not_replaced_unseen() {
    let dir = config(&[("main.bf.hcl", OBJECTS)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("eng");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let job = state_id(d, &serve, "databricks_job.j");
    serve.ok(
        "PATCH",
        &format!("/api/2.0/permissions/jobs/{job}"),
        Some(json!({"access_control_list": [{"group_name": "eng", "permission_level": "CAN_MANAGE"}]})),
    );
    let text = format!(
        "{OBJECTS}\nresource \"databricks_permissions\" \"job\" {{\n  job_id = databricks_job.j.id\n  access_control {{\n    group_name       = \"users\"\n    permission_level = \"CAN_VIEW\"\n  }}\n}}\n"
    );
    std::fs::write(d.join("main.bf.hcl"), &text).unwrap();
    let (code, out, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(&format!("permissions on /jobs/{job}")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "brickform import databricks_permissions.job /jobs/{job}"
        )),
        "{err}"
    );
    assert_eq!(
        direct(&serve, &format!("/jobs/{job}")),
        pairs(&[("eng", "CAN_MANAGE"), (ME, "IS_OWNER")]),
        "nothing was replaced"
    );
    let (code, _, err) = bf(d, &serve, &["import", "databricks_permissions.job", &job]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("/TYPE/OBJECT_ID"), "{err}");
    bf_ok(
        d,
        &serve,
        &[
            "import",
            "databricks_permissions.job",
            &format!("/jobs/{job}"),
        ],
    );
    let changes = planned(d, &serve);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].1["change"]["actions"], json!(["update"]));
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        direct(&serve, &format!("/jobs/{job}")),
        pairs(&[("users", "CAN_VIEW"), (ME, "IS_OWNER")])
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

#[test]
fn validate_refuses_levels_owners_and_objects_the_service_would_refuse() {
    let entry = |who: &str, level: &str| {
        format!("  access_control {{\n    {who}\n    permission_level = \"{level}\"\n  }}\n")
    };
    let resource = |target: &str, entries: &str| {
        format!("resource \"databricks_permissions\" \"p\" {{\n{target}{entries}}}\n")
    };
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            resource(
                "  job_id = \"1\"\n",
                &entry("group_name = \"users\"", "CAN_RUN"),
            ),
            vec![
                "permission_level \"CAN_RUN\" is not supported with job_id objects",
                "allowed levels: CAN_MANAGE, CAN_MANAGE_RUN, CAN_VIEW, IS_OWNER",
                "main.bf.hcl:5:",
            ],
        ),
        (
            resource(
                "  notebook_path = \"/Shared/nb\"\n",
                &entry("group_name = \"users\"", "can_read"),
            ),
            vec!["did you mean \"CAN_READ\"?"],
        ),
        (
            resource(
                "  sql_endpoint_id = \"abc\"\n",
                &format!(
                    "{}{}",
                    entry("user_name = \"a@x.com\"", "IS_OWNER"),
                    entry("user_name = \"b@x.com\"", "IS_OWNER")
                ),
            ),
            vec!["two owners: a SQL warehouse has exactly one IS_OWNER"],
        ),
        (
            resource(
                "  pipeline_id = \"p\"\n",
                &entry("group_name = \"eng\"", "IS_OWNER"),
            ),
            vec!["a group cannot own a pipeline"],
        ),
        (
            resource("", &entry("group_name = \"users\"", "CAN_READ")),
            vec![
                "no object: the permissions are on nothing",
                "set one of job_id, pipeline_id, notebook_id",
            ],
        ),
        (
            resource(
                "  job_id      = \"1\"\n  pipeline_id = \"p\"\n",
                &entry("group_name = \"users\"", "CAN_VIEW"),
            ),
            vec![
                "job_id and pipeline_id both set: permissions are on one object",
                "main.bf.hcl:3:",
            ],
        ),
        (
            resource(
                "  directory_path = \"/Shared\"\n",
                &entry("group_name = \"admins\"", "CAN_MANAGE"),
            ),
            vec!["it is not possible to modify admin permissions for directory resources"],
        ),
        (
            resource(
                "  serving_endpoint_id = \"c\"\n",
                &entry("group_name = \"users\"", "CAN_READ"),
            ),
            vec![
                "permission_level \"CAN_READ\" is not supported with serving_endpoint_id objects",
                "allowed levels: CAN_MANAGE, CAN_QUERY, CAN_VIEW",
            ],
        ),
        (
            resource(
                "  authorization = \"passwords\"\n",
                &entry("group_name = \"users\"", "CAN_MANAGE"),
            ),
            vec![
                "permission_level \"CAN_MANAGE\" is not supported with authorization = \"passwords\"",
                "allowed levels: CAN_USE",
            ],
        ),
        (
            resource(
                "  authorization = \"pat\"\n",
                &entry("group_name = \"users\"", "CAN_USE"),
            ),
            vec![
                "\"pat\" is not one of \"tokens\" or \"passwords\"",
                "main.bf.hcl:2:",
            ],
        ),
        (
            "resource \"databricks_secret_acl\" \"a\" {\n  scope      = \"s\"\n  principal  = \"users\"\n  permission = \"OWNER\"\n}\n".to_string(),
            vec!["\"OWNER\" is not allowed"],
        ),
    ];
    for (text, expected) in &cases {
        let dir = config(&[("main.bf.hcl", text)]);
        let (code, out, err) = run(dir.path(), &["validate"], &[]);
        assert_eq!(code, 1, "{text}\n{out}{err}");
        for e in expected {
            assert!(err.contains(e), "{e:?} missing for\n{text}\n{err}");
        }
    }
    // Blocks in another order are the same permissions: the order means nothing.
    let text = resource(
        "  job_id = \"1\"\n",
        &format!(
            "{}{}",
            entry("group_name = \"users\"", "CAN_VIEW"),
            entry("group_name = \"eng\"", "CAN_MANAGE_RUN")
        ),
    );
    let dir = config(&[("main.bf.hcl", &text)]);
    let (code, out, err) = run(dir.path(), &["validate"], &[]);
    assert_eq!(code, 0, "{out}{err}");
}

const SECRETS: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_secret_scope" "app" {
  name = "app"
}

resource "databricks_secret_acl" "eng" {
  scope      = databricks_secret_scope.app.name
  principal  = "eng"
  permission = "READ"
}

resource "databricks_secret_acl" "users" {
  scope      = databricks_secret_scope.app.name
  principal  = "users"
  permission = "WRITE"
}
"#;

fn scope_acls(serve: &Serve, scope: &str) -> BTreeSet<(String, String)> {
    let got = serve.ok(
        "GET",
        &format!("/api/2.0/secrets/acls/list?scope={scope}"),
        None,
    );
    got["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["principal"].as_str().unwrap().to_string(),
                i["permission"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn secret_acls_are_applied_drift_is_planned_back_imported_and_destroyed() {
    let dir = config(&[("main.bf.hcl", SECRETS)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("eng");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        scope_acls(&serve, "app"),
        pairs(&[("eng", "READ"), ("users", "WRITE"), (ME, "MANAGE")])
    );
    assert_eq!(
        state_id(d, &serve, "databricks_secret_acl.eng"),
        "app|||eng"
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // Outside brickform: eng given more, users' ACL deleted.
    serve.ok(
        "POST",
        "/api/2.0/secrets/acls/put",
        Some(json!({"scope": "app", "principal": "eng", "permission": "MANAGE"})),
    );
    serve.ok(
        "POST",
        "/api/2.0/secrets/acls/delete",
        Some(json!({"scope": "app", "principal": "users"})),
    );
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("# databricks_secret_acl.eng will be updated in-place")
            && plan.contains("~ permission = \"MANAGE\" -> \"READ\""),
        "{plan}"
    );
    assert!(
        plan.contains("# databricks_secret_acl.users will be created"),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 1 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        scope_acls(&serve, "app"),
        pairs(&[("eng", "READ"), ("users", "WRITE"), (ME, "MANAGE")])
    );

    // An ACL someone gave on a scope brickform does not manage, imported by the provider's
    // id.
    serve.ok(
        "POST",
        "/api/2.0/secrets/scopes/create",
        Some(json!({"scope": "ext"})),
    );
    serve.ok(
        "POST",
        "/api/2.0/secrets/acls/put",
        Some(json!({"scope": "ext", "principal": "eng", "permission": "WRITE"})),
    );
    let text = format!(
        "{SECRETS}\nresource \"databricks_secret_acl\" \"ext\" {{\n  scope      = \"ext\"\n  principal  = \"eng\"\n  permission = \"READ\"\n}}\n"
    );
    std::fs::write(d.join("main.bf.hcl"), &text).unwrap();
    let (code, out, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("brickform import databricks_secret_acl.ext 'ext|||eng'")
            || err.contains("brickform import databricks_secret_acl.ext ext|||eng"),
        "{err}"
    );
    let (code, _, err) = bf(
        d,
        &serve,
        &["import", "databricks_secret_acl.ext", "ext|eng"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("SCOPE|||PRINCIPAL"), "{err}");
    bf_ok(
        d,
        &serve,
        &["import", "databricks_secret_acl.ext", "ext|||eng"],
    );
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("~ permission = \"WRITE\" -> \"READ\"")
            && plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        scope_acls(&serve, "ext"),
        pairs(&[("eng", "READ"), (ME, "MANAGE")])
    );

    // Destroy deletes the ACLs it holds; the scope it does not manage stays, with the
    // caller's MANAGE.
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("0 left behind"), "{out}");
    assert_eq!(scope_acls(&serve, "ext"), pairs(&[(ME, "MANAGE")]));
    assert!(serve.dump()["secret_scopes"].get("app").is_none());
}

#[test]
fn destroying_the_callers_own_acl_leaves_it_able_to_manage_the_scope() {
    let dir = config(&[("main.bf.hcl", SECRETS)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.ok(
        "POST",
        "/api/2.0/secrets/scopes/create",
        Some(serde_json::json!({"scope": "ext"})),
    );
    // The caller's own ACL on a scope made outside, lowered to READ by the configuration.
    std::fs::write(
        d.join("main.bf.hcl"),
        format!(
            "variable \"host\" {{\n  type = string\n}}\nprovider \"databricks\" {{\n  host = var.host\n}}\nimport {{\n  to = databricks_secret_acl.me\n  id = \"ext|||{ME}\"\n}}\nresource \"databricks_secret_acl\" \"me\" {{\n  scope      = \"ext\"\n  principal  = \"{ME}\"\n  permission = \"READ\"\n}}\n"
        ),
    )
    .unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(scope_acls(&serve, "ext"), pairs(&[(ME, "READ")]));
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("1 destroyed"), "{out}");
    assert_eq!(scope_acls(&serve, "ext"), pairs(&[(ME, "MANAGE")]));
}

const AUTHORIZATION: &str = r#"
variable "host" {
  type = string
}

variable "token_level" {
  type    = string
  default = "CAN_USE"
}

provider "databricks" {
  host = var.host
}

resource "databricks_permissions" "tokens" {
  authorization = "tokens"
  access_control {
    group_name       = "eng"
    permission_level = var.token_level
  }
}

resource "databricks_permissions" "passwords" {
  authorization = "passwords"
  access_control {
    group_name       = "admins"
    permission_level = "CAN_USE"
  }
  access_control {
    group_name       = "eng"
    permission_level = "CAN_USE"
  }
}
"#;

/// Who may use tokens and passwords: objects every workspace has, written (the tokens'
/// with the admins group's CAN_MANAGE kept, as the Terraform provider writes them),
/// changed, imported by the Terraform provider's ids and reset by a destroy.
#[test]
fn token_and_password_permissions_are_applied_changed_imported_and_reset() {
    let dir = config(&[("main.bf.hcl", AUTHORIZATION)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("eng");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 2 added"), "{out}");
    assert_eq!(
        direct(&serve, "/authorization/tokens"),
        pairs(&[("admins", "CAN_MANAGE"), ("eng", "CAN_USE")])
    );
    assert_eq!(
        direct(&serve, "/authorization/passwords"),
        pairs(&[("admins", "CAN_USE"), ("eng", "CAN_USE")])
    );
    assert_eq!(
        state_id(d, &serve, "databricks_permissions.tokens"),
        "/authorization/tokens"
    );
    let shown: Value = serde_json::from_str(&bf_ok(
        d,
        &serve,
        &[
            "state",
            "show",
            "databricks_permissions.passwords",
            "--json",
        ],
    ))
    .unwrap();
    assert_eq!(shown["computed"]["object_type"], "passwords", "{shown}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    let vars = ["--var", "token_level=CAN_MANAGE"];
    let (code, plan, err) = bf(
        d,
        &serve,
        &[&["plan", "--detailed-exitcode"][..], &vars].concat(),
    );
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    bf_ok(
        d,
        &serve,
        &[&["apply", "--auto-approve"][..], &vars].concat(),
    );
    assert_eq!(
        direct(&serve, "/authorization/tokens"),
        pairs(&[("admins", "CAN_MANAGE"), ("eng", "CAN_MANAGE")])
    );

    for (address, id) in [
        ("databricks_permissions.tokens", "/authorization/tokens"),
        (
            "databricks_permissions.passwords",
            "/authorization/passwords",
        ),
    ] {
        bf_ok(d, &serve, &["state", "rm", address]);
        // An id of no object the workspace has says the forms ids take.
        let (code, _, err) = bf(
            d,
            &serve,
            &[&["import", address, "/authorization/keys"][..], &vars].concat(),
        );
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("/authorization/tokens"), "{err}");
        bf_ok(d, &serve, &[&["import", address, id][..], &vars].concat());
    }
    let (code, out, err) = bf(
        d,
        &serve,
        &[&["plan", "--detailed-exitcode"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}\n{err}");

    let out = bf_ok(
        d,
        &serve,
        &[&["destroy", "--auto-approve"][..], &vars].concat(),
    );
    assert!(out.contains("2 destroyed"), "{out}");
    assert_eq!(
        direct(&serve, "/authorization/tokens"),
        pairs(&[("admins", "CAN_MANAGE")])
    );
    assert_eq!(direct(&serve, "/authorization/passwords"), pairs(&[]));
}

/// Permissions on an object brickform does not create (an app, a serving endpoint) are
/// sent where the Terraform provider sends them; the service says the object is missing.
#[test]
fn permissions_on_objects_made_elsewhere_reach_the_service() {
    let text = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_permissions" "app" {
  app_name = "my-app"
  access_control {
    group_name       = "users"
    permission_level = "CAN_USE"
  }
}

resource "databricks_permissions" "endpoint" {
  serving_endpoint_id = "e1"
  access_control {
    group_name       = "users"
    permission_level = "CAN_QUERY"
  }
}
"#;
    let dir = config(&[("main.bf.hcl", text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("app my-app does not exist"), "{err}");
    assert!(err.contains("serving endpoint e1 does not exist"), "{err}");
    for path in [
        "/api/2.0/permissions/apps/my-app",
        "/api/2.0/permissions/serving-endpoints/e1",
    ] {
        let log = serve.ok("GET", &format!("/__emulator/requests?path={path}"), None);
        assert!(
            !log["requests"].as_array().unwrap().is_empty(),
            "{path}: {log}"
        );
    }
}
