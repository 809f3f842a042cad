//! MLflow experiments and the workspace model registry over HTTP: the paths and methods of
//! databricks-sdk-go service/ml/impl.go, an experiment as a workspace object
//! (MLFLOW_EXPERIMENT) whose soft delete frees its name, a model's `id` answered only by
//! the Databricks get, and permissions on both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::start;
use serde_json::{Value, json};

#[tokio::test]
async fn an_experiment_lies_in_the_workspace_and_its_delete_frees_the_name() {
    let c = start().await;
    let (status, e) = c
        .post("/api/2.0/mlflow/experiments/create", json!({"name": "exp"}))
        .await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error_code"], "INVALID_PARAMETER_VALUE");
    let made = c
        .ok(
            "/api/2.0/mlflow/experiments/create",
            json!({"name": "/Workspace/Shared/exp/", "tags": [{"key": "team", "value": "ml"}]}),
        )
        .await;
    let id = made["experiment_id"].as_str().unwrap().to_string();
    assert_eq!(made, json!({ "experiment_id": id }));
    let got = c
        .ok_get(&format!(
            "/api/2.0/mlflow/experiments/get?experiment_id={id}"
        ))
        .await;
    let e = &got["experiment"];
    assert_eq!(e["name"], "/Shared/exp");
    assert_eq!(e["lifecycle_stage"], "active");
    let keys: Vec<&str> = e["tags"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["key"].as_str())
        .collect();
    assert!(
        keys.contains(&"team") && keys.contains(&"mlflow.ownerEmail"),
        "{keys:?}"
    );
    // In the workspace tree, with the experiment's id as its object id.
    let status = c
        .ok_get("/api/2.0/workspace/get-status?path=/Shared/exp")
        .await;
    assert_eq!(status["object_type"], "MLFLOW_EXPERIMENT");
    assert_eq!(status["object_id"].to_string(), id);
    // Permissions on it.
    let perms = c
        .ok_get(&format!("/api/2.0/permissions/experiments/{id}"))
        .await;
    assert_eq!(perms["object_type"], "mlflowExperiment");
    c.ok(
        "/api/2.0/mlflow/experiments/update",
        json!({"experiment_id": id, "new_name": "/Shared/exp2"}),
    )
    .await;
    let by_name = c
        .ok_get("/api/2.0/mlflow/experiments/get-by-name?experiment_name=/Shared/exp2")
        .await;
    assert_eq!(by_name["experiment"]["experiment_id"], json!(id));
    c.ok(
        "/api/2.0/mlflow/experiments/delete",
        json!({"experiment_id": id}),
    )
    .await;
    let got = c
        .ok_get(&format!(
            "/api/2.0/mlflow/experiments/get?experiment_id={id}"
        ))
        .await;
    assert_eq!(got["experiment"]["lifecycle_stage"], "deleted");
    let (status, _) = c
        .get("/api/2.0/workspace/get-status?path=/Shared/exp2")
        .await;
    assert_eq!(status, 404);
    let (status, e) = c
        .post(
            "/api/2.0/mlflow/experiments/delete",
            json!({"experiment_id": id}),
        )
        .await;
    assert_eq!(status, 400, "{e}");
    let again = c
        .ok(
            "/api/2.0/mlflow/experiments/create",
            json!({"name": "/Shared/exp2"}),
        )
        .await;
    assert_ne!(again["experiment_id"], json!(id));
}

#[tokio::test]
async fn a_model_is_registered_tagged_permitted_and_deleted() {
    let c = start().await;
    let made = c
        .ok(
            "/api/2.0/mlflow/registered-models/create",
            json!({"name": "churn", "description": "d", "tags": [{"key": "k", "value": "v"}]}),
        )
        .await;
    assert_eq!(made["registered_model"]["name"], "churn");
    assert!(made["registered_model"].get("id").is_none(), "{made}");
    let got: Value = c
        .ok_get("/api/2.0/mlflow/databricks/registered-models/get?name=churn")
        .await;
    let m = &got["registered_model_databricks"];
    let id = m["id"].as_str().unwrap().to_string();
    assert_eq!(m["description"], "d");
    let (status, e) = c
        .post(
            "/api/2.0/mlflow/registered-models/create",
            json!({"name": "churn"}),
        )
        .await;
    assert_eq!(status, 409, "{e}");
    assert_eq!(e["error_code"], "RESOURCE_ALREADY_EXISTS");
    c.ok(
        "/api/2.0/mlflow/registered-models/set-tag",
        json!({"name": "churn", "key": "k2", "value": "v2"}),
    )
    .await;
    let (status, _) = c
        .delete("/api/2.0/mlflow/registered-models/delete-tag?name=churn&key=k")
        .await;
    assert_eq!(status, 200);
    let (status, _) = c
        .patch(
            "/api/2.0/mlflow/registered-models/update",
            json!({"name": "churn", "description": "e"}),
        )
        .await;
    assert_eq!(status, 200);
    let got = c
        .ok_get("/api/2.0/mlflow/databricks/registered-models/get?name=churn")
        .await;
    assert_eq!(got["registered_model_databricks"]["description"], "e");
    assert_eq!(
        got["registered_model_databricks"]["tags"],
        json!([{"key": "k2", "value": "v2"}])
    );
    let (status, e) = c
        .put(
            &format!("/api/2.0/permissions/registered-models/{id}"),
            json!({"access_control_list": [{"group_name": "users", "permission_level": "CAN_MANAGE_PRODUCTION_VERSIONS"}]}),
        )
        .await;
    assert_eq!(status, 200, "{e}");
    assert_eq!(e["object_type"], "registered-model");
    let (status, _) = c
        .delete("/api/2.0/mlflow/registered-models/delete?name=churn")
        .await;
    assert_eq!(status, 200);
    let (status, e) = c
        .get("/api/2.0/mlflow/databricks/registered-models/get?name=churn")
        .await;
    assert_eq!(status, 404, "{e}");
    assert_eq!(e["error_code"], "RESOURCE_DOES_NOT_EXIST");
}
