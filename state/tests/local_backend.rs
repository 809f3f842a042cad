//! The local backend's file handling: atomic saves with a backup, permissions, lineage and
//! serial checks, clear errors for corrupt files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use brickform_state::{Backend, LocalBackend, LockInfo, ResourceState, StateDocument, StateError};
use serde_json::json;

fn doc_with(env: &str, addresses: &[&str]) -> StateDocument {
    let mut doc = StateDocument::new(env);
    for a in addresses {
        doc.insert(ResourceState::new(a, "databricks", "id").unwrap())
            .unwrap();
    }
    doc
}

#[test]
fn layout_is_dot_brickform_state_env_json() {
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    let mut doc = doc_with("dev", &[]);
    backend.save_sync("dev", &mut doc).unwrap();
    assert!(dir.path().join(".brickform/state/dev.json").is_file());
    assert_eq!(
        backend.lock_path("dev").unwrap(),
        dir.path().join(".brickform/state/dev.lock")
    );
    assert_eq!(
        backend.wal_path("dev").unwrap(),
        dir.path().join(".brickform/state/dev.wal")
    );
}

#[test]
fn save_bumps_serial_keeps_backup_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    assert!(backend.load_sync("dev").unwrap().is_none());

    let mut doc = doc_with("dev", &["t.a"]);
    backend.save_sync("dev", &mut doc).unwrap();
    assert_eq!(doc.serial(), 1);
    assert!(!backend.backup_path("dev").unwrap().exists());
    let first_bytes = std::fs::read(backend.state_path("dev").unwrap()).unwrap();

    doc.insert(ResourceState::new("t.b", "databricks", "id2").unwrap())
        .unwrap();
    backend.save_sync("dev", &mut doc).unwrap();
    assert_eq!(doc.serial(), 2);

    let backup = std::fs::read(backend.backup_path("dev").unwrap()).unwrap();
    assert_eq!(
        backup, first_bytes,
        "backup is the previous state, byte for byte"
    );
    let loaded = backend.load_sync("dev").unwrap().unwrap();
    assert_eq!(loaded, doc);
    assert_eq!(loaded.serial(), 2);

    // No temporary files are left beside the state.
    let names: Vec<String> = std::fs::read_dir(backend.state_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["dev.json", "dev.json.backup"]);
}

/// The backup is the previous state file itself under a second name, not a copy written
/// again; a third save keeps the second's file as the backup, and the state stays apart.
#[cfg(unix)]
#[test]
fn the_backup_is_the_previous_file_not_a_copy() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    let (state, backup) = (
        backend.state_path("dev").unwrap(),
        backend.backup_path("dev").unwrap(),
    );
    let mut doc = doc_with("dev", &["t.a"]);
    backend.save_sync("dev", &mut doc).unwrap();
    for address in ["t.b", "t.c"] {
        let previous = std::fs::metadata(&state).unwrap().ino();
        let previous_bytes = std::fs::read(&state).unwrap();
        doc.insert(ResourceState::new(address, "databricks", "id").unwrap())
            .unwrap();
        backend.save_sync("dev", &mut doc).unwrap();
        assert_eq!(std::fs::metadata(&backup).unwrap().ino(), previous);
        assert_ne!(std::fs::metadata(&state).unwrap().ino(), previous);
        assert_eq!(std::fs::read(&backup).unwrap(), previous_bytes);
        assert_eq!(std::fs::metadata(&backup).unwrap().nlink(), 1);
    }
}

#[cfg(unix)]
#[test]
fn state_and_backup_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    let mut doc = doc_with("dev", &["t.a"]);
    backend.save_sync("dev", &mut doc).unwrap();
    backend.save_sync("dev", &mut doc).unwrap();
    for path in [
        backend.state_path("dev").unwrap(),
        backend.backup_path("dev").unwrap(),
    ] {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
    }
}

#[test]
fn refuses_to_overwrite_another_lineage() {
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    let mut first = doc_with("dev", &["t.a"]);
    backend.save_sync("dev", &mut first).unwrap();
    let before = std::fs::read(backend.state_path("dev").unwrap()).unwrap();

    let mut other = doc_with("dev", &["t.z"]);
    let err = backend.save_sync("dev", &mut other).unwrap_err();
    assert!(matches!(err, StateError::LineageMismatch { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("dev.json") && text.contains(&first.lineage().to_string()));
    assert_eq!(other.serial(), 0, "a refused save does not bump the serial");
    assert_eq!(
        std::fs::read(backend.state_path("dev").unwrap()).unwrap(),
        before
    );
}

/// The document is written as its next serial without being copied; a write that fails
/// after that must leave the caller's serial, and the stored state, as they were.
#[test]
fn a_failed_write_keeps_the_serial_and_the_stored_state() {
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    let mut doc = doc_with("dev", &["t.a"]);
    backend.save_sync("dev", &mut doc).unwrap();
    let before = std::fs::read(backend.state_path("dev").unwrap()).unwrap();
    // The backup is written after the new state is encoded: a directory in its place
    // makes that write fail.
    std::fs::create_dir(backend.backup_path("dev").unwrap()).unwrap();
    doc.insert(ResourceState::new("t.b", "databricks", "id").unwrap())
        .unwrap();
    assert!(backend.save_sync("dev", &mut doc).is_err());
    assert_eq!(doc.serial(), 1, "a failed save does not bump the serial");
    assert_eq!(
        std::fs::read(backend.state_path("dev").unwrap()).unwrap(),
        before
    );
    // Once the obstacle is gone the same document saves, as the next serial.
    std::fs::remove_dir(backend.backup_path("dev").unwrap()).unwrap();
    backend.save_sync("dev", &mut doc).unwrap();
    assert_eq!(doc.serial(), 2);
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(backend.state_path("dev").unwrap()).unwrap())
            .unwrap();
    assert_eq!(stored["serial"], 2);
}

#[test]
fn refuses_to_overwrite_a_newer_serial() {
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    let mut doc = doc_with("dev", &[]);
    backend.save_sync("dev", &mut doc).unwrap();
    let mut stale = backend.load_sync("dev").unwrap().unwrap();
    backend.save_sync("dev", &mut doc).unwrap();
    let err = backend.save_sync("dev", &mut stale).unwrap_err();
    assert!(
        matches!(
            err,
            StateError::StaleSerial {
                on_disk: 2,
                ours: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn corrupt_state_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    let mut doc = doc_with("dev", &[]);
    backend.save_sync("dev", &mut doc).unwrap();
    let path = backend.state_path("dev").unwrap();
    std::fs::write(&path, b"{\"version\": 1, \"lineage\": ").unwrap();
    let err = backend.load_sync("dev").unwrap_err();
    assert!(matches!(err, StateError::Corrupt { .. }));
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );

    std::fs::write(
        &path,
        br#"{"version": 99, "lineage": "00000000-0000-0000-0000-000000000000", "serial": 1}"#,
    )
    .unwrap();
    let err = backend.load_sync("dev").unwrap_err();
    assert!(
        matches!(err, StateError::UnsupportedVersion { found: 99, .. }),
        "{err}"
    );
}

#[test]
fn environment_names_cannot_escape_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    for bad in ["../x", "a/b", "", ".hidden", "a.b"] {
        assert!(matches!(
            backend.state_path(bad),
            Err(StateError::InvalidEnvironment(_))
        ));
    }
    let mut doc = doc_with("dev", &[]);
    assert!(matches!(
        backend.save_sync("prod", &mut doc),
        Err(StateError::EnvironmentMismatch { .. })
    ));
}

#[tokio::test]
async fn trait_lists_environments_and_locks() {
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    assert!(backend.environments().await.unwrap().is_empty());
    for env in ["prod", "dev"] {
        let mut doc = doc_with(env, &[]);
        doc.set_output("secret", json!("x"), true);
        backend.save(env, &mut doc).await.unwrap();
        backend.save(env, &mut doc).await.unwrap();
    }
    assert_eq!(backend.environments().await.unwrap(), ["dev", "prod"]);

    let held = backend
        .lock("dev", LockInfo::new("apply"), Duration::ZERO)
        .await
        .unwrap();
    assert!(held.info().path.ends_with("dev.json"));
    assert_eq!(
        backend.lock_holder("dev").await.unwrap().map(|i| i.id),
        Some(held.info().id)
    );
    let err = backend
        .lock("dev", LockInfo::new("plan"), Duration::from_millis(200))
        .await
        .unwrap_err();
    assert_eq!(err.lock_holder().map(|i| i.id), Some(held.info().id));
    // Another environment has its own lock.
    backend
        .lock("prod", LockInfo::new("plan"), Duration::ZERO)
        .await
        .unwrap();

    // A waiter gets the lock once the holder lets go within the timeout.
    let released = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        drop(held);
    });
    backend
        .lock("dev", LockInfo::new("plan"), Duration::from_secs(10))
        .await
        .unwrap();
    released.await.unwrap();
}

#[tokio::test]
async fn delete_drops_the_state_and_its_log_and_keeps_the_last_version_as_backup() {
    use brickform_state::{Intent, WalOp, WalRecord};
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let backend = LocalBackend::new(dir.path());
    let held = backend
        .lock("dev", LockInfo::new("env rename"), Duration::ZERO)
        .await
        .unwrap();
    let mut doc = doc_with("dev", &["t.a"]);
    backend.save("dev", &mut doc).await.unwrap();
    backend.save("dev", &mut doc).await.unwrap();
    let record = WalRecord::Intent(Intent {
        seq: 1,
        op: WalOp::Delete,
        address: "t.a".into(),
        resource_type: "t".into(),
        natural_key: None,
        id: Some("id".into()),
        writer: None,
        token: None,
    });
    backend.wal_append("dev", &record).await.unwrap();
    backend
        .save("prod", &mut doc_with("prod", &[]))
        .await
        .unwrap();

    backend.delete("dev").await.unwrap();
    assert!(backend.load("dev").await.unwrap().is_none());
    assert!(!backend.wal_path("dev").unwrap().exists());
    assert!(backend.wal_read("dev").await.unwrap().is_empty());
    assert_eq!(backend.environments().await.unwrap(), ["prod"]);
    let backup_path = backend.backup_path("dev").unwrap();
    let backup: StateDocument =
        serde_json::from_slice(&std::fs::read(&backup_path).unwrap()).unwrap();
    assert_eq!(backup, doc, "the backup is the state as last saved");
    let mode = std::fs::metadata(&backup_path)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the backup stays the owner's alone");

    // A new state of that name starts empty: nothing of the old log is replayed into it.
    let rec = brickform_state::recover(std::sync::Arc::new(LocalBackend::new(dir.path())), "dev")
        .await
        .unwrap();
    assert!(!rec.existed && rec.unresolved.is_empty() && rec.replayed == 0);
    // Nothing there: nothing to do.
    backend.delete("dev").await.unwrap();
    backend.delete("qa").await.unwrap();
    assert!(matches!(
        backend.delete("../x").await,
        Err(StateError::InvalidEnvironment(_))
    ));
    drop(held);
}
