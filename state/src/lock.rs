//! The state lock: an OS file lock on `<env>.lock`, plus the holder's info written inside it.
//!
//! The OS lock is what excludes other writers: the kernel drops it when the holder dies, so a
//! lock file left behind by a crashed run is simply taken over. The info is only for humans
//! (who holds it, since when) and for `force_unlock`, whose ID check stops one from unlocking a
//! lock other than the one they looked at.

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{Result, StateError};

/// Who holds a lock and why; stored as JSON in the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    pub id: Uuid,
    pub operation: String,
    /// `user@host`
    pub who: String,
    /// The brickform version of the holder.
    pub version: String,
    /// RFC 3339, UTC.
    pub created: String,
    /// The state the lock protects; filled in by the backend.
    pub path: String,
    /// The holder's process id, so a force-unlock on the same host can tell whether it still
    /// runs. Absent in locks written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

impl LockInfo {
    /// Info for a lock about to be taken by this process for `operation` (`apply`, `plan`, ...).
    pub fn new(operation: &str) -> LockInfo {
        LockInfo {
            id: Uuid::new_v4(),
            operation: operation.to_string(),
            who: who(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            created: jiff::Timestamp::now().to_string(),
            path: String::new(),
            pid: Some(std::process::id()),
        }
    }

    /// Whether the holder provably still runs: it is a process of this host that exists.
    /// `false` when that cannot be told (another host, an older lock, no process table).
    pub fn holder_runs_here(&self) -> bool {
        let Some(pid) = self.pid else {
            return false;
        };
        let host = whoami::hostname().unwrap_or_default();
        let on_this_host = self
            .who
            .rsplit_once('@')
            .is_some_and(|(_, h)| !host.is_empty() && h == host);
        on_this_host && process_exists(pid)
    }

    /// One line for error messages: `alice@laptop (operation apply, since 2025-01-01T10:00:00Z,
    /// id 0f…)`.
    pub fn summary(&self) -> String {
        format!(
            "{} (operation {}, since {}, id {})",
            self.who, self.operation, self.created, self.id
        )
    }
}

impl fmt::Display for LockInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Lock Info:")?;
        writeln!(f, "  ID:        {}", self.id)?;
        writeln!(f, "  Path:      {}", self.path)?;
        writeln!(f, "  Operation: {}", self.operation)?;
        writeln!(f, "  Who:       {}", self.who)?;
        writeln!(f, "  Version:   {}", self.version)?;
        write!(f, "  Created:   {}", self.created)
    }
}

/// Whether a process with this id exists (Linux: its `/proc` entry).
fn process_exists(pid: u32) -> bool {
    cfg!(target_os = "linux") && Path::new(&format!("/proc/{pid}")).exists()
}

fn who() -> String {
    let user = whoami::username().unwrap_or_else(|_| "unknown".to_string());
    let host = whoami::hostname().unwrap_or_else(|_| "unknown".to_string());
    format!("{user}@{host}")
}

/// A held lock on a local file. Dropping it releases the lock and removes the file.
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
    info: LockInfo,
}

impl FileLock {
    pub fn info(&self) -> &LockInfo {
        &self.info
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Remove the file while still holding the OS lock, and only if it is still ours: after a
        // `force_unlock` the path may belong to a newer holder whose file must survive.
        if same_file(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        } else {
            let _ = self.file.set_len(0);
        }
        let _ = self.file.unlock();
    }
}

/// One attempt, no waiting: the lock, or `StateError::Locked` with the holder's info.
pub fn try_acquire(path: &Path, mut info: LockInfo) -> Result<FileLock> {
    loop {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(StateError::io("open lock file", path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(StateError::Locked {
                    path: path.to_path_buf(),
                    holder: read_info(&mut file).map(Box::new),
                });
            }
            Err(TryLockError::Error(source)) => {
                return Err(StateError::Io {
                    action: "lock",
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
        // The previous holder may have removed the file between our open and our lock; a lock on
        // that unlinked file excludes nobody, so start over on the file now at the path.
        if !same_file(&file, path) {
            continue;
        }
        if info.path.is_empty() {
            info.path = path.display().to_string();
        }
        // The lock names who holds the state and what they run: only its owner reads it,
        // as the state itself.
        restrict(&file, path)?;
        write_info(&mut file, path, &info)?;
        return Ok(FileLock {
            file,
            path: path.to_path_buf(),
            info,
        });
    }
}

/// Retries `try_acquire` with doubling backoff until `timeout` has passed; a zero timeout is a
/// single attempt. Blocks the thread: async callers use the backend's `lock`.
pub fn acquire_blocking(path: &Path, info: LockInfo, timeout: Duration) -> Result<FileLock> {
    let mut backoff = Backoff::new(timeout);
    loop {
        match try_acquire(path, info.clone()) {
            Err(StateError::Locked { .. }) if backoff.remaining() => {
                std::thread::sleep(backoff.next_delay());
            }
            other => return other,
        }
    }
}

/// Removes the lock at `path` if its holder's ID is `id`. The ID check is what makes this safe
/// to script: it only ever removes the lock the operator looked at.
/// Refused while the holder still runs (the OS lock is held), unless `even_if_running`: two
/// runs writing one state at once corrupt it.
pub fn force_unlock(path: &Path, id: &str, even_if_running: bool) -> Result<()> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StateError::NotLocked {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(StateError::io("open lock file", path)(e)),
    };
    let Some(info) = read_info(&mut file) else {
        return Err(StateError::NotLocked {
            path: path.to_path_buf(),
        });
    };
    if info.id.to_string() != id.trim() {
        return Err(StateError::LockIdMismatch {
            path: path.to_path_buf(),
            given: id.to_string(),
            actual: info.id.to_string(),
        });
    }
    // The kernel holds a file lock only while its holder lives.
    if !even_if_running && matches!(file.try_lock_shared(), Err(TryLockError::WouldBlock)) {
        return Err(StateError::HolderRunning {
            path: path.to_path_buf(),
            holder: info.summary(),
        });
    }
    let _ = file.unlock();
    std::fs::remove_file(path).map_err(StateError::io("remove lock file", path))
}

/// Reads the holder info of the lock at `path` without taking it; `None` when unlocked.
pub fn holder(path: &Path) -> Result<Option<LockInfo>> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StateError::io("open lock file", path)(e)),
    };
    // Probing with a shared lock can make a writer starting at this very instant see the state
    // as locked; acceptable for a read meant for display.
    match file.try_lock_shared() {
        // We could lock it, so nobody holds it: whatever info is in there is stale.
        Ok(()) => {
            let _ = file.unlock();
            Ok(None)
        }
        Err(TryLockError::WouldBlock) => Ok(read_info(&mut file)),
        Err(TryLockError::Error(source)) => Err(StateError::Io {
            action: "lock",
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn read_info(file: &mut File) -> Option<LockInfo> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_info(file: &mut File, path: &Path, info: &LockInfo) -> Result<()> {
    let json = serde_json::to_vec_pretty(info).map_err(|source| StateError::Encode {
        what: "lock info",
        source,
    })?;
    let io = StateError::io("write lock file", path);
    let written = (|| {
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&json)?;
        file.sync_all()
    })();
    written.map_err(io)
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Without inode numbers we cannot tell whether the path still names our file, so we assume it
/// does; on Windows an open file cannot be removed anyway.
#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// Doubling delays (from 50 ms, capped at 16 s like OpenTofu) that never overshoot a deadline.
pub(crate) struct Backoff {
    deadline: Instant,
    delay: Duration,
}

impl Backoff {
    pub(crate) fn new(timeout: Duration) -> Backoff {
        Backoff {
            deadline: Instant::now() + timeout,
            delay: Duration::from_millis(50),
        }
    }

    pub(crate) fn remaining(&self) -> bool {
        Instant::now() < self.deadline
    }

    pub(crate) fn next_delay(&mut self) -> Duration {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let delay = self.delay.min(left);
        self.delay = (self.delay * 2).min(Duration::from_secs(16));
        delay
    }
}

/// Mode 0600: the state, its log and its lock name every object, its ids and who works on
/// them; only the owner should read them.
pub(crate) fn restrict(file: &File, path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(StateError::io("set permissions of", path))?;
    }
    #[cfg(not(unix))]
    let _ = (file, path);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_lock_file_is_the_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.lock");
        // Left by an older version with the default mode.
        std::fs::write(&path, b"").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let _held = try_acquire(&path, LockInfo::new("apply")).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn second_acquire_in_process_fails_with_holder_info() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.lock");
        let first = try_acquire(&path, LockInfo::new("apply")).unwrap();
        let err = try_acquire(&path, LockInfo::new("plan")).unwrap_err();
        let who = err.lock_holder().expect("holder info");
        assert_eq!(who.id, first.info().id);
        assert_eq!(who.operation, "apply");
        assert!(err.to_string().contains(&first.info().id.to_string()));
        assert_eq!(holder(&path).unwrap().unwrap().id, first.info().id);
        drop(first);
        assert!(!path.exists(), "release removes the lock file");
        assert!(holder(&path).unwrap().is_none());
        try_acquire(&path, LockInfo::new("plan")).unwrap();
    }

    #[test]
    fn stale_lock_file_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.lock");
        let mut dead = LockInfo::new("apply");
        dead.path = path.display().to_string();
        std::fs::write(&path, serde_json::to_vec(&dead).unwrap()).unwrap();
        assert!(holder(&path).unwrap().is_none());
        let lock = try_acquire(&path, LockInfo::new("apply")).unwrap();
        assert_ne!(lock.info().id, dead.id);
        let on_disk: LockInfo = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(on_disk.id, lock.info().id);
    }

    #[test]
    fn wait_gives_up_after_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.lock");
        let _held = try_acquire(&path, LockInfo::new("apply")).unwrap();
        let start = Instant::now();
        let err = acquire_blocking(&path, LockInfo::new("plan"), Duration::from_millis(300));
        assert!(matches!(err, Err(StateError::Locked { .. })));
        assert!(start.elapsed() >= Duration::from_millis(300));
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn force_unlock_checks_the_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.lock");
        let held = try_acquire(&path, LockInfo::new("apply")).unwrap();
        let real = held.info().id.to_string();
        let err = force_unlock(&path, "00000000-0000-0000-0000-000000000000", true).unwrap_err();
        match &err {
            StateError::LockIdMismatch { actual, .. } => assert_eq!(actual, &real),
            other => panic!("unexpected {other:?}"),
        }
        assert!(err.to_string().contains(&real));
        assert!(path.exists());
        force_unlock(&path, &real, true).unwrap();
        assert!(!path.exists());
        // A new writer can now lock even though the forced-out holder still has its handle, and
        // the old guard's release must not remove the new holder's file.
        let newer = try_acquire(&path, LockInfo::new("apply")).unwrap();
        drop(held);
        assert!(path.exists());
        assert_eq!(holder(&path).unwrap().unwrap().id, newer.info().id);
        assert!(matches!(
            force_unlock(&dir.path().join("none.lock"), &real, false),
            Err(StateError::NotLocked { .. })
        ));
    }
}
