//! Outputs: what each one's value becomes, and those the configuration no longer has.

use crate::addrs::{ConfigNode, Scoped};
use crate::dag::NodeId;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::world::World;
use crate::engine::{Engine, PlanRequest};
use crate::graph::ConfigGraph;
use crate::lang::eval::Evaluator;
use crate::plan::{Action, OutputChange, PlanMode, SerValue};
use crate::value::Value;
use brickform_state::StateDocument;
use std::collections::HashSet;

impl Engine<'_> {
    pub(super) fn plan_outputs(
        &self,
        world: &World,
        state: &StateDocument,
        req: &PlanRequest,
        graph: &ConfigGraph,
        walked: Option<&HashSet<NodeId>>,
        diags: &mut Diagnostics,
    ) -> Vec<OutputChange> {
        let config = &*self.config;
        let mut out = Vec::new();
        for (name, o) in &config.outputs {
            // An output that reads what a targeted plan left out keeps its value.
            if let Some(walked) = walked
                && !graph
                    .node(&ConfigNode::Output(Scoped::root(name)))
                    .is_some_and(|n| walked.contains(&n))
            {
                continue;
            }
            let mut ev = Evaluator::new(world, &config.dir);
            let after = match ev.eval(&o.value.expr) {
                Ok(v) => v,
                Err(e) => {
                    diags.push(e.to_diagnostic(o.value.file));
                    continue;
                }
            };
            let (_, depth) = crate::limits::measure(&after, crate::limits::MAX_PLAN_BYTES);
            if let Err(why) = crate::limits::check_depth(depth) {
                diags.push(
                    Diagnostic::error("Value too large")
                        .at(o.value.span())
                        .detail(format!("{why}.")),
                );
                continue;
            }
            if ev.touched_sensitive && !o.sensitive {
                diags.push(
                Diagnostic::error("Output refers to sensitive values")
                    .at(o.span.clone())
                    .detail("To reduce the risk of accidentally exporting sensitive data that was intended to be only internal, brickform requires that any root module output containing sensitive data be explicitly marked as sensitive, to confirm your intent.")
                    .hint("add sensitive = true to this output"),
            );
            }
            let before = state
                .outputs()
                .get(name)
                .map(|s| s.value().map(Value::from_json));
            let (action, before_v) = match before {
                None => (Action::Create, None),
                Some(None) => (Action::Update, None),
                Some(Some(b)) if crate::value::values_equal(&b, &after) && !o.sensitive => {
                    (Action::NoOp, Some(b))
                }
                Some(Some(b)) => (Action::Update, Some(b)),
            };
            let action = if o.sensitive
                && state
                    .outputs()
                    .get(name)
                    .and_then(|s| s.fingerprint().map(str::to_string))
                    .is_some_and(|fp| {
                        after.is_wholly_known() && state.fingerprint_matches(&after.to_json(), &fp)
                    }) {
                Action::NoOp
            } else {
                action
            };
            out.push(OutputChange {
                name: name.clone(),
                action: match req.mode {
                    // Destroying removes outputs the state holds; one it never held stays as
                    // it is (nothing), so a second destroy plans no change.
                    PlanMode::Destroy if state.outputs().contains_key(name) => Action::Delete,
                    PlanMode::Destroy => Action::NoOp,
                    _ => action,
                },
                // A sensitive value stays out of the plan (and so out of saved plan files):
                // the action says what happens, and apply evaluates the output again.
                before: before_v.filter(|_| !o.sensitive).map(SerValue),
                after: if req.mode == PlanMode::Destroy || o.sensitive {
                    None
                } else {
                    Some(SerValue(after))
                },
                sensitive: o.sensitive,
            });
        }
        for name in state.outputs().keys() {
            if !config.outputs.contains_key(name) {
                out.push(OutputChange {
                    name: name.clone(),
                    action: Action::Delete,
                    before: state
                        .outputs()
                        .get(name)
                        .and_then(|o| o.value())
                        .map(|v| SerValue(Value::from_json(v))),
                    after: None,
                    sensitive: state.outputs().get(name).is_some_and(|o| o.sensitive()),
                });
            }
        }
        out
    }
}
