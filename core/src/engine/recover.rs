//! Finishing what a crash interrupted. The write-ahead log holds an intent for every call
//! that was sent; an intent without a result is resolved here, by asking the service what
//! happened, before anything is planned:
//! - a create is looked up by the natural key logged with it; an object found is adopted
//!   into state (no duplicate is made), none found means the create never happened;
//! - a create that sent a token (a kind whose repeated create returns what the first made)
//!   keeps the token in state for the next create of the address, which sends it again;
//! - a delete is checked by reading the object: gone (or going, for an object the service
//!   deletes later) means it was carried out, and what the delete does after its call
//!   (waiting for the object to go, removing what it leaves) is finished;
//! - an update is left to the next plan, which compares the live object again.

use super::Engine;
use super::instance::{Slot, state_entry};
use crate::addrs::InstanceAddr;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::value::Object;
use brickform_state::{Intent, Journal, Outcome, StateDocument, WalOp};
use std::sync::Arc;

impl Engine<'_> {
    /// Resolves interrupted operations; returns a line per resolution for the user, or the
    /// diagnostics that stopped it (the log keeps the intents for the next attempt).
    pub async fn recover_interrupted(
        &self,
        doc: &mut StateDocument,
        journal: &Journal,
        intents: &[Intent],
    ) -> Result<Vec<String>, Diagnostics> {
        if intents.is_empty() {
            return Ok(Vec::new());
        }
        let (cg, _) = crate::graph::build(&self.config);
        let order = cg.ordered_nodes().unwrap_or_default();
        let diags = self.configure_providers(&order, doc).await;
        if diags.has_errors() {
            return Err(diags);
        }
        let mut lines = Vec::new();
        for intent in intents {
            let ctx = self.op_context(&intent.address, doc.lineage());
            // The log names the instance by its text, read once here; one that is no
            // address was not written by brickform, and names nothing in the state.
            let addr = InstanceAddr::parse(&intent.address);
            let entry = addr.as_ref().ok().and_then(|a| doc.get(a));
            let registry = match entry {
                Some(r) => self.registry_for(&r.provider),
                None => self.registry_at(&intent.address),
            };
            let kind = registry.kind(&intent.resource_type).cloned();
            let failed = |why: &str| Outcome::Failed(format!("interrupted: {why}"));
            let outcome = match (&intent.op, kind) {
                // Only repeating the create would tell whether it happened, and that is for
                // the next create of the address (not, say, a destroy): it sends this token
                // again and gets what this one made, if anything.
                (WalOp::Create, _) if intent.token.is_some() => {
                    lines.push(format!(
                        "{}: the interrupted create cannot be looked up; its token is kept, so the next apply's create of it gets what it may have made instead of a second one",
                        intent.address
                    ));
                    Outcome::Pending {}
                }
                (WalOp::Create | WalOp::Import, Some(kind)) => match &intent.natural_key {
                    Some(key) => match kind.find_by_key(&ctx, key).await {
                        Ok(Some(found)) => {
                            // What the create does after making the object may not have run.
                            let remote = match kind.complete_create(&ctx, found.clone()).await {
                                Ok(done) => done,
                                Err(e) => {
                                    lines.push(format!(
                                        "{}: finishing the interrupted create of {} failed: {}",
                                        intent.address, found.id, e.message
                                    ));
                                    found
                                }
                            };
                            let config =
                                super::instance::configurable(kind.schema(), &remote.attrs);
                            let provider = match addr.as_ref().ok().and_then(|a| doc.get(a)) {
                                Some(r) => r.provider.clone(),
                                None => addr
                                    .as_ref()
                                    .ok()
                                    .and_then(|a| self.config.resources.get(&a.resource))
                                    .map(|r| self.provider_key(r))
                                    .unwrap_or_else(|| {
                                        self.registry
                                            .provider_of(&intent.resource_type)
                                            .map(|p| p.name().to_string())
                                            .unwrap_or_default()
                                    }),
                            };
                            let entry = addr.as_ref().map_err(|e| e.to_string()).and_then(|addr| {
                                let slot = Slot {
                                    addr,
                                    provider: &provider,
                                    dependencies: &[],
                                };
                                state_entry(
                                    &doc.redactor(),
                                    slot,
                                    kind.as_ref(),
                                    &remote,
                                    &config,
                                    &[],
                                )
                                .map_err(|e| e.to_string())
                            });
                            match entry {
                                Ok(rs) => {
                                    lines.push(format!(
                                        "{}: adopted {} created before the interruption",
                                        intent.address, remote.id
                                    ));
                                    Outcome::Created(rs)
                                }
                                Err(e) => failed(&e),
                            }
                        }
                        Ok(None) => {
                            lines.push(format!(
                                "{}: the interrupted create did not happen",
                                intent.address
                            ));
                            failed("the object was not created")
                        }
                        Err(e) => {
                            return Err(Diagnostic::error(format!(
                                "Cannot check the interrupted create of {}: {}",
                                intent.address, e.message
                            ))
                            .into());
                        }
                    },
                    None => {
                        lines.push(format!("{}: an interrupted create cannot be looked up; check the service for a duplicate", intent.address));
                        failed("no natural key")
                    }
                },
                (WalOp::Delete, Some(kind)) => match &intent.id {
                    Some(id) => match kind.read(&ctx, id, &Object::default()).await {
                        Ok(None) => {
                            // Gone, or going: what the delete does after its call (a wait
                            // for an object the service removes later, a volume it leaves)
                            // may not have run, and runs now.
                            let prior = addr
                                .as_ref()
                                .ok()
                                .and_then(|a| super::instance::prior_of(doc, a, kind.schema()))
                                .map(|(_, p)| p.merged())
                                .unwrap_or_default();
                            if let Err(e) = kind.complete_delete(&ctx, id, &prior).await {
                                return Err(Diagnostic::error(format!(
                                    "Cannot finish the interrupted delete of {}: {}",
                                    intent.address, e.message
                                ))
                                .into());
                            }
                            lines.push(format!(
                                "{}: the interrupted delete completed",
                                intent.address
                            ));
                            Outcome::Deleted {}
                        }
                        Ok(Some(_)) => failed("the object still exists"),
                        Err(e) => {
                            return Err(Diagnostic::error(format!(
                                "Cannot check the interrupted delete of {}: {}",
                                intent.address, e.message
                            ))
                            .into());
                        }
                    },
                    None => failed("no id"),
                },
                (WalOp::Forget, _) => Outcome::Forgotten {},
                (WalOp::Update, _) => failed("the next plan compares the live object"),
                (_, None) => failed("unknown resource type"),
            };
            journal
                .result(intent.seq, outcome, doc)
                .await
                .map_err(|e| {
                    Diagnostics::from(Diagnostic::error(format!(
                        "Cannot record the recovery of {}: {e}",
                        intent.address
                    )))
                })?;
        }
        Ok(lines)
    }
}

/// The refusal of an import at an address the configuration does not declare (`base`: the
/// address's resource, or the whole text when it is no address).
fn not_declared(base: &dyn std::fmt::Display) -> Diagnostics {
    Diagnostics::from(Diagnostic::error("Configuration for import target does not exist")
        .detail(format!("The configuration does not declare {base}. Add a resource block for it before importing, so brickform knows how to manage it.")))
}

impl Engine<'_> {
    /// `brickform import ADDR ID`: reads the object and records it in state under ADDR,
    /// which must be declared in the configuration. Gives the line to print and warnings:
    /// an object whose ownership tag names another state is named with that state, which
    /// still manages it.
    pub async fn import(
        &self,
        doc: &mut StateDocument,
        journal: &Journal,
        address: &str,
        id: &str,
    ) -> Result<(String, Diagnostics), Diagnostics> {
        // The address is read once, here, as the command line gave it. Not an address: the
        // whole text is what the configuration does not declare.
        let addr = InstanceAddr::parse(address).map_err(|_| not_declared(&address))?;
        self.import_known(doc, journal, &addr, id, &Object::default())
            .await
    }

    /// [`Engine::import`], given arguments the caller knows were applied to the object but
    /// a read cannot tell (a sensitive value the service never returns, what an upload was
    /// made from): they are recorded as the applied configuration, sensitive ones as
    /// fingerprints only, so a configuration that still says the same plans no change.
    /// Names the kind's schema cannot configure are ignored.
    pub async fn import_known(
        &self,
        doc: &mut StateDocument,
        journal: &Journal,
        addr: &InstanceAddr,
        id: &str,
        known: &Object,
    ) -> Result<(String, Diagnostics), Diagnostics> {
        // Its text, for the messages, the provider's context and the write-ahead log.
        let address = addr.to_string();
        let Some(resource) = self.config.resources.get(&addr.resource) else {
            return Err(not_declared(&addr.resource));
        };
        if resource.mode != crate::plan::Mode::Managed {
            return Err(Diagnostic::error("Invalid import address")
                .detail(
                    "Only managed resources can be imported; data sources are read on every plan.",
                )
                .into());
        }
        if doc.get(addr).is_some() {
            return Err(Diagnostic::error("Resource already managed by brickform")
                .detail(format!("{address} is already in the state. To import it again, remove it first with `brickform state rm {address}`."))
                .into());
        }
        let Some(kind) = self
            .registry_for(&self.provider_key(resource))
            .kind(&resource.type_name)
            .cloned()
        else {
            return Err(Diagnostic::error("Invalid resource type")
                .at(resource.type_span.clone())
                .into());
        };
        let (cg, _) = crate::graph::build(&self.config);
        let diags = self
            .configure_providers(&cg.ordered_nodes().unwrap_or_default(), doc)
            .await;
        if diags.has_errors() {
            return Err(diags);
        }
        let ctx = self.op_context(&address, doc.lineage());
        let found = match kind.import_existing(&ctx, id).await {
            Ok(Some(found)) => found,
            Ok(None) => {
                return Err(Diagnostic::error("Cannot import non-existent remote object")
                    .detail(format!("While attempting to import an existing object to \"{address}\", the provider detected that no object exists with the given id \"{id}\". Only pre-existing objects can be imported; check that the id is correct."))
                    .into());
            }
            Err(e) => {
                return Err(
                    Diagnostic::error(format!("Error importing {address}: {}", e.message)).into(),
                );
            }
        };
        let mut warnings = Diagnostics::default();
        if let Some(w) = crate::engine::adopt::other_owner(&ctx, &found) {
            warnings.push(Diagnostic::warning(w));
        }
        let remote = found.remote;
        let mut config = super::instance::configurable(kind.schema(), &remote.attrs);
        // In the canonical form the configuration is compared in, as the planner's imports
        // are: a user name the service spells another way is the same principal.
        crate::plan::diff::normalize_object(kind.schema(), &mut config);
        // Recorded as if applied from a configuration that leaves the service's defaults
        // unset, as the planner's imports are (adopt::imported_prior): otherwise every nested
        // default the service reports (a task's run_if) would plan an update on the next plan.
        // Nested blocks only: the diff itself treats top-level defaults as unset, and a
        // configured top-level default (`continuous = false`) must still match.
        for b in &kind.schema().blocks {
            if let Some(v) = config.get_mut(b.name) {
                unset_defaults_in(&b.schema, v);
            }
        }
        for (k, v) in known {
            if kind
                .schema()
                .attribute(k)
                .is_some_and(|a| a.can_configure())
            {
                config.insert(k.clone(), v.clone());
            }
        }
        let provider = self.provider_key(resource);
        let dependencies: Vec<InstanceAddr> = cg
            .resource_dependencies(&crate::addrs::ConfigNode::Resource(resource.addr()))
            .into_iter()
            .map(|d| d.instance(None))
            .collect();
        let slot = Slot {
            addr,
            provider: &provider,
            dependencies: &dependencies,
        };
        let rs = state_entry(&doc.redactor(), slot, kind.as_ref(), &remote, &config, &[])
            .map_err(|e| Diagnostics::from(Diagnostic::error(e.to_string())))?;
        let seq = journal
            .intent(
                WalOp::Import,
                &address,
                &resource.type_name,
                None,
                Some(remote.id.clone()),
            )
            .await
            .map_err(|e| Diagnostics::from(Diagnostic::error(e.to_string())))?;
        journal
            .result(seq, Outcome::Imported(rs), doc)
            .await
            .map_err(|e| Diagnostics::from(Diagnostic::error(e.to_string())))?;
        Ok((
            format!("{address}: Import complete [id={}]", remote.id),
            warnings,
        ))
    }
}

/// An object another tool managed, to be taken under management as it stands (what
/// `convert --state` reads from a Terraform state).
#[derive(Debug, Clone, PartialEq)]
pub struct KnownImport {
    /// The instance address it is imported at.
    pub address: InstanceAddr,
    /// Where the other tool knew it, for the report.
    pub from: String,
    pub id: String,
    /// What was applied to it that a read cannot tell (see [`Engine::import_known`]).
    pub known: Object,
}

/// What [`Engine::import_all`] did with one object, in the order given.
pub enum ImportOutcome {
    /// `ADDRESS: Import complete [id=…] (from …)`, and the warnings.
    Imported(String, Diagnostics),
    /// The state held the address already: kept as it is.
    Kept(String),
    /// Why the import failed.
    Failed(Diagnostics),
}

impl Engine<'_> {
    /// Imports each of `imports` (one the state holds already is kept), records the output
    /// values the configuration still declares and the state lacks (so the next plan does
    /// not show them as new), and saves the state.
    pub async fn import_all(
        &self,
        doc: &mut StateDocument,
        journal: &Journal,
        imports: &[KnownImport],
        outputs: &[(String, serde_json::Value, bool)],
    ) -> Result<Vec<ImportOutcome>, brickform_state::StateError> {
        let mut report = Vec::with_capacity(imports.len());
        for i in imports {
            if doc.get(&i.address).is_some() {
                report.push(ImportOutcome::Kept(i.address.to_string()));
                continue;
            }
            report.push(
                match self
                    .import_known(doc, journal, &i.address, &i.id, &i.known)
                    .await
                {
                    Ok((line, warnings)) => {
                        ImportOutcome::Imported(format!("{line} (from {})", i.from), warnings)
                    }
                    Err(diags) => ImportOutcome::Failed(diags),
                },
            );
        }
        for (name, value, sensitive) in outputs {
            if self.config.outputs.contains_key(name) && !doc.outputs().contains_key(name) {
                doc.set_output(name, value.clone(), *sensitive);
            }
        }
        journal.checkpoint(doc).await?;
        Ok(report)
    }
}

impl Engine<'_> {
    /// Configures the providers the configuration and `state` use (commands that talk to
    /// the service without planning, such as `brickform run`).
    pub async fn configure(&self, state: &StateDocument) -> Diagnostics {
        self.configure_including(state, &[]).await
    }

    /// As [`Engine::configure`], and configures the providers named in `also` though the
    /// configuration uses none of their kinds yet: a command that writes configuration for
    /// them (adopt) reads the service first.
    pub async fn configure_including(&self, state: &StateDocument, also: &[&str]) -> Diagnostics {
        let (cg, _) = crate::graph::build(&self.config);
        self.configure_providers_with(&cg.ordered_nodes().unwrap_or_default(), state, also)
            .await
    }
}

/// Nulls, in a block's value (one object, or a list of them), the attributes whose value is
/// the service's default for them, at every depth. A nested default the configuration does
/// write out plans as an update once, as it would after a planner import.
fn unset_defaults_in(schema: &crate::provider::Schema, v: &mut crate::value::Value) {
    match v {
        crate::value::Value::Object(inner) => unset_defaults(schema, Arc::make_mut(inner)),
        crate::value::Value::List(items) => {
            for item in items {
                if let crate::value::Value::Object(inner) = item {
                    unset_defaults(schema, Arc::make_mut(inner));
                }
            }
        }
        _ => {}
    }
}

fn unset_defaults(schema: &crate::provider::Schema, o: &mut Object) {
    for a in &schema.attributes {
        if let (Some(default), Some(v)) = (&a.server_default, o.get_mut(a.name))
            && crate::value::values_equal(v, default)
        {
            *v = crate::value::Value::Null;
        }
    }
    for b in &schema.blocks {
        if let Some(v) = o.get_mut(b.name) {
            unset_defaults_in(&b.schema, v);
        }
    }
}
