//! Crash safety of the write-ahead log: a log cut at any point (every record boundary and
//! inside records) replays to exactly the state the completed calls produced, and reports
//! exactly the calls that were started but have no result.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use brickform_state::{
    Backend, LocalBackend, Outcome, ResourceState, StateDocument, WalOp, recover,
};
use serde_json::json;

const SECRET: &str = "wal-secret-value-9f8e7d";

/// One step of a simulated apply: start a call, or finish one.
enum Step {
    Start {
        key: &'static str,
        op: WalOp,
        address: &'static str,
    },
    Finish {
        key: &'static str,
        outcome: End,
    },
}

enum End {
    Stored(u32),
    Deleted,
    Forgotten,
    Failed,
}

fn resource(doc: &StateDocument, address: &str, version: u32) -> ResourceState {
    let mut r = ResourceState::new(address, "databricks", &format!("{address}#{version}")).unwrap();
    r.config = json!({"name": address, "version": version, "options": {"password": SECRET}})
        .as_object()
        .unwrap()
        .clone();
    r.computed = json!({"url": format!("https://x/{address}")})
        .as_object()
        .unwrap()
        .clone();
    r.dependencies = vec![brickform_state::InstanceAddr::parse("databricks_catalog.base").unwrap()];
    doc.redact(&mut r, &["options.password"]);
    r
}

fn steps() -> Vec<Step> {
    use End::*;
    use Step::*;
    vec![
        Start {
            key: "c1",
            op: WalOp::Create,
            address: "databricks_schema.a",
        },
        Start {
            key: "c2",
            op: WalOp::Create,
            address: "databricks_schema.b",
        },
        Finish {
            key: "c1",
            outcome: Stored(1),
        },
        Start {
            key: "u1",
            op: WalOp::Update,
            address: "databricks_job.old",
        },
        Finish {
            key: "c2",
            outcome: Failed,
        },
        Start {
            key: "d1",
            op: WalOp::Delete,
            address: "databricks_volume.gone",
        },
        Finish {
            key: "u1",
            outcome: Stored(2),
        },
        Finish {
            key: "d1",
            outcome: Deleted,
        },
        Start {
            key: "i1",
            op: WalOp::Import,
            address: "databricks_catalog.imported",
        },
        Start {
            key: "c3",
            op: WalOp::Create,
            address: "databricks_schema.c[\"eu\"]",
        },
        Finish {
            key: "i1",
            outcome: Stored(1),
        },
        Start {
            key: "f1",
            op: WalOp::Forget,
            address: "databricks_job.forgotten",
        },
        Finish {
            key: "f1",
            outcome: Forgotten,
        },
        Start {
            key: "u2",
            op: WalOp::Update,
            address: "databricks_schema.a",
        },
        Finish {
            key: "u2",
            outcome: Stored(3),
        },
        Start {
            key: "d2",
            op: WalOp::Delete,
            address: "databricks_schema.a",
        },
        Finish {
            key: "c3",
            outcome: Stored(1),
        },
        Finish {
            key: "d2",
            outcome: Deleted,
        },
        // In flight when the process dies: never finishes.
        Start {
            key: "c4",
            op: WalOp::Create,
            address: "databricks_schema.lost",
        },
    ]
}

/// What the log must replay to after `records` whole records: the document and the sequence
/// numbers of the intents still open.
#[derive(Clone)]
struct Expected {
    len: usize,
    doc: StateDocument,
    open: BTreeSet<u64>,
}

struct Written {
    base: StateDocument,
    wal: Vec<u8>,
    /// Index i: the state after i whole records.
    expected: Vec<Expected>,
}

async fn write_log(dir: &Path) -> Written {
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::in_state_dir(dir));
    let mut base = StateDocument::new("dev");
    for address in [
        "databricks_catalog.base",
        "databricks_job.old",
        "databricks_volume.gone",
        "databricks_job.forgotten",
    ] {
        base.insert(resource(&base, address, 0)).unwrap();
    }
    backend.save("dev", &mut base).await.unwrap();

    let recovery = recover(backend.clone(), "dev").await.unwrap();
    assert!(recovery.unresolved.is_empty());
    let journal = recovery.journal;
    let mut live = recovery.document;

    let wal_path = dir.join("dev.wal");
    let wal_len = || {
        std::fs::metadata(&wal_path)
            .map(|m| m.len() as usize)
            .unwrap_or(0)
    };

    // The model is maintained by hand, independently of replay.
    let mut model = base.clone();
    let mut open = BTreeSet::new();
    let mut expected = vec![Expected {
        len: 0,
        doc: model.clone(),
        open: open.clone(),
    }];
    let mut started: BTreeMap<&str, (u64, &str)> = BTreeMap::new();

    for step in steps() {
        match step {
            Step::Start { key, op, address } => {
                let seq = journal
                    .intent(
                        op,
                        address,
                        "databricks_schema",
                        Some(address.to_string()),
                        None,
                    )
                    .await
                    .unwrap();
                started.insert(key, (seq, address));
                open.insert(seq);
            }
            Step::Finish { key, outcome } => {
                let (seq, address) = started[key];
                let outcome = match outcome {
                    End::Stored(v) => {
                        let r = resource(&model, address, v);
                        model.upsert(r.clone());
                        Outcome::Created(r)
                    }
                    End::Deleted => {
                        model
                            .remove(&brickform_state::InstanceAddr::parse(address).unwrap())
                            .unwrap();
                        Outcome::Deleted {}
                    }
                    End::Forgotten => {
                        model
                            .remove(&brickform_state::InstanceAddr::parse(address).unwrap())
                            .unwrap();
                        Outcome::Forgotten {}
                    }
                    End::Failed => Outcome::Failed("PERMISSION_DENIED".into()),
                };
                journal.result(seq, outcome, &mut live).await.unwrap();
                // A result is written with the next group of records; cutting the log at
                // every record needs each one written on its own.
                journal.sync().await.unwrap();
                open.remove(&seq);
            }
        }
        expected.push(Expected {
            len: wal_len(),
            doc: model.clone(),
            open: open.clone(),
        });
    }
    assert_eq!(live, model, "the journal keeps the live document in step");

    let wal = std::fs::read(&wal_path).unwrap();
    assert!(
        !String::from_utf8_lossy(&wal).contains(SECRET),
        "a secret reached the write-ahead log"
    );
    Written {
        base,
        wal,
        expected,
    }
}

/// Recovers from a copy of the state with the log cut to `len` bytes.
async fn recover_cut(
    written: &Written,
    len: usize,
) -> (
    StateDocument,
    BTreeSet<u64>,
    Arc<dyn Backend>,
    tempfile::TempDir,
) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::in_state_dir(&dir));
    let mut base = written.base.clone();
    // Same lineage, same content: write it through a fresh directory.
    backend.save("dev", &mut base).await.unwrap();
    std::fs::write(dir.join("dev.wal"), &written.wal[..len]).unwrap();
    let recovery = recover(backend.clone(), "dev").await.unwrap();
    assert!(recovery.existed);
    let open = recovery.unresolved.iter().map(|i| i.seq).collect();
    (recovery.document, open, backend, tmp)
}

fn same_content(actual: &StateDocument, expected: &StateDocument, what: &str) {
    assert_eq!(actual.lineage(), expected.lineage(), "{what}");
    assert_eq!(actual.resources(), expected.resources(), "{what}");
    assert_eq!(actual.outputs(), expected.outputs(), "{what}");
}

#[tokio::test]
async fn every_cut_replays_to_the_prefix_state() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_log(dir.path()).await;
    let expected = &written.expected;
    assert_eq!(expected.last().unwrap().len, written.wal.len());

    for (i, exp) in expected.iter().enumerate() {
        let (doc, open, _, _dir) = recover_cut(&written, exp.len).await;
        same_content(&doc, &exp.doc, &format!("cut after {i} records"));
        assert_eq!(open, exp.open, "open intents after {i} records");

        // Cuts inside the next record: after its first byte, halfway, and all but its newline.
        if let Some(next) = expected.get(i + 1) {
            let record_len = next.len - exp.len;
            for inside in [1, record_len / 2, record_len - 1] {
                let (doc, open, _, _dir) = recover_cut(&written, exp.len + inside).await;
                let what = format!("cut {inside} bytes into record {}", i + 1);
                same_content(&doc, &exp.doc, &what);
                assert_eq!(open, exp.open, "{what}");
            }
        }
    }
}

#[tokio::test]
async fn appending_after_a_torn_record_keeps_the_log_readable() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_log(dir.path()).await;
    let cut = written.expected[3].len + 7;
    let (mut doc, open, backend, _dir) = recover_cut(&written, cut).await;
    assert_eq!(open, written.expected[3].open);

    let recovery = recover(backend.clone(), "dev").await.unwrap();
    let seq = recovery
        .journal
        .intent(
            WalOp::Create,
            "databricks_schema.z",
            "databricks_schema",
            None,
            None,
        )
        .await
        .unwrap();
    let r = resource(&doc, "databricks_schema.z", 1);
    recovery
        .journal
        .result(seq, Outcome::Created(r.clone()), &mut doc)
        .await
        .unwrap();

    let records = backend.wal_read("dev").await.unwrap();
    assert_eq!(
        records.len(),
        3 + 2,
        "the torn record was cut off, ours appended whole"
    );
    let again = recover(backend.clone(), "dev").await.unwrap();
    assert_eq!(
        again
            .document
            .get(&brickform_state::InstanceAddr::parse("databricks_schema.z").unwrap()),
        Some(&r)
    );
}

#[tokio::test]
async fn checkpoint_saves_then_truncates_and_replay_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_log(dir.path()).await;
    let full = written.expected.last().unwrap().clone();
    let (mut doc, open, backend, _dir) = recover_cut(&written, full.len).await;
    assert_eq!(open.len(), 1);

    // A crash after the save but before the truncation replays the log over a state that
    // already holds it: nothing may change.
    backend.save("dev", &mut doc).await.unwrap();
    let after_crash = recover(backend.clone(), "dev").await.unwrap();
    same_content(
        &after_crash.document,
        &full.doc,
        "replay over a saved state",
    );

    // With a call still open the checkpoint saves but keeps the log, so the intent survives.
    let mut doc = after_crash.document;
    let open_seq = after_crash.unresolved[0].seq;
    after_crash.journal.checkpoint(&mut doc).await.unwrap();
    assert_eq!(
        backend.wal_read("dev").await.unwrap().len(),
        written.expected.len() - 1
    );

    // Once resolved (the lookup found nothing: the create never happened) it truncates.
    after_crash
        .journal
        .result(
            open_seq,
            Outcome::Failed("not found by natural key".into()),
            &mut doc,
        )
        .await
        .unwrap();
    let serial = doc.serial();
    after_crash.journal.checkpoint(&mut doc).await.unwrap();
    assert_eq!(doc.serial(), serial + 1);
    assert!(backend.wal_read("dev").await.unwrap().is_empty());
    let fresh = recover(backend, "dev").await.unwrap();
    assert!(fresh.unresolved.is_empty());
    same_content(&fresh.document, &full.doc, "after checkpoint");
}

/// A result is not waited for when its intent can find the object again (a create with a
/// natural key): it is written with the next record, or by `sync`. A create that nothing
/// could find again still writes its result before going on.
#[tokio::test]
async fn results_ride_with_the_next_record_unless_only_they_can_find_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::in_state_dir(dir.path()));
    let rec = recover(backend.clone(), "dev").await.unwrap();
    let mut doc = rec.document;
    backend.save("dev", &mut doc).await.unwrap();
    let journal = rec.journal;
    let records = || backend.wal_read("dev");

    let keyed = journal
        .intent(WalOp::Create, "t.a", "t", Some("a".into()), None)
        .await
        .unwrap();
    let r = ResourceState::new("t.a", "p", "a").unwrap();
    journal
        .result(keyed, Outcome::Created(r), &mut doc)
        .await
        .unwrap();
    assert_eq!(records().await.unwrap().len(), 1, "the result waits");
    assert_eq!(doc.resources().len(), 1, "the document has it at once");

    let unkeyed = journal
        .intent(WalOp::Create, "t.b", "t", None, None)
        .await
        .unwrap();
    assert_eq!(
        records().await.unwrap().len(),
        3,
        "written with the next intent"
    );
    let r = ResourceState::new("t.b", "p", "b").unwrap();
    journal
        .result(unkeyed, Outcome::Created(r), &mut doc)
        .await
        .unwrap();
    assert_eq!(
        records().await.unwrap().len(),
        4,
        "only the result finds it"
    );

    let keyed = journal
        .intent(WalOp::Delete, "t.a", "t", None, Some("a".into()))
        .await
        .unwrap();
    journal
        .result(keyed, Outcome::Deleted {}, &mut doc)
        .await
        .unwrap();
    assert_eq!(records().await.unwrap().len(), 5);
    journal.sync().await.unwrap();
    assert_eq!(records().await.unwrap().len(), 6);
}
