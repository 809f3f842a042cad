//! Applying a plan: a parallel walk of the instance graph (docs/architecture.md, Apply and
//! destroy).
//!
//! The walk is `dag::Dag::walk`: a node starts when everything it depends on has finished,
//! at most `parallelism` at once. It carries out what the plan says: its configuration is
//! made again as the plan made it, with the real values of its dependencies filling in what
//! the plan showed as unknown, and a known value that came out otherwise fails the node
//! before anything is sent (see `configure`). A failure skips the node's
//! dependents; independent branches finish. Every mutating call is bracketed by write-ahead
//! log records, so a crash at any point loses nothing; when the log cannot be written (the
//! lock was lost), nothing more can be, and the walk stops.

use super::configure::{Ignored, Inputs, configure, differs_from_plan, path_text};
use super::instance::{Slot, configurable, decode_instance, merged_from, prior_of, state_entry};
use super::world::World;
use super::{Engine, Planned};
use crate::addrs::{ConfigNode, base_of};
use crate::dag::{self, Dag, NodeError as _, NodeId, Outcome, Stop, WalkOptions};
use crate::lang::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::eval::Evaluator;
use crate::lang::load::Config;
use crate::plan::{Action, Mode, ResourceChange};
use crate::provider::{ErrorKind, OpContext, ProviderError, Remote, ResourceKind};
use crate::value::{Object, PathStep, Value};
use brickform_state::Outcome as WalOutcome;
use brickform_state::{Journal, ResourceState, StateDocument, StateError, WalOp};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Progress of an apply, for the terminal.
#[derive(Debug, Clone)]
pub enum ApplyEvent {
    Started {
        address: String,
        action: Action,
        id: Option<String>,
    },
    StillRunning {
        address: String,
        action: Action,
        elapsed: Duration,
    },
    Finished {
        address: String,
        action: Action,
        id: Option<String>,
        elapsed: Duration,
    },
    Failed {
        address: String,
        action: Action,
        error: Failure,
    },
    Skipped {
        address: String,
        because: String,
    },
    /// A line a step printed as it went (a build's output).
    Output {
        address: String,
        line: String,
    },
}

#[derive(Debug, Default, Clone)]
pub struct ApplyReport {
    pub added: usize,
    pub changed: usize,
    pub destroyed: usize,
    pub imported: usize,
    pub forgotten: usize,
    pub failed: Vec<(String, Failure)>,
    pub skipped: Vec<String>,
    pub interrupted: bool,
    /// Why the apply stopped before trying everything, when going on was not safe (the
    /// write-ahead log could not be written, the lock was lost); what did not start is in
    /// `skipped`.
    pub stopped: Option<String>,
    /// Calls whose outcome is still unknown (a create that may have happened and could not be
    /// looked up): their intents stay in the write-ahead log, which must not be truncated, so
    /// the next run resolves them.
    pub unresolved: usize,
    /// Output values after apply (sensitive ones included; the caller masks them).
    pub outputs: Vec<(String, Value, bool)>,
    /// What the configuration's `check` blocks found once the apply finished: warnings.
    pub checks: Diagnostics,
}

/// Why an instance could not be applied, classified so the caller can say what to do: a
/// configuration the service rejects is not fixed by running the command again.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub message: String,
    /// The class of the provider's error; `None` for brickform's own failures (the state,
    /// the write-ahead log).
    pub kind: Option<ErrorKind>,
    /// Configuration problems found when the instance was evaluated again with the values
    /// its dependencies got, located in the configuration.
    pub diagnostics: Diagnostics,
}

impl Failure {
    pub fn new(kind: Option<ErrorKind>, message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            kind,
            diagnostics: Diagnostics::new(),
        }
    }
    /// A configuration the service (or brickform, with the values known at apply) refuses.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Some(ErrorKind::InvalidInput), message)
    }
    /// Whether running the same command again may succeed without changing anything.
    pub fn retry_may_help(&self) -> bool {
        matches!(
            self.kind,
            None | Some(ErrorKind::Transient | ErrorKind::Conflict | ErrorKind::Other)
        )
    }
    pub fn contains(&self, s: &str) -> bool {
        self.message.contains(s)
    }
}

impl Failure {
    /// What to do about it, by class.
    fn hint(&self, address: &str) -> Option<String> {
        Some(match self.kind? {
            ErrorKind::InvalidInput => format!(
                "the service rejected the configuration of {address}: change it as the message says, then apply again (running the command again unchanged fails the same way)"
            ),
            ErrorKind::PermissionDenied => "the identity brickform acts as lacks a permission this needs: grant it, or configure an identity that has it, then apply again".to_string(),
            ErrorKind::AlreadyExists => format!(
                "an object of this name exists outside this state: import it (`brickform import {address} ID`) or give {address} another name"
            ),
            ErrorKind::NotFound => format!(
                "something {address} refers to does not exist: check the names and ids it uses"
            ),
            ErrorKind::Conflict => "another change to this object was under way: run the command again when it has finished".to_string(),
            ErrorKind::Transient => "a temporary failure: run the command again".to_string(),
            ErrorKind::Other => return None,
        })
    }

    /// The failure as diagnostics: the configuration problems found at apply where they
    /// are written, otherwise one error at the resource's block saying what to do.
    pub fn to_diagnostics(&self, address: &str, config: &Config) -> Diagnostics {
        let mut out = Diagnostics::new();
        for d in self.diagnostics.iter() {
            let mut d = d.clone();
            d.summary = format!("{address}: {}", d.summary);
            out.push(d);
        }
        if !out.is_empty() {
            return out;
        }
        let base = base_of(address);
        let span = config.resources.get(base).and_then(|r| r.span.clone());
        let (first, rest) = self
            .message
            .split_once('\n')
            .map(|(a, b)| (a, Some(b.trim())))
            .unwrap_or((self.message.as_str(), None));
        let mut d = Diagnostic::error(format!("{address}: {first}"))
            .at(span)
            .maybe_hint(self.hint(address));
        if let Some(rest) = rest.filter(|r| !r.is_empty()) {
            d = d.detail(rest);
        }
        out.push(d);
        out
    }
}

impl ApplyReport {
    /// Whether running the same command again may finish the work: it was interrupted, or
    /// a failure may be temporary. Not when the service refused the configuration.
    pub fn retry_may_help(&self) -> bool {
        self.interrupted || self.failed.iter().any(|(_, f)| f.retry_may_help())
    }
}

impl From<&crate::provider::ProviderError> for Failure {
    fn from(e: &crate::provider::ProviderError) -> Self {
        Failure::new(Some(e.kind), error_text(e))
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::new(None, message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::new(None, message)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Why one node of the apply failed, by where the failure came from.
#[derive(Debug)]
enum NodeError {
    /// The provider's call failed (the service refused it, or could not be reached).
    Provider(ProviderError),
    /// The instance's configuration, evaluated again with the values its dependencies
    /// got, cannot be sent: `diagnostics` locates the problems where there are any.
    Evaluation {
        message: String,
        diagnostics: Diagnostics,
    },
    /// The write-ahead log could not be written (among the causes: the state's lock was
    /// lost to another run). Fatal: no further call could be recorded, so none is made.
    Journal(StateError),
    /// What brickform itself cannot do for this node: nothing recorded to act on, a type no
    /// provider has, a container whose contents changed since the plan, a state entry that
    /// cannot be made.
    Engine(String),
}

impl NodeError {
    fn invalid(message: impl Into<String>) -> Self {
        NodeError::Evaluation {
            message: message.into(),
            diagnostics: Diagnostics::new(),
        }
    }

    /// The failure as reported: classified by the provider's error kind, a configuration
    /// problem as one the service would refuse, brickform's own failures unclassified.
    fn failure(&self) -> Failure {
        match self {
            NodeError::Provider(e) => Failure::from(e),
            NodeError::Evaluation {
                message,
                diagnostics,
            } => Failure {
                diagnostics: diagnostics.clone(),
                ..Failure::invalid(message.clone())
            },
            NodeError::Journal(e) => Failure::new(None, e.to_string()),
            NodeError::Engine(message) => Failure::new(None, message.clone()),
        }
    }
}

impl dag::NodeError for NodeError {
    fn is_fatal(&self) -> bool {
        matches!(self, NodeError::Journal(_))
    }
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.failure().message)
    }
}

impl From<ProviderError> for NodeError {
    fn from(e: ProviderError) -> Self {
        NodeError::Provider(e)
    }
}

impl From<StateError> for NodeError {
    fn from(e: StateError) -> Self {
        NodeError::Journal(e)
    }
}

impl From<String> for NodeError {
    fn from(message: String) -> Self {
        NodeError::Engine(message)
    }
}

impl From<&str> for NodeError {
    fn from(message: &str) -> Self {
        NodeError::Engine(message.to_string())
    }
}

/// Each half of a replacement reports as what it does.
fn shown_action(action: Action, part: Part) -> Action {
    match part {
        Part::Delete => Action::Delete,
        Part::Create => Action::Create,
        Part::Whole => action,
    }
}

/// How often a long-running operation reports that it is still going.
const STILL_RUNNING_EVERY: Duration = Duration::from_secs(10);

pub struct ApplyOptions {
    pub parallelism: usize,
    pub cancel: CancellationToken,
    pub on_event: Arc<dyn Fn(ApplyEvent) + Send + Sync>,
}

struct Shared {
    world: Mutex<World>,
    doc: tokio::sync::Mutex<StateDocument>,
    journal: Journal,
    /// Where each managed instance lived when apply started, for containers' checks.
    locations: std::collections::BTreeMap<String, String>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Engine<'_> {
    /// Applies `planned`, recording every change in `doc` through `journal`.
    pub async fn apply(
        &self,
        planned: &Planned,
        mut doc: StateDocument,
        journal: Journal,
        opts: ApplyOptions,
    ) -> (StateDocument, ApplyReport) {
        let plan = &planned.plan;
        let mut report = ApplyReport::default();
        let lineage = doc.lineage().to_string();
        // `moved` blocks rename state entries; the plan made its comparisons with the new
        // addresses already, so the renames come first.
        for c in &plan.changes {
            if let Some(from) = &c.moved_from
                && doc.get(from).is_some()
                && doc.get(&c.address).is_none()
                && let Err(e) = doc.mv(from, &c.address)
            {
                report.failed.push((
                    c.address.clone(),
                    Failure::from(format!("cannot move {from} in state: {e}")),
                ));
            }
        }

        // The world as the plan left it; dependencies overwrite their entries as they finish.
        let mut world = World::new(
            self.vars.values.clone(),
            self.vars.sensitive.clone(),
            &self.environment,
            &self.config.dir,
            self.registry,
        );
        world.declare_modules(&self.config);
        for (c, spec) in plan.changes.iter().zip(&planned.specs) {
            let value = match c.action {
                Action::NoOp | Action::Read => {
                    c.after.as_ref().or(c.before.as_ref()).map(|o| o.0.clone())
                }
                _ => c.after.as_ref().map(|o| o.0.clone()),
            };
            if c.mode == Mode::Managed {
                for p in &c.sensitive_paths {
                    if let Some(PathStep::Key(k)) = p.first() {
                        world.mark_sensitive(&c.module, &c.type_name, &c.name, k);
                    }
                }
            }
            if let Some(v) = value
                && spec.resource.is_some()
            {
                world.set_instance(
                    &c.module,
                    c.mode,
                    &c.type_name,
                    &c.name,
                    c.index.as_ref(),
                    Value::Object(v),
                );
            }
        }
        let (local_order, locals_read_resources) = self.local_order();
        self.evaluate_locals(&mut world, &local_order);
        let locations = super::containers::managed_locations(self.registry, &doc);
        let shared = Arc::new(Shared {
            world: Mutex::new(world),
            doc: tokio::sync::Mutex::new(doc),
            journal,
            locations,
        });

        // The graph of instances that do something. A replacement is two nodes, its delete
        // and its create, so a parent replaced together with its children can be deleted
        // after them and created before them. Nodes are added in plan order, the delete of a
        // replacement before its create, which is the order ready nodes start in.
        let mut g: Dag<(usize, Part), &'static str> = Dag::new();
        let mut parts_of: HashMap<usize, (Option<NodeId>, Option<NodeId>)> = HashMap::new();
        for (i, c) in plan.changes.iter().enumerate() {
            // An import whose object already matches is a no-op that still must run: it
            // records the object in state.
            // Unchanged instances are skipped, except those holding sensitive values: the
            // plan does not carry them, so the configuration is evaluated again to give
            // references (outputs, other resources) the real values.
            // A destroy evaluates nothing: what stays needs no values, and the objects it
            // would read may be the ones going.
            if c.action == Action::NoOp
                && c.importing.is_none()
                && (c.mode != Mode::Managed
                    || c.sensitive_paths.is_empty()
                    || plan.mode == crate::plan::PlanMode::Destroy)
            {
                continue;
            }
            let nodes = match c.action {
                Action::DeleteThenCreate => {
                    let d = g.add_node((i, Part::Delete));
                    let k = g.add_node((i, Part::Create));
                    g.add_edge(d, k, "replacement order");
                    (Some(d), Some(k))
                }
                Action::CreateThenDelete => {
                    let d = g.add_node((i, Part::Delete));
                    let k = g.add_node((i, Part::Create));
                    g.add_edge(k, d, "replacement order");
                    (Some(d), Some(k))
                }
                Action::Delete | Action::Forget => (Some(g.add_node((i, Part::Whole))), None),
                _ => (None, Some(g.add_node((i, Part::Whole)))),
            };
            parts_of.insert(i, nodes);
        }
        let by_base: HashMap<&str, Vec<usize>> =
            plan.changes
                .iter()
                .enumerate()
                .fold(HashMap::new(), |mut m, (i, c)| {
                    m.entry(base_address(c)).or_default().push(i);
                    m
                });
        for (i, c) in plan.changes.iter().enumerate() {
            let Some(&(del_i, make_i)) = parts_of.get(&i) else {
                continue;
            };
            for dep in &c.dependencies {
                for &j in by_base.get(dep.as_str()).map(Vec::as_slice).unwrap_or(&[]) {
                    let Some(&(del_j, make_j)) = parts_of.get(&j) else {
                        continue;
                    };
                    // Made (created or updated) after what it depends on is made.
                    if let (Some(a), Some(b)) = (make_j, make_i) {
                        g.add_edge(a, b, "made after its dependency");
                    }
                    // Deleted before what it depends on is deleted.
                    if let (Some(a), Some(b)) = (del_i, del_j) {
                        g.add_edge(a, b, "deleted before its dependency");
                    }
                    // Going away before what it depends on changes.
                    if let (Some(a), None, Some(b)) = (del_i, make_i, make_j) {
                        g.add_edge(a, b, "gone before its dependency changes");
                    }
                }
            }
        }

        // Parallel walk.
        let changes: Arc<Vec<ResourceChange>> = Arc::new(plan.changes.clone());
        let walk_opts = WalkOptions {
            parallelism: opts.parallelism,
            cancel: opts.cancel.clone(),
        };
        let start = |n: NodeId| {
            let (index, part) = g[n];
            let change = changes[index].clone();
            let shared = shared.clone();
            let on_event = opts.on_event.clone();
            let mut ctx = self.op_context(&change.address, &lineage);
            // A delete is given the plan's `before` as its prior already.
            if change.action == Action::Update {
                ctx.planned = change.before.as_ref().map(|b| Arc::new(b.0.clone()));
            }
            let (printer, address) = (on_event.clone(), change.address.clone());
            ctx.output = Some(crate::provider::OutputSink(Arc::new(move |line: &str| {
                printer(ApplyEvent::Output {
                    address: address.clone(),
                    line: line.to_string(),
                })
            })));
            let mut work = self.prepare(index, &change, planned);
            work.part = part;
            let shown = shown_action(change.action, part);
            // Re-reading an unchanged instance's sensitive values is not progress to show.
            let quiet = change.action == Action::NoOp && change.importing.is_none();
            let on_event = move |e: ApplyEvent| {
                if !quiet || matches!(e, ApplyEvent::Failed { .. }) {
                    on_event(e)
                }
            };
            async move {
                let started = Instant::now();
                on_event(ApplyEvent::Started {
                    address: change.address.clone(),
                    action: shown,
                    id: change.id.clone(),
                });
                let node = run_node(work, &change, &ctx, &shared);
                tokio::pin!(node);
                // Long waits (an object the service builds for minutes) say they are still going.
                let mut ticker = tokio::time::interval_at(
                    tokio::time::Instant::now() + STILL_RUNNING_EVERY,
                    STILL_RUNNING_EVERY,
                );
                let result = loop {
                    tokio::select! {
                        r = &mut node => break r,
                        _ = ticker.tick() => on_event(ApplyEvent::StillRunning {
                            address: change.address.clone(),
                            action: shown,
                            elapsed: started.elapsed(),
                        }),
                    }
                };
                match &result {
                    Ok(id) => on_event(ApplyEvent::Finished {
                        address: change.address.clone(),
                        action: shown,
                        id: id.clone(),
                        elapsed: started.elapsed(),
                    }),
                    Err(e) => on_event(ApplyEvent::Failed {
                        address: change.address.clone(),
                        action: shown,
                        error: e.failure(),
                    }),
                }
                result.map(|_| ())
            }
        };
        // What each node came to, in the report, before anything that depends on it starts.
        let settled = |n: NodeId, outcome: &Outcome<(), NodeError>| {
            let (index, part) = g[n];
            let change = &plan.changes[index];
            let address = change.address.clone();
            let skipped = |report: &mut ApplyReport, because: String| {
                (opts.on_event)(ApplyEvent::Skipped {
                    address: address.clone(),
                    because,
                });
                report.skipped.push(address.clone());
            };
            match outcome {
                Outcome::Done(()) => {
                    match change.action {
                        Action::Create => report.added += 1,
                        Action::Update => report.changed += 1,
                        Action::Delete => report.destroyed += 1,
                        Action::DeleteThenCreate | Action::CreateThenDelete => match part {
                            Part::Delete => report.destroyed += 1,
                            _ => report.added += 1,
                        },
                        Action::Forget => report.forgotten += 1,
                        Action::NoOp | Action::Read => {}
                    }
                    if change.importing.is_some() {
                        report.imported += 1;
                    }
                    // Locals may read what just finished.
                    if locals_read_resources {
                        self.evaluate_locals(&mut lock(&shared.world), &local_order);
                    }
                }
                Outcome::Failed(e) => {
                    if e.is_fatal() && report.stopped.is_none() {
                        report.stopped = Some(format!("{address} could not be recorded: {e}"));
                    }
                    report.failed.push((address.clone(), e.failure()));
                }
                Outcome::Panicked(message) => {
                    let failure = Failure::from(format!(
                        "brickform failed while applying this (a bug): {message}"
                    ));
                    (opts.on_event)(ApplyEvent::Failed {
                        address: address.clone(),
                        action: shown_action(change.action, part),
                        error: failure.clone(),
                    });
                    report.failed.push((address.clone(), failure));
                }
                Outcome::Skipped { cause } => {
                    let cause = &plan.changes[g[*cause].0].address;
                    skipped(&mut report, format!("{cause} failed"));
                }
                // The walk stopped (interrupted, or a fatal error) before these started. Not
                // announced one by one (an interrupted apply of many instances would print a
                // line for each): the summary lists them with the reason.
                Outcome::NotStarted { .. } => report.skipped.push(address.clone()),
            }
        };
        let walk = g.walk(&walk_opts, start, settled).await;
        report.interrupted = walk.stopped == Some(Stop::Cancelled);
        // Results are written with the next group of records, not waited for: write the
        // last ones, so the log holds every call's outcome should saving the state fail.
        if let Err(e) = shared.journal.sync().await
            && report.stopped.is_none()
        {
            report.stopped = Some(format!("the write-ahead log could not be written: {e}"));
        }

        report.unresolved = shared.journal.open_intents().await.len();
        // Outputs, from the final world.
        let shared = match Arc::try_unwrap(shared) {
            Ok(s) => s,
            Err(arc) => {
                // All tasks have finished, so this does not happen; fall back to copying.
                let doc = arc.doc.lock().await.clone();
                let world = lock(&arc.world).clone();
                let journal_doc = doc;
                return self.finish_outputs(journal_doc, world, plan, report);
            }
        };
        let doc = shared.doc.into_inner();
        let world = shared.world.into_inner().unwrap_or_else(|p| p.into_inner());
        self.finish_outputs(doc, world, plan, report)
    }

    fn finish_outputs(
        &self,
        mut doc: StateDocument,
        world: World,
        plan: &crate::plan::Plan,
        mut report: ApplyReport,
    ) -> (StateDocument, ApplyReport) {
        let destroying = plan.mode == crate::plan::PlanMode::Destroy;
        self.drop_pending_tokens(&mut doc, plan);
        for (name, o) in &self.config.outputs {
            if destroying {
                doc.remove_output(name);
                continue;
            }
            match Evaluator::new(&world, &self.config.dir).eval(&o.value.expr) {
                Ok(v) if v.is_wholly_known() => {
                    doc.set_output(name, v.to_json(), o.sensitive);
                    report.outputs.push((name.clone(), v, o.sensitive));
                }
                Ok(_) | Err(_) => {}
            }
        }
        if !destroying {
            report.checks = crate::engine::checks::evaluate(&self.config, &world);
        }
        let stale: Vec<String> = doc
            .outputs()
            .keys()
            .filter(|k| !self.config.outputs.contains_key(*k))
            .cloned()
            .collect();
        for k in stale {
            doc.remove_output(&k);
        }
        (doc, report)
    }

    /// Locals in dependency order, and whether any of them reads a resource (only then do
    /// they need evaluating again as resources finish).
    fn local_order(&self) -> (Vec<ConfigNode>, bool) {
        let (cg, _) = crate::graph::build(&self.config);
        let order: Vec<ConfigNode> = cg
            .ordered_nodes()
            .unwrap_or_default()
            .into_iter()
            .filter(super::values::is_value)
            .collect();
        let reads_resources = order
            .iter()
            .any(|id| !cg.resource_dependencies(id).is_empty());
        (order, reads_resources)
    }

    fn evaluate_locals(&self, world: &mut World, order: &[ConfigNode]) {
        for id in order {
            // The plan reported what fails; the value stays unknown.
            let _ = super::values::evaluate(world, &self.config, id);
        }
    }

    /// What a node needs to run, taken from the configuration before the task starts.
    fn prepare(&self, index: usize, change: &ResourceChange, planned: &Planned) -> Work {
        let spec = &planned.specs[index];
        let resource = spec
            .resource
            .as_ref()
            .and_then(|r| self.config.resources.get(r))
            .cloned();
        Work {
            part: Part::Whole,
            kind: (change.mode == Mode::Managed)
                .then(|| {
                    self.registry_for(&change.provider)
                        .kind(&change.type_name)
                        .cloned()
                })
                .flatten(),
            data_source: (change.mode == Mode::Data)
                .then(|| {
                    self.registry_for(&change.provider)
                        .data_source(&change.type_name)
                        .cloned()
                })
                .flatten(),
            resource,
            key: spec.key.clone(),
            each_value: spec.each_value.clone(),
            base_dir: self.config.dir.clone(),
            presets: self.presets().cloned(),
            production: self.settings.mode == Some(crate::lang::environment::EnvMode::Production),
        }
    }
}

impl Engine<'_> {
    /// Drops the tokens of unresolved creates (see `StateDocument::pending_token`) that no
    /// create will use: all of them after a destroy (what such a create may have made is
    /// removed with the rest, or, for a kind whose delete only forgets, forgotten), and those
    /// of resources no longer in the configuration. A targeted plan keeps them.
    fn drop_pending_tokens(&self, doc: &mut StateDocument, plan: &crate::plan::Plan) {
        if plan.targeted {
            return;
        }
        let destroying = plan.mode == crate::plan::PlanMode::Destroy;
        let unused: Vec<String> = doc
            .pending_token_addresses()
            .filter(|a| {
                let base = base_of(a);
                destroying || !self.config.resources.contains_key(base)
            })
            .map(str::to_string)
            .collect();
        for a in unused {
            doc.clear_pending_token(&a);
        }
    }
}

/// Which part of a change a node carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Part {
    Whole,
    /// The delete of a replacement.
    Delete,
    /// The create of a replacement.
    Create,
}

struct Work {
    part: Part,
    kind: Option<Arc<dyn ResourceKind>>,
    data_source: Option<Arc<dyn crate::provider::DataSource>>,
    resource: Option<crate::lang::load::Resource>,
    key: Option<crate::plan::InstanceKey>,
    each_value: Option<Value>,
    base_dir: std::path::PathBuf,
    /// The development presets the plan applied, applied again to what is sent.
    presets: Option<crate::provider::Presets>,
    /// Whether the environment is in production mode (its checks run again).
    production: bool,
}

fn base_address(c: &ResourceChange) -> &str {
    base_of(&c.address)
}

/// Problems found evaluating a configuration again, as the node's failure.
fn evaluation_failed(diags: &Diagnostics) -> NodeError {
    NodeError::Evaluation {
        message: diags
            .errors()
            .map(|d| format!("{}: {}", d.summary, d.detail.clone().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("; "),
        diagnostics: Diagnostics(diags.errors().cloned().collect()),
    }
}

/// Whether values are still unknown after the dependencies were applied.
fn still_unknown(config: &Object) -> Result<(), NodeError> {
    let unknown: Vec<&str> = config
        .iter()
        .filter(|(_, v)| v.contains_unknown())
        .map(|(k, _)| k.as_str())
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(NodeError::invalid(format!(
        "the value of {} is still unknown after its dependencies were applied",
        unknown.join(", ")
    )))
}

/// A data source's configuration, evaluated with the values known now.
fn evaluate_lookup(
    work: &Work,
    shared: &Shared,
    schema: &crate::provider::Schema,
    address: &str,
) -> Result<Object, NodeError> {
    let Some(r) = &work.resource else {
        return Err(format!("{address} has no configuration to evaluate").into());
    };
    let world = lock(&shared.world);
    let (config, _, diags) = decode_instance(
        r,
        schema,
        &world,
        &work.base_dir,
        work.key.as_ref(),
        work.each_value.as_ref(),
    );
    drop(world);
    if diags.has_errors() {
        return Err(evaluation_failed(&diags));
    }
    still_unknown(&config)?;
    Ok(config)
}

/// What apply sends for a managed instance: its configuration made as the plan made it
/// (see `configure`), with the values its dependencies got, and checked against the plan.
/// It may only fill in what the plan showed as unknown: a known value that came out
/// otherwise fails the node, and nothing is sent for it.
fn evaluate(
    work: &Work,
    shared: &Shared,
    kind: &dyn ResourceKind,
    change: &ResourceChange,
) -> Result<(Object, Vec<Vec<PathStep>>), NodeError> {
    let address = &change.address;
    let Some(r) = &work.resource else {
        return Err(format!("{address} has no configuration to evaluate").into());
    };
    let world = lock(&shared.world);
    let made = configure(
        &Inputs {
            resource: r,
            kind,
            world: &world,
            base_dir: &work.base_dir,
            key: work.key.as_ref(),
            each: work.each_value.as_ref(),
            production: work.production,
            presets: work.presets.as_ref(),
        },
        address,
    );
    drop(world);
    if made.diags.has_errors() {
        return Err(evaluation_failed(&made.diags));
    }
    let mut config = made.config;
    still_unknown(&config)?;
    let planned = change.after.as_ref().map(|a| &a.0);
    // A create makes the object as configured; anything else keeps what the plan kept for
    // the attributes `ignore_changes` covers.
    let exists = change.action != Action::Create;
    if let Some(planned) = planned {
        Ignored::new(&r.lifecycle, exists).keep(kind.schema(), &mut config, planned);
        let mut sensitive = change.sensitive_paths.clone();
        sensitive.extend(made.sensitive_paths.iter().cloned());
        if let Some((path, was, now)) = differs_from_plan(&config, planned, &sensitive) {
            return Err(NodeError::invalid(format!(
                "{} was planned as {} but is {} now that its dependencies are applied; nothing was sent for {address} (plan again to see the change)",
                path_text(&path),
                shown_value(&was),
                shown_value(&now),
            )));
        }
    }
    Ok((config, made.sensitive_paths))
}

fn shown_value(v: &Value) -> String {
    v.to_json().to_string()
}

async fn record(
    shared: &Shared,
    change: &ResourceChange,
    kind: &dyn ResourceKind,
    remote: &Remote,
    config: &Object,
    sensitive: &[Vec<PathStep>],
) -> Result<ResourceState, NodeError> {
    let doc = shared.doc.lock().await;
    let slot = Slot {
        address: &change.address,
        provider: &change.provider,
        dependencies: &change.dependencies,
    };
    Ok(state_entry(&doc, slot, kind, remote, config, sensitive)?)
}

/// Records a made object: in state through the log, and in the world for what refers to it.
async fn created(
    shared: &Shared,
    change: &ResourceChange,
    kind: &dyn ResourceKind,
    seq: u64,
    remote: &Remote,
    config: &Object,
    sensitive: &[Vec<PathStep>],
) -> Result<(), NodeError> {
    let rs = record(shared, change, kind, remote, config, sensitive).await?;
    let mut doc = shared.doc.lock().await;
    shared
        .journal
        .result(seq, WalOutcome::Created(rs.clone()), &mut doc)
        .await?;
    drop(doc);
    set_world(shared, change, &rs, config, sensitive);
    Ok(())
}

async fn run_node(
    work: Work,
    change: &ResourceChange,
    ctx: &OpContext,
    shared: &Shared,
) -> Result<Option<String>, NodeError> {
    let part = work.part;
    if change.mode == Mode::Data {
        let ds = work
            .data_source
            .as_ref()
            .ok_or_else(|| format!("unknown data source type {}", change.type_name))?;
        let config = evaluate_lookup(&work, shared, ds.schema(), &change.address)?;
        let mut value = config.clone();
        value.extend(ds.read(&config).await?);
        lock(&shared.world).set_instance(
            &change.module,
            Mode::Data,
            &change.type_name,
            &change.name,
            change.index.as_ref(),
            Value::Object(value),
        );
        return Ok(None);
    }
    let kind = work
        .kind
        .clone()
        .ok_or_else(|| format!("unknown resource type {}", change.type_name))?;
    let journal = &shared.journal;
    let prior_obj = || {
        change
            .before
            .as_ref()
            .map(|b| b.0.clone())
            .unwrap_or_default()
    };

    let delete = |id: String| {
        let kind = kind.clone();
        async move {
            // A container's delete takes what lies in it: only what the plan named.
            if let (Some(seen), Some(loc)) = (
                change.contents.as_ref().and_then(|c| c.unmanaged.as_ref()),
                shared.locations.get(&change.address),
            ) {
                let listing = kind.contents(ctx, &id, &prior_obj()).await.map_err(|e| {
                    NodeError::Engine(format!("cannot list what it holds: {}", error_text(&e)))
                })?;
                let now = super::containers::shown(
                    kind.as_ref(),
                    super::containers::unmanaged(listing, loc, shared.locations.values()),
                );
                super::containers::check_unchanged(&change.address, seen, &now)?;
            }
            let seq = journal
                .intent(
                    WalOp::Delete,
                    &change.address,
                    &change.type_name,
                    None,
                    Some(id.clone()),
                )
                .await?;
            let result = match kind.delete(ctx, &id, &prior_obj()).await {
                // The delete may have happened though its answer was lost: if the object is
                // gone, it was deleted (and is not left in state for the next run to find).
                Err(e) if e.uncertain => match kind.read(ctx, &id, &prior_obj()).await {
                    Ok(None) => {
                        tracing::debug!(address = %change.address, %id, "a delete that failed had deleted the object");
                        Ok(())
                    }
                    _ => Err(e),
                },
                other => other,
            };
            let mut doc = shared.doc.lock().await;
            match result {
                Ok(()) => {
                    journal
                        .result(seq, WalOutcome::Deleted {}, &mut doc)
                        .await?;
                    Ok(())
                }
                Err(e) => {
                    journal
                        .result(seq, WalOutcome::Failed(e.message.clone()), &mut doc)
                        .await?;
                    Err(NodeError::Provider(e))
                }
            }
        }
    };
    let create = || {
        let kind = kind.clone();
        let work = &work;
        async move {
            let (config, sensitive) = evaluate(work, shared, kind.as_ref(), change)?;
            // A create_before_destroy replacement names the object it replaces, which stays
            // in state (deposed) until its own delete is recorded.
            let replaces = (change.action == Action::CreateThenDelete)
                .then(|| change.id.clone())
                .flatten();
            let natural_key = kind.natural_key(ctx, &config);
            // A kind whose create takes a token sends the token of an earlier create of this
            // address whose outcome stayed unknown, so it gets what that one may have made;
            // otherwise a fresh one.
            let token = if kind.create_token() {
                let doc = shared.doc.lock().await;
                Some(
                    doc.pending_token(&change.address)
                        .map(str::to_string)
                        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
                )
            } else {
                None
            };
            let seq = journal
                .intent_with_token(
                    &change.address,
                    &change.type_name,
                    natural_key.clone(),
                    replaces,
                    token.clone(),
                )
                .await?;
            let ctx = &OpContext {
                create_token: token.clone(),
                ..ctx.clone()
            };
            let made = match kind.create(ctx, &config).await {
                // With its token, a create whose answer was lost is safe to repeat: the
                // service answers with what the first call made, or makes it now.
                Err(e) if e.uncertain && e.made.is_none() && token.is_some() => {
                    tracing::debug!(address = %change.address, error = %e.message, "repeating an uncertain create with its token");
                    match kind.create(ctx, &config).await {
                        Err(again) if again.uncertain && again.made.is_none() => {
                            // Still unknown: the token is kept in state, and the next run's
                            // create of this address sends it again.
                            let mut doc = shared.doc.lock().await;
                            journal
                                .result(seq, WalOutcome::Pending {}, &mut doc)
                                .await?;
                            return Err(NodeError::Provider(ProviderError {
                                message: format!(
                                    "{} (it may have been created; the next apply repeats the create with the same token, which returns what it made)",
                                    again.message
                                ),
                                ..again
                            }));
                        }
                        other => other,
                    }
                }
                // The create may have happened though it failed (a server error, a lost
                // answer): look for the object before counting it as not made, so a second
                // create cannot make a duplicate.
                Err(e) if e.uncertain && e.made.is_none() => {
                    let found = match &natural_key {
                        Some(key) => kind.find_by_key(ctx, key).await,
                        None => Ok(None),
                    };
                    match found {
                        Ok(Some(remote)) => {
                            tracing::debug!(address = %change.address, id = %remote.id, "a create that failed had made the object");
                            // What the create does after making the object may not have run.
                            match kind.complete_create(ctx, remote.clone()).await {
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
                        Ok(None) => Err(e),
                        Err(lookup) => {
                            // Neither made nor known to be not made: the intent stays open,
                            // and the next run looks again before it plans.
                            return Err(NodeError::Provider(ProviderError {
                                message: format!(
                                    "{} (it may have been created; looking for it failed too: {}; the next run looks again)",
                                    e.message, lookup.message
                                ),
                                ..e
                            }));
                        }
                    }
                }
                other => other,
            };
            match made {
                Ok(remote) => {
                    created(
                        shared,
                        change,
                        kind.as_ref(),
                        seq,
                        &remote,
                        &config,
                        &sensitive,
                    )
                    .await?;
                    Ok(Some(remote.id))
                }
                // Made, then a later step failed: the object is recorded, never orphaned,
                // and the failure reported. What it was sent did not all take, so state
                // records what the service holds as what it was given (as an import does):
                // the next plan shows what is still to write, instead of taking the
                // service's answer to a half-done write for its rewriting of the whole.
                Err(mut e) if e.made.is_some() => {
                    if let Some(remote) = e.made.take() {
                        let held = configurable(kind.schema(), &remote.attrs);
                        created(shared, change, kind.as_ref(), seq, &remote, &held, &[]).await?;
                    }
                    Err(NodeError::Provider(e))
                }
                Err(e) => {
                    let mut doc = shared.doc.lock().await;
                    journal
                        .result(seq, WalOutcome::Failed(e.message.clone()), &mut doc)
                        .await?;
                    Err(NodeError::Provider(e))
                }
            }
        }
    };

    match change.action {
        Action::Create => create().await,
        Action::Delete => {
            let id = change.id.clone().ok_or("no id recorded for this object")?;
            delete(id).await.map(|_| None)
        }
        Action::DeleteThenCreate | Action::CreateThenDelete if part == Part::Create => {
            create().await
        }
        Action::DeleteThenCreate => {
            let id = change.id.clone().ok_or("no id recorded for this object")?;
            delete(id).await.map(|_| None)
        }
        Action::CreateThenDelete => {
            // The new object took the old one's place in state and the old one was kept
            // there, deposed; it is deleted by its id, and the recorded delete drops it.
            let old = change.id.clone().ok_or("no id recorded for this object")?;
            delete(old).await.map(|_| None)
        }
        Action::NoOp if change.importing.is_none() => {
            let (config, sensitive) = evaluate(&work, shared, kind.as_ref(), change)?;
            let base = change.after.as_ref().or(change.before.as_ref());
            let v = base.map(|o| o.0.clone()).unwrap_or_default();
            set_world_value(shared, change, v, &config, &sensitive);
            Ok(None)
        }
        Action::Update | Action::NoOp | Action::Read => {
            let (config, sensitive) = evaluate(&work, shared, kind.as_ref(), change)?;
            let id = change.id.clone().ok_or("no id recorded for this object")?;
            let importing = change.importing.is_some();
            let op = if importing {
                WalOp::Import
            } else {
                WalOp::Update
            };
            let seq = journal
                .intent(
                    op,
                    &change.address,
                    &change.type_name,
                    None,
                    Some(id.clone()),
                )
                .await?;
            let result = if change.action == Action::Update {
                let prior = {
                    let doc = shared.doc.lock().await;
                    prior_of(&doc, &change.address)
                        .map(|(_, p)| p.applied(kind.schema()))
                        .unwrap_or_else(prior_obj)
                };
                kind.update(ctx, &id, &prior, &config).await
            } else {
                match kind.read(ctx, &id, &prior_obj()).await {
                    Ok(Some(r)) => Ok(r),
                    Ok(None) => Err(crate::provider::ProviderError::not_found(format!(
                        "{} no longer exists",
                        change.address
                    ))),
                    Err(e) => Err(e),
                }
            };
            match result {
                Ok(remote) => {
                    let rs =
                        record(shared, change, kind.as_ref(), &remote, &config, &sensitive).await?;
                    let outcome = if importing {
                        WalOutcome::Imported(rs.clone())
                    } else {
                        WalOutcome::Updated(rs.clone())
                    };
                    let mut doc = shared.doc.lock().await;
                    journal.result(seq, outcome, &mut doc).await?;
                    drop(doc);
                    set_world(shared, change, &rs, &config, &sensitive);
                    Ok(Some(remote.id))
                }
                Err(e) => {
                    let mut doc = shared.doc.lock().await;
                    journal
                        .result(seq, WalOutcome::Failed(e.message.clone()), &mut doc)
                        .await?;
                    Err(NodeError::Provider(e))
                }
            }
        }
        Action::Forget => {
            let seq = journal
                .intent(
                    WalOp::Forget,
                    &change.address,
                    &change.type_name,
                    None,
                    change.id.clone(),
                )
                .await?;
            let mut doc = shared.doc.lock().await;
            journal
                .result(seq, WalOutcome::Forgotten {}, &mut doc)
                .await?;
            Ok(None)
        }
    }
}

/// What references to an applied instance see: the recorded state, with the sensitive values
/// state holds only as fingerprints taken from the evaluated configuration (in memory only),
/// and marked sensitive so whatever reads them is too.
fn set_world(
    shared: &Shared,
    change: &ResourceChange,
    rs: &ResourceState,
    config: &Object,
    sensitive: &[Vec<PathStep>],
) {
    set_world_value(shared, change, merged_from(rs), config, sensitive);
}

fn set_world_value(
    shared: &Shared,
    change: &ResourceChange,
    mut v: Object,
    config: &Object,
    sensitive: &[Vec<PathStep>],
) {
    let mut world = lock(&shared.world);
    for p in sensitive.iter().chain(&change.sensitive_paths) {
        if let Some(PathStep::Key(k)) = p.first() {
            if let Some(val) = config.get(k) {
                v.insert(k.clone(), val.clone());
            }
            world.mark_sensitive(&change.module, &change.type_name, &change.name, k);
        }
    }
    world.set_instance(
        &change.module,
        Mode::Managed,
        &change.type_name,
        &change.name,
        change.index.as_ref(),
        Value::Object(v),
    );
}

fn error_text(e: &crate::provider::ProviderError) -> String {
    match &e.detail {
        Some(d) => format!("{}\n{d}", e.message),
        None => e.message.clone(),
    }
}
