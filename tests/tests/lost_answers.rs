//! Creates whose answer is lost after the service made the object — a 500, 502, 503 or 504,
//! a dropped connection or an answer slower than the HTTP timeout, for every kind — never
//! leave a duplicate or an orphan: the next apply (or the same one) finds the object it made,
//! and destroy removes everything.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{
    Serve, config, every_kind_and_runnables, every_kind_objects, objects, served as bf,
    served_ok as bf_ok,
};
use serde_json::{Value, json};

/// Each create path, and how many calls the configuration makes there: one per object it
/// makes, or `None` for an upsert that may be repeated.
const CREATES: &[(&str, Option<usize>)] = &[
    ("/api/2.1/unity-catalog/catalogs", Some(1)),
    ("/api/2.1/unity-catalog/schemas", Some(1)),
    ("/api/2.1/unity-catalog/volumes", Some(1)),
    ("/api/2.1/unity-catalog/connections", Some(1)),
    ("/api/2.0/secrets/scopes/create", Some(1)),
    // Puts the value whether or not the key exists; a value cannot be read back, so a put
    // whose answer was lost is simply made again.
    ("/api/2.0/secrets/put", None),
    // The notebook and the workspace file, imported with overwrite: safe to repeat, so a
    // lost answer is simply sent again.
    ("/api/2.0/workspace/import", None),
    ("/api/2.0/pipelines", Some(1)),
    ("/api/2.[12]/jobs/create", Some(1)),
];

fn jobs_and_pipelines(dump: &Value) -> (usize, usize) {
    let n = |k: &str| dump[k].as_object().map(|m| m.len()).unwrap_or(0);
    (n("jobs"), n("pipelines"))
}

/// Loses the answer of each create once with `lost` (fault fields), applies until complete
/// (a lost answer may fail one apply, never two), and checks: every fault fired, one job and
/// one pipeline, everything in state, the next plan empty, destroy leaves nothing.
///
/// With `sent_once`, also that no create was sent twice: a lost answer is resolved by looking
/// the object up, never by repeating the call (a 503 is the exception: the service says it
/// did nothing, and the client repeats it).
fn each_create_lost_once(label: &str, lost: Value, provider: &str, sent_once: bool) {
    let configuration = every_kind_and_runnables(label).replace(
        "provider \"databricks\" {\n  host = var.host\n}",
        &format!("provider \"databricks\" {{\n  host = var.host\n{provider}}}"),
    );
    assert!(configuration.contains(provider), "{label}: provider block");
    let dir = config(&[("main.bf.hcl", &configuration)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    for (p, _) in CREATES {
        let mut fault = json!({"method": "POST", "path": p, "times": 1, "after_side_effect": true});
        fault
            .as_object_mut()
            .unwrap()
            .extend(lost.as_object().unwrap().clone());
        serve.ok("POST", "/__emulator/faults", Some(fault));
    }
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
        outputs.push(format!("{out}\n{err}"));
        if code == 0 {
            break;
        }
    }
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(
        code,
        0,
        "{label}: not converged\n{out}\n{err}\n{}",
        outputs.join("\n----\n")
    );
    let faults = serve.ok("GET", "/__emulator/faults", None);
    for f in faults["faults"].as_array().unwrap() {
        assert_eq!(f["fired"], 1, "{label}: every answer was lost once: {f}");
    }
    let dump = serve.dump();
    assert_eq!(
        jobs_and_pipelines(&dump),
        (1, 1),
        "{label}: one job and one pipeline\n{}",
        outputs.join("\n----\n")
    );
    if sent_once {
        let sent = |method: &str, p: &str| {
            let log = serve.ok(
                "GET",
                &format!("/__emulator/requests?method={method}&path={p}"),
                None,
            );
            log["requests"].as_array().unwrap().len()
        };
        let mut resent: Vec<String> = CREATES
            .iter()
            .filter_map(|(p, made)| Some((p, (*made)?)))
            .map(|(p, made)| (p, made, sent("POST", p)))
            .filter(|(_, made, n)| n != made)
            .map(|(p, made, n)| format!("{p}: {n} calls for {made}"))
            .collect();
        let deleted = sent("POST", "/api/2.[12]/jobs/delete");
        if deleted > 0 {
            resent.push(format!("{deleted} duplicate jobs made and deleted"));
        }
        assert_eq!(resent, Vec::<String>::new(), "{label}: creates sent again");
    }
    // Named objects exist once each (a duplicate would have failed its create), and all are
    // managed: the 9 of every kind, plus the pipeline and the job.
    assert_eq!(objects(&dump), every_kind_objects(label), "{label}");
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        state["resources"].as_array().unwrap().len(),
        11,
        "{label}: {state}"
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    let dump = serve.dump();
    assert_eq!(objects(&dump), Vec::<String>::new(), "{label}");
    assert_eq!(jobs_and_pipelines(&dump), (0, 0), "{label}");
}

#[test]
fn a_create_whose_answer_is_lost_with_a_server_error_leaves_no_duplicate_and_no_orphan() {
    for status in [500, 502, 503, 504] {
        each_create_lost_once(
            &format!("lost{status}"),
            json!({"status": status}),
            "",
            status != 503,
        );
    }
}

/// The connection closes with no answer after the object was made: the client must not send
/// the create again (a second job, the first an orphan) but let the engine look for it.
#[test]
fn a_create_whose_connection_is_dropped_leaves_no_duplicate_and_no_orphan() {
    each_create_lost_once("lostdrop", json!({"drop": true}), "", true);
}

/// The answer comes after the client's HTTP timeout (1 s here, the answer 2 s late).
#[test]
fn a_create_that_times_out_leaves_no_duplicate_and_no_orphan() {
    each_create_lost_once(
        "losttimeout",
        json!({"delay_ms": 2000}),
        "  http_timeout_seconds = 1\n",
        true,
    );
}

/// Half the deletes' answers are lost to a dropped connection after the workspace deleted
/// the object: a delete is safe to repeat, so the client sends it again, meets "not found",
/// counts the object deleted, and destroy finishes in one run.
#[test]
fn a_delete_whose_connection_is_dropped_is_found_done() {
    let label = "lostdelete";
    let dir = config(&[("main.bf.hcl", &every_kind_and_runnables(label))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    for (method, path) in [("DELETE", ".*"), ("POST", ".*/delete")] {
        serve.ok(
            "POST",
            "/__emulator/faults",
            Some(json!({"method": method, "path": path, "drop": true, "after_side_effect": true, "times": 0, "probability": 0.5, "seed": 7})),
        );
    }
    let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let dump = serve.dump();
    assert_eq!(objects(&dump), Vec::<String>::new());
    assert_eq!(jobs_and_pipelines(&dump), (0, 0));
    let faults = serve.ok("GET", "/__emulator/faults", None);
    for f in faults["faults"].as_array().unwrap() {
        assert!(f["fired"].as_u64().unwrap() >= 2, "deletes were lost: {f}");
    }
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["resources"], json!([]), "{state}");
}

/// An sdp-meta onboarding: its create uploads several files, any of which can lose its answer.
const ONBOARDING: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_catalog" "c" {
  name          = "lo_sdp_cat"
  force_destroy = true
}
resource "databricks_schema" "s" {
  catalog_name  = databricks_catalog.c.name
  name          = "raw"
  force_destroy = true
}
resource "databricks_volume" "conf" {
  catalog_name = databricks_schema.s.catalog_name
  schema_name  = databricks_schema.s.name
  name         = "conf"
  volume_type  = "MANAGED"
}
resource "sdp_meta_flow" "t" {
  data_flow_id    = "1"
  data_flow_group = "g1"
  source {
    format = "delta"
    table  = "${databricks_catalog.c.name}.raw.src"
  }
  bronze {
    database = "${databricks_catalog.c.name}.${databricks_schema.s.name}"
    table    = "orders"
  }
}
resource "sdp_meta_onboarding" "o" {
  volume_path = databricks_volume.conf.volume_path
  env         = "dev"
  flows       = [sdp_meta_flow.t]
  database    = "${databricks_catalog.c.name}.${databricks_schema.s.name}"
}
"#;

#[test]
fn an_onboarding_upload_whose_answer_is_lost_is_found_by_its_files() {
    let dir = config(&[("main.bf.hcl", ONBOARDING)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"method": "PUT", "path": "/api/2.0/fs/files/Volumes/lo_sdp_cat/raw/conf/.*", "status": 500, "times": 1, "after_side_effect": true})),
    );
    // The apply that lost the answer finds what it uploaded and records it, so a destroy
    // run now (instead of another apply) removes those files too.
    let (_, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    let outputs = vec![format!("{out}\n{err}")];
    let f = serve.ok("GET", "/__emulator/faults", None);
    assert_eq!(f["faults"][0]["fired"], 1, "{f}");
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    let onboardings = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["type"] == "sdp_meta_onboarding")
        .count();
    assert_eq!(onboardings, 1, "{outputs:#?}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(
        code, 0,
        "plan after the applies\n{out}\n{err}\n{outputs:#?}"
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}
