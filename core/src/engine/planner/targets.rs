//! `--target` and `--replace`: addresses given on the command line.

use crate::addrs::base_of;
use crate::engine::{Engine, InstanceSpec, PlanRequest};
use crate::lang::diagnostics::{Diagnostic, Diagnostics};
use crate::plan::{Plan, PlanMode, ResourceChange};
use brickform_state::StateDocument;
use std::collections::HashSet;

impl Engine<'_> {
    /// Narrows a plan to `--target` addresses. Applying a target needs what it depends on, so
    /// a normal plan keeps the targets and their dependencies; destroying a target takes what
    /// depends on it with it (it could not stay behind without it), and never what the target
    /// itself depends on.
    pub(super) fn apply_targets(
        &self,
        plan: &mut Plan,
        specs: &mut Vec<InstanceSpec>,
        req: &PlanRequest,
        state: &StateDocument,
        diags: &mut Diagnostics,
    ) {
        let matches = crate::addrs::targets;
        for t in &req.targets {
            if !plan.changes.iter().any(|c| matches(t, &c.address)) {
                diags.push(unknown_address_error("--target", t, plan));
            }
        }
        // What each instance depends on: the configuration's references, and for instances
        // being deleted also what the state recorded when they were applied.
        let depends_on = |c: &ResourceChange| -> Vec<String> {
            let mut d = c.dependencies.clone();
            if let Some(r) = state.get(&c.address) {
                d.extend(r.dependencies.iter().cloned());
            }
            d
        };
        let destroying = req.mode == PlanMode::Destroy;
        let mut keep: HashSet<String> = HashSet::new();
        let mut stack: Vec<String> = plan
            .changes
            .iter()
            .filter(|c| req.targets.iter().any(|t| matches(t, &c.address)))
            .map(|c| c.address.clone())
            .collect();
        while let Some(a) = stack.pop() {
            if !keep.insert(a.clone()) {
                continue;
            }
            if destroying {
                // Dependents: instances that name `a` (or its resource) among their dependencies.
                let a_base = base_of(&a);
                for c in &plan.changes {
                    if depends_on(c).iter().any(|d| *d == a || *d == a_base) {
                        stack.push(c.address.clone());
                    }
                }
            } else if let Some(c) = plan.changes.iter().find(|c| c.address == a) {
                for d in depends_on(c) {
                    for c2 in &plan.changes {
                        if c2.address == d || base_of(&c2.address) == d {
                            stack.push(c2.address.clone());
                        }
                    }
                }
            }
        }
        let mut i = 0;
        while i < plan.changes.len() {
            if keep.contains(&plan.changes[i].address) {
                i += 1;
            } else {
                plan.changes.remove(i);
                specs.remove(i);
            }
        }
    }
}

/// An address given on the command line that names no instance of the plan, with the closest
/// one it may have meant.
pub(super) fn unknown_address_error(flag: &str, address: &str, plan: &Plan) -> Diagnostic {
    let mut known: Vec<&str> = plan.changes.iter().map(|c| c.address.as_str()).collect();
    let bases: Vec<&str> = known.iter().map(|a| base_of(a)).collect();
    known.extend(bases);
    known.sort();
    known.dedup();
    Diagnostic::error(format!("{flag} {address} matches no resource"))
        .detail(format!(
            "Neither the configuration nor the state has an instance at {address}, so the plan would silently do nothing for it."
        ))
        .hint(
            crate::lang::diagnostics::did_you_mean(address, known.iter().copied()).unwrap_or_else(
                || match known.len() {
                    0 => "the plan has no resources".to_string(),
                    n if n <= 10 => format!("the plan's addresses: {}", known.join(", ")),
                    n => format!("the plan's addresses (first 10 of {n}): {}", known[..10].join(", ")),
                },
            ),
        )
}
