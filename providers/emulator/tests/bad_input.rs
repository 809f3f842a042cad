//! Bad input never panics, hangs or answers 5xx: a seeded, bounded mutation loop over valid
//! request bodies, plus a table of targeted mistakes whose 400 must name the field.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers panic on purpose

use crate::common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};
use std::time::Duration;

const UC: &str = "/api/2.1/unity-catalog";

/// Valid requests, each runnable against the fixture workspace below.
fn templates() -> Vec<(&'static str, String, Value)> {
    vec![
        (
            "POST",
            format!("{UC}/catalogs"),
            json!({"name": "c1", "comment": "x", "properties": {"a": "b"}}),
        ),
        (
            "PATCH",
            format!("{UC}/catalogs/main"),
            json!({"comment": "x", "isolation_mode": "OPEN", "enable_predictive_optimization": "ENABLE"}),
        ),
        (
            "POST",
            format!("{UC}/schemas"),
            json!({"name": "s1", "catalog_name": "main", "properties": {"k": "v"}}),
        ),
        (
            "PATCH",
            format!("{UC}/schemas/main.s"),
            json!({"comment": "y", "owner": "me"}),
        ),
        (
            "POST",
            format!("{UC}/volumes"),
            json!({"catalog_name": "main", "schema_name": "s", "name": "v1", "volume_type": "MANAGED"}),
        ),
        (
            "POST",
            format!("{UC}/connections"),
            json!({"name": "k1", "connection_type": "MYSQL", "options": {"host": "h", "password": "p"}, "read_only": true}),
        ),
        (
            "PATCH",
            format!("{UC}/connections/sql"),
            json!({"options": {"host": "h2"}, "owner": "o"}),
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p1", "catalog": "main", "schema": "s", "serverless": true,
            "libraries": [{"notebook": {"path": "/Shared/nb"}}], "configuration": {"a": "b"},
            "clusters": [{"label": "default", "autoscale": {"min_workers": 1, "max_workers": 2, "mode": "ENHANCED"}}]}),
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "g1", "allow_duplicate_names": true, "gateway_definition": {
            "connection_name": "sql", "gateway_storage_catalog": "main", "gateway_storage_schema": "s"}}),
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "i1", "allow_duplicate_names": true, "ingestion_definition": {
            "connection_name": "sql", "objects": [{"schema": {"source_schema": "a", "destination_catalog": "main", "destination_schema": "s"}},
            {"table": {"source_table": "t", "destination_catalog": "main", "destination_schema": "s", "table_configuration": {"scd_type": "SCD_TYPE_2", "primary_keys": ["id"]}}}]}}),
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"name": "j", "max_concurrent_runs": 2, "tasks": [
            {"task_key": "a", "notebook_task": {"notebook_path": "/Shared/nb", "base_parameters": {"x": "y"}}},
            {"task_key": "b", "depends_on": [{"task_key": "a"}], "run_if": "ALL_DONE", "condition_task": {"op": "EQUAL_TO", "left": "1", "right": "1"}},
            {"task_key": "w", "environment_key": "e", "python_wheel_task": {"package_name": "p", "entry_point": "run", "named_parameters": {"a": "b"}}}],
            "environments": [{"environment_key": "e", "spec": {"environment_version": "2"}}],
            "parameters": [{"name": "env", "default": "dev"}],
            "schedule": {"quartz_cron_expression": "0 0 * * * ?", "timezone_id": "UTC", "pause_status": "PAUSED"},
            "queue": {"enabled": true}, "tags": {"t": "v"}}),
        ),
        (
            "POST",
            "/api/2.2/jobs/run-now".into(),
            json!({"job_id": "JOB", "job_parameters": {"env": "x"}, "queue": {"enabled": true}}),
        ),
        (
            "POST",
            "/api/2.2/jobs/update".into(),
            json!({"job_id": "JOB", "new_settings": {"timeout_seconds": 5, "tasks": [{"task_key": "a", "notebook_task": {"notebook_path": "/x"}}]}, "fields_to_remove": ["tags"]}),
        ),
        (
            "POST",
            "/api/2.2/jobs/reset".into(),
            json!({"job_id": "JOB", "new_settings": {"name": "r", "tasks": [{"task_key": "a", "pipeline_task": {"pipeline_id": "x"}}]}}),
        ),
        (
            "POST",
            "/api/2.0/workspace/mkdirs".into(),
            json!({"path": "/Shared/d"}),
        ),
        (
            "POST",
            "/api/2.0/workspace/import".into(),
            json!({"path": "/Shared/n2", "content": "eA==", "format": "SOURCE", "language": "SQL", "overwrite": true}),
        ),
        (
            "POST",
            "/api/2.0/workspace/delete".into(),
            json!({"path": "/Shared/d", "recursive": true}),
        ),
        (
            "POST",
            "/api/2.0/secrets/scopes/create".into(),
            json!({"scope": "sc", "initial_manage_principal": "users"}),
        ),
        (
            "POST",
            "/api/2.0/secrets/put".into(),
            json!({"scope": "scope", "key": "k", "string_value": "v"}),
        ),
    ]
}

async fn fixture(c: &common::Client) -> i64 {
    // `main` is the one a new workspace starts with.
    c.ok(
        &format!("{UC}/schemas"),
        json!({"name": "s", "catalog_name": "main"}),
    )
    .await;
    c.ok(
        &format!("{UC}/connections"),
        json!({"name": "sql", "connection_type": "SQLSERVER", "options": {"host": "h"}}),
    )
    .await;
    c.ok(
        "/api/2.0/workspace/import",
        json!({"path": "/Shared/nb", "content": "eA==", "format": "SOURCE", "language": "PYTHON"}),
    )
    .await;
    c.ok("/api/2.0/secrets/scopes/create", json!({"scope": "scope"}))
        .await;
    c.ok("/api/2.2/jobs/create", json!({"name": "j0", "tasks": [{"task_key": "a", "notebook_task": {"notebook_path": "/Shared/nb"}}]})).await["job_id"]
        .as_i64()
        .unwrap()
}

fn with_job(v: &Value, job: i64) -> Value {
    let mut v = v.clone();
    if v.get("job_id") == Some(&json!("JOB")) {
        v["job_id"] = json!(job);
    }
    v
}

fn random_value(rng: &mut StdRng) -> Value {
    match rng.random_range(0..8) {
        0 => Value::Null,
        1 => json!(rng.random::<bool>()),
        2 => json!(rng.random::<i64>()),
        3 => json!(rng.random::<f64>() * 1e6),
        4 => json!(["x", 1, null]),
        5 => json!({"nested": {"deep": [1, {"x": "y"}]}}),
        6 => json!("NOT_AN_ENUM_VALUE"),
        _ => json!(""),
    }
}

/// Every (object, key) location in a JSON tree, as a path of keys/indices.
fn locations(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(json!(k));
                out.push(path.clone());
                locations(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(json!(i));
                out.push(path.clone());
                locations(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(v: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    let mut cur = v;
    for p in path {
        cur = match p {
            Value::String(k) => cur.as_object_mut()?.get_mut(k)?,
            Value::Number(i) => cur
                .as_array_mut()?
                .get_mut(usize::try_from(i.as_u64()?).ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn mutate(rng: &mut StdRng, v: &Value) -> Vec<u8> {
    let mut v = v.clone();
    let mut locs = Vec::new();
    locations(&v, &mut Vec::new(), &mut locs);
    match rng.random_range(0..6) {
        0 | 1 if !locs.is_empty() => {
            let loc = &locs[rng.random_range(0..locs.len())];
            let new = random_value(rng);
            if let Some(slot) = at_mut(&mut v, loc) {
                *slot = new;
            }
        }
        2 if !locs.is_empty() => {
            let loc = &locs[rng.random_range(0..locs.len())];
            if let (Some((last, parent)), true) = (loc.split_last(), true)
                && let Some(Value::Object(m)) = at_mut(&mut v, parent)
            {
                m.remove(last.as_str().unwrap_or_default());
            }
        }
        3 => {
            let s = serde_json::to_vec(&v).unwrap();
            let cut = rng.random_range(0..s.len());
            return s[..cut].to_vec();
        }
        4 => {
            return (0..rng.random_range(0..64))
                .map(|_| rng.random::<u8>())
                .collect();
        }
        _ => {
            let mut m = Map::new();
            m.insert("unexpected".into(), random_value(rng));
            return serde_json::to_vec(&Value::Array(vec![Value::Object(m)])).unwrap();
        }
    }
    serde_json::to_vec(&v).unwrap()
}

#[tokio::test]
async fn mutated_bodies_get_4xx_in_the_error_shape_never_5xx() {
    let c = common::start().await;
    let job = fixture(&c).await;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut rng = StdRng::seed_from_u64(0x0b71_c6f0);
    let mut outcomes = std::collections::BTreeMap::new();
    for (method, path, body) in templates() {
        let body = with_job(&body, job);
        for _ in 0..40 {
            let bytes = mutate(&mut rng, &body);
            let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let r = http
                .request(m, c.url(&path))
                .bearer_auth("t")
                .header("Content-Type", "application/json")
                .body(bytes.clone())
                .send()
                .await
                .unwrap_or_else(|e| {
                    panic!(
                        "{method} {path} with {:?}: {e}",
                        String::from_utf8_lossy(&bytes)
                    )
                });
            let status = r.status().as_u16();
            let text = r.text().await.unwrap();
            let shown = String::from_utf8_lossy(&bytes).to_string();
            assert!(
                status < 500,
                "{method} {path} answered {status} {text} to {shown}"
            );
            if status >= 400 {
                let e: Value =
                    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
                assert!(
                    e["error_code"].is_string() && e["message"].is_string(),
                    "{text}"
                );
            }
            *outcomes.entry(status).or_insert(0) += 1;
        }
    }
    assert!(
        outcomes.get(&400).copied().unwrap_or(0) > 200,
        "most mutations are rejected: {outcomes:?}"
    );
    assert_eq!(
        c.ok_get(&format!("{UC}/catalogs/main")).await["name"],
        "main",
        "the server is still healthy"
    );
}

#[tokio::test]
async fn targeted_mistakes_name_the_field() {
    let c = common::start().await;
    let job = fixture(&c).await;
    let cases: Vec<(&str, String, Value, &str)> = vec![
        ("POST", format!("{UC}/catalogs"), json!({}), "name"),
        (
            "POST",
            format!("{UC}/catalogs"),
            json!({"name": ["x"]}),
            "name",
        ),
        (
            "POST",
            format!("{UC}/catalogs"),
            json!({"name": "x", "properties": {"a": 1}}),
            "properties.a",
        ),
        (
            "PATCH",
            format!("{UC}/catalogs/main"),
            json!({"isolation_mode": "SHARED"}),
            "isolation_mode",
        ),
        (
            "POST",
            format!("{UC}/schemas"),
            json!({"name": "x"}),
            "catalog_name",
        ),
        (
            "POST",
            format!("{UC}/volumes"),
            json!({"catalog_name": "main", "schema_name": "s", "name": "v", "volume_type": "FOO"}),
            "volume_type",
        ),
        (
            "POST",
            format!("{UC}/volumes"),
            json!({"catalog_name": "main", "schema_name": "s", "name": "v"}),
            "volume_type",
        ),
        (
            "POST",
            format!("{UC}/connections"),
            json!({"name": "x", "connection_type": "MYSQL"}),
            "options",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "continuous": "yes"}),
            "continuous",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "libraries": [{"notebook": {}}]}),
            "libraries[0].notebook.path",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"name": "j", "performance_target": "FAST"}),
            "performance_target",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"name": "j", "schedule": {"quartz_cron_expression": "0 0 2 * *", "timezone_id": "UTC"}}),
            "schedule.quartz_cron_expression",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"name": "j", "schedule": {"quartz_cron_expression": "0 0 2 * * ?", "timezone_id": "Europe/Zurch"}}),
            "schedule.timezone_id",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "channel": "PREVEIW"}),
            "channel",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "edition": "ADVANCE"}),
            "edition",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "notifications": [{"alerts": ["on-update-fail"]}]}),
            "notifications[0].alerts[0]",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "restart_window": {"start_hour": 1, "days_of_week": ["MON"]}}),
            "restart_window.days_of_week[0]",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "clusters": [{"label": "Default"}]}),
            "clusters[0].label",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "ingestion_definition": {"connection_name": "sql", "objects": [{"table": {"destination_catalog": "main"}}]}}),
            "ingestion_definition.objects[0].table.destination_schema",
        ),
        (
            "POST",
            "/api/2.0/pipelines".into(),
            json!({"name": "p", "ingestion_definition": {"connection_name": "sql", "objects": [{"table": {"destination_catalog": "main", "destination_schema": "s", "table_configuration": {"scd_type": "SCD_TYPE_3"}}}]}}),
            "scd_type",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"tasks": [{"notebook_task": {"notebook_path": "/x"}}]}),
            "tasks[0].task_key",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"tasks": [{"task_key": "a", "run_if": "SOMETIMES", "notebook_task": {"notebook_path": "/x"}}]}),
            "tasks[0].run_if",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"tasks": [{"task_key": "a", "notebook_task": {}}]}),
            "tasks[0].notebook_task.notebook_path",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"tasks": [{"task_key": "a", "environment_key": "nope", "notebook_task": {"notebook_path": "/x"}}]}),
            "environment_key",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"schedule": {"quartz_cron_expression": "x"}}),
            "schedule.timezone_id",
        ),
        (
            "POST",
            "/api/2.2/jobs/create".into(),
            json!({"timeout_seconds": "soon"}),
            "timeout_seconds",
        ),
        ("POST", "/api/2.2/jobs/run-now".into(), json!({}), "job_id"),
        (
            "POST",
            "/api/2.2/jobs/update".into(),
            json!({"job_id": job, "fields_to_remove": ["tasks/none"]}),
            "fields_to_remove",
        ),
        (
            "POST",
            "/api/2.0/workspace/import".into(),
            json!({"path": "/Shared/x", "content": "!!", "format": "SOURCE", "language": "PYTHON"}),
            "content",
        ),
        (
            "POST",
            "/api/2.0/workspace/import".into(),
            json!({"path": "/Shared/x", "format": "WORD"}),
            "format",
        ),
        (
            "POST",
            "/api/2.0/workspace/mkdirs".into(),
            json!({"path": "relative"}),
            "path",
        ),
        (
            "POST",
            "/api/2.0/secrets/put".into(),
            json!({"scope": "scope", "key": "k"}),
            "string_value",
        ),
        (
            "GET",
            format!("{UC}/catalogs?max_results=lots"),
            Value::Null,
            "max_results",
        ),
        ("GET", format!("{UC}/schemas"), Value::Null, "catalog_name"),
        (
            "GET",
            "/api/2.2/jobs/get?job_id=abc".into(),
            Value::Null,
            "job_id",
        ),
        (
            "DELETE",
            format!("{UC}/catalogs/main?force=maybe"),
            Value::Null,
            "force",
        ),
    ];
    for (method, path, body, field) in cases {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let (status, e) = c
            .call(m, &path, (!body.is_null()).then_some(body.clone()))
            .await;
        assert_eq!(status, 400, "{method} {path} {body}: {e}");
        assert_eq!(e["error_code"], "INVALID_PARAMETER_VALUE", "{e}");
        assert!(
            e["message"].as_str().unwrap().contains(field),
            "{method} {path} {body}: message {e} does not name {field}"
        );
    }
}

fn random_text(rng: &mut StdRng) -> String {
    const PIECES: &[&str] = &[
        "name",
        " LIKE ",
        "'",
        "\"",
        "%",
        "_",
        "é",
        "ß",
        "日本",
        "=",
        "notebook",
        "-1",
        "0",
        "99999999999999999999",
        "true",
        "/",
        "..",
        "%zz",
        "&",
        "#",
        " ",
    ];
    (0..rng.random_range(0..8))
        .map(|_| PIECES[rng.random_range(0..PIECES.len())])
        .collect()
}

#[tokio::test]
async fn fuzzed_query_parameters_and_path_segments_never_fail_the_server() {
    let c = common::start().await;
    fixture(&c).await;
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let gets = [
        (
            "/api/2.0/pipelines",
            &["filter", "max_results", "page_token", "order_by"][..],
        ),
        (
            &format!("{UC}/catalogs")[..],
            &["max_results", "page_token"][..],
        ),
        (
            &format!("{UC}/schemas")[..],
            &["catalog_name", "max_results", "page_token"][..],
        ),
        (
            &format!("{UC}/volumes")[..],
            &["catalog_name", "schema_name", "max_results"][..],
        ),
        (
            "/api/2.2/jobs/list",
            &["limit", "offset", "page_token", "name", "expand_tasks"][..],
        ),
        ("/api/2.2/jobs/get", &["job_id", "page_token"][..]),
        (
            "/api/2.2/jobs/runs/list",
            &[
                "job_id",
                "limit",
                "active_only",
                "completed_only",
                "run_type",
            ][..],
        ),
        (
            "/api/2.0/workspace/list",
            &["path", "notebooks_modified_after"][..],
        ),
        (
            "/api/2.0/workspace/export",
            &["path", "format", "direct_download"][..],
        ),
        ("/api/2.0/secrets/list", &["scope"][..]),
    ];
    for _ in 0..25 {
        for (path, keys) in &gets {
            let mut req = c.http.get(c.url(path)).bearer_auth("t");
            let params: Vec<(String, String)> = keys
                .iter()
                .map(|k| (k.to_string(), random_text(&mut rng)))
                .collect();
            req = req.query(&params);
            let r = req.send().await.unwrap();
            assert!(
                r.status().as_u16() < 500,
                "GET {path} {params:?}: {}",
                r.status()
            );
        }
        let segment: String = random_text(&mut rng);
        let encoded: String = segment.bytes().map(|b| format!("%{b:02X}")).collect();
        for p in [
            format!("{UC}/catalogs/{encoded}"),
            format!("{UC}/schemas/{encoded}"),
            format!("/api/2.0/pipelines/{encoded}"),
            format!("/api/2.0/fs/files/Volumes/{encoded}"),
        ] {
            let (s, _) = c.get(&p).await;
            assert!(s < 500, "GET {p}: {s}");
        }
    }
}

#[tokio::test]
async fn absurd_durations_do_not_overflow() {
    let c = common::start().await;
    fixture(&c).await;
    c.ok(
        "/__emulator/timings",
        json!({"update_step": i64::MAX, "run_setup": i64::MAX, "task": i64::MAX}),
    )
    .await;
    c.ok(
        &format!("{UC}/schemas"),
        json!({"name": "t", "catalog_name": "main"}),
    )
    .await;
    let pid = c
        .ok(
            "/api/2.0/pipelines",
            json!({"name": "p", "catalog": "main", "schema": "t"}),
        )
        .await["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    let uid = c
        .ok(&format!("/api/2.0/pipelines/{pid}/updates"), json!({}))
        .await["update_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.emu.advance_clock(Duration::from_secs(3600));
    assert_eq!(
        c.ok_get(&format!("/api/2.0/pipelines/{pid}/updates/{uid}"))
            .await["update"]["state"],
        "QUEUED"
    );
    let job = c
        .ok(
            "/api/2.2/jobs/create",
            json!({"tasks": [{"task_key": "a", "notebook_task": {"notebook_path": "/Shared/nb"}}]}),
        )
        .await["job_id"]
        .clone();
    let run = c.ok("/api/2.2/jobs/run-now", json!({"job_id": job})).await["run_id"].clone();
    assert_eq!(
        c.ok_get(&format!("/api/2.2/jobs/runs/get?run_id={run}"))
            .await["state"]["life_cycle_state"],
        "PENDING"
    );
}
