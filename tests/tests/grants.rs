//! Unity Catalog grants end to end against `brickform local serve`: what apply sends,
//! grants given or taken outside brickform planned back, other principals' grants left
//! alone, grants found where a create would write asking for an import, and what
//! `validate` refuses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, run};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};

/// The grants on a securable, as the service lists them: `principal → privileges`.
fn grants_on(serve: &Serve, securable: &str, name: &str) -> Value {
    let listed = serve.ok(
        "GET",
        &format!("/api/2.1/unity-catalog/permissions/{securable}/{name}"),
        None,
    );
    let mut out = serde_json::Map::new();
    for a in listed["privilege_assignments"].as_array().unwrap() {
        out.insert(
            a["principal"].as_str().unwrap().to_string(),
            a["privileges"].clone(),
        );
    }
    Value::Object(out)
}

fn patch_grants(serve: &Serve, securable: &str, name: &str, changes: Value) {
    serve.ok(
        "PATCH",
        &format!("/api/2.1/unity-catalog/permissions/{securable}/{name}"),
        Some(json!({ "changes": changes })),
    );
}

const SALES: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "sales" {
  name          = "sales"
  force_destroy = true
}

resource "databricks_schema" "raw" {
  catalog_name = databricks_catalog.sales.name
  name         = "raw"
}

resource "databricks_volume" "landing" {
  catalog_name = databricks_catalog.sales.name
  schema_name  = databricks_schema.raw.name
  name         = "landing"
  volume_type  = "MANAGED"
}

resource "databricks_connection" "pg" {
  name            = "sales_pg"
  connection_type = "POSTGRESQL"
  options = {
    host     = "pg.example.com"
    port     = "5432"
    user     = "reader"
    password = "local-only"
  }
}

resource "databricks_grants" "sales" {
  catalog = databricks_catalog.sales.name
  grant {
    principal  = "data-engineers"
    privileges = ["USE_CATALOG", "CREATE_SCHEMA"]
  }
  grant {
    principal  = "account users"
    privileges = ["USE_CATALOG"]
  }
}

resource "databricks_grants" "raw" {
  schema = databricks_schema.raw.full_name
  grant {
    principal  = "data-engineers"
    privileges = ["USE_SCHEMA", "CREATE_TABLE", "SELECT", "MODIFY"]
  }
}

resource "databricks_grant" "landing" {
  volume     = databricks_volume.landing.full_name
  principal  = "data-engineers"
  privileges = ["READ_VOLUME", "WRITE_VOLUME"]
}

resource "databricks_grants" "pg" {
  foreign_connection = databricks_connection.pg.name
  grant {
    principal  = "data-engineers"
    privileges = ["USE_CONNECTION", "CREATE_FOREIGN_CATALOG"]
  }
}
"#;

#[test]
fn grants_are_applied_drift_is_planned_back_and_others_grants_are_left_alone() {
    let dir = config(&[("main.bf.hcl", SALES)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("data-engineers");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 8 added"), "{out}");
    assert_eq!(
        grants_on(&serve, "catalog", "sales"),
        json!({"account users": ["USE_CATALOG"], "data-engineers": ["CREATE_SCHEMA", "USE_CATALOG"]})
    );
    assert_eq!(
        grants_on(&serve, "schema", "sales.raw"),
        json!({"data-engineers": ["CREATE_TABLE", "MODIFY", "SELECT", "USE_SCHEMA"]})
    );
    assert_eq!(
        grants_on(&serve, "volume", "sales.raw.landing"),
        json!({"data-engineers": ["READ_VOLUME", "WRITE_VOLUME"]})
    );
    assert_eq!(
        grants_on(&serve, "connection", "sales_pg"),
        json!({"data-engineers": ["CREATE_FOREIGN_CATALOG", "USE_CONNECTION"]})
    );
    // What apply sent: one change set per securable, adding what was declared.
    let log = serve.ok(
        "GET",
        "/__emulator/requests?path=/api/2.1/unity-catalog/permissions/.*&method=PATCH",
        None,
    );
    let patches = log["requests"].as_array().unwrap();
    assert_eq!(patches.len(), 4, "{log}");
    let catalog = patches
        .iter()
        .find(|r| r["path"] == "/api/2.1/unity-catalog/permissions/catalog/sales")
        .unwrap();
    assert_eq!(
        catalog["body"],
        json!({"changes": [
            {"principal": "account users", "add": ["USE_CATALOG"]},
            {"principal": "data-engineers", "add": ["CREATE_SCHEMA", "USE_CATALOG"]},
        ]}),
        "{catalog}"
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // Outside brickform: a privilege given and one taken on the catalog, and another
    // principal's grant on the volume, which databricks_grant does not speak for.
    patch_grants(
        &serve,
        "catalog",
        "sales",
        json!([
            {"principal": "account users", "add": ["BROWSE"]},
            {"principal": "data-engineers", "remove": ["CREATE_SCHEMA"]},
        ]),
    );
    patch_grants(
        &serve,
        "volume",
        "sales.raw.landing",
        json!([{"principal": "account users", "add": ["READ_VOLUME"]}]),
    );
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("# databricks_grants.sales has changed"),
        "{plan}"
    );
    assert!(
        plan.contains("# databricks_grants.sales will be updated in-place"),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    let (_, out, _) = bf(d, &serve, &["plan", "--json"]);
    let j: Value = serde_json::from_str(&out).unwrap();
    let changes: Vec<&Value> = j["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"]["actions"] != json!(["no-op"]))
        .collect();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let after = &changes[0]["change"]["after"]["grant"];
    assert_eq!(
        after,
        &json!([
            {"principal": "account users", "privileges": ["USE_CATALOG"]},
            {"principal": "data-engineers", "privileges": ["CREATE_SCHEMA", "USE_CATALOG"]},
        ]),
        "{}",
        changes[0]
    );

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(
        out.contains("Resources: 0 added, 1 changed, 0 destroyed."),
        "{out}"
    );
    // The plan's after is what the service holds.
    assert_eq!(
        grants_on(&serve, "catalog", "sales"),
        json!({"account users": ["USE_CATALOG"], "data-engineers": ["CREATE_SCHEMA", "USE_CATALOG"]})
    );
    assert_eq!(
        grants_on(&serve, "volume", "sales.raw.landing"),
        json!({"account users": ["READ_VOLUME"], "data-engineers": ["READ_VOLUME", "WRITE_VOLUME"]})
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // Destroying the volume's grant revokes what it declared, not the other principal's.
    let out = bf_ok(
        d,
        &serve,
        &[
            "destroy",
            "--auto-approve",
            "--target",
            "databricks_grant.landing",
        ],
    );
    assert!(out.contains("1 destroyed"), "{out}");
    assert_eq!(
        grants_on(&serve, "volume", "sales.raw.landing"),
        json!({"account users": ["READ_VOLUME"]})
    );
    assert_eq!(
        grants_on(&serve, "schema", "sales.raw")["data-engineers"],
        json!(["CREATE_TABLE", "MODIFY", "SELECT", "USE_SCHEMA"]),
        "a targeted destroy leaves the rest"
    );

    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("0 left behind"), "{out}");
    let dump = serve.dump();
    assert!(dump["catalogs"].as_object().unwrap().get("sales").is_none());
    assert_eq!(dump["grants"], json!({}), "{}", dump["grants"]);
}

const REVIEWED: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "shared" {
  name          = "shared"
  force_destroy = true
}

resource "databricks_grants" "shared" {
  catalog = databricks_catalog.shared.name
  grant {
    principal  = "data-engineers"
    privileges = ["USE_CATALOG", "CREATE_SCHEMA"]
  }
  GRANT
}
"#;

#[test]
fn a_saved_plan_applied_later_revokes_no_grant_its_reviewers_did_not_see() {
    let analysts =
        "grant {\n    principal  = \"analysts\"\n    privileges = [\"USE_CATALOG\"]\n  }";
    let dir = config(&[("main.bf.hcl", &REVIEWED.replace("GRANT", analysts))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("data-engineers");
    serve.group("analysts");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);

    // Reviewed: the analysts' grant goes. Then, before the apply, someone gives another.
    std::fs::write(d.join("main.bf.hcl"), REVIEWED.replace("GRANT", "")).unwrap();
    let saved = d.join("reviewed.plan");
    let out = bf_ok(d, &serve, &["plan", "--out", saved.to_str().unwrap()]);
    assert!(
        out.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{out}"
    );
    assert!(!out.contains("account users"), "{out}");
    patch_grants(
        &serve,
        "catalog",
        "shared",
        json!([{"principal": "account users", "add": ["BROWSE"]}]),
    );
    let host = serve.url.clone();
    let (code, out, err) = run(
        d,
        &["apply", saved.to_str().unwrap()],
        &[
            ("DATABRICKS_TOKEN", "e2e-token"),
            ("BRICKFORM_VAR_host", &host),
        ],
    );
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Saved plan is stale") && err.contains("databricks_grants.shared"),
        "{err}"
    );
    // A plan that did not read the securable (no refresh) does not revoke what it did not
    // see either: the update itself refuses.
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve", "-refresh=false"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("now holds grants this configuration does not declare (account users: BROWSE); updating databricks_grants would revoke them, which the plan did not show"),
        "{err}"
    );
    assert_eq!(
        grants_on(&serve, "catalog", "shared"),
        json!({"account users": ["BROWSE"], "analysts": ["USE_CATALOG"], "data-engineers": ["CREATE_SCHEMA", "USE_CATALOG"]}),
        "nothing was revoked"
    );

    // A new plan shows both revokes, and its apply makes them.
    let out = bf_ok(d, &serve, &["plan"]);
    assert!(out.contains("account users"), "{out}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        grants_on(&serve, "catalog", "shared"),
        json!({"data-engineers": ["CREATE_SCHEMA", "USE_CATALOG"]})
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

const ONE_GRANT: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "c" {
  name          = "access"
  force_destroy = true
}

resource "databricks_grant" "reader" {
  catalog    = databricks_catalog.c.name
  principal  = "PRINCIPAL"
  privileges = ["USE_CATALOG"]
}
"#;

#[test]
fn a_grant_moved_to_another_principal_is_given_before_the_old_one_is_revoked() {
    let dir = config(&[("main.bf.hcl", &ONE_GRANT.replace("PRINCIPAL", "analysts"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("analysts");
    serve.group("data-engineers");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);

    // A principal the account lacks: the new grant fails, the old one stays.
    std::fs::write(
        d.join("main.bf.hcl"),
        ONE_GRANT.replace("PRINCIPAL", "nobody"),
    )
    .unwrap();
    let (_, plan, _) = bf(d, &serve, &["plan"]);
    assert!(plan.contains("must be replaced"), "{plan}");
    assert!(
        plan.contains("create replacement and then destroy"),
        "{plan}"
    );
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("nobody"), "{err}");
    assert_eq!(
        grants_on(&serve, "catalog", "access"),
        json!({"analysts": ["USE_CATALOG"]}),
        "the old grant is kept"
    );

    // One that exists: given, then the old one revoked.
    std::fs::write(
        d.join("main.bf.hcl"),
        ONE_GRANT.replace("PRINCIPAL", "data-engineers"),
    )
    .unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        grants_on(&serve, "catalog", "access"),
        json!({"data-engineers": ["USE_CATALOG"]})
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

#[test]
fn two_resources_speaking_for_the_grants_on_one_securable_are_refused_at_plan() {
    let src = ONE_GRANT.replace("PRINCIPAL", "analysts")
        + r#"
resource "databricks_grants" "all" {
  catalog = "ACCESS"
  grant {
    principal  = "data-engineers"
    privileges = ["USE_CATALOG"]
  }
}

resource "databricks_grant" "writer" {
  catalog    = databricks_catalog.c.name
  principal  = "data-engineers"
  privileges = ["CREATE_SCHEMA"]
}
"#;
    let dir = config(&[("main.bf.hcl", &src)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("analysts");
    serve.group("data-engineers");
    let (code, out, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    for other in ["databricks_grant.reader", "databricks_grant.writer"] {
        assert!(
            err.contains(&format!(
                "databricks_grants.all and {other} both manage the grants on catalog access"
            )),
            "{err}"
        );
    }
    // Grants of different principals on one securable stand side by side.
    let src = src.replace("databricks_grants", "databricks_grant_removed");
    let src = &src[..src.find("resource \"databricks_grant_removed\"").unwrap()];
    std::fs::write(
        d.join("main.bf.hcl"),
        format!("{src}\nresource \"databricks_grant\" \"writer\" {{\n  catalog    = databricks_catalog.c.name\n  principal  = \"data-engineers\"\n  privileges = [\"CREATE_SCHEMA\"]\n}}\n"),
    )
    .unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        grants_on(&serve, "catalog", "access"),
        json!({"analysts": ["USE_CATALOG"], "data-engineers": ["CREATE_SCHEMA"]})
    );
}

#[test]
fn a_grant_replaced_with_what_it_is_on_is_replaced_in_the_same_order() {
    // The grant reads the schema's id, unknown while the schema is replaced: giving first
    // would spread to the schema, whose new copy would meet its old self's name.
    let src = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "c" {
  name          = "again"
  force_destroy = true
}

resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}

resource "databricks_grant" "g" {
  schema     = databricks_schema.s.id
  principal  = "account users"
  privileges = ["USE_SCHEMA"]
}
"#;
    let dir = config(&[("main.bf.hcl", src)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let out = bf_ok(
        d,
        &serve,
        &["apply", "--auto-approve", "-replace=databricks_schema.s"],
    );
    assert!(out.contains("2 added, 0 changed, 2 destroyed"), "{out}");
    assert_eq!(
        grants_on(&serve, "schema", "again.raw"),
        json!({"account users": ["USE_SCHEMA"]})
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

const EXISTING: &str = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_grants" "ext" {
  catalog = "ext"
  grant {
    principal  = "account users"
    privileges = ["USE_CATALOG"]
  }
}
"#;

#[test]
fn grants_found_where_a_create_would_write_are_imported_not_revoked_unseen() {
    let dir = config(&[("main.bf.hcl", EXISTING)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("analysts");
    // A catalog someone made, with grants of their own.
    serve.ok(
        "POST",
        "/api/2.1/unity-catalog/catalogs",
        Some(json!({"name": "ext"})),
    );
    patch_grants(
        &serve,
        "catalog",
        "ext",
        json!([{"principal": "analysts", "add": ["USE_CATALOG", "SELECT"]}]),
    );

    let (code, out, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("grants on catalog ext"), "{err}");
    assert!(
        err.contains("brickform import databricks_grants.ext catalog/ext"),
        "{err}"
    );
    assert_eq!(
        grants_on(&serve, "catalog", "ext"),
        json!({"analysts": ["SELECT", "USE_CATALOG"]}),
        "nothing was revoked"
    );

    // An import id in another form says which form it takes.
    let (code, _, err) = bf(d, &serve, &["import", "databricks_grants.ext", "ext"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("SECURABLE/FULL_NAME"), "{err}");

    bf_ok(
        d,
        &serve,
        &["import", "databricks_grants.ext", "catalog/ext"],
    );
    // Now the plan lists what would be revoked and what added.
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("# databricks_grants.ext will be updated in-place"),
        "{plan}"
    );
    assert!(plan.contains("- grant {"), "{plan}");
    assert!(plan.contains("\"analysts\""), "{plan}");
    assert!(plan.contains("+ grant {"), "{plan}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        grants_on(&serve, "catalog", "ext"),
        json!({"account users": ["USE_CATALOG"]})
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(grants_on(&serve, "catalog", "ext"), json!({}));
    assert!(
        serve.dump()["catalogs"]["ext"].is_object(),
        "the catalog is not brickform's"
    );
}

/// A principal the account does not have is refused by the service with its own words, and
/// nothing else of the apply is lost.
#[test]
fn a_principal_the_account_does_not_have_fails_with_the_services_words() {
    let text = EXISTING
        .replace("\"account users\"", "\"no-such-group\"")
        .replace("catalog = \"ext\"", "catalog = databricks_catalog.c.name")
        + "\nresource \"databricks_catalog\" \"c\" {\n  name = \"mine\"\n}\n";
    let dir = config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Could not find principal with name no-such-group."),
        "{err}"
    );
    let state = bf_ok(d, &serve, &["state", "list"]);
    assert_eq!(state.trim(), "databricks_catalog.c", "{state}");
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

#[test]
fn validate_checks_securables_privileges_and_principals() {
    let cases: &[(&str, &[&str])] = &[
        (
            "resource \"databricks_grants\" \"g\" {\n  catalog = \"main\"\n  grant {\n    principal  = \"a\"\n    privileges = [\"SELECT\", \"USE_CONNECTION\"]\n  }\n}\n",
            &["\"USE_CONNECTION\" is not a privilege on a catalog"],
        ),
        (
            "resource \"databricks_grants\" \"g\" {\n  volume = \"main.raw.landing\"\n  grant {\n    principal  = \"a\"\n    privileges = [\"USE_CATALOG\"]\n  }\n}\n",
            &[
                "\"USE_CATALOG\" is not a privilege on a volume",
                "main.bf.hcl:5:",
            ],
        ),
        (
            "resource \"databricks_grant\" \"g\" {\n  schema     = \"main.raw\"\n  principal  = \"a\"\n  privileges = [\"create table\"]\n}\n",
            &[
                "\"CREATE TABLE\" is not a privilege on a schema",
                "did you mean \"CREATE_TABLE\"?",
            ],
        ),
        (
            "resource \"databricks_grant\" \"g\" {\n  catalog    = \"main\"\n  principal  = \"a\"\n  privileges = [\"USAGE\"]\n}\n",
            &["first privilege model; it is now USE_CATALOG or USE_SCHEMA"],
        ),
        (
            "resource \"databricks_grant\" \"g\" {\n  schema     = \"main.raw\"\n  principal  = \"\"\n  privileges = [\"SELECT\"]\n}\n",
            &["principal is empty", "main.bf.hcl:3:"],
        ),
        (
            "resource \"databricks_grants\" \"g\" {\n  schema = \"raw\"\n  grant {\n    principal  = \"a\"\n    privileges = [\"SELECT\"]\n  }\n}\n",
            &[
                "\"raw\" is not the full name of a schema",
                "write it as CATALOG.SCHEMA",
            ],
        ),
        (
            "resource \"databricks_grants\" \"g\" {\n  catalog = \"main\"\n  schema  = \"main.raw\"\n  grant {\n    principal  = \"a\"\n    privileges = [\"SELECT\"]\n  }\n}\n",
            &["catalog and schema both set", "main.bf.hcl:3:"],
        ),
        (
            "resource \"databricks_grants\" \"g\" {\n  metastore = \"abc\"\n  grant {\n    principal  = \"a\"\n    privileges = [\"SELECT\"]\n  }\n}\n",
            &[
                "\"SELECT\" is not a privilege on a metastore",
                "main.bf.hcl:5:",
            ],
        ),
        (
            "resource \"databricks_grant\" \"g\" {\n  catalog    = \"main\"\n  principal  = \"a\"\n  privileges = []\n}\n",
            &["no privileges"],
        ),
        (
            "resource \"databricks_grants\" \"g\" {\n  catalog = \"main\"\n}\n",
            &["grant"],
        ),
    ];
    for (text, expected) in cases {
        let dir = config(&[("main.bf.hcl", text)]);
        let (code, out, err) = run(dir.path(), &["validate"], &[]);
        assert_eq!(code, 1, "{text}\n{out}{err}");
        for e in *expected {
            assert!(err.contains(e), "{e:?} missing for\n{text}\n{err}");
        }
    }

    // The workspace-local group is a warning that names the account group.
    let dir = config(&[(
        "main.bf.hcl",
        "resource \"databricks_grant\" \"g\" {\n  catalog    = \"main\"\n  principal  = \"users\"\n  privileges = [\"USE_CATALOG\"]\n}\n",
    )]);
    let (code, out, err) = run(dir.path(), &["validate"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("workspace-local group"), "{all}");
    assert!(all.contains("\"account users\""), "{all}");
}

/// dev and prod grant to different groups through a variable per environment; `promote`
/// shows the difference and that the variable explains it, and each workspace gets its own.
#[test]
fn environments_grant_different_groups_and_promote_explains_it() {
    let dev = tempfile::tempdir().unwrap();
    let prod = tempfile::tempdir().unwrap();
    let dev_ws = Serve::start(dev.path(), &[]);
    let prod_ws = Serve::start(prod.path(), &[]);
    dev_ws.group("sales-dev-readers");
    prod_ws.group("sales-readers");
    let text = format!(
        r#"
environment "dev" {{
  default   = true
  variables = {{ readers = "sales-dev-readers" }}
  provider "databricks" {{
    host = "{dev}"
  }}
}}

environment "prod" {{
  mode      = "production"
  variables = {{ readers = "sales-readers" }}
  provider "databricks" {{
    host = "{prod}"
  }}
}}

variable "readers" {{
  type = string
}}

resource "databricks_catalog" "sales" {{
  name = "sales"
}}

resource "databricks_grants" "sales" {{
  catalog = databricks_catalog.sales.name
  grant {{
    principal  = var.readers
    privileges = ["USE_CATALOG", "SELECT"]
  }}
}}
"#,
        dev = dev_ws.url,
        prod = prod_ws.url
    );
    let dir = config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    let ok = |args: &[&str]| {
        let (code, out, err) = run(d, args, &[("DATABRICKS_TOKEN", "e2e-token")]);
        assert_eq!(code, 0, "{args:?}\n{out}\n{err}");
        out
    };
    ok(&["apply", "--auto-approve"]);
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
        &[("DATABRICKS_TOKEN", "e2e-token")],
    );
    assert_eq!(code, 2, "{out}{err}");
    let table = &out[out.find("Differences between dev and prod").expect(&out)..];
    let row = table
        .lines()
        .find(|l| l.trim_start().starts_with("databricks_grants.sales"))
        .unwrap_or_else(|| panic!("no grants row:\n{table}"));
    assert!(row.contains("\"sales-dev-readers\""), "{row}");
    assert!(row.contains("\"sales-readers\""), "{row}");
    assert!(row.ends_with("variable readers"), "{row}");

    ok(&["--env", "prod", "apply", "--auto-approve"]);
    assert_eq!(
        grants_on(&dev_ws, "catalog", "sales"),
        json!({"sales-dev-readers": ["SELECT", "USE_CATALOG"]})
    );
    assert_eq!(
        grants_on(&prod_ws, "catalog", "sales"),
        json!({"sales-readers": ["SELECT", "USE_CATALOG"]})
    );
    ok(&["--env", "prod", "destroy", "--auto-approve"]);
    ok(&["destroy", "--auto-approve"]);
}

/// Grants on a table by its full name: one an ingestion pipeline made in its target schema
/// (a continuous one starts at once; the local workspace has its tables when its create
/// returns).
#[test]
fn a_table_a_pipeline_made_takes_grants_by_its_full_name() {
    let text = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "c" {
  name = "tg_cat"
}

resource "databricks_schema" "s" {
  catalog_name  = databricks_catalog.c.name
  name          = "dest"
  force_destroy = true
}

resource "databricks_connection" "src" {
  name            = "tg_src"
  connection_type = "POSTGRESQL"
  options = {
    host     = "db.example.com"
    port     = "5432"
    user     = "app"
    password = "pw"
  }
}

resource "databricks_ingestion_gateway" "gw" {
  name                    = "tg_gw"
  connection_name         = databricks_connection.src.name
  gateway_storage_catalog = databricks_catalog.c.name
  gateway_storage_schema  = databricks_schema.s.name
}

resource "databricks_ingestion_pipeline" "ig" {
  name                 = "tg_ig"
  catalog              = databricks_catalog.c.name
  schema               = databricks_schema.s.name
  continuous           = true
  ingestion_gateway_id = databricks_ingestion_gateway.gw.id
  object {
    table {
      source_catalog      = "db"
      source_schema       = "public"
      source_table        = "orders"
      destination_catalog = databricks_catalog.c.name
      destination_schema  = databricks_schema.s.name
    }
  }
}

resource "databricks_grants" "orders" {
  table = "${databricks_schema.s.full_name}.orders"
  grant {
    principal  = "account users"
    privileges = ["SELECT"]
  }
  depends_on = [databricks_ingestion_pipeline.ig]
}
"#;
    let dir = config(&[("main.bf.hcl", text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(
        grants_on(&serve, "table", "tg_cat.dest.orders"),
        json!({"account users": ["SELECT"]})
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("0 left behind"), "{out}");
    assert_eq!(serve.dump()["grants"], json!({}));
}

const MODEL: &str = r#"
variable "host" {
  type = string
}

variable "privileges" {
  type    = list(string)
  default = ["EXECUTE"]
}

provider "databricks" {
  host = var.host
}

resource "databricks_catalog" "ml" {
  name          = "ml_cat"
  force_destroy = true
}

resource "databricks_schema" "m" {
  catalog_name = databricks_catalog.ml.name
  name         = "models"
}

resource "databricks_registered_model" "churn" {
  catalog_name = databricks_schema.m.catalog_name
  schema_name  = databricks_schema.m.name
  name         = "churn"
  comment      = "one"
}

resource "databricks_grants" "churn" {
  model = databricks_registered_model.churn.id
  grant {
    principal  = "scientists"
    privileges = var.privileges
  }
  grant {
    principal  = "account users"
    privileges = ["EXECUTE"]
  }
}
"#;

/// A Unity Catalog registered model takes grants as the `function` securable type, as the
/// service names models; the grants are changed, imported by the Terraform provider's id
/// and destroyed with it.
#[test]
fn a_registered_model_takes_grants_changed_imported_and_destroyed() {
    let dir = config(&[("main.bf.hcl", MODEL)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("scientists");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 4 added"), "{out}");
    assert_eq!(
        grants_on(&serve, "function", "ml_cat.models.churn"),
        json!({"account users": ["EXECUTE"], "scientists": ["EXECUTE"]})
    );
    let model = &serve.dump()["models"]["ml_cat.models.churn"];
    assert_eq!(model["comment"], "one", "{model}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // A privilege added; the model's comment changed outside brickform is drift.
    serve.ok(
        "PATCH",
        "/api/2.1/unity-catalog/models/ml_cat.models.churn",
        Some(json!({"comment": "changed"})),
    );
    let (code, plan, err) = bf(
        d,
        &serve,
        &[
            "plan",
            "--detailed-exitcode",
            "--var",
            "privileges=[\"EXECUTE\",\"APPLY_TAG\"]",
        ],
    );
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "{plan}"
    );
    bf_ok(
        d,
        &serve,
        &[
            "apply",
            "--auto-approve",
            "--var",
            "privileges=[\"EXECUTE\",\"APPLY_TAG\"]",
        ],
    );
    assert_eq!(
        grants_on(&serve, "function", "ml_cat.models.churn")["scientists"],
        json!(["APPLY_TAG", "EXECUTE"])
    );
    assert_eq!(
        serve.dump()["models"]["ml_cat.models.churn"]["comment"],
        "one"
    );
    let vars = ["--var", "privileges=[\"EXECUTE\",\"APPLY_TAG\"]"];
    let (code, out, err) = bf(
        d,
        &serve,
        &[&["plan", "--detailed-exitcode"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}\n{err}");

    // Forgotten and imported again by the Terraform provider's ids: nothing to do.
    for (address, id) in [
        ("databricks_grants.churn", "model/ml_cat.models.churn"),
        ("databricks_registered_model.churn", "ml_cat.models.churn"),
    ] {
        bf_ok(d, &serve, &["state", "rm", address]);
        bf_ok(d, &serve, &[&["import", address, id][..], &vars].concat());
    }
    let (code, out, err) = bf(
        d,
        &serve,
        &[&["plan", "--detailed-exitcode"][..], &vars].concat(),
    );
    assert_eq!(code, 0, "{out}\n{err}");

    // Forgotten and not imported: the plan finds the model by its full name, as its own.
    bf_ok(
        d,
        &serve,
        &["state", "rm", "databricks_registered_model.churn"],
    );
    let (_, plan, err) = bf(d, &serve, &[&["plan"][..], &vars].concat());
    assert!(
        plan.contains("# databricks_registered_model.churn will be imported"),
        "{plan}\n{err}"
    );
    bf_ok(
        d,
        &serve,
        &[&["apply", "--auto-approve"][..], &vars].concat(),
    );

    let out = bf_ok(
        d,
        &serve,
        &[&["destroy", "--auto-approve"][..], &vars].concat(),
    );
    assert!(out.contains("0 left behind"), "{out}");
    let dump = serve.dump();
    assert_eq!(dump["models"], json!({}));
    assert_eq!(dump["grants"], json!({}), "{}", dump["grants"]);
}

/// Grants on securables brickform does not create are kept for them all the same; the
/// service says whether the securable exists, and the plan checks each one's privileges.
#[test]
fn grants_on_securables_made_elsewhere_are_checked_and_sent_to_the_service() {
    let text = r#"
variable "host" {
  type = string
}

provider "databricks" {
  host = var.host
}

resource "databricks_grants" "udf" {
  function = "main.default.udf"
  grant {
    principal  = "account users"
    privileges = ["EXECUTE"]
  }
}

resource "databricks_grant" "share" {
  share      = "quarterly"
  principal  = "partner-co"
  privileges = ["SELECT"]
}
"#;
    let dir = config(&[("main.bf.hcl", text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("function main.default.udf does not exist"),
        "{err}"
    );
    assert!(err.contains("share quarterly does not exist"), "{err}");
    // The share's grants were read where the Shares API keeps them.
    let log = serve.ok(
        "GET",
        "/__emulator/requests?path=/api/2.1/unity-catalog/shares/.*",
        None,
    );
    assert!(!log["requests"].as_array().unwrap().is_empty(), "{log}");

    // A function made by SQL (here through the functions API, as `CREATE FUNCTION` makes
    // one) takes the grants; they are imported by the Terraform provider's id and destroyed.
    serve.ok(
        "POST",
        "/api/2.1/unity-catalog/functions",
        Some(json!({"function_info": {
            "name": "udf", "catalog_name": "main", "schema_name": "default",
            "input_params": {"parameters": []}, "data_type": "INT", "full_data_type": "INT",
            "routine_body": "SQL", "routine_definition": "1", "parameter_style": "S",
            "is_deterministic": true, "sql_data_access": "CONTAINS_SQL", "is_null_call": false,
            "security_type": "DEFINER", "specific_name": "udf",
        }})),
    );
    let only_function = &text[..text
        .find("resource \"databricks_grant\" \"share\"")
        .unwrap()];
    std::fs::write(d.join("main.bf.hcl"), only_function).unwrap();
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 1 added"), "{out}");
    assert_eq!(
        grants_on(&serve, "function", "main.default.udf"),
        json!({"account users": ["EXECUTE"]})
    );
    bf_ok(d, &serve, &["state", "rm", "databricks_grants.udf"]);
    bf_ok(
        d,
        &serve,
        &[
            "import",
            "databricks_grants.udf",
            "function/main.default.udf",
        ],
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(grants_on(&serve, "function", "main.default.udf"), json!({}));

    let cases: &[(&str, &[&str])] = &[
        (
            "resource \"databricks_grants\" \"g\" {\n  function = \"main.default.udf\"\n  grant {\n    principal  = \"a\"\n    privileges = [\"APPLY_TAG\"]\n  }\n}\n",
            &[
                "\"APPLY_TAG\" is not a privilege on a function",
                "main.bf.hcl:5:",
            ],
        ),
        (
            "resource \"databricks_grant\" \"g\" {\n  credential = \"svc\"\n  principal  = \"a\"\n  privileges = [\"READ_FILES\"]\n}\n",
            &["\"READ_FILES\" is not a privilege on a service credential"],
        ),
        (
            "resource \"databricks_grant\" \"g\" {\n  mcp_service = \"main.mcp\"\n  principal   = \"a\"\n  privileges  = [\"EXECUTE\"]\n}\n",
            &[
                "\"main.mcp\" is not the full name of a MCP service",
                "CATALOG.SCHEMA.MCP_SERVICE",
            ],
        ),
        (
            "resource \"databricks_grants\" \"g\" {\n  share = \"quarterly\"\n  grant {\n    principal  = \"partner\"\n    privileges = [\"SELECT\", \"MODIFY\"]\n  }\n}\n",
            &["\"MODIFY\" is not a privilege on a share"],
        ),
    ];
    for (text, expected) in cases {
        let dir = config(&[("main.bf.hcl", text)]);
        let (code, out, err) = run(dir.path(), &["validate"], &[]);
        assert_eq!(code, 1, "{text}\n{out}{err}");
        for e in *expected {
            assert!(err.contains(e), "{e:?} missing for\n{text}\n{err}");
        }
    }
}
