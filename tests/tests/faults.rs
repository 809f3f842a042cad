//! A configuration with every kind against `brickform local serve` that fails requests:
//! 20% answered 429 or 503, and creates whose response is lost after the object was made.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, every_kind, every_kind_objects, objects, run};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};

/// How often the faults fired, and how many API requests there were.
fn fired(serve: &Serve) -> (u64, usize) {
    let f = serve.ok("GET", "/__emulator/faults", None);
    let n = f["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fired"].as_u64().unwrap())
        .sum();
    let log = serve.ok("GET", "/__emulator/requests?path=/api/.*", None);
    (n, log["requests"].as_array().unwrap().len())
}

#[test]
fn apply_and_destroy_succeed_when_a_fifth_of_requests_fail_with_429_or_503() {
    let dir = config(&[("main.bf.hcl", &every_kind("flaky"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    // About 10% 429 and 10% 503 (0.9 × 0.111 of what the first lets through) on every API
    // path, for ever; seeded so each run sees the same sequence.
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"path": "/api/.*", "status": 429, "times": 0, "probability": 0.1, "seed": 11, "retry_after": 0})),
    );
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(
            json!({"path": "/api/.*", "status": 503, "times": 0, "probability": 0.111, "seed": 12}),
        ),
    );

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Apply complete! Resources: 9 added"), "{out}");
    assert_eq!(objects(&serve.dump()), every_kind_objects("flaky"));
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("9 destroyed, 0 left behind."), "{out}");
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());

    let (n, requests) = fired(&serve);
    let share = n as f64 / requests as f64;
    assert!(
        (0.1..0.3).contains(&share),
        "{n} of {requests} requests failed: the faults did not fire as set up"
    );
}

/// Each create of the given paths is carried out once and its answer replaced by a 503,
/// as if the connection dropped: the client retries and meets the object it made.
fn lose_create_responses(serve: &Serve, paths: &[&str]) {
    for p in paths {
        serve.ok(
            "POST",
            "/__emulator/faults",
            Some(json!({"method": "POST", "path": p, "status": 503, "times": 1, "after_side_effect": true})),
        );
    }
}

#[test]
fn a_create_whose_response_is_lost_is_adopted_without_a_duplicate() {
    let dir = config(&[("main.bf.hcl", &every_kind("lost"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    lose_create_responses(
        &serve,
        &[
            "/api/2.1/unity-catalog/catalogs",
            "/api/2.1/unity-catalog/schemas",
            "/api/2.1/unity-catalog/volumes",
            "/api/2.1/unity-catalog/connections",
            "/api/2.0/secrets/scopes/create",
            "/api/2.0/secrets/put",
            "/api/2.0/workspace/import",
        ],
    );

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Apply complete! Resources: 9 added"), "{out}");
    let faults = serve.ok("GET", "/__emulator/faults", None);
    for f in faults["faults"].as_array().unwrap() {
        assert_eq!(f["fired"], 1, "every lost response happened: {f}");
    }
    // Each object once, all of them in state, and nothing left to do.
    let dump = serve.dump();
    assert_eq!(objects(&dump), every_kind_objects("lost"));
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["resources"].as_array().unwrap().len(), 9, "{state}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

/// A catalog, a schema and a volume; `volume` is the volume block's extra lines.
fn volume_config(volume: &str) -> String {
    format!(
        r#"variable "host" {{
  type = string
}}

provider "databricks" {{
  host                  = var.host
  retry_timeout_seconds = 2
}}

resource "databricks_catalog" "c" {{
  name = "refused"
}}

resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}}

resource "databricks_volume" "v" {{
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s.name
  name         = "landing"
{volume}
}}
"#
    )
}

#[test]
fn a_configuration_the_service_refuses_is_reported_once_at_its_block_with_what_to_change() {
    // An external volume needs a storage location: validate cannot know that the service
    // insists, the service answers 400 INVALID_PARAMETER_VALUE.
    let dir = config(&[(
        "main.bf.hcl",
        &volume_config("  volume_type  = \"EXTERNAL\""),
    )]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let message = "storage_location (required for EXTERNAL volumes)";
    assert_eq!(
        err.matches(message).count(),
        1,
        "the service's message is printed once:\n{err}"
    );
    assert!(
        err.contains("× databricks_volume.v: INVALID_PARAMETER_VALUE"),
        "{err}"
    );
    assert!(
        err.contains("at main.bf.hcl:19:1"),
        "located at the volume's block:\n{err}"
    );
    assert!(
        err.contains("the service rejected the configuration of databricks_volume.v: change it"),
        "{err}"
    );
    assert!(
        err.contains("databricks_volume.v: Creation failed"),
        "{err}"
    );
    assert!(
        !out.contains("run the command again to finish"),
        "running it again cannot fix a configuration:\n{out}"
    );
    assert!(
        out.contains("State was saved: fix what the errors above say, then run the command again."),
        "{out}"
    );
}

#[test]
fn a_failure_that_may_be_temporary_still_says_to_run_the_command_again() {
    let dir = config(&[(
        "main.bf.hcl",
        &volume_config("  volume_type  = \"MANAGED\""),
    )]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"method": "POST", "path": "/api/2.1/unity-catalog/volumes", "status": 503, "times": 0})),
    );
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("a temporary failure: run the command again"),
        "{err}"
    );
    assert!(
        out.contains("State was saved: run the command again to finish."),
        "{out}"
    );
}

/// Two catalogs and a schema, replaced with `create_before_destroy` when it moves from one
/// catalog to the other.
fn deposed_config(catalog: &str) -> String {
    format!(
        r#"variable "host" {{
  type = string
}}

provider "databricks" {{
  host                  = var.host
  retry_timeout_seconds = 2
}}

resource "databricks_catalog" "one" {{
  name = "one"
}}

resource "databricks_catalog" "two" {{
  name = "two"
}}

resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.{catalog}.name
  name         = "raw"
  lifecycle {{
    create_before_destroy = true
  }}
}}
"#
    )
}

#[test]
fn the_old_copy_of_a_create_before_destroy_whose_delete_failed_is_deleted_by_the_next_apply() {
    let dir = config(&[("main.bf.hcl", &deposed_config("one"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);

    // The new copy is made; deleting the old one is refused once.
    std::fs::write(d.join("main.bf.hcl"), deposed_config("two")).unwrap();
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"method": "DELETE", "path": "/api/2.1/unity-catalog/schemas/.*", "status": 403, "times": 1})),
    );
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let schemas = |serve: &Serve| -> Vec<String> {
        objects(&serve.dump())
            .into_iter()
            .filter(|o| o.starts_with("schema:") && o.ends_with(".raw"))
            .collect()
    };
    assert_eq!(schemas(&serve).len(), 2, "{:?}", schemas(&serve));

    // The state still knows the old copy: the plan deletes it, under its own id.
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["deposed"][0]["id"], "one.raw", "{state}");
    assert_eq!(state["resources"].as_array().unwrap().len(), 3, "{state}");
    let out = bf_ok(d, &serve, &["plan", "-no-color"]);
    assert!(
        out.contains("# databricks_schema.s (deposed object \"one.raw\") will be destroyed"),
        "{out}"
    );
    assert!(out.contains("0 to add, 0 to change, 1 to destroy"), "{out}");
    let json = bf_ok(d, &serve, &["plan", "--json"]);
    let plan: Value = serde_json::from_str(&json).unwrap();
    let deposed: Vec<&Value> = plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("deposed").is_some())
        .collect();
    assert_eq!(deposed.len(), 1, "{json}");
    assert_eq!(deposed[0]["deposed"], "one.raw");
    assert_eq!(deposed[0]["action_reason"], "delete_because_deposed");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("1 destroyed"), "{out}");
    assert_eq!(schemas(&serve), ["schema:two.raw"]);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let state = std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap();
    assert!(!state.contains("deposed"), "{state}");
}

#[test]
fn refresh_and_destroy_finish_when_a_fifth_of_reads_fail_with_500_502_or_504() {
    let dir = config(&[("main.bf.hcl", &every_kind("reads"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // About 7% each of 500, 502 and 504 on every read, for ever; seeded.
    for (status, seed, p) in [(500, 21, 0.07), (502, 22, 0.075), (504, 23, 0.081)] {
        serve.ok(
            "POST",
            "/__emulator/faults",
            Some(json!({"method": "GET", "path": "/api/.*", "status": status, "times": 0, "probability": p, "seed": seed})),
        );
    }
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("9 destroyed, 0 left behind."), "{out}");
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
    let (n, _) = fired(&serve);
    let reads = serve.ok("GET", "/__emulator/requests?path=/api/.*&method=GET", None);
    let reads = reads["requests"].as_array().unwrap().len();
    let share = n as f64 / reads as f64;
    assert!(
        (0.1..0.3).contains(&share),
        "{n} of {reads} reads failed: the faults did not fire as set up"
    );
}

#[test]
fn a_host_that_refuses_connections_is_reported_once_with_what_to_check() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = config(&[(
        "main.bf.hcl",
        r#"variable "host" {}
provider "databricks" {
  host                  = var.host
  retry_timeout_seconds = 2
}
data "databricks_current_user" "me" {}
resource "databricks_catalog" "c" {
  name    = "x"
  comment = data.databricks_current_user.me.user_name
}
"#,
    )]);
    let host = format!("host=http://127.0.0.1:{port}");
    let (code, out, err) = run(
        dir.path(),
        &["plan", "--var", &host],
        &[("DATABRICKS_TOKEN", "e2e-token")],
    );
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(
        err.matches("refused the connection; trying again").count(),
        1,
        "the wait is said once:\n{err}"
    );
    assert!(
        err.contains("nothing accepts connections at http://127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("check the workspace URL"), "{err}");
    // Each error names the cause; none follows from another (a null value).
    let errors = err.matches('×').count();
    assert!(errors >= 1, "{err}");
    assert_eq!(
        err.matches("nothing accepts connections").count(),
        errors,
        "every error says why:\n{err}"
    );
    assert!(!err.contains("null value"), "{err}");
}

#[test]
fn a_create_that_fails_after_making_the_object_records_it_and_reports_the_failure() {
    let dir = config(&[(
        "main.bf.hcl",
        r#"variable "host" {}
provider "databricks" {
  host                  = var.host
  retry_timeout_seconds = 2
}
resource "databricks_catalog" "c" {
  name           = "halfway"
  isolation_mode = "ISOLATED"
}
"#,
    )]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    // The create call works; the call after it that sets isolation_mode is refused once.
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({"method": "PATCH", "path": "/api/2.1/unity-catalog/catalogs/.*", "status": 403, "times": 1})),
    );
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("PERMISSION_DENIED"), "{err}");
    // The catalog is this state's, not an orphan the next plan refuses.
    let state = std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap();
    assert!(state.contains("\"id\": \"halfway\""), "{state}");
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("1 changed"), "{out}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        serve.dump()["catalogs"]["halfway"]["isolation_mode"],
        "ISOLATED"
    );
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

/// `brickform run` whose run-now answer is lost after the service started the run: the
/// client's repeat carries the same idempotency token, so the service answers with the run
/// it started, and there is one run, not two.
#[test]
fn a_run_whose_answer_is_lost_starts_one_run() {
    let main = r#"
resource "databricks_job" "j" {
  name = "run-once"
  task {
    task_key = "t"
    condition_task {
      op    = "EQUAL_TO"
      left  = "1"
      right = "1"
    }
  }
}
"#;
    let main = format!("{}{main}", common::SERVED_PROVIDER);
    let dir = config(&[("main.bf.hcl", &main)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    lose_create_responses(&serve, &["/api/2.2/jobs/run-now"]);
    let out = bf_ok(d, &serve, &["run", "databricks_job.j", "--no-wait"]);
    assert!(out.contains("started run "), "{out}");
    let faults = serve.ok("GET", "/__emulator/faults", None);
    assert_eq!(faults["faults"][0]["fired"], 1, "{faults}");
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap();
    let job_id = state["resources"][0]["id"].as_str().unwrap().to_string();
    let runs = serve.ok(
        "GET",
        &format!("/api/2.2/jobs/runs/list?job_id={job_id}"),
        None,
    );
    assert_eq!(
        runs["runs"].as_array().map(Vec::len),
        Some(1),
        "one run: {runs}"
    );
}

/// Notebooks, workspace files, volume files, a folder, a job and permissions: what is
/// written with calls that are safe to repeat (imports with overwrite, `mkdirs`, uploads
/// with overwrite, `jobs/reset`, permissions PUTs, deletes). `version` changes every
/// content, the job's name and the permission levels, so a second apply updates each.
fn repeatable_writes_config(prefix: &str, version: u32) -> String {
    let level = if version == 1 { "CAN_READ" } else { "CAN_RUN" };
    let job_level = if version == 1 {
        "CAN_VIEW"
    } else {
        "CAN_MANAGE_RUN"
    };
    let mut files = String::new();
    for i in 0..3 {
        files.push_str(&format!(
            r#"
resource "databricks_notebook" "nb{i}" {{
  path           = "${{databricks_directory.d.path}}/nb{i}.py"
  content_base64 = base64encode("print({version}{i})\n")
}}

resource "databricks_workspace_file" "wf{i}" {{
  path           = "${{databricks_directory.d.path}}/conf{i}.json"
  content_base64 = base64encode("{{\"v\": {version}{i}}}")
}}

resource "databricks_file" "f{i}" {{
  path           = "${{databricks_volume.v.volume_path}}/in/{i}/data.csv"
  content_base64 = base64encode("id,v\n{i},{version}\n")
}}
"#
        ));
    }
    format!(
        r#"variable "host" {{
  type = string
}}

provider "databricks" {{
  host                 = var.host
  http_timeout_seconds = 1
}}

resource "databricks_catalog" "c" {{
  name          = "{prefix}_cat"
  force_destroy = true
}}

resource "databricks_schema" "s" {{
  catalog_name  = databricks_catalog.c.name
  name          = "raw"
  force_destroy = true
}}

resource "databricks_volume" "v" {{
  catalog_name = databricks_schema.s.catalog_name
  schema_name  = databricks_schema.s.name
  name         = "landing"
  volume_type  = "MANAGED"
}}

resource "databricks_directory" "d" {{
  path = "/Shared/{prefix}"
}}
{files}
resource "databricks_job" "j" {{
  name = "{prefix}_job_v{version}"
  task {{
    task_key = "t"
    notebook_task {{
      notebook_path = databricks_notebook.nb0.path
    }}
  }}
}}

resource "databricks_permissions" "job" {{
  job_id = databricks_job.j.id
  access_control {{
    group_name       = "users"
    permission_level = "{job_level}"
  }}
}}

resource "databricks_permissions" "folder" {{
  directory_id = databricks_directory.d.object_id
  access_control {{
    group_name       = "users"
    permission_level = "{level}"
  }}
}}

resource "databricks_permissions" "notebook" {{
  notebook_path = databricks_notebook.nb1.path
  access_control {{
    group_name       = "users"
    permission_level = "{level}"
  }}
}}
"#
    )
}

/// The writes safe to repeat that [`repeatable_writes_config`] makes, by method.
const REPEATABLE_WRITES: &[(&str, &str)] = &[
    (
        "POST",
        r"/api/2\.[0-9]/(workspace/(mkdirs|import|delete)|jobs/(reset|delete))",
    ),
    ("PUT", r"/api/2\.0/(fs/.*|permissions/.*)"),
    ("DELETE", r"/api/2\.[0-9]/(fs/.*|unity-catalog/.*)"),
];

/// About a fifth of the writes that are safe to repeat fail, for ever: a 500, 502 or 504
/// before the write is carried out, or after it a 500, a dropped connection or an answer
/// later than the client's 1 s timeout (six faults of 3.7% each per method).
fn fail_a_fifth_of_repeatable_writes(serve: &Serve, seed: u64) {
    let kinds = [
        json!({"status": 500}),
        json!({"status": 502}),
        json!({"status": 504}),
        json!({"status": 500, "after_side_effect": true}),
        json!({"drop": true, "after_side_effect": true}),
        json!({"delay_ms": 1500, "after_side_effect": true}),
    ];
    let mut n = 0;
    for (method, path) in REPEATABLE_WRITES {
        for kind in &kinds {
            n += 1;
            let mut f = json!({"method": method, "path": path, "times": 0, "probability": 0.037, "seed": seed * 100 + n});
            f.as_object_mut()
                .unwrap()
                .extend(kind.as_object().unwrap().clone());
            serve.ok("POST", "/__emulator/faults", Some(f));
        }
    }
}

/// A query value percent-encoded (a path regex holds `|`, `\`, `[`).
fn encoded(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Apply, an apply that updates everything, and destroy, each under a fifth of its
/// repeatable writes failing: every command finishes the first time (the client sends those
/// writes again), and what is left is what was configured, then nothing.
#[test]
fn apply_update_and_destroy_finish_when_a_fifth_of_repeatable_writes_fail() {
    let mut needed_rerun = Vec::new();
    let mut not_converged = Vec::new();
    let mut commands = 0;
    let mut fired_total = 0;
    let mut writes_total = 0;
    for seed in [1u64, 2, 3] {
        let prefix = format!("rw{seed}");
        let dir = config(&[("main.bf.hcl", &repeatable_writes_config(&prefix, 1))]);
        let d = dir.path();
        let serve = Serve::start(&d.join(".brickform/local"), &[]);
        fail_a_fifth_of_repeatable_writes(&serve, seed);
        for (step, version, args) in [
            ("apply", 1, ["apply", "--auto-approve"]),
            ("update", 2, ["apply", "--auto-approve"]),
            ("destroy", 2, ["destroy", "--auto-approve"]),
        ] {
            std::fs::write(
                d.join("main.bf.hcl"),
                repeatable_writes_config(&prefix, version),
            )
            .unwrap();
            commands += 1;
            // A command that fails is run again (up to twice more) so the others can be
            // measured; any such re-run fails the test.
            let mut runs = Vec::new();
            for _ in 0..3 {
                let (code, out, err) = bf(d, &serve, &args);
                runs.push(format!("{out}\n{err}"));
                if code == 0 {
                    break;
                }
            }
            if runs.len() > 1 {
                needed_rerun.push(format!("seed {seed} {step}:\n{}", runs[0]));
            }
            if step != "destroy" {
                // Converged: nothing left to do.
                let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
                if code != 0 {
                    not_converged.push(format!("seed {seed} {step}:\n{out}\n{err}"));
                }
            }
        }
        let dump = serve.dump();
        let jobs = dump["jobs"].as_object().map_or(0, |j| j.len());
        if !objects(&dump).is_empty() || jobs > 0 {
            not_converged.push(format!(
                "seed {seed}: left after destroy: {:?}, {jobs} jobs",
                objects(&dump)
            ));
        }
        let faults = serve.ok("GET", "/__emulator/faults", None);
        fired_total += faults["faults"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["fired"].as_u64().unwrap())
            .sum::<u64>();
        for (method, path) in REPEATABLE_WRITES {
            let log = serve.ok(
                "GET",
                &format!(
                    "/__emulator/requests?method={method}&path={}",
                    encoded(path)
                ),
                None,
            );
            writes_total += log["requests"].as_array().unwrap().len();
        }
    }
    let share = fired_total as f64 / writes_total as f64;
    eprintln!(
        "{commands} commands, {} needed a re-run, {} unconverged; {fired_total} faults in {writes_total} repeatable writes",
        needed_rerun.len(),
        not_converged.len()
    );
    assert!(
        (0.1..0.3).contains(&share),
        "{fired_total} of {writes_total} repeatable writes failed: the faults did not fire as set up"
    );
    assert!(
        needed_rerun.is_empty() && not_converged.is_empty(),
        "{} of {commands} commands needed a re-run, {} ended unconverged ({fired_total} faults in {writes_total} writes):\n{}\n====\n{}",
        needed_rerun.len(),
        not_converged.len(),
        needed_rerun.join("\n----\n"),
        not_converged.join("\n----\n")
    );
}
