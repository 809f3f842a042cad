//! What the walk starts from: state with the renames `moved` blocks ask for and the
//! dependencies of what the plan leaves as it is, and the world as the plan left it, with
//! the locals evaluated over it.

use super::Failure;
use super::report::ApplyReport;
use crate::addrs::ConfigNode;
use crate::engine::world::World;
use crate::engine::{Engine, Planned};
use crate::plan::{Action, Mode, Plan, PlanMode};
use crate::value::{PathStep, Value};
use brickform_state::StateDocument;

/// Renames the state entries `moved` blocks moved. The plan made its comparisons with the
/// new addresses already, so the renames come before anything else; one that cannot be
/// made fails its instance in the report.
pub(super) fn rename_moved(doc: &mut StateDocument, plan: &Plan, report: &mut ApplyReport) {
    for c in &plan.changes {
        if let Some(from) = &c.moved_from
            && doc.get(from).is_some()
            && doc.get(&c.addr).is_none()
            && let Err(e) = doc.mv(from, &c.addr)
        {
            report.failed.push((
                c.address(),
                Failure::from(format!("cannot move {from} in state: {e}")),
            ));
        }
    }
}

/// An instance the plan leaves as it is keeps in state the dependencies its configuration
/// names now, as Terraform records them: no call writes it, so nothing else would, and the
/// dependencies it was made with would order its eventual delete (or the delete of its old
/// object when it is replaced create-first) before what it no longer refers to changes —
/// which can leave a later plan with no order at all. A destroy configures nothing.
pub(super) fn record_dependencies(doc: &mut StateDocument, plan: &Plan) {
    if plan.mode == PlanMode::Destroy {
        return;
    }
    for c in &plan.changes {
        if c.action != Action::NoOp
            || c.mode() != Mode::Managed
            || c.importing.is_some()
            || c.deposed
        {
            continue;
        }
        if let Some(rs) = doc.get_mut(&c.addr)
            && rs.dependencies != c.dependencies
        {
            rs.dependencies = c.dependencies.clone();
        }
    }
}

/// Locals in dependency order, and whether any of them reads a resource (only then do
/// they need evaluating again as resources finish).
pub(super) struct Locals {
    pub order: Vec<ConfigNode>,
    pub read_resources: bool,
}

impl Engine<'_> {
    /// The world as the plan left it; dependencies overwrite their entries as they finish.
    pub(super) fn seeded_world(&self, planned: &Planned) -> World {
        let mut world = World::new(
            self.vars.values.clone(),
            self.vars.sensitive.clone(),
            &self.environment,
            &self.config.dir,
            self.registry,
        );
        world.declare_modules(&self.config);
        for (c, spec) in planned.plan.changes.iter().zip(&planned.specs) {
            // What nothing reads needs no value here (most of a large configuration: the
            // leaves); its values are in the plan.
            let value = match c.action {
                _ if !spec.referenced => None,
                Action::NoOp | Action::Read => {
                    c.after.as_ref().or(c.before.as_ref()).map(|o| o.0.clone())
                }
                _ => c.after.as_ref().map(|o| o.0.clone()),
            };
            if c.mode() == Mode::Managed {
                for p in &c.sensitive_paths {
                    if let Some(PathStep::Key(k)) = p.first() {
                        world.mark_sensitive(c.module(), c.type_name(), c.name(), k);
                    }
                }
            }
            if let Some(v) = value
                && spec.resource.is_some()
            {
                world.set_instance(
                    c.module(),
                    c.mode(),
                    c.type_name(),
                    c.name(),
                    c.key(),
                    Value::object(v),
                );
            }
        }
        world
    }

    /// The configuration's locals (see [`Locals`]).
    pub(super) fn locals(&self) -> Locals {
        let (cg, _) = crate::graph::build(&self.config);
        let order: Vec<ConfigNode> = cg
            .ordered_nodes()
            .unwrap_or_default()
            .into_iter()
            .filter(crate::engine::values::is_value)
            .collect();
        let read_resources = order
            .iter()
            .any(|id| !cg.resource_dependencies(id).is_empty());
        Locals {
            order,
            read_resources,
        }
    }

    pub(super) fn evaluate_locals(&self, world: &mut World, order: &[ConfigNode]) {
        for id in order {
            // The plan reported what fails; the value stays unknown.
            let _ = crate::engine::values::evaluate(world, &self.config, id);
        }
    }
}
