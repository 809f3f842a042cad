//! Queries, alerts and Lakeview dashboards over HTTP: the request and answer shapes the SDKs
//! and the Terraform provider use (databricks-sdk-go service/sql, service/dashboards), the
//! trash, pages of lists, published versions and the permissions of each.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Client, start};
use serde_json::{Value, json};

async fn query(c: &Client, name: &str) -> Value {
    c.ok(
        "/api/2.0/sql/queries",
        json!({"auto_resolve_display_name": false, "query": {
            "display_name": name, "warehouse_id": "w", "query_text": "select 1",
            "parent_path": "/Shared", "owner_user_name": "someone@else"}}),
    )
    .await
}

#[tokio::test]
async fn queries_are_written_by_mask_listed_in_pages_and_trashed() {
    let c = start().await;
    let q = query(&c, "one").await;
    let id = q["id"].as_str().unwrap().to_string();
    // Answered with the mount prefix; the create takes no owner: the caller owns it.
    assert_eq!(q["parent_path"], "/Workspace/Shared");
    assert_eq!(q["owner_user_name"], "local-user@brickform.local");
    assert_eq!(q["lifecycle_state"], "ACTIVE");
    let (s, e) = c
        .post(
            "/api/2.0/sql/queries",
            json!({"query": {"display_name": "one", "warehouse_id": "w", "query_text": "x", "parent_path": "/Workspace/Shared"}}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("Node named 'one' already exists")
    );
    let (s, e) = c
        .post(
            "/api/2.0/sql/queries",
            json!({"query": {"display_name": "two", "warehouse_id": "w", "query_text": "x", "parent_path": "/Shared/nope"}}),
        )
        .await;
    assert_eq!(s, 404, "{e}");

    let (s, u) = c
        .patch(
            &format!("/api/2.0/sql/queries/{id}"),
            json!({"update_mask": "query_text,owner_user_name", "query": {"query_text": "select 2", "owner_user_name": "other@x"}}),
        )
        .await;
    assert_eq!(s, 200, "{u}");
    assert_eq!(u["query_text"], "select 2");
    assert_eq!(u["owner_user_name"], "other@x");
    let (s, e) = c
        .patch(
            &format!("/api/2.0/sql/queries/{id}"),
            json!({"query": {"query_text": "x"}}),
        )
        .await;
    assert_eq!(s, 400, "the update mask is required: {e}");

    for n in 0..3 {
        query(&c, &format!("more{n}")).await;
    }
    let first = c.ok_get("/api/2.0/sql/queries?page_size=2").await;
    assert_eq!(first["results"].as_array().unwrap().len(), 2);
    let token = first["next_page_token"].as_str().unwrap();
    let rest = c
        .ok_get(&format!(
            "/api/2.0/sql/queries?page_size=2&page_token={token}"
        ))
        .await;
    assert_eq!(rest["results"].as_array().unwrap().len(), 2);
    assert!(rest.get("next_page_token").is_none());

    let (s, _) = c.delete(&format!("/api/2.0/sql/queries/{id}")).await;
    assert_eq!(s, 200);
    let trashed = c.ok_get(&format!("/api/2.0/sql/queries/{id}")).await;
    assert_eq!(trashed["lifecycle_state"], "TRASHED");
    let all = c.ok_get("/api/2.0/sql/queries?page_size=100").await;
    assert!(
        all["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|q| q["id"] != json!(id))
    );
    // Its name is free again in the folder.
    query(&c, "one").await;
}

#[tokio::test]
async fn alerts_need_a_live_query_and_a_condition() {
    let c = start().await;
    let q = query(&c, "q").await;
    let qid = q["id"].as_str().unwrap();
    let condition = json!({"op": "GREATER_THAN", "operand": {"column": {"name": "value"}},
        "threshold": {"value": {"double_value": 42}}});
    let a = c
        .ok(
            "/api/2.0/sql/alerts",
            json!({"alert": {"display_name": "a", "query_id": qid, "condition": condition, "notify_on_ok": true}}),
        )
        .await;
    assert_eq!(a["state"], "UNKNOWN");
    assert_eq!(a["condition"], condition);
    let aid = a["id"].as_str().unwrap();
    let (s, e) = c
        .post(
            "/api/2.0/sql/alerts",
            json!({"alert": {"display_name": "b", "query_id": qid, "condition": {"op": "BIGGER", "operand": {"column": {"name": "v"}}}}}),
        )
        .await;
    assert_eq!(s, 400, "{e}");
    let (s, _) = c.delete(&format!("/api/2.0/sql/queries/{qid}")).await;
    assert_eq!(s, 200);
    let (s, e) = c
        .post(
            "/api/2.0/sql/alerts",
            json!({"alert": {"display_name": "c", "query_id": qid, "condition": condition}}),
        )
        .await;
    assert_eq!(s, 404, "a trashed query cannot be used for alerts: {e}");
    // Permissions of an alert, and none of a trashed query.
    let (s, acl) = c
        .put(
            &format!("/api/2.0/permissions/sql/alerts/{aid}"),
            json!({"access_control_list": [{"group_name": "users", "permission_level": "CAN_RUN"}]}),
        )
        .await;
    assert_eq!(s, 200, "{acl}");
    assert_eq!(acl["object_type"], "alert");
    assert_eq!(acl["object_id"], format!("/sql/alerts/{aid}"));
    let (s, _) = c
        .get(&format!("/api/2.0/permissions/sql/queries/{qid}"))
        .await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn dashboards_are_rewritten_published_and_trashed_once() {
    let c = start().await;
    let d = c
        .ok(
            "/api/2.0/lakeview/dashboards?dataset_schema=gold",
            json!({"display_name": "sales", "warehouse_id": "w", "parent_path": "/Workspace/Shared",
                "serialized_dashboard": "{\"pages\":[{\"name\":\"p\"}],\"datasets\":[{\"name\":\"x\"}]}"}),
        )
        .await;
    let id = d["dashboard_id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32);
    assert_eq!(d["parent_path"], "/Shared");
    assert_eq!(d["path"], "/Shared/sales.lvdash.json");
    let doc: Value = serde_json::from_str(d["serialized_dashboard"].as_str().unwrap()).unwrap();
    assert_eq!(doc["pages"][0]["pageType"], "PAGE_TYPE_CANVAS");
    assert_eq!(doc["datasets"][0]["schema"], "gold");

    let (s, _) = c
        .get(&format!("/api/2.0/lakeview/dashboards/{id}/published"))
        .await;
    assert_eq!(s, 404, "not published yet");
    let p = c
        .ok(
            &format!("/api/2.0/lakeview/dashboards/{id}/published"),
            json!({"warehouse_id": "w", "embed_credentials": false}),
        )
        .await;
    assert_eq!(p["embed_credentials"], false);
    assert_eq!(p["display_name"], "sales");

    let (s, u) = c
        .patch(
            &format!("/api/2.0/lakeview/dashboards/{id}"),
            json!({"display_name": "revenue", "warehouse_id": "w2"}),
        )
        .await;
    assert_eq!(s, 200, "{u}");
    assert_eq!(u["path"], "/Shared/revenue.lvdash.json");
    assert_ne!(u["etag"], d["etag"]);
    let listed = c.ok_get("/api/2.0/lakeview/dashboards").await;
    assert_eq!(listed["dashboards"].as_array().unwrap().len(), 1);
    assert!(
        listed["dashboards"][0]
            .get("serialized_dashboard")
            .is_none()
    );

    let (s, acl) = c
        .put(
            &format!("/api/2.0/permissions/dashboards/{id}"),
            json!({"access_control_list": [{"group_name": "users", "permission_level": "CAN_READ"}]}),
        )
        .await;
    assert_eq!(s, 200, "{acl}");
    assert_eq!(acl["object_type"], "dashboard");

    let (s, _) = c
        .delete(&format!("/api/2.0/lakeview/dashboards/{id}"))
        .await;
    assert_eq!(s, 200);
    let (s, e) = c
        .delete(&format!("/api/2.0/lakeview/dashboards/{id}"))
        .await;
    assert_eq!(s, 403, "trashing again is refused: {e}");
    assert_eq!(
        c.ok_get(&format!("/api/2.0/lakeview/dashboards/{id}"))
            .await["lifecycle_state"],
        "TRASHED"
    );
    let (s, _) = c
        .get(&format!("/api/2.0/lakeview/dashboards/{id}/published"))
        .await;
    assert_eq!(s, 404, "unpublished with the trash");
    let listed = c.ok_get("/api/2.0/lakeview/dashboards").await;
    assert!(listed["dashboards"].as_array().unwrap().is_empty());
}
