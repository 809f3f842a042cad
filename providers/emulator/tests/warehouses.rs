//! SQL warehouses over HTTP: the wire shapes the SDKs and the Terraform provider read, the
//! power states with the emulator's clock, and SQL tasks of job runs on them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_emulator::{EmulatorConfig, Timings};
use common::{Client, start, start_with};
use serde_json::{Value, json};
use std::time::Duration;

async fn state(c: &Client, id: &str) -> String {
    c.ok_get(&format!("/api/2.0/sql/warehouses/{id}")).await["state"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_warehouse_reads_back_with_the_services_defaults_and_fields() {
    let c = start().await;
    let made = c
        .ok(
            "/api/2.0/sql/warehouses",
            json!({"name": "bi", "cluster_size": "Small", "tags": {"custom_tags": [{"key": "team", "value": "bi"}]}}),
        )
        .await;
    // The create answer holds the id alone.
    let id = made["id"].as_str().unwrap().to_string();
    assert_eq!(made, json!({ "id": id }));
    assert_eq!(id.len(), 16);
    let w = c.ok_get(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(w["name"], "bi");
    assert_eq!(w["state"], "RUNNING");
    assert_eq!(w["auto_stop_mins"], 120);
    assert_eq!(w["min_num_clusters"], 1);
    assert_eq!(w["max_num_clusters"], 1);
    assert_eq!(w["num_clusters"], 1);
    assert_eq!(w["enable_photon"], true);
    // The workspace defaults to serverless (warehouse_serverless_default), and a serverless
    // warehouse is a PRO one.
    assert_eq!(w["enable_serverless_compute"], true);
    assert_eq!(w["warehouse_type"], "PRO");
    assert_eq!(w["spot_instance_policy"], "COST_OPTIMIZED");
    assert_eq!(w["channel"], json!({"name": "CHANNEL_NAME_CURRENT"}));
    assert_eq!(w["creator_name"], "local-user@brickform.local");
    assert_eq!(
        w["tags"]["custom_tags"][0],
        json!({"key": "team", "value": "bi"})
    );
    assert_eq!(
        w["odbc_params"]["path"],
        format!("/sql/1.0/warehouses/{id}")
    );
    assert_eq!(w["odbc_params"]["port"], 443);
    assert_eq!(w["odbc_params"]["protocol"], "https");
    assert_eq!(w["odbc_params"]["hostname"], "127.0.0.1");
    assert!(
        w["jdbc_url"]
            .as_str()
            .unwrap()
            .contains(&format!("httpPath=/sql/1.0/warehouses/{id};")),
        "{w}"
    );
    let list = c.ok_get("/api/2.0/sql/warehouses").await;
    assert_eq!(list["warehouses"][0]["id"], id.as_str());

    // Names are unique in a workspace.
    let (status, e) = c
        .post(
            "/api/2.0/sql/warehouses",
            json!({"name": "bi", "cluster_size": "Medium"}),
        )
        .await;
    assert_eq!(status, 409, "{e}");
    assert_eq!(e["message"], "SQL warehouse with name `bi` already exists");

    // The data source Databricks SQL binds queries to: its own id, naming the warehouse.
    let sources = c.ok_get("/api/2.0/preview/sql/data_sources").await;
    let ds = &sources[0];
    assert_eq!(ds["warehouse_id"], id.as_str());
    assert_eq!(ds["name"], "bi");
    assert_ne!(ds["id"], id.as_str());

    // An edit writes the whole object: what it leaves out goes back to the default.
    c.ok(
        &format!("/api/2.0/sql/warehouses/{id}/edit"),
        json!({"name": "bi2", "cluster_size": "Medium", "auto_stop_mins": 30}),
    )
    .await;
    let w = c.ok_get(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(
        (w["name"].clone(), w["cluster_size"].clone()),
        (json!("bi2"), json!("Medium"))
    );
    assert_eq!(w["auto_stop_mins"], 30);
    assert_eq!(w["tags"], json!({}));

    // Deleted (at once with instant timings), it still reads, as DELETED, and a second
    // delete is accepted; an hour later it is purged.
    let (status, _) = c.delete(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(state(&c, &id).await, "DELETED");
    let (status, _) = c.delete(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(status, 200);
    c.emu.advance_clock(Duration::from_secs(3600));
    let (status, e) = c.get(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(status, 404);
    assert_eq!(e["error_code"], "RESOURCE_DOES_NOT_EXIST");
    let (status, _) = c.delete(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(status, 404);
}

/// terraform-provider-databricks issue #3379: a warehouse's delete is not immediate, and a
/// create of its name right after fails with "already exists". The list keeps deleted
/// warehouses (databricks/cli libs/databrickscfg/cfgpickers/warehouses.go:75-80).
#[tokio::test]
async fn a_deleted_warehouse_is_deleting_with_its_name_held_then_deleted_and_listed() {
    let c = start_with(EmulatorConfig {
        timings: Timings {
            run_setup: Duration::from_secs(5),
            ..Timings::instant()
        },
        ..EmulatorConfig::for_tests()
    })
    .await;
    let body = json!({"name": "w", "cluster_size": "X-Small", "auto_stop_mins": 0});
    let id = c.ok("/api/2.0/sql/warehouses", body.clone()).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.emu.advance_clock(Duration::from_secs(5));
    let (status, _) = c.delete(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(state(&c, &id).await, "DELETING");
    let listed = c.ok_get("/api/2.0/sql/warehouses").await;
    assert_eq!(listed["warehouses"][0]["state"], "DELETING");
    let (status, e) = c.post("/api/2.0/sql/warehouses", body.clone()).await;
    assert_eq!(status, 409, "{e}");
    assert_eq!(e["message"], "SQL warehouse with name `w` already exists");
    // Gone for use: no edit, start, permissions or data source.
    let (status, _) = c
        .post(&format!("/api/2.0/sql/warehouses/{id}/start"), json!({}))
        .await;
    assert_eq!(status, 404);
    let (status, _) = c
        .get(&format!("/api/2.0/permissions/sql/warehouses/{id}"))
        .await;
    assert_eq!(status, 404);
    let sources = c.ok_get("/api/2.0/preview/sql/data_sources").await;
    assert_eq!(sources, json!([]));

    c.emu.advance_clock(Duration::from_secs(5));
    assert_eq!(state(&c, &id).await, "DELETED");
    let again = c.ok("/api/2.0/sql/warehouses", body).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let listed = c.ok_get("/api/2.0/sql/warehouses").await;
    let mut states: Vec<(String, String)> = listed["warehouses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["id"].as_str().unwrap().to_string(),
                w["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    states.sort_by_key(|(i, _)| i != &id);
    assert_eq!(
        states,
        [(id.clone(), "DELETED".into()), (again, "STARTING".into())]
    );
    c.emu.advance_clock(Duration::from_secs(3600));
    let (status, _) = c.get(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(status, 404);
}

/// Without the workspace default (warehouse_serverless_default off), a warehouse is a
/// classic one unless it says otherwise.
#[tokio::test]
async fn a_workspace_without_the_serverless_default_makes_classic_warehouses() {
    let c = start_with(EmulatorConfig {
        behaviours: brickform_emulator::Behaviours::default()
            .without(brickform_emulator::Behaviour::WarehouseServerlessDefault),
        ..EmulatorConfig::for_tests()
    })
    .await;
    let id = c
        .ok(
            "/api/2.0/sql/warehouses",
            json!({"name": "w", "cluster_size": "Small"}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let w = c.ok_get(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(
        (
            w["enable_serverless_compute"].clone(),
            w["warehouse_type"].clone()
        ),
        (json!(false), json!("CLASSIC"))
    );
}

#[tokio::test]
async fn invalid_settings_are_refused_with_the_field_named() {
    let c = start().await;
    for (body, field) in [
        (json!({"cluster_size": "Small"}), "name"),
        (json!({"name": "w"}), "cluster_size"),
        (json!({"name": "w", "cluster_size": "Huge"}), "cluster_size"),
        (
            json!({"name": "w", "cluster_size": "Small", "enable_serverless_compute": false, "auto_stop_mins": 9}),
            "auto_stop_mins",
        ),
        (
            json!({"name": "w", "cluster_size": "Small", "min_num_clusters": 2, "max_num_clusters": 1}),
            "max_num_clusters",
        ),
        (
            json!({"name": "w", "cluster_size": "Small", "warehouse_type": "FAST"}),
            "warehouse_type",
        ),
        (
            json!({"name": "w", "cluster_size": "Small", "enable_serverless_compute": true, "warehouse_type": "CLASSIC"}),
            "warehouse_type",
        ),
        (
            json!({"name": "w", "cluster_size": "Small", "spot_instance_policy": "CHEAP"}),
            "spot_instance_policy",
        ),
    ] {
        let (status, e) = c.post("/api/2.0/sql/warehouses", body.clone()).await;
        assert_eq!(status, 400, "{body}: {e}");
        assert_eq!(e["error_code"], "INVALID_PARAMETER_VALUE", "{body}");
        assert!(
            e["message"].as_str().unwrap().contains(field),
            "{body}: {e}"
        );
    }
    // A serverless warehouse may stop sooner; it is a PRO one.
    let id = c
        .ok(
            "/api/2.0/sql/warehouses",
            json!({"name": "s", "cluster_size": "Small", "enable_serverless_compute": true, "auto_stop_mins": 5}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let w = c.ok_get(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(w["warehouse_type"], "PRO");
    let (status, _) = c
        .post(
            "/api/2.0/sql/warehouses/nope/edit",
            json!({"name": "x", "cluster_size": "Small"}),
        )
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn warehouses_start_stop_and_auto_stop_with_the_clock() {
    let c = start_with(EmulatorConfig {
        timings: Timings {
            run_setup: Duration::from_secs(5),
            ..Timings::instant()
        },
        ..EmulatorConfig::for_tests()
    })
    .await;
    let id = c
        .ok(
            "/api/2.0/sql/warehouses",
            json!({"name": "w", "cluster_size": "X-Small", "auto_stop_mins": 10}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(state(&c, &id).await, "STARTING");
    let w = c.ok_get(&format!("/api/2.0/sql/warehouses/{id}")).await;
    assert_eq!(w["num_clusters"], 0);
    c.emu.advance_clock(Duration::from_secs(5));
    assert_eq!(state(&c, &id).await, "RUNNING");
    c.emu.advance_clock(Duration::from_secs(9 * 60));
    assert_eq!(state(&c, &id).await, "RUNNING");
    c.emu.advance_clock(Duration::from_secs(61));
    assert_eq!(state(&c, &id).await, "STOPPED");

    c.ok(&format!("/api/2.0/sql/warehouses/{id}/start"), json!({}))
        .await;
    assert_eq!(state(&c, &id).await, "STARTING");
    c.emu.advance_clock(Duration::from_secs(5));
    assert_eq!(state(&c, &id).await, "RUNNING");
    c.ok(&format!("/api/2.0/sql/warehouses/{id}/stop"), json!({}))
        .await;
    assert_eq!(state(&c, &id).await, "STOPPING");
    c.emu.advance_clock(Duration::from_secs(5));
    assert_eq!(state(&c, &id).await, "STOPPED");
    let (status, _) = c
        .post("/api/2.0/sql/warehouses/nope/start", json!({}))
        .await;
    assert_eq!(status, 404);
}

async fn sql_job(c: &Client, warehouse: &str) -> Value {
    let job = c
        .ok(
            "/api/2.2/jobs/create",
            json!({"name": "q", "tasks": [{"task_key": "q", "sql_task": {"warehouse_id": warehouse, "query": {"query_id": "1"}}}]}),
        )
        .await;
    let run = c
        .ok("/api/2.2/jobs/run-now", json!({"job_id": job["job_id"]}))
        .await;
    c.ok_get(&format!("/api/2.2/jobs/runs/get?run_id={}", run["run_id"]))
        .await
}

#[tokio::test]
async fn a_sql_task_runs_on_its_warehouse_and_fails_without_one() {
    let c = start().await;
    let id = c
        .ok(
            "/api/2.0/sql/warehouses",
            json!({"name": "w", "cluster_size": "Small"}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok(&format!("/api/2.0/sql/warehouses/{id}/stop"), json!({}))
        .await;
    assert_eq!(state(&c, &id).await, "STOPPED");
    let run = sql_job(&c, &id).await;
    assert_eq!(run["state"]["result_state"], "SUCCESS", "{run}");
    // The run started the stopped warehouse.
    assert_eq!(state(&c, &id).await, "RUNNING");

    let run = sql_job(&c, "0123456789abcdef").await;
    assert_eq!(run["state"]["result_state"], "FAILED", "{run}");
    assert_eq!(
        run["tasks"][0]["state"]["state_message"],
        "SQL warehouse 0123456789abcdef does not exist or you do not have permission to use it."
    );
}
