//! Git folders over HTTP: the Repos API's shapes (databricks-sdk-go's RepoInfo), a folder
//! made without a path going to the caller's folder of /Repos, its node in the workspace
//! tree (object type REPO, object id the repo's id), checkouts, the service's refusals,
//! and its permissions, which go with it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Client, start};
use serde_json::{Value, json};

const ME: &str = "local-user@brickform.local";

async fn status(c: &Client, path: &str) -> (u16, Value) {
    c.get(&format!("/api/2.0/workspace/get-status?path={path}"))
        .await
}

#[tokio::test]
async fn a_git_folder_is_made_checked_out_listed_and_deleted_as_the_service_does() {
    let c = start().await;
    let made = c
        .ok(
            "/api/2.0/repos",
            json!({"url": "https://github.com/user/demo.git", "provider": "gitHub"}),
        )
        .await;
    let id = made["id"].as_i64().unwrap();
    let path = format!("/Repos/{ME}/demo");
    assert_eq!(made["path"], json!(path));
    assert_eq!(made["branch"], "main");
    assert_eq!(made["head_commit_id"].as_str().unwrap().len(), 40);
    let (code, st) = status(&c, &path).await;
    assert_eq!(code, 200, "{st}");
    assert_eq!(st["object_type"], "REPO");
    assert_eq!(st["object_id"], json!(id));
    let (_, listed) = c
        .get(&format!("/api/2.0/workspace/list?path=/Repos/{ME}"))
        .await;
    assert_eq!(listed["objects"][0]["path"], json!(path));

    // A second folder at the same path is refused with the service's words.
    let (code, e) = c
        .post(
            "/api/2.0/repos",
            json!({"url": "https://github.com/user/demo.git", "provider": "gitHub"}),
        )
        .await;
    assert_eq!(code, 400);
    assert_eq!(e["error_code"], "RESOURCE_ALREADY_EXISTS");
    // A path given needs its parent folder; a path in /Repos has three parts.
    let (code, e) = c
        .post(
            "/api/2.0/repos",
            json!({"url": "https://github.com/a/b", "provider": "gitHub", "path": "/Shared/x/b"}),
        )
        .await;
    assert_eq!(code, 404);
    assert_eq!(e["message"], "Parent directory /Shared/x does not exist.");
    let (code, _) = c
        .post(
            "/api/2.0/repos",
            json!({"url": "https://github.com/a/b", "provider": "gitHub", "path": "/Repos/b"}),
        )
        .await;
    assert_eq!(code, 400);
    let (code, _) = c
        .post(
            "/api/2.0/repos",
            json!({"url": "https://github.com/a/b", "provider": "svn"}),
        )
        .await;
    assert_eq!(code, 400);

    // A checkout: a branch moves the head, a tag leaves no branch.
    let at = format!("/api/2.0/repos/{id}");
    let (code, _) = c.patch(&at, json!({"branch": "dev"})).await;
    assert_eq!(code, 200);
    let got = c.ok_get(&at).await;
    assert_eq!(got["branch"], "dev");
    assert_ne!(got["head_commit_id"], made["head_commit_id"]);
    c.patch(&at, json!({"tag": "v1"})).await;
    assert!(c.ok_get(&at).await.get("branch").is_none());
    let (code, _) = c
        .patch(&at, json!({"sparse_checkout": {"patterns": ["src"]}}))
        .await;
    assert_eq!(
        code, 400,
        "sparse checkout is chosen when the folder is made"
    );

    let (_, all) = c.get("/api/2.0/repos").await;
    assert_eq!(all["repos"][0]["id"], json!(id));
    let (_, none) = c.get("/api/2.0/repos?path_prefix=/Shared").await;
    assert!(none["repos"].as_array().is_none_or(Vec::is_empty), "{none}");

    // Its permissions take the workspace levels and go with it.
    let perms = format!("/api/2.0/permissions/repos/{id}");
    let (code, got) = c
        .put(
            &perms,
            json!({"access_control_list": [{"group_name": "users", "permission_level": "CAN_RUN"}]}),
        )
        .await;
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["object_id"], format!("/repos/{id}"));
    assert_eq!(got["object_type"], "repo");
    let (code, _) = c.delete(&at).await;
    assert_eq!(code, 200);
    assert_eq!(status(&c, &path).await.0, 404);
    assert_eq!(c.get(&at).await.0, 404);
    assert_eq!(c.get(&perms).await.0, 404);
}

#[tokio::test]
async fn a_git_folder_deleted_through_the_workspace_is_gone_from_the_repos_api() {
    let c = start().await;
    let made = c
        .ok(
            "/api/2.0/repos",
            json!({"url": "https://gitlab.com/a/b.git", "provider": "gitlab", "path": "/Shared/b", "sparse_checkout": {"patterns": ["src"]}}),
        )
        .await;
    assert_eq!(made["sparse_checkout"], json!({"patterns": ["src"]}));
    let at = format!("/api/2.0/repos/{}", made["id"]);
    let (code, _) = c
        .patch(
            &at,
            json!({"sparse_checkout": {"patterns": ["src", "lib"]}}),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        c.ok_get(&at).await["sparse_checkout"]["patterns"],
        json!(["src", "lib"])
    );
    c.ok(
        "/api/2.0/workspace/delete",
        json!({"path": "/Shared/b", "recursive": true}),
    )
    .await;
    assert_eq!(c.get(&at).await.0, 404);
}
