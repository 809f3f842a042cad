//! Unity Catalog credentials over HTTP: the Credentials API serves service and storage
//! credentials, whose names share one namespace with the storage credentials API's; that
//! API serves storage credentials only, and an external location takes only those.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::start;
use serde_json::json;

const UC: &str = "/api/2.1/unity-catalog";

fn role(name: &str) -> serde_json::Value {
    json!({"role_arn": format!("arn:aws:iam::123456789012:role/{name}")})
}

#[tokio::test]
async fn service_and_storage_credentials_share_names_and_each_api_serves_its_own() {
    let c = start().await;
    let svc = c
        .ok(
            &format!("{UC}/credentials"),
            json!({"name": "Queues", "purpose": "SERVICE", "aws_iam_role": role("q")}),
        )
        .await;
    assert_eq!(
        (svc["name"].as_str(), svc["purpose"].as_str()),
        (Some("queues"), Some("SERVICE"))
    );
    assert!(svc["aws_iam_role"]["external_id"].is_string(), "{svc}");
    c.ok(
        &format!("{UC}/storage-credentials"),
        json!({"name": "landing", "aws_iam_role": role("l")}),
    )
    .await;

    // One namespace: neither API makes a second credential of a taken name.
    let (s, _) = c
        .post(
            &format!("{UC}/storage-credentials"),
            json!({"name": "queues", "aws_iam_role": role("x")}),
        )
        .await;
    assert_eq!(s, 409);
    let (s, _) = c
        .post(
            &format!("{UC}/credentials"),
            json!({"name": "LANDING", "purpose": "STORAGE", "aws_iam_role": role("x")}),
        )
        .await;
    assert_eq!(s, 409);

    // The Credentials API lists both, filtered by purpose when asked; the storage
    // credentials API neither lists nor reads the service credential.
    let names = |v: &serde_json::Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let all = c.ok_get(&format!("{UC}/credentials")).await;
    assert_eq!(names(&all, "credentials"), ["landing", "queues"]);
    let services = c.ok_get(&format!("{UC}/credentials?purpose=SERVICE")).await;
    assert_eq!(names(&services, "credentials"), ["queues"]);
    let storage = c.ok_get(&format!("{UC}/storage-credentials")).await;
    assert_eq!(names(&storage, "storage_credentials"), ["landing"]);
    let (s, _) = c.get(&format!("{UC}/storage-credentials/queues")).await;
    assert_eq!(s, 404);
    let read = c.ok_get(&format!("{UC}/credentials/landing")).await;
    assert_eq!(read["purpose"], "STORAGE");

    // An external location reaches storage through a storage credential only.
    let (s, e) = c
        .post(
            &format!("{UC}/external-locations"),
            json!({"name": "lake", "url": "s3://bucket/lake", "credential_name": "queues"}),
        )
        .await;
    assert_eq!(s, 404, "{e}");

    // A purpose is required and is one of the two.
    for body in [
        json!({"name": "x", "aws_iam_role": role("x")}),
        json!({"name": "x", "purpose": "SERVICES", "aws_iam_role": role("x")}),
    ] {
        let (s, _) = c.post(&format!("{UC}/credentials"), body).await;
        assert_eq!(s, 400);
    }

    // Updated and deleted through its API; grants on it under the type `credential`.
    let updated = c
        .patch(
            &format!("{UC}/credentials/queues"),
            json!({"comment": "two"}),
        )
        .await;
    assert_eq!(updated.0, 200, "{}", updated.1);
    assert_eq!(updated.1["comment"], "two");
    let (s, _) = c
        .patch(
            &format!("{UC}/permissions/credential/queues"),
            json!({"changes": [{"principal": "account users", "add": ["ACCESS"]}]}),
        )
        .await;
    assert_eq!(s, 200);
    let (s, _) = c.delete(&format!("{UC}/credentials/queues")).await;
    assert_eq!(s, 200);
    let (s, _) = c.get(&format!("{UC}/credentials/queues")).await;
    assert_eq!(s, 404);
}
