//! The emulator over real HTTP, in process: each test would fail if its feature broke.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers panic on purpose

use crate::common;

use brickform_emulator::{Emulator, EmulatorConfig, Timings};
use common::{Client, start, start_with};
use serde_json::{Value, json};
use std::time::Duration;

const UC: &str = "/api/2.1/unity-catalog";

async fn uc_base(c: &Client) {
    // `main` is the one a new workspace starts with.
    c.ok(
        &format!("{UC}/schemas"),
        json!({"name": "s", "catalog_name": "main"}),
    )
    .await;
}

#[tokio::test]
async fn requests_need_a_bearer_token_and_m2m_tokens_are_accepted() {
    let c = start_with(EmulatorConfig {
        tokens: Some(vec!["right".into()]),
        ..EmulatorConfig::for_tests()
    })
    .await;
    let r = c
        .http
        .get(c.url(&format!("{UC}/catalogs")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error_code"], "UNAUTHENTICATED");
    let r = c
        .http
        .get(c.url(&format!("{UC}/catalogs")))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // Discovery is public; the token endpoint wants the configured token as the client secret.
    let meta: Value = c
        .http
        .get(c.url("/.well-known/databricks-config"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(meta["oidc_endpoint"], format!("{}/oidc", c.emu.url()));
    let disc: Value = c
        .http
        .get(c.url("/oidc/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token_url = disc["token_endpoint"].as_str().unwrap().to_string();
    let form = [("grant_type", "client_credentials"), ("scope", "all-apis")];
    let bad = c
        .http
        .post(&token_url)
        .basic_auth("id", Some("nope"))
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    let tok: Value = c
        .http
        .post(&token_url)
        .basic_auth("id", Some("right"))
        .form(&form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tok["token_type"], "Bearer");
    let access = tok["access_token"].as_str().unwrap();
    let r = c
        .http
        .get(c.url("/api/2.0/preview/scim/v2/Me"))
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let me: Value = r.json().await.unwrap();
    assert_eq!(me["userName"], "local-user@brickform.local");
}

#[tokio::test]
async fn any_non_empty_token_is_accepted_by_default() {
    let c = start().await;
    let r = c
        .http
        .get(c.url(&format!("{UC}/catalogs")))
        .bearer_auth("anything")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = c
        .http
        .get(c.url(&format!("{UC}/catalogs")))
        .header("Authorization", "Bearer ")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn catalogs_are_lower_cased_get_a_default_schema_and_refuse_non_empty_delete() {
    let c = start().await;
    let cat = c
        .ok(
            &format!("{UC}/catalogs"),
            json!({"name": "Sales", "comment": "x"}),
        )
        .await;
    assert_eq!(cat["name"], "sales");
    for k in [
        "metastore_id",
        "storage_location",
        "owner",
        "created_at",
        "updated_by",
    ] {
        assert!(cat.get(k).is_some(), "{k} filled by the server");
    }
    let (s, e) = c
        .post(&format!("{UC}/catalogs"), json!({"name": "SALES"}))
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (409, Some("CATALOG_ALREADY_EXISTS"))
    );
    let schemas = c
        .ok_get(&format!("{UC}/schemas?catalog_name=sales&max_results=0"))
        .await;
    let names: Vec<&str> = schemas["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"default"));

    let (s, e) = c.delete(&format!("{UC}/catalogs/sales")).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (400, Some("CATALOG_NOT_EMPTY"))
    );
    assert!(e["message"].as_str().unwrap().contains("default"));
    let (s, _) = c.delete(&format!("{UC}/catalogs/sales?force=true")).await;
    assert_eq!(s, 200);
    let (s, e) = c.get(&format!("{UC}/catalogs/sales")).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("CATALOG_DOES_NOT_EXIST"))
    );
    let (s, _) = c.get(&format!("{UC}/schemas/sales.default")).await;
    assert_eq!(s, 404, "force delete removed the children");
}

#[tokio::test]
async fn parents_must_exist_and_renames_cascade_to_children_and_files() {
    let c = start().await;
    let (s, e) = c
        .post(
            &format!("{UC}/schemas"),
            json!({"name": "s", "catalog_name": "nope"}),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("CATALOG_DOES_NOT_EXIST"))
    );
    uc_base(&c).await;
    let (s, _) = c.post(&format!("{UC}/volumes"), json!({"catalog_name": "main", "schema_name": "nope", "name": "v", "volume_type": "MANAGED"})).await;
    assert_eq!(s, 404);
    c.ok(
        &format!("{UC}/volumes"),
        json!({"catalog_name": "main", "schema_name": "s", "name": "v", "volume_type": "MANAGED"}),
    )
    .await;
    let r = c
        .http
        .put(c.url("/api/2.0/fs/files/Volumes/main/s/v/a.txt"))
        .bearer_auth("t")
        .body("hi")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);

    let (s, e) = c.delete(&format!("{UC}/schemas/main.s")).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (400, Some("SCHEMA_NOT_EMPTY"))
    );
    assert!(e["message"].as_str().unwrap().contains("main.s.v"));

    let (s, sch) = c
        .patch(
            &format!("{UC}/schemas/main.s"),
            json!({"new_name": "T", "comment": "c"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        (sch["full_name"].as_str(), sch["comment"].as_str()),
        (Some("main.t"), Some("c"))
    );
    let vol = c.ok_get(&format!("{UC}/volumes/main.t.v")).await;
    assert_eq!(vol["schema_name"], "t");
    let r = c
        .http
        .get(c.url("/api/2.0/fs/files/Volumes/main/t/v/a.txt"))
        .bearer_auth("t")
        .send()
        .await
        .unwrap();
    assert_eq!(r.text().await.unwrap(), "hi");
    let (s, _) = c
        .patch(&format!("{UC}/catalogs/main"), json!({"new_name": "prod"}))
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        c.ok_get(&format!("{UC}/volumes/prod.t.v")).await["full_name"],
        "prod.t.v"
    );
}

#[tokio::test]
async fn uc_lists_page_with_tokens_that_end() {
    let c = start().await;
    for i in 0..5 {
        c.ok(&format!("{UC}/catalogs"), json!({"name": format!("c{i}")}))
            .await;
    }
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let q = token
            .as_ref()
            .map(|t| format!("&page_token={t}"))
            .unwrap_or_default();
        let page = c.ok_get(&format!("{UC}/catalogs?max_results=2{q}")).await;
        for cat in page["catalogs"].as_array().unwrap() {
            seen.push(cat["name"].as_str().unwrap().to_string());
        }
        match page.get("next_page_token") {
            Some(t) => token = Some(t.as_str().unwrap().to_string()),
            None => break,
        }
    }
    // And the `main` a new workspace starts with.
    assert_eq!(seen, ["c0", "c1", "c2", "c3", "c4", "main"]);
}

#[tokio::test]
async fn connection_secret_options_are_accepted_but_never_returned() {
    let c = start().await;
    let body = json!({"name": "Conn", "connection_type": "SQLSERVER",
                      "options": {"host": "h", "port": "1433", "user": "u", "password": "p"}});
    let created = c.ok(&format!("{UC}/connections"), body).await;
    assert!(created["options"].get("password").is_none());
    let got = c.ok_get(&format!("{UC}/connections/conn")).await;
    // Like the password, the user name is accepted and never returned.
    assert_eq!(got["options"], json!({"host": "h", "port": "1433"}));
    assert_eq!(got["credential_type"], "USERNAME_PASSWORD");
    assert!(!got.to_string().contains("\"p\""));
    let (s, e) = c
        .post(
            &format!("{UC}/connections"),
            json!({"name": "x", "connection_type": "NOPE", "options": {}}),
        )
        .await;
    assert_eq!(s, 400);
    assert!(e["message"].as_str().unwrap().contains("connection_type"));
    let (s, e) = c
        .patch(&format!("{UC}/connections/conn"), json!({"new_name": "c2"}))
        .await;
    assert_eq!(s, 400, "options are required on update: {e}");
}

async fn lfc(c: &Client) -> (String, String) {
    uc_base(c).await;
    c.ok(
        &format!("{UC}/connections"),
        json!({"name": "sql", "connection_type": "SQLSERVER", "options": {"host": "h"}}),
    )
    .await;
    let gw = c
        .ok("/api/2.0/pipelines", json!({"name": "gw", "continuous": true, "gateway_definition": {
            "connection_name": "sql", "gateway_storage_catalog": "main", "gateway_storage_schema": "s"}}))
        .await["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    let ing = c
        .ok("/api/2.0/pipelines", json!({"name": "ing", "serverless": true, "ingestion_definition": {
            "ingestion_gateway_id": gw, "objects": [{"table": {"source_table": "t", "destination_catalog": "main", "destination_schema": "s"}}]}}))
        .await["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    (gw, ing)
}

#[tokio::test]
async fn lakeflow_connect_references_are_enforced() {
    let c = start().await;
    let (s, e) = c
        .post("/api/2.0/pipelines", json!({"name": "gw", "gateway_definition": {"connection_name": "nope", "gateway_storage_catalog": "main", "gateway_storage_schema": "s"}}))
        .await;
    assert_eq!(s, 400);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("gateway_definition.connection_name"),
        "{e}"
    );
    let (s, e) = c
        .post(
            "/api/2.0/pipelines",
            json!({"name": "gw", "gateway_definition": {"connection_name": "nope"}}),
        )
        .await;
    assert_eq!(s, 400);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("gateway_storage_catalog"),
        "{e}"
    );

    let (gw, ing) = lfc(&c).await;
    let got = c.ok_get(&format!("/api/2.0/pipelines/{ing}")).await;
    assert_eq!(
        got["spec"]["ingestion_definition"]["source_type"],
        "SQLSERVER"
    );
    assert_eq!(got["spec"]["id"], json!(ing));
    let (s, e) = c
        .post("/api/2.0/pipelines", json!({"name": "ing2", "ingestion_definition": {
            "ingestion_gateway_id": gw, "objects": [{"table": {"source_table": "t", "destination_catalog": "main", "destination_schema": "nope"}}]}}))
        .await;
    assert_eq!(s, 400);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("objects[0].table.destination_schema"),
        "{e}"
    );
    let (s, _) = c
        .post(
            "/api/2.0/pipelines",
            json!({"name": "ing", "serverless": true}),
        )
        .await;
    assert_eq!(s, 409, "duplicate names are refused unless allowed");

    // Immutable gateway fields cannot change in an edit.
    let (s, e) = c
        .put(&format!("/api/2.0/pipelines/{gw}"), json!({"name": "gw", "gateway_definition": {
            "connection_name": "sql", "gateway_storage_catalog": "main", "gateway_storage_schema": "default"}}))
        .await;
    assert_eq!(s, 400, "{e}");
}

#[tokio::test]
async fn pipeline_updates_walk_their_states_with_the_clock() {
    let c = start_with(EmulatorConfig {
        timings: Timings {
            update_step: Duration::from_secs(10),
            ..Timings::instant()
        },
        ..EmulatorConfig::for_tests()
    })
    .await;
    uc_base(&c).await;
    let id = c
        .ok(
            "/api/2.0/pipelines",
            json!({"name": "p", "catalog": "main", "schema": "s"}),
        )
        .await["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        c.ok_get(&format!("/api/2.0/pipelines/{id}")).await["state"],
        "IDLE"
    );
    let uid = c
        .ok(
            &format!("/api/2.0/pipelines/{id}/updates"),
            json!({"full_refresh": true}),
        )
        .await["update_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (s, _) = c
        .post(&format!("/api/2.0/pipelines/{id}/updates"), json!({}))
        .await;
    assert_eq!(s, 409, "a second update cannot start while one is active");
    let mut seen = Vec::new();
    for _ in 0..7 {
        let u = c
            .ok_get(&format!("/api/2.0/pipelines/{id}/updates/{uid}"))
            .await;
        seen.push(u["update"]["state"].as_str().unwrap().to_string());
        c.emu.advance_clock(Duration::from_secs(10));
    }
    assert_eq!(
        seen,
        [
            "QUEUED",
            "CREATED",
            "WAITING_FOR_RESOURCES",
            "INITIALIZING",
            "SETTING_UP_TABLES",
            "RUNNING",
            "COMPLETED"
        ]
    );
    let p = c.ok_get(&format!("/api/2.0/pipelines/{id}")).await;
    assert_eq!(
        (
            p["state"].as_str(),
            p["latest_updates"][0]["state"].as_str()
        ),
        (Some("IDLE"), Some("COMPLETED"))
    );

    // A notebook library that does not exist makes the update fail.
    let spec = json!({"name": "p", "catalog": "main", "schema": "s", "libraries": [{"notebook": {"path": "/Shared/missing"}}]});
    let (s, _) = c.put(&format!("/api/2.0/pipelines/{id}"), spec).await;
    assert_eq!(s, 200);
    let uid = c
        .ok(&format!("/api/2.0/pipelines/{id}/updates"), json!({}))
        .await["update_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.emu.advance_clock(Duration::from_secs(60));
    assert_eq!(
        c.ok_get(&format!("/api/2.0/pipelines/{id}/updates/{uid}"))
            .await["update"]["state"],
        "FAILED"
    );

    // Stop cancels an active update.
    let (s, _) = c
        .put(
            &format!("/api/2.0/pipelines/{id}"),
            json!({"name": "p", "catalog": "main", "schema": "s"}),
        )
        .await;
    assert_eq!(s, 200);
    let uid = c
        .ok(&format!("/api/2.0/pipelines/{id}/updates"), json!({}))
        .await["update_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok(&format!("/api/2.0/pipelines/{id}/stop"), json!({}))
        .await;
    assert_eq!(
        c.ok_get(&format!("/api/2.0/pipelines/{id}/updates/{uid}"))
            .await["update"]["state"],
        "CANCELED"
    );
}

#[tokio::test]
async fn stop_cancels_and_list_filters() {
    let c = start_with(EmulatorConfig {
        timings: Timings {
            update_step: Duration::from_secs(10),
            ..Timings::instant()
        },
        ..EmulatorConfig::for_tests()
    })
    .await;
    let (gw, ing) = lfc(&c).await;
    assert_eq!(
        c.ok_get(&format!("/api/2.0/pipelines/{gw}")).await["state"],
        "STARTING"
    );
    c.emu.advance_clock(Duration::from_secs(100));
    assert_eq!(
        c.ok_get(&format!("/api/2.0/pipelines/{gw}")).await["state"],
        "RUNNING",
        "a continuous gateway keeps running"
    );
    c.ok(&format!("/api/2.0/pipelines/{gw}/stop"), json!({}))
        .await;
    let p = c.ok_get(&format!("/api/2.0/pipelines/{gw}")).await;
    assert_eq!(
        (
            p["state"].as_str(),
            p["latest_updates"][0]["state"].as_str()
        ),
        (Some("IDLE"), Some("CANCELED"))
    );

    let l = c
        .ok_get("/api/2.0/pipelines?filter=name%20LIKE%20%27in%25%27")
        .await;
    let ids: Vec<&str> = l["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["pipeline_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [ing.as_str()]);
    let (s, _) = c.get("/api/2.0/pipelines?filter=bogus").await;
    assert_eq!(s, 400);
    let (s, _) = c
        .delete(&format!("/api/2.0/pipelines/{gw}?cascade=false"))
        .await;
    assert_eq!(s, 200);
    // A delete is asynchronous: DELETING for an update step, then gone.
    let p = c.ok_get(&format!("/api/2.0/pipelines/{gw}")).await;
    assert_eq!(p["state"], "DELETING");
    c.ok("/__emulator/clock", json!({"advance_ms": 10_000}))
        .await;
    let (s, e) = c.get(&format!("/api/2.0/pipelines/{gw}")).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("RESOURCE_DOES_NOT_EXIST"))
    );
}

fn notebook_task(key: &str, path: &str) -> Value {
    json!({"task_key": key, "notebook_task": {"notebook_path": path}})
}

#[tokio::test]
async fn jobs_get_pages_tasks_and_omits_the_token_on_the_last_page() {
    let c = start().await;
    let tasks: Vec<Value> = (0..230)
        .map(|i| notebook_task(&format!("t{i:03}"), "/x"))
        .collect();
    let id = c
        .ok(
            "/api/2.2/jobs/create",
            json!({"name": "big", "tasks": tasks}),
        )
        .await["job_id"]
        .as_i64()
        .unwrap();
    let mut keys = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let q = token
            .as_ref()
            .map(|t| format!("&page_token={t}"))
            .unwrap_or_default();
        let job = c.ok_get(&format!("/api/2.2/jobs/get?job_id={id}{q}")).await;
        pages += 1;
        for t in job["settings"]["tasks"].as_array().unwrap() {
            keys.push(t["task_key"].as_str().unwrap().to_string());
        }
        match job.get("next_page_token") {
            Some(t) => token = Some(t.as_str().unwrap().to_string()),
            None => break,
        }
    }
    assert_eq!((pages, keys.len()), (3, 230));
    assert_eq!(keys[229], "t229");
    let (s, e) = c.get("/api/2.2/jobs/get?job_id=42").await;
    assert_eq!(
        (s, e["message"].as_str()),
        (400, Some("Job 42 does not exist."))
    );
}

/// `jobs/list` with `expand_tasks` answers each job as a `BaseJob`: the first 100 tasks,
/// `has_more` on a job with more (the rest come from `jobs/get`), no `run_as_user_name`;
/// pages of at most 100 jobs, followed with `page_token`; without `expand_tasks` no tasks.
#[tokio::test]
async fn jobs_list_expands_tasks_up_to_a_page_and_marks_the_rest() {
    let c = start().await;
    let big: Vec<Value> = (0..130)
        .map(|i| notebook_task(&format!("t{i:03}"), "/x"))
        .collect();
    let big_id = c
        .ok("/api/2.2/jobs/create", json!({"name": "big", "tasks": big}))
        .await["job_id"]
        .as_i64()
        .unwrap();
    for i in 0..104 {
        c.ok(
            "/api/2.2/jobs/create",
            json!({"name": format!("small{i}"), "tasks": [notebook_task("a", "/a")]}),
        )
        .await;
    }
    let (s, e) = c.get("/api/2.2/jobs/list?limit=101").await;
    assert_eq!(s, 400, "{e}");
    let first = c
        .ok_get("/api/2.2/jobs/list?expand_tasks=true&limit=100")
        .await;
    let jobs = first["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 100);
    assert_eq!(first["has_more"], true);
    let listed_big = jobs.iter().find(|j| j["job_id"] == big_id).unwrap();
    assert_eq!(
        listed_big["settings"]["tasks"].as_array().unwrap().len(),
        100
    );
    assert_eq!(listed_big["has_more"], true);
    assert!(listed_big.get("run_as_user_name").is_none(), "{listed_big}");
    assert!(listed_big.get("creator_user_name").is_some());
    let small = jobs.iter().find(|j| j["job_id"] != big_id).unwrap();
    assert_eq!(small["settings"]["tasks"].as_array().unwrap().len(), 1);
    assert!(small.get("has_more").is_none(), "{small}");
    let token = first["next_page_token"].as_str().unwrap();
    let second = c
        .ok_get(&format!(
            "/api/2.2/jobs/list?expand_tasks=true&limit=100&page_token={token}"
        ))
        .await;
    assert_eq!(second["jobs"].as_array().unwrap().len(), 5);
    assert_eq!(second["has_more"], false);
    assert!(second.get("next_page_token").is_none());
    let plain = c.ok_get("/api/2.2/jobs/list?limit=100").await;
    assert!(plain["jobs"][0]["settings"].get("tasks").is_none());
    // The rest of the big job's tasks: from jobs/get.
    let got = c
        .ok_get(&format!("/api/2.2/jobs/get?job_id={big_id}"))
        .await;
    assert!(got.get("run_as_user_name").is_some());
    assert!(got.get("next_page_token").is_some());
}

#[tokio::test]
async fn jobs_update_merges_tasks_by_key_and_removes_fields() {
    let c = start().await;
    let id = c
        .ok(
            "/api/2.2/jobs/create",
            json!({"name": "j", "tasks": [notebook_task("a", "/a"), notebook_task("b", "/b")],
            "schedule": {"quartz_cron_expression": "0 0 * * * ?", "timezone_id": "UTC"}}),
        )
        .await["job_id"]
        .as_i64()
        .unwrap();
    c.ok("/api/2.2/jobs/update", json!({"job_id": id, "new_settings": {"tasks": [notebook_task("b", "/b2"), notebook_task("c", "/c")], "timeout_seconds": 60},
        "fields_to_remove": ["schedule", "tasks/a"]}))
        .await;
    let s = &c.ok_get(&format!("/api/2.2/jobs/get?job_id={id}")).await["settings"];
    let tasks: Vec<(&str, &str)> = s["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task_key"].as_str().unwrap(),
                t["notebook_task"]["notebook_path"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(tasks, [("b", "/b2"), ("c", "/c")]);
    assert_eq!(s["timeout_seconds"], 60);
    assert!(s.get("schedule").is_none());
    assert_eq!(s["format"], "MULTI_TASK");
    let (st, e) = c.post("/api/2.2/jobs/update", json!({"job_id": id, "new_settings": {"tasks": [{"task_key": "d", "depends_on": [{"task_key": "zz"}], "notebook_task": {"notebook_path": "/d"}}]}})).await;
    assert_eq!(st, 400, "{e}");
    let (st, e) = c
        .post("/api/2.2/jobs/create", json!({"tasks": [
            {"task_key": "a", "depends_on": [{"task_key": "b"}], "notebook_task": {"notebook_path": "/a"}},
            {"task_key": "b", "depends_on": [{"task_key": "a"}], "notebook_task": {"notebook_path": "/b"}}]}))
        .await;
    assert_eq!(st, 400);
    assert!(e["message"].as_str().unwrap().contains("a → b → a"), "{e}");
}

async fn import_notebook(c: &Client, path: &str) {
    let parent = path.rsplit_once('/').unwrap().0;
    c.ok("/api/2.0/workspace/mkdirs", json!({"path": parent}))
        .await;
    c.ok("/api/2.0/workspace/import", json!({"path": path, "format": "SOURCE", "language": "PYTHON", "content": "cHJpbnQoMSk=", "overwrite": true})).await;
}

#[tokio::test]
async fn runs_execute_in_dependency_order_with_run_if_and_conditions() {
    let c = start_with(EmulatorConfig {
        timings: Timings {
            task: Duration::from_secs(5),
            run_setup: Duration::from_secs(1),
            ..Timings::instant()
        },
        ..EmulatorConfig::for_tests()
    })
    .await;
    import_notebook(&c, "/Shared/ok").await;
    let id = c
        .ok("/api/2.2/jobs/create", json!({"name": "flow", "parameters": [{"name": "env", "default": "dev"}], "tasks": [
            {"task_key": "cond", "condition_task": {"op": "EQUAL_TO", "left": "{{job.parameters.env}}", "right": "prod"}},
            {"task_key": "if_prod", "depends_on": [{"task_key": "cond", "outcome": "true"}], "notebook_task": {"notebook_path": "/Shared/ok"}},
            {"task_key": "if_dev", "depends_on": [{"task_key": "cond", "outcome": "false"}], "notebook_task": {"notebook_path": "/Shared/missing"}},
            {"task_key": "after", "depends_on": [{"task_key": "if_dev"}], "notebook_task": {"notebook_path": "/Shared/ok"}},
            {"task_key": "on_failure", "depends_on": [{"task_key": "if_dev"}], "run_if": "AT_LEAST_ONE_FAILED", "notebook_task": {"notebook_path": "/Shared/ok"}}]}))
        .await["job_id"]
        .as_i64()
        .unwrap();
    let run_id = c.ok("/api/2.2/jobs/run-now", json!({"job_id": id})).await["run_id"]
        .as_i64()
        .unwrap();
    let run = c
        .ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run_id}"))
        .await;
    assert_eq!(run["state"]["life_cycle_state"], "PENDING");
    c.emu.advance_clock(Duration::from_secs(1));
    assert_eq!(
        c.ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run_id}"))
            .await["state"]["life_cycle_state"],
        "RUNNING"
    );
    c.emu.advance_clock(Duration::from_secs(30));
    let run = c
        .ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run_id}"))
        .await;
    assert!(run.get("next_page_token").is_none());
    let result = |k: &str| {
        let t = run["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task_key"] == k)
            .unwrap();
        (
            t["state"]["result_state"].as_str().unwrap().to_string(),
            t["start_time"].as_i64().unwrap(),
        )
    };
    assert_eq!(result("cond").0, "SUCCESS");
    assert_eq!(result("if_prod").0, "EXCLUDED");
    assert_eq!(result("if_dev").0, "FAILED");
    assert_eq!(result("after").0, "UPSTREAM_FAILED");
    assert_eq!(result("on_failure").0, "SUCCESS");
    assert!(
        result("on_failure").1 >= result("if_dev").1 + 5000,
        "a task starts after its dependency ends"
    );
    assert_eq!(run["state"]["result_state"], "FAILED");

    // With env=prod the other branch runs and the run succeeds.
    let run_id = c
        .ok(
            "/api/2.2/jobs/run-now",
            json!({"job_id": id, "job_parameters": {"env": "prod"}}),
        )
        .await["run_id"]
        .as_i64()
        .unwrap();
    c.emu.advance_clock(Duration::from_secs(60));
    let run = c
        .ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run_id}"))
        .await;
    assert_eq!(run["state"]["result_state"], "SUCCESS", "{run}");
    assert_eq!(run["job_parameters"][0]["value"], "prod");
    let (s, e) = c.get("/api/2.2/jobs/runs/get?run_id=1").await;
    assert_eq!(
        (s, e["message"].as_str()),
        (400, Some("Run 1 does not exist."))
    );
}

/// Task values given through `/__emulator/task-values` drive a condition task; a For each
/// task's iterations and a Run Job task's run are read over HTTP as the service shows them.
#[tokio::test]
async fn task_values_drive_conditions_and_for_each_and_run_job_tasks_really_run() {
    let c = start_with(EmulatorConfig {
        timings: Timings {
            task: Duration::from_secs(1),
            ..Timings::instant()
        },
        ..EmulatorConfig::for_tests()
    })
    .await;
    let child = c
        .ok("/api/2.2/jobs/create", json!({"name": "child", "tasks": [
            {"task_key": "only", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}}]}))
        .await["job_id"]
        .as_i64()
        .unwrap();
    let id = c
        .ok("/api/2.2/jobs/create", json!({"name": "flow", "tasks": [
            {"task_key": "setter", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}},
            {"task_key": "check", "depends_on": [{"task_key": "setter"}],
                "condition_task": {"op": "GREATER_THAN", "left": "{{tasks.setter.values.rows}}", "right": "10"}},
            {"task_key": "each", "depends_on": [{"task_key": "check", "outcome": "true"}],
                "for_each_task": {"inputs": "{{tasks.setter.values.tables}}", "concurrency": 2,
                    "task": {"task_key": "one", "condition_task": {"op": "NOT_EQUAL", "left": "{{input}}", "right": ""}}}},
            {"task_key": "child", "depends_on": [{"task_key": "each"}], "run_job_task": {"job_id": child}}]}))
        .await["job_id"]
        .as_i64()
        .unwrap();
    // Given badly: refused with the field named, nothing kept.
    let (s, e) = c
        .post(
            "/__emulator/task-values",
            json!({"task_key": "setter", "values": {"rows": 1}}),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (400, Some("INVALID_PARAMETER_VALUE")),
        "{e}"
    );
    let (s, _) = c
        .post(
            "/__emulator/task-values",
            json!({"job_id": id, "values": {"rows": 1}}),
        )
        .await;
    assert_eq!(s, 400);
    c.ok(
        "/__emulator/task-values",
        json!({"job_id": id, "task_key": "setter", "values": {"rows": 42, "tables": ["a", "b", "c"]}}),
    )
    .await;
    let listed = c.ok_get("/__emulator/task-values").await;
    assert_eq!(listed["task_values"][0]["values"]["rows"], 42, "{listed}");

    let run_id = c.ok("/api/2.2/jobs/run-now", json!({"job_id": id})).await["run_id"]
        .as_i64()
        .unwrap();
    c.emu.advance_clock(Duration::from_secs(60));
    let run = c
        .ok_get(&format!(
            "/api/2.2/jobs/runs/get?run_id={run_id}&include_resolved_values=true"
        ))
        .await;
    assert_eq!(run["state"]["result_state"], "SUCCESS", "{run}");
    let task = |k: &str| {
        run["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task_key"] == k)
            .unwrap()
            .clone()
    };
    assert_eq!(task("check")["condition_task"]["outcome"], "true");
    assert_eq!(
        task("check")["resolved_values"]["condition_task"]["left"],
        "42"
    );
    let each = task("each");
    assert_eq!(
        each["for_each_task"]["stats"]["task_run_stats"]["succeeded_iterations"],
        3
    );
    let iterations = c
        .ok_get(&format!(
            "/api/2.2/jobs/runs/get?run_id={}&include_resolved_values=true",
            each["run_id"]
        ))
        .await;
    let inputs: Vec<&Value> = iterations["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["resolved_values"]["condition_task"]["left"])
        .collect();
    assert_eq!(inputs, [&json!("a"), &json!("b"), &json!("c")]);
    // The Run Job task's run is in the child job's runs, started by that task.
    let runs = c
        .ok_get(&format!("/api/2.2/jobs/runs/list?job_id={child}"))
        .await;
    let child_run = &runs["runs"][0];
    assert_eq!(child_run["trigger"], "RUN_JOB_TASK");
    assert_eq!(child_run["trigger_info"]["run_id"], task("child")["run_id"]);
    assert_eq!(child_run["state"]["result_state"], "SUCCESS");
    let out = c
        .ok_get(&format!(
            "/api/2.2/jobs/runs/get-output?run_id={}",
            task("child")["run_id"]
        ))
        .await;
    assert_eq!(out["run_job_output"]["run_id"], child_run["run_id"]);

    // Forgotten, the value is unset: the condition on it fails, and what follows it.
    c.call(reqwest::Method::DELETE, "/__emulator/task-values", None)
        .await;
    let run_id = c.ok("/api/2.2/jobs/run-now", json!({"job_id": id})).await["run_id"]
        .as_i64()
        .unwrap();
    c.emu.advance_clock(Duration::from_secs(60));
    let run = c
        .ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run_id}"))
        .await;
    assert_eq!(run["tasks"][1]["state"]["result_state"], "FAILED", "{run}");
    assert!(
        run["tasks"][1]["state"]["state_message"]
            .as_str()
            .unwrap()
            .contains("did not set the task value 'rows'"),
        "{run}"
    );
    assert_eq!(run["tasks"][2]["state"]["result_state"], "UPSTREAM_FAILED");
}

#[tokio::test]
async fn a_pipeline_task_starts_an_update_and_waits_for_it() {
    let c = start_with(EmulatorConfig {
        timings: Timings {
            update_step: Duration::from_secs(1),
            ..Timings::instant()
        },
        ..EmulatorConfig::for_tests()
    })
    .await;
    uc_base(&c).await;
    let pid = c
        .ok(
            "/api/2.0/pipelines",
            json!({"name": "p", "catalog": "main", "schema": "s"}),
        )
        .await["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    let id = c
        .ok(
            "/api/2.2/jobs/create",
            json!({"tasks": [{"task_key": "p", "pipeline_task": {"pipeline_id": pid}}]}),
        )
        .await["job_id"]
        .as_i64()
        .unwrap();
    let run_id = c
        .ok(
            "/api/2.2/jobs/run-now",
            json!({"job_id": id, "pipeline_params": {"full_refresh": true}}),
        )
        .await["run_id"]
        .as_i64()
        .unwrap();
    let ups = c.ok_get(&format!("/api/2.0/pipelines/{pid}/updates")).await;
    assert_eq!(ups["updates"][0]["cause"], "JOB_TASK");
    assert_eq!(ups["updates"][0]["full_refresh"], true);
    assert_eq!(
        c.ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run_id}"))
            .await["state"]["life_cycle_state"],
        "RUNNING"
    );
    c.emu.advance_clock(Duration::from_secs(6));
    let run = c
        .ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run_id}"))
        .await;
    assert_eq!(run["state"]["result_state"], "SUCCESS", "{run}");
    let listed = c
        .ok_get(&format!("/api/2.2/jobs/runs/list?job_id={id}"))
        .await;
    assert_eq!(listed["runs"][0]["run_id"], run_id);
    assert_eq!(listed["has_more"], false);
}

#[tokio::test]
async fn workspace_json_and_multipart_imports() {
    let c = start().await;
    let (s, e) = c
        .post(
            "/api/2.0/workspace/import",
            json!({"path": "/nope/x", "content": "", "format": "SOURCE", "language": "PYTHON"}),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("RESOURCE_DOES_NOT_EXIST"))
    );
    import_notebook(&c, "/Shared/a/nb").await;
    let boundary = "XyZ";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n/Shared/a/f.py\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"format\"\r\n\r\nAUTO\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"overwrite\"\r\n\r\ntrue\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"content\"; filename=\"f.py\"\r\nContent-Type: application/octet-stream\r\n\r\n# Databricks notebook source\nx=1\r\n--{boundary}--\r\n"
    );
    let r = c
        .http
        .post(c.url("/api/2.0/workspace/import"))
        .bearer_auth("t")
        .header(
            "Content-Type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let st = c
        .ok_get("/api/2.0/workspace/get-status?path=/Shared/a/f")
        .await;
    assert_eq!(
        (st["object_type"].as_str(), st["language"].as_str()),
        (Some("NOTEBOOK"), Some("PYTHON"))
    );
    let exp = c
        .ok_get("/api/2.0/workspace/export?path=/Shared/a/nb&format=SOURCE")
        .await;
    assert_eq!(exp["content"], "cHJpbnQoMSk=");
    let (s, e) = c
        .post("/api/2.0/workspace/delete", json!({"path": "/Shared/a"}))
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (400, Some("DIRECTORY_NOT_EMPTY"))
    );
    c.ok(
        "/api/2.0/workspace/delete",
        json!({"path": "/Shared/a", "recursive": true}),
    )
    .await;
    let (s, _) = c
        .get("/api/2.0/workspace/get-status?path=/Shared/a/nb")
        .await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn files_api_headers_overwrite_ranges_and_presigned_urls() {
    let c = start().await;
    uc_base(&c).await;
    c.ok(
        &format!("{UC}/volumes"),
        json!({"catalog_name": "main", "schema_name": "s", "name": "v", "volume_type": "MANAGED"}),
    )
    .await;
    let url = c.url("/api/2.0/fs/files/Volumes/main/s/v/dir%20a/f.csv");
    assert_eq!(
        c.http
            .put(&url)
            .bearer_auth("t")
            .body("0123456789")
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    let r = c
        .http
        .put(format!("{url}?overwrite=false"))
        .bearer_auth("t")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    let head = c.http.head(&url).bearer_auth("t").send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-length"], "10");
    assert!(head.headers().contains_key("last-modified"));
    let part = c
        .http
        .get(&url)
        .bearer_auth("t")
        .header("Range", "bytes=2-4")
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), 206);
    assert_eq!(part.text().await.unwrap(), "234");
    let head_dir = |p: &str| {
        c.http
            .head(c.url(&format!("/api/2.0/fs/directories{p}")))
            .bearer_auth("t")
            .send()
    };
    assert_eq!(
        head_dir("/Volumes/main/s/v/dir%20a")
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        head_dir("/Volumes/main/s/v/nope").await.unwrap().status(),
        404
    );
    let list = c.ok_get("/api/2.0/fs/directories/Volumes/main/s/v").await;
    assert_eq!(list["contents"][0]["name"], "dir a");
    assert_eq!(list["contents"][0]["is_directory"], true);
    let (s, _) = c
        .post(
            "/api/2.0/fs/create-download-url?path=/Volumes/main/s/v/dir%20a/f.csv",
            json!({}),
        )
        .await;
    assert_eq!(s, 404);
    let r = c
        .http
        .put(c.url("/api/2.0/fs/files/Volumes/main/s/nope/f"))
        .bearer_auth("t")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404, "the volume must exist");
    let (s, _) = c
        .delete("/api/2.0/fs/directories/Volumes/main/s/v/dir%20a")
        .await;
    assert_eq!(s, 400, "non-empty directory");
}

#[tokio::test]
async fn secrets_scopes_and_values() {
    let c = start().await;
    c.ok("/api/2.0/secrets/scopes/create", json!({"scope": "s"}))
        .await;
    let (s, e) = c
        .post("/api/2.0/secrets/scopes/create", json!({"scope": "s"}))
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (409, Some("RESOURCE_ALREADY_EXISTS"))
    );
    let (s, _) = c
        .post(
            "/api/2.0/secrets/scopes/create",
            json!({"scope": "bad name"}),
        )
        .await;
    assert_eq!(s, 400);
    c.ok(
        "/api/2.0/secrets/put",
        json!({"scope": "s", "key": "k", "string_value": "v"}),
    )
    .await;
    let l = c.ok_get("/api/2.0/secrets/list?scope=s").await;
    assert_eq!(l["secrets"][0]["key"], "k");
    assert!(!l.to_string().contains("\"v\""), "list never shows values");
    c.ok("/api/2.0/secrets/scopes/delete", json!({"scope": "s"}))
        .await;
    let (s, _) = c.get("/api/2.0/secrets/list?scope=s").await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn faults_fire_after_n_matches_for_n_times_and_after_the_side_effect() {
    let c = start().await;
    c.ok("/__emulator/faults", json!({"method": "get", "path": "/api/2\\.1/unity-catalog/catalogs", "status": 503, "after": 1, "times": 2})).await;
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(c.get(&format!("{UC}/catalogs")).await.0);
    }
    assert_eq!(statuses, [200, 503, 503, 200]);
    c.ok("/__emulator/faults", json!({"method": "POST", "path": ".*/catalogs", "status": 500, "error_code": "INTERNAL_ERROR", "after_side_effect": true})).await;
    let (s, e) = c
        .post(&format!("{UC}/catalogs"), json!({"name": "ghost"}))
        .await;
    assert_eq!((s, e["error_code"].as_str()), (500, Some("INTERNAL_ERROR")));
    assert_eq!(
        c.get(&format!("{UC}/catalogs/ghost")).await.0,
        200,
        "the change was made"
    );
    let log = c.ok_get("/__emulator/requests?method=POST").await;
    let last = log["requests"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (
            last["path"].as_str(),
            last["body"]["name"].as_str(),
            last["status"].as_i64()
        ),
        (
            Some("/api/2.1/unity-catalog/catalogs"),
            Some("ghost"),
            Some(500)
        )
    );
}

#[tokio::test]
async fn rate_limits_answer_429_with_retry_after_and_latency_delays() {
    let c = start().await;
    c.ok(
        "/__emulator/rate-limits",
        json!({"path": "/api/.*", "per_second": 2, "burst": 2}),
    )
    .await;
    let mut codes = Vec::new();
    let mut retry_after = None;
    for _ in 0..3 {
        let r = c
            .http
            .get(c.url(&format!("{UC}/catalogs")))
            .bearer_auth("t")
            .send()
            .await
            .unwrap();
        codes.push(r.status().as_u16());
        if r.status() == 429 {
            retry_after = r
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_string());
            let e: Value = r.json().await.unwrap();
            assert_eq!(e["error_code"], "REQUEST_LIMIT_EXCEEDED");
        }
    }
    assert_eq!(codes, [200, 200, 429]);
    assert_eq!(retry_after.as_deref(), Some("1"));
    let (s, _) = c
        .call(reqwest::Method::DELETE, "/__emulator/rate-limits", None)
        .await;
    assert_eq!(s, 200);

    c.ok("/__emulator/latency", json!({"fixed_ms": 150})).await;
    let t = std::time::Instant::now();
    c.get(&format!("{UC}/catalogs")).await;
    assert!(t.elapsed() >= Duration::from_millis(150));
    c.ok("/__emulator/reset", json!({})).await;
    let t = std::time::Instant::now();
    c.get(&format!("{UC}/catalogs")).await;
    assert!(
        t.elapsed() < Duration::from_millis(150),
        "reset clears latency"
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_in_the_error_shape() {
    let c = start().await;
    let (s, e) = c.get("/api/2.0/nothing").await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("ENDPOINT_NOT_FOUND"))
    );
    let (s, e) = c
        .call(
            reqwest::Method::PUT,
            &format!("{UC}/catalogs"),
            Some(json!({})),
        )
        .await;
    assert_eq!(s, 405);
    assert!(e["message"].is_string());
}

#[tokio::test]
async fn a_persisted_workspace_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = EmulatorConfig {
        data_dir: Some(dir.path().to_path_buf()),
        ..EmulatorConfig::for_tests()
    };
    let c = start_with(cfg.clone()).await;
    c.ok(&format!("{UC}/catalogs"), json!({"name": "kept"}))
        .await;
    let job = c
        .ok(
            "/api/2.2/jobs/create",
            json!({"name": "j", "tasks": [notebook_task("a", "/a")]}),
        )
        .await["job_id"]
        .clone();
    // A second process (or instance) cannot open the same directory.
    assert!(Emulator::start(cfg.clone()).await.is_err());
    c.emu.shutdown().await;
    assert!(dir.path().join(brickform_emulator::STATE_FILE).exists());

    let c = start_with(cfg).await;
    assert_eq!(
        c.ok_get(&format!("{UC}/catalogs/kept")).await["name"],
        "kept"
    );
    assert_eq!(
        c.ok_get(&format!("/api/2.2/jobs/get?job_id={job}")).await["settings"]["name"],
        "j"
    );
    let next = c
        .ok(
            "/api/2.2/jobs/create",
            json!({"name": "k", "tasks": [notebook_task("a", "/a")]}),
        )
        .await["job_id"]
        .clone();
    assert_ne!(next, job, "ids keep counting after a restart");
}
