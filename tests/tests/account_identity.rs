//! The account-level provider end to end against the local workspace: a configuration with a
//! workspace provider and an account provider alias (`host` an accounts host, `account_id`)
//! makes the account's group, users, service principal and membership through the account
//! SCIM API, apart from the workspace's principals (a workspace group of the same name stays
//! the workspace's); nothing planned after; a rename planned as exactly that update; an
//! account group imported by its SCIM id; destroy deleting or deactivating as the Terraform
//! provider does at account level, and leaving the workspace's principals as they were. A
//! workspace kind under the account provider (at `validate`), and entitlements on an account
//! principal (at `plan`), are refused with what to do; the provider's account-level examples convert and validate.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{config, local_dump, run, run_ok};
use std::path::Path;

fn configuration(account_group: &str) -> String {
    format!(
        r#"
provider "databricks" {{
  host = "local"
}}

provider "databricks" {{
  alias      = "mws"
  host       = "https://accounts.cloud.databricks.com"
  account_id = "00000000-0000-0000-0000-000000000000"
}}

# The workspace's own group: the same name as the account's, a principal of its own.
resource "databricks_group" "ws" {{
  display_name = "eng"
}}

resource "databricks_group" "acct" {{
  provider     = databricks.mws
  display_name = "{account_group}"
}}

resource "databricks_user" "ann" {{
  provider                 = databricks.mws
  user_name                = "ann@example.com"
  disable_as_user_deletion = false
}}

# Left to the account's default on destroy: deactivated, not deleted.
resource "databricks_user" "bob" {{
  provider  = databricks.mws
  user_name = "bob@example.com"
}}

resource "databricks_service_principal" "ci" {{
  provider                 = databricks.mws
  display_name             = "ci"
  disable_as_user_deletion = false
}}

resource "databricks_group_member" "ann" {{
  provider  = databricks.mws
  group_id  = databricks_group.acct.id
  member_id = databricks_user.ann.id
}}

resource "databricks_group_member" "ci" {{
  provider  = databricks.mws
  group_id  = databricks_group.acct.id
  member_id = databricks_service_principal.ci.id
}}

data "databricks_group" "acct" {{
  provider     = databricks.mws
  display_name = databricks_group.acct.display_name
  depends_on   = [databricks_group_member.ann, databricks_group_member.ci]
}}

output "account_members" {{
  value = data.databricks_group.acct.members
}}
"#
    )
}

fn write(d: &Path, text: &str) {
    std::fs::write(d.join("main.bf.hcl"), text).unwrap();
}

fn plan_is_empty(d: &Path, when: &str) {
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "plan after {when} is not empty\n{out}\n{err}");
}

/// The principals of one directory of the local workspace (`principals` for the
/// workspace's, `account_principals` for the account's), as `kind:name` (`…:inactive` when
/// deactivated), with every group's members as `member:group:name`.
fn principals(d: &Path, table: &str, attrs: &str) -> Vec<String> {
    let dump = local_dump(d);
    let mut out = Vec::new();
    for (id, p) in dump[table].as_object().unwrap() {
        let a = &dump[attrs][id];
        let inactive = a["active"] == false;
        out.push(format!(
            "{}:{}{}",
            p["kind"].as_str().unwrap(),
            p["name"].as_str().unwrap(),
            if inactive { ":inactive" } else { "" }
        ));
        for m in a["members"].as_array().into_iter().flatten() {
            let m = &dump[table][m.as_str().unwrap()];
            out.push(format!(
                "member:{}:{}",
                p["name"].as_str().unwrap(),
                m["name"].as_str().unwrap()
            ));
        }
    }
    out.sort();
    out
}

fn account(d: &Path) -> Vec<String> {
    principals(d, "account_principals", "account_attrs")
}

fn workspace(d: &Path) -> Vec<String> {
    principals(d, "principals", "scim_attrs")
}

fn id_in_state(d: &Path, addr: &str) -> String {
    let state = std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    state
        .to_string()
        .split(&format!("\"address\":\"{addr}\""))
        .nth(1)
        .and_then(|rest| rest.split("\"id\":\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no id of {addr}"))
        .to_string()
}

#[test]
fn account_identities_are_made_apart_from_the_workspace_changed_imported_and_destroyed() {
    let dir = config(&[]);
    let d = dir.path();
    write(d, &configuration("data-eng"));
    let out = run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(out.contains("Apply complete!"), "{out}");
    let acct = account(d);
    for p in [
        "group:data-eng",
        "user:ann@example.com",
        "user:bob@example.com",
        "member:data-eng:ann@example.com",
    ] {
        assert!(
            acct.contains(&p.to_string()),
            "{p} not in the account: {acct:?}"
        );
    }
    assert!(
        acct.iter()
            .any(|p| p.starts_with("service_principal:") && !p.ends_with(":inactive")),
        "{acct:?}"
    );
    let ws = workspace(d);
    assert!(ws.contains(&"group:eng".to_string()), "{ws:?}");
    for p in ["data-eng", "ann@example.com", "bob@example.com"] {
        assert!(
            !ws.iter().any(|w| w.contains(p)),
            "{p} reached the workspace: {ws:?}"
        );
    }
    plan_is_empty(d, "the first apply");
    let got: serde_json::Value =
        serde_json::from_str(&run_ok(d, &["output", "--json"], &[])).unwrap();
    assert_eq!(
        got["account_members"]["value"].as_array().unwrap().len(),
        2,
        "the account group's members, read through the account: {got}"
    );

    // A rename of the account group: exactly that update, in place.
    write(d, &configuration("data-engineering"));
    let (code, plan, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("databricks_group.acct will be updated in-place"),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    run_ok(d, &["apply", "--auto-approve"], &[]);
    plan_is_empty(d, "the rename");
    let acct = account(d);
    assert!(
        acct.contains(&"member:data-engineering:ann@example.com".to_string()),
        "the members stay through the rename: {acct:?}"
    );
    assert!(workspace(d).contains(&"group:eng".to_string()));

    // Forgotten and imported by the provider's id, the SCIM id, through the account.
    let group_id = id_in_state(d, "databricks_group.acct");
    run_ok(d, &["state", "rm", "databricks_group.acct"], &[]);
    run_ok(d, &["import", "databricks_group.acct", &group_id], &[]);
    plan_is_empty(d, "the import");

    let out = run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert!(out.contains("Destroy complete!"), "{out}");
    // Deleted where `disable_as_user_deletion = false` says so; bob, left to the account's
    // default, deactivated; the account's admin untouched.
    let acct = account(d);
    assert_eq!(
        acct,
        vec![
            "user:bob@example.com:inactive".to_string(),
            "user:local-user@brickform.local".to_string(),
        ],
        "{acct:?}"
    );
    let ws = workspace(d);
    for p in ["group:users", "group:admins", "group:account users"] {
        assert!(ws.contains(&p.to_string()), "{p} gone: {ws:?}");
    }
    assert!(!ws.contains(&"group:eng".to_string()), "{ws:?}");
}

#[test]
fn a_workspace_kind_under_the_account_provider_is_refused_at_validate() {
    let dir = config(&[]);
    let d = dir.path();
    write(
        d,
        r#"
provider "databricks" {
  alias      = "mws"
  host       = "https://accounts.azuredatabricks.net"
  account_id = "00000000-0000-0000-0000-000000000000"
}

resource "databricks_job" "nightly" {
  provider = databricks.mws
  name     = "nightly"
}

data "databricks_current_user" "me" {
  provider = databricks.mws
}

resource "databricks_group" "fine" {
  provider     = databricks.mws
  display_name = "fine"
}
"#,
    );
    let (code, out, err) = run(d, &["validate"], &[]);
    assert_ne!(code, 0, "{out}");
    for says in [
        "databricks_job.nightly cannot use the provider configuration databricks.mws",
        "databricks_job lives in a workspace, but this provider configuration is account-level",
        "data.databricks_current_user.me cannot use the provider configuration databricks.mws",
        "give it a workspace-level provider",
        "main.bf.hcl:9",
    ] {
        assert!(err.contains(says), "missing {says:?} in\n{err}");
    }
    assert!(
        !err.contains("databricks_group.fine"),
        "the account's kinds are the account provider's: {err}"
    );
}

#[test]
fn entitlements_of_an_account_principal_are_refused_at_plan() {
    let dir = config(&[]);
    let d = dir.path();
    write(
        d,
        r#"
provider "databricks" {
  host       = "local"
  account_id = "00000000-0000-0000-0000-000000000000"
}

resource "databricks_group" "g" {
  display_name         = "analysts"
  allow_cluster_create = true
}
"#,
    );
    let (code, out, err) = run(d, &["plan"], &[]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("main.bf.hcl:7"), "at the block: {err}");
    let (code, out, err) = run(d, &["apply", "--auto-approve"], &[]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("allow_cluster_create set on an account group")
            && err.contains("databricks_entitlements under a workspace-level provider"),
        "{err}"
    );
    assert!(
        !account(d).iter().any(|p| p.contains("analysts")),
        "nothing was made"
    );
}

#[test]
fn the_providers_account_level_examples_convert_and_validate() {
    let dir = config(&[]);
    let d = dir.path();
    let tf = d.join("tf");
    std::fs::create_dir(&tf).unwrap();
    // As docs/resources/group.md, user.md and service_principal.md of the Terraform provider
    // write them.
    std::fs::write(
        tf.join("main.tf"),
        r#"
provider "databricks" {
  alias      = "mws"
  host       = "https://accounts.cloud.databricks.com"
  account_id = "00000000-0000-0000-0000-000000000000"
}

provider "databricks" {
  alias      = "azure_account"
  host       = "https://accounts.azuredatabricks.net"
  account_id = "00000000-0000-0000-0000-000000000000"
  auth_type  = "azure-cli"
}

resource "databricks_group" "this" {
  provider     = databricks.mws
  display_name = "Some Group"
}

resource "databricks_user" "account_user" {
  provider     = databricks.azure_account
  user_name    = "me@example.com"
  display_name = "Example user"
}

resource "databricks_group_member" "m" {
  provider  = databricks.mws
  group_id  = databricks_group.this.id
  member_id = databricks_user.account_user.id
}
"#,
    )
    .unwrap();
    let out = run_ok(d, &["convert", "tf", "--out", "bf"], &[]);
    assert!(!out.contains("account_id"), "account_id is kept: {out}");
    let text = std::fs::read_to_string(d.join("bf/main.bf.hcl")).unwrap();
    assert!(
        text.contains("account_id = \"00000000-0000-0000-0000-000000000000\""),
        "{text}"
    );
    let out = run_ok(&d.join("bf"), &["validate"], &[]);
    assert!(out.contains("The configuration is valid"), "{out}");
}
