//! The one way a step changes anything: log the intent in the write-ahead log, make the
//! call, look the object up when the answer was lost (the call may have taken effect), and
//! record the result — in state through the log, and in the world for what refers to the
//! instance. The intent is durable before the call is made, so a crash during the call
//! leaves an intent the next run resolves by looking the object up; a result is recorded
//! for every call that answered, so state and the log never disagree.

use super::error::{EngineFailure, NodeError};
use super::evaluate::Sent;
use super::{Shared, Step, writing};
use crate::engine::instance::{Slot, merged_from, state_entry};
use crate::plan::{Mode, ResourceChange};
use crate::provider::{OpContext, ProviderError, ProviderResult, Remote};
use crate::value::{Object, PathStep, Value};
use brickform_state::{Outcome as WalOutcome, ResourceState, WalOp};

/// How a call's result is logged, by the object it recorded: created, updated, imported.
pub(super) type Recorded = fn(ResourceState) -> WalOutcome;

impl Step<'_> {
    /// Logs that `op` is about to be made on the object `id`; the intent's sequence number.
    pub(super) async fn intent(&self, op: WalOp, id: Option<String>) -> Result<u64, NodeError> {
        let c = self.change;
        Ok(self
            .shared
            .journal
            .intent(op, &c.address(), c.type_name(), None, id)
            .await?)
    }

    /// Logs that a create is about to be made: what finds its object should the answer be
    /// lost (`natural_key`), the object it replaces, and the token it sends.
    pub(super) async fn create_intent(
        &self,
        natural_key: Option<String>,
        replaces: Option<String>,
        token: Option<String>,
    ) -> Result<u64, NodeError> {
        let c = self.change;
        Ok(self
            .shared
            .journal
            .intent_with_token(&c.address(), c.type_name(), natural_key, replaces, token)
            .await?)
    }

    /// Logs the result of call `seq`, applying it to state.
    pub(super) async fn close(&self, seq: u64, outcome: WalOutcome) -> Result<(), NodeError> {
        let mut doc = self.shared.doc.lock().await;
        self.shared.journal.result(seq, outcome, &mut doc).await?;
        Ok(())
    }

    /// A call that failed: logged as changing nothing state tracks, and the node's failure.
    pub(super) async fn failed<T>(&self, seq: u64, e: ProviderError) -> Result<T, NodeError> {
        self.close(seq, WalOutcome::Failed(e.message.clone()))
            .await?;
        Err(NodeError::Provider(e))
    }

    /// Settles call `seq` on an object that exists: the object it answered with recorded
    /// (as `recorded` says), or its failure. The id of the object.
    pub(super) async fn settle(
        &self,
        seq: u64,
        answer: ProviderResult<Remote>,
        sent: &Sent,
        recorded: Recorded,
    ) -> Result<Option<String>, NodeError> {
        match answer {
            Ok(remote) => {
                self.record(seq, &remote, sent, recorded).await?;
                Ok(Some(remote.id))
            }
            Err(e) => self.failed(seq, e).await,
        }
    }

    /// Records the object a call answered with, having been sent `sent`: in state through
    /// the log, then in the world for what refers to it.
    pub(super) async fn record(
        &self,
        seq: u64,
        remote: &Remote,
        sent: &Sent,
        recorded: Recorded,
    ) -> Result<(), NodeError> {
        let rs = self.entry(remote, sent)?;
        // What references see is made before the entry goes to the log, which keeps it;
        // an instance nothing reads needs none.
        let seen = self
            .work
            .referenced
            .then(|| merged_from(&rs, self.kind.schema()));
        self.close(seq, recorded(rs)).await?;
        if let Some(seen) = seen {
            set_world_value(self.shared, self.change, seen, sent);
        }
        Ok(())
    }

    /// The state entry of an object (a state entry that cannot be made fails the node with
    /// its intent left open).
    fn entry(&self, remote: &Remote, sent: &Sent) -> Result<ResourceState, NodeError> {
        let slot = Slot {
            addr: &self.change.addr,
            provider: &self.change.provider,
            dependencies: &self.change.dependencies,
        };
        // An entry that cannot be made fails this node only: the log is fine.
        state_entry(
            &self.shared.redactor,
            slot,
            self.kind,
            remote,
            &sent.config,
            &sent.sensitive,
        )
        .map_err(|e| NodeError::Engine(EngineFailure::StateEntry(e)))
    }

    /// A delete's answer, once a lost one is looked into: the delete may have happened
    /// though its answer was lost, and if the object is gone, it was deleted (and is not
    /// left in state for the next run to find).
    pub(super) async fn gone_after_lost_delete(
        &self,
        id: &str,
        answer: ProviderResult<()>,
    ) -> ProviderResult<()> {
        match answer {
            Err(e) if e.uncertain => match self.read(id).await {
                Ok(None) => {
                    tracing::debug!(address = %self.change.address(), %id, "a delete that failed had deleted the object");
                    Ok(())
                }
                _ => Err(e),
            },
            other => other,
        }
    }

    /// After a create whose answer was lost (`lost`): the create may have happened though
    /// it failed (a server error, a lost answer), so the object is looked for by its
    /// natural key before it counts as not made, and a second create cannot make a
    /// duplicate. The object found (finished), or `lost` when there is none. When looking
    /// fails too, the node fails with the intent left open: neither made nor known to be
    /// not made, and the next run looks again before it plans.
    pub(super) async fn found_after_lost_create(
        &self,
        ctx: &OpContext,
        natural_key: Option<&str>,
        lost: ProviderError,
    ) -> Result<ProviderResult<Remote>, NodeError> {
        let found = match natural_key {
            Some(key) => self.find_by_key(ctx, key).await,
            None => Ok(None),
        };
        match found {
            Ok(Some(remote)) => {
                tracing::debug!(address = %self.change.address(), id = %remote.id, "a create that failed had made the object");
                Ok(self.finish_found(ctx, remote).await)
            }
            Ok(None) => Ok(Err(lost)),
            Err(lookup) => Err(NodeError::Provider(ProviderError {
                message: format!(
                    "{} (it may have been created; looking for it failed too: {}; the next run looks again)",
                    lost.message, lookup.message
                ),
                ..lost
            })),
        }
    }

    /// What the create does after making the object may not have run: it runs now. An
    /// error carries the object, so it is recorded rather than orphaned.
    async fn finish_found(&self, ctx: &OpContext, remote: Remote) -> ProviderResult<Remote> {
        match self.complete_create(ctx, remote.clone()).await {
            Ok(done) => Ok(done),
            Err(ce) => Err(ProviderError {
                message: format!(
                    "created {}, but finishing its create failed: {}",
                    remote.id, ce.message
                ),
                ..ce
            }
            .made(remote)),
        }
    }
}

/// Puts `v` in the world as the instance of `change`: what references to an applied
/// instance see is the recorded state, with the sensitive values state holds only as
/// fingerprints taken from the evaluated configuration `sent` (in memory only), and marked
/// sensitive so whatever reads them is too.
pub(super) fn set_world_value(
    shared: &Shared,
    change: &ResourceChange,
    mut v: Object,
    sent: &Sent,
) {
    let mut world = writing(&shared.world);
    for p in sent.sensitive.iter().chain(&change.sensitive_paths) {
        if let Some(PathStep::Key(k)) = p.first() {
            if let Some(val) = sent.config.get(k) {
                v.insert(k.clone(), val.clone());
            }
            world.mark_sensitive(change.module(), change.type_name(), change.name(), k);
        }
    }
    world.set_instance(
        change.module(),
        Mode::Managed,
        change.type_name(),
        change.name(),
        change.key(),
        Value::object(v),
    );
}
