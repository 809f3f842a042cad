//! All-purpose clusters over HTTP: the wire shapes the SDKs and the Terraform provider read
//! (the create answer, `ClusterDetails`, the service's 400 for a cluster it does not have),
//! the life cycle with the emulator's clock (PENDING, RUNNING, RESTARTING on an edit,
//! TERMINATED), pins, and the Libraries API on a cluster.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use brickform_emulator::{EmulatorConfig, Timings};
use common::{Client, start_with};
use serde_json::{Value, json};
use std::time::Duration;

/// Every state change takes a second of the emulator's clock.
async fn slow() -> Client {
    start_with(EmulatorConfig {
        timings: Timings {
            run_setup: Duration::from_secs(1),
            ..Timings::instant()
        },
        ..EmulatorConfig::for_tests()
    })
    .await
}

async fn get(c: &Client, id: &str) -> Value {
    c.ok_get(&format!("/api/2.1/clusters/get?cluster_id={id}"))
        .await
}

fn spec(workers: u32) -> Value {
    json!({
        "cluster_name": "etl", "spark_version": "16.4.x-scala2.12",
        "node_type_id": "i3.xlarge", "num_workers": workers, "autotermination_minutes": 30,
    })
}

#[tokio::test]
async fn a_cluster_starts_restarts_on_an_edit_and_terminates() {
    let c = slow().await;
    let made = c.ok("/api/2.1/clusters/create", spec(1)).await;
    let id = made["cluster_id"].as_str().unwrap().to_string();
    // The create answer holds the id alone.
    assert_eq!(made, json!({ "cluster_id": id }));
    let got = get(&c, &id).await;
    assert_eq!(got["state"], "PENDING");
    assert_eq!(got["cluster_name"], "etl");
    assert_eq!(got["driver_node_type_id"], "i3.xlarge");
    assert_eq!(got["cluster_source"], "API");
    assert_eq!(got["default_tags"]["ClusterId"], json!(id));
    // Only a running or terminated cluster is edited.
    let mut edit = spec(2);
    edit["cluster_id"] = json!(id);
    let (status, e) = c.post("/api/2.1/clusters/edit", edit.clone()).await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error_code"], "INVALID_STATE");
    c.emu.advance_clock(Duration::from_secs(1));
    assert_eq!(get(&c, &id).await["state"], "RUNNING");
    c.ok("/api/2.1/clusters/edit", edit).await;
    let got = get(&c, &id).await;
    assert_eq!(got["state"], "RESTARTING");
    assert_eq!(got["num_workers"], 2);
    c.emu.advance_clock(Duration::from_secs(1));
    assert_eq!(get(&c, &id).await["state"], "RUNNING");
    c.ok("/api/2.1/clusters/delete", json!({ "cluster_id": id }))
        .await;
    assert_eq!(get(&c, &id).await["state"], "TERMINATING");
    c.emu.advance_clock(Duration::from_secs(1));
    assert_eq!(get(&c, &id).await["state"], "TERMINATED");
    // A terminated cluster is edited without a start, and started by start.
    let mut edit = spec(3);
    edit["cluster_id"] = json!(id);
    c.ok("/api/2.1/clusters/edit", edit).await;
    assert_eq!(get(&c, &id).await["state"], "TERMINATED");
    c.ok("/api/2.1/clusters/start", json!({ "cluster_id": id }))
        .await;
    assert_eq!(get(&c, &id).await["state"], "PENDING");
    // Idle for its autotermination minutes, a running cluster terminates.
    c.emu.advance_clock(Duration::from_secs(1));
    assert_eq!(get(&c, &id).await["state"], "RUNNING");
    c.emu.advance_clock(Duration::from_secs(31 * 60));
    assert_eq!(get(&c, &id).await["state"], "TERMINATED");
}

#[tokio::test]
async fn a_missing_cluster_is_a_400_naming_it_and_a_pinned_one_is_not_deleted() {
    let c = slow().await;
    let (status, e) = c
        .get("/api/2.1/clusters/get?cluster_id=0101-000000-nothere")
        .await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["message"], "Cluster 0101-000000-nothere does not exist");
    let id = c.ok("/api/2.1/clusters/create", spec(0)).await["cluster_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok("/api/2.1/clusters/pin", json!({ "cluster_id": id }))
        .await;
    let pinned = c
        .ok_get("/api/2.1/clusters/list?filter_by.is_pinned=true")
        .await;
    assert_eq!(pinned["clusters"][0]["cluster_id"], json!(id));
    let (status, e) = c
        .post(
            "/api/2.1/clusters/permanent-delete",
            json!({ "cluster_id": id }),
        )
        .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("unpin the cluster first"),
        "{e}"
    );
    c.ok("/api/2.1/clusters/unpin", json!({ "cluster_id": id }))
        .await;
    c.ok(
        "/api/2.1/clusters/permanent-delete",
        json!({ "cluster_id": id }),
    )
    .await;
    assert_eq!(
        c.ok_get("/api/2.1/clusters/list").await["clusters"],
        json!([])
    );
    // A create with a token made before answers the cluster that one made.
    let mut with_token = spec(0);
    with_token["idempotency_token"] = json!("t-1");
    let a = c.ok("/api/2.1/clusters/create", with_token.clone()).await;
    let b = c.ok("/api/2.1/clusters/create", with_token).await;
    assert_eq!(a, b);
}

#[tokio::test]
async fn libraries_install_once_it_runs_and_an_uninstall_waits_for_a_restart() {
    let c = slow().await;
    let id = c.ok("/api/2.1/clusters/create", spec(0)).await["cluster_id"]
        .as_str()
        .unwrap()
        .to_string();
    let jar = json!({"jar": "/Volumes/main/libs/jars/etl.jar"});
    c.ok(
        "/api/2.0/libraries/install",
        json!({ "cluster_id": id, "libraries": [jar] }),
    )
    .await;
    let status = |v: &Value, i: usize| v["library_statuses"][i]["status"].clone();
    let path = format!("/api/2.0/libraries/cluster-status?cluster_id={id}");
    assert_eq!(status(&c.ok_get(&path).await, 0), "PENDING");
    c.emu.advance_clock(Duration::from_secs(1));
    assert_eq!(status(&c.ok_get(&path).await, 0), "INSTALLED");
    c.ok(
        "/api/2.0/libraries/uninstall",
        json!({ "cluster_id": id, "libraries": [jar] }),
    )
    .await;
    assert_eq!(status(&c.ok_get(&path).await, 0), "UNINSTALL_ON_RESTART");
    c.ok("/api/2.1/clusters/delete", json!({ "cluster_id": id }))
        .await;
    c.emu.advance_clock(Duration::from_secs(1));
    assert_eq!(c.ok_get(&path).await["library_statuses"], json!([]));
    // A library names one kind.
    let (code, e) = c
        .post(
            "/api/2.0/libraries/install",
            json!({ "cluster_id": id, "libraries": [{"jar": "a", "whl": "b"}] }),
        )
        .await;
    assert_eq!(code, 400, "{e}");
}
