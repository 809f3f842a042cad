//! No duplicates after `state rm` or a lost state: the next plan finds each object again
//! (by its ownership tag, by what `state rm` remembered, by its natural key and owner) and
//! imports it, for every kind that brickform tags or finds by name or path. Objects nothing
//! says are this state's are refused at plan time, and another developer's are never taken.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, local_dump, objects, run, run_ok};
use serde_json::{Value, json};
use std::path::Path;

/// One of every kind that carries an ownership tag or is found by its name or path, and a
/// for_each job whose keys need escaping in the tag. `{host}` is the provider's host.
fn every_findable_kind(host: &str, mode: &str) -> String {
    format!(
        r#"
provider "databricks" {{
  host = "{host}"
}}
environment "work" {{
  default = true
  {mode}
}}
data "databricks_current_user" "me" {{}}

resource "databricks_catalog" "c" {{
  name          = "adopt_cat"
  force_destroy = true
}}
resource "databricks_schema" "s" {{
  catalog_name  = databricks_catalog.c.name
  name          = "raw"
  force_destroy = true
}}
resource "databricks_schema" "stage" {{
  catalog_name = databricks_catalog.c.name
  name         = "stage"
}}
resource "databricks_volume" "v" {{
  catalog_name = databricks_schema.s.catalog_name
  schema_name  = databricks_schema.s.name
  name         = "landing"
  volume_type  = "MANAGED"
}}
resource "databricks_file" "f" {{
  path           = "${{databricks_volume.v.volume_path}}/in/data.csv"
  content_base64 = base64encode("id\n1\n")
}}
resource "databricks_connection" "sql" {{
  name            = "adopt_erp"
  connection_type = "SQLSERVER"
  options = {{
    host     = "erp.example.com"
    port     = "1433"
    user     = "reader"
    password = "secret"
  }}
}}
resource "databricks_ingestion_gateway" "gw" {{
  name                    = "adopt_gateway"
  connection_name         = databricks_connection.sql.name
  gateway_storage_catalog = databricks_catalog.c.name
  gateway_storage_schema  = databricks_schema.stage.name
}}
resource "databricks_ingestion_pipeline" "ing" {{
  name                 = "adopt_ingest"
  catalog              = databricks_catalog.c.name
  schema               = databricks_schema.s.name
  serverless           = true
  ingestion_gateway_id = databricks_ingestion_gateway.gw.id
  object {{
    table {{
      source_catalog      = "erp"
      source_schema       = "dbo"
      source_table        = "orders"
      destination_catalog = databricks_catalog.c.name
      destination_schema  = databricks_schema.s.name
    }}
  }}
}}
resource "databricks_notebook" "nb" {{
  path           = "${{data.databricks_current_user.me.home}}/adopt/etl.py"
  content_base64 = base64encode("print('etl')\n")
}}
resource "databricks_directory" "home" {{
  path = "${{data.databricks_current_user.me.home}}/adopt/out"
}}
resource "databricks_directory" "shared" {{
  path = "/Shared/adopt"
}}
resource "databricks_workspace_file" "wf" {{
  path           = "/Shared/adopt-conf.json"
  content_base64 = base64encode("{{}}")
}}
resource "databricks_secret_scope" "sc" {{
  name = "adopt-scope"
}}
resource "databricks_pipeline" "p" {{
  name       = "adopt_refine"
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
  name = "nightly"
  schedule {{
    quartz_cron_expression = "0 0 2 * * ?"
    timezone_id            = "UTC"
  }}
  task {{
    task_key = "refine"
    pipeline_task {{
      pipeline_id = databricks_pipeline.p.id
    }}
  }}
}}
resource "databricks_job" "each" {{
  for_each = toset(["a b", "x:y/\"z\""])
  name     = "each ${{each.key}}"
}}
"#
    )
}

/// Every managed address of [`every_findable_kind`].
const ADDRESSES: &[&str] = &[
    "databricks_catalog.c",
    "databricks_schema.s",
    "databricks_schema.stage",
    "databricks_volume.v",
    "databricks_file.f",
    "databricks_connection.sql",
    "databricks_ingestion_gateway.gw",
    "databricks_ingestion_pipeline.ing",
    "databricks_notebook.nb",
    "databricks_directory.home",
    "databricks_directory.shared",
    "databricks_workspace_file.wf",
    "databricks_secret_scope.sc",
    "databricks_pipeline.p",
    "databricks_job.nightly",
    "databricks_job.each[\"a b\"]",
    "databricks_job.each[\"x:y/\\\"z\\\"\"]",
];

/// What [`every_findable_kind`] makes, one of each: the objects [`objects`] lists, the
/// folders, the job and pipeline names.
fn inventory(dump: &Value) -> (Vec<String>, Vec<String>, Vec<String>, Vec<String>) {
    let folders = dump["workspace"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(p, o)| o["object_type"] == "DIRECTORY" && p.contains("adopt"))
                .map(|(p, _)| p.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut jobs: Vec<String> = dump["jobs"]
        .as_object()
        .map(|m| {
            m.values()
                .map(|j| j["settings"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    jobs.sort();
    let mut pipelines: Vec<String> = dump["pipelines"]
        .as_object()
        .map(|m| {
            m.values()
                .filter(|p| p["state"] != "DELETED")
                .map(|p| p["spec"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    pipelines.sort();
    (objects(dump), folders, jobs, pipelines)
}

fn expected_inventory() -> (Vec<String>, Vec<String>, Vec<String>, Vec<String>) {
    let mut objs = vec![
        "catalog:adopt_cat",
        "schema:adopt_cat.raw",
        "schema:adopt_cat.stage",
        "volume:adopt_cat.raw.landing",
        "file:/Volumes/adopt_cat/raw/landing/in/data.csv",
        "connection:adopt_erp",
        "workspace:/Users/local-user@brickform.local/adopt/etl",
        "workspace:/Shared/adopt-conf.json",
        "scope:adopt-scope",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    objs.sort();
    let folders = vec![
        "/Shared/adopt".to_string(),
        "/Users/local-user@brickform.local/adopt".to_string(),
        "/Users/local-user@brickform.local/adopt/out".to_string(),
    ];
    let jobs = vec![
        "each a b".to_string(),
        "each x:y/\"z\"".to_string(),
        "nightly".to_string(),
    ];
    let pipelines = vec![
        "adopt_gateway".to_string(),
        "adopt_ingest".to_string(),
        "adopt_refine".to_string(),
    ];
    (objs, folders, jobs, pipelines)
}

fn plan_json(dir: &Path) -> Value {
    serde_json::from_str(&run_ok(dir, &["plan", "--json"], &[])).unwrap()
}

/// The planned change of `address` in a JSON plan.
fn change<'a>(plan: &'a Value, address: &str) -> &'a Value {
    plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == address)
        .unwrap_or_else(|| panic!("{address} is not in the plan"))
}

/// Every address in `addresses` is planned as an import (no create), and nothing is added.
fn assert_imports(plan: &Value, addresses: &[&str]) {
    for a in addresses {
        let c = change(plan, a);
        assert!(
            c["change"]["importing"]["id"].is_string(),
            "{a} is not imported: {c:#}"
        );
        assert!(
            !c["change"]["actions"]
                .as_array()
                .unwrap()
                .contains(&json!("create")),
            "{a} is created: {c:#}"
        );
    }
    assert_eq!(plan["summary"]["add"], 0, "{:#}", plan["summary"]);
}

/// Applies, checks that exactly one of each object exists and that the next plan is empty,
/// destroys, and checks that nothing is left.
fn apply_then_destroy(dir: &Path) {
    let out = run_ok(dir, &["apply", "--auto-approve"], &[]);
    assert!(out.contains("0 added"), "{out}");
    assert_eq!(inventory(&local_dump(dir)), expected_inventory());
    let (code, out, err) = run(dir, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    run_ok(dir, &["destroy", "--auto-approve"], &[]);
    let (objs, folders, jobs, pipelines) = inventory(&local_dump(dir));
    assert!(objs.is_empty(), "{objs:?}");
    assert!(
        jobs.is_empty() && pipelines.is_empty(),
        "{jobs:?} {pipelines:?}"
    );
    assert_eq!(
        folders,
        ["/Users/local-user@brickform.local/adopt"],
        "only the notebook's parent, which no resource declares, stays"
    );
}

#[test]
fn state_rm_then_plan_imports_every_kind_again() {
    let dir = config(&[("main.bf.hcl", &every_findable_kind("local", ""))]);
    let d = dir.path();
    run_ok(d, &["apply", "--auto-approve"], &[]);
    assert_eq!(inventory(&local_dump(d)), expected_inventory());
    let tags: Vec<String> = local_dump(d)["jobs"]
        .as_object()
        .unwrap()
        .values()
        .map(|j| {
            j["settings"]["tags"]["brickform"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    // The for_each keys are written with cluster-tag-safe characters only.
    for t in &tags {
        assert!(
            t.chars()
                .all(|c| c.is_ascii_alphanumeric() || " +-=._:/@".contains(c)),
            "{t}"
        );
    }
    assert!(
        tags.iter()
            .any(|t| t.ends_with("/work/databricks_job.each:5B:22x:3Ay/:5C:22z:5C:22:22:5D")),
        "{tags:?}"
    );

    let mut args = vec!["state", "rm"];
    args.extend_from_slice(ADDRESSES);
    let out = run_ok(d, &args, &[]);
    // It says what the next plan does, for each kind as that kind finds its objects.
    for (address, says) in [
        (
            "databricks_job.nightly",
            "carries this state's ownership tag for this address",
        ),
        (
            "databricks_pipeline.p",
            "carries this state's ownership tag for this address",
        ),
        ("databricks_catalog.c", "`brickform state rm` took it out"),
        (
            "databricks_secret_scope.sc",
            "`brickform state rm` took it out",
        ),
    ] {
        let at = out
            .find(&format!("Removed {address} from the state"))
            .unwrap_or_else(|| panic!("{address} not reported: {out}"));
        let line = out[at..].lines().nth(1).unwrap_or_default();
        assert!(
            line.contains(says) && line.contains("imports it again"),
            "{address}: {line}"
        );
    }
    assert!(out.contains("`removed` block"), "{out}");
    let listed = run_ok(d, &["state", "list"], &[]);
    assert!(listed.trim().is_empty(), "{listed}");

    let plan = plan_json(d);
    assert_imports(&plan, ADDRESSES);
    assert!(
        plan["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("databricks_job.nightly is not in the state, but job")),
        "{:#}",
        plan["warnings"]
    );
    let text = run_ok(d, &["plan"], &[]);
    assert!(
        text.contains("# databricks_job.nightly will be imported"),
        "{text}"
    );
    assert!(
        text.contains("it carries this state's ownership tag for this address"),
        "{text}"
    );
    apply_then_destroy(d);
}

#[test]
fn a_lost_state_imports_what_it_can_tell_is_its_own_and_refuses_the_rest() {
    let dir = config(&[("main.bf.hcl", &every_findable_kind("local", ""))]);
    let d = dir.path();
    run_ok(d, &["apply", "--auto-approve"], &[]);
    std::fs::remove_dir_all(d.join(".brickform/state")).unwrap();

    // Tagged objects and those the user owns are found; the paths outside the user's home
    // and the scope say nothing about whose they are: the plan names each, with the import.
    let (code, out, err) = run(d, &["plan"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    let refused = [
        ("databricks_directory.shared", "/Shared/adopt"),
        ("databricks_workspace_file.wf", "/Shared/adopt-conf.json"),
        ("databricks_secret_scope.sc", "adopt-scope"),
        (
            "databricks_file.f",
            "/Volumes/adopt_cat/raw/landing/in/data.csv",
        ),
    ];
    for (address, id) in refused {
        assert!(
            err.contains(&format!("{address}: the name is taken by")),
            "{address}: {err}"
        );
        assert!(
            err.contains(&format!("brickform import {address} {id}")),
            "{address}: {err}"
        );
    }
    assert_eq!(
        err.matches("the name is taken by").count(),
        refused.len(),
        "nothing else is refused: {err}"
    );
    for (address, id) in refused {
        run_ok(d, &["import", address, id], &[]);
    }
    let plan = plan_json(d);
    let rest: Vec<&str> = ADDRESSES
        .iter()
        .copied()
        .filter(|a| !refused.iter().any(|(r, _)| r == a))
        .collect();
    assert_imports(&plan, &rest);
    let warnings = plan["warnings"].to_string();
    assert!(
        warnings.contains("which this backend no longer holds, and you created it"),
        "{warnings}"
    );
    assert!(
        warnings.contains("you own it and no state of this backend manages it"),
        "{warnings}"
    );
    apply_then_destroy(d);
}

#[test]
fn several_objects_claiming_one_address_are_listed_not_picked() {
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &[]);
    let dir = config(&[(
        "main.bf.hcl",
        &format!(
            "provider \"databricks\" {{\n  host = \"{}\"\n}}\nresource \"databricks_job\" \"nightly\" {{\n  name = \"nightly\"\n}}\n",
            serve.url
        ),
    )]);
    let d = dir.path();
    let env = [("DATABRICKS_TOKEN", serve.token.as_str())];
    run_ok(d, &["apply", "--auto-approve"], &env);
    run_ok(d, &["state", "rm", "databricks_job.nightly"], &env);
    // A copy of the job, ownership tag and all (made by hand, or by a bug).
    let jobs = serve.ok("GET", "/api/2.2/jobs/list", None);
    let first = &jobs["jobs"][0];
    let id = first["job_id"].as_i64().unwrap();
    let full = serve.ok("GET", &format!("/api/2.2/jobs/get?job_id={id}"), None);
    let copy = serve.ok(
        "POST",
        "/api/2.2/jobs/create",
        Some(full["settings"].clone()),
    );
    let copy_id = copy["job_id"].as_i64().unwrap();

    let (code, out, err) = run(d, &["plan"], &env);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("databricks_job.nightly: 2 objects are this state's"),
        "{err}"
    );
    assert!(
        err.contains(&format!("job {id} ")) && err.contains(&format!("job {copy_id} ")),
        "{err}"
    );
    assert!(err.contains("does not pick one"), "{err}");
    // Once the copy is gone, the job is imported.
    serve.ok(
        "POST",
        "/api/2.2/jobs/delete",
        Some(json!({"job_id": copy_id})),
    );
    let out = run_ok(d, &["apply", "--auto-approve"], &env);
    assert!(out.contains("1 imported, 0 added"), "{out}");
    assert_eq!(
        serve.ok("GET", "/api/2.2/jobs/list", None)["jobs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// Two developers share a workspace in development mode; their user names differ only in
/// the domain, so the presets give their jobs the same name (`[dev alice] nightly`) and the
/// same address in the same environment. Bob's fresh state must not take Alice's job or
/// catalog; Alice's own lost state takes both back.
#[test]
fn a_development_state_never_imports_another_developers_objects() {
    let data = tempfile::tempdir().unwrap();
    let text = |url: &str| {
        format!(
            r#"
provider "databricks" {{
  host = "{url}"
}}
environment "dev" {{
  default = true
  mode    = "development"
}}
resource "databricks_catalog" "team" {{
  name = "team_sandbox"
}}
resource "databricks_job" "nightly" {{
  name = "nightly"
}}
"#
        )
    };
    let alice_dir = tempfile::tempdir().unwrap();
    let bob_dir = tempfile::tempdir().unwrap();
    {
        let serve = Serve::start(data.path(), &["--user", "alice@a.example"]);
        std::fs::write(alice_dir.path().join("main.bf.hcl"), text(&serve.url)).unwrap();
        let env = [("DATABRICKS_TOKEN", serve.token.as_str())];
        run_ok(alice_dir.path(), &["apply", "--auto-approve"], &env);
    }
    let serve = Serve::start(data.path(), &["--user", "alice@b.example"]);
    std::fs::write(bob_dir.path().join("main.bf.hcl"), text(&serve.url)).unwrap();
    let env = [("DATABRICKS_TOKEN", serve.token.as_str())];
    let (code, out, err) = run(bob_dir.path(), &["plan"], &env);
    assert_eq!(code, 1, "{out}{err}");
    assert!(!out.contains("will be imported"), "{out}");
    assert!(
        err.contains("databricks_job.nightly: the name is taken by job")
            && err.contains("(created by alice@a.example)"),
        "{err}"
    );
    assert!(
        err.contains("databricks_catalog.team: the name is taken by catalog team_sandbox (owner alice@a.example)"),
        "{err}"
    );
    drop(serve);

    // Alice loses her state: her own objects come back.
    let serve = Serve::start(data.path(), &["--user", "alice@a.example"]);
    std::fs::write(alice_dir.path().join("main.bf.hcl"), text(&serve.url)).unwrap();
    let env = [("DATABRICKS_TOKEN", serve.token.as_str())];
    std::fs::remove_dir_all(alice_dir.path().join(".brickform/state")).unwrap();
    let plan: Value =
        serde_json::from_str(&run_ok(alice_dir.path(), &["plan", "--json"], &env)).unwrap();
    assert_imports(
        &plan,
        &["databricks_catalog.team", "databricks_job.nightly"],
    );
    run_ok(alice_dir.path(), &["apply", "--auto-approve"], &env);
    let jobs = serve.ok("GET", "/api/2.2/jobs/list", None);
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 1, "{jobs:#}");
}

/// Outside development mode, a catalog somebody else owns is refused by the plan (not the
/// apply), naming the owner and the import command.
#[test]
fn a_name_taken_by_an_unknown_owner_is_refused_at_plan() {
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &[]);
    serve.ok(
        "POST",
        "/api/2.1/unity-catalog/catalogs",
        Some(json!({"name": "theirs"})),
    );
    serve.ok(
        "PATCH",
        "/api/2.1/unity-catalog/catalogs/theirs",
        Some(json!({"owner": "someone@else.example"})),
    );
    let dir = config(&[(
        "main.bf.hcl",
        &format!(
            "provider \"databricks\" {{\n  host = \"{}\"\n}}\nresource \"databricks_catalog\" \"c\" {{\n  name = \"theirs\"\n}}\n",
            serve.url
        ),
    )]);
    let env = [("DATABRICKS_TOKEN", serve.token.as_str())];
    let (code, out, err) = run(dir.path(), &["plan"], &env);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(
            "databricks_catalog.c: the name is taken by catalog theirs (owner someone@else.example)"
        ),
        "{err}"
    );
    assert!(
        err.contains("someone@else.example owns it, not you"),
        "{err}"
    );
    assert!(
        err.contains("brickform import databricks_catalog.c theirs"),
        "{err}"
    );
}

/// `state rm` says what the next plan does: finds the object again by its natural key (a
/// secret, by scope and key), cannot find it without its id (a job run), or leaves it alone
/// (an instance the configuration no longer declares).
#[test]
fn state_rm_says_what_happens_next() {
    let with_secret = r#"
provider "databricks" {
  host = "local"
}
resource "databricks_secret_scope" "sc" {
  name = "rm-scope"
}
resource "databricks_secret" "k" {
  scope        = databricks_secret_scope.sc.name
  key          = "api-key"
  string_value = "v1"
}
resource "databricks_notebook" "nb" {
  path           = "/Shared/rm/etl.py"
  content_base64 = base64encode("print(1)")
}
resource "databricks_job" "j" {
  name = "rm-job"
  task {
    task_key = "etl"
    notebook_task {
      notebook_path = databricks_notebook.nb.path
    }
  }
}
resource "databricks_job_run" "once" {
  job_id = databricks_job.j.id
}
"#;
    let dir = config(&[("main.bf.hcl", with_secret)]);
    let d = dir.path();
    run_ok(d, &["apply", "--auto-approve"], &[]);
    // A secret is found again by its scope and key, and imported, not written twice.
    let out = run_ok(d, &["state", "rm", "databricks_secret.k"], &[]);
    assert!(
        out.contains("databricks_secret rm-scope|api-key still exists: the next plan finds it"),
        "{out}"
    );
    let out = run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(out.contains("1 imported"), "{out}");
    // A run has no natural key: the next plan would start another one.
    let id = serde_json::from_str::<Value>(&run_ok(
        d,
        &["state", "show", "databricks_job_run.once", "--json"],
        &[],
    ))
    .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = run_ok(d, &["state", "rm", "databricks_job_run.once"], &[]);
    assert!(
        out.contains("cannot find this kind of object again without its id")
            && out.contains(&format!("brickform import databricks_job_run.once {id}")),
        "{out}"
    );
    // An instance the configuration dropped is left alone from now on.
    std::fs::write(
        d.join("main.bf.hcl"),
        "provider \"databricks\" {\n  host = \"local\"\n}\n",
    )
    .unwrap();
    let out = run_ok(d, &["state", "rm", "databricks_secret_scope.sc"], &[]);
    assert!(
        out.contains("The configuration does not declare databricks_secret_scope.sc"),
        "{out}"
    );
    let left = objects(&local_dump(d));
    assert!(
        left.contains(&"scope:rm-scope".to_string())
            && left.contains(&"secret:rm-scope|api-key".to_string()),
        "{left:?}"
    );
}

/// A workspace file imported with an `import` block is not uploaded again when it holds the
/// configured content (its exported bytes hash to the content's SHA-256), and is when it
/// does not.
#[test]
fn an_imported_workspace_file_holding_the_configured_content_plans_nothing_more() {
    let body = |content: &str| {
        format!(
            "provider \"databricks\" {{}}\nresource \"databricks_workspace_file\" \"f\" {{\n  path           = \"/Shared/adopt/x.py\"\n  content_base64 = base64encode(\"{content}\")\n}}\n"
        )
    };
    let dir = config(&[("main.bf.hcl", &body("print(1)"))]);
    let d = dir.path();
    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    run_ok(
        d,
        &["--local", "state", "rm", "databricks_workspace_file.f"],
        &[],
    );
    let import = "import {\n  to = databricks_workspace_file.f\n  id = \"/Shared/adopt/x.py\"\n}\n";
    std::fs::write(d.join("main.bf.hcl"), body("print(1)") + import).unwrap();
    let out = run_ok(d, &["--local", "plan"], &[]);
    assert!(
        out.contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    let (code, out, err) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    // Other content in the configuration: the import uploads it.
    run_ok(
        d,
        &["--local", "state", "rm", "databricks_workspace_file.f"],
        &[],
    );
    std::fs::write(d.join("main.bf.hcl"), body("print(2)") + import).unwrap();
    let out = run_ok(d, &["--local", "plan"], &[]);
    assert!(
        out.contains("Plan: 1 to import, 0 to add, 1 to change, 0 to destroy."),
        "{out}"
    );
}

/// A state restored from a copy taken before a replacement names the old objects' ids,
/// which the service no longer has: the plan finds the new ones by their ownership tag and
/// imports them, instead of creating a second copy of each (a second job of the same name).
#[test]
fn a_state_restored_from_before_a_replacement_imports_the_new_objects() {
    let src = r#"
provider "databricks" {
  host = "local"
}
resource "databricks_job" "j" {
  name = "restored_job"
}
"#;
    let dir = config(&[("main.bf.hcl", src)]);
    let d = dir.path();
    run_ok(d, &["apply", "--auto-approve"], &[]);
    let state = d.join(".brickform/state/default.json");
    let before = std::fs::read(&state).unwrap();
    let out = run_ok(
        d,
        &["apply", "--auto-approve", "--replace", "databricks_job.j"],
        &[],
    );
    assert!(out.contains("1 added"), "{out}");
    std::fs::write(&state, before).unwrap();

    let plan = plan_json(d);
    assert_imports(&plan, &["databricks_job.j"]);
    run_ok(d, &["apply", "--auto-approve"], &[]);
    let jobs: Vec<String> = local_dump(d)["jobs"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|j| j["settings"]["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(jobs, ["restored_job"], "one job, not two");
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    run_ok(d, &["destroy", "--auto-approve"], &[]);
}
