//! Planning one instance of a data source: read now when everything it reads from is known
//! and unchanged, else during apply.

use super::Shape;
use super::walk::{InstanceOutcome, InstancePlan, PlanWalk};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::InstanceSpec;
use crate::engine::instance::decode_instance;
use crate::engine::world::World;
use crate::lang::load::Resource;
use crate::plan::{Action, ActionReason, InstanceKey, ResourceChange, SerObject};
use crate::provider::DataSource;
use crate::value::{Object, Value};
use std::sync::Arc;

/// A data source block and what all its instances share.
pub(super) struct Lookup<'r> {
    pub resource: &'r Resource,
    pub source: Arc<dyn DataSource>,
    /// Whether anything reads the data source (see [`super::managed::Block::referenced`]).
    pub referenced: bool,
    pub provider: String,
    pub dependencies: Vec<crate::addrs::InstanceAddr>,
    pub shape: Shape,
}

/// One instance's decoded arguments.
pub(super) struct Arguments {
    key: Option<InstanceKey>,
    each: Option<Value>,
    config: Object,
}

impl PlanWalk<'_, '_> {
    /// Decodes one instance's arguments; `None` when they have errors (in `diags`).
    pub(super) fn lookup_arguments(
        &self,
        lookup: &Lookup<'_>,
        world: &World,
        key: Option<InstanceKey>,
        each: Option<Value>,
        diags: &mut Diagnostics,
    ) -> Option<Arguments> {
        let (config, _, d) = decode_instance(
            lookup.resource,
            lookup.source.schema(),
            world,
            &self.engine.config.dir,
            key.as_ref(),
            each.as_ref(),
        );
        let failed = d.has_errors();
        diags.extend(d);
        (!failed).then_some(Arguments { key, each, config })
    }

    /// Reads the instance now if it can, or plans its read for apply.
    pub(super) async fn plan_lookup(&self, lookup: &Lookup<'_>, a: Arguments) -> InstanceOutcome {
        let mut out = InstanceOutcome {
            key: a.key.clone(),
            ..Default::default()
        };
        let (r, ds) = (lookup.resource, lookup.source.as_ref());
        let address = r.addr().instance(a.key.clone());
        // Until it is read: what the source fills in is unknown, an optional value it fills
        // in when left unset (the id a lookup by name finds) included.
        let mut value = a.config.clone();
        for attr in ds.schema().attributes.iter().filter(|at| {
            at.is_computed_only()
                || (at.presence == crate::provider::Presence::OptionalComputed
                    && a.config.get(at.name).is_none_or(Value::is_null))
        }) {
            value.insert(attr.name.to_string(), Value::Unknown);
        }
        let mut action = Action::Read;
        let mut reason = Some(ActionReason::ReadBecauseConfigUnknown);
        // A lookup of something this plan creates or changes reads it during apply,
        // after that change, not now (when it may not exist yet).
        let pending = super::decide::dependency_pending(
            &super::walk::lock(&self.settled),
            &lookup.dependencies,
        );
        if pending {
            reason = Some(ActionReason::ReadBecauseDependencyPending);
        }
        if !self.engine.offline && !pending && a.config.values().all(Value::is_wholly_known) {
            let read = crate::call_slots::within(self.calls.clone(), ds.read(&a.config));
            match read.await {
                Ok(v) => {
                    value = a.config.clone();
                    value.extend(v);
                    action = Action::NoOp;
                    reason = None;
                }
                Err(e) => {
                    out.diags.push(
                        Diagnostic::error(format!("Error reading {address}: {}", e.message))
                            .at(r.span.clone())
                            .detail(e.detail.unwrap_or_default()),
                    );
                    // Unknown, not null: what refers to it reports no second error.
                    out.value = Some(Value::Unknown);
                    return out;
                }
            }
        }
        if lookup.referenced {
            out.value = Some(Value::object(value.clone()));
        } else {
            out.held = Some(World::measure_object(&value));
        }
        out.planned = Some(InstancePlan {
            change: ResourceChange {
                addr: address.clone(),
                provider: lookup.provider.clone(),
                action,
                reason,
                id: None,
                before: None,
                after: Some(SerObject(value)),
                fields: Vec::new(),
                block_paths: lookup.shape.block_paths.clone(),
                block_keys: lookup.shape.block_keys.clone(),
                sensitive_paths: Vec::new(),
                importing: None,
                contents: None,
                container: None,
                moved_from: None,
                deposed: false,
                dependencies: lookup.dependencies.clone(),
                replaced_dependencies: None,
            },
            spec: InstanceSpec {
                address,
                resource: Some(r.addr()),
                key: a.key,
                each_value: a.each,
                if_replaced: None,
                referenced: lookup.referenced,
            },
            drift: None,
            sensitive_keys: Vec::new(),
        });
        out
    }
}
