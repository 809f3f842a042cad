//! The write-ahead log: JSON lines recording each mutating API call before it is made (intent)
//! and after it returns (result), so a crash between the call and the next state save loses
//! nothing. `replay` folds completed calls into a document and hands back the calls whose fate
//! is unknown, for the engine to resolve by looking the object up.
//!
//! Records are self-contained (a result carries the whole resource), which makes replay
//! idempotent: replaying a log over a state that already includes it changes nothing, so a
//! crash between saving the state and truncating the log is harmless.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::address::InstanceAddr;
use crate::document::{ResourceState, StateDocument};
use crate::error::{Result, StateError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WalOp {
    Create,
    Update,
    Delete,
    Import,
    Forget,
}

/// Written (and fsynced) before the API call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    pub seq: u64,
    pub op: WalOp,
    pub address: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    /// What the object can be found by if the result never got written (a UC full name, a
    /// workspace path); `None` for kinds found by their ownership tag instead.
    pub natural_key: Option<String>,
    /// The object's id, when it has one already (update, delete, import). For the create of
    /// a `create_before_destroy` replacement, the id of the object it replaces, which the
    /// result keeps in state as deposed.
    pub id: Option<String>,
    /// The run that wrote it. Two runs can write one log (a force-unlocked run that still
    /// went on, and its successor); each numbers its records from where the log was, so a
    /// sequence number alone does not name one intent. Absent in older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<Uuid>,
    /// For the create of a kind that takes a token (repeating the create with the same token
    /// returns what the first call made): the token sent. An interrupted create with a token
    /// is not looked up; the token is kept for the next create of the address. Absent in
    /// older logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// What the API call did. A resource carried here has already had its secrets redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Created(ResourceState),
    Updated(ResourceState),
    Imported(ResourceState),
    Deleted {},
    /// Removed from state without touching the object.
    Forgotten {},
    /// The call failed and changed nothing that brickform tracks.
    Failed(String),
    /// A create with a token whose outcome is unknown and cannot be found out without
    /// repeating it: the intent's token is kept in the state (`pending_token`) so the next
    /// create of the address sends it again and gets what this one may have made.
    Pending {},
}

/// Written (and fsynced) after the API call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    pub seq: u64,
    pub intent_seq: u64,
    pub outcome: Outcome,
    /// The run that wrote it (see `Intent::writer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<Uuid>,
    /// The run that wrote the intent: a run that recovers another's interrupted call
    /// records the result of that run's intent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_writer: Option<Uuid>,
}

// Records live only between an append and a write; boxing the resource would only add noise at
// every construction site.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "lowercase")]
pub enum WalRecord {
    Intent(Intent),
    Result(ResultRecord),
}

impl WalRecord {
    pub fn seq(&self) -> u64 {
        match self {
            WalRecord::Intent(i) => i.seq,
            WalRecord::Result(r) => r.seq,
        }
    }

    /// The record as one log line, newline included.
    pub fn to_line(&self) -> Result<Vec<u8>> {
        let mut line = serde_json::to_vec(self).map_err(|source| StateError::Encode {
            what: "write-ahead log record",
            source,
        })?;
        line.push(b'\n');
        Ok(line)
    }
}

/// The records of a log, and how many bytes of it are whole records (anything after is a torn
/// final write, which the next append cuts off).
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLog {
    pub records: Vec<WalRecord>,
    pub valid_len: usize,
}

/// Parses log bytes. A final line that is incomplete or unreadable is a write the crash tore
/// and is ignored: its caller was still waiting for the fsync, so it never acted on it. An
/// unreadable line anywhere else is real corruption and an error naming `path` and the line.
pub fn parse_log(path: &Path, bytes: &[u8]) -> Result<ParsedLog> {
    let mut records = Vec::new();
    let mut offset = 0;
    let mut line_no = 0;
    while offset < bytes.len() {
        line_no += 1;
        let rest = &bytes[offset..];
        let Some(newline) = rest.iter().position(|&b| b == b'\n') else {
            break;
        };
        let line = &rest[..newline];
        let next = offset + newline + 1;
        let is_last = bytes[next..].iter().all(u8::is_ascii_whitespace);
        if line.iter().all(u8::is_ascii_whitespace) {
            offset = next;
            continue;
        }
        match serde_json::from_slice::<WalRecord>(line) {
            Ok(record) => records.push(record),
            Err(_) if is_last => break,
            Err(source) => {
                return Err(StateError::WalCorrupt {
                    path: path.to_path_buf(),
                    line: line_no,
                    source,
                });
            }
        }
        offset = next;
    }
    Ok(ParsedLog {
        records,
        valid_len: offset,
    })
}

/// Applies every completed call in `records` to `doc`, in log order, and returns the intents
/// that have no result, in sequence order.
///
/// A result whose intent is not in the log is not an error: a second run writing the same
/// log (after a force-unlock) may have truncated it while the first still went on. Such a
/// result still records an object it made (it carries the whole resource); a delete or
/// forget without its intent cannot say what it removed and is skipped.
pub fn replay(doc: &mut StateDocument, records: &[WalRecord]) -> Result<Vec<Intent>> {
    let mut pending: BTreeMap<(Option<Uuid>, u64), &Intent> = BTreeMap::new();
    for record in records {
        match record {
            WalRecord::Intent(intent) => {
                pending.insert((intent.writer, intent.seq), intent);
            }
            WalRecord::Result(result) => {
                match pending.remove(&(result.intent_writer, result.intent_seq)) {
                    Some(intent) => apply(doc, intent, result.outcome.clone()),
                    None => match &result.outcome {
                        Outcome::Created(r) | Outcome::Updated(r) | Outcome::Imported(r) => {
                            doc.upsert(r.clone());
                        }
                        Outcome::Deleted {}
                        | Outcome::Forgotten {}
                        | Outcome::Failed(_)
                        | Outcome::Pending {} => {}
                    },
                }
            }
        }
    }
    let mut open: Vec<Intent> = pending.into_values().cloned().collect();
    open.sort_by_key(|i| i.seq);
    Ok(open)
}

/// What the result `outcome` of `intent` does to `doc`. It takes the outcome, so a run that
/// logs a result moves its state entry into the document (the log writes its own copy).
pub(crate) fn apply(doc: &mut StateDocument, intent: &Intent, outcome: Outcome) {
    match outcome {
        Outcome::Created(resource) => {
            // The create of a create_before_destroy replacement names the object it
            // replaces: that one is kept, deposed, until its delete is recorded.
            if let Some(old) = &intent.id
                && doc
                    .get(&resource.addr)
                    .is_some_and(|r| &r.id == old && r.id != resource.id)
            {
                doc.depose(&resource.addr);
            }
            // What an earlier, unresolved create of the address may have made is what this
            // one got, sent with its token; or an object the address no longer wants.
            doc.clear_pending_token(&resource.addr);
            doc.upsert(resource);
        }
        Outcome::Imported(resource) => {
            doc.clear_pending_token(&resource.addr);
            doc.upsert(resource);
        }
        Outcome::Updated(resource) => {
            doc.upsert(resource);
        }
        // The log names the intent's instance by its text; one that is no address was not
        // written by brickform and names nothing in the state.
        other => {
            if let Ok(addr) = InstanceAddr::parse(&intent.address) {
                apply_to(doc, intent, &addr, &other);
            }
        }
    }
}

/// What an outcome without a resource does to the instance `addr` its intent names.
fn apply_to(doc: &mut StateDocument, intent: &Intent, addr: &InstanceAddr, outcome: &Outcome) {
    match outcome {
        Outcome::Deleted {} | Outcome::Forgotten {} => match &intent.id {
            // The object of the intent is a deposed one when another holds the address.
            Some(id) if doc.get(addr).is_none_or(|r| &r.id != id) => {
                doc.remove_deposed(addr, id);
            }
            _ => {
                doc.remove(addr);
            }
        },
        Outcome::Pending {} => {
            if let Some(token) = &intent.token {
                doc.set_pending_token(addr, token);
            }
        }
        // The service answered a create with its token, and made nothing: the token found no
        // run to return (or one it refuses, a deleted run's), so the next create starts afresh.
        Outcome::Failed(_) => {
            if intent.op == WalOp::Create && intent.token.is_some() {
                doc.clear_pending_token(addr);
            }
        }
        Outcome::Created(_) | Outcome::Imported(_) | Outcome::Updated(_) => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn intent(seq: u64, op: WalOp, address: &str) -> WalRecord {
        WalRecord::Intent(Intent {
            seq,
            op,
            address: address.into(),
            resource_type: "t".into(),
            natural_key: Some(address.into()),
            id: None,
            writer: None,
            token: None,
        })
    }

    fn result(seq: u64, intent_seq: u64, outcome: Outcome) -> WalRecord {
        WalRecord::Result(ResultRecord {
            seq,
            intent_seq,
            outcome,
            writer: None,
            intent_writer: None,
        })
    }

    #[test]
    fn record_wire_shape() {
        let line = String::from_utf8(intent(1, WalOp::Create, "t.a").to_line().unwrap()).unwrap();
        assert_eq!(
            line,
            "{\"record\":\"intent\",\"seq\":1,\"op\":\"create\",\"address\":\"t.a\",\"type\":\"t\",\"natural_key\":\"t.a\",\"id\":null}\n"
        );
        let line = String::from_utf8(result(2, 1, Outcome::Deleted {}).to_line().unwrap()).unwrap();
        assert_eq!(
            line,
            "{\"record\":\"result\",\"seq\":2,\"intent_seq\":1,\"outcome\":{\"deleted\":{}}}\n"
        );
        let failed = result(3, 1, Outcome::Failed("boom".into()));
        let back: WalRecord = serde_json::from_slice(&failed.to_line().unwrap()).unwrap();
        assert_eq!(back, failed);
    }

    #[test]
    fn replay_applies_results_and_returns_open_intents() {
        let mut doc = StateDocument::new("dev");
        let a = ResourceState::new("t.a", "p", "1").unwrap();
        let records = vec![
            intent(1, WalOp::Create, "t.a"),
            intent(2, WalOp::Create, "t.b"),
            result(3, 1, Outcome::Created(a.clone())),
            intent(4, WalOp::Delete, "t.a"),
            intent(5, WalOp::Create, "t.c"),
            result(6, 5, Outcome::Failed("nope".into())),
        ];
        let open = replay(&mut doc, &records).unwrap();
        assert_eq!(doc.get(&InstanceAddr::parse("t.a").unwrap()), Some(&a));
        assert!(doc.get(&InstanceAddr::parse("t.c").unwrap()).is_none());
        let seqs: Vec<_> = open.iter().map(|i| i.seq).collect();
        assert_eq!(seqs, [2, 4]);

        let mut again = doc.clone();
        replay(&mut again, &records).unwrap();
        assert_eq!(again, doc, "replay is idempotent");
    }

    #[test]
    fn a_create_before_destroy_keeps_the_old_object_deposed_until_its_delete() {
        let mut doc = StateDocument::new("dev");
        doc.insert(ResourceState::new("t.a", "p", "old").unwrap())
            .unwrap();
        let new = ResourceState::new("t.a", "p", "new").unwrap();
        let with_id = |seq, op, id: &str| match intent(seq, op, "t.a") {
            WalRecord::Intent(i) => WalRecord::Intent(Intent {
                id: Some(id.into()),
                ..i
            }),
            r => r,
        };
        // The new copy's create names the object it replaces.
        let created = vec![
            with_id(1, WalOp::Create, "old"),
            result(2, 1, Outcome::Created(new.clone())),
        ];
        replay(&mut doc, &created).unwrap();
        assert_eq!(doc.get(&InstanceAddr::parse("t.a").unwrap()), Some(&new));
        let deposed: Vec<&str> = doc.deposed().iter().map(|r| r.id.as_str()).collect();
        assert_eq!(deposed, ["old"]);
        // Replaying it again changes nothing.
        let mut again = doc.clone();
        replay(&mut again, &created).unwrap();
        assert_eq!(again, doc);
        // The old copy's delete drops the deposed object, not the new one.
        let deleted = vec![
            with_id(3, WalOp::Delete, "old"),
            result(4, 3, Outcome::Deleted {}),
        ];
        replay(&mut doc, &deleted).unwrap();
        assert_eq!(doc.get(&InstanceAddr::parse("t.a").unwrap()), Some(&new));
        assert!(doc.deposed().is_empty());
        replay(&mut doc, &deleted).unwrap();
        assert_eq!(
            doc.get(&InstanceAddr::parse("t.a").unwrap()),
            Some(&new),
            "replay is idempotent"
        );
        // A create that names nothing replaces what the address held (it was gone).
        let recreated = ResourceState::new("t.a", "p", "newer").unwrap();
        replay(
            &mut doc,
            &[
                intent(5, WalOp::Create, "t.a"),
                result(6, 5, Outcome::Created(recreated.clone())),
            ],
        )
        .unwrap();
        assert_eq!(
            doc.get(&InstanceAddr::parse("t.a").unwrap()),
            Some(&recreated)
        );
        assert!(doc.deposed().is_empty());
    }

    #[test]
    fn two_runs_writing_one_log_are_told_apart() {
        // A force-unlocked run (a) went on while its successor (b) recovered and wrote; both
        // numbered records from 1, and b truncated the log once in between.
        let (a, b) = (Some(Uuid::new_v4()), Some(Uuid::new_v4()));
        let tagged = |r: WalRecord, w: Option<Uuid>| match r {
            WalRecord::Intent(i) => WalRecord::Intent(Intent { writer: w, ..i }),
            WalRecord::Result(r) => WalRecord::Result(ResultRecord {
                writer: w,
                intent_writer: w,
                ..r
            }),
        };
        let ra = ResourceState::new("t.a", "p", "1").unwrap();
        let rb = ResourceState::new("t.b", "p", "2").unwrap();
        let records = vec![
            tagged(intent(1, WalOp::Create, "t.a"), a),
            tagged(intent(1, WalOp::Create, "t.b"), b),
            // a's result for its intent 1 must not resolve b's.
            tagged(result(2, 1, Outcome::Created(ra.clone())), a),
            tagged(intent(3, WalOp::Create, "t.c"), b),
            // A result whose intent went with a truncation.
            tagged(result(9, 7, Outcome::Created(rb.clone())), a),
            tagged(result(10, 8, Outcome::Deleted {}), a),
        ];
        let mut doc = StateDocument::new("dev");
        let open = replay(&mut doc, &records).unwrap();
        assert_eq!(doc.get(&InstanceAddr::parse("t.a").unwrap()), Some(&ra));
        assert_eq!(
            doc.get(&InstanceAddr::parse("t.b").unwrap()),
            Some(&rb),
            "an object made is still recorded"
        );
        let open: Vec<(&str, Option<Uuid>)> = open
            .iter()
            .map(|i| (i.address.as_str(), i.writer))
            .collect();
        assert_eq!(open, [("t.b", b), ("t.c", b)]);
    }

    #[test]
    fn an_unresolved_create_with_a_token_keeps_it_until_the_address_is_created() {
        let with_token = match intent(1, WalOp::Create, "t.run") {
            WalRecord::Intent(i) => WalRecord::Intent(Intent {
                natural_key: None,
                token: Some("tok-1".into()),
                ..i
            }),
            r => r,
        };
        // An intent written before tokens existed still loads.
        let old = "{\"record\":\"intent\",\"seq\":1,\"op\":\"create\",\"address\":\"t.a\",\"type\":\"t\",\"natural_key\":null,\"id\":null}";
        let back: WalRecord = serde_json::from_str(old).unwrap();
        assert!(matches!(
            back,
            WalRecord::Intent(Intent { token: None, .. })
        ));

        let mut doc = StateDocument::new("dev");
        let pending = vec![with_token.clone(), result(2, 1, Outcome::Pending {})];
        replay(&mut doc, &pending).unwrap();
        assert_eq!(
            doc.pending_token(&crate::address::InstanceAddr::parse("t.run").unwrap()),
            Some("tok-1")
        );
        assert!(doc.get(&InstanceAddr::parse("t.run").unwrap()).is_none());
        // It survives a save and load of the document.
        let text = serde_json::to_string(&doc).unwrap();
        let loaded: StateDocument = serde_json::from_str(&text).unwrap();
        assert_eq!(
            loaded.pending_token(&crate::address::InstanceAddr::parse("t.run").unwrap()),
            Some("tok-1")
        );
        // A failed create keeps nothing.
        let mut other = StateDocument::new("dev");
        replay(
            &mut other,
            &[with_token, result(2, 1, Outcome::Failed("no".into()))],
        )
        .unwrap();
        assert_eq!(
            other.pending_token(&crate::address::InstanceAddr::parse("t.run").unwrap()),
            None
        );
        // A create with it that the service refused keeps nothing either.
        let mut refused = doc.clone();
        let again = match intent(5, WalOp::Create, "t.run") {
            WalRecord::Intent(i) => WalRecord::Intent(Intent {
                token: Some("tok-1".into()),
                ..i
            }),
            r => r,
        };
        replay(
            &mut refused,
            &[again, result(6, 5, Outcome::Failed("deleted run".into()))],
        )
        .unwrap();
        assert_eq!(
            refused.pending_token(&crate::address::InstanceAddr::parse("t.run").unwrap()),
            None
        );
        // The next create of the address is recorded: the token is done with.
        let made = ResourceState::new("t.run", "p", "7").unwrap();
        replay(
            &mut doc,
            &[
                intent(3, WalOp::Create, "t.run"),
                result(4, 3, Outcome::Created(made)),
            ],
        )
        .unwrap();
        assert_eq!(
            doc.pending_token(&crate::address::InstanceAddr::parse("t.run").unwrap()),
            None
        );
        assert!(
            serde_json::to_value(&doc)
                .unwrap()
                .get("pending_tokens")
                .is_none()
        );
    }

    #[test]
    fn corrupt_middle_line_is_an_error_naming_the_file() {
        let mut bytes = intent(1, WalOp::Create, "t.a").to_line().unwrap();
        bytes.extend_from_slice(b"{garbage\n");
        bytes.extend(intent(2, WalOp::Create, "t.b").to_line().unwrap());
        let err = parse_log(Path::new("/x/dev.wal"), &bytes).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/x/dev.wal") && text.contains("line 2"),
            "{text}"
        );
    }

    #[test]
    fn unreadable_last_line_counts_as_torn() {
        let good = intent(1, WalOp::Create, "t.a").to_line().unwrap();
        let mut bytes = good.clone();
        bytes.extend_from_slice(b"\0\0\0\0\n");
        let parsed = parse_log(Path::new("dev.wal"), &bytes).unwrap();
        assert_eq!(parsed.records.len(), 1);
        assert_eq!(parsed.valid_len, good.len());
    }
}
