//! The workspace's state, its one lock, and its persistence in a directory.
//!
//! Every request takes the lock once; mutations persist before the response is sent, so
//! an acknowledged change survives a crash (write to a temp file, fsync, rename, fsync dir).

use crate::config::Timings;
use crate::errors::{ApiError, ApiResult};
use crate::{files, jobs, pipelines, secrets, uc, workspace};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

pub const STATE_FILE: &str = "workspace.json";
const LOCK_FILE: &str = "workspace.lock";
const FORMAT: &str = "brickform-local-workspace";
const VERSION: u32 = 1;

/// Locks a mutex even if a panicking thread poisoned it: the state is only mutated after
/// validation, so a poisoned guard still holds a consistent workspace.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Serialize, Deserialize)]
pub struct State {
    pub format: String,
    pub version: u32,
    pub metastore_id: String,
    pub workspace_id: i64,
    pub next_id: i64,
    pub catalogs: BTreeMap<String, Map<String, Value>>,
    pub schemas: BTreeMap<String, Map<String, Value>>,
    pub volumes: BTreeMap<String, Map<String, Value>>,
    pub connections: BTreeMap<String, uc::Connection>,
    pub pipelines: BTreeMap<String, pipelines::Pipeline>,
    pub jobs: BTreeMap<i64, jobs::Job>,
    pub runs: BTreeMap<i64, jobs::Run>,
    /// Runs that have not terminated, so advancing time touches only these.
    #[serde(default)]
    pub active_runs: BTreeSet<i64>,
    pub workspace: BTreeMap<String, workspace::WsObject>,
    pub files: BTreeMap<String, files::FsEntry>,
    pub secret_scopes: BTreeMap<String, secrets::Scope>,
}

impl State {
    pub fn new(user_name: &str, now: i64) -> State {
        let mut st = State {
            format: FORMAT.to_string(),
            version: VERSION,
            metastore_id: uuid::Uuid::new_v4().to_string(),
            workspace_id: 1_000_000_000_000 + i64::from(rand::random::<u32>()),
            next_id: 1_000_001,
            catalogs: BTreeMap::new(),
            schemas: BTreeMap::new(),
            volumes: BTreeMap::new(),
            connections: BTreeMap::new(),
            pipelines: BTreeMap::new(),
            jobs: BTreeMap::new(),
            runs: BTreeMap::new(),
            active_runs: BTreeSet::new(),
            workspace: BTreeMap::new(),
            files: BTreeMap::new(),
            secret_scopes: BTreeMap::new(),
        };
        workspace::seed(&mut st, user_name, now);
        st
    }

    /// Job ids, run ids and workspace object ids share one counter, like real ids that
    /// never collide across kinds.
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }
}

/// What a handler knows besides the state: the time and who is calling.
pub struct Ctx<'a> {
    pub now: i64,
    pub user: &'a str,
    pub timings: Timings,
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

pub struct Store {
    pub state: State,
    persister: Option<Persister>,
}

impl Store {
    pub fn new(state: State, persister: Option<Persister>) -> Store {
        Store { state, persister }
    }

    pub fn save(&self) -> ApiResult<()> {
        match &self.persister {
            Some(p) => p
                .save(&self.state)
                .map_err(|e| ApiError::internal(format!("Cannot persist the workspace: {e}"))),
            None => Ok(()),
        }
    }

    pub fn data_dir(&self) -> Option<&Path> {
        self.persister.as_ref().map(|p| p.dir.as_path())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("cannot use the workspace directory {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the workspace file {path} is not readable: {source}")]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "the workspace file {path} has format {format} version {version}; this emulator reads {FORMAT} version {VERSION}"
    )]
    Version {
        path: PathBuf,
        format: String,
        version: u32,
    },
    #[error("the workspace in {0} is in use by another process")]
    Locked(PathBuf),
}

/// A workspace directory, held with an exclusive lock so two processes never write it.
pub struct Persister {
    dir: PathBuf,
    _lock: File,
}

impl Persister {
    pub fn open(dir: &Path) -> Result<(Persister, Option<State>), PersistError> {
        let io = |source| PersistError::Io {
            path: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| PersistError::Io {
                path: lock_path.clone(),
                source,
            })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(PersistError::Locked(dir.to_path_buf()));
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(PersistError::Io {
                    path: lock_path,
                    source,
                });
            }
        }
        let file = dir.join(STATE_FILE);
        let state = match std::fs::read(&file) {
            Ok(bytes) => {
                let st: State =
                    serde_json::from_slice(&bytes).map_err(|source| PersistError::Corrupt {
                        path: file.clone(),
                        source,
                    })?;
                if st.format != FORMAT || st.version != VERSION {
                    return Err(PersistError::Version {
                        path: file,
                        format: st.format,
                        version: st.version,
                    });
                }
                Some(st)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(PersistError::Io { path: file, source }),
        };
        Ok((
            Persister {
                dir: dir.to_path_buf(),
                _lock: lock,
            },
            state,
        ))
    }

    pub fn save(&self, state: &State) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(state).map_err(std::io::Error::other)?;
        write_atomic(&self.dir, STATE_FILE, &bytes)
    }
}

/// temp file + fsync + rename + fsync of the directory: readers see the old or the new
/// file, never a torn one. Mode 0600 because the workspace holds secrets.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut opts = OpenOptions::new();
    opts.create(true).write(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, dir.join(name))?;
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// Binary contents stored as base64 strings in the JSON state file.
pub mod b64 {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        STANDARD.decode(s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_through_the_directory_and_the_lock_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let (p, loaded) = Persister::open(dir.path()).unwrap();
        assert!(loaded.is_none());
        let mut st = State::new("u@x", 1);
        st.catalogs.insert("c".into(), Map::new());
        p.save(&st).unwrap();
        assert!(matches!(
            Persister::open(dir.path()),
            Err(PersistError::Locked(_))
        ));
        drop(p);
        let (_p, loaded) = Persister::open(dir.path()).unwrap();
        let loaded = loaded.unwrap();
        assert!(loaded.catalogs.contains_key("c"));
        assert_eq!(loaded.metastore_id, st.metastore_id);
        assert!(!dir.path().join(".workspace.json.tmp").exists());
    }

    #[test]
    fn a_corrupt_file_is_reported_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(STATE_FILE), b"{not json").unwrap();
        assert!(matches!(
            Persister::open(dir.path()),
            Err(PersistError::Corrupt { .. })
        ));
        assert_eq!(
            std::fs::read(dir.path().join(STATE_FILE)).unwrap(),
            b"{not json"
        );
    }
}
