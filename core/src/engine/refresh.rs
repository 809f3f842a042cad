//! Refresh: reading every object state knows, before the plan compares anything.
//!
//! Reads do not depend on the configuration (only on ids and last applied values), so they
//! all start at once, bounded by the parallelism, and a kind that can read many objects in
//! one call (a list per parent) does so. A plan is then bounded by the service, not by
//! reading objects one after another; and the walk runs while they are made, each
//! instance waiting for its own read only.

use super::Engine;
use super::instance::merged_from;
use crate::provider::{OpContext, ProviderResult, Remote};
use brickform_state::{ResourceMode, StateDocument};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// A read started before the walk, taken by the instance it is for: its result arrives
/// once the read is made.
pub type Reading = tokio::sync::oneshot::Receiver<ProviderResult<Option<Remote>>>;

/// Where the result of one read goes.
type Answer = tokio::sync::oneshot::Sender<ProviderResult<Option<Remote>>>;

/// One object of a kind's batched read: its id and last applied values.
type Batched = (String, crate::value::Object);

/// What state knows of one instance to read: its address, id and last applied values, and
/// where its result goes.
type Known = (String, String, crate::value::Object, Answer);

/// The reads of a refresh, started: each instance's by its address, and the tasks making
/// them.
pub(super) struct Reads {
    pub pending: HashMap<crate::addrs::InstanceAddr, Reading>,
    tasks: JoinSet<()>,
}

impl Reads {
    /// No reads (no refresh).
    pub fn none() -> Reads {
        Reads {
            pending: HashMap::new(),
            tasks: JoinSet::new(),
        }
    }

    /// Waits for the reads still under way, so the plan makes every read it started.
    pub async fn finish(mut self) {
        while self.tasks.join_next().await.is_some() {}
    }
}

impl Engine<'_> {
    /// Starts reading every object state knows, within `calls` (the plan's call slots,
    /// which the walk shares; one kind reads at most `parallelism` objects at once, each
    /// waiting for slots for its requests): the walk starts at once, and an instance waits only for its
    /// own read, so the plan's work overlaps the reads instead of following them.
    pub(super) fn start_refresh(
        &self,
        state: &StateDocument,
        importing: &BTreeMap<crate::addrs::InstanceAddr, String>,
        left_out: &std::collections::HashSet<crate::addrs::ResourceAddr>,
        calls: &Arc<Semaphore>,
        parallelism: usize,
    ) -> Reads {
        let mut pending = HashMap::new();
        // Group what state knows by provider configuration and kind.
        let mut by_kind: BTreeMap<(&str, &str), Vec<&brickform_state::ResourceState>> =
            BTreeMap::new();
        for r in state.resources() {
            if r.mode() != ResourceMode::Managed
                || importing.contains_key(&r.addr)
                || left_out.contains(r.resource())
                || self.registry_for(&r.provider).kind(r.type_name()).is_none()
            {
                continue;
            }
            by_kind
                .entry((r.provider.as_str(), r.type_name()))
                .or_default()
                .push(r);
        }
        // Converting what state holds takes time for many large objects (tens of
        // milliseconds for 200 jobs of 20 tasks), and a kind's reads start once its own
        // objects are converted: the kinds with fewest objects first, so their reads are
        // made while the larger kinds are converted instead of after them.
        let mut kinds: Vec<_> = by_kind.into_iter().collect();
        kinds.sort_by_key(|(_, objects)| objects.len());
        let lineage = state.lineage().to_string();
        // One task per kind, all at once: a kind's batched read (a few listings) must not
        // wait for another kind's, or a plan takes one round trip per kind.
        let mut tasks = JoinSet::new();
        for ((provider, type_name), objects) in kinds {
            let Some(kind) = self.registry_for(provider).kind(type_name).cloned() else {
                continue;
            };
            let items: Vec<Known> = objects
                .into_iter()
                .map(|r| {
                    let (answer, reading) = tokio::sync::oneshot::channel();
                    pending.insert(r.addr.clone(), reading);
                    // The last applied values as references see them, converted straight
                    // from the state entry (as `Prior::merged` would make them from its
                    // two halves).
                    (
                        r.address(),
                        r.id.clone(),
                        merged_from(r, kind.schema()),
                        answer,
                    )
                })
                .collect();
            let ctx = self.op_context(type_name, &lineage);
            let reading = read_kind(kind, ctx, items, parallelism);
            tasks.spawn(crate::call_slots::within(calls.clone(), reading));
        }
        Reads { pending, tasks }
    }
}

/// Reads one kind's objects: batched when the kind can, else one by one, `limit` at once;
/// each result goes to its instance as soon as it is read. Run within the plan's call
/// slots, which each request takes.
async fn read_kind(
    kind: Arc<dyn crate::provider::ResourceKind>,
    ctx: OpContext,
    items: Vec<Known>,
    limit: usize,
) {
    // The priors are moved into the batch, not copied, and back out of it when the kind
    // reads one by one.
    let (answers, batch): (Vec<(String, Answer)>, Vec<Batched>) = items
        .into_iter()
        .map(|(address, id, p, answer)| ((address, answer), (id, p)))
        .unzip();
    if let Some(results) = kind.read_many(&ctx, &batch).await
        && results.len() == answers.len()
    {
        for ((_, answer), r) in answers.into_iter().zip(results) {
            // The plan may have stopped waiting: nothing to do with the result then.
            let _ = answer.send(r);
        }
        return;
    }
    let each = answers.into_iter().zip(batch);
    // A read whose task did not finish drops its answer: its instance is told so there.
    crate::fan_out::bounded(
        "reading objects",
        each,
        limit,
        |((address, answer), (id, prior))| {
            let kind = kind.clone();
            let ctx = OpContext {
                address,
                ..ctx.clone()
            };
            async move {
                let r = kind.read(&ctx, &id, &prior).await;
                let _ = answer.send(r);
            }
        },
    )
    .await;
}
