//! Work started ahead of the plan's need.
//!
//! Each create is looked up before it is planned (the name checks: is the object there
//! already, whose is it), and a kind may answer a plan's lookups from one listing of its
//! objects. That listing is made when the first of them asks, in the block's turn, after
//! the blocks it refers to are planned: its wait then adds to the plan's. So when the walk
//! starts, every block of which state holds no instance (each of its instances will be a
//! create) tells its kind.
//!
//! Likewise each delete is asked what it does to data once the walk is done, and a kind
//! may answer from a listing (of what the objects it deletes hold or publish); made
//! then, its wait comes after every read of the walk. So every instance the plan will
//! delete — all of them in a destroy, those whose block is gone otherwise — tells its kind
//! as the walk starts.
//!
//! What a kind returns is started at once, within the plan's bound on calls in flight.

use super::walk::PlanWalk;
use crate::dag::NodeId;
use crate::plan::{Mode, PlanMode};
use crate::provider::Ahead;
use brickform_state::ResourceMode;

impl PlanWalk<'_, '_> {
    /// Starts the work the kinds of the blocks in `order` and of the instances state holds
    /// can do ahead.
    pub(super) fn start_ahead(&self, order: &[NodeId]) {
        // Started on the runtime the plan runs on; a plan outside one starts nothing ahead.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.speculative
            || self.walked.is_some()
            || !self.req.targets.is_empty()
            || self.engine.offline
        {
            return;
        }
        let start = |work: Ahead| {
            runtime.spawn(crate::call_slots::within(self.calls.clone(), work));
        };
        match self.req.mode {
            PlanMode::Normal => {
                self.lookups_ahead(order).into_iter().for_each(start);
                self.impacts_ahead(false).into_iter().for_each(start);
            }
            PlanMode::Destroy => self.impacts_ahead(true).into_iter().for_each(start),
            PlanMode::RefreshOnly => {}
        }
    }

    /// The lookups of the creates of the blocks in `order` that their kinds can make ahead.
    fn lookups_ahead(&self, order: &[NodeId]) -> Vec<Ahead> {
        let held = self.held_blocks();
        self.blocks_in(order)
            .into_iter()
            .filter(|r| r.mode == Mode::Managed && !held.contains(&r.addr()))
            .filter_map(|r| {
                let provider = self.engine.provider_key(r);
                let kind = self.engine.registry_for(&provider).kind(&r.type_name)?;
                let ctx = self.engine.op_context(&r.addr().to_string(), &self.lineage);
                kind.lookups_ahead(&ctx)
            })
            .collect()
    }

    /// The data impacts of the deletes this plan will make that their kinds can read
    /// ahead: of every instance state holds when `all` (a destroy), else of those whose
    /// block the configuration no longer has.
    fn impacts_ahead(&self, all: bool) -> Vec<Ahead> {
        let config = &self.engine.config;
        self.state
            .resources()
            .iter()
            .filter(|rs| rs.mode() == ResourceMode::Managed)
            .filter(|rs| all || !config.resources.contains_key(rs.resource()))
            .filter_map(|rs| {
                let kind = self
                    .engine
                    .registry_for(&rs.provider)
                    .kind(rs.type_name())?;
                let ctx = self.engine.op_context(&rs.address(), &self.lineage);
                kind.impact_ahead(&ctx, &rs.config)
            })
            .collect()
    }
}
