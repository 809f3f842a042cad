//! Unity Catalog registered models and the grants on securables over HTTP: a model made,
//! listed under `registered_models`, renamed, refusing what its schema refuses; grants on
//! it through the securable type `function`; and the securables the local workspace does
//! not serve (functions, shares, AI Gateway services), and a service credential not made,
//! answered as missing, as the service answers an object that does not exist.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Client, start};
use serde_json::json;

const UC: &str = "/api/2.1/unity-catalog";

async fn schema(c: &Client) {
    c.ok(&format!("{UC}/catalogs"), json!({"name": "ml"})).await;
    c.ok(
        &format!("{UC}/schemas"),
        json!({"name": "models", "catalog_name": "ml"}),
    )
    .await;
    c.ok(
        "/api/2.0/preview/scim/v2/Groups",
        json!({"displayName": "scientists"}),
    )
    .await;
}

#[tokio::test]
async fn a_registered_model_is_made_listed_renamed_and_deleted() {
    let c = start().await;
    schema(&c).await;
    let made = c
        .ok(
            &format!("{UC}/models"),
            json!({"catalog_name": "ml", "schema_name": "models", "name": "Churn", "comment": "one"}),
        )
        .await;
    assert_eq!(made["full_name"], "ml.models.churn");
    assert_eq!(made["owner"], "local-user@brickform.local");
    assert!(
        made["storage_location"]
            .as_str()
            .unwrap()
            .contains("/models/"),
        "{made}"
    );
    let (s, e) = c
        .post(
            &format!("{UC}/models"),
            json!({"catalog_name": "ml", "schema_name": "models", "name": "churn"}),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (409, Some("RESOURCE_ALREADY_EXISTS")),
        "{e}"
    );
    let (s, e) = c
        .post(
            &format!("{UC}/models"),
            json!({"catalog_name": "ml", "schema_name": "nope", "name": "x"}),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("SCHEMA_DOES_NOT_EXIST")),
        "{e}"
    );

    let listed = c
        .ok_get(&format!("{UC}/models?catalog_name=ml&schema_name=models"))
        .await;
    assert_eq!(listed["registered_models"][0]["name"], "churn", "{listed}");

    // The schema is not empty while it holds the model: models count as functions.
    let (s, e) = c.delete(&format!("{UC}/schemas/ml.models")).await;
    assert_eq!(s, 400, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("1 functions(s)"),
        "{e}"
    );

    let (s, renamed) = c
        .patch(
            &format!("{UC}/models/ml.models.churn"),
            json!({"new_name": "retention", "comment": "two"}),
        )
        .await;
    assert_eq!(s, 200, "{renamed}");
    assert_eq!(renamed["full_name"], "ml.models.retention");
    let (s, e) = c.get(&format!("{UC}/models/ml.models.churn")).await;
    assert_eq!(
        (s, e["error_code"].as_str(), e["message"].as_str()),
        (
            404,
            Some("RESOURCE_DOES_NOT_EXIST"),
            Some("Routine or Model 'ml.models.churn' does not exist.")
        )
    );
    let (s, _) = c.delete(&format!("{UC}/models/ml.models.retention")).await;
    assert_eq!(s, 200);
    let (s, _) = c.get(&format!("{UC}/models/ml.models.retention")).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn grants_on_a_model_are_a_functions_and_securables_made_elsewhere_are_missing() {
    let c = start().await;
    schema(&c).await;
    c.ok(
        &format!("{UC}/models"),
        json!({"catalog_name": "ml", "schema_name": "models", "name": "churn"}),
    )
    .await;
    let path = format!("{UC}/permissions/function/ml.models.churn");
    let (s, got) = c
        .patch(
            &path,
            json!({"changes": [{"principal": "scientists", "add": ["EXECUTE", "APPLY_TAG"]}]}),
        )
        .await;
    assert_eq!(s, 200, "{got}");
    assert_eq!(
        got["privilege_assignments"],
        json!([{"principal": "scientists", "privileges": ["APPLY_TAG", "EXECUTE"]}])
    );
    // A privilege a model does not take.
    let (s, e) = c
        .patch(
            &path,
            json!({"changes": [{"principal": "scientists", "add": ["SELECT"]}]}),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (400, Some("INVALID_PARAMETER_VALUE")),
        "{e}"
    );
    // A rename carries the grants; a delete takes them.
    c.patch(
        &format!("{UC}/models/ml.models.churn"),
        json!({"new_name": "retention"}),
    )
    .await;
    let got = c
        .ok_get(&format!("{UC}/permissions/function/ml.models.retention"))
        .await;
    assert_eq!(got["privilege_assignments"][0]["principal"], "scientists");
    c.delete(&format!("{UC}/models/ml.models.retention")).await;
    let dump = c.ok_get("/__emulator/state").await;
    assert_eq!(dump["grants"], json!({}), "{}", dump["grants"]);

    for (path, message) in [
        (
            "permissions/function/ml.models.udf",
            "Routine or Model 'ml.models.udf' does not exist.",
        ),
        (
            "permissions/share/quarterly",
            "Share 'quarterly' does not exist.",
        ),
        (
            "shares/quarterly/permissions",
            "Share 'quarterly' does not exist.",
        ),
        (
            "permissions/credential/svc",
            "Credential 'svc' does not exist.",
        ),
        (
            "permissions/model_service/ml.models.svc",
            "Model Service 'ml.models.svc' does not exist.",
        ),
        (
            "permissions/model_provider_service/ml.models.p",
            "Model Provider Service 'ml.models.p' does not exist.",
        ),
        (
            "permissions/mcp_service/ml.models.m",
            "MCP Service 'ml.models.m' does not exist.",
        ),
    ] {
        let (s, e) = c.get(&format!("{UC}/{path}")).await;
        assert_eq!(
            (s, e["error_code"].as_str(), e["message"].as_str()),
            (404, Some("RESOURCE_DOES_NOT_EXIST"), Some(message)),
            "{path}"
        );
        let (s, _) = c
            .patch(
                &format!("{UC}/{path}"),
                json!({"changes": [{"principal": "scientists", "add": ["EXECUTE"]}]}),
            )
            .await;
        assert_eq!(s, 404, "{path}");
    }
}

/// A SQL function as `CREATE FUNCTION` makes it: the fields `CreateFunction` requires.
fn function_info(name: &str) -> serde_json::Value {
    json!({"function_info": {
        "name": name, "catalog_name": "ml", "schema_name": "models",
        "input_params": {"parameters": []}, "data_type": "INT", "full_data_type": "INT",
        "routine_body": "SQL", "routine_definition": "1", "parameter_style": "S",
        "is_deterministic": true, "sql_data_access": "CONTAINS_SQL", "is_null_call": false,
        "security_type": "DEFINER", "specific_name": name,
    }})
}

#[tokio::test]
async fn a_function_is_a_routine_of_its_schema_that_takes_grants() {
    let c = start().await;
    schema(&c).await;
    let made = c.ok(&format!("{UC}/functions"), function_info("one")).await;
    assert_eq!(made["full_name"], "ml.models.one");
    let mut partial = function_info("two");
    partial["function_info"]
        .as_object_mut()
        .unwrap()
        .remove("routine_body");
    let (s, e) = c.post(&format!("{UC}/functions"), partial).await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (400, Some("INVALID_PARAMETER_VALUE")),
        "{e}"
    );
    assert!(
        e["message"].as_str().unwrap().contains("routine_body"),
        "{e}"
    );
    // Functions and models share their names.
    let (s, e) = c
        .post(
            &format!("{UC}/models"),
            json!({"catalog_name": "ml", "schema_name": "models", "name": "one"}),
        )
        .await;
    assert_eq!(s, 409, "{e}");
    let listed = c
        .ok_get(&format!(
            "{UC}/functions?catalog_name=ml&schema_name=models"
        ))
        .await;
    assert_eq!(listed["functions"][0]["name"], "one", "{listed}");

    let path = format!("{UC}/permissions/function/ml.models.one");
    let (s, got) = c
        .patch(
            &path,
            json!({"changes": [{"principal": "scientists", "add": ["EXECUTE"]}]}),
        )
        .await;
    assert_eq!(s, 200, "{got}");
    // APPLY_TAG is a model's privilege, not a function's.
    let (s, e) = c
        .patch(
            &path,
            json!({"changes": [{"principal": "scientists", "add": ["APPLY_TAG"]}]}),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (400, Some("INVALID_PARAMETER_VALUE")),
        "{e}"
    );
    let (s, _) = c.delete(&format!("{UC}/functions/ml.models.one")).await;
    assert_eq!(s, 200);
    let (s, _) = c.get(&path).await;
    assert_eq!(s, 404);
    assert_eq!(c.ok_get("/__emulator/state").await["grants"], json!({}));
}
