//! Each modelled behaviour of the real service is on by default, and turning it off really
//! changes what the local workspace does.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers panic on purpose

use crate::common;

use brickform_emulator::{
    BEHAVIOURS, Behaviour, Behaviours, EmulatorConfig, OFF_BY_DEFAULT, Timings,
};
use common::{Client, start, start_with};
use serde_json::{Value, json};

const UC: &str = "/api/2.1/unity-catalog";

async fn base(c: &Client) {
    // A new workspace has `main` (`new_workspace_main`); one started without it gets it here.
    if c.get(&format!("{UC}/catalogs/main")).await.0 == 404 {
        c.ok(&format!("{UC}/catalogs"), json!({"name": "main"}))
            .await;
    }
    c.ok(
        &format!("{UC}/schemas"),
        json!({"name": "s", "catalog_name": "main"}),
    )
    .await;
    c.ok(
        &format!("{UC}/connections"),
        json!({"name": "sql", "connection_type": "SQLSERVER",
               "options": {"host": "h", "user": "u", "password": "p"}}),
    )
    .await;
}

fn task(key: &str) -> Value {
    json!({"task_key": key, "notebook_task": {"notebook_path": "/missing"}})
}

async fn job(c: &Client, settings: Value) -> (i64, Value) {
    let id = c.ok("/api/2.2/jobs/create", settings).await["job_id"]
        .as_i64()
        .unwrap();
    let got = c.ok_get(&format!("/api/2.2/jobs/get?job_id={id}")).await;
    (id, got)
}

/// A failed run of a task whose notebook is missing.
async fn failed_run(c: &Client) -> Value {
    let (id, _) = job(c, json!({"name": "j", "tasks": [task("main")]})).await;
    let run = c.ok("/api/2.2/jobs/run-now", json!({"job_id": id})).await["run_id"]
        .as_i64()
        .unwrap();
    c.ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run}"))
        .await
}

async fn gateway(c: &Client) -> String {
    c.ok("/api/2.0/pipelines", json!({"name": "gw", "continuous": true, "gateway_definition": {
        "connection_name": "sql", "gateway_storage_catalog": "main", "gateway_storage_schema": "s"}}))
        .await["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// What the behaviour changes, observed through the API.
async fn observe(b: Behaviour, c: &Client) -> Value {
    if b == Behaviour::NewWorkspaceMain {
        // What the workspace starts with, before `base` makes anything.
        return c.ok_get(&format!("{UC}/catalogs")).await["catalogs"].clone();
    }
    base(c).await;
    match b {
        Behaviour::NewWorkspaceMain => unreachable!("observed before the base is made"),
        Behaviour::SortDependsOn => {
            let mut t = task("c");
            t["depends_on"] = json!([{"task_key": "b"}, {"task_key": "a"}]);
            let (_, got) = job(c, json!({"tasks": [task("a"), task("b"), t]})).await;
            got["settings"]["tasks"][2]["depends_on"].clone()
        }
        Behaviour::NewClusterDefaults => {
            let mut t = task("a");
            t["new_cluster"] = json!({"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge", "num_workers": 1});
            let (_, got) = job(c, json!({"tasks": [t]})).await;
            got["settings"]["tasks"][0]["new_cluster"]["data_security_mode"].clone()
        }
        Behaviour::TaskEmailNotifications => {
            let (_, got) = job(c, json!({"tasks": [task("a")]})).await;
            got["settings"]["tasks"][0]["email_notifications"].clone()
        }
        Behaviour::TaskPaging => {
            let tasks: Vec<Value> = (0..101).map(|i| task(&format!("t{i:03}"))).collect();
            let (_, got) = job(c, json!({"tasks": tasks})).await;
            json!([
                got["settings"]["tasks"].as_array().unwrap().len(),
                got["has_more"]
            ])
        }
        Behaviour::KeepRunAs => {
            // A user the workspace has (`refuse_unknown_run_as`).
            c.ok(
                "/api/2.0/preview/scim/v2/Users",
                json!({"userName": "other@x"}),
            )
            .await;
            let (id, _) = job(
                c,
                json!({"tasks": [task("a")], "run_as": {"user_name": "other@x"}}),
            )
            .await;
            c.ok(
                "/api/2.2/jobs/reset",
                json!({"job_id": id, "new_settings": {"tasks": [task("a")]}}),
            )
            .await;
            c.ok_get(&format!("/api/2.2/jobs/get?job_id={id}")).await["settings"]["run_as"].clone()
        }
        Behaviour::FailedTaskGenericMessage => {
            failed_run(c).await["tasks"][0]["state"]["state_message"].clone()
        }
        Behaviour::FailedRunInternalError => {
            let run = failed_run(c).await;
            assert_eq!(run["state"]["result_state"], "FAILED");
            run["state"]["life_cycle_state"].clone()
        }
        Behaviour::AsyncPipelineDelete => {
            // With instant timings a delete takes no time either way.
            c.emu.set_timings(Timings::default());
            let id = c.ok("/api/2.0/pipelines", json!({"name": "p"})).await["pipeline_id"]
                .as_str()
                .unwrap()
                .to_string();
            c.delete(&format!("/api/2.0/pipelines/{id}")).await;
            let (status, body) = c.get(&format!("/api/2.0/pipelines/{id}")).await;
            json!([status, body["state"]])
        }
        Behaviour::PipelineTables => {
            let gw = gateway(c).await;
            let ing = c
                .ok(
                    "/api/2.0/pipelines",
                    json!({"name": "ing", "ingestion_definition": {
                    "ingestion_gateway_id": gw, "objects": [{"table": {"source_table": "t",
                    "destination_catalog": "main", "destination_schema": "s"}}]}}),
                )
                .await["pipeline_id"]
                .as_str()
                .unwrap()
                .to_string();
            c.ok(&format!("/api/2.0/pipelines/{ing}/updates"), json!({}))
                .await;
            let t = c
                .ok_get(&format!("{UC}/tables?catalog_name=main&schema_name=s"))
                .await;
            json!(t["tables"].as_array().map_or(0, Vec::len))
        }
        Behaviour::ServerFilledPipelineFields => {
            let gw = gateway(c).await;
            c.ok_get(&format!("/api/2.0/pipelines/{gw}")).await["spec"]["gateway_definition"]
                ["gateway_storage_name"]
                .clone()
        }
        Behaviour::GatewayStagingVolume => {
            let gw = gateway(c).await;
            let v = c
                .ok_get(&format!("{UC}/volumes?catalog_name=main&schema_name=s"))
                .await;
            let names: Vec<Value> = v["volumes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| json!([v["name"], v["volume_type"]]))
                .collect();
            if !names.is_empty() {
                assert_eq!(
                    names,
                    vec![json!([
                        format!("__databricks_ingestion_gateway_staging_data-{gw}"),
                        "MANAGED"
                    ])]
                );
                // The volume is not the gateway's: it stays when the gateway goes.
                c.delete(&format!("/api/2.0/pipelines/{gw}")).await;
                c.emu.advance_clock(std::time::Duration::from_secs(5));
                let (status, _) = c.get(&format!("/api/2.0/pipelines/{gw}")).await;
                assert_eq!(status, 404);
                let left = c
                    .ok_get(&format!("{UC}/volumes?catalog_name=main&schema_name=s"))
                    .await;
                assert_eq!(left["volumes"].as_array().map_or(0, Vec::len), 1);
            }
            json!(names)
        }
        Behaviour::ForeignCatalogOptionsFixed => {
            c.ok(
                &format!("{UC}/catalogs"),
                json!({"name": "f", "connection_name": "sql", "options": {"database": "a"}}),
            )
            .await;
            let (status, _) = c
                .patch(
                    &format!("{UC}/catalogs/f"),
                    json!({"options": {"database": "b"}}),
                )
                .await;
            json!(status)
        }
        Behaviour::RefuseOverlappingLocations => {
            c.ok(
                &format!("{UC}/storage-credentials"),
                json!({"name": "cred", "aws_iam_role": {"role_arn": "arn:aws:iam::1:role/r"}}),
            )
            .await;
            c.ok(
                &format!("{UC}/external-locations"),
                json!({"name": "a", "url": "s3://b/a", "credential_name": "cred"}),
            )
            .await;
            let (status, body) = c
                .post(
                    &format!("{UC}/external-locations"),
                    json!({"name": "b", "url": "s3://b/a/under", "credential_name": "cred"}),
                )
                .await;
            json!([status, body["message"]])
        }
        Behaviour::SettingEtags => {
            // A write naming an etag that is not the current one.
            let path = "/api/2.0/settings/types/default_namespace_ws/names/default";
            let (status, body) = c
                .patch(
                    path,
                    json!({"allow_missing": true, "field_mask": "namespace.value",
                        "setting": {"etag": "stale", "namespace": {"value": "main"}}}),
                )
                .await;
            json!([
                status,
                body["error_code"],
                body["details"][0]["metadata"]["etag"].is_string()
            ])
        }
        Behaviour::OneMetastoreAssignment => {
            let current = c
                .ok_get(&format!("{UC}/current-metastore-assignment"))
                .await;
            let ws = current["workspace_id"].as_i64().unwrap();
            let (status, body) = c
                .put(
                    &format!("{UC}/workspaces/{ws}/metastore"),
                    json!({"metastore_id": "00000000-0000-0000-0000-000000000000"}),
                )
                .await;
            json!([status, body["error_code"]])
        }
        Behaviour::WithholdConnectionUser => {
            let got = c.ok_get(&format!("{UC}/connections/sql")).await;
            assert!(got["options"].get("password").is_none());
            got["options"]["user"].clone()
        }
        Behaviour::PurgeOldRuns => {
            let run = failed_run(c).await["run_id"].as_i64().unwrap();
            // Sixty days and a minute after the run ended.
            c.emu
                .advance_clock(std::time::Duration::from_secs(60 * 24 * 3600 + 60));
            let listed = c.ok_get("/api/2.2/jobs/runs/list").await["runs"]
                .as_array()
                .map_or(0, Vec::len);
            let (status, body) = c.get(&format!("/api/2.2/jobs/runs/get?run_id={run}")).await;
            let (_, repair) = c
                .post(
                    "/api/2.2/jobs/runs/repair",
                    json!({"run_id": run, "rerun_all_failed_tasks": true}),
                )
                .await;
            if status != 200 {
                let job = body["message"]
                    .as_str()
                    .and_then(|m| m.rsplit("in job: ").next())
                    .and_then(|j| j.split_whitespace().next())
                    .unwrap_or_default()
                    .to_string();
                assert_eq!(
                    body,
                    json!({"error_code": "INVALID_PARAMETER_VALUE",
                           "message": format!("Run: {run} in job: {job} doesn't exist")})
                );
                assert!(job.parse::<i64>().is_ok(), "{body}");
                assert_eq!(repair["message"], body["message"]);
                // A run id never used keeps its answer.
                let (status, never) = c
                    .get(&format!("/api/2.2/jobs/runs/get?run_id={}", run + 1000))
                    .await;
                assert_eq!(status, 400);
                assert_eq!(
                    never["message"],
                    json!(format!("Run {} does not exist.", run + 1000))
                );
            }
            json!([listed, status])
        }
        Behaviour::WarehouseServerlessDefault => {
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
            json!([w["enable_serverless_compute"], w["warehouse_type"]])
        }
        Behaviour::AsyncWarehouseDelete => {
            // With instant timings DELETING takes no time either way.
            c.emu.set_timings(Timings::default());
            let body = json!({"name": "w", "cluster_size": "Small"});
            let id = c.ok("/api/2.0/sql/warehouses", body.clone()).await["id"]
                .as_str()
                .unwrap()
                .to_string();
            c.delete(&format!("/api/2.0/sql/warehouses/{id}")).await;
            let (status, read) = c.get(&format!("/api/2.0/sql/warehouses/{id}")).await;
            // The name is held while the warehouse is being deleted.
            let (again, _) = c.post("/api/2.0/sql/warehouses", body).await;
            json!([status, read["state"], again])
        }
        Behaviour::PolicyDefinitionReformatted => {
            let id = c
                .ok(
                    "/api/2.0/policies/clusters/create",
                    json!({"name": "p", "definition": "{\"a\":{\"type\":\"unlimited\"}}"}),
                )
                .await["policy_id"]
                .as_str()
                .unwrap()
                .to_string();
            c.ok_get(&format!("/api/2.0/policies/clusters/get?policy_id={id}"))
                .await["definition"]
                .clone()
        }
        Behaviour::PrincipalsAsScimHolds => {
            // A user SCIM holds as Mixed.Case@Example.com, named in other cases everywhere.
            c.ok(
                "/api/2.0/preview/scim/v2/Users",
                json!({"userName": "Mixed.Case@Example.com"}),
            )
            .await;
            let (status, _) = c
                .patch(
                    &format!("{UC}/permissions/catalog/main"),
                    json!({"changes": [
                        {"principal": "mixed.case@example.com", "add": ["USE_CATALOG"]},
                        {"principal": "MIXED.case@example.com", "add": ["CREATE_SCHEMA"]},
                    ]}),
                )
                .await;
            assert_eq!(status, 200);
            let grants = c
                .ok_get(&format!(
                    "{UC}/permissions/catalog/main?principal=mixed.case@example.COM"
                ))
                .await;
            let (id, _) = job(
                c,
                json!({"name": "j", "run_as": {"user_name": "mixed.case@example.com"}}),
            )
            .await;
            let (status, _) = c
                .put(
                    &format!("/api/2.0/permissions/jobs/{id}"),
                    json!({"access_control_list": [
                        {"user_name": "mixed.case@EXAMPLE.com", "permission_level": "CAN_VIEW"},
                        {"user_name": "local-user@brickform.local", "permission_level": "IS_OWNER"},
                    ]}),
                )
                .await;
            assert_eq!(status, 200);
            let acl = c.ok_get(&format!("/api/2.0/permissions/jobs/{id}")).await;
            let viewer = acl["access_control_list"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["all_permissions"][0]["permission_level"] == "CAN_VIEW")
                .map(|e| e["user_name"].clone());
            let run_as = c.ok_get(&format!("/api/2.2/jobs/get?job_id={id}")).await;
            c.ok("/api/2.0/secrets/scopes/create", json!({"scope": "s"}))
                .await;
            c.ok(
                "/api/2.0/secrets/acls/put",
                json!({"scope": "s", "principal": "MIXED.CASE@example.com", "permission": "READ"}),
            )
            .await;
            let (_, secret_acl) = c
                .get("/api/2.0/secrets/acls/get?scope=s&principal=mixed.case@example.com")
                .await;
            json!([
                grants["privilege_assignments"],
                viewer,
                run_as["run_as_user_name"],
                run_as["settings"]["run_as"],
                secret_acl,
            ])
        }
        Behaviour::ApplyPolicyDefaultValuesConsumed => {
            let mut t = task("a");
            t["new_cluster"] = json!({"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge",
                "num_workers": 1, "policy_id": "p", "apply_policy_default_values": true});
            let (_, got) = job(c, json!({"tasks": [t]})).await;
            got["settings"]["tasks"][0]["new_cluster"]["apply_policy_default_values"].clone()
        }
        Behaviour::DataSecurityModeAliases => {
            let mut t = task("a");
            t["new_cluster"] = json!({"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge",
                "num_workers": 1, "data_security_mode": "DATA_SECURITY_MODE_STANDARD"});
            let (_, got) = job(c, json!({"tasks": [t]})).await;
            got["settings"]["tasks"][0]["new_cluster"]["data_security_mode"].clone()
        }
        Behaviour::DriverNodeTypeFromNodeType => {
            let mut t = task("a");
            t["new_cluster"] = json!({"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge",
                "num_workers": 1});
            let (_, got) = job(c, json!({"tasks": [t]})).await;
            let id = c
                .ok(
                    "/api/2.0/pipelines",
                    json!({"name": "p", "clusters": [{"label": "default", "node_type_id": "m5.large"}]}),
                )
                .await["pipeline_id"]
                .as_str()
                .unwrap()
                .to_string();
            let p = c.ok_get(&format!("/api/2.0/pipelines/{id}")).await;
            json!([
                got["settings"]["tasks"][0]["new_cluster"]["driver_node_type_id"],
                p["spec"]["clusters"][0]["driver_node_type_id"],
            ])
        }
        Behaviour::TaskSourceFilled => {
            let (_, got) = job(c, json!({"tasks": [task("a")]})).await;
            got["settings"]["tasks"][0]["notebook_task"]["source"].clone()
        }
        Behaviour::RefuseUnknownRunAs => {
            let (status, body) = c
                .post(
                    "/api/2.2/jobs/create",
                    json!({"name": "j", "run_as": {"user_name": "nobody@example.com"}}),
                )
                .await;
            let jobs = c.ok_get("/api/2.2/jobs/list").await;
            json!([
                status,
                body,
                jobs.get("jobs").map_or(0, |j| j.as_array().unwrap().len())
            ])
        }
        Behaviour::DatasetTypeFixed => {
            // A pipeline whose SQL file turns a streaming table into a materialized view.
            use base64::Engine as _;
            let put = |sql: &str| {
                json!({"path": "/Shared/t.sql", "format": "RAW", "overwrite": true,
                    "content": base64::engine::general_purpose::STANDARD.encode(sql)})
            };
            c.ok(
                "/api/2.0/workspace/import",
                put("CREATE OR REFRESH STREAMING TABLE t AS SELECT 1"),
            )
            .await;
            let id = c
                .ok(
                    "/api/2.0/pipelines",
                    json!({"name": "p", "catalog": "main", "schema": "s",
                        "libraries": [{"file": {"path": "/Shared/t.sql"}}]}),
                )
                .await["pipeline_id"]
                .as_str()
                .unwrap()
                .to_string();
            let updates = format!("/api/2.0/pipelines/{id}/updates");
            c.ok(&updates, json!({})).await;
            c.emu.advance_clock(std::time::Duration::from_secs(5));
            c.ok(
                "/api/2.0/workspace/import",
                put("CREATE OR REFRESH MATERIALIZED VIEW t AS SELECT 1"),
            )
            .await;
            let uid = c.ok(&updates, json!({"full_refresh": true})).await["update_id"]
                .as_str()
                .unwrap()
                .to_string();
            c.emu.advance_clock(std::time::Duration::from_secs(5));
            let u = c.ok_get(&format!("{updates}/{uid}")).await;
            let (_, t) = c.get(&format!("{UC}/tables/main.s.t")).await;
            json!([u["update"]["state"], t["table_type"]])
        }
        Behaviour::SdpMetaReadsItsSources => {
            // An sdp-meta pipeline whose dataflowspec table was never onboarded.
            let id = c
                .ok(
                    "/api/2.0/pipelines",
                    json!({"name": "bronze", "catalog": "main",
                    "schema": "s", "configuration": {"layer": "bronze",
                    "bronze.dataflowspecTable": "main.s.bronze_spec", "bronze.group": "A1"}}),
                )
                .await["pipeline_id"]
                .as_str()
                .unwrap()
                .to_string();
            let u = c
                .ok(&format!("/api/2.0/pipelines/{id}/updates"), json!({}))
                .await;
            let uid = u["update_id"].as_str().unwrap();
            c.ok_get(&format!("/api/2.0/pipelines/{id}/updates/{uid}"))
                .await["update"]["state"]
                .clone()
        }
        Behaviour::NormaliseAnswers => {
            // The domain answers the alias in its older name by itself
            // (`data_security_mode_aliases`): off, only the rewriting of answers does.
            c.emu.set_behaviours(
                c.emu
                    .behaviours()
                    .without(Behaviour::DataSecurityModeAliases),
            );
            let mut t = task("a");
            t["new_cluster"] = json!({"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge",
                "num_workers": 1, "data_security_mode": "DATA_SECURITY_MODE_DEDICATED"});
            let (_, got) = job(c, json!({"description": "Nightly load", "tasks": [t]})).await;
            json!([
                got["settings"]["description"],
                got["settings"]["tasks"][0]["new_cluster"]["data_security_mode"]
            ])
        }
    }
}

/// Each behaviour is on by default (but the opt-in ones), and turning it off (on) really
/// changes what is seen.
#[tokio::test]
async fn each_behaviour_is_modelled_by_default_and_turning_it_off_changes_what_is_seen() {
    for (b, name, _) in BEHAVIOURS {
        let on_by_default = !OFF_BY_DEFAULT.contains(b);
        assert_eq!(Behaviours::default().on(*b), on_by_default, "{name}");
        let on = observe(
            *b,
            &start_with(EmulatorConfig {
                behaviours: Behaviours::default().with(*b),
                ..EmulatorConfig::for_tests()
            })
            .await,
        )
        .await;
        let off = observe(
            *b,
            &start_with(EmulatorConfig {
                behaviours: Behaviours::default().without(*b),
                ..EmulatorConfig::for_tests()
            })
            .await,
        )
        .await;
        assert_ne!(on, off, "turning off {name} changed nothing: {on}");
    }
}

#[tokio::test]
async fn behaviours_are_listed_and_set_at_runtime_and_unknown_names_are_refused() {
    let c = start().await;
    let got = c.ok_get("/__emulator/behaviours").await;
    assert_eq!(got["behaviours"]["async_pipeline_delete"], true);
    assert_eq!(
        got["behaviours"].as_object().unwrap().len(),
        BEHAVIOURS.len()
    );
    assert!(got["descriptions"]["keep_run_as"].as_str().is_some());

    let (status, body) = c
        .post(
            "/__emulator/behaviours",
            json!({"async_pipeline_delete": false, "nope": true}),
        )
        .await;
    assert_eq!(status, 400);
    let msg = body["message"].as_str().unwrap();
    assert!(
        msg.contains("'nope'") && msg.contains("withhold_connection_user"),
        "{msg}"
    );
    assert!(
        c.emu.behaviours().on(Behaviour::AsyncPipelineDelete),
        "a refused change changes nothing"
    );

    let set = c
        .ok(
            "/__emulator/behaviours",
            json!({"async_pipeline_delete": false}),
        )
        .await;
    assert_eq!(set["behaviours"]["async_pipeline_delete"], false);
    assert_eq!(set["behaviours"]["keep_run_as"], true);
    // And it takes effect: the delete is immediate.
    let on = observe(Behaviour::AsyncPipelineDelete, &c).await;
    assert_eq!(on[0], 404);
}
