//! What stops a plan from destroying what must stay: `prevent_destroy`, protected
//! environments, and the order a `create_before_destroy` replacement needs.

use crate::addrs::base_of;
use crate::engine::Engine;
use crate::lang::diagnostics::{Diagnostic, Diagnostics};
use crate::plan::{Action, Mode, Plan};
use std::collections::HashSet;

impl Engine<'_> {
    /// A `protect = true` environment refuses to delete or replace data objects unless the
    /// command says --allow-destroy.
    pub(super) fn protected_changes(&self, plan: &Plan) -> Diagnostics {
        let mut diags = Diagnostics::new();
        // The kinds that say data lives in their objects, named in the message.
        let protected: Vec<&str> = self
            .registry
            .kinds
            .iter()
            .filter(|(_, k)| k.protected())
            .map(|(name, _)| *name)
            .collect();
        let types = match protected.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        for c in &plan.changes {
            let destroys = c.action == Action::Delete || c.action.is_replace();
            let guarded = c.mode == Mode::Managed
                && self
                    .registry
                    .kind(&c.type_name)
                    .is_some_and(|k| k.protected());
            if destroys && guarded {
                let span = self
                    .config
                    .resources
                    .get(base_of(&c.address))
                    .and_then(|r| r.span.clone());
                diags.push(
                    Diagnostic::error(format!(
                        "{} would be {} in protected environment \"{}\"",
                        c.address,
                        if c.action == Action::Delete { "destroyed" } else { "replaced" },
                        self.environment
                    ))
                    .at(span)
                    .detail(format!("Environment blocks with protect = true do not delete or replace objects of type {types}: the data in them would go too."))
                    .hint("if this is intended, run the command again with --allow-destroy"),
                );
            }
        }
        diags
    }
}

/// A replaced instance that something replaced with `create_before_destroy` depends on is
/// replaced that way too (as Terraform does): the dependent's new copy needs the new
/// dependency before its old copy goes, and the dependency's old copy can go only after
/// the dependent's — destroying the dependency first would make apply's graph a cycle.
pub(super) fn create_before_destroy_spreads(plan: &mut Plan) {
    loop {
        let needs: HashSet<String> = plan
            .changes
            .iter()
            .filter(|c| c.action == Action::CreateThenDelete)
            .flat_map(|c| c.dependencies.iter().cloned())
            .collect();
        let mut changed = false;
        for c in plan.changes.iter_mut() {
            if c.action == Action::DeleteThenCreate
                && (needs.contains(&c.address) || needs.contains(base_of(&c.address)))
            {
                c.action = Action::CreateThenDelete;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

pub(super) fn prevent_destroy_error(
    address: &str,
    span: Option<crate::lang::source::Span>,
) -> Diagnostic {
    Diagnostic::error("Instance cannot be destroyed")
        .at(span)
        .detail(format!("Resource {address} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan using the --target flag."))
}

/// A destroy plan deletes what this state holds and nothing else: lookups are not read,
/// and what the configuration would create or import is left alone.
pub(super) fn destroy_only(plan: &mut Plan, state: &brickform_state::StateDocument) {
    for c in plan.changes.iter_mut() {
        if c.mode == Mode::Data {
            c.action = Action::NoOp;
            continue;
        }
        if state.get(&c.address).is_some() && c.action != Action::Forget {
            c.action = Action::Delete;
            c.after = None;
            c.fields.clear();
            c.importing = None;
        } else {
            // Not this state's: a destroy neither deletes nor imports it.
            c.action = Action::NoOp;
            c.importing = None;
        }
    }
}

impl Engine<'_> {
    /// `prevent_destroy` on what a destroy deletes (a `--target` narrows it).
    pub(super) fn destroy_guards(&self, plan: &Plan) -> Diagnostics {
        let mut diags = Diagnostics::new();
        for c in plan.changes.iter().filter(|c| c.action == Action::Delete) {
            let base = base_of(&c.address);
            if let Some(res) = self
                .config
                .resources
                .get(base)
                .filter(|res| res.lifecycle.prevent_destroy)
            {
                diags.push(prevent_destroy_error(&c.address, res.span.clone()));
            }
        }
        diags
    }
}
