//! Finding again what the state lost track of, so a plan imports an object instead of
//! making a second copy of it (or failing on a name the state took itself).
//!
//! Before a create is planned for an instance the state does not hold, the kind looks the
//! object up by its natural key ([`ResourceKind::find_existing`]: by its name, its full
//! name in a namespace, its path). What is found is imported, planned the
//! way an `import` block plans one (the change says `importing`, then is compared with the
//! configuration), only when the evidence says it is this state's:
//!
//! 1. it carries this state's ownership tag for this address (same lineage, same address):
//!    the state made it and lost the entry (`brickform state rm`);
//! 2. `state rm` recorded this address with this object's id
//!    ([`Forgotten`](brickform_state::Forgotten)): the state
//!    managed it until then. This covers the kinds that carry no tag (objects known by
//!    a unique name or a path);
//! 3. the state itself was lost (a new lineage): the object carries an ownership tag for the
//!    same address and the same environment, the user brickform runs as created it, and the
//!    lineage in the tag is no state's of this backend. Another developer's object fails the
//!    second test, another environment's the first, a state that still exists the third;
//! 4. the state was lost and the kind tags nothing: the service says the object is owned by
//!    the user brickform runs as (the object's owner; a file in that user's home folder),
//!    and no other state of this backend manages it.
//!
//! Whatever the rule, an object another state of this backend manages is that state's, and
//! one this state manages under another address is not this address's. Everything else is
//! somebody else's: when it holds the name (a unique name, a path), the plan fails naming it and
//! how to import it, instead of an apply that fails or overwrites it; when it does not (an object
//! whose names need not be unique), the create goes ahead with a warning. Development environments leave
//! that to their own rule (a plan there refuses any name another state or developer holds).
//! Several objects that all count as this state's are an error that lists them: brickform
//! does not pick one.
//!
//! What no evidence can tell: a state of the same user and environment name kept in another
//! backend (a second checkout with its own local state). Rules 3 and 4 would take its object;
//! the plan then says where the object came from, in a warning, before anything is applied.

use super::Engine;
use crate::diagnostics::Diagnostic;
use crate::plan::PlanMode;
use crate::plan::diff::Prior;
use crate::provider::{Existing, OpContext, Remote, ResourceKind, Schema};
use crate::value::{Object, Value};
use brickform_state::{Backend, StateDocument, StateError};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the other states of the backend hold, read once per command when first needed.
#[derive(Default)]
pub(super) struct OtherStates {
    backend: Option<Arc<dyn Backend>>,
    loaded: tokio::sync::OnceCell<Result<Vec<StateDocument>, StateError>>,
}

impl OtherStates {
    pub(super) fn new(backend: Arc<dyn Backend>) -> Self {
        OtherStates {
            backend: Some(backend),
            loaded: Default::default(),
        }
    }

    /// The states of every other environment; `None` when the engine was given no backend.
    async fn get(&self, environment: &str) -> Option<&Result<Vec<StateDocument>, StateError>> {
        let backend = self.backend.as_ref()?;
        Some(
            self.loaded
                .get_or_init(|| async {
                    let mut out = Vec::new();
                    let envs = backend.environments().await?;
                    for env in envs.iter().filter(|e| e.as_str() != environment) {
                        if let Some(doc) = backend.load(env).await? {
                            out.push(doc);
                        }
                    }
                    Ok(out)
                })
                .await,
        )
    }
}

/// The prior an imported object is planned against: what it holds, as if it had been
/// applied from `config`. Where the configuration leaves a nested attribute unset and the
/// service holds its default, that is what the configuration leads to: recorded as unset,
/// as an apply would have, so only real differences show as an update.
pub(super) fn imported_prior(
    kind: &dyn ResourceKind,
    remote: &Remote,
    config: &Object,
) -> (String, Prior) {
    let schema = kind.schema();
    let mut applied = super::instance::configurable(schema, &remote.attrs);
    // In the canonical form the configuration is compared in: keyed blocks in the order of
    // their keys, whatever order the service lists them in.
    crate::plan::diff::normalize_object(schema, &mut applied);
    settle(schema, &mut applied, config);
    applied.extend(kind.held_as_configured(remote, config));
    (
        remote.id.clone(),
        Prior {
            config: applied,
            computed: remote.attrs.clone(),
            sensitive: BTreeMap::new(),
        },
    )
}

fn settle(schema: &Schema, applied: &mut Object, config: &Object) {
    for a in &schema.attributes {
        if let (Some(default), Some(v)) = (&a.server_default, applied.get_mut(a.name))
            && config.get(a.name).is_none_or(Value::is_null)
            && crate::value::values_equal(v, default)
        {
            *v = Value::Null;
        }
    }
    for b in &schema.blocks {
        let (Some(have), Some(want)) = (applied.get_mut(b.name), config.get(b.name)) else {
            continue;
        };
        match (have, want) {
            (Value::Object(h), Value::Object(w)) => settle(&b.schema, Arc::make_mut(h), w),
            (Value::List(hs), Value::List(ws)) => {
                for (i, h) in hs.iter_mut().enumerate() {
                    let Value::Object(h) = h else { continue };
                    // Keyed blocks pair by key (their order means nothing), others by place.
                    let w = match b.nesting {
                        crate::provider::Nesting::Keyed(k) => ws.iter().find(|w| {
                            w.as_object().and_then(|w| w.get(k)).is_some_and(|wk| {
                                h.get(k)
                                    .is_some_and(|hk| crate::value::values_equal(hk, wk))
                            })
                        }),
                        _ => ws.get(i),
                    };
                    if let Some(Value::Object(w)) = w {
                        settle(&b.schema, Arc::make_mut(h), w);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether the natural key of `config` is known though some of its values are not (an object
/// referring by id to another created in the same plan): the key comes out the same whatever the
/// unknown values turn out to be, so the object can be looked up now.
pub(crate) fn key_known(kind: &dyn ResourceKind, ctx: &OpContext, config: &Object) -> bool {
    if config.values().all(Value::is_wholly_known) {
        // Nothing to fill in: both fillings below would be `config` itself.
        return kind.natural_key(ctx, config).is_some();
    }
    let with = |filler: &str| -> Object {
        config
            .iter()
            .map(|(k, v)| {
                let v = if v.is_wholly_known() {
                    v.clone()
                } else {
                    Value::from(filler)
                };
                (k.clone(), v)
            })
            .collect()
    };
    let key = kind.natural_key(ctx, &with("\u{1}one"));
    key.is_some() && key == kind.natural_key(ctx, &with("\u{1}two"))
}

/// The warning for an import of `found` into the state `ctx` names, when its ownership tag
/// names another state: both states then manage the object, and a destroy in either
/// deletes it, so the plan names the previous owner before anything is applied.
pub(crate) fn other_owner(ctx: &OpContext, found: &Existing) -> Option<String> {
    let tag = found
        .tag
        .as_ref()
        .filter(|t| t.names_other_state(&ctx.lineage, &ctx.environment))?;
    Some(format!(
        "{}: {} carries the ownership tag of another brickform state ({tag}): the import takes it over, but that state still manages it, and a destroy there deletes it. Let go of it there: replace its block with a `removed` block (`from = {}`, `lifecycle {{ destroy = false }}`) and apply.",
        ctx.address, found.what, tag.address
    ))
}

/// Why a found object counts as this state's, or why not.
enum Verdict {
    Ours(String),
    NotOurs(String),
}

impl Engine<'_> {
    /// Whether [`Engine::adopt`] looks for an object at all: only in a normal plan that may
    /// call the service, and only when the configuration's key is known.
    pub(super) fn may_adopt(
        &self,
        kind: &Arc<dyn ResourceKind>,
        ctx: &OpContext,
        config: &Object,
        mode: PlanMode,
    ) -> bool {
        !self.offline && mode == PlanMode::Normal && key_known(kind.as_ref(), ctx, config)
    }

    /// For an instance about to be planned as a create, when [`Engine::may_adopt`] says so:
    /// the object to import instead, if one is this state's (see the module documentation).
    /// Notes for the plan go to `warnings`; an error means the create must not be planned.
    /// `nothing_there` is set when the lookup was made and found no object at all.
    pub(super) async fn adopt(
        &self,
        kind: &Arc<dyn ResourceKind>,
        ctx: &OpContext,
        config: &Object,
        state: &StateDocument,
        warnings: &mut Vec<String>,
        nothing_there: &mut bool,
    ) -> Result<Option<(String, Prior)>, Diagnostic> {
        let address = ctx.address.as_str();
        let found = kind.find_existing(ctx, config).await.map_err(|e| {
            Diagnostic::error(format!(
                "{address}: cannot check whether it exists already: {}",
                e.message
            ))
            .detail(e.detail.clone().unwrap_or_default())
        })?;
        if found.is_empty() {
            *nothing_there = true;
            return Ok(None);
        }
        let me = self.current_user(kind, ctx).await;
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for e in found {
            match self
                .verdict(&e, kind.type_name(), ctx, state, me.as_deref())
                .await?
            {
                Verdict::Ours(why) => ours.push((e, why)),
                Verdict::NotOurs(why) => theirs.push((e, why)),
            }
        }
        if ours.len() > 1 {
            let list: Vec<String> = ours.iter().map(|(e, _)| e.what.clone()).collect();
            return Err(Diagnostic::error(format!(
                "{address}: {} objects are this state's: {}",
                ours.len(),
                list.join("; ")
            ))
            .detail("The state does not hold this instance, and each of them carries what says it is this one. brickform does not pick one: delete the copies that should not exist, or import the right one with `brickform import`.")
            .hint(format!(
                "brickform import {address} {}",
                ours.first().map(|(e, _)| e.remote.id.as_str()).unwrap_or("ID")
            )));
        }
        if let Some((e, why)) = ours.pop() {
            warnings.push(format!(
                "{address} is not in the state, but {} is its object ({why}): the plan imports it instead of creating another.",
                e.what
            ));
            return Ok(Some(imported_prior(kind.as_ref(), &e.remote, config)));
        }
        // None is this state's. Development environments refuse any taken name themselves.
        if self.settings.mode == Some(crate::lang::environment::EnvMode::Development) {
            return Ok(None);
        }
        if let Some((e, why)) = theirs.iter().find(|(e, _)| e.exclusive) {
            // Held under another address of this state: a rename that the state did not follow.
            let hint = match state
                .resources()
                .iter()
                .find(|r| r.type_name() == kind.type_name() && r.id == e.remote.id)
            {
                Some(other) => format!(
                    "if it is the same object under a new name, move it in the state (a `moved {{ from = {0}  to = {address} }}` block, or `brickform state mv {0} {address}`); otherwise give this one another name",
                    other.address()
                ),
                None => format!(
                    "if it should be managed here, import it (`brickform import {address} {}`, or an import block); otherwise give this one another name",
                    e.remote.id
                ),
            };
            return Err(Diagnostic::error(format!("{address}: the name is taken by {}", e.what))
                .detail(format!("This state does not manage it, and nothing says it is this state's: {why}. brickform does not take over objects it cannot tell are its own; creating this one would fail or overwrite it."))
                .hint(hint));
        }
        for (e, why) in &theirs {
            warnings.push(format!(
                "{address}: {} has the same name but is not this state's ({why}); a new one is created beside it.",
                e.what
            ));
        }
        Ok(None)
    }

    /// Who the service says the current user is, for the provider of `kind`.
    async fn current_user(&self, kind: &Arc<dyn ResourceKind>, ctx: &OpContext) -> Option<String> {
        match self.registry_at(&ctx.address).provider_of(kind.type_name()) {
            Some(p) => p.current_user().await.ok().flatten(),
            None => None,
        }
    }

    /// Whose `found` is, in words: the state (this one, another environment's, the one its
    /// ownership tag names) or the owner that holds it, as the plan tells a name taken in
    /// every mode.
    pub(super) async fn holder(
        &self,
        kind: &Arc<dyn ResourceKind>,
        ctx: &OpContext,
        state: &StateDocument,
        found: &Existing,
    ) -> String {
        let me = self.current_user(kind, ctx).await;
        match self
            .verdict(found, kind.type_name(), ctx, state, me.as_deref())
            .await
        {
            Ok(Verdict::Ours(why) | Verdict::NotOurs(why)) => why,
            Err(e) => e.summary,
        }
    }

    async fn verdict(
        &self,
        found: &Existing,
        type_name: &str,
        ctx: &OpContext,
        state: &StateDocument,
        me: Option<&str>,
    ) -> Result<Verdict, Diagnostic> {
        let id = found.remote.id.as_str();
        // The instance asked about, read once from the call's context; the state's entries
        // are compared with it as addresses, not as text written out for each.
        let addr = crate::addrs::InstanceAddr::parse(&ctx.address).ok();
        if let Some(other) = state
            .resources()
            .iter()
            .find(|r| r.type_name() == type_name && r.id == id && Some(&r.addr) != addr.as_ref())
        {
            return Ok(Verdict::NotOurs(format!(
                "this state manages it as {}",
                other.address()
            )));
        }
        let others = match self.other_states.get(&self.environment).await {
            Some(Ok(docs)) => Some(docs.as_slice()),
            Some(Err(e)) => {
                return Err(Diagnostic::error(format!(
                    "{}: cannot read the other states of this backend to tell whether {} is theirs: {e}",
                    ctx.address, found.what
                )));
            }
            None => None,
        };
        for doc in others.unwrap_or_default() {
            if let Some(r) = doc
                .resources()
                .iter()
                .find(|r| r.type_name() == type_name && r.id == id)
            {
                return Ok(Verdict::NotOurs(format!(
                    "the state of environment \"{}\" manages it as {}",
                    doc.environment(),
                    r.address()
                )));
            }
        }
        let lineage = state.lineage().to_string();
        let mine = |owner: Option<&str>| matches!((owner, me), (Some(o), Some(m)) if o.eq_ignore_ascii_case(m));
        if let Some(tag) = &found.tag
            && tag.lineage == lineage
            && tag.address == ctx.address
        {
            return Ok(Verdict::Ours(
                "it carries this state's ownership tag for this address".into(),
            ));
        }
        if let Some(f) = addr.as_ref().and_then(|a| state.forgotten(a))
            && f.resource_type == type_name
            && f.id == id
        {
            return Ok(Verdict::Ours(
                "`brickform state rm` took it out of this state".into(),
            ));
        }
        match &found.tag {
            Some(tag) if tag.lineage == lineage => Ok(Verdict::NotOurs(format!(
                "this state's ownership tag on it names {}",
                tag.address
            ))),
            Some(tag) if tag.address != ctx.address => Ok(Verdict::NotOurs(format!(
                "its ownership tag names {} of another state",
                tag.address
            ))),
            Some(tag) if tag.environment.as_deref() != Some(&self.environment) => {
                Ok(Verdict::NotOurs(match &tag.environment {
                    Some(env) => format!(
                        "its ownership tag names environment \"{env}\" of another state"
                    ),
                    None => "its ownership tag names another state and no environment".into(),
                }))
            }
            Some(tag) if others.is_none_or(|docs| {
                docs.iter().any(|d| d.lineage().to_string() == tag.lineage)
            }) =>
            {
                Ok(Verdict::NotOurs(format!(
                    "its ownership tag names state {}, which may still exist",
                    tag.lineage
                )))
            }
            Some(tag) if !mine(found.owner.as_deref()) => Ok(Verdict::NotOurs(format!(
                "its ownership tag names state {}, and {}",
                tag.lineage,
                not_yours(found.owner.as_deref(), me)
            ))),
            Some(tag) => Ok(Verdict::Ours(format!(
                "it carries the ownership tag of state {} of environment \"{}\" for this address, which this backend no longer holds, and you created it",
                tag.lineage, self.environment
            ))),
            None if others.is_none() => Ok(Verdict::NotOurs(
                "it carries no ownership tag, and the other states of this backend cannot be checked".into(),
            )),
            None if !mine(found.owner.as_deref()) => Ok(Verdict::NotOurs(format!(
                "it carries no ownership tag, and {}",
                not_yours(found.owner.as_deref(), me)
            ))),
            None => Ok(Verdict::Ours(
                "you own it and no state of this backend manages it: the state that made it is gone, or it was made outside brickform".into(),
            )),
        }
    }
}

/// Why an owner does not prove the object is the current user's.
fn not_yours(owner: Option<&str>, me: Option<&str>) -> String {
    match (owner, me) {
        (Some(o), Some(_)) => format!("{o} owns it, not you"),
        (None, _) => "the service does not say who owns it".into(),
        (Some(o), None) => format!("{o} owns it, and brickform cannot tell who you are"),
    }
}

impl Engine<'_> {
    /// What the next plan does about an instance `brickform state rm` just took out of
    /// `state` (which remembers it, see [`StateDocument::forget`]), in words for the user.
    /// Looks the object up as that plan will, so call it with the providers configured;
    /// `None` when the lookup cannot be made (the caller then says what it can without it).
    pub async fn after_forget(
        &self,
        state: &StateDocument,
        removed: &brickform_state::ResourceState,
    ) -> Option<String> {
        let address = removed.address();
        let address = address.as_str();
        let base = removed.resource();
        if !self.config.resources.contains_key(base) {
            return Some(format!(
                "The configuration does not declare {base}: brickform leaves the object alone from now on."
            ));
        }
        let kind = self
            .registry_for(&removed.provider)
            .kind(removed.type_name())?
            .clone();
        let ctx = self.op_context(address, state.lineage());
        let config = super::instance::json_object(&removed.config);
        if kind.natural_key(&ctx, &config).is_none() {
            return Some(self.after_forget_offline(removed));
        }
        let found = kind.find_existing(&ctx, &config).await.ok()?;
        let me = match self.registry_at(&ctx.address).provider_of(kind.type_name()) {
            Some(p) => p.current_user().await.ok().flatten(),
            None => None,
        };
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for e in found {
            match self
                .verdict(&e, kind.type_name(), &ctx, state, me.as_deref())
                .await
                .ok()?
            {
                Verdict::Ours(why) => ours.push((e, why)),
                Verdict::NotOurs(why) => theirs.push((e, why)),
            }
        }
        Some(match (ours.as_slice(), theirs.first()) {
            ([(e, why)], _) => format!(
                "{} still exists: the next plan finds it ({why}) and imports it again instead of creating another.",
                e.what
            ),
            ([], None) => format!(
                "No live object was found for it (id {}): the next plan creates a new one.",
                removed.id
            ),
            ([], Some((e, why))) => format!(
                "{} exists, but the next plan does not take it as this state's ({why}): it {}.",
                e.what,
                if e.exclusive {
                    "fails, naming the object and how to import it"
                } else {
                    "creates another one beside it"
                }
            ),
            (many, _) => format!(
                "{} objects count as this one ({}): the next plan fails and lists them.",
                many.len(),
                many.iter()
                    .map(|(e, _)| e.what.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        })
    }

    /// What can be said about the next plan without looking: whether the kind can find the
    /// object again at all.
    pub fn after_forget_offline(&self, removed: &brickform_state::ResourceState) -> String {
        let ctx = self.op_context(&removed.address(), "");
        let config = super::instance::json_object(&removed.config);
        match self
            .registry_for(&removed.provider)
            .kind(removed.type_name())
        {
            Some(kind) if kind.natural_key(&ctx, &config).is_some() => format!(
                "The next plan looks the object up and imports it again instead of creating another ({} was not checked now: the service could not be reached).",
                removed.id
            ),
            _ => format!(
                "brickform cannot find this kind of object again without its id: the next plan plans a create. To manage this one again instead, import it: brickform import {} {}",
                removed.address(),
                removed.id
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::OwnerTag;

    #[test]
    fn an_import_of_another_states_object_names_that_state() {
        let ctx = OpContext {
            address: "databricks_job.copy".into(),
            lineage: "L".into(),
            environment: "dev".into(),
            ..OpContext::default()
        };
        let found = |lineage: &str, environment: &str| Existing {
            remote: Remote {
                id: "7".into(),
                attrs: Object::default(),
            },
            what: "job 7 \"nightly\"".into(),
            tag: Some(OwnerTag {
                lineage: lineage.into(),
                environment: Some(environment.into()),
                address: "databricks_job.nightly".into(),
            }),
            owner: None,
            exclusive: false,
        };
        let warning = other_owner(&ctx, &found("M", "dev")).unwrap_or_default();
        assert!(
            warning.starts_with("databricks_job.copy: job 7 \"nightly\" carries the ownership tag of another brickform state (state M, environment dev, as databricks_job.nightly)"),
            "{warning}"
        );
        assert!(other_owner(&ctx, &found("L", "prod")).is_some());
        assert_eq!(other_owner(&ctx, &found("L", "dev")), None, "this state's");
        let untagged = Existing {
            tag: None,
            ..found("M", "dev")
        };
        assert_eq!(other_owner(&ctx, &untagged), None);
    }
}
