//! Object permissions and secret ACLs over HTTP: the shapes the SDKs and the Terraform
//! provider read (direct and inherited entries, `object_id`, `object_type`), PUT replacing
//! and PATCH adding, the service's refusals, and permissions going with their object.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Client, start};
use serde_json::{Value, json};

const ME: &str = "local-user@brickform.local";

/// Principal → `[(level, inherited)]` of an answer.
fn held(answer: &Value) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for e in answer["access_control_list"].as_array().unwrap() {
        let who = ["user_name", "group_name", "service_principal_name"]
            .iter()
            .find_map(|f| e[*f].as_str())
            .unwrap()
            .to_string();
        for p in e["all_permissions"].as_array().unwrap() {
            out.push((
                who.clone(),
                p["permission_level"].as_str().unwrap().to_string(),
                p["inherited"].as_bool().unwrap(),
            ));
        }
    }
    out.sort();
    out
}

fn h(who: &str, level: &str, inherited: bool) -> (String, String, bool) {
    (who.to_string(), level.to_string(), inherited)
}

async fn job(c: &Client) -> String {
    let made = c
        .ok("/api/2.2/jobs/create", json!({"name": "perm-job"}))
        .await;
    made["job_id"].to_string()
}

#[tokio::test]
async fn a_jobs_permissions_are_replaced_added_to_and_refused_as_the_service_does() {
    let c = start().await;
    c.ok(
        "/api/2.0/preview/scim/v2/Groups",
        json!({"displayName": "eng"}),
    )
    .await;
    let id = job(&c).await;
    let path = format!("/api/2.0/permissions/jobs/{id}");
    let got = c.ok_get(&path).await;
    assert_eq!(got["object_id"], format!("/jobs/{id}"));
    assert_eq!(got["object_type"], "job");
    assert_eq!(
        held(&got),
        [h("admins", "CAN_MANAGE", true), h(ME, "IS_OWNER", false)]
    );
    let admins = got["access_control_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["group_name"] == "admins")
        .unwrap();
    assert_eq!(
        admins["all_permissions"][0]["inherited_from_object"],
        json!(["/jobs/"])
    );

    let (s, put) = c
        .put(
            &path,
            json!({"access_control_list": [
                {"group_name": "eng", "permission_level": "CAN_MANAGE_RUN"},
                {"user_name": ME, "permission_level": "IS_OWNER"},
            ]}),
        )
        .await;
    assert_eq!(s, 200, "{put}");
    assert_eq!(put, c.ok_get(&path).await, "PUT answers what GET reads");
    let (s, patched) = c
        .patch(
            &path,
            json!({"access_control_list": [{"group_name": "users", "permission_level": "CAN_VIEW"}]}),
        )
        .await;
    assert_eq!(s, 200, "{patched}");
    assert_eq!(
        held(&patched),
        [
            h("admins", "CAN_MANAGE", true),
            h("eng", "CAN_MANAGE_RUN", false),
            h(ME, "IS_OWNER", false),
            h("users", "CAN_VIEW", false),
        ]
    );
    let user = patched["access_control_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["user_name"] == ME)
        .unwrap();
    assert_eq!(user["display_name"], "local-user");

    // A PUT without an owner, a level jobs do not take, someone unknown, a missing job.
    let refusals = [
        (
            json!([{"group_name": "eng", "permission_level": "CAN_VIEW"}]),
            400,
            "INVALID_PARAMETER_VALUE",
            "The job must have exactly one owner.",
        ),
        (
            json!([{"user_name": ME, "permission_level": "CAN_READ"}]),
            400,
            "INVALID_PARAMETER_VALUE",
            "Permission level CAN_READ is not supported for a job",
        ),
        (
            json!([{"user_name": "nobody@example.com", "permission_level": "CAN_VIEW"}, {"user_name": ME, "permission_level": "IS_OWNER"}]),
            404,
            "RESOURCE_DOES_NOT_EXIST",
            "Principal: UserName(nobody@example.com) does not exist",
        ),
        (
            json!([{"permission_level": "CAN_VIEW"}]),
            400,
            "INVALID_PARAMETER_VALUE",
            "Exactly one of access_control_list[0].user_name",
        ),
    ];
    for (acl, status, code, message) in refusals {
        let (s, e) = c.put(&path, json!({ "access_control_list": acl })).await;
        assert_eq!((s, e["error_code"].as_str()), (status, Some(code)), "{e}");
        assert!(e["message"].as_str().unwrap().starts_with(message), "{e}");
    }
    assert_eq!(
        held(&c.ok_get(&path).await),
        held(&patched),
        "refusals change nothing"
    );
    let (s, e) = c.get("/api/2.0/permissions/jobs/424242").await;
    assert_eq!(
        (s, e["message"].as_str()),
        (404, Some("job 424242 does not exist"))
    );

    let levels = c.ok_get(&format!("{path}/permissionLevels")).await;
    let names: Vec<&str> = levels["permission_levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["permission_level"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["CAN_VIEW", "CAN_MANAGE_RUN", "IS_OWNER", "CAN_MANAGE"]
    );

    // The job's permissions go with it.
    c.ok(
        "/api/2.2/jobs/delete",
        json!({"job_id": id.parse::<i64>().unwrap()}),
    )
    .await;
    let (s, _) = c.get(&path).await;
    assert_eq!(s, 404);
    let dump = c.ok_get("/__emulator/state").await;
    assert_eq!(dump["permissions"], json!({}), "{}", dump["permissions"]);
}

#[tokio::test]
async fn a_notebook_inherits_from_its_folders_and_a_warehouse_keeps_its_owner() {
    let c = start().await;
    c.ok("/api/2.0/workspace/mkdirs", json!({"path": "/Shared/team"}))
        .await;
    c.ok(
        "/api/2.0/workspace/import",
        json!({"path": "/Shared/team/nb", "format": "SOURCE", "language": "PYTHON", "content": "cHJpbnQoMSk="}),
    )
    .await;
    let folder = c
        .ok_get("/api/2.0/workspace/get-status?path=/Shared/team")
        .await["object_id"]
        .to_string();
    let nb = c
        .ok_get("/api/2.0/workspace/get-status?path=/Shared/team/nb")
        .await["object_id"]
        .to_string();
    let (s, e) = c
        .put(
            &format!("/api/2.0/permissions/directories/{folder}"),
            json!({"access_control_list": [{"group_name": "users", "permission_level": "CAN_RUN"}]}),
        )
        .await;
    assert_eq!(s, 200, "{e}");
    let path = format!("/api/2.0/permissions/notebooks/{nb}");
    let got = c.ok_get(&path).await;
    assert_eq!(got["object_type"], "notebook");
    assert_eq!(
        held(&got),
        [h("admins", "CAN_MANAGE", true), h("users", "CAN_RUN", true)]
    );
    let users = got["access_control_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["group_name"] == "users")
        .unwrap();
    assert_eq!(
        users["all_permissions"][0]["inherited_from_object"],
        json!([format!("/directories/{folder}")])
    );
    let (s, e) = c
        .put(
            &path,
            json!({"access_control_list": [{"group_name": "users", "permission_level": "IS_OWNER"}]}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    // Deleting the folder takes the permissions of what was in it.
    let (s, e) = c
        .put(
            &path,
            json!({"access_control_list": [{"group_name": "users", "permission_level": "CAN_EDIT"}]}),
        )
        .await;
    assert_eq!(s, 200, "{e}");
    c.ok(
        "/api/2.0/workspace/delete",
        json!({"path": "/Shared/team", "recursive": true}),
    )
    .await;
    assert_eq!(
        c.ok_get("/__emulator/state").await["permissions"],
        json!({})
    );

    let w = c
        .ok(
            "/api/2.0/sql/warehouses",
            json!({"name": "bi", "cluster_size": "2X-Small"}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The Terraform provider's path and the SDK's reach the same warehouse.
    let (s, put) = c
        .put(
            &format!("/api/2.0/permissions/sql/warehouses/{w}"),
            json!({"access_control_list": [{"group_name": "users", "permission_level": "CAN_USE"}]}),
        )
        .await;
    assert_eq!(s, 200, "{put}");
    let got = c
        .ok_get(&format!("/api/2.0/permissions/warehouses/{w}"))
        .await;
    assert_eq!(got, put);
    assert_eq!(got["object_id"], format!("/sql/warehouses/{w}"));
    assert_eq!(got["object_type"], "warehouses");
    assert_eq!(
        held(&got),
        [
            h("admins", "CAN_MANAGE", true),
            h(ME, "IS_OWNER", false),
            h("users", "CAN_USE", false),
        ]
    );
}

#[tokio::test]
async fn secret_acls_are_put_listed_read_and_deleted() {
    let c = start().await;
    c.ok("/api/2.0/secrets/scopes/create", json!({"scope": "app"}))
        .await;
    let list = c.ok_get("/api/2.0/secrets/acls/list?scope=app").await;
    assert_eq!(
        list,
        json!({"items": [{"principal": ME, "permission": "MANAGE"}]}),
        "the creator manages the scope"
    );
    c.ok(
        "/api/2.0/secrets/acls/put",
        json!({"scope": "app", "principal": "users", "permission": "READ"}),
    )
    .await;
    c.ok(
        "/api/2.0/secrets/acls/put",
        json!({"scope": "app", "principal": "users", "permission": "WRITE"}),
    )
    .await;
    assert_eq!(
        c.ok_get("/api/2.0/secrets/acls/get?scope=app&principal=users")
            .await,
        json!({"principal": "users", "permission": "WRITE"})
    );
    let (s, e) = c
        .post(
            "/api/2.0/secrets/acls/put",
            json!({"scope": "app", "principal": "ghost", "permission": "READ"}),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (400, Some("INVALID_PARAMETER_VALUE"))
    );
    let (s, e) = c
        .post(
            "/api/2.0/secrets/acls/put",
            json!({"scope": "app", "principal": "users", "permission": "OWN"}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    c.ok(
        "/api/2.0/secrets/acls/delete",
        json!({"scope": "app", "principal": "users"}),
    )
    .await;
    let (s, e) = c
        .get("/api/2.0/secrets/acls/get?scope=app&principal=users")
        .await;
    assert_eq!(
        (s, e["message"].as_str()),
        (
            404,
            Some("Failed to get secret acl for principal users for scope app.")
        )
    );
    c.ok(
        "/api/2.0/secrets/scopes/create",
        json!({"scope": "open", "initial_manage_principal": "users"}),
    )
    .await;
    assert_eq!(
        c.ok_get("/api/2.0/secrets/acls/list?scope=open").await,
        json!({"items": [{"principal": "users", "permission": "MANAGE"}]})
    );
    let (s, _) = c.get("/api/2.0/secrets/acls/list?scope=none").await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn tokens_and_passwords_always_exist_and_objects_made_elsewhere_do_not() {
    let c = start().await;
    c.ok(
        "/api/2.0/preview/scim/v2/Groups",
        json!({"displayName": "eng"}),
    )
    .await;
    let tokens = "/api/2.0/permissions/authorization/tokens";
    let got = c.ok_get(tokens).await;
    assert_eq!(got["object_id"], "/authorization/tokens");
    assert_eq!(got["object_type"], "tokens");
    assert_eq!(held(&got), [h("admins", "CAN_MANAGE", true)]);
    // Every write keeps the admins group's CAN_MANAGE, as on the root folder.
    let (s, e) = c
        .put(
            tokens,
            json!({"access_control_list": [{"group_name": "eng", "permission_level": "CAN_USE"}]}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    assert_eq!(
        e["message"],
        "Cannot change permissions for group 'admins' to None."
    );
    let (s, put) = c
        .put(
            tokens,
            json!({"access_control_list": [
                {"group_name": "eng", "permission_level": "CAN_USE"},
                {"group_name": "admins", "permission_level": "CAN_MANAGE"},
            ]}),
        )
        .await;
    assert_eq!(s, 200, "{put}");
    assert!(held(&put).contains(&h("eng", "CAN_USE", false)), "{put}");

    // Passwords take CAN_USE alone, the admins group's included.
    let passwords = "/api/2.0/permissions/authorization/passwords";
    let (s, e) = c
        .put(
            passwords,
            json!({"access_control_list": [{"group_name": "eng", "permission_level": "CAN_MANAGE"}]}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("Permission level CAN_MANAGE is not supported for a passwords"),
        "{e}"
    );
    let (s, put) = c
        .put(
            passwords,
            json!({"access_control_list": [
                {"group_name": "admins", "permission_level": "CAN_USE"},
                {"group_name": "eng", "permission_level": "CAN_USE"},
            ]}),
        )
        .await;
    assert_eq!(s, 200, "{put}");
    assert_eq!(put["object_type"], "passwords");
    assert_eq!(
        held(&put),
        [h("admins", "CAN_USE", false), h("eng", "CAN_USE", false)]
    );
    let levels = c.ok_get(&format!("{passwords}/permissionLevels")).await;
    assert_eq!(levels["permission_levels"].as_array().unwrap().len(), 1);
    let (s, e) = c.get("/api/2.0/permissions/authorization/keys").await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("RESOURCE_DOES_NOT_EXIST"))
    );

    // Serving endpoints, apps and the rest are made by services the local workspace does
    // not serve: none exists.
    for (path, message) in [
        ("serving-endpoints/e1", "serving-endpoint e1 does not exist"),
        ("apps/my-app", "apps my-app does not exist"),
        (
            "vector-search-endpoints/v",
            "vector-search-endpoints v does not exist",
        ),
        (
            "database-instances/db",
            "database-instances db does not exist",
        ),
        ("database-projects/p", "database-projects p does not exist"),
        ("alertsv2/a", "alertv2 a does not exist"),
        (
            "knowledge-assistants/k",
            "knowledge-assistants k does not exist",
        ),
        ("supervisor-agents/s", "supervisor-agents s does not exist"),
        ("dbsql-dashboards/d", "dashboard d does not exist"),
    ] {
        let (s, e) = c.get(&format!("/api/2.0/permissions/{path}")).await;
        assert_eq!(
            (s, e["error_code"].as_str(), e["message"].as_str()),
            (404, Some("RESOURCE_DOES_NOT_EXIST"), Some(message)),
            "{path}"
        );
    }
}
