//! What the plan's changes do to data (see [`crate::plan::DataImpact`]): each kind says it
//! of its own changes ([`crate::provider::ResourceKind::data_impact`]), asked for every
//! change at once within the plan's parallelism, after the destroy guards and containers
//! have settled what is deleted and replaced.

use crate::engine::Engine;
use crate::plan::{Action, DataImpact, Mode, Plan};
use crate::provider::PlannedChange;
use futures_util::StreamExt as _;

impl Engine<'_> {
    pub(super) async fn plan_data_impact(
        &self,
        plan: &mut Plan,
        lineage: &str,
        parallelism: usize,
    ) {
        let offline = self.offline;
        let asked = plan.changes.iter().filter(|c| {
            c.mode() == Mode::Managed
                && !matches!(c.action, Action::NoOp | Action::Read | Action::Forget)
        });
        let found: Vec<Vec<DataImpact>> = futures_util::stream::iter(asked)
            .map(|c| async move {
                let Some(kind) = self.registry_for(&c.provider).kind(c.type_name()) else {
                    return Vec::new();
                };
                let ctx = self.op_context(&c.address(), lineage);
                let change = PlannedChange {
                    action: c.action,
                    id: c.id.as_deref(),
                    before: c.before.as_ref().map(|b| &b.0),
                    after: c.after.as_ref().map(|a| &a.0),
                    offline,
                };
                let found = kind.data_impact(&ctx, &change).await;
                found
                    .into_iter()
                    .map(|f| DataImpact::of(c.addr.clone(), f))
                    .collect()
            })
            .buffered(parallelism.max(1))
            .collect()
            .await;
        plan.data_impact = found.into_iter().flatten().collect();
    }
}
