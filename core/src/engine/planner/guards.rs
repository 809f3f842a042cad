//! What stops a plan from destroying what must stay: `prevent_destroy`, protected
//! environments, and the order a `create_before_destroy` replacement needs.

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::Engine;
use crate::lang::load::IgnoreChanges;
use crate::plan::{Action, Mode, Plan};
use crate::value::PathStep;
use std::collections::{HashMap, HashSet};

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
            let guarded = c.mode() == Mode::Managed
                && self
                    .registry
                    .kind(c.type_name())
                    .is_some_and(|k| k.protected());
            if destroys && guarded {
                let span = self
                    .config
                    .resources
                    .get(c.resource())
                    .and_then(|r| r.span.clone());
                diags.push(
                    Diagnostic::error(format!(
                        "{} would be {} in protected environment \"{}\"",
                        c.address(),
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

impl Engine<'_> {
    /// A replacement that create_before_destroy spread to (from something replaced that
    /// way which depends on it) must be creatable while its old object still exists: where
    /// the new object would have a name only one object may hold, and its old object holds
    /// it, the apply would fail after its dependents' new objects were made. Refused here,
    /// as a create_before_destroy set on the instance itself is.
    pub(super) async fn spread_names(
        &self,
        plan: &Plan,
        spread: &[crate::addrs::InstanceAddr],
        lineage: &str,
    ) -> Diagnostics {
        let mut diags = Diagnostics::new();
        if self.offline {
            return diags;
        }
        for c in plan.changes.iter().filter(|c| spread.contains(&c.addr)) {
            let (Some(kind), Some(after), Some(old_id)) = (
                self.registry_for(&c.provider).kind(c.type_name()),
                c.after.as_ref(),
                c.id.as_deref(),
            ) else {
                continue;
            };
            let ctx = self.op_context(&c.address(), lineage);
            if !crate::engine::adopt::key_known(kind.as_ref(), &ctx, &after.0) {
                continue;
            }
            let Ok(found) = kind.find_existing(&ctx, &after.0).await else {
                continue;
            };
            if found.iter().any(|e| e.exclusive && e.remote.id == old_id) {
                let span = self
                    .config
                    .resources
                    .get(c.resource())
                    .and_then(|r| r.span.clone());
                diags.push(
                    Diagnostic::error(format!("{}: create_before_destroy needs a new name", c.address()))
                        .at(span)
                        .detail(format!("{} must be replaced, and create_before_destroy on something replaced with it that depends on it makes its new object be created first; that object would have the name {old_id} holds until it is deleted: the create would fail.", c.address()))
                        .hint("change its name in the same change, or remove create_before_destroy from what depends on it"),
                );
            }
        }
        diags
    }

    /// What each `ignore_changes` names must be the kind's: an attribute or a nested block
    /// type, as Terraform requires.
    pub(super) fn ignore_changes_checks(&self) -> Diagnostics {
        let mut diags = Diagnostics::new();
        for r in self.config.resources.values() {
            let IgnoreChanges::Paths(paths) = &r.lifecycle.ignore_changes else {
                continue;
            };
            let Some(kind) = self.registry_for(&self.provider_key(r)).kind(&r.type_name) else {
                continue;
            };
            let schema = kind.schema();
            for (path, span) in paths {
                let Some(PathStep::Key(name)) = path.first() else {
                    continue;
                };
                let span = span.clone().or_else(|| r.span.clone());
                if schema.attribute(name).is_some_and(|a| a.sensitive) {
                    diags.push(
                        Diagnostic::warning(format!(
                            "{}.{}: ignore_changes of the sensitive attribute {name} holds only until the object is written",
                            r.type_name, r.name
                        ))
                        .at(span.clone())
                        .detail(format!("brickform keeps no copy of a sensitive value (state holds its fingerprint), so a change to {name} is neither shown nor sent on its own; but when another change writes the object and the write carries {name}, the configuration's value is what is sent."))
                        .hint(format!("keep {name} in the configuration as the object has it")),
                    );
                }
                let known = schema.attribute(name).is_some()
                    || schema.blocks.iter().any(|b| b.name == name.as_str());
                if !known {
                    diags.push(
                        Diagnostic::error(format!(
                            "{}.{}: ignore_changes names {name}, which {} does not have",
                            r.type_name, r.name, r.type_name
                        ))
                        .at(span)
                        .hint("name an attribute or a nested block type of the resource (`brickform schema` lists them), or `all`"),
                    );
                }
            }
        }
        diags
    }

    /// One object is managed at one address: an import (from an `import` block, or of an
    /// object the state lost track of) may not take an object another address of this plan
    /// imports too, or one the state already holds under another address. Both would put
    /// one object in state twice, and the two addresses would fight over it.
    pub(super) fn duplicate_imports(
        &self,
        plan: &Plan,
        state: &brickform_state::StateDocument,
    ) -> Diagnostics {
        let mut diags = Diagnostics::new();
        let mut first: std::collections::HashMap<(&str, &str, Imported), String> =
            Default::default();
        // Where what the state manages lies, worked out once, when an import asks.
        let held_at = std::cell::OnceCell::new();
        for c in &plan.changes {
            let Some(written) = c.importing.as_deref() else {
                continue;
            };
            // The id the import found (a name is read back as the service spells it);
            // offline, the id as written.
            let id = c.id.as_deref().unwrap_or(written);
            // Where the object the import found lies, for kinds that say: one object may
            // have two spellings of its id (a workspace path with and without its
            // `/Workspace` prefix), never two locations.
            let location = self
                .registry_for(&c.provider)
                .kind(c.type_name())
                .and_then(|k| c.before.as_ref().and_then(|b| k.location(&b.0)));
            let same_object = |r: &brickform_state::ResourceState| {
                r.id == id
                    || location.as_ref().is_some_and(|l| {
                        held_at
                            .get_or_init(|| {
                                crate::engine::containers::managed_locations(self.registry, state)
                            })
                            .get(&r.addr)
                            == Some(l)
                    })
            };
            let span = || {
                self.config
                    .resources
                    .get(c.resource())
                    .and_then(|r| r.span.clone())
            };
            // Unless this plan forgets it there (a `removed` block that keeps the object).
            let forgotten = |address: &crate::addrs::InstanceAddr| {
                plan.changes
                    .iter()
                    .any(|o| o.addr == *address && o.action == Action::Forget)
            };
            let held = state.resources().iter().find(|r| {
                r.type_name() == c.type_name()
                    // States written before provider keys were recorded name the default.
                    && (r.provider == c.provider
                        || (r.provider.is_empty() && !c.provider.contains('.')))
                    && r.addr != c.addr
                    && r.mode() == brickform_state::ResourceMode::Managed
                    && same_object(r)
                    && !forgotten(&r.addr)
            });
            if let Some(r) = held {
                diags.push(
                    Diagnostic::error(format!(
                        "{} would import {} {id}, which this state manages already as {}",
                        c.address(), c.type_name(), r.address()
                    ))
                    .at(span())
                    .detail("One object is managed at one address: importing it again would put it in state twice.")
                    .hint(format!("remove the import of {} (and its resource block), or move {} there with a moved block", c.address(), r.address())),
                );
                continue;
            }
            let key = (
                c.type_name(),
                c.provider.as_str(),
                match &location {
                    Some(l) => Imported::At(l.clone()),
                    None => Imported::Id(id.to_string()),
                },
            );
            match first.get(&key) {
                Some(other) => diags.push(
                    Diagnostic::error(format!(
                        "{} and {} would both import {} {id}",
                        other.clone().min(c.address()),
                        other.clone().max(c.address()),
                        c.type_name()
                    ))
                    .at(span())
                    .detail("One object is managed at one address: importing it at two would put it in state twice, and the two would fight over it.")
                    .hint("keep one of the two resource blocks and its import"),
                ),
                None => {
                    first.insert(key, c.address());
                }
            }
        }
        diags
    }
}

/// What two imports of one type compare to find that they take one object: where it lies,
/// or its id for kinds whose objects lie nowhere the engine knows of.
#[derive(PartialEq, Eq, Hash)]
enum Imported {
    At(crate::location::Location),
    Id(String),
}

/// What an instance of the plan takes for its own: the object a create makes (by its kind's
/// natural key, among objects of its type), or what a kind says its object governs
/// ([`crate::provider::Claim`], across types).
pub(crate) struct Claim {
    pub provider: String,
    /// The natural key of a created object, or a kind's claim's key.
    pub key: String,
    pub exclusive: bool,
    /// `None` for a created object; how a kind's claim is named otherwise.
    pub what: Option<String>,
    pub type_name: String,
    pub address: crate::addrs::InstanceAddr,
}

impl Claim {
    /// What two claims must share to take the same thing: a created object's key names it
    /// among objects of its type only.
    fn of(&self) -> (&str, &str, &str) {
        let scope = if self.what.is_none() {
            self.type_name.as_str()
        } else {
            ""
        };
        (&self.provider, scope, &self.key)
    }
}

/// Two instances of one plan that take the same thing, one of them for all of it: two
/// creates of one object (two blocks naming one object, one path; the second would fail once
/// the first has made it, after the plan promised both), or two objects governing the same
/// thing (an authoritative list of entries and another entry of the same list, which
/// would undo each other on every apply). Refused at plan, naming both addresses, at the
/// later one's block.
pub(super) fn claimed_twice(claims: Vec<Claim>, config: &crate::lang::load::Config) -> Diagnostics {
    // Exclusive claims first in each group, then by the address's text: the output does
    // not depend on which instance finished first.
    let mut claims: Vec<(String, Claim)> = claims
        .into_iter()
        .map(|c| (c.address.to_string(), c))
        .collect();
    claims.sort_by(|(a_text, a), (b_text, b)| {
        (a.of(), !a.exclusive, a_text).cmp(&(b.of(), !b.exclusive, b_text))
    });
    let claims: Vec<Claim> = claims.into_iter().map(|(_, c)| c).collect();
    let mut diags = Diagnostics::new();
    for group in claims.chunk_by(|a, b| a.of() == b.of()) {
        // Without an exclusive claim, the parts stand side by side.
        let Some((first, rest)) = group.split_first().filter(|(f, _)| f.exclusive) else {
            continue;
        };
        for second in rest.iter().filter(|c| c.address != first.address) {
            let span = config
                .resources
                .get(&second.address.resource)
                .and_then(|r| r.span.clone());
            let diag = match &first.what {
                None => Diagnostic::error(format!(
                    "{} and {} would both create {} {}",
                    first.address, second.address, second.type_name, second.key
                ))
                .detail("One object is managed at one address: the second create would fail once the first has made it, though the plan counts both.")
                .hint("give one of them another name, or keep one of the two blocks"),
                Some(what) => Diagnostic::error(format!(
                    "{} and {} both manage {what}",
                    first.address, second.address
                ))
                .detail(format!("{} manages all of {what}: each apply would undo what {} writes there.", first.address, second.address))
                .hint(format!("declare it in {} only, or drop {}", first.address, first.address)),
            };
            diags.push(diag.at(span));
        }
    }
    diags
}

/// A replaced instance that something replaced with `create_before_destroy` depends on,
/// directly or through other instances, is replaced that way too (as Terraform does, for
/// every ancestor of such a replacement): the dependent's new copy needs the new
/// dependency before its old copy goes, and the dependency's old copy can go only after
/// the dependent's — destroying the dependency first would make apply's graph a cycle.
/// The addresses it turned into create-first replacements.
///
/// One pass is enough: what is needed is followed through every instance, whatever its
/// action, so what a newly turned replacement needs is already in the set.
pub(super) fn create_before_destroy_spreads(plan: &mut Plan) -> Vec<crate::addrs::InstanceAddr> {
    let needs = needed_by_create_first(plan);
    let mut spread = Vec::new();
    for c in plan.changes.iter_mut() {
        // A dependency names one instance, or (without a key) its resource as a whole.
        if c.action == Action::DeleteThenCreate
            && (needs.contains(&c.addr) || needs.contains(&c.resource().instance(None)))
        {
            c.action = Action::CreateThenDelete;
            spread.push(c.addr.clone());
        }
    }
    spread
}

/// What the create-first replacements of `plan` depend on, directly or through other
/// instances of the plan.
fn needed_by_create_first(plan: &Plan) -> HashSet<crate::addrs::InstanceAddr> {
    let mut by_resource: HashMap<&crate::addrs::ResourceAddr, Vec<&crate::plan::ResourceChange>> =
        HashMap::new();
    for c in &plan.changes {
        by_resource.entry(c.resource()).or_default().push(c);
    }
    let mut needs: HashSet<crate::addrs::InstanceAddr> = HashSet::new();
    let mut next: Vec<&crate::addrs::InstanceAddr> = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::CreateThenDelete)
        .flat_map(|c| &c.dependencies)
        .collect();
    while let Some(d) = next.pop() {
        if !needs.insert(d.clone()) {
            continue;
        }
        // A dependency names one instance, or (without a key) its resource as a whole.
        let named = by_resource
            .get(&d.resource)
            .into_iter()
            .flatten()
            .filter(|c| d.whole().is_some() || c.addr == *d);
        next.extend(named.flat_map(|c| &c.dependencies));
    }
    needs
}

/// A plan apply could not carry out in any order: changes that would wait for each other.
/// Refused here, so the plan shown is one apply can do.
pub(super) fn apply_order(plan: &Plan, diags: &mut Diagnostics) {
    for cycle in crate::engine::apply::order_cycles(plan) {
        diags.push(
            Diagnostic::error("These changes cannot be ordered: each waits for another")
                .detail(cycle)
                .hint("apply part of the change first (for example without the create_before_destroy or replace_triggered_by that joins them), then the rest"),
        );
    }
}

pub(crate) fn prevent_destroy_error(
    address: &crate::addrs::InstanceAddr,
    span: Option<crate::source::Span>,
) -> Diagnostic {
    Diagnostic::error("Instance cannot be destroyed")
        .at(span)
        .detail(format!("Resource {address} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan using the --target flag."))
}

/// A destroy plan deletes what this state holds and nothing else: lookups are not read,
/// and what the configuration would create or import is left alone.
pub(super) fn destroy_only(plan: &mut Plan, state: &brickform_state::StateDocument) {
    for c in plan.changes.iter_mut() {
        if c.mode() == Mode::Data {
            c.action = Action::NoOp;
            continue;
        }
        if state.get(&c.addr).is_some() && c.action != Action::Forget {
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
            if let Some(res) = self
                .config
                .resources
                .get(c.resource())
                .filter(|res| res.lifecycle.prevent_destroy)
            {
                diags.push(prevent_destroy_error(&c.addr, res.span.clone()));
            }
        }
        diags
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::addrs::InstanceKey;
    use crate::plan::{ResourceChange, SerObject};
    use brickform_state::{ResourceState, StateDocument};

    fn change(name: &str, action: Action, deps: &[&str]) -> ResourceChange {
        let mut c = ResourceChange::bare("t", name, "p", action);
        c.dependencies = deps
            .iter()
            .map(|d| crate::addrs::InstanceAddr::parse(d).unwrap())
            .collect();
        c
    }

    fn assert_actions(plan: &Plan, expected: &[(&str, Action)]) {
        let actions: Vec<(String, Action)> = plan
            .changes
            .iter()
            .map(|c| (c.address(), c.action))
            .collect();
        let expected: Vec<(String, Action)> =
            expected.iter().map(|(a, x)| (a.to_string(), *x)).collect();
        assert_eq!(actions, expected);
    }

    #[test]
    fn create_before_destroy_spreads_to_what_it_needs_transitively() {
        // c (create_before_destroy) needs b, b needs a; d is replaced but nothing needs it;
        // f needs g (a new block), which needs h: h is needed through g.
        let mut plan = Plan {
            changes: vec![
                change("a", Action::DeleteThenCreate, &[]),
                change("b", Action::DeleteThenCreate, &["t.a"]),
                change("c", Action::CreateThenDelete, &["t.b"]),
                change("d", Action::DeleteThenCreate, &[]),
                change("e", Action::Update, &["t.d"]),
                change("f", Action::CreateThenDelete, &["t.g"]),
                change("g", Action::Create, &["t.h"]),
                change("h", Action::DeleteThenCreate, &[]),
            ],
            ..Default::default()
        };
        create_before_destroy_spreads(&mut plan);
        assert_actions(
            &plan,
            &[
                ("t.a", Action::CreateThenDelete),
                ("t.b", Action::CreateThenDelete),
                ("t.c", Action::CreateThenDelete),
                ("t.d", Action::DeleteThenCreate),
                ("t.e", Action::Update),
                ("t.f", Action::CreateThenDelete),
                ("t.g", Action::Create),
                ("t.h", Action::CreateThenDelete),
            ],
        );
    }

    #[test]
    fn create_before_destroy_spreads_to_instances_of_a_block_it_needs() {
        let mut keyed = change("a", Action::DeleteThenCreate, &[]);
        keyed.addr.key = Some(InstanceKey::Key("x".into()));
        let mut plan = Plan {
            changes: vec![keyed, change("c", Action::CreateThenDelete, &["t.a"])],
            ..Default::default()
        };
        create_before_destroy_spreads(&mut plan);
        assert_eq!(plan.changes[0].action, Action::CreateThenDelete);
    }

    #[test]
    fn a_destroy_deletes_only_what_state_holds() {
        let mut state = StateDocument::new("dev");
        for a in ["t.kept", "t.forgotten"] {
            state
                .insert(ResourceState::new(a, "p", &format!("id-{a}")).unwrap())
                .unwrap();
        }
        let mut updated = change("kept", Action::Update, &[]);
        updated.after = Some(SerObject(Default::default()));
        let mut imported = change("new", Action::Create, &[]);
        imported.importing = Some(Default::default());
        let mut lookup = change("lookup", Action::Read, &[]);
        lookup.addr.resource.mode = Mode::Data;
        let mut plan = Plan {
            changes: vec![
                updated,
                change("forgotten", Action::Forget, &[]),
                imported,
                lookup,
            ],
            ..Default::default()
        };
        destroy_only(&mut plan, &state);
        assert_actions(
            &plan,
            &[
                ("t.kept", Action::Delete),
                // A `removed` block said to keep the object: a destroy does not delete it.
                ("t.forgotten", Action::NoOp),
                ("t.new", Action::NoOp),
                ("data.t.lookup", Action::NoOp),
            ],
        );
        assert!(plan.changes[0].after.is_none());
        assert!(plan.changes[2].importing.is_none());
    }

    #[test]
    fn prevent_destroy_names_the_address_and_the_way_out() {
        let d = prevent_destroy_error(
            &crate::addrs::InstanceAddr::parse("t.a[\"x\"]").unwrap(),
            None,
        );
        let text = format!("{d:?}");
        assert!(
            text.contains("t.a[\\\"x\\\"] has lifecycle.prevent_destroy"),
            "{text}"
        );
        assert!(text.contains("--target"), "{text}");
    }
}
