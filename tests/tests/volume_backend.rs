//! The `volume` state backend end to end: the binary against `brickform local serve` in
//! another process, the state, its log and its lock kept in a Unity Catalog volume through
//! the Files API. Two applies at once (one fails naming the holder, one waits with
//! `--lock-timeout`), an abandoned lock (force-unlock, expiry takeover, a killed apply), and
//! `state migrate` local → volume → local.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, bin, config, http_auth, run, texts};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "e2e-token";
/// Where the tests keep states: a directory in the volume `ops.bf.state`.
const VOLUME: &str = "/Volumes/ops/bf/state";

/// A served workspace with the volume that keeps the states.
fn serve(data: &Path) -> Serve {
    let s = Serve::start(data, &[]);
    s.ok(
        "POST",
        "/api/2.1/unity-catalog/catalogs",
        Some(json!({"name": "ops"})),
    );
    s.ok(
        "POST",
        "/api/2.1/unity-catalog/schemas",
        Some(json!({"catalog_name": "ops", "name": "bf"})),
    );
    s.ok(
        "POST",
        "/api/2.1/unity-catalog/volumes",
        Some(json!({"catalog_name": "ops", "schema_name": "bf", "name": "state", "volume_type": "MANAGED"})),
    );
    s
}

/// A configuration making a few objects named with `prefix`, its state in `backend`
/// (a whole `backend` block, or "" for the local backend).
fn lakehouse(prefix: &str, backend: &str) -> String {
    let brickform = if backend.is_empty() {
        String::new()
    } else {
        format!("brickform {{\n{backend}\n}}\n\n")
    };
    format!(
        r#"{brickform}variable "host" {{
  type = string
}}

provider "databricks" {{
  host = var.host
}}

resource "databricks_catalog" "c" {{
  name = "{prefix}_cat"
}}

resource "databricks_schema" "raw" {{
  catalog_name = databricks_catalog.c.name
  name         = "raw"
}}

resource "databricks_schema" "gold" {{
  catalog_name = databricks_catalog.c.name
  name         = "gold"
}}

resource "databricks_volume" "landing" {{
  catalog_name = databricks_schema.raw.catalog_name
  schema_name  = databricks_schema.raw.name
  name         = "landing"
  volume_type  = "MANAGED"
}}

resource "databricks_file" "f" {{
  path           = "${{databricks_volume.landing.volume_path}}/in/data.csv"
  content_base64 = base64encode("id\n1\n")
}}

resource "databricks_workspace_file" "wf" {{
  path           = "/Shared/{prefix}/conf.json"
  content_base64 = base64encode("{{}}")
}}
"#
    )
}

fn volume_backend(dir: &str, extra: &str) -> String {
    format!("  backend \"volume\" {{\n    path = \"{VOLUME}/{dir}\"\n{extra}  }}")
}

/// Runs the binary against `serve` (host from `BRICKFORM_VAR_host`, so state commands,
/// which take no `--var`, reach the volume too).
fn bf(d: &Path, serve: &Serve, args: &[&str]) -> (i32, String, String) {
    run(
        d,
        args,
        &[
            ("BRICKFORM_VAR_host", &serve.url),
            ("DATABRICKS_TOKEN", TOKEN),
        ],
    )
}

fn bf_ok(d: &Path, serve: &Serve, args: &[&str]) -> String {
    let (code, out, err) = bf(d, serve, args);
    assert_eq!(
        code, 0,
        "brickform {args:?}\nstdout:\n{out}\nstderr:\n{err}"
    );
    out
}

/// `brickform apply --auto-approve ARGS` in the background.
fn spawn_apply(d: &Path, serve: &Serve, args: &[&str]) -> Child {
    Command::new(bin())
        .arg("-C")
        .arg(d)
        .args(["apply", "--auto-approve"])
        .args(args)
        .env("BRICKFORM_VAR_host", &serve.url)
        .env("DATABRICKS_TOKEN", TOKEN)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_output(child: Child) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    let (o, e) = texts(&out);
    (out.status.code().unwrap_or(-1), o, e)
}

/// A file of the volume through the Files API: `None` when it does not exist.
fn volume_file(serve: &Serve, path: &str) -> Option<Vec<u8>> {
    let (status, body) = http_auth(
        "GET",
        &format!("{}/api/2.0/fs/files{path}", serve.url),
        None,
        "application/json",
        TOKEN,
    );
    match status {
        200 => Some(body),
        404 => None,
        s => panic!("GET {path}: {s} {}", String::from_utf8_lossy(&body)),
    }
}

fn put_volume_file(serve: &Serve, path: &str, bytes: &[u8]) {
    let (status, body) = http_auth(
        "PUT",
        &format!("{}/api/2.0/fs/files{path}?overwrite=true", serve.url),
        Some(bytes),
        "application/octet-stream",
        TOKEN,
    );
    assert!(
        status == 204 || status == 200,
        "PUT {path}: {status} {}",
        String::from_utf8_lossy(&body)
    );
}

/// The names of the files under `dir` in the served workspace.
fn files_under(serve: &Serve, dir: &str) -> Vec<String> {
    let dump = serve.dump();
    let mut out: Vec<String> = dump["files"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(p, o)| p.starts_with(&format!("{dir}/")) && o["kind"] == "file")
        .map(|(p, _)| p[dir.len() + 1..].to_string())
        .collect();
    out.sort();
    out
}

fn state_in_volume(serve: &Serve, dir: &str) -> Value {
    let bytes = volume_file(serve, &format!("{VOLUME}/{dir}/default.json")).expect("a state");
    serde_json::from_slice(&bytes).unwrap()
}

fn addresses(state: &Value) -> Vec<String> {
    let mut a: Vec<String> = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["address"].as_str().unwrap().to_string())
        .collect();
    a.sort();
    a
}

const ADDRESSES: [&str; 6] = [
    "databricks_catalog.c",
    "databricks_file.f",
    "databricks_schema.gold",
    "databricks_schema.raw",
    "databricks_volume.landing",
    "databricks_workspace_file.wf",
];

/// Waits until `path` exists in the volume (the lock of a starting apply), up to 20 s.
fn wait_for_file(serve: &Serve, path: &str, child: &mut Child) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(bytes) = volume_file(serve, path) {
            return bytes;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the apply ended ({status}) before {path} appeared");
        }
        assert!(Instant::now() < deadline, "{path} never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A lock object as a run that died `age` ago would have left it.
fn abandoned_lock(serve: &Serve, dir: &str, age: Duration) -> String {
    let id = "4d3c2b1a-0000-4000-8000-00000000dead";
    let created = std::time::SystemTime::now() - age;
    let secs = created
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let lock = json!({
        "id": id,
        "operation": "apply",
        "who": "ci@runner-7",
        "version": "0.1.0",
        "created": rfc3339(secs),
        "path": format!("{VOLUME}/{dir}/default.json"),
    });
    put_volume_file(
        serve,
        &format!("{VOLUME}/{dir}/default.lock"),
        lock.to_string().as_bytes(),
    );
    id.to_string()
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (civil-from-days, proleptic Gregorian).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[test]
fn apply_keeps_state_log_and_lock_in_the_volume_not_on_disk() {
    let ws = tempfile::tempdir().unwrap();
    let serve = serve(ws.path());
    let dir = config(&[("main.bf.hcl", &lakehouse("vb1", &volume_backend("one", "")))]);
    let d = dir.path();

    let out = bf_ok(d, &serve, &["init"]);
    assert!(out.contains(&format!("{VOLUME}/one")), "{out}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(
        !d.join(".brickform/state").exists(),
        "nothing of the state on local disk"
    );
    let state = state_in_volume(&serve, "one");
    assert_eq!(addresses(&state), ADDRESSES);
    // The log was emptied once the state was saved, and the lock released.
    assert_eq!(
        files_under(&serve, &format!("{VOLUME}/one")),
        ["default.json", "default.json.backup"]
    );

    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("No changes"), "{out}");
    let listed = bf_ok(d, &serve, &["state", "list"]);
    assert_eq!(listed.lines().collect::<Vec<_>>(), ADDRESSES);
    let env_list = bf_ok(d, &serve, &["env", "list"]);
    assert!(env_list.contains("* default"), "{env_list}");
    let pulled: Value = serde_json::from_str(&bf_ok(d, &serve, &["state", "pull"])).unwrap();
    assert_eq!(pulled, state_in_volume(&serve, "one"));
    bf_ok(d, &serve, &["state", "rm", "databricks_workspace_file.wf"]);
    assert_eq!(addresses(&state_in_volume(&serve, "one")).len(), 5);
    bf_ok(
        d,
        &serve,
        &[
            "import",
            "databricks_workspace_file.wf",
            "/Shared/vb1/conf.json",
        ],
    );
    // An imported file's content is unknown to the state until the next apply writes it.
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(addresses(&state_in_volume(&serve, "one")).is_empty());
    assert!(!d.join(".brickform/state").exists());
}

#[test]
fn two_applies_at_once_one_fails_naming_the_holder_and_one_waits() {
    let ws = tempfile::tempdir().unwrap();
    let serve = serve(ws.path());
    let dir = config(&[("main.bf.hcl", &lakehouse("vb2", &volume_backend("two", "")))]);
    let d = dir.path();
    // Slow enough that the first apply is still running when the others start.
    serve.ok(
        "POST",
        "/__emulator/latency",
        Some(json!({"fixed_ms": 100})),
    );

    let mut first = spawn_apply(d, &serve, &[]);
    let lock = wait_for_file(&serve, &format!("{VOLUME}/two/default.lock"), &mut first);
    let holder: Value = serde_json::from_slice(&lock).unwrap();
    let id = holder["id"].as_str().unwrap().to_string();
    assert_eq!(holder["operation"], "apply");

    // Without --lock-timeout: fails at once, naming who holds it and why.
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Error: the state of environment \"default\" is locked by")
            && err.contains("(operation apply, since ")
            && err.contains(&format!("id {id})"))
            && err.contains(holder["who"].as_str().unwrap()),
        "{err}"
    );
    assert!(err.contains("Error acquiring the state lock"), "{err}");
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first apply must still hold the lock for this test to mean anything"
    );

    // With --lock-timeout: waits for the first to finish, then finds nothing to do.
    let waiting = spawn_apply(d, &serve, &["--lock-timeout", "60s"]);
    let (code, out, err) = wait_output(first);
    assert_eq!(code, 0, "first apply\n{out}\n{err}");
    assert!(out.contains("6 added"), "{out}");
    let (code, out, err) = wait_output(waiting);
    assert_eq!(code, 0, "waiting apply\n{out}\n{err}");
    assert!(
        err.contains(&format!("is locked by {}", holder["who"].as_str().unwrap()))
            && err.contains("waiting up to 1m"),
        "it found the lock held and waited: {err}"
    );
    assert!(
        !out.contains("added"),
        "it saw the first one's state: {out}"
    );

    // The state is whole: every resource once, the serial moved forward, no lock left.
    let state = state_in_volume(&serve, "two");
    assert_eq!(addresses(&state), ADDRESSES);
    assert!(state["serial"].as_u64().unwrap() >= 2);
    assert!(volume_file(&serve, &format!("{VOLUME}/two/default.lock")).is_none());
    serve.ok("DELETE", "/__emulator/latency", None);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

#[test]
fn an_abandoned_lock_is_force_unlocked_or_taken_over_once_expired() {
    let ws = tempfile::tempdir().unwrap();
    let serve = serve(ws.path());
    let dir = config(&[(
        "main.bf.hcl",
        &lakehouse(
            "vb3",
            &volume_backend("three", "    lock_expiry_seconds = 3600\n"),
        ),
    )]);
    let d = dir.path();

    // Ten minutes old: not expired. Apply fails naming it; force-unlock wants its id.
    let id = abandoned_lock(&serve, "three", Duration::from_secs(600));
    let (code, _, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("locked by ci@runner-7 (operation apply") && err.contains(&id),
        "{err}"
    );
    let (code, _, err) = bf(
        d,
        &serve,
        &["force-unlock", "00000000-0000-0000-0000-000000000000"],
    );
    assert_eq!(code, 1);
    assert!(err.contains(&id), "the error names the real id: {err}");
    let out = bf_ok(d, &serve, &["force-unlock", &id]);
    assert!(out.contains("successfully unlocked"), "{out}");
    assert!(volume_file(&serve, &format!("{VOLUME}/three/default.lock")).is_none());
    bf_ok(d, &serve, &["apply", "--auto-approve"]);

    // Two hours old: past the expiry, so the next run takes it over and says so.
    abandoned_lock(&serve, "three", Duration::from_secs(2 * 3600));
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("took over the expired state lock")
            && err.contains("ci@runner-7 (operation apply"),
        "{err}"
    );
    assert_eq!(
        files_under(&serve, &format!("{VOLUME}/three")),
        ["default.json", "default.json.backup"],
        "the old lock and its takeover claim are gone"
    );
}

#[test]
fn a_killed_apply_leaves_a_lock_that_expires_and_a_log_that_is_replayed() {
    let ws = tempfile::tempdir().unwrap();
    let serve = serve(ws.path());
    // Locks expire after 2 s of silence; a live holder's heartbeat comes every 0.5 s.
    let dir = config(&[(
        "main.bf.hcl",
        &lakehouse(
            "vb4",
            &volume_backend("four", "    lock_expiry_seconds = 2\n"),
        ),
    )]);
    let d = dir.path();
    serve.ok("POST", "/__emulator/latency", Some(json!({"fixed_ms": 50})));

    let mut killed = spawn_apply(d, &serve, &[]);
    let lock_path = format!("{VOLUME}/four/default.lock");
    wait_for_file(&serve, &lock_path, &mut killed);
    // Kill it once its write-ahead log has records in the volume: in the middle of creating.
    let deadline = Instant::now() + Duration::from_secs(20);
    while files_under(&serve, &format!("{VOLUME}/four/default.wal")).len() < 3 {
        assert!(
            killed.try_wait().unwrap().is_none(),
            "the apply ended before it could be killed"
        );
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    serve.ok("DELETE", "/__emulator/latency", None);
    assert!(volume_file(&serve, &lock_path).is_some(), "the lock stays");

    // Wait until its last sign of life is past the expiry, then apply: the lock is taken
    // over, the log replayed (what the killed run made is adopted, not made twice).
    std::thread::sleep(Duration::from_millis(2600));
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("took over the expired state lock"), "{err}");
    let state = state_in_volume(&serve, "four");
    assert_eq!(addresses(&state), ADDRESSES);
    assert_eq!(
        files_under(&serve, &format!("{VOLUME}/four")),
        ["default.json", "default.json.backup"]
    );
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

#[test]
fn state_migrate_moves_a_state_local_to_volume_and_back() {
    let ws = tempfile::tempdir().unwrap();
    let serve = serve(ws.path());
    let local_config = lakehouse("vb5", "");
    let dir = config(&[("main.bf.hcl", &local_config)]);
    let d = dir.path();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let local_state = d.join(".brickform/state/default.json");
    let lineage = serde_json::from_str::<Value>(&std::fs::read_to_string(&local_state).unwrap())
        .unwrap()["lineage"]
        .clone();

    // local → volume; then the configuration says so, and nothing is to change.
    let target = format!("volume:{VOLUME}/five");
    let out = bf_ok(d, &serve, &["state", "migrate", "--to", &target]);
    assert!(
        out.contains("Copied the state of environment \"default\" (6 resources")
            && out.contains(&format!(
                "backend \"volume\" {{\n    path = \"{VOLUME}/five\""
            )),
        "{out}"
    );
    assert_eq!(state_in_volume(&serve, "five")["lineage"], lineage);
    let (code, _, err) = bf(d, &serve, &["state", "migrate", "--to", "local"]);
    assert_eq!(code, 1, "already local: {err}");
    std::fs::write(
        d.join("main.bf.hcl"),
        lakehouse("vb5", &volume_backend("five", "")),
    )
    .unwrap();
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // A change made while the state is in the volume.
    bf_ok(d, &serve, &["state", "rm", "databricks_workspace_file.wf"]);
    bf_ok(
        d,
        &serve,
        &[
            "import",
            "databricks_workspace_file.wf",
            "/Shared/vb5/conf.json",
        ],
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let volume_serial = state_in_volume(&serve, "five")["serial"].as_u64().unwrap();

    // volume → local: the local copy (same lineage, older serial) is replaced.
    let out = bf_ok(d, &serve, &["state", "migrate", "--to", "local"]);
    assert!(out.contains("backend \"local\""), "{out}");
    std::fs::write(d.join("main.bf.hcl"), &local_config).unwrap();
    let back: Value =
        serde_json::from_str(&std::fs::read_to_string(&local_state).unwrap()).unwrap();
    assert_eq!(back["lineage"], lineage);
    assert!(back["serial"].as_u64().unwrap() > volume_serial);
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // A target holding another state (another lineage) is never overwritten.
    let other = brickform_state::StateDocument::new("default");
    put_volume_file(
        &serve,
        &format!("{VOLUME}/taken/default.json"),
        &serde_json::to_vec(&other).unwrap(),
    );
    let (code, _, err) = bf(
        d,
        &serve,
        &[
            "state",
            "migrate",
            "--to",
            &format!("volume:{VOLUME}/taken"),
        ],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("already holds a different state")
            && err.contains(&other.lineage().to_string()),
        "{err}"
    );
    assert_eq!(
        state_in_volume(&serve, "taken")["lineage"],
        json!(other.lineage().to_string())
    );
}

#[test]
fn lost_answers_from_the_files_api_neither_duplicate_nor_lose_log_records() {
    let ws = tempfile::tempdir().unwrap();
    let serve = serve(ws.path());
    let dir = config(&[("main.bf.hcl", &lakehouse("vb6", &volume_backend("six", "")))]);
    let d = dir.path();
    // A third of the Files API calls are carried out but answered 503, so the client sends
    // them again: a lock or log batch created "without overwrite" then hears ALREADY_EXISTS
    // for its own object.
    serve.ok(
        "POST",
        "/__emulator/faults",
        Some(json!({
            "path": "^/api/2\\.0/fs/files/Volumes/ops/bf/state/.*",
            "status": 503,
            "after_side_effect": true,
            "probability": 0.33,
            "seed": 11,
            "times": 0,
        })),
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let faults = serve.ok("GET", "/__emulator/faults", None);
    let fired = faults["faults"][0]["fired"]
        .as_u64()
        .unwrap_or_else(|| panic!("{faults}"));
    assert!(fired >= 5, "only {fired} faults fired: {faults}");
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    serve.ok("DELETE", "/__emulator/faults", None);
    assert_eq!(addresses(&state_in_volume(&serve, "six")), ADDRESSES);
    assert_eq!(
        files_under(&serve, &format!("{VOLUME}/six")),
        ["default.json", "default.json.backup"]
    );
}

/// Ctrl-C while a plan reads the workspace stops it at once (exit 130) and, on its way out,
/// removes its lock (and the lock's sign of life) from the volume, so the next command takes
/// the lock at once instead of failing on it until it expires (an hour here).
#[test]
fn ctrl_c_while_planning_removes_the_lock_from_the_volume() {
    let ws = tempfile::tempdir().unwrap();
    let serve = serve(ws.path());
    let dir = config(&[(
        "main.bf.hcl",
        &lakehouse(
            "vb6",
            &volume_backend("six", "    lock_expiry_seconds = 3600\n"),
        ),
    )]);
    let d = dir.path();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let states = format!("{VOLUME}/six");
    let at_rest = files_under(&serve, &states);
    // Slow enough that the plan is still reading when it is interrupted. The workspace's
    // dump, which shows the lock, is not slowed.
    serve.ok(
        "POST",
        "/__emulator/latency",
        Some(json!({"fixed_ms": 300})),
    );
    let mut plan = Command::new(bin())
        .arg("-C")
        .arg(d)
        .arg("plan")
        .env("BRICKFORM_VAR_host", &serve.url)
        .env("DATABRICKS_TOKEN", TOKEN)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !files_under(&serve, &states).contains(&"default.lock".to_string()) {
        assert!(
            plan.try_wait().unwrap().is_none(),
            "the plan ended before it took the lock"
        );
        assert!(Instant::now() < deadline, "the lock never appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The answer to the lock's creation reaches the plan: it holds the lock, and reads the
    // state and the workspace for a second or more.
    std::thread::sleep(Duration::from_millis(150));
    assert!(
        plan.try_wait().unwrap().is_none(),
        "the plan must still run for this test to mean anything"
    );
    let sent = Command::new("kill")
        .args(["-INT", &plan.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let (code, _, err) = wait_output(plan);
    assert_eq!(code, 130, "{err}");
    assert!(err.contains("releases the state lock"), "{err}");
    serve.ok("DELETE", "/__emulator/latency", None);
    assert_eq!(
        files_under(&serve, &states),
        at_rest,
        "the lock and its sign of life are gone"
    );
    let (code, out, err) = bf(
        d,
        &serve,
        &["plan", "--detailed-exitcode", "--lock-timeout", "0s"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
}
