//! States on the local disk: `<dir>/.brickform/state/<env>.json` (+ `.json.backup`, `.lock`,
//! `.wal`). Every method is synchronous and quick, so the async trait methods call them inline.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::lock::restrict;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;

use super::{Backend, StateLock};
use crate::document::{STATE_VERSION, StateDocument};
use crate::error::{Result, StateError};
use crate::lock::{self, Backoff, FileLock, LockInfo};
use crate::wal::{self, WalRecord};

#[derive(Debug)]
pub struct LocalBackend {
    dir: PathBuf,
    /// Logs whose torn tail (if any) this process has already cut off; our own appends are whole
    /// lines, so each log needs checking once rather than on every append.
    wal_checked: Mutex<HashSet<String>>,
}

impl StateLock for FileLock {
    fn info(&self) -> &LockInfo {
        FileLock::info(self)
    }
}

/// Enough of a state file to decide whether it may be overwritten.
#[derive(Deserialize)]
pub(super) struct Header {
    pub(super) version: u32,
    pub(super) lineage: uuid::Uuid,
    pub(super) serial: u64,
}

impl LocalBackend {
    /// The backend for the configuration in `config_dir`; states go in
    /// `config_dir/.brickform/state`.
    pub fn new(config_dir: impl AsRef<Path>) -> LocalBackend {
        LocalBackend::in_state_dir(config_dir.as_ref().join(".brickform").join("state"))
    }

    /// A backend keeping its files directly in `dir`.
    pub fn in_state_dir(dir: impl Into<PathBuf>) -> LocalBackend {
        LocalBackend {
            dir: dir.into(),
            wal_checked: Mutex::new(HashSet::new()),
        }
    }

    pub fn state_dir(&self) -> &Path {
        &self.dir
    }

    pub fn state_path(&self, env: &str) -> Result<PathBuf> {
        self.file(env, "json")
    }
    pub fn backup_path(&self, env: &str) -> Result<PathBuf> {
        self.file(env, "json.backup")
    }
    pub fn lock_path(&self, env: &str) -> Result<PathBuf> {
        self.file(env, "lock")
    }
    pub fn wal_path(&self, env: &str) -> Result<PathBuf> {
        self.file(env, "wal")
    }

    fn file(&self, env: &str, extension: &str) -> Result<PathBuf> {
        validate_environment(env)?;
        Ok(self.dir.join(format!("{env}.{extension}")))
    }

    pub fn load_sync(&self, env: &str) -> Result<Option<StateDocument>> {
        let path = self.state_path(env)?;
        let Some(bytes) = read_if_exists(&path)? else {
            return Ok(None);
        };
        let header = parse_header(&path, &bytes)?;
        let doc: StateDocument =
            serde_json::from_slice(&bytes).map_err(|source| StateError::Corrupt {
                path: path.clone(),
                source,
            })?;
        debug_assert_eq!(doc.version(), header.version);
        if doc.environment() != env {
            return Err(StateError::EnvironmentMismatch {
                requested: env.to_string(),
                ours: doc.environment().to_string(),
            });
        }
        Ok(Some(doc))
    }

    pub fn save_sync(&self, env: &str, doc: &mut StateDocument) -> Result<()> {
        super::check_environment(env, doc)?;
        let path = self.state_path(env)?;
        self.ensure_dir()?;
        let previous = read_if_exists(&path)?;
        super::check_previous(env, doc, &path, previous.as_deref())?;
        let mut json = doc
            .encoded_as_next(serde_json::to_vec_pretty)
            .map_err(|source| StateError::Encode {
                what: "state",
                source,
            })?;
        json.push(b'\n');
        if let Some(bytes) = &previous {
            keep_as_backup(&path, &self.backup_path(env)?, bytes)?;
        }
        atomic_write(&path, &json)?;
        doc.bump_serial();
        Ok(())
    }

    pub fn try_lock_sync(&self, env: &str, info: LockInfo) -> Result<FileLock> {
        let info = self.stamp(env, info)?;
        lock::try_acquire(&self.lock_path(env)?, info)
    }

    pub fn force_unlock_sync(&self, env: &str, id: &str, even_if_running: bool) -> Result<()> {
        lock::force_unlock(&self.lock_path(env)?, id, even_if_running)
    }

    pub fn environments_sync(&self) -> Result<Vec<String>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StateError::io("list", &self.dir)(e)),
        };
        let mut envs = Vec::new();
        for entry in entries {
            let entry = entry.map_err(StateError::io("list", &self.dir))?;
            let name = entry.file_name();
            let Some(env) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                continue;
            };
            if validate_environment(env).is_ok() {
                envs.push(env.to_string());
            }
        }
        envs.sort();
        Ok(envs)
    }

    /// See [`Backend::delete`]. The state is renamed to its backup: atomic (a crash leaves
    /// the state or its backup, never neither), and the file keeps the owner-only mode it
    /// was written with.
    pub fn delete_sync(&self, env: &str) -> Result<()> {
        // The log goes first: left behind without its state, it would be replayed into the
        // next state of this name as if its records were that state's.
        let wal = self.wal_path(env)?;
        match fs::remove_file(&wal) {
            Ok(()) => sync_dir(&self.dir)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StateError::io("remove write-ahead log", &wal)(e)),
        }
        self.wal_checked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(env);
        let path = self.state_path(env)?;
        match fs::rename(&path, self.backup_path(env)?) {
            Ok(()) => sync_dir(&self.dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StateError::io("move to its backup", &path)(e)),
        }
    }

    pub fn wal_append_sync(&self, env: &str, record: &WalRecord) -> Result<()> {
        self.wal_append_many_sync(env, std::slice::from_ref(record))
    }

    /// Appends several records with one write and one sync: the journal's group commit.
    pub fn wal_append_many_sync(&self, env: &str, records: &[WalRecord]) -> Result<()> {
        let path = self.wal_path(env)?;
        let mut lines = Vec::new();
        for r in records {
            lines.extend(r.to_line()?);
        }
        let mut file = self.open_wal_for_append(env, &path)?;
        let io = StateError::io("append to write-ahead log", &path);
        file.seek(SeekFrom::End(0)).map_err(&io)?;
        file.write_all(&lines).map_err(&io)?;
        file.sync_data().map_err(io)
    }

    pub fn wal_read_sync(&self, env: &str) -> Result<Vec<WalRecord>> {
        let path = self.wal_path(env)?;
        match read_if_exists(&path)? {
            None => Ok(Vec::new()),
            Some(bytes) => Ok(wal::parse_log(&path, &bytes)?.records),
        }
    }

    pub fn wal_truncate_sync(&self, env: &str) -> Result<()> {
        let path = self.wal_path(env)?;
        let file = match OpenOptions::new().write(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(StateError::io("open write-ahead log", &path)(e)),
        };
        let io = StateError::io("truncate write-ahead log", &path);
        file.set_len(0).map_err(&io)?;
        file.sync_all().map_err(io)
    }

    /// Opens the log, first cutting off a torn final record left by a crash: appending after it
    /// would turn it into a corrupt line in the middle of the log.
    fn open_wal_for_append(&self, env: &str, path: &Path) -> Result<File> {
        let mut checked = self
            .wal_checked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let first_time = !checked.contains(env);
        if first_time {
            self.ensure_dir()?;
        }
        let existed = path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(StateError::io("open write-ahead log", path))?;
        if !existed {
            restrict(&file, path)?;
            sync_dir(&self.dir)?;
        }
        if first_time {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(StateError::io("read write-ahead log", path))?;
            let parsed = wal::parse_log(path, &bytes)?;
            if parsed.valid_len < bytes.len() {
                file.set_len(parsed.valid_len as u64)
                    .map_err(StateError::io("repair write-ahead log", path))?;
            }
            checked.insert(env.to_string());
        }
        Ok(file)
    }

    fn stamp(&self, env: &str, mut info: LockInfo) -> Result<LockInfo> {
        self.ensure_dir()?;
        info.path = self.state_path(env)?.display().to_string();
        Ok(info)
    }

    fn ensure_dir(&self) -> Result<()> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            // The state may hold resource ids and names others should not browse.
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder
            .create(&self.dir)
            .map_err(StateError::io("create state directory", &self.dir))
    }
}

#[async_trait]
impl Backend for LocalBackend {
    async fn load(&self, env: &str) -> Result<Option<StateDocument>> {
        self.load_sync(env)
    }

    async fn save(&self, env: &str, doc: &mut StateDocument) -> Result<()> {
        self.save_sync(env, doc)
    }

    async fn lock(
        &self,
        env: &str,
        info: LockInfo,
        timeout: Duration,
    ) -> Result<Box<dyn StateLock>> {
        let mut backoff = Backoff::new(timeout);
        loop {
            match self.try_lock_sync(env, info.clone()) {
                Ok(held) => return Ok(Box::new(held)),
                Err(StateError::Locked { .. }) if backoff.remaining() => {
                    tokio::time::sleep(backoff.next_delay()).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn force_unlock(&self, env: &str, id: &str, even_if_running: bool) -> Result<()> {
        self.force_unlock_sync(env, id, even_if_running)
    }

    async fn lock_holder(&self, env: &str) -> Result<Option<LockInfo>> {
        lock::holder(&self.lock_path(env)?)
    }

    async fn environments(&self) -> Result<Vec<String>> {
        self.environments_sync()
    }

    async fn delete(&self, env: &str) -> Result<()> {
        self.delete_sync(env)
    }

    async fn wal_append(&self, env: &str, record: &WalRecord) -> Result<()> {
        off_worker(|| self.wal_append_sync(env, record))
    }

    async fn wal_append_many(&self, env: &str, records: &[WalRecord]) -> Result<()> {
        off_worker(|| self.wal_append_many_sync(env, records))
    }

    async fn wal_read(&self, env: &str) -> Result<Vec<WalRecord>> {
        self.wal_read_sync(env)
    }

    async fn wal_truncate(&self, env: &str) -> Result<()> {
        self.wal_truncate_sync(env)
    }
}

/// Environment names become file names, so nothing that could climb out of the state directory.
pub fn validate_environment(env: &str) -> Result<()> {
    let mut chars = env.chars();
    let ok = matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && env.len() <= 128;
    if ok {
        Ok(())
    } else {
        Err(StateError::InvalidEnvironment(env.to_string()))
    }
}

/// Where the header of a state file a save wrote ends: the document's first fields, then
/// its resources (pretty JSON, two spaces a level). Within the first [`HEADER_WITHIN`] bytes.
const BEFORE_RESOURCES: &[u8] = b",\n  \"resources\": ";
const HEADER_WITHIN: usize = 4096;

/// The header of the state file `bytes`; an error when it does not parse or a newer
/// brickform wrote it.
///
/// Read from the fields before the resources when the file has the form a save writes: a
/// whole parse of a large state walked megabytes of resources to find three numbers at the
/// top (10-14 ms before every save and load of a 10 MB state). A file of any other form (one
/// edited by hand, say) is parsed whole.
pub(super) fn parse_header(path: &Path, bytes: &[u8]) -> Result<Header> {
    let header = match header_before_resources(bytes) {
        Some(header) => header,
        None => serde_json::from_slice(bytes).map_err(|source| StateError::Corrupt {
            path: path.to_path_buf(),
            source,
        })?,
    };
    if header.version > STATE_VERSION {
        return Err(StateError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: header.version,
            supported: STATE_VERSION,
        });
    }
    Ok(header)
}

/// The header from the fields before `"resources"`, when the file has a save's form.
fn header_before_resources(bytes: &[u8]) -> Option<Header> {
    let top = &bytes[..bytes.len().min(HEADER_WITHIN)];
    let end = top
        .windows(BEFORE_RESOURCES.len())
        .position(|w| w == BEFORE_RESOURCES)?;
    let mut head = Vec::with_capacity(end + 2);
    head.extend_from_slice(&top[..end]);
    head.extend_from_slice(b"\n}");
    serde_json::from_slice(&head).ok()
}

/// Runs `io` (a write and its sync) with the runtime told that it blocks, where it can be:
/// a sync waits for the disk, and the write-ahead log is synced for every batch of an
/// apply's records while its calls are in flight. On a runtime worker the wait would hold
/// up every task queued there (the answers of those calls, the steps they start); told, the
/// runtime hands the worker's tasks to another thread first. On a runtime of one thread,
/// which cannot, or outside any, `io` runs in place.
fn off_worker<T>(io: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(io)
        }
        _ => io(),
    }
}

fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StateError::io("read", path)(e)),
    }
}

/// Replaces `path` with `bytes` so that a crash leaves either the old or the new file, never a
/// mix: write a temporary file beside it, fsync, rename over, fsync the directory (the rename
/// itself lives in the directory).
fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".brickform-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(StateError::io("create temporary file in", dir))?;
    restrict(tmp.as_file(), tmp.path())?;
    let io = StateError::io("write", tmp.path().to_path_buf());
    tmp.write_all(bytes).map_err(&io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path)
        .map_err(|e| StateError::io("replace", path)(e.error))?;
    sync_dir(dir)
}

/// Makes the state file at `state`, whose content is `bytes`, the backup at `backup` before
/// the new state replaces it. The file on disk is what the save that wrote it made durable,
/// so the backup is that file under a second name, put in place by a rename (atomic): not a
/// copy written and synced again, which for a state of many megabytes took as long as
/// writing the new one. Where the file system has no hard links, a copy. The directory is
/// synced with the new state's rename, which follows.
fn keep_as_backup(state: &Path, backup: &Path, bytes: &[u8]) -> Result<()> {
    let dir = backup.parent().unwrap_or(Path::new("."));
    let linked = tempfile::Builder::new()
        .prefix(".brickform-")
        .suffix(".tmp")
        .make_in(dir, |tmp| fs::hard_link(state, tmp));
    match linked {
        Ok(link) => link
            .persist(backup)
            .map(drop)
            .map_err(|e| StateError::io("replace", backup)(e.error)),
        Err(_) => atomic_write(backup, bytes),
    }
}

fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(StateError::io("sync directory", dir))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ResourceState, StateDocument};

    /// While a write-ahead log's sync blocks, the other tasks of the runtime go on: here a
    /// task on the runtime's only worker answers the blocked one. Run in place, the blocked
    /// call would hold the worker and the answer would never come.
    #[test]
    fn blocking_log_work_lets_the_runtime_s_other_tasks_run() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let answered = rt.block_on(async {
            tokio::spawn(async {
                let (tx, rx) = std::sync::mpsc::channel::<()>();
                tokio::spawn(async move {
                    let _ = tx.send(());
                });
                off_worker(|| rx.recv_timeout(std::time::Duration::from_secs(5)).is_ok())
            })
            .await
            .unwrap()
        });
        assert!(
            answered,
            "the other task did not run while the blocking work waited"
        );
    }

    /// On a runtime of one thread the work runs in place instead of failing.
    #[tokio::test]
    async fn blocking_log_work_runs_in_place_on_a_single_threaded_runtime() {
        assert_eq!(off_worker(|| 7), 7);
    }

    fn saved(resources: usize) -> (StateDocument, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let mut doc = StateDocument::new("dev");
        for i in 0..resources {
            let r = ResourceState::new(&format!("databricks_job.j[{i}]"), "databricks", "1");
            doc.insert(r.unwrap()).unwrap();
        }
        backend.save_sync("dev", &mut doc).unwrap();
        backend.save_sync("dev", &mut doc).unwrap();
        let bytes = fs::read(backend.state_path("dev").unwrap()).unwrap();
        (doc, bytes)
    }

    #[test]
    fn a_saved_state_has_its_header_read_before_its_resources() {
        for n in [0, 1, 500] {
            let (doc, bytes) = saved(n);
            let header = header_before_resources(&bytes).expect("read before the resources");
            assert_eq!(header.lineage, doc.lineage());
            assert_eq!((header.serial, header.version), (2, STATE_VERSION));
            let whole: Header = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(
                (whole.serial, whole.lineage),
                (header.serial, header.lineage)
            );
        }
    }

    #[test]
    fn only_the_header_is_read_of_a_saved_state() {
        let (_, mut bytes) = saved(3);
        let len = bytes.len();
        bytes.truncate(len - 20);
        let header = parse_header(Path::new("state.json"), &bytes).unwrap();
        assert_eq!(header.serial, 2);
    }

    #[test]
    fn a_state_of_another_form_is_parsed_whole() {
        let (_, bytes) = saved(3);
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let compact = serde_json::to_vec(&value).unwrap();
        assert!(header_before_resources(&compact).is_none());
        assert_eq!(parse_header(Path::new("s"), &compact).unwrap().serial, 2);
        let cut = &compact[..compact.len() - 1];
        let err = parse_header(Path::new("s"), cut).err().unwrap();
        assert!(matches!(err, StateError::Corrupt { .. }), "{err}");
    }
}
