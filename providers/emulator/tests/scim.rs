//! The SCIM API over HTTP as the Terraform provider calls it (terraform-provider-databricks
//! scim/groups.go, users.go, resource_service_principal.go, resource_group_member.go):
//! create with entitlements, PUT replacing, PATCH `Operations` on members, entitlements and
//! `active`, `eq` filters, 409 on a taken name with SCIM's error body, the built-in groups
//! kept, and a deleted principal gone from its groups.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::start;
use serde_json::json;

const SCIM: &str = "/api/2.0/preview/scim/v2";

#[tokio::test]
async fn groups_members_and_entitlements_as_the_provider_writes_them() {
    let c = start().await;
    let g = c
        .ok(
            &format!("{SCIM}/Groups"),
            json!({
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
                "displayName": "eng",
                "entitlements": [{"value": "allow-cluster-create"}],
            }),
        )
        .await;
    let gid = g["id"].as_str().unwrap().to_string();
    assert_eq!(
        g["entitlements"],
        json!([{"value": "allow-cluster-create"}])
    );

    // A second group of the name: 409 in SCIM's shape, the detail the provider matches.
    let (s, e) = c
        .post(&format!("{SCIM}/Groups"), json!({"displayName": "eng"}))
        .await;
    assert_eq!(s, 409);
    assert_eq!(e["detail"], "Group with name eng already exists.");
    assert_eq!(e["status"], "409");
    assert_eq!(
        e["schemas"],
        json!(["urn:ietf:params:scim:api:messages:2.0:Error"])
    );
    // The built-in groups are taken names too.
    let (s, e) = c
        .post(&format!("{SCIM}/Groups"), json!({"displayName": "users"}))
        .await;
    assert_eq!(
        (s, e["detail"].as_str()),
        (409, Some("Group with name users already exists."))
    );

    let u = c
        .ok(
            &format!("{SCIM}/Users"),
            json!({"userName": "Ann@Example.com", "displayName": "Ann"}),
        )
        .await;
    let uid = u["id"].as_str().unwrap().to_string();
    let (s, e) = c
        .post(
            &format!("{SCIM}/Users"),
            json!({"userName": "ann@example.com"}),
        )
        .await;
    assert_eq!(s, 409);
    assert_eq!(
        e["detail"],
        "User with username ann@example.com already exists."
    );

    // Membership: add, read back on both sides, remove by filter.
    let (s, _) = c
        .patch(
            &format!("{SCIM}/Groups/{gid}"),
            json!({
                "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                "Operations": [{"op": "add", "path": "members", "value": [{"value": uid}]}],
            }),
        )
        .await;
    assert_eq!(s, 200);
    let got = c.ok_get(&format!("{SCIM}/Groups/{gid}")).await;
    assert_eq!(got["members"][0]["value"], uid.as_str());
    assert_eq!(got["members"][0]["display"], "Ann");
    let user = c.ok_get(&format!("{SCIM}/Users/{uid}")).await;
    assert_eq!(user["groups"][0]["value"], gid.as_str());
    let (s, e) = c
        .patch(
            &format!("{SCIM}/Groups/{gid}"),
            json!({"Operations": [{"op": "add", "path": "members", "value": [{"value": "999999"}]}]}),
        )
        .await;
    assert_eq!(s, 404, "{e}");

    // PUT renames and replaces entitlements; members are what is sent.
    let (s, _) = c
        .put(
            &format!("{SCIM}/Groups/{gid}"),
            json!({
                "displayName": "engineering",
                "entitlements": [{"value": "databricks-sql-access"}],
                "members": [{"value": uid}],
            }),
        )
        .await;
    assert_eq!(s, 200);
    let found = c
        .ok_get(&format!(
            "{SCIM}/Groups?filter=displayName%20eq%20%22engineering%22"
        ))
        .await;
    assert_eq!(found["totalResults"], 1);
    assert_eq!(
        found["Resources"][0]["entitlements"],
        json!([{"value": "databricks-sql-access"}])
    );
    assert_eq!(found["Resources"][0]["members"][0]["value"], uid.as_str());
    // Renamed onto a taken name: 409.
    let (s, _) = c
        .put(
            &format!("{SCIM}/Groups/{gid}"),
            json!({"displayName": "admins"}),
        )
        .await;
    assert_eq!(s, 409);

    let (s, _) = c
        .patch(
            &format!("{SCIM}/Groups/{gid}"),
            json!({"Operations": [{"op": "remove", "path": format!("members[value eq \"{uid}\"]")}]}),
        )
        .await;
    assert_eq!(s, 200);
    let got = c.ok_get(&format!("{SCIM}/Groups/{gid}")).await;
    assert_eq!(got["members"], json!([]));

    // Entitlements patched as `databricks_entitlements` does; an unknown attribute refused.
    c.patch(
        &format!("{SCIM}/Users/{uid}"),
        json!({"Operations": [{"op": "add", "path": "entitlements", "value": [{"value": "workspace-access"}]}]}),
    )
    .await;
    let user = c.ok_get(&format!("{SCIM}/Users/{uid}")).await;
    assert_eq!(user["entitlements"], json!([{"value": "workspace-access"}]));
    let (s, e) = c
        .patch(
            &format!("{SCIM}/Users/{uid}"),
            json!({"Operations": [{"op": "add", "path": "members", "value": [{"value": gid}]}]}),
        )
        .await;
    assert_eq!((s, e["scimType"].as_str()), (400, Some("invalidPath")));

    // Deactivated as `disable_as_user_deletion` does.
    c.patch(
        &format!("{SCIM}/Users/{uid}"),
        json!({"Operations": [{"op": "replace", "path": "active", "value": [{"value": "false"}]}]}),
    )
    .await;
    let user = c.ok_get(&format!("{SCIM}/Users/{uid}")).await;
    assert_eq!(user["active"], false);

    // A deleted user is gone from its groups.
    c.patch(
        &format!("{SCIM}/Groups/{gid}"),
        json!({"Operations": [{"op": "add", "path": "members", "value": [{"value": uid}]}]}),
    )
    .await;
    let (s, _) = c.delete(&format!("{SCIM}/Users/{uid}")).await;
    assert_eq!(s, 200);
    let got = c.ok_get(&format!("{SCIM}/Groups/{gid}")).await;
    assert_eq!(got["members"], json!([]));
    let (s, e) = c.get(&format!("{SCIM}/Users/{uid}")).await;
    assert_eq!((s, e["status"].as_str()), (404, Some("404")));
}

#[tokio::test]
async fn the_built_in_groups_stay_and_service_principals_get_an_application_id() {
    let c = start().await;
    let found = c
        .ok_get(&format!(
            "{SCIM}/Groups?filter=displayName%20eq%20%22admins%22"
        ))
        .await;
    let admins = found["Resources"][0]["id"].as_str().unwrap().to_string();
    let (s, e) = c.delete(&format!("{SCIM}/Groups/{admins}")).await;
    assert_eq!(s, 400);
    assert_eq!(e["scimType"], "mutability");
    // Its entitlements can change (what an imported `admins` group may manage).
    let (s, _) = c
        .patch(
            &format!("{SCIM}/Groups/{admins}"),
            json!({"Operations": [{"op": "add", "path": "entitlements", "value": [{"value": "allow-cluster-create"}]}]}),
        )
        .await;
    assert_eq!(s, 200);

    let sp = c
        .ok(
            &format!("{SCIM}/ServicePrincipals"),
            json!({"displayName": "ci", "active": true, "entitlements": [{"value": ""}]}),
        )
        .await;
    let app_id = sp["applicationId"].as_str().unwrap().to_string();
    assert!(uuid_like(&app_id), "{app_id}");
    assert!(sp.get("entitlements").is_none(), "an empty value is none");
    let (s, e) = c
        .post(
            &format!("{SCIM}/ServicePrincipals"),
            json!({"applicationId": app_id, "displayName": "again"}),
        )
        .await;
    assert_eq!(s, 409);
    assert_eq!(
        e["detail"],
        format!("Service principal with application ID {app_id} already exists.")
    );
    let found = c
        .ok_get(&format!(
            "{SCIM}/ServicePrincipals?filter=applicationId%20eq%20%22{app_id}%22"
        ))
        .await;
    assert_eq!(found["totalResults"], 1);
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

/// The account's SCIM API: its own principals, apart from the workspace's (a group of one
/// name in each), the same calls as the workspace's, the account's words for a taken user
/// name, no workspace entitlements held; its id in the host metadata; another account's id
/// answered 404.
#[tokio::test]
async fn the_accounts_principals_are_its_own() {
    let c = start().await;
    let meta = c.ok_get("/.well-known/databricks-config").await;
    let account_id = meta["account_id"].as_str().unwrap().to_string();
    assert_eq!(account_id, brickform_emulator::LOCAL_ACCOUNT_ID);
    let acct = format!("/api/2.0/accounts/{account_id}/scim/v2");

    // The account starts with its admin, the workspace's user.
    let users = c.ok_get(&format!("{acct}/Users")).await;
    assert_eq!(users["totalResults"], 1, "{users}");
    assert_eq!(
        users["Resources"][0]["userName"],
        "local-user@brickform.local"
    );

    let g = c
        .ok(
            &format!("{acct}/Groups"),
            json!({
                "displayName": "eng",
                "entitlements": [{"value": "allow-cluster-create"}],
            }),
        )
        .await;
    let gid = g["id"].as_str().unwrap().to_string();
    assert!(g.get("entitlements").is_none(), "{g}");
    // The workspace's group of the same name is another principal.
    let w = c
        .ok(&format!("{SCIM}/Groups"), json!({"displayName": "eng"}))
        .await;
    assert_ne!(w["id"], g["id"]);
    let listed = c
        .ok_get(&format!(
            "{SCIM}/Groups?filter=displayName%20eq%20%22eng%22"
        ))
        .await;
    assert_eq!(listed["totalResults"], 1, "{listed}");
    assert_eq!(listed["Resources"][0]["id"], w["id"]);
    let (s, _) = c.get(&format!("{SCIM}/Groups/{gid}")).await;
    assert_eq!(s, 404, "an account group is not the workspace's");

    let u = c
        .ok(
            &format!("{acct}/Users"),
            json!({"userName": "ann@example.com"}),
        )
        .await;
    let uid = u["id"].as_str().unwrap().to_string();
    let (s, e) = c
        .post(
            &format!("{acct}/Users"),
            json!({"userName": "Ann@Example.com"}),
        )
        .await;
    assert_eq!(s, 409);
    assert_eq!(
        e["detail"],
        "User with email Ann@Example.com already exists in this account."
    );
    let (s, _) = c
        .patch(
            &format!("{acct}/Groups/{gid}"),
            json!({"Operations": [{"op": "add", "path": "members", "value": [{"value": uid}]}]}),
        )
        .await;
    assert_eq!(s, 200);
    let got = c.ok_get(&format!("{acct}/Groups/{gid}")).await;
    assert_eq!(got["members"][0]["value"], uid.as_str(), "{got}");
    let (s, _) = c.delete(&format!("{acct}/Users/{uid}")).await;
    assert_eq!(s, 200);
    let got = c.ok_get(&format!("{acct}/Groups/{gid}")).await;
    assert_eq!(got["members"], json!([]), "{got}");

    let other = "/api/2.0/accounts/11111111-1111-1111-1111-111111111111/scim/v2/Groups";
    let (s, e) = c.get(other).await;
    assert_eq!(s, 404, "{e}");
    let (s, _) = c.post(other, json!({"displayName": "x"})).await;
    assert_eq!(s, 404);
}
