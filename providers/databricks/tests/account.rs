//! An account-level configuration on the local workspace: the identity kinds reach the
//! account's SCIM API (`/api/2.0/accounts/{account_id}/scim/v2/...`, the local workspace's
//! account read from its host metadata), never the workspace's, and a user left to the
//! account's default is deactivated on destroy rather than deleted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_core::plan::PlanMode;
use common::Harness;

const CONFIG: &str = r#"
provider "databricks" {
  account_id = "00000000-0000-0000-0000-000000000000"
}

resource "databricks_group" "g" {
  display_name = "analysts"
}

resource "databricks_user" "u" {
  user_name = "ann@example.com"
}

resource "databricks_group_member" "m" {
  group_id  = databricks_group.g.id
  member_id = databricks_user.u.id
}
"#;

#[tokio::test]
async fn identities_reach_the_accounts_scim_api() {
    let h = Harness::start().await;
    let account = format!(
        "/api/2.0/accounts/{}/scim/v2",
        brickform_emulator::LOCAL_ACCOUNT_ID
    );
    h.run(CONFIG, PlanMode::Normal, true).await;
    let posts = h.requests("POST").await;
    for want in ["Groups", "Users"] {
        assert!(
            posts.contains(&format!("{account}/{want}")),
            "{want}: {posts:?}"
        );
    }
    let patches = h.requests("PATCH").await;
    assert!(
        patches
            .iter()
            .any(|p| p.starts_with(&format!("{account}/Groups/"))),
        "{patches:?}"
    );
    let all: Vec<String> = [posts, patches, h.requests("GET").await]
        .concat()
        .into_iter()
        .filter(|p| p.contains("/scim/"))
        .collect();
    assert!(
        all.iter().all(|p| p.starts_with(&account)),
        "a workspace SCIM call: {all:?}"
    );

    h.run(CONFIG, PlanMode::Destroy, true).await;
    let deletes = h.requests("DELETE").await;
    assert!(
        deletes
            .iter()
            .any(|p| p.starts_with(&format!("{account}/Groups/"))),
        "{deletes:?}"
    );
    assert!(
        !deletes.iter().any(|p| p.contains("/Users/")),
        "the user is deactivated, not deleted: {deletes:?}"
    );
    let users = h.api_get(&format!("{account}/Users")).await;
    let ann = users["Resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["userName"] == "ann@example.com")
        .expect("ann is still in the account");
    assert_eq!(ann["active"], false, "{ann}");
}
