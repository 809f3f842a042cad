//! The brickform process killed (SIGKILL) at random points of an apply against
//! `brickform local serve` in a separate process, then apply run again: no orphan, no
//! duplicate, and the next plan is empty.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{
    Rng, Serve, bin, config, every_kind, every_kind_and_runnables, every_kind_objects, objects, run,
};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

const TOKEN: (&str, &str) = ("DATABRICKS_TOKEN", "e2e-token");

fn bf(d: &Path, serve: &Serve, args: &[&str]) -> (i32, String, String) {
    let host = format!("host={}", serve.url);
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--var", &host]);
    run(d, &a, &[TOKEN])
}

/// Starts `apply` and kills it with SIGKILL after `delay` (if it has not finished).
/// Returns whether it was killed before it ended.
fn apply_killed_after(d: &Path, serve: &Serve, delay: Duration) -> bool {
    let deadline = Instant::now() + delay;
    apply_killed_when(d, serve, || Instant::now() >= deadline)
}

/// Starts `apply` and kills it with SIGKILL as soon as `now` holds (if it has not finished).
fn apply_killed_when(d: &Path, serve: &Serve, now: impl FnMut() -> bool) -> bool {
    killed_when(d, serve, "apply", now)
}

/// Starts `command` (`apply` or `destroy`) and kills it with SIGKILL as soon as `now`
/// holds (if it has not finished).
fn killed_when(d: &Path, serve: &Serve, command: &str, mut now: impl FnMut() -> bool) -> bool {
    let mut child = std::process::Command::new(bin())
        .args(["-C"])
        .arg(d)
        .args([command, "--auto-approve", "--var"])
        .arg(format!("host={}", serve.url))
        .env(TOKEN.0, TOKEN.1)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if now() {
            child.kill().unwrap();
            child.wait().unwrap();
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every object of the workspace is one the state knows (by id), and no name is made twice.
fn check_no_orphan(d: &Path, dump: &Value, round: usize) {
    let text = std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap();
    let state: Value = serde_json::from_str(&text).unwrap();
    let ids: Vec<String> = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect();
    for o in objects(dump) {
        let (_, id) = o.split_once(':').unwrap();
        // A secret scope's secrets are the secret resource's `SCOPE|KEY`.
        assert!(
            ids.iter().any(|i| i == id),
            "round {round}: {o} is in the workspace but not in state {ids:?}"
        );
    }
    // The workspace keys objects by name, so a duplicate would be a second name for the
    // same thing: check catalogs and schemas by their full names, case-insensitively.
    for kind in ["catalogs", "schemas", "volumes", "connections"] {
        let mut names: Vec<String> = dump[kind]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.to_lowercase())
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "round {round}: duplicate {kind}");
    }
}

#[test]
fn apply_killed_at_random_points_then_run_again_leaves_no_orphan_or_duplicate() {
    let dir = config(&[("main.bf.hcl", &every_kind("crash"))]);
    let d = dir.path();
    // 30 ms a request, so an apply of the nine objects takes long enough to be cut.
    // Slow enough that a kill at a random moment lands inside the apply.
    let serve = Serve::start(&d.join(".brickform/local"), &["--latency-ms", "120"]);
    let mut rng = Rng::new(0x00c0_ffee);
    let mut killed = 0;
    for round in 0..6 {
        // Odd rounds end with a destroy, so the next one creates everything; even rounds
        // change the configuration, so the next one is cut in the middle of updates.
        let delay = Duration::from_millis(rng.range(60, 900));
        if apply_killed_after(d, &serve, delay) {
            killed += 1;
        }
        // Whatever the cut apply made must be adopted, not made again or lost.
        let dump = serve.dump();
        let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
        assert_eq!(
            code, 0,
            "round {round} (killed after {delay:?}): apply again\n{out}\n{err}"
        );
        let after = serve.dump();
        assert_eq!(
            objects(&after),
            every_kind_objects("crash"),
            "round {round}: exactly the configured objects"
        );
        check_no_orphan(d, &after, round);
        // A new catalog's `default` schema is the service's: a create cut after the catalog
        // was made is finished by removing it, as an uncut one is.
        let made_by_service = |o: &String| o == "schema:crash_cat.default";
        for o in objects(&dump).into_iter().filter(|o| !made_by_service(o)) {
            assert!(
                objects(&after).contains(&o),
                "round {round}: {o} existed after the kill and is gone"
            );
        }
        let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
        assert_eq!(code, 0, "round {round}: plan not empty\n{out}\n{err}");
        if round % 2 == 1 {
            let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
            assert_eq!(code, 0, "{out}\n{err}");
            assert_eq!(objects(&serve.dump()), Vec::<String>::new());
        } else {
            // Start the next round with something to change: a comment and the file.
            let text = every_kind("crash")
                .replace("comment = \"one\"", &format!("comment = \"round {round}\""))
                .replace("1,a", &format!("{round},r"));
            std::fs::write(d.join("main.bf.hcl"), text).unwrap();
        }
    }
    assert!(killed >= 3, "only {killed} of 6 applies were cut short");
}

/// How many kill rounds the kill-then-destroy test runs: a few in CI, many more from
/// scripts/long-generated (`BRICKFORM_KILL_ROUNDS`).
fn kill_rounds() -> usize {
    std::env::var("BRICKFORM_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
}

#[test]
fn apply_killed_at_random_points_then_destroy_leaves_nothing() {
    let rounds = kill_rounds();
    // Jobs and pipelines too: their creates are found again by ownership tag, and a
    // job's create is followed by its read-back.
    let dir = config(&[("main.bf.hcl", &every_kind_and_runnables("kd"))]);
    let d = dir.path();
    // Slow enough that a kill at a random moment lands inside the apply, between any two
    // calls of it (a catalog's create and the removal of its `default` schema among them).
    let serve = Serve::start(&d.join(".brickform/local"), &["--latency-ms", "60"]);
    // The kills are drawn within the time an apply that is not cut short takes here, timed
    // first: a fixed range would land more of them after the apply's end the faster this
    // machine, or the apply, is.
    let started = Instant::now();
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "the apply timed\n{out}\n{err}");
    let span = started.elapsed().as_millis() as u64;
    let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "the destroy after the apply timed\n{out}\n{err}");
    let mut rng = Rng::new(0x0bad_cafe);
    let (mut killed, mut destroyed_clean) = (0, 0);
    for round in 0..rounds {
        let delay = Duration::from_millis(rng.range(20, span.max(40)));
        if apply_killed_after(d, &serve, delay) {
            killed += 1;
        }
        // Half the rounds go straight to destroy, half apply again first.
        if round % 2 == 1 {
            let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
            assert_eq!(
                code, 0,
                "round {round} (killed after {delay:?}): apply\n{out}\n{err}"
            );
            check_no_orphan(d, &serve.dump(), round);
        }
        let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
        assert_eq!(
            code, 0,
            "round {round} (killed after {delay:?}): destroy\n{out}\n{err}"
        );
        let dump = serve.dump();
        assert_eq!(objects(&dump), Vec::<String>::new(), "round {round}: {out}");
        for k in ["jobs", "pipelines"] {
            let n = dump[k].as_object().map_or(0, |m| m.len());
            assert_eq!(n, 0, "round {round}: {n} {k} left\n{out}");
        }
        destroyed_clean += 1;
    }
    eprintln!(
        "{killed} of {rounds} applies killed; {destroyed_clean} of {rounds} destroys left nothing"
    );
    assert!(
        killed * 2 >= rounds,
        "only {killed} of {rounds} applies were cut short"
    );
}

/// A destroy killed while the pipelines it deleted are still going (the service reads them
/// DELETING for a while): the next apply finishes those deletes (waits for them to go,
/// removes the gateway's staging volume) and makes new pipelines, so the job it makes
/// again runs a pipeline that exists, not one that is disappearing.
#[test]
fn a_destroy_killed_while_its_pipelines_go_is_finished_by_the_next_apply() {
    let dir = config(&[(
        "main.bf.hcl",
        r#"variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_catalog" "c" {
  name = "goingcat"
}
resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "land"
}
resource "databricks_connection" "src" {
  name            = "going_src"
  connection_type = "POSTGRESQL"
  options = {
    host     = "db.example.com"
    port     = "5432"
    user     = "app"
    password = "pw"
  }
}
resource "databricks_ingestion_gateway" "gw" {
  name                    = "going_gw"
  connection_name         = databricks_connection.src.name
  gateway_storage_catalog = databricks_catalog.c.name
  gateway_storage_schema  = databricks_schema.s.name
}
resource "databricks_pipeline" "p" {
  name       = "going_p"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = true
  library {
    notebook { path = "/Shared/going" }
  }
}
resource "databricks_job" "j" {
  name = "going_j"
  task {
    task_key = "t"
    pipeline_task { pipeline_id = databricks_pipeline.p.id }
  }
}
"#,
    )]);
    let d = dir.path();
    // Each pipeline reads DELETING for 3 s after its delete is accepted.
    let serve = Serve::start(&d.join(".brickform/local"), &["--update-step-ms", "3000"]);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let staging: Vec<String> = serve.dump()["volumes"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|v| v.contains("__databricks_ingestion_gateway_staging_data"))
        .cloned()
        .collect();
    assert_eq!(staging.len(), 1, "{staging:?}");

    // Killed once both pipelines' deletes were sent: both are going, and the log holds
    // their deletes as intents without results.
    let deletes = || {
        let log = serve.ok(
            "GET",
            "/__emulator/requests?method=DELETE&path=/api/2.0/pipelines/.*",
            None,
        );
        log["requests"].as_array().unwrap().len()
    };
    let killed = killed_when(d, &serve, "destroy", || deletes() >= 2);
    assert!(killed, "the destroy ended before the kill");
    let states = |serve: &Serve| -> Vec<String> {
        let (_, list) = serve.call("GET", "/api/2.0/pipelines", None);
        list["statuses"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|p| {
                format!(
                    "{} {}",
                    p["name"].as_str().unwrap(),
                    p["state"].as_str().unwrap()
                )
            })
            .collect()
    };
    let going = states(&serve);
    assert!(
        going.iter().filter(|s| s.ends_with(" DELETING")).count() == 2,
        "{going:?}"
    );

    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    for address in ["databricks_pipeline.p", "databricks_ingestion_gateway.gw"] {
        assert!(
            err.contains(&format!("{address}: the interrupted delete completed")),
            "{err}"
        );
    }
    // The old gateway's staging volume went with it; the new gateway has its own.
    let volumes = serve.dump()["volumes"].clone();
    assert!(volumes.get(&staging[0]).is_none(), "{volumes}");
    // Nothing is going any more, and the job runs the pipeline that exists.
    let now = states(&serve);
    assert!(now.iter().all(|s| !s.contains("DELETING")), "{now:?}");
    let (_, jobs) = serve.call("GET", "/api/2.2/jobs/list?expand_tasks=true", None);
    let pipeline_id = jobs["jobs"][0]["settings"]["tasks"][0]["pipeline_task"]["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, p) = serve.call("GET", &format!("/api/2.0/pipelines/{pipeline_id}"), None);
    assert_eq!(status, 200, "{p}");
    assert_eq!(p["state"], "IDLE", "{p}");

    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

#[test]
fn a_kill_between_a_catalogs_create_and_the_removal_of_its_default_schema_is_finished_by_the_next_run()
 {
    let dir = config(&[(
        "main.bf.hcl",
        r#"variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_catalog" "c" {
  name = "killcat"
}
"#,
    )]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    // The default schema's removal is answered 503 for ever: the apply keeps retrying it,
    // and is killed there, with the catalog made and its `default` schema still in it.
    let default = "/api/2.1/unity-catalog/schemas/killcat.default";
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(serde_json::json!({"method": "DELETE", "path": default, "status": 503, "times": 0})),
    );
    let killed = apply_killed_when(d, &serve, || {
        let log = serve.ok(
            "GET",
            &format!("/__emulator/requests?method=DELETE&path={default}"),
            None,
        );
        !log["requests"].as_array().unwrap().is_empty()
    });
    assert!(killed, "the apply ended before the kill");
    serve.ok("DELETE", "/__emulator/faults", None);
    assert!(serve.dump()["schemas"].get("killcat.default").is_some());

    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("Recovered: databricks_catalog.c: adopted killcat"),
        "{err}"
    );
    assert!(
        serve.dump()["schemas"].get("killcat.default").is_none(),
        "recovery finished the create"
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

#[test]
fn two_runs_after_a_forced_unlock_never_leave_an_unloadable_state() {
    let dir = config(&[("main.bf.hcl", &every_kind("twice"))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--latency-ms", "100"]);
    let mut first = std::process::Command::new(bin())
        .arg("-C")
        .arg(d)
        .args(["apply", "--auto-approve", "--var"])
        .arg(format!("host={}", serve.url))
        .env(TOKEN.0, TOKEN.1)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Once the first run is under way, its lock is forced away (it still runs) and a
    // second run goes ahead beside it.
    let lock = d.join(".brickform/state/default.lock");
    let started = Instant::now();
    let id = loop {
        let holder = std::fs::read_to_string(&lock).unwrap_or_default();
        if let Ok(v) = serde_json::from_str::<Value>(&holder)
            && let Some(id) = v["id"].as_str()
        {
            break id.to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no lock");
        std::thread::sleep(Duration::from_millis(10));
    };
    let (code, _, err) = run(d, &["force-unlock", &id], &[TOKEN]);
    assert_eq!(code, 1, "a running holder's lock stays: {err}");
    let (code, out, err) = run(d, &["force-unlock", "--even-if-running", &id], &[TOKEN]);
    assert_eq!(code, 0, "{out}\n{err}");
    let _ = bf(d, &serve, &["apply", "--auto-approve"]);
    first.wait().unwrap();
    // Whatever the two did, the state loads, and the next runs converge. Objects one run
    // made while the other emptied the log are not provably this state's: the plan refuses
    // them with their import command, which is run as a user would.
    for _ in 0..12 {
        let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
        if code == 0 {
            break;
        }
        assert!(!err.contains("write-ahead log"), "{out}\n{err}");
        let import = err
            .split("`brickform import ")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_else(|| {
                panic!("neither converged nor refused with an import:\n{out}\n{err}")
            })
            .to_string();
        let words: Vec<&str> = import.split_whitespace().collect();
        bf_ok_import(d, &serve, words[0], words[1]);
    }
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = bf(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

fn bf_ok_import(d: &Path, serve: &Serve, address: &str, id: &str) {
    let (code, out, err) = bf(d, serve, &["import", address, id]);
    assert_eq!(code, 0, "import {address} {id}\n{out}\n{err}");
}
