//! Building a plan (docs/architecture.md, Plan): the configuration's graph is walked in
//! dependency order, each resource expanded (`count`, `for_each`), decoded, compared with
//! what state and the service hold, and given an action; then come what state holds and the
//! configuration no longer does, outputs, and the guards on what would be destroyed.
//!
//! - `walk`: the parallel walk and what nodes share;
//! - `managed`, `data`: the steps of one instance; `decide`: the pure ones among them;
//! - `expand`, `imports`: what the walk needs first;
//! - `removals`, `outputs`, `targets`, `guards`: what comes after.

mod data;
mod decide;
mod expand;
mod guards;
pub(crate) use guards::prevent_destroy_error;
mod impact;
mod imports;
mod lookups_ahead;
mod managed;
mod outputs;
mod removals;
mod speculate;
mod targets;
mod walk;

use super::world::World;
use super::{Engine, InstanceSpec, PlanRequest, Planned, PresetNotes};
use crate::addrs::InstanceAddr;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::graph;
use crate::plan::{Mode, Plan, PlanMode};
use crate::provider::Schema;
use crate::value::{Object, PathStep};
use brickform_state::StateDocument;
use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

impl Engine<'_> {
    /// Plans the configuration against `state`; returns the plan, what the development
    /// presets changed (by address) and the diagnostics, warnings included.
    pub(super) async fn build_plan(
        &self,
        state: &StateDocument,
        req: &PlanRequest,
    ) -> (Option<Planned>, PresetNotes, Diagnostics) {
        let mut diags = self.settings_diags.clone();
        let Some((cg, order)) = self.ordered_graph(state, &mut diags).await else {
            return (None, PresetNotes::new(), diags);
        };
        let (state, moved_from) = moved(&self.config, state);
        let mut walked = self
            .walk_instances(&cg, &order, &state, req, &moved_from, &mut diags)
            .await;
        self.plan_the_rest(&mut walked, &cg, &state, req, &mut diags)
            .await;
        let Walked {
            plan,
            specs,
            preset_notes,
            ..
        } = walked;
        diags.sort();
        if diags.has_errors() {
            return (None, preset_notes, diags);
        }
        (Some(Planned { plan, specs }), preset_notes, diags)
    }

    /// The configuration's graph and its order, with the providers configured; `None`
    /// when the configuration cannot be planned (said in `diags`).
    async fn ordered_graph(
        &self,
        state: &StateDocument,
        diags: &mut Diagnostics,
    ) -> Option<(graph::ConfigGraph, Vec<crate::dag::NodeId>)> {
        for p in self
            .registry
            .providers
            .iter()
            .chain(self.aliases.values().flat_map(|r| r.providers.iter()))
        {
            p.plan_started();
        }
        let config = &*self.config;
        let (cg, gd) = graph::build(config);
        diags.extend(gd);
        diags.extend(self.unknown_types());
        let providers: Vec<&str> = self.registry.providers.iter().map(|p| p.name()).collect();
        diags.extend(crate::lang::terraform::check(config, &providers));
        if diags.has_errors() {
            return None;
        }
        let order = cg.order()?;
        let nodes: Vec<crate::addrs::ConfigNode> =
            order.iter().map(|&id| cg.dag()[id].clone()).collect();
        diags.extend(self.configure_providers(&nodes, state).await);
        (!diags.has_errors()).then_some((cg, order))
    }

    /// Walks the graph: every instance planned against state and the service (the reads
    /// start first and the walk at once: an instance waits for its own read), then what
    /// state holds and the configuration no longer does, deposed objects and outputs.
    async fn walk_instances(
        &self,
        cg: &graph::ConfigGraph,
        order: &[crate::dag::NodeId],
        state: &StateDocument,
        req: &PlanRequest,
        moved_from: &BTreeMap<InstanceAddr, InstanceAddr>,
        diags: &mut Diagnostics,
    ) -> Walked {
        let config = &*self.config;
        let mut world = World::new(
            self.vars.values.clone(),
            self.vars.sensitive.clone(),
            &self.environment,
            &config.dir,
            self.registry,
        );
        world.declare_modules(config);
        let import_ids = self.import_ids(&world, diags);
        let walked = targets::walked_nodes(cg, order, req);
        let left_out = walked
            .as_ref()
            .map(|w| targets::left_out(cg, w))
            .unwrap_or_default();
        let parallelism = req.calls_in_flight();
        let calls = std::sync::Arc::new(tokio::sync::Semaphore::new(parallelism));
        let mut reads = if req.refresh && !self.offline {
            self.start_refresh(state, &import_ids, &left_out, &calls, parallelism)
        } else {
            super::refresh::Reads::none()
        };
        let refreshed = std::mem::take(&mut reads.pending);
        let walk = walk::PlanWalk {
            engine: self,
            graph: cg,
            state,
            req,
            moved_from,
            import_ids: &import_ids,
            refreshed: std::sync::Arc::new(Mutex::new(
                refreshed
                    .into_iter()
                    .map(|(addr, reading)| (addr, futures_util::FutureExt::shared(reading)))
                    .collect(),
            )),
            world: Mutex::new(world),
            settled: Mutex::default(),
            absent: Mutex::default(),
            claims: Mutex::default(),
            calls,
            parallelism,
            lineage: state.lineage().to_string(),
            walked: walked.as_ref(),
            speculative: false,
            guesses: speculate::Guesses::default(),
        };
        let nodes = walk.run(order).await;
        // Reads no instance took (one the walk did not reach) are made all the same.
        reads.finish().await;
        let world = walk
            .world
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let claims = walk
            .claims
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        diags.extend(guards::claimed_twice(claims, config));

        let mut out = Walked::gathered(nodes, req, &self.environment, diags);
        // What a narrowed plan left out is neither planned nor removed.
        if !left_out.is_empty() {
            out.produced.extend(
                state
                    .resources()
                    .iter()
                    .filter(|r| left_out.contains(r.resource()))
                    .map(|r| r.addr.clone()),
            );
        }
        for (change, spec) in self.orphans(state, req, &out.produced, diags) {
            out.plan.changes.push(change);
            out.specs.push(spec);
        }
        for (change, spec) in self.deposed(state, req).await {
            out.plan.changes.push(change);
            out.specs.push(spec);
        }
        out.plan.outputs = self.plan_outputs(&world, state, req, cg, walked.as_ref(), diags);
        // A destroy leaves nothing for checks to look at, and a narrowed plan has not
        // evaluated what most checks read (Terraform leaves them out of targeted plans too).
        if req.mode != PlanMode::Destroy && walked.is_none() {
            diags.extend(crate::engine::checks::evaluate(config, &world));
        }
        out
    }

    /// What comes after the walk: the guards of a destroy and of replacements, what the
    /// deletes of containers take along, `--replace` and `--target`, the impact on data,
    /// and the checks of the whole plan.
    async fn plan_the_rest(
        &self,
        walked: &mut Walked,
        cg: &graph::ConfigGraph,
        state: &StateDocument,
        req: &PlanRequest,
        diags: &mut Diagnostics,
    ) {
        let Walked {
            plan,
            specs,
            preset_notes,
            ..
        } = walked;
        if req.mode == PlanMode::Destroy {
            guards::destroy_only(plan, state);
        }
        let lineage = state.lineage().to_string();
        let spread = guards::create_before_destroy_spreads(plan);
        diags.extend(self.spread_names(plan, &spread, &lineage).await);
        if req.mode != PlanMode::RefreshOnly {
            self.plan_containers(plan, specs, state, req.calls_in_flight(), diags)
                .await;
        }
        for r in &req.replace {
            // The command line's text, read once: one that is no address matches nothing.
            let addr = InstanceAddr::parse(r).ok();
            if !plan.changes.iter().any(|c| Some(&c.addr) == addr.as_ref()) {
                diags.push(targets::unknown_address_error(
                    "--replace",
                    r,
                    plan,
                    &self.config,
                ));
            }
        }
        if !req.targets.is_empty() {
            self.apply_targets(cg, plan, specs, req, state, diags);
            plan.warnings.push("Resource targeting is in effect: the plan may be incomplete. Use --target only to recover from mistakes, not for routine changes.".into());
        }
        // After targeting: what the plan carries out, and only that.
        if req.mode != PlanMode::RefreshOnly {
            self.plan_data_impact(plan, &lineage, req.calls_in_flight())
                .await;
        }
        if req.mode == PlanMode::Destroy {
            diags.extend(self.destroy_guards(plan));
        }
        diags.extend(self.duplicate_imports(plan, state));
        diags.extend(self.ignore_changes_checks());
        guards::apply_order(plan, diags);
        if self.settings.protect && !req.allow_destroy {
            diags.extend(self.protected_changes(plan));
        }
        if let Some(warning) = self.presets_warning(preset_notes) {
            plan.warnings.push(warning);
        }
    }

    /// What a plan is made from, for its JSON form and saved plans ([`Plan::context`]): the
    /// configuration as expressions, the variables, the providers' addresses, the time. Not
    /// part of every plan, since only those two read it and a large configuration's
    /// description costs what its validation does.
    ///
    /// [`Plan::context`]: crate::plan::Plan::context
    pub fn describe(&self, plan: &crate::plan::Plan) -> crate::plan::PlanContext {
        let (configuration, relevant_attributes) =
            crate::engine::configuration::describe(&self.config, self.registry);
        let variables = self
            .vars
            .values
            .iter()
            .filter(|(k, _)| !self.vars.sensitive.contains(k.as_str()))
            .map(|(k, v)| (k.clone(), crate::plan::SerValue(v.clone())))
            .collect();
        let providers = self
            .registry
            .providers
            .iter()
            .map(|p| (p.name().to_string(), p.source_address()))
            .collect();
        let mut declared = std::collections::BTreeMap::new();
        for c in &plan.changes {
            let key = crate::plan::PlanContext::kind_key(c.mode(), c.type_name());
            if declared.contains_key(&key) {
                continue;
            }
            let schema = match c.mode() {
                Mode::Managed => self.registry.kind(c.type_name()).map(|k| k.schema()),
                Mode::Data => self.registry.data_source(c.type_name()).map(|d| d.schema()),
            };
            if let Some(schema) = schema {
                declared.insert(key, declared_attributes(schema));
            }
        }
        crate::plan::PlanContext {
            declared,
            timestamp: jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
            variables,
            providers,
            configuration,
            relevant_attributes,
        }
    }

    /// Resource and data source types no provider has.
    fn unknown_types(&self) -> Diagnostics {
        let mut diags = Diagnostics::new();
        for r in self.config.resources.values() {
            let known = match r.mode {
                Mode::Managed => self.registry.kind(&r.type_name).is_some(),
                Mode::Data => self.registry.data_source(&r.type_name).is_some(),
            };
            if known {
                continue;
            }
            let names: Vec<&str> = match r.mode {
                Mode::Managed => self.registry.kinds.keys().copied().collect(),
                Mode::Data => self.registry.data_sources.keys().copied().collect(),
            };
            let (summary, what) = match r.mode {
                Mode::Data => ("Invalid data source", "data source"),
                Mode::Managed => ("Invalid resource type", "resource type"),
            };
            diags.push(
                Diagnostic::error(summary)
                    .at(r.type_span.clone())
                    .detail(format!(
                        "The provider does not support {what} \"{}\".",
                        r.type_name
                    ))
                    .maybe_hint(crate::diagnostics::did_you_mean(&r.type_name, names)),
            );
        }
        diags
    }

    /// One warning that says what the development presets changed, if they changed anything.
    fn presets_warning(&self, notes: &PresetNotes) -> Option<String> {
        let p = self.presets()?;
        let touched = notes.len();
        if touched == 0 {
            return None;
        }
        let mut what: Vec<&str> = notes.values().flatten().map(|c| c.note.as_str()).collect();
        what.sort();
        what.dedup();
        Some(format!(
            "Development presets of environment \"{}\" (user {}) apply to {}: {}.",
            self.environment,
            p.user,
            if touched == 1 {
                "1 resource".to_string()
            } else {
                format!("{touched} resources")
            },
            what.join("; ")
        ))
    }
}

/// What a change records of its schema for renderers: computed once per resource block, not
/// once per instance.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    pub block_paths: std::sync::Arc<Vec<Vec<String>>>,
    pub block_keys: std::sync::Arc<Vec<(Vec<String>, String)>>,
    /// The attributes the schema declares sensitive.
    pub sensitive: Vec<Vec<PathStep>>,
}

impl Shape {
    pub fn of(schema: &Schema) -> Shape {
        Shape {
            block_paths: block_paths(schema).into(),
            block_keys: block_keys(schema).into(),
            sensitive: super::instance::sensitive_schema_paths(schema),
        }
    }
}

/// Paths of a schema's nested blocks, for renderers.
pub fn block_paths(schema: &Schema) -> Vec<Vec<String>> {
    fn walk(s: &Schema, prefix: &[String], out: &mut Vec<Vec<String>>) {
        for b in &s.blocks {
            let mut p = prefix.to_vec();
            p.push(b.name.to_string());
            out.push(p.clone());
            walk(&b.schema, &p, out);
        }
    }
    let mut out = Vec::new();
    walk(schema, &[], &mut out);
    out
}

/// The attributes a schema declares, by nested block, for the JSON form.
pub fn declared_attributes(schema: &Schema) -> Vec<crate::plan::Declared> {
    fn walk(s: &Schema, block: Vec<String>, out: &mut Vec<crate::plan::Declared>) {
        out.push(crate::plan::Declared {
            block: block.clone(),
            attributes: s.attributes.iter().map(|a| a.name.to_string()).collect(),
        });
        for b in &s.blocks {
            let mut p = block.clone();
            p.push(b.name.to_string());
            walk(&b.schema, p, out);
        }
    }
    let mut out = Vec::new();
    walk(schema, Vec::new(), &mut out);
    out
}

/// Keyed blocks of a schema with their key attribute, for renderers.
pub fn block_keys(schema: &Schema) -> Vec<(Vec<String>, String)> {
    fn walk(s: &Schema, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
        for b in &s.blocks {
            let mut p = prefix.to_vec();
            p.push(b.name.to_string());
            if let crate::provider::Nesting::Keyed(k) = b.nesting {
                out.push((p.clone(), k.to_string()));
            }
            walk(&b.schema, &p, out);
        }
    }
    let mut out = Vec::new();
    walk(schema, &[], &mut out);
    out
}

fn without_sensitive(mut o: Object, paths: &[Vec<PathStep>]) -> Object {
    super::sensitive::redact_object(&mut o, paths);
    o
}

/// `moved` blocks rename state entries before anything is compared: the state, renamed,
/// and each new address's old one. The state is copied only for a block that renames
/// something: at scale the copy (and its drop) was a third of a no-op plan's work, and a
/// `moved` block kept after its move has been applied (as Terraform advises) finds
/// nothing to rename.
fn moved<'s>(
    config: &crate::lang::load::Config,
    state: &'s StateDocument,
) -> (
    std::borrow::Cow<'s, StateDocument>,
    BTreeMap<InstanceAddr, InstanceAddr>,
) {
    let mut state = std::borrow::Cow::Borrowed(state);
    let mut moved_from: BTreeMap<InstanceAddr, InstanceAddr> = BTreeMap::new();
    for m in &config.moved {
        // A module moved as a whole: every instance inside it.
        if let (Ok((from, "")), Ok((to, ""))) = (
            crate::addrs::split_module(&m.from),
            crate::addrs::split_module(&m.to),
        ) && !from.is_root()
            && !to.is_root()
        {
            if !state.resources().iter().any(|r| from.holds(r.module())) {
                continue;
            }
            if let Ok(moves) = state.to_mut().mv_module(&from, &to) {
                moved_from.extend(moves.into_iter().map(|(old, new)| (new, old)));
            }
            continue;
        }
        // One instance, or every instance of a resource moved as a whole. A text that is no
        // address names nothing in the state.
        let (Ok(from), Ok(to)) = (InstanceAddr::parse(&m.from), InstanceAddr::parse(&m.to)) else {
            continue;
        };
        if !state.instances_of(&from).is_empty()
            && let Ok(moves) = state.to_mut().mv_all(&from, &to)
        {
            moved_from.extend(moves.into_iter().map(|(old, new)| (new, old)));
        }
    }
    (state, moved_from)
}

/// What the walk planned, gathered from its nodes: the plan so far, the specs apply
/// evaluates again, the addresses the configuration produced, and what the development
/// presets changed.
struct Walked {
    plan: Plan,
    specs: Vec<InstanceSpec>,
    produced: HashSet<crate::addrs::InstanceAddr>,
    preset_notes: PresetNotes,
}

impl Walked {
    fn gathered(
        nodes: Vec<walk::NodePlan>,
        req: &PlanRequest,
        environment: &str,
        diags: &mut Diagnostics,
    ) -> Self {
        let planned: usize = nodes.iter().map(|n| n.changes.len()).sum();
        let mut plan = Plan {
            mode: req.mode,
            environment: environment.to_string(),
            targeted: !req.targets.is_empty(),
            ..Plan::default()
        };
        plan.changes.reserve_exact(planned);
        let mut specs = Vec::with_capacity(planned);
        let mut produced = HashSet::with_capacity(nodes.iter().map(|n| n.produced.len()).sum());
        let mut preset_notes = PresetNotes::new();
        for node in nodes {
            plan.changes.extend(node.changes);
            specs.extend(node.specs);
            plan.drift.extend(node.drift);
            plan.warnings.extend(node.warnings);
            produced.extend(node.produced);
            preset_notes.extend(node.preset_notes);
            diags.extend(node.diags);
        }
        Walked {
            plan,
            specs,
            produced,
            preset_notes,
        }
    }
}
