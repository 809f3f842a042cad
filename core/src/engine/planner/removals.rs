//! What state holds and the configuration no longer produces: orphans to delete or forget,
//! and objects a `create_before_destroy` replacement put aside.

use super::Shape;
use super::guards::prevent_destroy_error;
use crate::addrs::InstanceAddr;
use crate::diagnostics::Diagnostics;
use crate::engine::instance::merged_from;
use crate::engine::{Engine, InstanceSpec, PlanRequest};
use crate::plan::{Action, ActionReason, PlanMode, ResourceChange, SerObject};
use brickform_state::StateDocument;
use std::collections::{BTreeMap, HashSet};

impl Engine<'_> {
    /// Instances in state that the configuration no longer produces (`produced` holds the
    /// addresses it does): deleted, or forgotten where a `removed` block says so.
    pub(super) fn orphans(
        &self,
        state: &StateDocument,
        req: &PlanRequest,
        produced: &HashSet<InstanceAddr>,
        diags: &mut Diagnostics,
    ) -> Vec<(ResourceChange, InstanceSpec)> {
        let config = &*self.config;
        // A `removed` block names an instance or a whole resource (an address without a
        // key); a `from` that is no address names nothing state holds.
        let removed: BTreeMap<InstanceAddr, bool> = config
            .removed
            .iter()
            .filter_map(|r| Some((InstanceAddr::parse(&r.from).ok()?, r.destroy)))
            .collect();
        let mut out = Vec::new();
        for r in state.resources() {
            if produced.contains(&r.addr) || r.mode() != brickform_state::ResourceMode::Managed {
                continue;
            }
            let (action, reason) = match removed
                .get(&r.addr)
                .or_else(|| removed.get(&r.resource().instance(None)))
            {
                Some(false) => (Action::Forget, ActionReason::ForgetBecauseRemoved),
                _ => {
                    let reason = match config.resources.get(r.resource()) {
                        None => ActionReason::DeleteBecauseNoResourceConfig,
                        Some(res) if res.count.is_some() => ActionReason::DeleteBecauseCountIndex,
                        Some(res) if res.for_each.is_some() => ActionReason::DeleteBecauseEachKey,
                        Some(_) => ActionReason::DeleteBecauseNoResourceConfig,
                    };
                    (Action::Delete, reason)
                }
            };
            if action == Action::Delete && req.mode != PlanMode::RefreshOnly {
                let lifecycle_protected = config
                    .resources
                    .get(r.resource())
                    .is_some_and(|res| res.lifecycle.prevent_destroy);
                if lifecycle_protected {
                    diags.push(prevent_destroy_error(
                        &r.addr,
                        config
                            .resources
                            .get(r.resource())
                            .and_then(|res| res.span.clone()),
                    ));
                }
            }
            let action = if req.mode == PlanMode::RefreshOnly {
                Action::NoOp
            } else {
                action
            };
            out.push((self.removal(r, action, reason), state_only(&r.addr)));
        }
        out
    }

    /// Objects `create_before_destroy` replacements put aside whose delete did not finish:
    /// deleted now, or only forgotten when they are gone already.
    pub(super) async fn deposed(
        &self,
        state: &StateDocument,
        req: &PlanRequest,
    ) -> Vec<(ResourceChange, InstanceSpec)> {
        let mut out = Vec::new();
        if req.mode == PlanMode::RefreshOnly {
            return out;
        }
        for r in state.deposed() {
            let gone = match self.registry_for(&r.provider).kind(r.type_name()) {
                Some(kind) if req.refresh && !self.offline => {
                    let ctx = self.op_context(&r.address(), state.lineage());
                    matches!(
                        kind.read(&ctx, &r.id, &merged_from(r, kind.schema())).await,
                        Ok(None)
                    )
                }
                _ => false,
            };
            let (action, reason) = if gone {
                (Action::Forget, ActionReason::ForgetBecauseGone)
            } else {
                (Action::Delete, ActionReason::DeleteBecauseDeposed)
            };
            let mut change = self.removal(r, action, reason);
            change.deposed = true;
            out.push((change, state_only(&r.addr)));
        }
        out
    }

    /// The planned removal (a delete or forget) of state entry `r`, which the configuration
    /// does not produce or which was put aside.
    fn removal(
        &self,
        r: &brickform_state::ResourceState,
        action: Action,
        reason: ActionReason,
    ) -> ResourceChange {
        let schema = self
            .registry
            .kind(r.type_name())
            .map_or(crate::provider::Schema::empty(), |k| k.schema());
        let shape = Shape::of(schema);
        ResourceChange {
            addr: r.addr.clone(),
            provider: r.provider.clone(),
            action,
            reason: Some(reason),
            id: Some(r.id.clone()),
            before: Some(SerObject(merged_from(r, schema))),
            after: None,
            fields: Vec::new(),
            block_paths: shape.block_paths,
            block_keys: shape.block_keys,
            sensitive_paths: shape.sensitive,
            importing: None,
            contents: None,
            container: None,
            moved_from: None,
            deposed: false,
            dependencies: r.dependencies.clone(),
            replaced_dependencies: None,
        }
    }
}

/// The apply spec of an instance only state knows: nothing to evaluate.
fn state_only(address: &InstanceAddr) -> InstanceSpec {
    InstanceSpec {
        address: address.clone(),
        resource: None,
        key: None,
        each_value: None,
        if_replaced: None,
        referenced: false,
    }
}
