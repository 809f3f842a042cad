//! The plan's walk of the configuration graph: each node (a local, a resource block) is
//! planned once everything it refers to is, independent ones at the same time, so lookups,
//! imports and name checks overlap. What a node yields is merged in the graph's order
//! afterwards, so a plan comes out the same whatever finished first.

use super::data::Lookup;
use super::decide::{Settled, SettledMap};
use super::managed::Block;
use crate::addrs::ConfigNode;
use crate::dag::{NodeError, NodeId, Outcome, WalkOptions};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::refresh::Reading;
use crate::engine::world::World;
use crate::engine::{Engine, InstanceSpec, PlanRequest, PresetNotes};
use crate::graph::ConfigGraph;
use crate::lang::load::Resource;
use crate::plan::{Drift, Mode, ResourceChange};
use crate::value::Value;
use brickform_state::StateDocument;
use futures_util::StreamExt as _;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// A block with at least this many instances is prepared and diffed on several threads.
const MANY_INSTANCES: usize = 32;
/// The most threads one block's instances are prepared or diffed on.
const MAX_PLAN_THREADS: usize = 4;

/// One instance prepared: its key, the instance (`None` when it failed to decode), what
/// the presets changed in it, and what its preparation said.
type PreparedInstance = (
    Option<crate::plan::InstanceKey>,
    Option<super::managed::Prepared>,
    PresetNotes,
    Diagnostics,
);

/// Everything the nodes of one plan share.
pub(super) struct PlanWalk<'p, 'a> {
    pub engine: &'p Engine<'a>,
    pub graph: &'p ConfigGraph,
    pub state: &'p StateDocument,
    pub req: &'p PlanRequest,
    pub moved_from: &'p BTreeMap<crate::addrs::InstanceAddr, crate::addrs::InstanceAddr>,
    pub import_ids: &'p BTreeMap<crate::addrs::InstanceAddr, String>,
    /// Reads started before the walk (batched by kind), taken by the instances they are
    /// for (a guess made ahead of the walk waits for them without taking them).
    pub refreshed:
        std::sync::Arc<Mutex<std::collections::HashMap<crate::addrs::InstanceAddr, SharedReading>>>,
    /// The values expressions see: a node writes its own once it is planned, before its
    /// dependents start.
    pub world: Mutex<World>,
    /// What the instances planned so far tell their dependents.
    pub settled: Mutex<SettledMap>,
    /// Locations (see `ResourceKind::location`) whose lookup before a create found
    /// nothing: nothing can lie inside a container that does not exist, so what the plan
    /// creates inside one is not looked up (500 new objects inside a new container cost
    /// one lookup, not 500).
    pub absent: Mutex<Vec<crate::location::Location>>,
    /// What the plan's instances take for their own: two that take the same thing are
    /// refused after the walk ([`super::guards::claimed_twice`]).
    pub claims: Mutex<Vec<super::guards::Claim>>,
    /// Bounds the provider calls in flight to the plan's parallelism, the refresh's reads
    /// (made while the walk runs) included.
    pub calls: std::sync::Arc<Semaphore>,
    /// How many instances of one resource are planned at once.
    pub parallelism: usize,
    /// The state's lineage as provider calls are given it, written out once.
    pub lineage: String,
    /// The nodes a targeted plan walks ([`super::targets::walked_nodes`]); `None`: all.
    pub walked: Option<&'p std::collections::HashSet<NodeId>>,
    /// Whether this walk plans a block ahead of its turn ([`super::speculate`]): its
    /// instances leave the refresh's reads for the walk itself.
    pub speculative: bool,
    /// The blocks planned ahead of their turn, for the walk to check and keep.
    pub guesses: super::speculate::Guesses,
}

/// A read of the refresh that both the walk and a guess made ahead of it can wait for.
pub(super) type SharedReading = futures_util::future::Shared<Reading>;

/// What planning one node yields, merged into the plan in graph order.
#[derive(Default)]
pub(super) struct NodePlan {
    pub changes: Vec<ResourceChange>,
    pub specs: Vec<InstanceSpec>,
    pub drift: Vec<Drift>,
    /// Managed instance addresses the configuration produces (decoded or not).
    pub produced: Vec<crate::addrs::InstanceAddr>,
    pub preset_notes: PresetNotes,
    pub warnings: Vec<String>,
    pub diags: Diagnostics,
}

/// What planning one instance yields.
#[derive(Default)]
pub(super) struct InstanceOutcome {
    pub key: Option<crate::plan::InstanceKey>,
    pub diags: Diagnostics,
    pub warnings: Vec<String>,
    /// What references to the instance see; `None` leaves what its resource declared.
    /// Only set when something reads the resource (see [`PlanWalk::record`]).
    pub value: Option<Value>,
    /// The size and depth of the values the planned change holds, when `value` is not set
    /// because nothing reads the resource: counted against the plan's limits all the same.
    pub held: Option<(u64, usize)>,
    pub planned: Option<InstancePlan>,
}

/// A planned instance.
pub(super) struct InstancePlan {
    pub change: ResourceChange,
    pub spec: InstanceSpec,
    pub drift: Option<Drift>,
    /// Top-level attributes that references to it must treat as sensitive.
    pub sensitive_keys: Vec<String>,
}

/// The plan went past a limit of the evaluation: nothing more is planned.
pub(super) struct OverBudget {
    pub node: NodePlan,
    pub why: Diagnostic,
}

impl NodeError for OverBudget {
    fn is_fatal(&self) -> bool {
        true
    }
}

/// Where a named value is declared, for the error of a plan that reached a limit there.
fn value_span(config: &crate::lang::load::Config, id: &ConfigNode) -> Option<crate::source::Span> {
    match id {
        ConfigNode::Local(s) => config.local(s).and_then(|l| l.expr.span()),
        ConfigNode::Output(s) => config.output(s).and_then(|o| o.span.clone()),
        ConfigNode::Variable(s) => config
            .module_variables
            .get(&crate::lang::load::scoped_key(&s.module, &s.name))
            .and_then(|v| v.decl.span.clone()),
        ConfigNode::Resource(_) => None,
    }
}

/// A lock that a panic elsewhere does not poison: the walk reports the panic itself.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl PlanWalk<'_, '_> {
    /// Walks the graph; returns what each node yielded, in `order` (dependencies first).
    pub async fn run(&self, order: &[NodeId]) -> Vec<NodePlan> {
        let dag = self.graph.dag();
        let opts = WalkOptions {
            parallelism: self.parallelism,
            cancel: CancellationToken::new(),
        };
        // Blocks whose turn comes after reads are planned ahead, against what state holds,
        // while those reads are made; the walk keeps what still holds when their turn comes.
        self.start_ahead(order);
        let ahead = self.expect_guesses(order);
        let before = (!ahead.is_empty()).then(|| lock(&self.world).clone());
        let guessing = self.guess_ahead(ahead, before, order);
        let walk = dag.walk_local(&opts, |n| self.plan_node(&dag[n]), |_, _| {});
        let walk = match futures_util::future::select(
            std::pin::pin!(walk),
            std::pin::pin!(guessing),
        )
        .await
        {
            futures_util::future::Either::Left((walk, _)) => walk,
            futures_util::future::Either::Right(((), walk)) => walk.await,
        };
        let mut outcomes: Vec<Option<Outcome<NodePlan, OverBudget>>> =
            walk.outcomes.into_iter().map(Some).collect();
        let mut out = Vec::with_capacity(order.len());
        for &i in order {
            let Some(outcome) = outcomes.get_mut(i.index()).and_then(Option::take) else {
                continue;
            };
            match outcome {
                Outcome::Done(node) => out.push(node),
                Outcome::Failed(OverBudget { mut node, why }) => {
                    node.diags.push(why);
                    out.push(node);
                }
                Outcome::Panicked(message) => {
                    let mut node = NodePlan::default();
                    node.diags.push(
                        Diagnostic::error(format!("Internal error planning {}", dag[i]))
                            .detail(message),
                    );
                    out.push(node);
                }
                // Planning stopped at a limit (reported by the node that reached it), or
                // what it depends on panicked (reported too).
                Outcome::Skipped { .. } | Outcome::NotStarted { .. } => {}
            }
        }
        out
    }

    async fn plan_node(&self, id: &ConfigNode) -> Result<NodePlan, OverBudget> {
        let mut node = NodePlan::default();
        if let Some(walked) = self.walked
            && !self.graph.node(id).is_some_and(|n| walked.contains(&n))
        {
            return Ok(node);
        }
        let config = &*self.engine.config;
        let at = match id {
            ConfigNode::Resource(_) => None,
            id if crate::engine::values::is_value(id) => {
                let mut world = lock(&self.world);
                node.diags
                    .extend(crate::engine::values::evaluate(&mut world, config, id));
                value_span(config, id)
            }
            ConfigNode::Variable(_) | ConfigNode::Output(_) | ConfigNode::Local(_) => {
                return Ok(node);
            }
        };
        let at = match (id, at) {
            (ConfigNode::Resource(addr), _) => {
                let Some(r) = config.resources.get(addr) else {
                    return Ok(node);
                };
                self.plan_resource(r, &mut node).await;
                r.span.clone()
            }
            (_, at) => at,
        };
        match lock(&self.world).over_budget() {
            Some(why) => Err(OverBudget {
                node,
                why: Diagnostic::error("Plan limit reached").at(at).detail(why),
            }),
            None => Ok(node),
        }
    }

    /// Plans every instance of a resource block: expanded and decoded under the world's
    /// lock, then planned against the service at most `parallelism` at once, then written
    /// back for what refers to them.
    async fn plan_resource(&self, r: &Resource, node: &mut NodePlan) {
        let outcomes: Vec<InstanceOutcome> = match r.mode {
            Mode::Data => {
                let (dependencies, referenced) = self.links(r);
                let provider = self.engine.provider_key(r);
                let registry = self.engine.registry_for(&provider);
                let Some(source) = registry.data_source(&r.type_name).cloned() else {
                    return;
                };
                let lookup = Lookup {
                    resource: r,
                    referenced,
                    shape: super::Shape::of(source.schema()),
                    source,
                    provider,
                    dependencies,
                };
                let Some(instances) = self.declare(r, node) else {
                    return;
                };
                let arguments: Vec<_> = {
                    let world = lock(&self.world);
                    instances
                        .into_iter()
                        .filter_map(|(key, each)| {
                            self.lookup_arguments(&lookup, &world, key, each, &mut node.diags)
                        })
                        .collect()
                };
                futures_util::stream::iter(arguments)
                    .map(|a| self.plan_lookup(&lookup, a))
                    .buffered(self.parallelism)
                    .collect()
                    .await
            }
            Mode::Managed => {
                let Some(block) = self.managed_block(r) else {
                    return;
                };
                let guess = self.guesses.take(&r.addr()).await;
                let Some(instances) = self.declare(r, node) else {
                    return;
                };
                if let Some(guess) = guess
                    && let Some(outcomes) = self.keep(guess, &instances, node)
                {
                    outcomes
                } else {
                    self.plan_managed(&block, instances, node).await
                }
            }
        };
        self.record(r, self.graph.has_dependents(&r.node()), outcomes, node);
    }

    /// What a resource block depends on (as addresses without a key: each names its
    /// resource as a whole), and whether anything reads it. Instances nothing reads (most of
    /// a large configuration: the leaves) need no value in the world: their values live in
    /// their planned changes only, not in a second copy.
    fn links(&self, r: &Resource) -> (Vec<crate::addrs::InstanceAddr>, bool) {
        let dependencies = self
            .graph
            .resource_dependencies(&r.node())
            .into_iter()
            .map(|d| d.instance(None))
            .collect();
        (dependencies, self.graph.has_dependents(&r.node()))
    }

    /// A managed resource block with its kind; `None` when no provider has the kind.
    pub(super) fn managed_block<'r>(&self, r: &'r Resource) -> Option<Block<'r>> {
        let (dependencies, referenced) = self.links(r);
        let provider = self.engine.provider_key(r);
        let kind = self
            .engine
            .registry_for(&provider)
            .kind(&r.type_name)
            .cloned()?;
        Some(Block {
            resource: r,
            referenced,
            shape: super::Shape::of(kind.schema()),
            kind,
            provider,
            dependencies,
        })
    }

    /// Plans the instances of a managed block, once expanded: decoded under the world's
    /// lock, then planned against the service.
    pub(super) async fn plan_managed(
        &self,
        block: &Block<'_>,
        instances: Vec<(Option<crate::plan::InstanceKey>, Option<Value>)>,
        node: &mut NodePlan,
    ) -> Vec<InstanceOutcome> {
        let r = block.resource;
        let referenced = block.referenced;
        let prepared: Vec<_> = {
            let mut world = lock(&self.world);
            let mut prepared = Vec::with_capacity(instances.len());
            node.produced.reserve_exact(instances.len());
            for (key, p, notes, diags) in self.prepare_all(block, &world, instances) {
                node.preset_notes.extend(notes);
                node.diags.extend(diags);
                match p {
                    Some(p) => {
                        node.produced.push(p.address.clone());
                        prepared.push(p);
                    }
                    None => {
                        node.produced.push(r.addr().instance(key.clone()));
                        if referenced {
                            let (t, n) = (&r.type_name, &r.name);
                            world.set_instance(
                                &r.module,
                                Mode::Managed,
                                t,
                                n,
                                key.as_ref(),
                                Value::Unknown,
                            );
                        }
                    }
                }
            }
            prepared
        };
        self.plan_instances(block, prepared).await
    }

    /// Plans the prepared instances of a block, in their order: every instance is looked up
    /// against the service first, then all are diffed and decided (on several threads when
    /// there are many), then the few whose new name must be checked are.
    async fn plan_instances(
        &self,
        block: &Block<'_>,
        prepared: Vec<super::managed::Prepared>,
    ) -> Vec<InstanceOutcome> {
        let looked: Vec<_> = futures_util::stream::iter(prepared)
            .map(|p| self.look_up(block, p))
            .buffered(self.parallelism)
            .collect()
            .await;
        let decided = in_order_on_threads(looked, |l| self.decide_instance(block, l));
        futures_util::stream::iter(decided)
            .map(|d| self.finish(block, d))
            .buffered(self.parallelism)
            .collect()
            .await
    }

    /// Prepares every instance of a block (decoded, checked, its presets applied), in their
    /// order. Decoding is the plan's main work on the CPU and each instance's is its own, so
    /// a block of many instances is decoded on several threads at once; a few are not
    /// worth a thread.
    fn prepare_all(
        &self,
        block: &Block<'_>,
        world: &World,
        instances: Vec<(Option<crate::plan::InstanceKey>, Option<Value>)>,
    ) -> Vec<PreparedInstance> {
        let one = |(key, each): (Option<crate::plan::InstanceKey>, Option<Value>)| {
            let (mut notes, mut diags) = (PresetNotes::new(), Diagnostics::new());
            let p = self.prepare(block, world, key.clone(), each, &mut notes, &mut diags);
            (key, p, notes, diags)
        };
        in_order_on_threads(instances, one)
    }

    /// Expands `count` / `for_each` and declares the resource's shape for references; `None`
    /// when the expansion fails (the resource is then unknown to what refers to it).
    pub(super) fn declare(
        &self,
        r: &Resource,
        node: &mut NodePlan,
    ) -> Option<Vec<(Option<crate::plan::InstanceKey>, Option<Value>)>> {
        let mut world = lock(&self.world);
        let Some(instances) = super::expand::expand(
            r,
            &world,
            &self.engine.config.dir,
            self.engine.offline,
            &mut node.diags,
        ) else {
            world.declare_resource(&r.module, r.mode, &r.type_name, &r.name, Value::Unknown);
            return None;
        };
        world.declare_block(r);
        Some(instances)
    }

    /// Writes the planned instances back: into the world for references (when something
    /// reads the resource), into what dependents are told, and into the node's share of the
    /// plan, in instance order.
    fn record(
        &self,
        r: &Resource,
        referenced: bool,
        outcomes: Vec<InstanceOutcome>,
        node: &mut NodePlan,
    ) {
        let mut world = lock(&self.world);
        // Sized once: a vector grown by doubling holds up to twice the changes it has.
        let planned = outcomes.iter().filter(|o| o.planned.is_some()).count();
        let mut settled = Vec::with_capacity(planned);
        node.changes.reserve_exact(planned);
        node.specs.reserve_exact(planned);
        for o in outcomes {
            node.diags.extend(o.diags);
            node.warnings.extend(o.warnings);
            if let Some(p) = &o.planned {
                for k in &p.sensitive_keys {
                    world.mark_sensitive(&r.module, &r.type_name, &r.name, k);
                }
            }
            if let Some(v) = o.value
                && referenced
            {
                world.set_instance(&r.module, r.mode, &r.type_name, &r.name, o.key.as_ref(), v);
            }
            if let Some(held) = o.held {
                world.count(held);
            }
            if let Some(p) = o.planned {
                settled.push(Settled::of(&p.change));
                node.drift.extend(p.drift);
                node.changes.push(p.change);
                node.specs.push(p.spec);
            }
        }
        lock(&self.settled).insert(r.addr(), settled);
    }
}

/// `one` applied to each item, the results in the items' order. Each item's work is its own,
/// so many items are split over several threads (this one included); a few are not worth a
/// thread.
fn in_order_on_threads<T: Send, U: Send>(items: Vec<T>, one: impl Fn(T) -> U + Sync) -> Vec<U> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_PLAN_THREADS);
    if threads < 2 || items.len() < MANY_INSTANCES {
        return items.into_iter().map(one).collect();
    }
    let per_thread = items.len().div_ceil(threads);
    let mut chunks: Vec<Vec<T>> = Vec::with_capacity(threads);
    let mut rest = items.into_iter();
    loop {
        let chunk: Vec<T> = rest.by_ref().take(per_thread).collect();
        if chunk.is_empty() {
            break;
        }
        chunks.push(chunk);
    }
    let one = &one;
    std::thread::scope(|scope| {
        let mut chunks = chunks.into_iter();
        // The first chunk on this thread, the others each on one of their own.
        let first = chunks.next().unwrap_or_default();
        let others: Vec<_> = chunks
            .map(|chunk| scope.spawn(move || chunk.into_iter().map(one).collect::<Vec<U>>()))
            .collect();
        let mut all: Vec<U> = first.into_iter().map(one).collect();
        for handle in others {
            match handle.join() {
                Ok(done) => all.extend(done),
                // A panic in one item's work is the walk's to report, as it would be here.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    })
}
