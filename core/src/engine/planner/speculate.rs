//! Planning a block ahead of its turn. The walk plans a block once everything it refers
//! to is planned, and a block whose instances wait for the refresh's reads holds up
//! whatever refers to it until the last read is back; a dependent with many instances then
//! does all of its work (decoding, diffing) after that, with the service idle.
//!
//! So while the reads are made, each such dependent is planned ahead, against a world that
//! holds what state holds for the blocks it refers to, as a plan that changes none of them
//! would leave it. Every value its evaluation reads is watched ([`Watch`]), with what it
//! was told of its dependencies' changes. When its turn comes, the guess is kept only if
//! its expansion is the same, every value it read is the same in the world by then, and
//! its dependencies changed as it assumed; otherwise the block is planned as it would have
//! been. A guess with any error is dropped, and nothing of one (values, claims, containers
//! found absent, diagnostics) reaches the plan unless it is kept.

use super::decide::{Settled, SettledMap, settled_read_by};
use super::walk::{InstanceOutcome, NodePlan, PlanWalk, lock};
use crate::addrs::{ConfigNode, ResourceAddr};
use crate::dag::NodeId;
use crate::engine::watch::Watch;
use crate::engine::world::World;
use crate::lang::load::Resource;
use crate::plan::{InstanceKey, Mode};
use crate::value::{PathStep, Value};
use futures_util::FutureExt as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A block's instances as expanded: each key with its `each.value`.
type Instances = Vec<(Option<InstanceKey>, Option<Value>)>;

/// A block planned ahead of its turn, with what it was planned from.
pub(super) struct Guess {
    instances: Instances,
    outcomes: Vec<InstanceOutcome>,
    node: NodePlan,
    watch: Arc<Watch>,
    /// What the decisions were told of the blocks they read the changes of.
    settled: Vec<(ResourceAddr, Option<Vec<Settled>>)>,
    claims: Vec<super::guards::Claim>,
    /// Containers its lookups found absent.
    absent: Vec<crate::location::Location>,
}

enum Slot {
    /// Expected, not started: the walk may still take the block first.
    Waiting,
    Running,
    Ready(Box<Guess>),
}

/// The guesses of one walk, by block.
#[derive(Default)]
pub(super) struct Guesses {
    slots: Mutex<HashMap<ResourceAddr, Slot>>,
    changed: tokio::sync::Notify,
}

impl Guesses {
    /// The guess made for `addr`, waited for while it is being made. `None` when there is
    /// none; one not started yet never will be.
    pub async fn take(&self, addr: &ResourceAddr) -> Option<Guess> {
        loop {
            // Made before looking, so an end announced after the look is not missed.
            let changed = self.changed.notified();
            {
                let mut slots = lock(&self.slots);
                match slots.remove(addr) {
                    None | Some(Slot::Waiting) => return None,
                    Some(Slot::Ready(guess)) => return Some(*guess),
                    Some(Slot::Running) => {
                        slots.insert(addr.clone(), Slot::Running);
                    }
                }
            }
            changed.await;
        }
    }

    fn expect(&self, addr: ResourceAddr) {
        lock(&self.slots).insert(addr, Slot::Waiting);
    }

    /// Whether the guess for `addr` is still wanted; it is being made from now on.
    fn start(&self, addr: &ResourceAddr) -> bool {
        let mut slots = lock(&self.slots);
        match slots.get_mut(addr) {
            Some(slot @ Slot::Waiting) => {
                *slot = Slot::Running;
                true
            }
            _ => false,
        }
    }

    fn done(&self, addr: &ResourceAddr, guess: Option<Guess>) {
        {
            let mut slots = lock(&self.slots);
            match guess {
                Some(g) => {
                    slots.insert(addr.clone(), Slot::Ready(Box::new(g)));
                }
                None => {
                    slots.remove(addr);
                }
            }
        }
        self.changed.notify_waiters();
    }
}

impl NodePlan {
    /// Takes in what planning a block ahead of its turn yielded.
    fn absorb(&mut self, other: NodePlan) {
        self.changes.extend(other.changes);
        self.specs.extend(other.specs);
        self.drift.extend(other.drift);
        self.produced.extend(other.produced);
        self.preset_notes.extend(other.preset_notes);
        self.warnings.extend(other.warnings);
        self.diags.extend(other.diags);
    }
}

impl PlanWalk<'_, '_> {
    /// The blocks worth planning ahead of their turn, in the walk's order: managed blocks
    /// of many instances (`count`, `for_each`) that refer to a block state holds objects
    /// of, while the refresh is reading them. Each is expected from now on.
    pub(super) fn expect_guesses(&self, order: &[NodeId]) -> Vec<&Resource> {
        let reading = !lock(&self.refreshed).is_empty();
        if !reading || self.speculative || self.walked.is_some() || self.req.in_turn_only {
            return Vec::new();
        }
        let held = self.held_blocks();
        let worth = |r: &Resource| {
            r.mode == Mode::Managed
                && (r.count.is_some() || r.for_each.is_some())
                && self
                    .graph
                    .resource_dependencies(&r.node())
                    .iter()
                    .any(|d| held.contains(d))
        };
        let mut blocks = self.blocks_in(order);
        blocks.retain(|r| worth(r));
        for r in &blocks {
            self.guesses.expect(r.addr());
        }
        blocks
    }

    /// The blocks of which state holds instances.
    pub(super) fn held_blocks(&self) -> std::collections::HashSet<&ResourceAddr> {
        self.state
            .resources()
            .iter()
            .map(|s| s.resource())
            .collect()
    }

    /// The resource blocks among `order`'s nodes, in that order.
    pub(super) fn blocks_in(&self, order: &[NodeId]) -> Vec<&Resource> {
        let dag = self.graph.dag();
        let config = &*self.engine.config;
        order
            .iter()
            .filter_map(|&id| match &dag[id] {
                ConfigNode::Resource(addr) => config.resources.get(addr),
                _ => None,
            })
            .collect()
    }

    /// Plans `blocks` ahead of their turn, all at once, each against `world` (the world
    /// before the walk) filled in as state has it.
    pub(super) async fn guess_ahead(
        &self,
        blocks: Vec<&Resource>,
        world: Option<World>,
        order: &[NodeId],
    ) {
        let Some(mut world) = world else {
            return;
        };
        if blocks.is_empty() {
            return;
        }
        // Only what the guessed blocks read is filled in: a copy of the world is made for
        // each, and dropped once it is planned.
        let read: std::collections::HashSet<ResourceAddr> = blocks
            .iter()
            .flat_map(|r| self.graph.resource_dependencies(&r.node()))
            .collect();
        let settled = self.as_state_has_it(&mut world, order, &read);
        let guesses = blocks.into_iter().map(|r| {
            let (world, settled) = (&world, &settled);
            async move {
                let addr = r.addr();
                if self.guesses.start(&addr) {
                    // A panic (a provider's bug) drops the guess: the walk plans the block
                    // in its turn, where a panic is reported as any node's is.
                    let guess = std::panic::AssertUnwindSafe(self.guess(r, world, settled))
                        .catch_unwind()
                        .await
                        .ok()
                        .flatten();
                    tracing::debug!(block = %addr, planned = guess.is_some(), "planned a block ahead of its turn");
                    self.guesses.done(&addr, guess);
                }
            }
        });
        futures_util::future::join_all(guesses).await;
    }

    /// Fills `world` with what state holds of the blocks in `read`, and the values (locals,
    /// module variables) computed from them, in the walk's order; what the walk's dependents
    /// are told of those blocks, as the plan is guessed to leave them.
    fn as_state_has_it(
        &self,
        world: &mut World,
        order: &[NodeId],
        read: &std::collections::HashSet<ResourceAddr>,
    ) -> SettledMap {
        let config = &*self.engine.config;
        let dag = self.graph.dag();
        let mut by_block: HashMap<&ResourceAddr, Vec<&brickform_state::ResourceState>> =
            HashMap::new();
        for rs in self.state.resources() {
            if read.contains(rs.resource()) {
                by_block.entry(rs.resource()).or_default().push(rs);
            }
        }
        let mut settled = SettledMap::new();
        // A destroy deletes every object; another plan is guessed to leave each as it is.
        let left = match self.req.mode {
            crate::plan::PlanMode::Destroy => Settled::deleted(),
            _ => Settled::unchanged(),
        };
        for &id in order {
            let node = &dag[id];
            if crate::engine::values::is_value(node) {
                // An error here is the walk's to report; a value it leaves out is read as
                // absent, and a guess that read it is not kept.
                let _ = crate::engine::values::evaluate(world, config, node);
                continue;
            }
            let ConfigNode::Resource(addr) = node else {
                continue;
            };
            let (Some(r), Some(objects)) = (config.resources.get(addr), by_block.get(addr)) else {
                continue;
            };
            if r.mode != Mode::Managed {
                continue;
            }
            world.declare_block(r);
            for rs in objects {
                let schema = world
                    .schema(r.mode, &r.type_name)
                    .unwrap_or(crate::provider::Schema::empty());
                let v = Value::object(crate::engine::instance::merged_from(rs, schema));
                world.set_instance(&r.module, r.mode, &r.type_name, &r.name, rs.key(), v);
                for path in rs.sensitive.keys() {
                    if let Some(attr) = brickform_state::sensitive_path::split(path).first() {
                        world.mark_sensitive(&r.module, &r.type_name, &r.name, attr);
                    }
                }
            }
            let kind = self
                .engine
                .registry_for(&self.engine.provider_key(r))
                .kind(&r.type_name);
            if let Some(kind) = kind {
                for path in &crate::engine::instance::sensitive_schema_paths(kind.schema()) {
                    if let Some(PathStep::Key(attr)) = path.first() {
                        world.mark_sensitive(&r.module, &r.type_name, &r.name, attr);
                    }
                }
            }
            settled.insert(addr.clone(), vec![left.clone(); objects.len()]);
        }
        settled
    }

    /// Plans block `r` against `world` as another walk of its own, watched: `None` when
    /// planning it says anything is wrong (the walk then plans it in its turn and says so).
    async fn guess(&self, r: &Resource, world: &World, settled: &SettledMap) -> Option<Guess> {
        let block = self.managed_block(r)?;
        let mut world = world.clone();
        let watch = world.watched();
        let absent = lock(&self.absent).clone();
        let absent_before = absent.len();
        let ahead = PlanWalk {
            engine: self.engine,
            graph: self.graph,
            state: self.state,
            req: self.req,
            moved_from: self.moved_from,
            import_ids: self.import_ids,
            refreshed: self.refreshed.clone(),
            world: Mutex::new(world),
            settled: Mutex::new(settled.clone()),
            absent: Mutex::new(absent),
            claims: Mutex::default(),
            calls: self.calls.clone(),
            parallelism: self.parallelism,
            lineage: self.lineage.clone(),
            walked: None,
            speculative: true,
            guesses: Guesses::default(),
        };
        let mut expansion = NodePlan::default();
        let instances = ahead.declare(r, &mut expansion)?;
        if expansion.diags.has_errors() {
            return None;
        }
        let mut node = NodePlan::default();
        let outcomes = ahead
            .plan_managed(&block, instances.clone(), &mut node)
            .await;
        if node.diags.has_errors() || outcomes.iter().any(|o| o.diags.has_errors()) {
            return None;
        }
        let settled = settled_read_by(r, &block.dependencies)
            .into_iter()
            .map(|addr| {
                let told = settled.get(&addr).cloned();
                (addr, told)
            })
            .collect();
        let mut absent = ahead
            .absent
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(Guess {
            instances,
            outcomes,
            node,
            watch,
            settled,
            claims: ahead
                .claims
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            absent: absent.split_off(absent_before.min(absent.len())),
        })
    }

    /// The outcomes of `guess` when it still holds for the block, with its share of the
    /// plan taken into `node`: the same instances, every value it read the same in the
    /// world now, and its dependencies changed as it was told. `None`: plan the block.
    pub(super) fn keep(
        &self,
        guess: Guess,
        instances: &Instances,
        node: &mut NodePlan,
    ) -> Option<Vec<InstanceOutcome>> {
        if guess.instances != *instances {
            tracing::debug!("a block planned ahead expanded otherwise: planned again");
            return None;
        }
        if !guess.watch.holds_in(&lock(&self.world)) {
            tracing::debug!("a block planned ahead read a value since changed: planned again");
            return None;
        }
        {
            let settled = lock(&self.settled);
            if guess
                .settled
                .iter()
                .any(|(addr, told)| settled.get(addr) != told.as_ref())
            {
                tracing::debug!(
                    "a block planned ahead was told otherwise of a change: planned again"
                );
                return None;
            }
        }
        node.absorb(guess.node);
        lock(&self.claims).extend(guess.claims);
        lock(&self.absent).extend(guess.absent);
        tracing::debug!(
            instances = instances.len(),
            "kept a block planned ahead of its turn"
        );
        Some(guess.outcomes)
    }
}
