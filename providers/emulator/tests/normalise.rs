//! `normalise_answers`: off by default; when on, answers (never the stored workspace) are
//! rewritten, the same way in every answer that shows a field, and the rewritten answer is
//! accepted back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers panic on purpose

use crate::common;

use common::{Client, start};
use serde_json::{Value, json};

const UC: &str = "/api/2.1/unity-catalog";

async fn normalising(seed: u64) -> Client {
    let c = start().await;
    let set = c
        .ok("/__emulator/behaviours", json!({"normalise_answers": true}))
        .await;
    assert_eq!(set["behaviours"]["normalise_answers"], true);
    let got = c.ok("/__emulator/normalise", json!({"seed": seed})).await;
    assert_eq!(got, json!({"seed": seed, "on": true}));
    c
}

fn job_settings() -> Value {
    json!({"name": "nightly", "description": "nightly load", "tasks": [
        {"task_key": "b", "depends_on": [{"task_key": "a"}],
         "notebook_task": {"notebook_path": "/x"},
         "new_cluster": {"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge",
            "num_workers": 1, "data_security_mode": "DATA_SECURITY_MODE_STANDARD",
            "apply_policy_default_values": true}},
        {"task_key": "a", "notebook_task": {"notebook_path": "/y"}}]})
}

#[tokio::test]
async fn answers_are_as_sent_by_default() {
    let c = start().await;
    let got = c.ok_get("/__emulator/normalise").await;
    assert_eq!(got, json!({"seed": 0, "on": false}));
    c.ok(
        &format!("{UC}/catalogs"),
        json!({"name": "bronze", "comment": "raw data"}),
    )
    .await;
    let cat = c.ok_get(&format!("{UC}/catalogs/bronze")).await;
    assert_eq!(cat["comment"], "raw data");
}

#[tokio::test]
async fn every_answer_shows_the_same_rewriting_and_the_workspace_keeps_what_was_sent() {
    let c = normalising(0).await;
    let made = c
        .ok(
            &format!("{UC}/catalogs"),
            json!({"name": "bronze", "comment": "raw data"}),
        )
        .await;
    let got = c.ok_get(&format!("{UC}/catalogs/bronze")).await;
    let listed = c.ok_get(&format!("{UC}/catalogs")).await;
    assert_ne!(got["comment"], "raw data", "seed 0 rewrites every comment");
    assert_eq!(
        made["comment"], got["comment"],
        "the write answer as the read"
    );
    assert_eq!(
        listed["catalogs"][0]["comment"], got["comment"],
        "list as get"
    );
    assert!(
        c.emu.state().to_string().contains("\"raw data\""),
        "the workspace keeps what it was sent"
    );

    let id = c.ok("/api/2.2/jobs/create", job_settings()).await["job_id"]
        .as_i64()
        .unwrap();
    let got = c.ok_get(&format!("/api/2.2/jobs/get?job_id={id}")).await;
    let listed = c.ok_get("/api/2.2/jobs/list?expand_tasks=true").await;
    assert_eq!(listed["jobs"][0]["settings"], got["settings"]);
    let s = &got["settings"];
    assert_eq!(s["tasks"][0]["task_key"], "a", "tasks sorted by task_key");
    assert_eq!(s["tasks"][0]["notebook_task"]["source"], "WORKSPACE");
    let cluster = &s["tasks"][1]["new_cluster"];
    assert_eq!(cluster["data_security_mode"], "USER_ISOLATION");
    assert!(cluster.get("apply_policy_default_values").is_none());

    // The rewritten answer is accepted back, and answers the same.
    c.ok(
        "/api/2.2/jobs/reset",
        json!({"job_id": id, "new_settings": s.clone()}),
    )
    .await;
    let again = c.ok_get(&format!("/api/2.2/jobs/get?job_id={id}")).await;
    assert_eq!(again["settings"], got["settings"]);
}

#[tokio::test]
async fn grants_answer_the_same_set_in_one_order_and_user_names_lower_cased() {
    let c = normalising(0).await;
    // The `main` a new workspace starts with.
    let user = c.ok_get("/api/2.0/preview/scim/v2/Me").await["userName"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("{UC}/permissions/catalog/main");
    let (status, patched) = c
        .patch(
            &path,
            json!({"changes": [{"principal": user.to_uppercase(),
                "add": ["USE_CATALOG", "BROWSE", "USE_SCHEMA"]}]}),
        )
        .await;
    assert_eq!(status, 200, "{patched}");
    let got = c.ok_get(&path).await;
    assert_eq!(patched, got);
    let a = &got["privilege_assignments"][0];
    assert_eq!(a["principal"], user.to_lowercase());
    let mut held: Vec<&str> = a["privileges"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    held.sort_unstable();
    assert_eq!(held, ["BROWSE", "USE_CATALOG", "USE_SCHEMA"]);
}

#[tokio::test]
async fn seeds_choose_different_mixes() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 1..=6 {
        let c = normalising(seed).await;
        let id = c.ok("/api/2.2/jobs/create", job_settings()).await["job_id"]
            .as_i64()
            .unwrap();
        let got = c.ok_get(&format!("/api/2.2/jobs/get?job_id={id}")).await;
        seen.insert(got["settings"].to_string());
    }
    assert!(seen.len() > 1, "every seed gave the same answer: {seen:?}");
}

#[tokio::test]
async fn a_seed_must_be_a_whole_number() {
    let c = start().await;
    let (status, body) = c
        .post("/__emulator/normalise", json!({"seed": "seven"}))
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = c.post("/__emulator/normalise", json!({})).await;
    assert_eq!(status, 400, "{body}");
}
