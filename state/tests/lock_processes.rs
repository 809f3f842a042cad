//! The lock between processes: this test binary re-runs itself as a child that takes the lock
//! and holds it until told to let go (or is killed).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use brickform_state::{LocalBackend, LockInfo, StateError};

const CHILD_DIR: &str = "BRICKFORM_STATE_LOCK_CHILD_DIR";

/// The child's side; a no-op when run as an ordinary test.
#[test]
fn child_holds_lock() {
    let Some(dir) = std::env::var_os(CHILD_DIR).map(PathBuf::from) else {
        return;
    };
    let backend = LocalBackend::in_state_dir(&dir);
    let held = backend
        .try_lock_sync("dev", LockInfo::new("apply"))
        .unwrap();
    let ready = dir.join("ready");
    std::fs::write(dir.join("ready.tmp"), held.info().id.to_string()).unwrap();
    std::fs::rename(dir.join("ready.tmp"), &ready).unwrap();
    wait_for(&dir.join("release"));
    drop(held);
}

fn spawn_holder(dir: &Path) -> (Child, String) {
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["child_holds_lock", "--exact", "--test-threads=1"])
        .env(CHILD_DIR, dir)
        // The child's own test summary would read as part of ours; its panics go to stderr.
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&dir.join("ready"));
    let id = std::fs::read_to_string(dir.join("ready")).unwrap();
    (child, id)
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn second_process_fails_at_once_with_holder_info() {
    let tmp = tempfile::tempdir().unwrap();
    let backend = LocalBackend::in_state_dir(tmp.path());
    let (mut child, child_id) = spawn_holder(tmp.path());

    let start = Instant::now();
    let err = backend
        .try_lock_sync("dev", LockInfo::new("plan"))
        .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "a conflict fails at once"
    );
    let holder = err
        .lock_holder()
        .expect("the error carries the holder info");
    assert_eq!(holder.id.to_string(), child_id);
    assert_eq!(holder.operation, "apply");
    assert!(holder.who.contains('@'));
    assert!(holder.path.ends_with("dev.json"));
    let message = err.to_string();
    assert!(
        message.contains("Lock Info:") && message.contains(&child_id),
        "{message}"
    );

    // A wrong ID unlocks nothing and names the real one.
    let err = backend
        .force_unlock_sync("dev", "11111111-1111-1111-1111-111111111111", false)
        .unwrap_err();
    match err {
        StateError::LockIdMismatch { actual, .. } => assert_eq!(actual, child_id),
        other => panic!("unexpected {other}"),
    }
    assert!(backend.try_lock_sync("dev", LockInfo::new("plan")).is_err());

    std::fs::write(tmp.path().join("release"), b"").unwrap();
    assert!(child.wait().unwrap().success());
    let mine = backend.try_lock_sync("dev", LockInfo::new("plan")).unwrap();
    assert_eq!(mine.info().operation, "plan");
}

#[test]
fn lock_of_a_killed_process_is_taken_over() {
    let tmp = tempfile::tempdir().unwrap();
    let backend = LocalBackend::in_state_dir(tmp.path());
    let (mut child, child_id) = spawn_holder(tmp.path());
    child.kill().unwrap();
    child.wait().unwrap();

    // The dead holder's info is still on disk, but no process holds the OS lock.
    let left = std::fs::read_to_string(backend.lock_path("dev").unwrap()).unwrap();
    assert!(left.contains(&child_id));
    let mine = backend
        .try_lock_sync("dev", LockInfo::new("apply"))
        .unwrap();
    assert_ne!(mine.info().id.to_string(), child_id);
}

#[test]
fn force_unlock_refuses_a_running_holder_and_frees_a_hung_one_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let backend = LocalBackend::in_state_dir(tmp.path());
    let (mut child, child_id) = spawn_holder(tmp.path());

    // It still runs: refused, unless asked for anyway.
    let err = backend
        .force_unlock_sync("dev", &child_id, false)
        .unwrap_err();
    assert!(matches!(err, StateError::HolderRunning { .. }), "{err}");
    assert!(err.to_string().contains(&child_id), "{err}");
    backend.force_unlock_sync("dev", &child_id, true).unwrap();
    let mine = backend
        .try_lock_sync("dev", LockInfo::new("apply"))
        .unwrap();

    // The forced-out holder exiting later must not take the new holder's lock with it.
    std::fs::write(tmp.path().join("release"), b"").unwrap();
    assert!(child.wait().unwrap().success());
    let err = backend
        .try_lock_sync("dev", LockInfo::new("plan"))
        .unwrap_err();
    assert_eq!(err.lock_holder().map(|i| i.id), Some(mine.info().id));
}
