//! The journal writes records queued while a sync is in progress together, with one sync,
//! and every caller still returns only once its own record is durable.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use brickform_state::backend::StateLock;
use brickform_state::{
    Backend, LocalBackend, LockInfo, Result, StateDocument, WalOp, WalRecord, recover,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A local backend whose syncs are slow and counted.
#[derive(Debug)]
struct SlowDisk {
    inner: LocalBackend,
    syncs: AtomicUsize,
}

#[async_trait]
impl Backend for SlowDisk {
    async fn load(&self, env: &str) -> Result<Option<StateDocument>> {
        self.inner.load(env).await
    }
    async fn save(&self, env: &str, doc: &mut StateDocument) -> Result<()> {
        self.inner.save(env, doc).await
    }
    async fn lock(
        &self,
        env: &str,
        info: LockInfo,
        timeout: Duration,
    ) -> Result<Box<dyn StateLock>> {
        self.inner.lock(env, info, timeout).await
    }
    async fn force_unlock(&self, env: &str, id: &str, even_if_running: bool) -> Result<()> {
        self.inner.force_unlock(env, id, even_if_running).await
    }
    async fn lock_holder(&self, env: &str) -> Result<Option<LockInfo>> {
        self.inner.lock_holder(env).await
    }
    async fn environments(&self) -> Result<Vec<String>> {
        self.inner.environments().await
    }
    async fn delete(&self, env: &str) -> Result<()> {
        self.inner.delete(env).await
    }
    async fn wal_append(&self, env: &str, record: &WalRecord) -> Result<()> {
        self.wal_append_many(env, std::slice::from_ref(record))
            .await
    }
    async fn wal_append_many(&self, env: &str, records: &[WalRecord]) -> Result<()> {
        self.syncs.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(30)).await;
        self.inner.wal_append_many_sync(env, records)
    }
    async fn wal_read(&self, env: &str) -> Result<Vec<WalRecord>> {
        self.inner.wal_read(env).await
    }
    async fn wal_truncate(&self, env: &str) -> Result<()> {
        self.inner.wal_truncate(env).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_records_share_a_sync() {
    let dir = tempfile::tempdir().unwrap();
    let disk = Arc::new(SlowDisk {
        inner: LocalBackend::new(dir.path()),
        syncs: AtomicUsize::new(0),
    });
    let backend: Arc<dyn Backend> = disk.clone();
    let rec = recover(backend.clone(), "default").await.unwrap();
    let journal = Arc::new(rec.journal);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..40 {
        let j = journal.clone();
        tasks.spawn(async move {
            j.intent(
                WalOp::Create,
                &format!("t.x{i}"),
                "t",
                Some(format!("x{i}")),
                None,
            )
            .await
            .unwrap()
        });
    }
    let mut seqs = Vec::new();
    while let Some(r) = tasks.join_next().await {
        seqs.push(r.unwrap());
    }
    seqs.sort();
    assert_eq!(seqs, (1..=40).collect::<Vec<u64>>());
    let syncs = disk.syncs.load(Ordering::SeqCst);
    assert!(syncs < 10, "40 records, {syncs} syncs");
    // Every record is in the log, in sequence order.
    let log = backend.wal_read("default").await.unwrap();
    assert_eq!(
        log.iter().map(WalRecord::seq).collect::<Vec<_>>(),
        (1..=40).collect::<Vec<u64>>()
    );
}
