//! Planning one instance of a managed resource, step by step: decode and check its
//! configuration, find its prior object (state, an `import` block, or an object state lost
//! track of), refresh it, diff, decide the action, guard it, and record the change.

use super::decide::{self, ReplaceAsked};
use super::walk::{InstanceOutcome, InstancePlan, PlanWalk};
use super::{Shape, guards::prevent_destroy_error, without_sensitive};
use crate::addrs::InstanceAddr;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::configure::{Ignored, Inputs, Preparing, decoded};
use crate::engine::instance::prior_of;
use crate::engine::world::World;
use crate::engine::{InstanceSpec, PresetNotes};
use crate::lang::environment::EnvMode;
use crate::lang::load::{IgnoreChanges, Resource};
use crate::plan::diff::{DiffInput, DiffOutput, Prior, diff, normalize_object};
use crate::plan::{
    Action, ActionReason, Drift, FieldChange, InstanceKey, PlanMode, ResourceChange, SerObject,
};
use crate::provider::{OpContext, ProviderResult, Remote, ResourceKind};
use crate::value::{Object, PathStep, Value};
use std::sync::Arc;

/// One instance, decoded and checked: what the rest of its planning works from.
pub(super) struct Prepared {
    pub address: crate::addrs::InstanceAddr,
    pub key: Option<InstanceKey>,
    pub each: Option<Value>,
    pub config: Object,
    /// Paths the configuration made sensitive (a sensitive variable's value).
    pub sensitive_paths: Vec<Vec<PathStep>>,
    /// The configuration before the kind's preparation, kept only when `ignore_changes` may
    /// need it prepared again with the values the object keeps.
    pub decoded: Option<Object>,
}

/// The resource block an instance comes from, and what all its instances share.
pub(super) struct Block<'r> {
    pub resource: &'r Resource,
    /// Whether anything reads the resource: only then do its instances get a value in the
    /// world.
    pub referenced: bool,
    pub kind: Arc<dyn ResourceKind>,
    pub provider: String,
    pub dependencies: Vec<crate::addrs::InstanceAddr>,
    pub shape: Shape,
}

/// Why an instance's prior could not be found. References to the instance then see an
/// unknown value, so what reads it reports no follow-on error of its own.
struct NoPrior {
    diag: Diagnostic,
}

impl PlanWalk<'_, '_> {
    /// Decodes one instance and runs the kind's checks, the development presets and its
    /// own preparation; the configuration is what apply will send. `None` when it has
    /// errors (in `diags`).
    pub(super) fn prepare(
        &self,
        block: &Block<'_>,
        world: &World,
        key: Option<InstanceKey>,
        each: Option<Value>,
        preset_notes: &mut PresetNotes,
        diags: &mut Diagnostics,
    ) -> Option<Prepared> {
        let engine = self.engine;
        let address = block.resource.addr().instance(key.clone());
        let inputs = Inputs {
            resource: block.resource,
            kind: block.kind.as_ref(),
            world,
            base_dir: &engine.config.dir,
            key: key.as_ref(),
            each: each.as_ref(),
            production: engine.settings.mode == Some(EnvMode::Production),
            presets: engine.presets(),
        };
        let mut made = decoded(&inputs, &address);
        let ignores = !matches!(block.resource.lifecycle.ignore_changes, IgnoreChanges::None);
        let decoded = (ignores && !made.diags.has_errors()).then(|| made.config.clone());
        if !made.diags.has_errors() {
            Preparing::of(&inputs, &address).prepare(&mut made.config, &mut made.diags);
        }
        let (config, sensitive_paths, d) = (made.config, made.sensitive_paths, made.diags);
        if !made.preset_notes.is_empty() {
            preset_notes.insert(address.clone(), made.preset_notes);
        }
        let failed = d.has_errors();
        diags.extend(d);
        (!failed).then_some(Prepared {
            address,
            key,
            each,
            config,
            sensitive_paths,
            decoded,
        })
    }

    /// The first step of planning an instance, against the service: its prior object and
    /// a refresh. The instances of a block all take it before any is diffed, so their
    /// diffing (the plan's work on the CPU) can be spread over threads.
    pub(super) async fn look_up(&self, block: &Block<'_>, p: Prepared) -> Looked {
        // The read the refresh started for the instance is waited for first; its requests
        // took call slots of their own.
        let addr = block.resource.addr().instance(p.key.clone());
        let reading = {
            let mut refreshed = super::walk::lock(&self.refreshed);
            // Planned ahead of its turn, the instance leaves the read for the walk.
            if self.speculative {
                refreshed.get(&addr).cloned()
            } else {
                refreshed.remove(&addr)
            }
        };
        let read_before = match reading {
            Some(reading) => reading.await.ok(),
            None => None,
        };
        let mut warnings = Vec::new();
        let ctx = self
            .engine
            .op_context(&p.address.to_string(), &self.lineage);
        // An object state holds that the refresh has read makes no call: what is left of its
        // lookup is work on the CPU, done with its diff on several threads.
        let found = match read_before {
            Some(Ok(Some(remote))) if self.state.get(&addr).is_some() => Finding::Read(remote),
            read_before => {
                let finding = self.find(block, &addr, &ctx, &p.config, read_before, &mut warnings);
                let finding = crate::call_slots::within(self.calls.clone(), finding).await;
                Finding::Done(Box::new(finding))
            }
        };
        Looked {
            p,
            ctx,
            found,
            warnings,
        }
    }

    /// The second step, on the CPU only: the diff and the action. An instance whose name
    /// must be checked with the service waits for [`PlanWalk::finish`]; the others are
    /// recorded here.
    pub(super) fn decide_instance(&self, block: &Block<'_>, looked: Looked) -> Decided {
        let Looked {
            p,
            ctx,
            found,
            warnings,
        } = looked;
        let found = match found {
            Finding::Read(remote) => self.found_read(block, &p, remote),
            Finding::Done(done) => match *done {
                Ok(found) => found,
                Err((diag, value)) => {
                    return Decided::Planned(Box::new(failed(&p, diag, value, warnings)));
                }
            },
        };
        if self.req.mode == PlanMode::Destroy && found.effective_prior().is_some() {
            return Decided::Planned(Box::new(self.plan_delete(block, &ctx, p, found, warnings)));
        }
        let pending = match self.plan_found(block, p, found, warnings) {
            Ok(pending) => pending,
            Err(out) => return Decided::Planned(out),
        };
        let (replacing, creating) = self.name_checks(block, &ctx, &pending);
        if replacing || creating {
            Decided::NamesToCheck(Box::new((pending, ctx)))
        } else {
            Decided::Planned(Box::new(self.conclude(
                block,
                &ctx,
                pending,
                Diagnostics::new(),
            )))
        }
    }

    /// The last step: the name checks an instance waits for, then its record.
    pub(super) async fn finish(&self, block: &Block<'_>, decided: Decided) -> InstanceOutcome {
        let (pending, ctx) = match decided {
            Decided::Planned(out) => return *out,
            Decided::NamesToCheck(waiting) => *waiting,
        };
        let mut diags = Diagnostics::new();
        let checked = self.check_names(block, &ctx, &pending, &mut diags);
        if let Err(d) = crate::call_slots::within(self.calls.clone(), checked).await {
            let mut out = failed(&pending.p, d, Some(Value::Unknown), pending.warnings);
            diags.extend(std::mem::take(&mut out.diags));
            out.diags = diags;
            return out;
        }
        self.conclude(block, &ctx, pending, diags)
    }

    /// What state and the service say of the instance: its prior object, what a refresh
    /// reads, and for an object gone from the service, the object this state lost track
    /// of. An error comes with the value references to the instance then see.
    async fn find(
        &self,
        block: &Block<'_>,
        addr: &InstanceAddr,
        ctx: &OpContext,
        config: &Object,
        read_before: Option<ProviderResult<Option<Remote>>>,
        warnings: &mut Vec<String>,
    ) -> Result<Found, (Diagnostic, Option<Value>)> {
        let (mut prior, mut importing) = self
            .prior(block, addr, ctx, config, warnings)
            .await
            .map_err(|e| (e.diag, Some(Value::Unknown)))?;
        let (live, mut deleted_outside) = self
            .refresh(block, ctx, prior.as_ref(), &importing, read_before)
            .await
            .map_err(|d| (d, None))?;
        if deleted_outside {
            // The state names an object the service no longer has. Before a create is
            // planned, the object is looked for as one the state lost track of: a state
            // restored from its backup after a replacement names the old object's id, and
            // a create would make a second copy of the new one.
            let again = self
                .found_again(block, ctx, config, warnings)
                .await
                .map_err(|d| (d, Some(Value::Unknown)))?;
            if let Some(again) = again {
                importing = Some(again.0.clone());
                prior = Some(again);
                deleted_outside = false;
            }
        }
        Ok(found_from(block, prior, importing, live, deleted_outside))
    }

    /// [`PlanWalk::find`] for an object state holds, once the refresh has read it.
    fn found_read(&self, block: &Block<'_>, p: &Prepared, live: Remote) -> Found {
        let prior = self.state_prior(block, &p.address, &p.config);
        found_from(block, prior, None, Some(live), false)
    }

    /// What state holds of the instance, with the sensitive values the configuration
    /// still has where their fingerprints match.
    fn state_prior(
        &self,
        block: &Block<'_>,
        addr: &InstanceAddr,
        config: &Object,
    ) -> Option<(String, Prior)> {
        let state = self.state;
        let mut prior = prior_of(state, addr, block.kind.schema());
        if let Some((_, p)) = prior.as_mut() {
            crate::engine::sensitive::restore(p, config, block.kind.schema(), &|v, fp| {
                state.fingerprint_matches(&v.to_json(), fp)
            });
        }
        prior
    }

    /// An object a destroy deletes: what it holds and how it drifted are shown, and the
    /// configuration is not compared with it, since nothing will be updated (diffing a
    /// large configuration was most of a destroy plan's work).
    fn plan_delete(
        &self,
        block: &Block<'_>,
        ctx: &OpContext,
        p: Prepared,
        found: Found,
        warnings: Vec<String>,
    ) -> InstanceOutcome {
        let drift = self.compare(block, &p, &found, crate::plan::diff::drift);
        let mut out = InstanceOutcome {
            key: p.key.clone(),
            warnings,
            ..Default::default()
        };
        self.claim(block, ctx, &p, Action::Delete, &found);
        let d = DiffOutput {
            drift,
            ..Default::default()
        };
        self.record_change(block, p, (Action::Delete, None), d, found, &mut out);
        out
    }

    /// Decides an instance whose prior object is known (or known absent): the diff, with
    /// `ignore_changes` kept, and the action. `Err` is the outcome of one that failed.
    fn plan_found(
        &self,
        block: &Block<'_>,
        mut p: Prepared,
        found: Found,
        warnings: Vec<String>,
    ) -> Result<Pending, Box<InstanceOutcome>> {
        let (mut d, decoded_again) = match self.diff_kept(block, &mut p, &found) {
            Ok(diffed) => diffed,
            Err(diags) => {
                return Err(Box::new(InstanceOutcome {
                    key: p.key.clone(),
                    diags,
                    warnings,
                    value: Some(Value::Unknown),
                    ..Default::default()
                }));
            }
        };
        let (action, reason) = self.decide_action(block, &p, &found, &mut d);
        if action.is_replace()
            && let Some(raw) = decoded_again
        {
            // The new object keeps less of what the old one had (see `Ignored::replacing`).
            let replacing = Ignored::new(&block.resource.lifecycle, true).replacing();
            p.config = self.preparing(block, &p.address).keeping(
                raw,
                &replacing,
                &d.after,
                &mut Diagnostics::new(),
            );
            d = self.diff_instance(block, &p, &found);
            d.replace = true;
        }
        Ok(Pending {
            p,
            found,
            d,
            action,
            reason,
            warnings,
        })
    }

    /// The record of a decided instance, with the guards of its action and its claims.
    fn conclude(
        &self,
        block: &Block<'_>,
        ctx: &OpContext,
        pending: Pending,
        diags: Diagnostics,
    ) -> InstanceOutcome {
        let Pending {
            p,
            found,
            d,
            action,
            reason,
            warnings,
        } = pending;
        let r = block.resource;
        let mut out = InstanceOutcome {
            key: p.key.clone(),
            diags,
            warnings,
            ..Default::default()
        };
        if action.is_replace() && r.lifecycle.prevent_destroy {
            out.diags
                .push(prevent_destroy_error(&p.address, r.span.clone()));
        }
        self.claim(block, ctx, &p, action, &found);
        self.record_change(block, p, (action, reason), d, found, &mut out);
        out
    }

    /// The diff of the instance. What apply sends for an ignored attribute is what the
    /// object keeps, as planned; what the kind derives from it is derived from the kept
    /// value (a content's hash from the content kept), so the configuration is prepared
    /// again with it, and compared again. Also the configuration as decoded, kept for a
    /// replacement, which is prepared once more.
    fn diff_kept(
        &self,
        block: &Block<'_>,
        p: &mut Prepared,
        found: &Found,
    ) -> Result<(DiffOutput, Option<Object>), Diagnostics> {
        let d = self.diff_instance(block, p, found);
        let ignored = Ignored::new(&block.resource.lifecycle, found.prior.is_some());
        if found.effective_prior().is_none() || !ignored.any() {
            return Ok((d, None));
        }
        let Some(raw) = p.decoded.take() else {
            return Ok((d, None));
        };
        let mut again = Diagnostics::new();
        let kept =
            self.preparing(block, &p.address)
                .keeping(raw.clone(), &ignored, &d.after, &mut again);
        if again.has_errors() {
            return Err(again);
        }
        p.config = kept;
        Ok((self.diff_instance(block, p, found), Some(raw)))
    }

    fn preparing<'a>(
        &'a self,
        block: &'a Block<'_>,
        address: &'a crate::addrs::InstanceAddr,
    ) -> Preparing<'a> {
        Preparing {
            kind: block.kind.as_ref(),
            resource: block.resource,
            base_dir: &self.engine.config.dir,
            address,
        }
    }

    /// The action the diff calls for, with what `--replace`, `replace_triggered_by` and
    /// the kind ask of it.
    fn decide_action(
        &self,
        block: &Block<'_>,
        p: &Prepared,
        found: &Found,
        d: &mut DiffOutput,
    ) -> (Action, Option<ActionReason>) {
        let r = block.resource;
        let asked = {
            let settled = super::walk::lock(&self.settled);
            decide::follow_renames(d, &settled, &block.dependencies);
            ReplaceAsked {
                by_request: self
                    .req
                    .replace
                    .iter()
                    .any(|a| p.address.cmp_text(a).is_eq()),
                by_triggers: decide::replace_triggered(r, &settled),
            }
        };
        decide::decide(
            found.effective_prior().is_some(),
            found.deleted_outside,
            found.importing.is_some(),
            d,
            asked,
            r.lifecycle.create_before_destroy
                || (block.kind.replaces_by_creating_first()
                    && d.replace
                    && !asked.by_request
                    && !asked.by_triggers
                    // Known: a value unknown until what it reads is replaced would spread
                    // create-first to that object, which then meets its old self's name.
                    && p.config.values().all(Value::is_wholly_known)),
        )
    }

    /// What the instance claims for itself (a name only one object may hold, what the kind
    /// declares), for the check that no two instances of the plan claim the same.
    fn claim(
        &self,
        block: &Block<'_>,
        ctx: &OpContext,
        p: &Prepared,
        action: Action,
        found: &Found,
    ) {
        let r = block.resource;
        let claim = |key: String, exclusive: bool, what: Option<String>| super::guards::Claim {
            provider: block.provider.clone(),
            key,
            exclusive,
            what,
            type_name: r.type_name.clone(),
            address: p.address.clone(),
        };
        let mut claims = Vec::new();
        if (action == Action::Create || action.is_replace())
            && found.importing.is_none()
            && crate::engine::adopt::key_known(block.kind.as_ref(), ctx, &p.config)
            && let Some(key) = block.kind.natural_key(ctx, &p.config)
        {
            claims.push(claim(key, true, None));
        }
        for c in block.kind.claims(&p.config) {
            claims.push(claim(c.key, c.exclusive, Some(c.what)));
        }
        if !claims.is_empty() {
            super::walk::lock(&self.claims).extend(claims);
        }
    }

    /// The configuration compared with the prior object and what the refresh read, with
    /// `ignore_changes` applied.
    fn diff_instance(&self, block: &Block<'_>, p: &Prepared, found: &Found) -> DiffOutput {
        self.compare(block, p, found, diff)
    }

    /// `how` (a diff) run on the instance's configuration, prior and live object.
    fn compare<T>(
        &self,
        block: &Block<'_>,
        p: &Prepared,
        found: &Found,
        how: impl FnOnce(&DiffInput) -> T,
    ) -> T {
        let ignored = Ignored::new(&block.resource.lifecycle, found.prior.is_some());
        let schema = block.kind.schema();
        let no_prior = Object::default();
        // What was last sent: what the sources of a derived value are compared with.
        let kept = found.effective_prior().map_or(&no_prior, |p| &p.config);
        let ignore = |name: &str| ignored.covers_in(schema, name, &p.config, kept);
        let fp = |v: &Value, fp: &str| self.state.fingerprint_matches(&v.to_json(), fp);
        how(&DiffInput {
            schema: block.kind.schema(),
            config: &p.config,
            prior: found.effective_prior(),
            live: found.live_attrs.as_ref(),
            ignore: &ignore,
            fingerprint_matches: &fp,
        })
    }

    /// Records the decided change of one instance in `out`: the planned `after`, the drift
    /// and field changes (sensitive values redacted), the value other blocks read, and the
    /// spec apply evaluates again.
    fn record_change(
        &self,
        block: &Block<'_>,
        p: Prepared,
        (action, reason): (Action, Option<ActionReason>),
        mut d: DiffOutput,
        found: Found,
        out: &mut InstanceOutcome,
    ) {
        let (r, kind) = (block.resource, block.kind.as_ref());
        let effective_prior = found.effective_prior();
        let live_attrs = found.live_attrs.as_ref();
        // What the object holds now, merged once: the planned `after`, the `before` and
        // the reference value of an unchanged instance all start from it.
        let current = decide::current(effective_prior, live_attrs);
        // Kept, it may still be replaced with the container it lies in (found after the
        // walk): its new object is planned now, as the walk plans any replacement.
        let if_replaced = (matches!(action, Action::NoOp | Action::Update)
            && kind.location(&p.config).is_some())
        .then(|| {
            decide::planned_after(
                kind,
                Action::DeleteThenCreate,
                &p.config,
                effective_prior,
                current.as_ref(),
                d.after.clone(),
            )
        });
        let after = decide::planned_after(
            kind,
            action,
            &p.config,
            effective_prior,
            current.as_ref(),
            std::mem::take(&mut d.after),
        );
        let mut all_sensitive = block.shape.sensitive.clone();
        all_sensitive.extend(p.sensitive_paths.iter().cloned());
        let if_replaced = if_replaced.map(|o| without_sensitive(o, &all_sensitive));
        let drift = planned_drift(
            &p.address,
            block,
            found.deleted_outside,
            std::mem::take(&mut d.drift),
            &all_sensitive,
        );
        let fields = decide::planned_fields(
            kind,
            (action, current.as_ref()),
            &p.config,
            std::mem::take(&mut d.fields),
            &after,
            &all_sensitive,
        );
        let action = if self.req.mode == PlanMode::RefreshOnly {
            Action::NoOp
        } else {
            action
        };
        (out.value, out.held) = seen_by_references(block, action, &current, &p.config, &after);
        let before = current.map(|b| SerObject(without_sensitive(b, &all_sensitive)));
        // The id the object has now: a kind may find an object renamed outside brickform
        // under its new name, which the update then addresses.
        let id = found
            .live_id
            .clone()
            .or_else(|| found.prior.as_ref().map(|(id, _)| id.clone()));
        let sensitive_keys = top_level_keys(&all_sensitive);
        let addr = r.addr().instance(p.key.clone());
        let change = ResourceChange {
            provider: block.provider.clone(),
            action,
            reason,
            id,
            before,
            after: Some(SerObject(without_sensitive(after, &all_sensitive))),
            fields,
            block_paths: block.shape.block_paths.clone(),
            block_keys: block.shape.block_keys.clone(),
            sensitive_paths: all_sensitive,
            importing: found.importing,
            contents: None,
            container: None,
            moved_from: self.moved_from.get(&addr).cloned(),
            deposed: false,
            dependencies: block.dependencies.clone(),
            replaced_dependencies: action.is_replace().then(|| {
                self.state
                    .get(&addr)
                    .map(|r| r.dependencies.clone())
                    .unwrap_or_default()
            }),
            addr,
        };
        out.planned = Some(InstancePlan {
            change,
            spec: InstanceSpec {
                address: p.address,
                resource: Some(block.resource.addr()),
                key: p.key,
                each_value: p.each,
                if_replaced,
                referenced: block.referenced,
            },
            drift,
            sensitive_keys,
        });
    }

    /// Whether the object `config` describes would lie inside a container a lookup of
    /// this plan found not to exist: then it does not exist either, and is not looked up.
    fn in_absent_container(&self, kind: &Arc<dyn ResourceKind>, config: &Object) -> bool {
        let Some(loc) = kind.location(config) else {
            return false;
        };
        super::walk::lock(&self.absent)
            .iter()
            .any(|a| crate::engine::containers::inside(&loc, a))
    }

    /// The object the instance is compared with, and the id it is imported from if it is
    /// imported: what state holds; else what an `import` block names; else an object the
    /// state lost track of (see adopt).
    async fn prior(
        &self,
        block: &Block<'_>,
        addr: &InstanceAddr,
        ctx: &OpContext,
        config: &Object,
        warnings: &mut Vec<String>,
    ) -> Result<(Option<(String, Prior)>, Option<String>), NoPrior> {
        let (r, kind) = (block.resource, &block.kind);
        let (engine, state) = (self.engine, self.state);
        let mut prior = self.state_prior(block, addr, config);
        let mut importing = None;
        if prior.is_none()
            && let Some(import_id) = self.import_ids.get(addr)
        {
            importing = Some(import_id.clone());
            if !engine.offline {
                prior = Some(
                    self.import_named(block, ctx, config, import_id, warnings)
                        .await?,
                );
            }
        }
        // An object the state lost track of is imported, not made twice (see adopt). The
        // search is boxed: it is a large future that most instances never start, and the
        // future of every instance in flight would carry its size.
        if prior.is_none()
            && importing.is_none()
            && engine.may_adopt(kind, ctx, config, self.req.mode)
            && !self.in_absent_container(kind, config)
        {
            let mut nothing_there = false;
            let adopted =
                Box::pin(engine.adopt(kind, ctx, config, state, warnings, &mut nothing_there))
                    .await;
            if nothing_there && let Some(loc) = kind.location(config) {
                super::walk::lock(&self.absent).push(loc);
            }
            match adopted {
                Ok(Some(found)) => {
                    importing = Some(found.0.clone());
                    prior = Some(found);
                }
                Ok(None) => {}
                Err(d) => {
                    return Err(NoPrior {
                        diag: d.at(r.span.clone()),
                    });
                }
            }
        }
        Ok((prior, importing))
    }

    /// The prior of the object an `import` block names, read from the service. An object
    /// whose ownership tag names another state is still imported (the block asks for it),
    /// with a warning naming that state: it manages the object too until it lets go of it.
    async fn import_named(
        &self,
        block: &Block<'_>,
        ctx: &OpContext,
        config: &Object,
        import_id: &str,
        warnings: &mut Vec<String>,
    ) -> Result<(String, Prior), NoPrior> {
        let (r, kind, address) = (block.resource, &block.kind, ctx.address.as_str());
        match kind.import_existing(ctx, import_id).await {
            Ok(Some(found)) => {
                warnings.extend(crate::engine::adopt::other_owner(ctx, &found));
                Ok(crate::engine::adopt::imported_prior(
                    kind.as_ref(),
                    &found.remote,
                    config,
                ))
            }
            Ok(None) => Err(NoPrior {
                diag: Diagnostic::error("Cannot import non-existent remote object")
                    .at(r.span.clone())
                    .detail(format!("While attempting to import an existing object to \"{address}\", the provider detected that no object exists with the given id \"{import_id}\". Only pre-existing objects can be imported; check that the id is correct.")),
            }),
            Err(e) => Err(NoPrior {
                diag: Diagnostic::error(format!("Error importing {address}: {}", e.message))
                    .at(r.span.clone()),
            }),
        }
    }

    /// For an instance whose object is gone from the service: the object this state lost
    /// track of under the instance's key, as a create would look for it (see adopt).
    async fn found_again(
        &self,
        block: &Block<'_>,
        ctx: &OpContext,
        config: &Object,
        warnings: &mut Vec<String>,
    ) -> Result<Option<(String, Prior)>, Diagnostic> {
        let (engine, kind) = (self.engine, &block.kind);
        if !engine.may_adopt(kind, ctx, config, self.req.mode) {
            return Ok(None);
        }
        let mut nothing_there = false;
        Box::pin(engine.adopt(kind, ctx, config, self.state, warnings, &mut nothing_there))
            .await
            .map_err(|d| d.at(block.resource.span.clone()))
    }

    /// The object as the service holds it now (`read_before`: read by the refresh the plan
    /// started, batched where the kind reads in batches), and whether it was deleted outside
    /// brickform.
    async fn refresh(
        &self,
        block: &Block<'_>,
        ctx: &OpContext,
        prior: Option<&(String, Prior)>,
        importing: &Option<String>,
        read_before: Option<ProviderResult<Option<Remote>>>,
    ) -> Result<(Option<Remote>, bool), Diagnostic> {
        let Some((id, p)) = prior else {
            return Ok((None, false));
        };
        if !self.req.refresh || self.engine.offline || importing.is_some() {
            return Ok((None, false));
        }
        let address = ctx.address.as_str();
        let read = match read_before {
            Some(r) => r,
            None => block.kind.read(ctx, id, &p.merged()).await,
        };
        match read {
            Ok(Some(remote)) => Ok((Some(remote), false)),
            Ok(None) => Ok((None, true)),
            Err(e) => Err(
                Diagnostic::error(format!("Error refreshing {address}: {}", e.message))
                    .at(block.resource.span.clone())
                    .detail(e.detail.unwrap_or_default()),
            ),
        }
    }

    /// Which checks with the service the name of the instance's new object needs: for a
    /// replacement, that no other object holds it; for a create in development mode, that
    /// no object of another state or developer does (see [`PlanWalk::check_names`]).
    fn name_checks(&self, block: &Block<'_>, ctx: &OpContext, pending: &Pending) -> (bool, bool) {
        let (kind, engine) = (block.kind.as_ref(), self.engine);
        let (config, action, found) = (&pending.p.config, pending.action, &pending.found);
        let replacing = action.is_replace()
            && !engine.offline
            && found.prior.is_some()
            && crate::engine::adopt::key_known(kind, ctx, config);
        let creating = action == Action::Create
            && !engine.offline
            && found.importing.is_none()
            && engine.settings.mode == Some(EnvMode::Development)
            && config.values().all(Value::is_wholly_known)
            && !self.in_absent_container(&block.kind, config);
        (replacing, creating)
    }

    /// The name a new object will have must be free: a replacement's new object must be
    /// creatable (if another object holds its name, the create would fail after — or,
    /// without create_before_destroy, before — the old one is deleted for nothing; that
    /// stops the instance), and in development mode a create must not take a name an
    /// object of another state or developer holds (reported in `diags`).
    async fn check_names(
        &self,
        block: &Block<'_>,
        ctx: &OpContext,
        pending: &Pending,
        diags: &mut Diagnostics,
    ) -> Result<(), Diagnostic> {
        let (r, kind) = (block.resource, block.kind.as_ref());
        let (p, action, found) = (&pending.p, pending.action, &pending.found);
        let (address, config) = (&p.address, &p.config);
        let (replacing, creating) = self.name_checks(block, ctx, pending);
        if replacing && let Some(old_id) = found.prior.as_ref().map(|(id, _)| id.as_str()) {
            match kind.find_existing(ctx, config).await {
                Ok(found) => {
                    // Created first, the new object meets its old self's name.
                    let old_holds_it = action == Action::CreateThenDelete
                        && found.iter().any(|e| e.exclusive && e.remote.id == old_id);
                    if old_holds_it {
                        return Err(Diagnostic::error(format!("{address}: create_before_destroy needs a new name"))
                            .at(r.span.clone())
                            .detail(format!("{address} must be replaced with its new object created first, and the new object would have the name {old_id} holds until it is deleted: the create would fail."))
                            .hint("change the name in the same change, or remove create_before_destroy so the old object is deleted first"));
                    }
                    if let Some(e) = found.iter().find(|e| e.exclusive && e.remote.id != old_id) {
                        let holder = self.engine.holder(&block.kind, ctx, self.state, e).await;
                        return Err(Diagnostic::error(format!("{address}: the name is taken by {}", e.what))
                            .at(r.span.clone())
                            .detail(format!("{address} must be replaced, and its new object would have the name {} holds ({holder}): the create would fail, and {} would be deleted for nothing.", e.what, old_id))
                            .hint("give it a name nobody holds, or remove or import the other object first"));
                    }
                }
                Err(e) => {
                    diags.push(
                        Diagnostic::error(format!(
                            "{address}: cannot check whether its new name is free: {}",
                            e.message
                        ))
                        .at(r.span.clone()),
                    );
                }
            }
        }
        if creating {
            match kind.name_taken(ctx, config).await {
                Ok(Some(e)) => {
                    let holder = self.engine.holder(&block.kind, ctx, self.state, &e).await;
                    diags.push(
                        Diagnostic::error(format!("{address}: the name is taken by {}", e.what))
                            .at(r.span.clone())
                            .detail(format!("This state does not manage that object ({holder}), and brickform does not take over objects of another state or another developer, nor add a twin with the same name."))
                            .hint("give this one another name (through a variable or the development presets), or import the existing object if it should be managed here"),
                    );
                }
                Ok(None) => {}
                Err(e) => diags.push(
                    Diagnostic::error(format!(
                        "{address}: cannot check whether its name is free: {}",
                        e.message
                    ))
                    .at(r.span.clone()),
                ),
            }
        }
        Ok(())
    }
}

/// What the rest of the plan sees of the instance (see [`decide::reference_value_from`]:
/// the `current` object, unredacted, for one unchanged or deleted), or only the size of its
/// planned object when nothing reads it.
fn seen_by_references(
    block: &Block<'_>,
    action: Action,
    current: &Option<Object>,
    config: &Object,
    after: &Object,
) -> (Option<Value>, Option<(u64, usize)>) {
    if !block.referenced {
        return (None, Some(World::measure_object(after)));
    }
    let current = || {
        matches!(action, Action::NoOp | Action::Delete)
            .then(|| current.clone())
            .flatten()
    };
    let seen = decide::reference_value_from(action, current, config, after);
    (Some(Value::object(seen)), None)
}

/// The attributes the paths start at.
fn top_level_keys(paths: &[Vec<PathStep>]) -> Vec<String> {
    paths
        .iter()
        .filter_map(|path| match path.first() {
            Some(PathStep::Key(k)) => Some(k.clone()),
            _ => None,
        })
        .collect()
}

/// An instance once state and the service have been read for it.
pub(super) struct Looked {
    p: Prepared,
    /// What the provider's calls for the instance are made with, kept for its later steps.
    ctx: OpContext,
    found: Finding,
    warnings: Vec<String>,
}

/// What the lookup of an instance found.
enum Finding {
    /// The prior object and the live one, or why they could not be found.
    Done(Box<Result<Found, (Diagnostic, Option<Value>)>>),
    /// An object state holds, as the refresh read it: the rest is work on the CPU.
    Read(Remote),
}

/// The prior and the live object of an instance, the live one normalized as configurations
/// are.
fn found_from(
    block: &Block<'_>,
    prior: Option<(String, Prior)>,
    importing: Option<String>,
    live: Option<Remote>,
    deleted_outside: bool,
) -> Found {
    // The read's attributes are moved out, not copied: of the rest only its id is kept.
    let live_id = live.as_ref().map(|l| l.id.clone());
    let mut live_attrs = live.map(|l| l.attrs);
    if let Some(l) = live_attrs.as_mut() {
        normalize_object(block.kind.schema(), l);
    }
    Found {
        prior,
        importing,
        live_id,
        live_attrs,
        deleted_outside,
    }
}

/// An instance once its action is decided: recorded, or waiting for the checks of its new
/// object's name.
pub(super) enum Decided {
    Planned(Box<InstanceOutcome>),
    NamesToCheck(Box<(Pending, OpContext)>),
}

/// A decided instance not yet recorded.
pub(super) struct Pending {
    p: Prepared,
    found: Found,
    d: DiffOutput,
    action: Action,
    reason: Option<ActionReason>,
    warnings: Vec<String>,
}

/// The outcome of an instance whose planning stopped at `diag`; references to it see
/// `value`.
fn failed(
    p: &Prepared,
    diag: Diagnostic,
    value: Option<Value>,
    warnings: Vec<String>,
) -> InstanceOutcome {
    let mut out = InstanceOutcome {
        key: p.key.clone(),
        warnings,
        value,
        ..Default::default()
    };
    out.diags.push(diag);
    out
}

/// What state and the service said of an instance before it is diffed: its prior object
/// (with the id it has in state or is imported from), the id an import names, what a
/// refresh read, and whether the object was deleted outside brickform.
struct Found {
    prior: Option<(String, Prior)>,
    importing: Option<String>,
    /// The id of the object the refresh read.
    live_id: Option<String>,
    /// The refreshed attributes, normalized as configurations are.
    live_attrs: Option<Object>,
    deleted_outside: bool,
}

impl Found {
    /// The prior the configuration is compared with: none once the object is gone.
    fn effective_prior(&self) -> Option<&Prior> {
        if self.deleted_outside {
            None
        } else {
            self.prior.as_ref().map(|(_, p)| p)
        }
    }
}

/// The drift an instance shows: deleted outside brickform, or the fields changed outside it
/// (their sensitive values redacted); `None` when nothing drifted.
fn planned_drift(
    address: &crate::addrs::InstanceAddr,
    block: &Block<'_>,
    deleted_outside: bool,
    drifted: Vec<FieldChange>,
    sensitive: &[Vec<PathStep>],
) -> Option<Drift> {
    if !deleted_outside && drifted.is_empty() {
        return None;
    }
    let fields = if deleted_outside {
        Vec::new()
    } else {
        drifted
            .into_iter()
            .map(|mut f| {
                crate::engine::sensitive::redact_field(&mut f, sensitive);
                f
            })
            .collect()
    };
    let r = block.resource;
    Some(Drift {
        address: address.clone(),
        type_name: r.type_name.clone(),
        name: r.name.clone(),
        deleted: deleted_outside,
        fields,
        block_paths: block.shape.block_paths.to_vec(),
        block_keys: block.shape.block_keys.to_vec(),
        sensitive_paths: block.shape.sensitive.clone(),
    })
}
