//! What a node works from, and what a step sends: the instance's configuration evaluated
//! again with the values its dependencies got, made as the plan made it (`configure`, the
//! plan's own function) and checked against the plan.

use super::error::{EngineFailure, NodeError};
use super::graph::Part;
use super::{Shared, Step, reading};
use crate::diagnostics::Diagnostics;
use crate::engine::configure::{
    Ignored, Inputs, configure, configure_keeping, differs_from_plan, path_text,
};
use crate::engine::instance::decode_instance;
use crate::engine::{Engine, InstanceSpec};
use crate::plan::{Action, Mode, ResourceChange};
use crate::provider::ResourceKind;
use crate::value::{Object, PathStep, Value};
use std::sync::Arc;

/// What a node needs to run, taken from the configuration before its task starts.
pub(super) struct Work {
    pub part: Part,
    pub kind: Option<Arc<dyn ResourceKind>>,
    pub data_source: Option<Arc<dyn crate::provider::DataSource>>,
    pub resource: Option<crate::lang::load::Resource>,
    pub key: Option<crate::plan::InstanceKey>,
    pub each_value: Option<Value>,
    pub base_dir: std::path::PathBuf,
    /// The development presets the plan applied, applied again to what is sent.
    pub presets: Option<crate::provider::Presets>,
    /// Whether the environment is in production mode (its checks run again).
    pub production: bool,
    /// Whether anything reads the instance: only then does its result go into the world.
    pub referenced: bool,
}

/// What a step sends for a managed instance: its configuration, and the paths in it the
/// configuration made sensitive (a sensitive variable's value), which state holds only as
/// fingerprints.
pub(super) struct Sent {
    pub config: Object,
    pub sensitive: Vec<Vec<PathStep>>,
}

impl Engine<'_> {
    /// What the node of `change` (its `part`) needs to run.
    pub(super) fn prepare(&self, change: &ResourceChange, spec: &InstanceSpec, part: Part) -> Work {
        let resource = spec
            .resource
            .as_ref()
            .and_then(|r| self.config.resources.get(r))
            .cloned();
        Work {
            part,
            kind: (change.mode() == Mode::Managed)
                .then(|| {
                    self.registry_for(&change.provider)
                        .kind(change.type_name())
                        .cloned()
                })
                .flatten(),
            data_source: (change.mode() == Mode::Data)
                .then(|| {
                    self.registry_for(&change.provider)
                        .data_source(change.type_name())
                        .cloned()
                })
                .flatten(),
            resource,
            key: spec.key.clone(),
            each_value: spec.each_value.clone(),
            base_dir: self.config.dir.clone(),
            presets: self.presets().cloned(),
            production: self.settings.mode == Some(crate::lang::environment::EnvMode::Production),
            referenced: spec.referenced,
        }
    }
}

impl Step<'_> {
    /// What this step sends (see [`evaluate`]).
    pub(super) fn evaluate(&self) -> Result<Sent, NodeError> {
        evaluate(self.work, self.shared, self.kind, self.change)
    }
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
pub(super) fn evaluate_lookup(
    work: &Work,
    shared: &Shared,
    schema: &crate::provider::Schema,
    address: &str,
) -> Result<Object, NodeError> {
    let Some(r) = &work.resource else {
        return Err(EngineFailure::NoConfiguration {
            address: address.to_string(),
        }
        .into());
    };
    let world = reading(&shared.world);
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
pub(super) fn evaluate(
    work: &Work,
    shared: &Shared,
    kind: &dyn ResourceKind,
    change: &ResourceChange,
) -> Result<Sent, NodeError> {
    let address = &change.addr;
    let Some(r) = &work.resource else {
        return Err(EngineFailure::NoConfiguration {
            address: address.to_string(),
        }
        .into());
    };
    let planned = change.after.as_ref().map(|a| &a.0);
    // A create makes the object as configured; anything else keeps what the plan kept for
    // the attributes `ignore_changes` covers, before the kind derives from them, as the
    // plan did.
    let exists = change.action != Action::Create;
    let mut ignored = Ignored::new(&r.lifecycle, exists);
    if change.action.is_replace() {
        ignored = ignored.replacing();
    }
    let world = reading(&shared.world);
    let inputs = Inputs {
        resource: r,
        kind,
        world: &world,
        base_dir: &work.base_dir,
        key: work.key.as_ref(),
        each: work.each_value.as_ref(),
        production: work.production,
        presets: work.presets.as_ref(),
    };
    let made = match planned {
        Some(kept) if ignored.any() => configure_keeping(&inputs, address, &ignored, kept),
        _ => configure(&inputs, address),
    };
    drop(world);
    if made.diags.has_errors() {
        return Err(evaluation_failed(&made.diags));
    }
    let config = made.config;
    still_unknown(&config)?;
    if let Some(planned) = planned {
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
    Ok(Sent {
        config,
        sensitive: made.sensitive_paths,
    })
}

fn shown_value(v: &Value) -> String {
    v.to_json().to_string()
}
