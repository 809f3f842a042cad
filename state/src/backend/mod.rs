//! Where states live. A backend stores one state, one lock and one write-ahead log per
//! environment; `local` keeps them under `.brickform/state/`, `volume` in a Unity Catalog
//! volume over HTTP (through an `ObjectStore` the binary provides), hence the async trait.

pub mod local;
pub mod volume;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::document::StateDocument;
use crate::error::{Result, StateError};
use crate::lock::LockInfo;
use crate::wal::{self, Intent, Outcome, ResultRecord, WalOp, WalRecord};

pub use local::LocalBackend;
pub use volume::{DEFAULT_LOCK_EXPIRY, ObjectStore, StoreError, VolumeBackend};

/// A held state lock; dropping it releases the lock.
pub trait StateLock: Send + Sync + Debug {
    fn info(&self) -> &LockInfo;

    /// The holder of the expired lock this one replaced, if taking it meant a takeover.
    fn took_over(&self) -> Option<&LockInfo> {
        None
    }
}

#[async_trait]
pub trait Backend: Send + Sync + Debug {
    /// The state of `env`, or `None` if it has never been saved.
    async fn load(&self, env: &str) -> Result<Option<StateDocument>>;

    /// Persists `doc` as the state of `env`, bumping its serial. Refuses to replace a state of
    /// another lineage, or one saved by someone else since `doc` was loaded.
    async fn save(&self, env: &str, doc: &mut StateDocument) -> Result<()>;

    /// Takes the lock of `env`, retrying with backoff for up to `timeout` (zero: one attempt).
    /// Fails with `StateError::Locked` carrying the holder's info.
    async fn lock(
        &self,
        env: &str,
        info: LockInfo,
        timeout: Duration,
    ) -> Result<Box<dyn StateLock>>;

    /// Removes the lock of `env` if its holder's ID is `id` and the holder is not provably
    /// still running (`even_if_running` skips that check).
    async fn force_unlock(&self, env: &str, id: &str, even_if_running: bool) -> Result<()>;

    /// The holder of the lock of `env`, if it is held.
    async fn lock_holder(&self, env: &str) -> Result<Option<LockInfo>>;

    /// Environments that have a saved state, sorted.
    async fn environments(&self) -> Result<Vec<String>>;

    /// Removes the state of `env` and its write-ahead log (`env rename` moves a state by
    /// saving it under the new name, then removing the old). The state's last version is
    /// kept as its backup, so a removal can be undone by hand; a state that is not there is
    /// no error. Call it holding the lock of `env`, once the log's records are in the saved
    /// state: the log is dropped with it.
    async fn delete(&self, env: &str) -> Result<()>;

    /// Appends one record to the log of `env`; durable when this returns.
    async fn wal_append(&self, env: &str, record: &WalRecord) -> Result<()>;

    /// Appends records in order, durable together when this returns. Backends that can
    /// should make this one write and one sync (group commit).
    async fn wal_append_many(&self, env: &str, records: &[WalRecord]) -> Result<()> {
        for r in records {
            self.wal_append(env, r).await?;
        }
        Ok(())
    }

    /// The log's whole records; a torn final record is left out.
    async fn wal_read(&self, env: &str) -> Result<Vec<WalRecord>>;

    /// Empties the log: called once the state holding its effects is saved.
    async fn wal_truncate(&self, env: &str) -> Result<()>;
}

/// What a command starts from: the state with the log replayed into it, the calls whose result
/// is unknown, and a journal to log further calls with.
#[derive(Debug)]
pub struct Recovery {
    pub document: StateDocument,
    /// Whether a saved state existed. When it did not, save `document` before the first intent,
    /// so the lineage that ownership tags carry is on disk before any object bears it.
    pub existed: bool,
    /// Intents without a result, in sequence order. Resolve each (look the object up by natural
    /// key or ownership tag) and record what was found with `Journal::result`.
    pub unresolved: Vec<Intent>,
    /// How many log records were read.
    pub replayed: usize,
    pub journal: Journal,
}

/// Loads the state of `env` and replays its write-ahead log. Call it with the lock held, before
/// anything else touches the state.
pub async fn recover(backend: Arc<dyn Backend>, env: &str) -> Result<Recovery> {
    let loaded = backend.load(env).await?;
    let existed = loaded.is_some();
    let mut document = loaded.unwrap_or_else(|| StateDocument::new(env));
    let records = backend.wal_read(env).await?;
    let unresolved = wal::replay(&mut document, &records)?;
    let next_seq = records.iter().map(WalRecord::seq).max().unwrap_or(0) + 1;
    let journal = Journal {
        backend,
        env: env.to_string(),
        inner: tokio::sync::Mutex::new(JournalState {
            next_seq,
            open: unresolved.iter().map(|i| (i.seq, i.clone())).collect(),
        }),
        queue: std::sync::Mutex::new(Vec::new()),
        writer: tokio::sync::Mutex::new(next_seq.saturating_sub(1)),
        writer_id: uuid::Uuid::new_v4(),
    };
    Ok(Recovery {
        document,
        existed,
        unresolved,
        replayed: records.len(),
        journal,
    })
}

/// Numbers and appends log records for one environment. Shared by the apply tasks (`&self`
/// methods). Records are numbered and queued under one mutex, so the log's order is the
/// order of sequence numbers; they are written by group commit: whoever takes the writer
/// writes everything queued with one sync, and callers whose record that sync covered
/// return at once. A sync costs milliseconds, so an apply of many objects would otherwise
/// spend most of its time waiting for the disk, one record at a time.
#[derive(Debug)]
pub struct Journal {
    backend: Arc<dyn Backend>,
    env: String,
    inner: tokio::sync::Mutex<JournalState>,
    /// Records numbered but not yet written.
    queue: std::sync::Mutex<Vec<WalRecord>>,
    /// Held while writing; holds the highest sequence number that is durable.
    writer: tokio::sync::Mutex<u64>,
    /// This run's mark on its records (see `Intent::writer`).
    writer_id: uuid::Uuid,
}

#[derive(Debug)]
struct JournalState {
    next_seq: u64,
    open: BTreeMap<u64, Intent>,
}

impl Journal {
    /// Logs that a call is about to be made; returns its sequence number for `result`.
    pub async fn intent(
        &self,
        op: WalOp,
        address: &str,
        resource_type: &str,
        natural_key: Option<String>,
        id: Option<String>,
    ) -> Result<u64> {
        self.log_intent(address, resource_type, natural_key, id, None, op)
            .await
    }

    /// Logs a create that sends `token` (see `Intent::token`), like [`Journal::intent`].
    pub async fn intent_with_token(
        &self,
        address: &str,
        resource_type: &str,
        natural_key: Option<String>,
        replaces: Option<String>,
        token: Option<String>,
    ) -> Result<u64> {
        self.log_intent(
            address,
            resource_type,
            natural_key,
            replaces,
            token,
            WalOp::Create,
        )
        .await
    }

    async fn log_intent(
        &self,
        address: &str,
        resource_type: &str,
        natural_key: Option<String>,
        id: Option<String>,
        token: Option<String>,
        op: WalOp,
    ) -> Result<u64> {
        let mut state = self.inner.lock().await;
        let intent = Intent {
            seq: state.next_seq,
            op,
            address: address.to_string(),
            resource_type: resource_type.to_string(),
            natural_key,
            id,
            writer: Some(self.writer_id),
            token,
        };
        self.enqueue(WalRecord::Intent(intent.clone()));
        state.next_seq += 1;
        state.open.insert(intent.seq, intent.clone());
        drop(state);
        self.flush(intent.seq).await?;
        Ok(intent.seq)
    }

    fn enqueue(&self, record: WalRecord) {
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(record);
    }

    /// Returns once record `seq` is durable, writing whatever is queued if nobody did yet.
    async fn flush(&self, seq: u64) -> Result<()> {
        let mut durable = self.writer.lock().await;
        if *durable >= seq {
            return Ok(());
        }
        let batch = std::mem::take(
            &mut *self
                .queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let Some(last) = batch.last().map(WalRecord::seq) else {
            return Ok(());
        };
        if let Err(e) = self.backend.wal_append_many(&self.env, &batch).await {
            // Nothing of the batch is known to be durable: put it back for the next try.
            let mut q = self
                .queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let rest = std::mem::take(&mut *q);
            *q = batch;
            q.extend(rest);
            return Err(e);
        }
        *durable = last;
        Ok(())
    }

    /// Logs the result of the call `intent_seq`, and applies it to `doc` so the two never
    /// disagree.
    pub async fn result(
        &self,
        intent_seq: u64,
        outcome: Outcome,
        doc: &mut StateDocument,
    ) -> Result<u64> {
        let mut state = self.inner.lock().await;
        let intent = state
            .open
            .get(&intent_seq)
            .cloned()
            .ok_or(StateError::WalOrphanResult {
                seq: state.next_seq,
                intent_seq,
            })?;
        let record = ResultRecord {
            seq: state.next_seq,
            intent_seq,
            outcome,
            writer: Some(self.writer_id),
            intent_writer: intent.writer,
        };
        let seq = record.seq;
        // The log writes a copy; the outcome itself goes into `doc` below.
        self.enqueue(WalRecord::Result(record.clone()));
        state.next_seq += 1;
        state.open.remove(&intent_seq);
        drop(state);
        // The intent is the write-ahead record: once it is durable, a crash loses nothing,
        // since an intent without its result is resolved by looking the object up (by id,
        // natural key or create token) as if the crash had come during the call. So a result
        // is written with the next group of records (the next intent, or `sync` at the end
        // of the apply) rather than waited for, except where the intent alone could not
        // find the object again: a create with neither a natural key nor a token, an import,
        // a forget. Waiting cost each write of an apply two fsyncs in series.
        let recoverable = match intent.op {
            WalOp::Create => intent.natural_key.is_some() || intent.token.is_some(),
            WalOp::Update | WalOp::Delete => true,
            WalOp::Import | WalOp::Forget => false,
        };
        if !recoverable {
            self.flush(seq).await?;
        }
        wal::apply(doc, &intent, record.outcome);
        Ok(seq)
    }

    /// Makes every record logged so far durable (the results [`Journal::result`] did not
    /// wait for).
    pub async fn sync(&self) -> Result<()> {
        let last = self.inner.lock().await.next_seq.saturating_sub(1);
        self.flush(last).await
    }

    /// Saves `doc`, then empties the log unless some call is still in flight: its intent must
    /// survive a crash, and replaying the records already saved is harmless.
    pub async fn checkpoint(&self, doc: &mut StateDocument) -> Result<()> {
        // Records still queued are written first: written after the truncation, a result
        // would stand in the log without its intent.
        self.sync().await?;
        let state = self.inner.lock().await;
        self.backend.save(&self.env, doc).await?;
        if state.open.is_empty() {
            self.backend.wal_truncate(&self.env).await?;
        }
        Ok(())
    }

    /// Intents logged (or recovered) that have no result yet.
    pub async fn open_intents(&self) -> Vec<Intent> {
        self.inner.lock().await.open.values().cloned().collect()
    }
}

/// What every backend checks before it replaces a stored state: `doc` is the state of `env`,
/// and the stored one (`previous`, if any) has its lineage and no newer serial, so a save
/// never overwrites another state or one written meanwhile.
pub(crate) fn check_previous(
    env: &str,
    doc: &StateDocument,
    path: &std::path::Path,
    previous: Option<&[u8]>,
) -> Result<()> {
    check_environment(env, doc)?;
    if let Some(bytes) = previous {
        let header = local::parse_header(path, bytes)?;
        if header.lineage != doc.lineage() {
            return Err(StateError::LineageMismatch {
                path: path.to_path_buf(),
                on_disk: header.lineage.to_string(),
                ours: doc.lineage().to_string(),
            });
        }
        if header.serial > doc.serial() {
            return Err(StateError::StaleSerial {
                path: path.to_path_buf(),
                on_disk: header.serial,
                ours: doc.serial(),
            });
        }
    }
    Ok(())
}

/// A document saved under another environment's name would become that environment's state.
pub(crate) fn check_environment(env: &str, doc: &StateDocument) -> Result<()> {
    if doc.environment() != env {
        return Err(StateError::EnvironmentMismatch {
            requested: env.to_string(),
            ours: doc.environment().to_string(),
        });
    }
    Ok(())
}
