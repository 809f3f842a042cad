//! Lookups started ahead of the plan's need. Each create is looked up before it is planned
//! (the name checks: is the object there already, whose is it), and a kind may answer a
//! plan's lookups from one listing of its objects. That listing is made when the first of
//! them asks, in the block's turn, after the blocks it refers to are planned: its wait then
//! adds to the plan's. So when the walk starts, every block of which state holds no
//! instance (each of its instances will be a create) tells its kind, and what the kind
//! returns is started at once, within the plan's bound on calls in flight.

use super::walk::PlanWalk;
use crate::dag::NodeId;
use crate::plan::{Mode, PlanMode};

impl PlanWalk<'_, '_> {
    /// Starts the lookups the kinds of the blocks in `order` can make ahead.
    pub(super) fn start_lookups_ahead(&self, order: &[NodeId]) {
        // Started on the runtime the plan runs on; a plan outside one starts nothing ahead.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.speculative
            || self.walked.is_some()
            || self.engine.offline
            || self.req.mode != PlanMode::Normal
        {
            return;
        }
        let held = self.held_blocks();
        for r in self.blocks_in(order) {
            if r.mode != Mode::Managed || held.contains(&r.addr()) {
                continue;
            }
            let provider = self.engine.provider_key(r);
            let Some(kind) = self.engine.registry_for(&provider).kind(&r.type_name) else {
                continue;
            };
            let ctx = self.engine.op_context(&r.addr().to_string(), &self.lineage);
            if let Some(work) = kind.lookups_ahead(&ctx) {
                let calls = self.calls.clone();
                runtime.spawn(async move {
                    // A closed semaphore (never, today) lets the work run unbounded.
                    let _slot = calls.acquire_owned().await.ok();
                    work.await;
                });
            }
        }
    }
}
