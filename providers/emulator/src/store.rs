//! The workspace's state, its one lock, and its persistence in a directory.
//!
//! Every request takes the lock once; mutations persist before the response is sent, so
//! an acknowledged change survives a crash: one fsynced journal line per change, folded
//! into an atomically replaced snapshot now and then (see [`Persister`]).

use crate::config::Timings;
use crate::errors::{ApiError, ApiResult};
use crate::journal::{Journaled, Record, ReplayError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

pub const STATE_FILE: &str = "workspace.json";
const LOCK_FILE: &str = "workspace.lock";
pub const JOURNAL_FILE: &str = "workspace.journal";
const FORMAT: &str = "brickform-local-workspace";
const VERSION: u32 = 1;

/// Locks a mutex even if a panicking thread poisoned it: the state is only mutated after
/// validation, so a poisoned guard still holds a consistent workspace.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What one domain keeps in the workspace state: its tables, each persisted as a top-level
/// field of the workspace file and journaled under its field name.
pub trait Domain: Default + Serialize + DeserializeOwned {
    /// The journaled tables, each with its field name (see the `journaled!` macro). Scalars
    /// the journal records carry whole, outside `changes`, are not among them.
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)>;

    /// What a new workspace starts with in this domain. Runs once every domain's tables
    /// exist, in the order of the domains' table.
    fn seed(_st: &mut State, _user_name: &str, _now: i64) {}

    /// Fills in what a workspace file written before this domain's tables existed lacks.
    fn loaded(_st: &mut State, _user_name: &str) {}
}

/// The workspace state, made from the domains' table (`domains!` in lib.rs): one field per
/// domain that keeps tables. Each domain's fields are flattened, so the workspace file and
/// the journal name every table as they did when this struct listed them itself, and a
/// new domain adds its fields without touching this file. The price is serde's buffering
/// of a flattened struct's fields: reading a large workspace file takes about a quarter
/// longer, once per start.
macro_rules! state {
    ($( $domain:ident $(: $tables:ident $(, clock = $clock:ident)?)? ;)*) => {
        #[derive(Debug, Serialize, Deserialize)]
        pub struct State {
            pub format: String,
            pub version: u32,
            pub metastore_id: String,
            pub workspace_id: i64,
            pub next_id: i64,
            /// The last journal record this snapshot contains (0 in files written before the
            /// journal existed); later records are replayed on top.
            #[serde(default)]
            pub journal_seq: u64,
            $($(
                #[serde(flatten)]
                pub $domain: crate::$domain::$tables,
            )?)*
        }

        impl State {
            pub fn new(user_name: &str, now: i64) -> State {
                let mut st = State {
                    format: FORMAT.to_string(),
                    version: VERSION,
                    metastore_id: uuid::Uuid::new_v4().to_string(),
                    workspace_id: 1_000_000_000_000 + i64::from(rand::random::<u32>()),
                    next_id: 1_000_001,
                    journal_seq: 0,
                    $($( $domain: crate::$domain::$tables::default(), )?)*
                };
                $($( <crate::$domain::$tables as Domain>::seed(&mut st, user_name, now); )?)*
                st
            }

            /// Brings a workspace read from its directory up to what this version keeps.
            pub fn loaded(&mut self, user_name: &str) {
                $($( <crate::$domain::$tables as Domain>::loaded(self, user_name); )?)*
            }

            /// Every journaled table by its field name: the one list the journal writes and
            /// replays.
            fn collections(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
                std::iter::empty()
                    $($( .chain(<crate::$domain::$tables as Domain>::journaled(&mut self.$domain)) )?)*
            }
        }
    };
}

crate::domains!(state);

impl State {
    /// Job ids, run ids and workspace object ids share one counter, like real ids that
    /// never collide across kinds.
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    fn clear_changes(&mut self) {
        for (_, c) in self.collections() {
            c.clear_changes();
        }
    }
}

/// What a handler knows besides the state: the time and who is calling.
pub struct Ctx<'a> {
    pub now: i64,
    pub user: &'a str,
    pub timings: Timings,
    pub behaviours: crate::behaviours::Behaviours,
}

#[cfg(test)]
impl Ctx<'static> {
    /// A context for model tests: the time, and every simulated step taking `step_ms`.
    pub fn for_test(now: i64, step_ms: u64) -> Ctx<'static> {
        let step = std::time::Duration::from_millis(step_ms);
        Ctx {
            now,
            user: "u@x",
            timings: Timings {
                update_step: step,
                run_setup: step,
                task: step,
            },
            behaviours: crate::behaviours::Behaviours::default(),
        }
    }
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

    /// Persists what changed since the last call: one journal record (see [`Persister`]).
    pub fn save(&mut self) -> ApiResult<()> {
        match &mut self.persister {
            Some(p) => p
                .save(&mut self.state)
                .map_err(|e| ApiError::internal(format!("Cannot persist the workspace: {e}"))),
            None => {
                self.state.clear_changes();
                Ok(())
            }
        }
    }

    /// Writes the whole state as the new snapshot (a new or reset workspace).
    pub fn save_all(&mut self) -> ApiResult<()> {
        match &mut self.persister {
            Some(p) => p
                .compact(&mut self.state)
                .map_err(|e| ApiError::internal(format!("Cannot persist the workspace: {e}"))),
            None => {
                self.state.clear_changes();
                Ok(())
            }
        }
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
    #[error("the workspace journal {path} is damaged at line {line}: {reason}")]
    Journal {
        path: PathBuf,
        line: usize,
        #[source]
        reason: JournalDamage,
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

/// The journal is compacted into the snapshot once it is larger than the snapshot, so the
/// bytes written stay proportional to the bytes changed (each change is written at most
/// about twice) and loading replays at most a snapshot's worth; and not before this size,
/// so small workspaces are not rewritten every few changes.
const COMPACT_MIN: u64 = 8 * 1024 * 1024;

/// A workspace directory, held with an exclusive lock so two processes never write it.
///
/// `workspace.json` is a snapshot; `workspace.journal` holds one JSON line per persisted
/// mutation since, with only the entries it changed. A change is acknowledged after its
/// line is written and fsynced. A crash can leave at most a torn last line, which was
/// never acknowledged and is dropped on the next open. Compaction writes a new snapshot
/// atomically (temp file, fsync, rename) that names the last record it holds, then empties
/// the journal; a crash in between leaves records the snapshot already has, and replay
/// skips them by their sequence number.
pub struct Persister {
    dir: PathBuf,
    _lock: File,
    journal: File,
    journal_len: u64,
    snapshot_len: u64,
    /// The last record written (or contained in the snapshot).
    seq: u64,
    /// What the last record or snapshot held of the scalar state, so a mutation that
    /// changes nothing writes nothing. Besides the id counter, a record carries the jobs
    /// domain's set of active runs whole (it is small, and the record format has carried it
    /// since before the state was split by domain).
    last_next_id: i64,
    last_active_runs: BTreeSet<i64>,
}

/// A workspace as found on disk: the snapshot with the journal replayed, and how much of
/// the journal is whole.
struct Loaded {
    state: State,
    seq: u64,
    snapshot_len: u64,
    journal_valid_len: u64,
}

fn read_dir_state(dir: &Path) -> Result<Option<Loaded>, PersistError> {
    let file = dir.join(STATE_FILE);
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(PersistError::Io { path: file, source }),
    };
    let mut state: State =
        serde_json::from_slice(&bytes).map_err(|source| PersistError::Corrupt {
            path: file.clone(),
            source,
        })?;
    if state.format != FORMAT || state.version != VERSION {
        return Err(PersistError::Version {
            path: file,
            format: state.format,
            version: state.version,
        });
    }
    let jpath = dir.join(JOURNAL_FILE);
    let journal = match std::fs::read(&jpath) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(PersistError::Io {
                path: jpath,
                source,
            });
        }
    };
    let mut seq = state.journal_seq;
    let mut valid = 0usize;
    let bad = |line: usize, reason: JournalDamage| PersistError::Journal {
        path: jpath.clone(),
        line,
        reason,
    };
    // Only newline-terminated lines count: the tail after the last newline is a write
    // that was cut off, and was never acknowledged.
    for (i, line) in journal.split_inclusive(|b| *b == b'\n').enumerate() {
        if !line.ends_with(b"\n") {
            break;
        }
        let record: Record =
            serde_json::from_slice(line).map_err(|e| bad(i + 1, JournalDamage::Unreadable(e)))?;
        valid += line.len();
        if record.seq <= state.journal_seq {
            continue;
        }
        if record.seq != seq + 1 {
            return Err(bad(
                i + 1,
                JournalDamage::OutOfOrder {
                    found: record.seq,
                    after: seq,
                },
            ));
        }
        state
            .apply(record)
            .map_err(|e| bad(i + 1, JournalDamage::Replay(e)))?;
        seq += 1;
    }
    Ok(Some(Loaded {
        state,
        seq,
        snapshot_len: bytes.len() as u64,
        journal_valid_len: valid as u64,
    }))
}

/// What is wrong with a journal line that is not its cut-off tail.
#[derive(Debug, thiserror::Error)]
pub enum JournalDamage {
    /// The line is not a journal record.
    #[error("{0}")]
    Unreadable(#[source] serde_json::Error),
    /// The record is not the one after the last replayed: a record is missing.
    #[error("record {found} follows record {after}")]
    OutOfOrder { found: u64, after: u64 },
    /// The record does not fit this emulator's collections.
    #[error("{0}")]
    Replay(#[source] ReplayError),
}

/// Reads a workspace directory (snapshot and journal) without locking it: what
/// `GET /__emulator/state` would return if it were served. For tests and tools that look
/// at a workspace after the process that served it has stopped.
pub fn read_workspace(dir: &Path) -> Result<Option<Value>, PersistError> {
    match read_dir_state(dir)? {
        None => Ok(None),
        Some(l) => {
            serde_json::to_value(&l.state)
                .map(Some)
                .map_err(|source| PersistError::Corrupt {
                    path: dir.join(STATE_FILE),
                    source,
                })
        }
    }
}

impl State {
    fn apply(&mut self, record: Record) -> Result<(), ReplayError> {
        for (name, changes) in record.changes {
            let Some((_, c)) = self.collections().find(|(n, _)| *n == name) else {
                return Err(ReplayError::UnknownCollection { name });
            };
            c.apply(changes)?;
        }
        self.next_id = record.next_id;
        self.jobs.active_runs = record.active_runs;
        self.journal_seq = record.seq;
        Ok(())
    }
}

impl Persister {
    pub fn open(dir: &Path) -> Result<(Persister, Option<State>), PersistError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PersistError::Io { path, source }
        };
        private_dir(dir).map_err(io(dir))?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = private_file(OpenOptions::new().create(true).truncate(false).write(true))
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        tighten(&lock_path, 0o600).map_err(io(&lock_path))?;
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
        let loaded = read_dir_state(dir)?;
        let jpath = dir.join(JOURNAL_FILE);
        let journal = private_file(OpenOptions::new().create(true).append(true))
            .open(&jpath)
            .map_err(io(&jpath))?;
        tighten(&jpath, 0o600).map_err(io(&jpath))?;
        let snapshot = dir.join(STATE_FILE);
        if snapshot.exists() {
            tighten(&snapshot, 0o600).map_err(io(&snapshot))?;
        }
        let (state, seq, snapshot_len, journal_len) = match loaded {
            Some(l) => (Some(l.state), l.seq, l.snapshot_len, l.journal_valid_len),
            None => (None, 0, 0, 0),
        };
        // Drop a torn tail (or a journal without a snapshot: nothing acknowledged it), so
        // the next record starts on a line of its own.
        journal.set_len(journal_len).map_err(io(&jpath))?;
        // The journal's directory entry must be durable before a record in it is acknowledged.
        #[cfg(unix)]
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io(dir))?;
        let (last_next_id, last_active_runs) = state
            .as_ref()
            .map(|s| (s.next_id, s.jobs.active_runs.clone()))
            .unwrap_or_default();
        Ok((
            Persister {
                dir: dir.to_path_buf(),
                _lock: lock,
                journal,
                journal_len,
                snapshot_len,
                seq,
                last_next_id,
                last_active_runs,
            },
            state,
        ))
    }

    /// Appends one record with what changed (nothing if nothing did), or compacts when the
    /// journal has grown past the snapshot. On failure the changes stay marked, so the
    /// next save carries them.
    pub fn save(&mut self, state: &mut State) -> std::io::Result<()> {
        let mut changes = std::collections::BTreeMap::new();
        for (name, c) in state.collections() {
            if c.has_changes() {
                changes.insert(
                    name.to_string(),
                    c.changes().map_err(std::io::Error::other)?,
                );
            }
        }
        if changes.is_empty()
            && state.next_id == self.last_next_id
            && state.jobs.active_runs == self.last_active_runs
        {
            return Ok(());
        }
        let record = Record {
            seq: self.seq + 1,
            next_id: state.next_id,
            active_runs: state.jobs.active_runs.clone(),
            changes,
        };
        let mut line = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let len = line.len() as u64;
        if self.journal_len + len > self.snapshot_len.max(COMPACT_MIN) {
            return self.compact(state);
        }
        let written = self
            .journal
            .write_all(&line)
            .and_then(|()| self.journal.sync_data());
        if let Err(e) = written {
            // Cut a partial line off again, so the journal stays whole for the next record.
            let _ = self.journal.set_len(self.journal_len);
            return Err(e);
        }
        self.journal_len += len;
        self.seq = record.seq;
        state.journal_seq = record.seq;
        self.last_next_id = record.next_id;
        self.last_active_runs = record.active_runs;
        state.clear_changes();
        Ok(())
    }

    /// Writes the whole state as the snapshot and empties the journal.
    pub fn compact(&mut self, state: &mut State) -> std::io::Result<()> {
        state.journal_seq = self.seq;
        let bytes = serde_json::to_vec(&*state).map_err(std::io::Error::other)?;
        write_atomic(&self.dir, STATE_FILE, &bytes)?;
        self.snapshot_len = bytes.len() as u64;
        self.journal.set_len(0)?;
        self.journal.sync_all()?;
        self.journal_len = 0;
        self.last_next_id = state.next_id;
        self.last_active_runs = state.jobs.active_runs.clone();
        state.clear_changes();
        Ok(())
    }
}

/// The workspace directory is mode 0700 (and so is any parent it creates): it holds secrets.
/// An existing one is tightened, as one made by an older version may be open to all.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    tighten(dir, 0o700)
}

/// Sets `mode` on `path` when it grants more than that.
fn tighten(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let current = std::fs::metadata(path)?.permissions().mode() & 0o777;
        if current & !mode != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// Files of the workspace are mode 0600: it holds secrets.
fn private_file(opts: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts
}

/// temp file + fsync + rename + fsync of the directory: readers see the old or the new
/// file, never a torn one. Mode 0600 because the workspace holds secrets.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut f =
        private_file(OpenOptions::new().create(true).write(true).truncate(true)).open(&tmp)?;
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
    use serde_json::{Map, json};

    #[cfg(unix)]
    #[test]
    fn the_workspace_directory_and_its_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let top = tempfile::tempdir().unwrap();
        // Made by an older version: open to all.
        let dir = top.path().join(".brickform/local");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join(LOCK_FILE), b"").unwrap();
        std::fs::set_permissions(dir.join(LOCK_FILE), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        let (_p, _) = Persister::open(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join(LOCK_FILE)), 0o600);
        assert_eq!(mode(&dir.join(JOURNAL_FILE)), 0o600);
        // A new one, parents included.
        let fresh = top.path().join("a/b");
        let (_q, _) = Persister::open(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);
        assert_eq!(mode(&top.path().join("a")), 0o700);
    }

    fn file(bytes: usize) -> crate::files::FsEntry {
        crate::files::FsEntry::File {
            content: vec![b'x'; bytes],
            modified: 1,
        }
    }

    fn dump(st: &State) -> Value {
        let mut v = serde_json::to_value(st).unwrap();
        // Which record the snapshot has reached is bookkeeping, not content.
        v.as_object_mut().unwrap().remove("journal_seq");
        v
    }

    #[test]
    fn state_round_trips_through_the_directory_and_the_lock_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let (mut p, loaded) = Persister::open(dir.path()).unwrap();
        assert!(loaded.is_none());
        let mut st = State::new("u@x", 1);
        p.compact(&mut st).unwrap();
        st.uc.catalogs.insert("c".into(), Map::new());
        p.save(&mut st).unwrap();
        assert!(matches!(
            Persister::open(dir.path()),
            Err(PersistError::Locked(_))
        ));
        drop(p);
        let (_p, loaded) = Persister::open(dir.path()).unwrap();
        let loaded = loaded.unwrap();
        assert!(loaded.uc.catalogs.contains_key("c"));
        assert_eq!(loaded.metastore_id, st.metastore_id);
        assert!(!dir.path().join(".workspace.json.tmp").exists());
    }

    #[test]
    fn a_small_change_appends_a_small_record_and_leaves_the_snapshot_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (mut p, _) = Persister::open(dir.path()).unwrap();
        let mut st = State::new("u@x", 1);
        st.files
            .files
            .insert("/Volumes/c/s/v/big".into(), file(4 << 20));
        p.compact(&mut st).unwrap();
        let snapshot = dir.path().join(STATE_FILE);
        let before = std::fs::read(&snapshot).unwrap();
        assert!(before.len() > 4 << 20);

        st.uc.catalogs.insert("c".into(), Map::new());
        let id = st.next_id();
        p.save(&mut st).unwrap();
        if let Some(c) = st.uc.catalogs.get_mut("c") {
            c.insert("comment".into(), Value::String("hello".into()));
        }
        p.save(&mut st).unwrap();
        // Nothing changed: nothing is written.
        p.save(&mut st).unwrap();
        let journal = std::fs::read(dir.path().join(JOURNAL_FILE)).unwrap();
        assert_eq!(journal.iter().filter(|b| **b == b'\n').count(), 2);
        assert!(journal.len() < 1024, "{} journal bytes", journal.len());
        assert_eq!(
            std::fs::read(&snapshot).unwrap(),
            before,
            "snapshot rewritten"
        );

        drop(p);
        let (_p, loaded) = Persister::open(dir.path()).unwrap();
        let loaded = loaded.unwrap();
        assert_eq!(dump(&loaded), dump(&st));
        assert_eq!(loaded.next_id, id);
        assert_eq!(
            read_workspace(dir.path()).unwrap().map(|mut v| {
                v.as_object_mut().unwrap().remove("journal_seq");
                v
            }),
            Some(dump(&st))
        );
    }

    #[test]
    fn removals_replay_and_the_journal_compacts_once_it_outgrows_the_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let (mut p, _) = Persister::open(dir.path()).unwrap();
        let mut st = State::new("u@x", 1);
        p.compact(&mut st).unwrap();
        st.uc.catalogs.insert("gone".into(), Map::new());
        p.save(&mut st).unwrap();
        st.uc.catalogs.remove("gone");
        p.save(&mut st).unwrap();
        // Each of these is larger than the snapshot, so the journal is folded in.
        for i in 0..3 {
            st.files.files.insert(
                format!("/Volumes/c/s/v/{i}"),
                file(COMPACT_MIN as usize / 2),
            );
            p.save(&mut st).unwrap();
        }
        let journal = std::fs::metadata(dir.path().join(JOURNAL_FILE))
            .unwrap()
            .len();
        assert!(journal <= COMPACT_MIN, "{journal}");
        drop(p);
        let (_p, loaded) = Persister::open(dir.path()).unwrap();
        let loaded = loaded.unwrap();
        assert!(!loaded.uc.catalogs.contains_key("gone"));
        assert_eq!(loaded.files.files.len(), 3);
        assert_eq!(dump(&loaded), dump(&st));
    }

    #[test]
    fn a_torn_last_record_is_dropped_and_the_next_one_starts_clean() {
        let dir = tempfile::tempdir().unwrap();
        let (mut p, _) = Persister::open(dir.path()).unwrap();
        let mut st = State::new("u@x", 1);
        p.compact(&mut st).unwrap();
        st.uc.catalogs.insert("kept".into(), Map::new());
        p.save(&mut st).unwrap();
        drop(p);
        let jpath = dir.path().join(JOURNAL_FILE);
        let mut j = OpenOptions::new().append(true).open(&jpath).unwrap();
        j.write_all(b"{\"seq\": 2, \"next_id\": 5, \"chan").unwrap();
        drop(j);

        let (mut p, loaded) = Persister::open(dir.path()).unwrap();
        let mut st = loaded.unwrap();
        assert!(st.uc.catalogs.contains_key("kept"));
        st.uc.catalogs.insert("after".into(), Map::new());
        p.save(&mut st).unwrap();
        drop(p);
        let (_p, loaded) = Persister::open(dir.path()).unwrap();
        let loaded = loaded.unwrap();
        assert!(
            loaded.uc.catalogs.contains_key("kept") && loaded.uc.catalogs.contains_key("after")
        );
    }

    #[test]
    fn records_the_snapshot_already_holds_are_skipped_after_a_crash_in_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let (mut p, _) = Persister::open(dir.path()).unwrap();
        let mut st = State::new("u@x", 1);
        p.compact(&mut st).unwrap();
        st.uc.catalogs.insert("a".into(), Map::new());
        p.save(&mut st).unwrap();
        st.uc.catalogs.remove("a");
        p.save(&mut st).unwrap();
        let jpath = dir.path().join(JOURNAL_FILE);
        let stale = std::fs::read(&jpath).unwrap();
        p.compact(&mut st).unwrap();
        drop(p);
        // The snapshot was renamed in, but the journal was not emptied yet.
        std::fs::write(&jpath, &stale).unwrap();
        let (mut p, loaded) = Persister::open(dir.path()).unwrap();
        let mut loaded = loaded.unwrap();
        assert_eq!(dump(&loaded), dump(&st));
        // New records continue after the stale ones, and replay still lands on the state.
        loaded.uc.catalogs.insert("b".into(), Map::new());
        p.save(&mut loaded).unwrap();
        drop(p);
        let (_p, again) = Persister::open(dir.path()).unwrap();
        let again = again.unwrap();
        assert!(again.uc.catalogs.contains_key("b") && !again.uc.catalogs.contains_key("a"));
    }

    #[test]
    fn a_workspace_file_written_before_the_journal_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let mut v = serde_json::to_value(State::new("u@x", 1)).unwrap();
        v.as_object_mut().unwrap().remove("journal_seq");
        v["catalogs"]["old"] = serde_json::json!({"name": "old"});
        std::fs::write(dir.path().join(STATE_FILE), v.to_string()).unwrap();
        let (mut p, loaded) = Persister::open(dir.path()).unwrap();
        let mut st = loaded.unwrap();
        assert!(st.uc.catalogs.contains_key("old"));
        st.uc.catalogs.insert("new".into(), Map::new());
        p.save(&mut st).unwrap();
        drop(p);
        let (_p, loaded) = Persister::open(dir.path()).unwrap();
        let loaded = loaded.unwrap();
        assert!(loaded.uc.catalogs.contains_key("old") && loaded.uc.catalogs.contains_key("new"));
    }

    /// Top-level fields of the workspace file that every version since the journal has
    /// written: a domain's tables keep the names they had when one struct listed them. A new
    /// domain adds fields of its own and need not be listed here.
    const FILE_FIELDS: &[&str] = &[
        "format",
        "version",
        "metastore_id",
        "workspace_id",
        "next_id",
        "journal_seq",
        "catalogs",
        "schemas",
        "volumes",
        "tables",
        "connections",
        "storage_credentials",
        "external_locations",
        "pipelines",
        "jobs",
        "runs",
        "active_runs",
        "purged_runs",
        "workspace",
        "files",
        "secret_scopes",
        "principals",
        "scim_attrs",
        "grants",
        "warehouses",
        "permissions",
        "dataflow_specs",
        "cluster_policies",
        "instance_pools",
        "clusters",
        "settings",
        "sql_objects",
    ];

    /// What a journal record carries whole rather than in `changes`, and the snapshot's
    /// own bookkeeping.
    const NOT_JOURNALED: &[&str] = &[
        "format",
        "version",
        "metastore_id",
        "workspace_id",
        "next_id",
        "journal_seq",
        "active_runs",
    ];

    fn top_level_fields(v: &Value) -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn every_table_of_every_domain_is_journaled_under_its_name_in_the_file() {
        let mut st = State::new("u@x", 1);
        let fields = top_level_fields(&serde_json::to_value(&st).unwrap());
        let kept: BTreeSet<String> = FILE_FIELDS.iter().map(|f| f.to_string()).collect();
        assert!(
            fields.is_superset(&kept),
            "the workspace file lost fields: {:?}",
            kept.difference(&fields).collect::<Vec<_>>()
        );
        let journaled: Vec<&str> = st.collections().map(|(name, _)| name).collect();
        let unique: BTreeSet<&str> = journaled.iter().copied().collect();
        assert_eq!(unique.len(), journaled.len(), "a name journaled twice");
        let mut expected: BTreeSet<&str> = fields.iter().map(String::as_str).collect();
        for f in NOT_JOURNALED {
            expected.remove(f);
        }
        // A table missing here would be written to the snapshot but lost from the journal.
        assert_eq!(unique, expected);
    }

    #[test]
    fn a_file_written_before_the_state_was_split_by_domain_loads_and_keeps_its_shape() {
        let dir = tempfile::tempdir().unwrap();
        // Only the tables every file has had; integer keys as the file writes them.
        let old = json!({
            "format": FORMAT,
            "version": VERSION,
            "metastore_id": "m",
            "workspace_id": 1_000_000_000_001_i64,
            "next_id": 1_000_010,
            "catalogs": {"main": {"name": "main"}, "old": {"name": "old"}},
            "schemas": {},
            "volumes": {},
            "connections": {},
            "pipelines": {},
            "jobs": {"1000005": {
                "job_id": 1_000_005, "created_time": 1, "creator": "u@x",
                "settings": {"name": "j"}
            }},
            "runs": {"1000006": {
                "run_id": 1_000_006, "job_id": 1_000_005, "number_in_job": 1,
                "run_name": "j", "creator": "u@x", "start_time": 2, "tasks_from": null,
                "end_time": null, "life_cycle_state": "PENDING", "result_state": null,
                "state_message": "", "canceled": false, "setup_ms": 0, "task_ms": 0,
                "job_parameters": [], "params": {}, "full_refresh": false, "tasks": []
            }},
            "workspace": {},
            "files": {},
            "secret_scopes": {}
        });
        std::fs::write(dir.path().join(STATE_FILE), old.to_string()).unwrap();
        let record = json!({
            "seq": 1,
            "next_id": 1_000_011,
            "active_runs": [1_000_006],
            "changes": {
                "catalogs": {"old": null},
                "purged_runs": {"7": 1_000_005},
                "settings": {"default_namespace_ws": {"value": "main"}}
            }
        });
        std::fs::write(dir.path().join(JOURNAL_FILE), format!("{record}\n")).unwrap();

        let (mut p, loaded) = Persister::open(dir.path()).unwrap();
        let mut st = loaded.unwrap();
        assert!(st.uc.catalogs.contains_key("main") && !st.uc.catalogs.contains_key("old"));
        assert_eq!(st.jobs.jobs[&1_000_005].settings["name"], "j");
        assert_eq!(st.jobs.runs[&1_000_006].job_id, 1_000_005);
        assert_eq!(st.jobs.active_runs, BTreeSet::from([1_000_006]));
        assert_eq!(st.jobs.purged_runs.get(&7), Some(&1_000_005));
        assert_eq!(
            st.settings.settings["default_namespace_ws"]["value"],
            "main"
        );
        assert_eq!(st.next_id, 1_000_011);
        assert!(st.scim.principals.is_empty());
        st.loaded("u@x");
        assert!(!st.scim.principals.is_empty());

        p.compact(&mut st).unwrap();
        let bytes = std::fs::read(dir.path().join(STATE_FILE)).unwrap();
        let written: Value = serde_json::from_slice(&bytes).unwrap();
        // The old file's shape is kept: every field it had is written again, and the
        // written file has the fields a new workspace's has.
        assert!(
            top_level_fields(&written)
                .is_superset(&FILE_FIELDS.iter().map(|f| f.to_string()).collect())
        );
        assert_eq!(
            top_level_fields(&written),
            top_level_fields(&serde_json::to_value(State::new("u@x", 1)).unwrap())
        );
        assert_eq!(written["jobs"]["1000005"]["job_id"], 1_000_005);
        assert_eq!(written["purged_runs"], json!({"7": 1_000_005}));
        assert_eq!(written["active_runs"], json!([1_000_006]));
        drop(p);
        let (_p, again) = Persister::open(dir.path()).unwrap();
        assert_eq!(dump(&again.unwrap()), dump(&st));
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

    #[test]
    fn a_damaged_record_before_the_end_is_reported_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let (mut p, _) = Persister::open(dir.path()).unwrap();
        let mut st = State::new("u@x", 1);
        p.compact(&mut st).unwrap();
        drop(p);
        std::fs::write(dir.path().join(JOURNAL_FILE), b"garbage\n").unwrap();
        let e = Persister::open(dir.path()).err().unwrap();
        assert!(matches!(e, PersistError::Journal { line: 1, .. }), "{e}");
    }
}
