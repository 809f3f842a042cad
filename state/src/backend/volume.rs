//! States in a Unity Catalog volume, shared by a team (`backend "volume"`; docs/architecture.md,
//! State).
//!
//! The backend sees the volume through [`ObjectStore`]: get, put (create or replace a whole
//! object), put-if-absent, delete and list. The binary implements it with the Databricks
//! Files API; the tests below with memory. Under the backend's path, for environment `ENV`:
//!
//! | object | what it is |
//! |---|---|
//! | `ENV.json` | the state document |
//! | `ENV.json.backup` | the document as it was before the last save |
//! | `ENV.lock` | the lock: its holder's [`LockInfo`] as JSON, created without overwrite |
//! | `ENV.lock.alive-ID` | the heartbeat of lock ID: when its holder last said it is alive |
//! | `ENV.lock.takeover-ID` | the claim of the one run taking over the expired lock ID |
//! | `ENV.wal/NNNNNNNNNNNNNNNNNNNN.jsonl` | one write-ahead-log batch, named by its first sequence number |
//!
//! **Write-ahead log.** The Files API cannot append. Each `wal_append_many` (one group commit
//! of the journal) becomes one new object holding its records as JSON lines, written with one
//! request, without overwrite, and named by its first record's sequence number, zero-padded so
//! names sort in log order. Reading lists the directory and concatenates the batches by
//! number, checking that each starts right after the previous one ended: a missing batch is
//! an error naming the missing records, never a silent gap. A batch that already exists when
//! written is compared with what is being written: the same records (a request whose answer
//! was lost and which was sent again, or the journal retrying a batch) are not written twice;
//! different records mean another run is writing this log, which is an error. Truncating
//! deletes the batches newest first, so a truncation cut short leaves a prefix of the log:
//! at worst intents whose results are gone, which the next command resolves by looking the
//! objects up (their effects are already in the saved state), never a result without its
//! intent.
//!
//! **Lock.** Taking the lock is creating `ENV.lock` without overwrite; the Files API answers
//! `ALREADY_EXISTS` when it is there, and then the holder's info is read back for the error.
//! Releasing deletes it, if it is still ours. While held, a heartbeat task rewrites
//! `ENV.lock.alive-ID` every quarter of the expiry time (at most every minute), so a long
//! apply (a job run that takes hours) never looks abandoned. A lock whose holder has shown no
//! sign of life (creation or heartbeat) for longer than the expiry may be taken over:
//!
//! 1. create `ENV.lock.takeover-ID` without overwrite: of all runs that found lock ID
//!    expired, exactly one gets to remove it (the others report the lock as held and retry
//!    under `--lock-timeout`);
//! 2. read `ENV.lock` again and delete it only if it still names ID;
//! 3. create `ENV.lock` without overwrite, as any new holder would; if someone else created
//!    it first (the old holder released and a new run came in), we lost fairly;
//! 4. delete the old heartbeat and the claim.
//!
//! A holder whose lock was taken over (or force-unlocked) finds out from its heartbeat, which
//! also reads the lock, and every `save` reads the lock before writing: either way the run
//! stops with `StateError::LockLost` instead of overwriting the new holder's state.
//!
//! **Residual races**, since the Files API has neither conditional delete nor conditional
//! overwrite: (a) between step 2 and the delete in step 3, the expired holder (alive after
//! all, yet silent for the whole expiry) may release, and a new run may create its lock,
//! which the taker then deletes; (b) the same window exists between a holder reading its
//! lock on release and deleting it, and between `save` checking the lock and writing the
//! state. Each needs a holder that stayed silent for the whole expiry and then acted within
//! one request's time; the state's lineage and serial checks catch most of what could follow.
//! A taker that dies between steps 1 and 4 leaves its claim, and the expired lock then needs
//! `force-unlock` (which removes the claim too). Expiry compares the holder's timestamps with
//! the taker's clock, so clock skew between machines shifts it by the skew: seconds against
//! an expiry of minutes.
//!
//! **Atomic writes.** The state is written with one single-shot `PUT` (overwrite): the
//! Files API has no rename to write-then-swap with, and the object stores behind volumes
//! (S3, ADLS, GCS) replace an object whole, never exposing a partial one. Before replacing,
//! `save` reads what is stored and refuses to overwrite a state of another lineage or a newer
//! serial (a concurrent writer), and copies it to `ENV.json.backup`.

use std::collections::HashMap;
use std::fmt::Debug;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::local::{parse_header, validate_environment};
use super::{Backend, StateLock};
use crate::document::StateDocument;
use crate::error::{Result, StateError};
use crate::lock::{Backoff, LockInfo};
use crate::wal::{self, WalRecord};

/// A failure of the store, by kind, with the store client's error as its cause (whose text
/// never holds a credential).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No answer came: the connection was refused, timed out, or failed.
    #[error("no response from the workspace ({0})")]
    NoResponse(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The store answered with an error status.
    #[error("HTTP {status}: {source}")]
    Status {
        status: u16,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// What the volume backend needs of a remote file store. Keys are paths relative to the
/// store's root (`dev.json`, `dev.wal/00000000000000000001.jsonl`); directories are created
/// as needed by the store.
#[async_trait]
pub trait ObjectStore: Send + Sync + Debug {
    /// Where `key` lives, for messages: `/Volumes/main/ops/state/dev.json`.
    fn location(&self, key: &str) -> String;

    /// The whole object, or `None` when there is none.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Creates the object unless one exists: `Ok(true)` when created, `Ok(false)` when an
    /// object was already there (and is left untouched).
    async fn put_if_absent(&self, key: &str, bytes: &[u8]) -> Result<bool, StoreError>;

    /// Creates or replaces the object as a whole.
    async fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StoreError>;

    /// Deletes the object: `Ok(false)` when there was none.
    async fn delete(&self, key: &str) -> Result<bool, StoreError>;

    /// The names of the objects (not directories) directly in directory `dir` (`""` is the
    /// root), in any order; empty when the directory does not exist.
    async fn list(&self, dir: &str) -> Result<Vec<String>, StoreError>;
}

/// How long a lock holder may stay silent before its lock counts as abandoned, unless the
/// backend block sets `lock_expiry_seconds`. Holders refresh their heartbeat every minute, so
/// this is how long others wait after a run died without releasing.
pub const DEFAULT_LOCK_EXPIRY: Duration = Duration::from_secs(15 * 60);

/// The longest interval between two heartbeats of a held lock.
const MAX_HEARTBEAT: Duration = Duration::from_secs(60);

/// A backend keeping states, locks and logs in an [`ObjectStore`] (a Unity Catalog volume).
#[derive(Debug, Clone)]
pub struct VolumeBackend {
    store: Arc<dyn ObjectStore>,
    /// `None`: locks never expire (only `force-unlock` removes an abandoned one).
    lock_expiry: Option<Duration>,
    heartbeat: Duration,
    /// Locks this backend holds, by environment: writes check them first.
    held: Arc<Mutex<HashMap<String, Held>>>,
}

#[derive(Debug, Clone)]
struct Held {
    id: Uuid,
    /// Set (with the reason) once the heartbeat finds the lock is no longer ours.
    lost: Arc<Mutex<Option<String>>>,
}

/// The content of `ENV.lock.alive-ID`.
#[derive(Debug, Serialize, Deserialize)]
struct Heartbeat {
    id: Uuid,
    /// RFC 3339, UTC, the holder's clock.
    at: String,
}

enum LockRead {
    Free,
    Held(LockInfo),
    /// An object that is not lock info (written by hand?).
    Unreadable,
}

enum TakeOver {
    Taken,
    /// The lock changed hands meanwhile; look again.
    Raced,
    /// Another run holds the takeover claim for this lock.
    Busy,
}

fn state_key(env: &str) -> String {
    format!("{env}.json")
}
fn backup_key(env: &str) -> String {
    format!("{env}.json.backup")
}
fn lock_key(env: &str) -> String {
    format!("{env}.lock")
}
fn alive_key(env: &str, id: Uuid) -> String {
    format!("{env}.lock.alive-{id}")
}
fn claim_key(env: &str, id: Uuid) -> String {
    format!("{env}.lock.takeover-{id}")
}
fn wal_dir(env: &str) -> String {
    format!("{env}.wal")
}
fn batch_key(env: &str, first_seq: u64) -> String {
    format!("{env}.wal/{first_seq:020}.jsonl")
}

/// The sequence number a batch object's name carries.
fn batch_seq(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".jsonl")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn encode<T: Serialize>(value: &T, what: &'static str) -> Result<Vec<u8>> {
    serde_json::to_vec_pretty(value).map_err(|source| StateError::Encode { what, source })
}

fn lock_of(bytes: &[u8]) -> LockRead {
    match serde_json::from_slice::<LockInfo>(bytes) {
        Ok(info) => LockRead::Held(info),
        Err(_) => LockRead::Unreadable,
    }
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

impl VolumeBackend {
    /// A backend over `store`; locks whose holder has been silent for `lock_expiry` may be
    /// taken over (`None`: never).
    pub fn new(store: Arc<dyn ObjectStore>, lock_expiry: Option<Duration>) -> VolumeBackend {
        let heartbeat = lock_expiry
            .map(|e| (e / 4).clamp(Duration::from_millis(10), MAX_HEARTBEAT))
            .unwrap_or(MAX_HEARTBEAT);
        VolumeBackend {
            store,
            lock_expiry,
            heartbeat,
            held: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Where the state of `env` is kept, for messages.
    pub fn state_location(&self, env: &str) -> String {
        self.store.location(&state_key(env))
    }

    fn remote(&self, action: &'static str, key: &str) -> impl Fn(StoreError) -> StateError + use<> {
        let location = self.store.location(key);
        move |source| StateError::Remote {
            action,
            location: location.clone(),
            source,
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        PathBuf::from(self.store.location(key))
    }

    async fn read_lock(&self, env: &str) -> Result<LockRead> {
        let key = lock_key(env);
        let bytes = self
            .store
            .get(&key)
            .await
            .map_err(self.remote("read lock", &key))?;
        Ok(bytes.map_or(LockRead::Free, |b| lock_of(&b)))
    }

    /// When the holder of `holder` last showed it is alive: the later of the lock's creation
    /// and its heartbeat. `None` when neither can be read (such a lock never expires).
    async fn last_alive(&self, env: &str, holder: &LockInfo) -> Result<Option<jiff::Timestamp>> {
        let created = holder.created.parse::<jiff::Timestamp>().ok();
        let key = alive_key(env, holder.id);
        let beat = self
            .store
            .get(&key)
            .await
            .map_err(self.remote("read lock heartbeat", &key))?
            .and_then(|b| serde_json::from_slice::<Heartbeat>(&b).ok())
            .filter(|h| h.id == holder.id)
            .and_then(|h| h.at.parse::<jiff::Timestamp>().ok());
        Ok(created.into_iter().chain(beat).max())
    }

    async fn expired(&self, env: &str, holder: &LockInfo) -> Result<bool> {
        let Some(expiry) = self.lock_expiry else {
            return Ok(false);
        };
        let Some(last) = self.last_alive(env, holder).await? else {
            return Ok(false);
        };
        let silent = jiff::Timestamp::now().duration_since(last).as_secs_f64();
        Ok(silent > expiry.as_secs_f64())
    }

    /// Creates the lock object holding `info`. Also `true` when it already holds `info`: an
    /// earlier attempt of this very request landed and its answer was lost.
    async fn create_lock(&self, env: &str, info: &LockInfo, bytes: &[u8]) -> Result<bool> {
        let key = lock_key(env);
        if self
            .store
            .put_if_absent(&key, bytes)
            .await
            .map_err(self.remote("create lock", &key))?
        {
            return Ok(true);
        }
        Ok(matches!(self.read_lock(env).await?, LockRead::Held(h) if h.id == info.id))
    }

    /// Steps 1–4 of the module documentation.
    async fn take_over(
        &self,
        env: &str,
        expired: &LockInfo,
        info: &LockInfo,
        bytes: &[u8],
    ) -> Result<TakeOver> {
        let claim = claim_key(env, expired.id);
        let claimed = self
            .store
            .put_if_absent(&claim, bytes)
            .await
            .map_err(self.remote("claim the takeover of lock", &claim))?;
        if !claimed {
            return Ok(TakeOver::Busy);
        }
        let taken: Result<bool> = async {
            if let LockRead::Held(h) = self.read_lock(env).await?
                && h.id == expired.id
            {
                let key = lock_key(env);
                self.store
                    .delete(&key)
                    .await
                    .map_err(self.remote("remove expired lock", &key))?;
            }
            self.create_lock(env, info, bytes).await
        }
        .await;
        let _ = self.store.delete(&alive_key(env, expired.id)).await;
        let _ = self.store.delete(&claim).await;
        Ok(if taken? {
            TakeOver::Taken
        } else {
            TakeOver::Raced
        })
    }

    /// One attempt (with the takeover of an expired lock) without waiting.
    async fn try_lock(&self, env: &str, info: &LockInfo) -> Result<Box<dyn StateLock>> {
        let bytes = encode(info, "lock info")?;
        let locked = |holder: Option<LockInfo>| StateError::Locked {
            path: self.path(&lock_key(env)),
            holder: holder.map(Box::new),
        };
        // The lock may change hands between our create and our read; a few rounds settle it.
        let mut last_seen = None;
        for _ in 0..3 {
            if self.create_lock(env, info, &bytes).await? {
                return Ok(self.hold(env, info.clone(), None));
            }
            match self.read_lock(env).await? {
                LockRead::Free => continue,
                LockRead::Unreadable => return Err(locked(None)),
                LockRead::Held(holder) => {
                    if !self.expired(env, &holder).await? {
                        return Err(locked(Some(holder)));
                    }
                    match self.take_over(env, &holder, info, &bytes).await? {
                        TakeOver::Taken => return Ok(self.hold(env, info.clone(), Some(holder))),
                        TakeOver::Busy => return Err(locked(Some(holder))),
                        TakeOver::Raced => last_seen = Some(holder),
                    }
                }
            }
        }
        match self.read_lock(env).await? {
            LockRead::Held(holder) => Err(locked(Some(holder))),
            _ => Err(locked(last_seen)),
        }
    }

    /// Records the lock as held and starts its heartbeat.
    fn hold(&self, env: &str, info: LockInfo, took_over: Option<LockInfo>) -> Box<dyn StateLock> {
        let lost = Arc::new(Mutex::new(None));
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                env.to_string(),
                Held {
                    id: info.id,
                    lost: lost.clone(),
                },
            );
        let heartbeat = self.lock_expiry.map(|_| {
            tokio::spawn(heartbeat(
                self.store.clone(),
                env.to_string(),
                info.id,
                self.heartbeat,
                lost,
            ))
        });
        Box::new(VolumeLock {
            info: info.clone(),
            took_over,
            release: Some(Release {
                store: self.store.clone(),
                held: self.held.clone(),
                env: env.to_string(),
                id: info.id,
                heartbeat,
            }),
        })
    }

    /// Fails when this backend held the lock of `env` and lost it. With `verify`, reads the
    /// lock object to be sure (before a state save); otherwise trusts the heartbeat (before
    /// each log batch, which must not cost a request more). Without a lock held here there is
    /// nothing to check: the caller chose to write unlocked (tests, `state migrate` targets
    /// it locked elsewhere).
    async fn check_lock(&self, env: &str, verify: bool) -> Result<()> {
        let held = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(env)
            .cloned();
        let Some(held) = held else {
            return Ok(());
        };
        let lost = |reason: String| {
            *held.lost.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason.clone());
            StateError::LockLost {
                location: self.store.location(&lock_key(env)),
                reason,
            }
        };
        let known = held
            .lost
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(reason) = known {
            return Err(lost(reason));
        }
        if !verify {
            return Ok(());
        }
        match self.read_lock(env).await? {
            LockRead::Held(h) if h.id == held.id => Ok(()),
            LockRead::Held(h) => Err(lost(format!("it is held by {}", h.summary()))),
            LockRead::Free => Err(lost("it was removed, by force-unlock or a takeover".into())),
            LockRead::Unreadable => Err(lost("it was replaced by something unreadable".into())),
        }
    }

    async fn get(&self, key: &str, action: &'static str) -> Result<Option<Vec<u8>>> {
        self.store.get(key).await.map_err(self.remote(action, key))
    }

    /// The log's batches as (first sequence number, key), in log order.
    async fn batches(&self, env: &str) -> Result<Vec<(u64, String)>> {
        let dir = wal_dir(env);
        let names = self
            .store
            .list(&dir)
            .await
            .map_err(self.remote("list write-ahead log", &dir))?;
        let mut batches: Vec<(u64, String)> = names
            .iter()
            .filter_map(|n| batch_seq(n).map(|s| (s, format!("{dir}/{n}"))))
            .collect();
        batches.sort();
        Ok(batches)
    }
}

/// Refreshes the heartbeat of lock `id` until aborted, or until the lock is no longer ours
/// (then says so in `lost`, which writes check).
async fn heartbeat(
    store: Arc<dyn ObjectStore>,
    env: String,
    id: Uuid,
    every: Duration,
    lost: Arc<Mutex<Option<String>>>,
) {
    let lock = lock_key(&env);
    loop {
        tokio::time::sleep(every).await;
        let reason = match store.get(&lock).await {
            // A failed read is no evidence either way: try again at the next beat.
            Err(_) => continue,
            Ok(None) => "it was removed, by force-unlock or a takeover".to_string(),
            Ok(Some(bytes)) => match lock_of(&bytes) {
                LockRead::Held(h) if h.id == id => {
                    let beat = Heartbeat { id, at: now() };
                    if let Ok(bytes) = serde_json::to_vec(&beat) {
                        let _ = store.put(&alive_key(&env, id), &bytes).await;
                    }
                    continue;
                }
                LockRead::Held(h) => format!("it is held by {}", h.summary()),
                _ => "it was replaced by something unreadable".to_string(),
            },
        };
        *lost.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
        return;
    }
}

/// A lock held in a volume. Dropping it stops the heartbeat and deletes the lock object (if
/// it is still ours) before the drop returns.
#[derive(Debug)]
pub struct VolumeLock {
    info: LockInfo,
    took_over: Option<LockInfo>,
    release: Option<Release>,
}

#[derive(Debug)]
struct Release {
    store: Arc<dyn ObjectStore>,
    held: Arc<Mutex<HashMap<String, Held>>>,
    env: String,
    id: Uuid,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
}

impl Release {
    async fn run(self) {
        if let Some(h) = &self.heartbeat {
            h.abort();
        }
        {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            if held.get(&self.env).is_some_and(|h| h.id == self.id) {
                held.remove(&self.env);
            }
        }
        let key = lock_key(&self.env);
        if let Ok(Some(bytes)) = self.store.get(&key).await
            && matches!(lock_of(&bytes), LockRead::Held(h) if h.id == self.id)
        {
            let _ = self.store.delete(&key).await;
        }
        let _ = self.store.delete(&alive_key(&self.env, self.id)).await;
    }
}

impl StateLock for VolumeLock {
    fn info(&self) -> &LockInfo {
        &self.info
    }
    fn took_over(&self) -> Option<&LockInfo> {
        self.took_over.as_ref()
    }
}

impl Drop for VolumeLock {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            finish(release.run());
        }
    }
}

/// Runs `fut` to completion from synchronous code (a `Drop`), so the lock is gone before the
/// process exits. On a multi-threaded runtime (the binary's) that blocks this thread in
/// place; on a current-thread runtime, which cannot be blocked, the release is spawned and
/// happens if the runtime lives on (otherwise the lock expires).
fn finish(fut: impl Future<Output = ()> + Send + 'static) {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| handle.block_on(fut));
        }
        Ok(handle) => {
            handle.spawn(fut);
        }
        Err(_) => {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                rt.block_on(fut);
            }
        }
    }
}

#[async_trait]
impl Backend for VolumeBackend {
    async fn load(&self, env: &str) -> Result<Option<StateDocument>> {
        validate_environment(env)?;
        let key = state_key(env);
        let Some(bytes) = self.get(&key, "read state").await? else {
            return Ok(None);
        };
        let path = self.path(&key);
        parse_header(&path, &bytes)?;
        let doc: StateDocument = serde_json::from_slice(&bytes)
            .map_err(|source| StateError::Corrupt { path, source })?;
        if doc.environment() != env {
            return Err(StateError::EnvironmentMismatch {
                requested: env.to_string(),
                ours: doc.environment().to_string(),
            });
        }
        Ok(Some(doc))
    }

    async fn save(&self, env: &str, doc: &mut StateDocument) -> Result<()> {
        validate_environment(env)?;
        super::check_environment(env, doc)?;
        self.check_lock(env, true).await?;
        let key = state_key(env);
        let path = self.path(&key);
        // What is stored now says whether someone else wrote since `doc` was loaded.
        let previous = self.get(&key, "read state").await?;
        super::check_previous(env, doc, &path, previous.as_deref())?;
        let mut json = doc.encoded_as_next(|next| encode(next, "state"))?;
        json.push(b'\n');
        if let Some(bytes) = &previous {
            let backup = backup_key(env);
            self.store
                .put(&backup, bytes)
                .await
                .map_err(self.remote("write state backup", &backup))?;
        }
        self.store
            .put(&key, &json)
            .await
            .map_err(self.remote("write state", &key))?;
        doc.bump_serial();
        Ok(())
    }

    async fn lock(
        &self,
        env: &str,
        mut info: LockInfo,
        timeout: Duration,
    ) -> Result<Box<dyn StateLock>> {
        validate_environment(env)?;
        info.path = self.state_location(env);
        let mut backoff = Backoff::new(timeout);
        loop {
            match self.try_lock(env, &info).await {
                Err(StateError::Locked { .. }) if backoff.remaining() => {
                    tokio::time::sleep(backoff.next_delay()).await;
                }
                other => return other,
            }
        }
    }

    async fn force_unlock(&self, env: &str, id: &str, even_if_running: bool) -> Result<()> {
        validate_environment(env)?;
        let key = lock_key(env);
        match self.read_lock(env).await? {
            LockRead::Free => Err(StateError::NotLocked {
                path: self.path(&state_key(env)),
            }),
            LockRead::Unreadable => Err(StateError::LockUnreadable {
                location: self.store.location(&key),
            }),
            LockRead::Held(h) if h.id.to_string() != id.trim() => Err(StateError::LockIdMismatch {
                path: self.path(&key),
                given: id.to_string(),
                actual: h.id.to_string(),
            }),
            // A holder on this host whose process exists is still running.
            LockRead::Held(h) if !even_if_running && h.holder_runs_here() => {
                Err(StateError::HolderRunning {
                    path: self.path(&key),
                    holder: h.summary(),
                })
            }
            LockRead::Held(h) => {
                self.store
                    .delete(&key)
                    .await
                    .map_err(self.remote("remove lock", &key))?;
                let _ = self.store.delete(&alive_key(env, h.id)).await;
                let _ = self.store.delete(&claim_key(env, h.id)).await;
                Ok(())
            }
        }
    }

    async fn lock_holder(&self, env: &str) -> Result<Option<LockInfo>> {
        validate_environment(env)?;
        Ok(match self.read_lock(env).await? {
            LockRead::Held(h) => Some(h),
            LockRead::Free | LockRead::Unreadable => None,
        })
    }

    async fn environments(&self) -> Result<Vec<String>> {
        let names = self
            .store
            .list("")
            .await
            .map_err(self.remote("list states in", ""))?;
        let mut envs: Vec<String> = names
            .iter()
            .filter_map(|n| n.strip_suffix(".json"))
            .filter(|e| validate_environment(e).is_ok())
            .map(str::to_string)
            .collect();
        envs.sort();
        envs.dedup();
        Ok(envs)
    }

    /// The log first, as the local backend does; then the state is copied to its backup
    /// and deleted (the Files API cannot rename), so an interruption between the two leaves
    /// both, never neither.
    async fn delete(&self, env: &str) -> Result<()> {
        validate_environment(env)?;
        // As before a save: a run whose lock was taken over must not remove the state the
        // new holder works on.
        self.check_lock(env, true).await?;
        self.wal_truncate(env).await?;
        let key = state_key(env);
        let Some(bytes) = self.get(&key, "read state").await? else {
            return Ok(());
        };
        let backup = backup_key(env);
        self.store
            .put(&backup, &bytes)
            .await
            .map_err(self.remote("write state backup", &backup))?;
        self.store
            .delete(&key)
            .await
            .map_err(self.remote("delete state", &key))?;
        Ok(())
    }

    async fn wal_append(&self, env: &str, record: &WalRecord) -> Result<()> {
        self.wal_append_many(env, std::slice::from_ref(record))
            .await
    }

    /// One object (one request) per batch; see the module documentation.
    async fn wal_append_many(&self, env: &str, records: &[WalRecord]) -> Result<()> {
        validate_environment(env)?;
        self.check_lock(env, false).await?;
        let mut rest = records;
        while let Some(first) = rest.first() {
            let key = batch_key(env, first.seq());
            let mut bytes = Vec::new();
            for r in rest {
                bytes.extend(r.to_line()?);
            }
            if self
                .store
                .put_if_absent(&key, &bytes)
                .await
                .map_err(self.remote("write write-ahead log batch", &key))?
            {
                return Ok(());
            }
            // A batch starting with this record is there already: ours, if an earlier attempt
            // landed and its answer was lost; then write only what it does not hold.
            let location = self.store.location(&key);
            let inconsistent = |reason: String| StateError::WalInconsistent {
                location: location.clone(),
                reason,
            };
            let existing = self
                .get(&key, "read write-ahead log batch")
                .await?
                .ok_or_else(|| {
                    inconsistent("the batch was reported to exist and then was gone".into())
                })?;
            let theirs = wal::parse_log(Path::new(&location), &existing)?.records;
            if theirs.is_empty() || theirs.len() > rest.len() || theirs[..] != rest[..theirs.len()]
            {
                return Err(inconsistent(format!(
                    "a batch starting at record {} already holds other records; is another run writing the log of environment `{env}` without its lock?",
                    first.seq()
                )));
            }
            rest = &rest[theirs.len()..];
        }
        Ok(())
    }

    async fn wal_read(&self, env: &str) -> Result<Vec<WalRecord>> {
        validate_environment(env)?;
        let batches = self.batches(env).await?;
        let count = batches.len();
        let mut records: Vec<WalRecord> = Vec::new();
        for (i, (first, key)) in batches.into_iter().enumerate() {
            let location = self.store.location(&key);
            let inconsistent = |reason: String| StateError::WalInconsistent {
                location: location.clone(),
                reason,
            };
            let is_last = i + 1 == count;
            let Some(bytes) = self.get(&key, "read write-ahead log batch").await? else {
                return Err(inconsistent(
                    "the batch was listed and then was gone; is another run truncating this log?"
                        .into(),
                ));
            };
            let parsed = wal::parse_log(Path::new(&location), &bytes)?;
            // A torn record can only end the log, as in a local log: its writer never heard
            // that it was durable, so never acted on it.
            if parsed.valid_len < bytes.len() && !is_last {
                return Err(inconsistent(
                    "the batch ends in a torn record, yet later batches follow".into(),
                ));
            }
            let Some(head) = parsed.records.first() else {
                continue;
            };
            if head.seq() != first {
                return Err(inconsistent(format!(
                    "the batch is named after record {first} but starts with record {}",
                    head.seq()
                )));
            }
            if let Some(prev) = records.last().map(WalRecord::seq)
                && first != prev + 1
            {
                return Err(inconsistent(if first > prev {
                    format!(
                        "records {}..{} are missing (a batch was deleted?); the log cannot be replayed safely",
                        prev + 1,
                        first - 1
                    )
                } else {
                    format!("the batch overlaps the previous one, which ends at record {prev}")
                }));
            }
            records.extend(parsed.records);
        }
        Ok(records)
    }

    async fn wal_truncate(&self, env: &str) -> Result<()> {
        validate_environment(env)?;
        self.check_lock(env, false).await?;
        // Newest first: an interrupted truncation leaves a prefix of the log.
        for (_, key) in self.batches(env).await?.into_iter().rev() {
            self.store
                .delete(&key)
                .await
                .map_err(self.remote("delete write-ahead log batch", &key))?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::document::ResourceState;
    use crate::wal::{Intent, Outcome, ResultRecord, WalOp};
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Instant;

    /// Objects in memory. Each call yields to the scheduler first, so concurrent callers
    /// interleave between calls as they would over a network.
    #[derive(Debug, Default)]
    struct MemStore {
        objects: Mutex<BTreeMap<String, Vec<u8>>>,
        /// The next put-if-absent lands, then answers "already exists" (a request whose
        /// answer was lost and which the client sent again).
        lose_next_answer: AtomicBool,
        /// Deletes that fail after this many have succeeded (`usize::MAX`: none).
        deletes_left: AtomicUsize,
        deleted: Mutex<Vec<String>>,
    }

    impl MemStore {
        fn new() -> Arc<MemStore> {
            Arc::new(MemStore {
                deletes_left: AtomicUsize::new(usize::MAX),
                ..MemStore::default()
            })
        }
        fn objects(&self) -> BTreeMap<String, Vec<u8>> {
            self.objects.lock().unwrap().clone()
        }
        fn keys(&self) -> Vec<String> {
            self.objects().into_keys().collect()
        }
        fn put_now(&self, key: &str, bytes: &[u8]) {
            self.objects
                .lock()
                .unwrap()
                .insert(key.to_string(), bytes.to_vec());
        }
        fn text(&self, key: &str) -> String {
            String::from_utf8(self.objects()[key].clone()).unwrap()
        }
    }

    #[async_trait]
    impl ObjectStore for MemStore {
        fn location(&self, key: &str) -> String {
            format!("/Volumes/c/s/v/state/{key}")
        }
        async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
            tokio::task::yield_now().await;
            Ok(self.objects.lock().unwrap().get(key).cloned())
        }
        async fn put_if_absent(&self, key: &str, bytes: &[u8]) -> Result<bool, StoreError> {
            tokio::task::yield_now().await;
            let mut objects = self.objects.lock().unwrap();
            if objects.contains_key(key) {
                return Ok(false);
            }
            objects.insert(key.to_string(), bytes.to_vec());
            Ok(!self.lose_next_answer.swap(false, Ordering::SeqCst))
        }
        async fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StoreError> {
            tokio::task::yield_now().await;
            self.put_now(key, bytes);
            Ok(())
        }
        async fn delete(&self, key: &str) -> Result<bool, StoreError> {
            tokio::task::yield_now().await;
            let left = self.deletes_left.load(Ordering::SeqCst);
            if left == 0 {
                return Err(StoreError::Status {
                    status: 503,
                    source: "TEMPORARILY_UNAVAILABLE".into(),
                });
            }
            if left != usize::MAX {
                self.deletes_left.store(left - 1, Ordering::SeqCst);
            }
            self.deleted.lock().unwrap().push(key.to_string());
            Ok(self.objects.lock().unwrap().remove(key).is_some())
        }
        async fn list(&self, dir: &str) -> Result<Vec<String>, StoreError> {
            tokio::task::yield_now().await;
            let prefix = if dir.is_empty() {
                String::new()
            } else {
                format!("{dir}/")
            };
            // Newest name first: the backend must not rely on the listing's order.
            let mut names: Vec<String> = self
                .objects
                .lock()
                .unwrap()
                .keys()
                .filter_map(|k| k.strip_prefix(&prefix))
                .filter(|rest| !rest.contains('/'))
                .map(str::to_string)
                .collect();
            names.reverse();
            Ok(names)
        }
    }

    fn backend(store: &Arc<MemStore>, expiry: Option<Duration>) -> VolumeBackend {
        VolumeBackend::new(store.clone(), expiry)
    }

    fn hour() -> Option<Duration> {
        Some(Duration::from_secs(3600))
    }

    fn intent(seq: u64, address: &str) -> WalRecord {
        WalRecord::Intent(Intent {
            seq,
            op: WalOp::Create,
            address: address.into(),
            resource_type: "t".into(),
            natural_key: Some(address.into()),
            id: None,
            writer: None,
            token: None,
        })
    }

    fn created(seq: u64, intent_seq: u64, address: &str) -> WalRecord {
        WalRecord::Result(ResultRecord {
            seq,
            intent_seq,
            outcome: Outcome::Created(ResourceState::new(address, "p", "id-1").unwrap()),
            writer: None,
            intent_writer: None,
        })
    }

    fn seqs(records: &[WalRecord]) -> Vec<u64> {
        records.iter().map(WalRecord::seq).collect()
    }

    /// A lock object as an abandoned run would have left it, `age` ago.
    fn abandoned(store: &MemStore, env: &str, age: Duration) -> LockInfo {
        let mut info = LockInfo::new("apply");
        info.who = "ci@runner-7".into();
        let then = jiff::Timestamp::now() - jiff::SignedDuration::try_from(age).unwrap();
        info.created = then.to_string();
        store.put_now(&lock_key(env), &serde_json::to_vec(&info).unwrap());
        info
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_second_writer_fails_naming_the_holder_until_the_first_releases() {
        let store = MemStore::new();
        let a = backend(&store, hour());
        let b = backend(&store, hour());
        let held = a
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();
        assert_eq!(held.info().path, "/Volumes/c/s/v/state/dev.json");
        let err = b
            .lock("dev", LockInfo::new("plan"), Duration::ZERO)
            .await
            .unwrap_err();
        let holder = err.lock_holder().expect("the holder is named");
        assert_eq!(holder.id, held.info().id);
        assert_eq!(holder.operation, "apply");
        assert!(
            err.to_string().contains("/Volumes/c/s/v/state/dev.lock"),
            "{err}"
        );
        assert_eq!(
            b.lock_holder("dev").await.unwrap().unwrap().id,
            held.info().id
        );
        // Other environments are independent.
        drop(
            b.lock("prod", LockInfo::new("apply"), Duration::ZERO)
                .await
                .unwrap(),
        );

        drop(held);
        assert!(
            store.keys().is_empty(),
            "release removes the lock: {:?}",
            store.keys()
        );
        assert!(b.lock_holder("dev").await.unwrap().is_none());
        let second = b
            .lock("dev", LockInfo::new("plan"), Duration::ZERO)
            .await
            .unwrap();
        assert!(second.took_over().is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lock_timeout_waits_for_the_holder_to_release() {
        let store = MemStore::new();
        let a = backend(&store, hour());
        let b = backend(&store, hour());
        let held = a
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();
        let start = Instant::now();
        let releaser = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            drop(held);
        });
        let got = b
            .lock("dev", LockInfo::new("apply"), Duration::from_secs(10))
            .await
            .unwrap();
        assert!(start.elapsed() >= Duration::from_millis(300));
        releaser.await.unwrap();
        assert_eq!(
            b.lock_holder("dev").await.unwrap().unwrap().id,
            got.info().id
        );

        // And gives up after the timeout when the holder stays.
        let start = Instant::now();
        let err = a
            .lock("dev", LockInfo::new("apply"), Duration::from_millis(200))
            .await
            .unwrap_err();
        assert!(matches!(err, StateError::Locked { .. }));
        assert!(start.elapsed() >= Duration::from_millis(200));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_create_whose_answer_was_lost_still_takes_the_lock() {
        let store = MemStore::new();
        store.lose_next_answer.store(true, Ordering::SeqCst);
        let held = backend(&store, hour())
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();
        let on_store: LockInfo = serde_json::from_slice(&store.objects()["dev.lock"]).unwrap();
        assert_eq!(on_store.id, held.info().id);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_expired_lock_is_taken_over_and_a_fresh_one_is_not() {
        let store = MemStore::new();
        let b = backend(&store, hour());
        let fresh = abandoned(&store, "dev", Duration::from_secs(59 * 60));
        let err = b
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap_err();
        assert_eq!(err.lock_holder().unwrap().id, fresh.id);

        let old = abandoned(&store, "dev", Duration::from_secs(2 * 3600));
        store.put_now(
            &alive_key("dev", old.id),
            &serde_json::to_vec(&Heartbeat {
                id: old.id,
                at: old.created.clone(),
            })
            .unwrap(),
        );
        let held = b
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();
        assert_eq!(held.took_over().unwrap().id, old.id);
        assert_eq!(
            b.lock_holder("dev").await.unwrap().unwrap().id,
            held.info().id
        );
        assert_eq!(
            store.keys(),
            ["dev.lock"],
            "old heartbeat and claim are gone"
        );

        // Expiry off: even a day-old lock stays until force-unlock.
        drop(held);
        let ancient = abandoned(&store, "dev", Duration::from_secs(24 * 3600));
        let err = backend(&store, None)
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap_err();
        assert_eq!(err.lock_holder().unwrap().id, ancient.id);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_heartbeat_keeps_a_long_running_holder_from_expiring() {
        let store = MemStore::new();
        let expiry = Some(Duration::from_millis(1000));
        let a = backend(&store, expiry);
        let held = a
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();
        // Well past the expiry since the lock was created, but the heartbeat is fresh.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let err = backend(&store, expiry)
            .lock("dev", LockInfo::new("plan"), Duration::ZERO)
            .await
            .unwrap_err();
        assert_eq!(err.lock_holder().unwrap().id, held.info().id);
        assert!(
            store
                .objects()
                .contains_key(&alive_key("dev", held.info().id))
        );
        drop(held);
        assert!(store.keys().is_empty(), "{:?}", store.keys());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn of_many_runs_taking_over_one_expired_lock_exactly_one_wins() {
        for round in 0..20 {
            let store = MemStore::new();
            let old = abandoned(&store, "dev", Duration::from_secs(2 * 3600));
            let mut tasks = tokio::task::JoinSet::new();
            for _ in 0..6 {
                let b = backend(&store, hour());
                tasks.spawn(async move {
                    b.lock("dev", LockInfo::new("apply"), Duration::ZERO)
                        .await
                        .map(|l| {
                            let id = l.info().id;
                            // Keep it: a released lock would let the next one in.
                            std::mem::forget(l);
                            id
                        })
                });
            }
            let mut winners = Vec::new();
            while let Some(r) = tasks.join_next().await {
                match r.unwrap() {
                    Ok(id) => winners.push(id),
                    Err(e) => assert!(e.lock_holder().is_some(), "round {round}: {e}"),
                }
            }
            assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
            let holder: LockInfo = serde_json::from_slice(&store.objects()["dev.lock"]).unwrap();
            assert_eq!(holder.id, winners[0], "round {round}");
            assert_ne!(holder.id, old.id);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_holder_whose_lock_was_taken_cannot_write() {
        let store = MemStore::new();
        let expiry = Some(Duration::from_millis(200));
        let a = backend(&store, expiry);
        let held = a
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();
        let mut doc = StateDocument::new("dev");
        a.save("dev", &mut doc).await.unwrap();
        a.wal_append("dev", &intent(1, "t.a")).await.unwrap();

        // Someone force-unlocks it and takes the lock.
        let b = backend(&store, expiry);
        b.force_unlock("dev", &held.info().id.to_string(), true)
            .await
            .unwrap();
        let theirs = b
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();

        let err = a.save("dev", &mut doc).await.unwrap_err();
        assert!(matches!(err, StateError::LockLost { .. }), "{err}");
        assert!(
            err.to_string().contains(&theirs.info().id.to_string()),
            "{err}"
        );
        // Log appends trust the heartbeat, which has noticed by now too.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let err = a.wal_append("dev", &intent(2, "t.b")).await.unwrap_err();
        assert!(matches!(err, StateError::LockLost { .. }), "{err}");
        // Releasing the lost lock leaves the new holder's alone.
        drop(held);
        assert_eq!(
            b.lock_holder("dev").await.unwrap().unwrap().id,
            theirs.info().id
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn force_unlock_checks_the_id() {
        let store = MemStore::new();
        let b = backend(&store, hour());
        assert!(matches!(
            b.force_unlock("dev", "x", true).await,
            Err(StateError::NotLocked { .. })
        ));
        let old = abandoned(&store, "dev", Duration::from_secs(60));
        store.put_now(&claim_key("dev", old.id), b"{}");
        let err = b
            .force_unlock("dev", "00000000-0000-0000-0000-000000000000", true)
            .await
            .unwrap_err();
        assert!(err.to_string().contains(&old.id.to_string()), "{err}");
        assert!(store.objects().contains_key("dev.lock"));
        b.force_unlock("dev", &old.id.to_string(), false)
            .await
            .unwrap();
        assert!(
            store.keys().is_empty(),
            "lock and claim removed: {:?}",
            store.keys()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn save_refuses_a_state_written_meanwhile_or_of_another_lineage() {
        let store = MemStore::new();
        let a = backend(&store, hour());
        assert!(a.load("dev").await.unwrap().is_none());
        let mut doc = StateDocument::new("dev");
        a.save("dev", &mut doc).await.unwrap();
        assert_eq!(doc.serial(), 1);

        // Two runs load serial 1; the first saves; the second must not overwrite it.
        let mut first = a.load("dev").await.unwrap().unwrap();
        let mut second = a.load("dev").await.unwrap().unwrap();
        first.upsert(ResourceState::new("t.a", "p", "1").unwrap());
        a.save("dev", &mut first).await.unwrap();
        second.upsert(ResourceState::new("t.b", "p", "2").unwrap());
        let err = a.save("dev", &mut second).await.unwrap_err();
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
        assert!(
            err.to_string().contains("/Volumes/c/s/v/state/dev.json"),
            "{err}"
        );
        assert_eq!(
            second.serial(),
            1,
            "a failed save leaves the caller's serial"
        );

        let mut stranger = StateDocument::new("dev");
        let err = a.save("dev", &mut stranger).await.unwrap_err();
        assert!(matches!(err, StateError::LineageMismatch { .. }), "{err}");

        let stored = a.load("dev").await.unwrap().unwrap();
        assert_eq!(stored, first);
        let backup: StateDocument =
            serde_json::from_slice(&store.objects()["dev.json.backup"]).unwrap();
        assert_eq!(backup.serial(), 1);
        assert!(matches!(a.load("prod").await, Ok(None)));
        assert!(matches!(
            a.save("prod", &mut first).await,
            Err(StateError::EnvironmentMismatch { .. })
        ));
        assert_eq!(a.environments().await.unwrap(), ["dev"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn log_batches_read_back_in_order_one_object_each() {
        let store = MemStore::new();
        let b = backend(&store, hour());
        assert!(b.wal_read("dev").await.unwrap().is_empty());
        // Twelve batches, so names must sort numerically (9 before 10), not as the listing
        // (newest first here) gives them.
        let mut all = Vec::new();
        let mut seq = 1;
        for n in 1..=12 {
            let batch: Vec<WalRecord> = (0..(n % 3) + 1)
                .map(|_| {
                    seq += 1;
                    intent(seq - 1, &format!("t.r{}", seq - 1))
                })
                .collect();
            b.wal_append_many("dev", &batch).await.unwrap();
            all.extend(batch);
        }
        let batches = store
            .keys()
            .into_iter()
            .filter(|k| k.starts_with("dev.wal/"))
            .count();
        assert_eq!(batches, 12, "one object per batch");
        assert_eq!(b.wal_read("dev").await.unwrap(), all);
        assert!(
            store
                .text("dev.wal/00000000000000000001.jsonl")
                .starts_with("{\"record\":\"intent\",\"seq\":1,")
        );

        b.wal_truncate("dev").await.unwrap();
        assert!(b.wal_read("dev").await.unwrap().is_empty());
        let deleted = store.deleted.lock().unwrap().clone();
        let mut newest_first = deleted.clone();
        newest_first.sort();
        newest_first.reverse();
        assert_eq!(deleted, newest_first, "truncation deletes newest first");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_written_twice_is_not_duplicated_and_a_foreign_one_is_an_error() {
        let store = MemStore::new();
        let b = backend(&store, hour());
        let one_two = [intent(1, "t.a"), intent(2, "t.b")];
        b.wal_append_many("dev", &one_two).await.unwrap();
        // The same batch again (a retried request), then the journal's retry of it with a
        // record more: only the new record is added.
        b.wal_append_many("dev", &one_two).await.unwrap();
        let with_three = [intent(1, "t.a"), intent(2, "t.b"), created(3, 1, "t.a")];
        b.wal_append_many("dev", &with_three).await.unwrap();
        assert_eq!(b.wal_read("dev").await.unwrap(), with_three);
        assert!(
            store
                .objects()
                .contains_key("dev.wal/00000000000000000003.jsonl")
        );

        let err = b
            .wal_append_many("dev", &[intent(3, "t.other")])
            .await
            .unwrap_err();
        assert!(matches!(err, StateError::WalInconsistent { .. }), "{err}");
        assert!(err.to_string().contains("another run"), "{err}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_missing_or_torn_batch_is_found() {
        let store = MemStore::new();
        let b = backend(&store, hour());
        b.wal_append_many("dev", &[intent(1, "t.a"), intent(2, "t.b")])
            .await
            .unwrap();
        b.wal_append_many("dev", &[created(3, 1, "t.a"), intent(4, "t.c")])
            .await
            .unwrap();
        b.wal_append_many("dev", &[created(5, 2, "t.b")])
            .await
            .unwrap();

        // A torn final batch is left out, as a torn final line of a local log is.
        let torn = "dev.wal/00000000000000000006.jsonl";
        store.put_now(torn, b"{\"record\":\"intent\",\"se");
        assert_eq!(seqs(&b.wal_read("dev").await.unwrap()), [1, 2, 3, 4, 5]);
        // ... but not in the middle of the log.
        b.wal_append_many("dev", &[intent(7, "t.d")]).await.unwrap();
        let err = b.wal_read("dev").await.unwrap_err();
        assert!(err.to_string().contains("torn"), "{err}");
        store.objects.lock().unwrap().remove(torn);
        store
            .objects
            .lock()
            .unwrap()
            .remove("dev.wal/00000000000000000007.jsonl");

        // A batch gone from the middle: an error naming the records, not a silent gap.
        store
            .objects
            .lock()
            .unwrap()
            .remove("dev.wal/00000000000000000003.jsonl");
        let err = b.wal_read("dev").await.unwrap_err();
        assert!(matches!(err, StateError::WalInconsistent { .. }), "{err}");
        assert!(
            err.to_string().contains("records 3..4 are missing"),
            "{err}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_interrupted_truncation_leaves_a_log_that_replays() {
        let store = MemStore::new();
        let b: Arc<dyn Backend> = Arc::new(backend(&store, hour()));
        let _lock = b
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();
        let rec = crate::backend::recover(b.clone(), "dev").await.unwrap();
        let mut doc = rec.document;
        b.save("dev", &mut doc).await.unwrap();
        let journal = rec.journal;
        for name in ["a", "b", "c"] {
            let address = format!("t.{name}");
            let seq = journal
                .intent(WalOp::Create, &address, "t", Some(address.clone()), None)
                .await
                .unwrap();
            let r = ResourceState::new(&address, "p", name).unwrap();
            journal
                .result(seq, Outcome::Created(r), &mut doc)
                .await
                .unwrap();
            // A result waits for the next group commit; this one makes it its own.
            journal.sync().await.unwrap();
        }
        b.save("dev", &mut doc).await.unwrap();
        // Six batches (each record was its own group commit); the truncation dies after
        // deleting the newest, t.c's result.
        store.deletes_left.store(1, Ordering::SeqCst);
        assert!(b.wal_truncate("dev").await.is_err());

        let again = crate::backend::recover(b.clone(), "dev").await.unwrap();
        assert_eq!(again.replayed, 5);
        assert_eq!(again.document.resources().len(), 3);
        let open: Vec<String> = again.unresolved.iter().map(|i| i.address.clone()).collect();
        assert_eq!(
            open,
            ["t.c"],
            "the intent whose result was deleted is resolved by lookup"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn delete_drops_the_state_and_its_log_and_keeps_the_last_version_as_backup() {
        let store = MemStore::new();
        let b = backend(&store, hour());
        let held = b
            .lock("dev", LockInfo::new("env rename"), Duration::ZERO)
            .await
            .unwrap();
        let mut doc = StateDocument::new("dev");
        doc.upsert(ResourceState::new("t.a", "p", "1").unwrap());
        b.save("dev", &mut doc).await.unwrap();
        b.save("dev", &mut doc).await.unwrap();
        b.wal_append_many("dev", &[intent(1, "t.b"), created(2, 1, "t.b")])
            .await
            .unwrap();
        let mut other = StateDocument::new("prod");
        b.save("prod", &mut other).await.unwrap();

        b.delete("dev").await.unwrap();
        assert!(b.load("dev").await.unwrap().is_none());
        assert!(b.wal_read("dev").await.unwrap().is_empty());
        assert_eq!(b.environments().await.unwrap(), ["prod"]);
        let backup: StateDocument =
            serde_json::from_slice(&store.objects()["dev.json.backup"]).unwrap();
        assert_eq!(backup, doc, "the backup is the state as last saved");
        // Nothing there: nothing to do.
        b.delete("dev").await.unwrap();
        b.delete("qa").await.unwrap();
        assert!(matches!(
            b.delete("../x").await,
            Err(StateError::InvalidEnvironment(_))
        ));
        drop(held);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_holder_whose_lock_was_taken_cannot_delete() {
        let store = MemStore::new();
        let a = backend(&store, hour());
        let held = a
            .lock("dev", LockInfo::new("env rename"), Duration::ZERO)
            .await
            .unwrap();
        a.save("dev", &mut StateDocument::new("dev")).await.unwrap();
        let b = backend(&store, hour());
        b.force_unlock("dev", &held.info().id.to_string(), true)
            .await
            .unwrap();
        let _theirs = b
            .lock("dev", LockInfo::new("apply"), Duration::ZERO)
            .await
            .unwrap();
        let err = a.delete("dev").await.unwrap_err();
        assert!(matches!(err, StateError::LockLost { .. }), "{err}");
        assert!(b.load("dev").await.unwrap().is_some());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_journal_replays_from_the_volume() {
        let store = MemStore::new();
        let b: Arc<dyn Backend> = Arc::new(backend(&store, hour()));
        let rec = crate::backend::recover(b.clone(), "dev").await.unwrap();
        assert!(!rec.existed);
        let mut doc = rec.document;
        b.save("dev", &mut doc).await.unwrap();
        let seq = rec
            .journal
            .intent(WalOp::Create, "t.a", "t", Some("a".into()), None)
            .await
            .unwrap();
        let r = ResourceState::new("t.a", "p", "a").unwrap();
        rec.journal
            .result(seq, Outcome::Created(r.clone()), &mut doc)
            .await
            .unwrap();
        rec.journal
            .intent(WalOp::Create, "t.b", "t", Some("b".into()), None)
            .await
            .unwrap();
        // Crash: nothing saved since. The next run sees t.a done and t.b in doubt.
        let again = crate::backend::recover(b.clone(), "dev").await.unwrap();
        assert!(again.existed);
        assert_eq!(
            again
                .document
                .get(&crate::address::InstanceAddr::parse("t.a").unwrap()),
            Some(&r)
        );
        assert_eq!(again.unresolved.len(), 1);
        assert_eq!(again.unresolved[0].address, "t.b");
    }
}
