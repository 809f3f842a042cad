//! After the walk: the log's last records written, the calls whose outcome is still
//! unknown counted, and the outputs and checks evaluated on the final world.

use super::Shared;
use super::report::ApplyReport;
use crate::engine::Engine;
use crate::engine::world::World;
use crate::lang::eval::Evaluator;
use brickform_state::StateDocument;
use std::sync::Arc;

impl Engine<'_> {
    /// Finishes an apply whose walk is over: the state and the report to hand back.
    pub(super) async fn finish(
        &self,
        shared: Arc<Shared>,
        plan: &crate::plan::Plan,
        mut report: ApplyReport,
    ) -> (StateDocument, ApplyReport) {
        // Results are written with the next group of records, not waited for: write the
        // last ones, so the log holds every call's outcome should saving the state fail.
        if let Err(e) = shared.journal.sync().await
            && report.stopped.is_none()
        {
            report.stopped = Some(format!("the write-ahead log could not be written: {e}"));
        }

        report.unresolved = shared.journal.open_intents().await.len();
        // Outputs, from the final world.
        let shared = match Arc::try_unwrap(shared) {
            Ok(s) => s,
            Err(arc) => {
                // All tasks have finished, so this does not happen; fall back to copying.
                let doc = arc.doc.lock().await.clone();
                let world = super::reading(&arc.world).clone();
                return self.finish_outputs(doc, world, plan, report);
            }
        };
        let doc = shared.doc.into_inner();
        let world = shared.world.into_inner().unwrap_or_else(|p| p.into_inner());
        self.finish_outputs(doc, world, plan, report)
    }

    /// The outputs, from the final world, and the checks; outputs no longer configured
    /// leave state.
    fn finish_outputs(
        &self,
        mut doc: StateDocument,
        world: World,
        plan: &crate::plan::Plan,
        mut report: ApplyReport,
    ) -> (StateDocument, ApplyReport) {
        let destroying = plan.mode == crate::plan::PlanMode::Destroy;
        self.drop_pending_tokens(&mut doc, plan);
        for (name, o) in &self.config.outputs {
            if destroying {
                doc.remove_output(name);
                continue;
            }
            match Evaluator::new(&world, &self.config.dir).eval(&o.value.expr) {
                Ok(v) if v.is_wholly_known() => {
                    doc.set_output(name, v.to_json(), o.sensitive);
                    report.outputs.push((name.clone(), v, o.sensitive));
                }
                Ok(_) | Err(_) => {}
            }
        }
        if !destroying {
            report.checks = crate::engine::checks::evaluate(&self.config, &world);
        }
        let stale: Vec<String> = doc
            .outputs()
            .keys()
            .filter(|k| !self.config.outputs.contains_key(*k))
            .cloned()
            .collect();
        for k in stale {
            doc.remove_output(&k);
        }
        (doc, report)
    }

    /// Drops the tokens of unresolved creates (see `StateDocument::pending_token`) that no
    /// create will use: all of them after a destroy (what such a create may have made is
    /// removed with the rest, or, for a kind whose delete only forgets, forgotten), and those
    /// of resources no longer in the configuration. A targeted plan keeps them.
    fn drop_pending_tokens(&self, doc: &mut StateDocument, plan: &crate::plan::Plan) {
        if plan.targeted {
            return;
        }
        let destroying = plan.mode == crate::plan::PlanMode::Destroy;
        let unused: Vec<_> = doc
            .pending_token_addresses()
            .filter(|a| destroying || !self.config.resources.contains_key(&a.resource))
            .collect();
        for a in unused {
            doc.clear_pending_token(&a);
        }
    }
}
