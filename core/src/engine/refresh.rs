//! Refresh: reading every object state knows, before the plan compares anything.
//!
//! Reads do not depend on the configuration (only on ids and last applied values), so they
//! all start at once, bounded by the parallelism, and a kind that can read many objects in
//! one call (a list per parent) does so. A plan is then bounded by the service, not by
//! reading objects one after another.

use super::instance::prior_of;
use super::{Engine, PlanRequest};
use crate::provider::{OpContext, ProviderResult, Remote};
use brickform_state::{ResourceMode, StateDocument};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Read results by instance address.
pub type Refreshed = HashMap<String, ProviderResult<Option<Remote>>>;

/// What state knows of one instance to read: its address, id and last applied values.
type Known = (String, String, crate::value::Object);

impl Engine<'_> {
    pub(super) async fn refresh_all(
        &self,
        state: &StateDocument,
        req: &PlanRequest,
        importing: &BTreeMap<String, String>,
        left_out: &std::collections::HashSet<String>,
    ) -> Refreshed {
        let parallelism = req.calls_in_flight();
        // Group what state knows by provider configuration and kind.
        let mut by_kind: BTreeMap<(&str, &str), Vec<Known>> = BTreeMap::new();
        for r in state.resources() {
            if r.mode != ResourceMode::Managed
                || importing.contains_key(&r.address)
                || left_out.contains(crate::addrs::base_of(&r.address))
                || self
                    .registry_for(&r.provider)
                    .kind(&r.resource_type)
                    .is_none()
            {
                continue;
            }
            let Some((id, prior)) = prior_of(state, &r.address) else {
                continue;
            };
            by_kind
                .entry((r.provider.as_str(), r.resource_type.as_str()))
                .or_default()
                .push((r.address.clone(), id, prior.merged()));
        }
        let sem = Arc::new(Semaphore::new(parallelism));
        let mut out = Refreshed::new();
        let lineage = state.lineage().to_string();
        // One task per kind, all at once: a kind's batched read (a few listings) must not
        // wait for another kind's, or a plan takes one round trip per kind.
        let mut kinds: JoinSet<Vec<(String, ProviderResult<Option<Remote>>)>> = JoinSet::new();
        for ((provider, type_name), items) in by_kind {
            let Some(kind) = self.registry_for(provider).kind(type_name).cloned() else {
                continue;
            };
            let ctx = self.op_context(type_name, &lineage);
            let sem = sem.clone();
            kinds.spawn(async move { read_kind(kind, ctx, items, sem).await });
        }
        while let Some(joined) = kinds.join_next().await {
            if let Ok(results) = joined {
                out.extend(results);
            }
        }
        out
    }
}

/// Reads one kind's objects: batched when the kind can, else one by one within the
/// parallelism.
async fn read_kind(
    kind: Arc<dyn crate::provider::ResourceKind>,
    ctx: OpContext,
    items: Vec<(String, String, crate::value::Object)>,
    sem: Arc<Semaphore>,
) -> Vec<(String, ProviderResult<Option<Remote>>)> {
    let batch: Vec<(String, crate::value::Object)> = items
        .iter()
        .map(|(_, id, p)| (id.clone(), p.clone()))
        .collect();
    if let Some(results) = kind.read_many(&ctx, &batch).await
        && results.len() == items.len()
    {
        return items
            .into_iter()
            .zip(results)
            .map(|((address, _, _), r)| (address, r))
            .collect();
    }
    let mut set = JoinSet::new();
    for (address, id, prior) in items {
        let kind = kind.clone();
        let sem = sem.clone();
        let ctx = OpContext {
            address: address.clone(),
            ..ctx.clone()
        };
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let r = kind.read(&ctx, &id, &prior).await;
            (address, r)
        });
    }
    let mut out = Vec::new();
    while let Some(joined) = set.join_next().await {
        if let Ok(r) = joined {
            out.push(r);
        }
    }
    out
}
