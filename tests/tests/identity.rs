//! Workspace identities end to end against the local workspace: a group, a user, a service
//! principal, a membership and a grant to the group in one apply (the grant ordered after the
//! group by its reference), nothing planned after; a rename of the group and a user's new
//! display name planned as exactly those updates; a group and a membership imported by the
//! Terraform provider's id formats; destroy leaving the workspace's own principals.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{config, local_dump, run, run_ok};
use std::path::Path;

fn identities(group: &str, display: &str) -> String {
    format!(
        r#"
provider "databricks" {{
  host = "local"
}}

resource "databricks_group" "eng" {{
  display_name         = "{group}"
  allow_cluster_create = true
}}

resource "databricks_user" "ann" {{
  user_name    = "Ann.Lee@Example.com"
  display_name = "{display}"
}}

resource "databricks_service_principal" "ci" {{
  display_name          = "ci"
  databricks_sql_access = true
}}

resource "databricks_group_member" "ann" {{
  group_id  = databricks_group.eng.id
  member_id = databricks_user.ann.id
}}

resource "databricks_group_member" "ci" {{
  group_id  = databricks_group.eng.id
  member_id = databricks_service_principal.ci.id
}}

resource "databricks_catalog" "c" {{
  name          = "identity"
  force_destroy = true
}}

resource "databricks_grants" "c" {{
  catalog = databricks_catalog.c.name
  grant {{
    principal  = databricks_group.eng.display_name
    privileges = ["USE_CATALOG"]
  }}
}}

resource "databricks_secret_scope" "s" {{
  name = "identity"
}}

resource "databricks_secret_acl" "eng" {{
  scope      = databricks_secret_scope.s.name
  principal  = databricks_group.eng.display_name
  permission = "READ"
}}

# A job run as the service principal, which the group may run: both by reference, so the
# principals are made first.
resource "databricks_job" "nightly" {{
  name = "identity_nightly"
  run_as {{
    service_principal_name = databricks_service_principal.ci.application_id
  }}
  task {{
    task_key = "check"
    condition_task {{
      op    = "EQUAL_TO"
      left  = "1"
      right = "1"
    }}
  }}
}}

resource "databricks_permissions" "nightly" {{
  job_id = databricks_job.nightly.id
  access_control {{
    group_name       = databricks_group.eng.display_name
    permission_level = "CAN_MANAGE_RUN"
  }}
  access_control {{
    user_name        = databricks_user.ann.user_name
    permission_level = "CAN_VIEW"
  }}
}}

data "databricks_group" "eng" {{
  display_name = databricks_group.eng.display_name
  depends_on   = [databricks_group_member.ann, databricks_group_member.ci]
}}

data "databricks_user" "ann" {{
  user_name = databricks_user.ann.user_name
}}

data "databricks_service_principal" "ci" {{
  application_id = databricks_service_principal.ci.application_id
}}

output "members" {{
  value = data.databricks_group.eng.members
}}

output "users" {{
  value = data.databricks_group.eng.users
}}

output "alphanumeric" {{
  value = data.databricks_user.ann.alphanumeric
}}

output "sp_home" {{
  value = data.databricks_service_principal.ci.home
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

/// The principals of the workspace, as `kind:name`, and every group's members.
fn principals(d: &Path) -> Vec<String> {
    let dump = local_dump(d);
    let mut out = Vec::new();
    for (id, p) in dump["principals"].as_object().unwrap() {
        out.push(format!(
            "{}:{}",
            p["kind"].as_str().unwrap(),
            p["name"].as_str().unwrap()
        ));
        for m in dump["scim_attrs"][id]["members"]
            .as_array()
            .into_iter()
            .flatten()
        {
            // The workspace's own groups hold its user from the start.
            if ["users", "admins"].contains(&p["name"].as_str().unwrap()) && m == "4242424242424242"
            {
                continue;
            }
            let m = &dump["principals"][m.as_str().unwrap()];
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

#[test]
fn identities_are_made_renamed_imported_and_destroyed() {
    let dir = config(&[]);
    let d = dir.path();
    write(d, &identities("eng", "Ann"));
    let out = run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(out.contains("Apply complete!"), "{out}");
    let live = principals(d);
    for p in [
        "group:eng",
        "user:ann.lee@example.com",
        "member:eng:ann.lee@example.com",
    ] {
        assert!(live.contains(&p.to_string()), "{p} missing: {live:?}");
    }
    assert!(
        live.iter()
            .any(|p| p.starts_with("member:eng:") && !p.contains("ann.lee")),
        "the service principal is a member: {live:?}"
    );
    let dump = local_dump(d);
    assert!(
        dump["grants"].to_string().contains("eng"),
        "the group holds its grant: {}",
        dump["grants"]
    );
    // The job runs as the service principal, and the group and the user hold their
    // permissions on it.
    let job = dump["jobs"]
        .as_object()
        .unwrap()
        .values()
        .find(|j| j["settings"]["name"] == "identity_nightly")
        .unwrap();
    let sp = dump["principals"]
        .as_object()
        .unwrap()
        .values()
        .find(|p| p["kind"] == "service_principal")
        .unwrap();
    assert_eq!(
        job["settings"]["run_as"]["service_principal_name"], sp["name"],
        "{job}"
    );
    let acl = dump["permissions"].to_string();
    assert!(
        acl.contains(r#""group_name:eng":"CAN_MANAGE_RUN""#)
            && acl.contains(r#""user_name:ann.lee@example.com":"CAN_VIEW""#),
        "{acl}"
    );
    plan_is_empty(d, "the first apply");
    let got: serde_json::Value =
        serde_json::from_str(&run_ok(d, &["output", "--json"], &[])).unwrap();
    assert_eq!(
        got["members"]["value"].as_array().unwrap().len(),
        2,
        "{got}"
    );
    assert_eq!(got["users"]["value"].as_array().unwrap().len(), 1, "{got}");
    assert_eq!(got["alphanumeric"]["value"], "ann_lee");
    assert!(
        got["sp_home"]["value"]
            .as_str()
            .unwrap()
            .starts_with("/Users/")
    );

    // A rename of the group: an update of it alone, and of what names it.
    write(d, &identities("engineering", "Ann"));
    let (code, plan, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(
        plan.contains("databricks_group.eng will be updated in-place"),
        "{plan}"
    );
    assert!(
        plan.contains("~ display_name") && plan.contains("\"eng\" -> \"engineering\""),
        "{plan}"
    );
    assert!(
        !plan.contains("must be replaced") || !plan.contains("databricks_group.eng must"),
        "{plan}"
    );
    assert!(
        !plan.contains("databricks_group_member.ann must be replaced"),
        "{plan}"
    );
    run_ok(d, &["apply", "--auto-approve"], &[]);
    plan_is_empty(d, "the rename");
    let live = principals(d);
    assert!(
        live.contains(&"member:engineering:ann.lee@example.com".to_string()),
        "{live:?}"
    );

    // A user's display name: exactly that update.
    write(d, &identities("engineering", "Ann Lee"));
    let (code, plan, _) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{plan}");
    assert!(
        plan.contains("databricks_user.ann will be updated in-place"),
        "{plan}"
    );
    assert!(
        plan.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{plan}"
    );
    run_ok(d, &["apply", "--auto-approve"], &[]);
    plan_is_empty(d, "the display name");

    // Forgotten and imported by the provider's ids: the group by SCIM id, the membership
    // by `<group_id>|<member_id>`.
    let state = std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    let id_of = |addr: &str| -> String {
        state
            .to_string()
            .split(&format!("\"address\":\"{addr}\""))
            .nth(1)
            .and_then(|rest| rest.split("\"id\":\"").nth(1))
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("no id of {addr}"))
            .to_string()
    };
    let group_id = id_of("databricks_group.eng");
    let member_id = id_of("databricks_group_member.ann");
    assert_eq!(member_id.split('|').next(), Some(group_id.as_str()));
    run_ok(
        d,
        &[
            "state",
            "rm",
            "databricks_group.eng",
            "databricks_group_member.ann",
        ],
        &[],
    );
    run_ok(d, &["import", "databricks_group.eng", &group_id], &[]);
    run_ok(
        d,
        &["import", "databricks_group_member.ann", &member_id],
        &[],
    );
    plan_is_empty(d, "the imports");

    let out = run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert!(out.contains("Destroy complete!"), "{out}");
    let left = principals(d);
    assert_eq!(
        left.len(),
        4,
        "the workspace's own principals stay, the rest go: {left:?}"
    );
    for p in ["group:users", "group:admins", "group:account users"] {
        assert!(left.contains(&p.to_string()), "{p} gone: {left:?}");
    }
}

#[test]
fn a_group_of_a_taken_name_is_refused_unless_forced() {
    let dir = config(&[]);
    let d = dir.path();
    let group = |addr: &str, force: bool| {
        format!(
            "resource \"databricks_group\" \"{addr}\" {{\n  display_name = \"shared\"\n  force = {force}\n}}\n"
        )
    };
    let provider = "provider \"databricks\" {\n  host = \"local\"\n}\n";
    write(d, &format!("{provider}{}", group("a", false)));
    run_ok(d, &["apply", "--auto-approve"], &[]);
    // A second declaration of the name: the plan says it is taken.
    write(
        d,
        &format!("{provider}{}{}", group("a", false), group("b", false)),
    );
    let (code, out, err) = run(d, &["plan"], &[]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("the name is taken by group shared"), "{err}");
    // With force, the create takes the existing group over.
    write(
        d,
        &format!("{provider}{}{}", group("a", false), group("b", true)),
    );
    let out = run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(out.contains("1 added"), "{out}");
    let state = std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap();
    let groups = principals(d)
        .into_iter()
        .filter(|p| p == "group:shared")
        .count();
    assert_eq!(groups, 1, "{state}");
    run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert!(!principals(d).contains(&"group:shared".to_string()));
}
