//! Static checks of sdp-meta flows and onboardings: the sdp-meta rules (V1–V26,
//! docs/architecture.md, sdp-meta rules) that can be decided from the configuration, and the
//! onboarding pre-flight of released sdp-meta 0.1.0 (docs/architecture.md, sdp-meta onboarding
//! facts), so a mistake shows at `validate` / `plan` instead of in the onboarding job or at
//! pipeline start.
//!
//! [`check_flow`] runs on one `sdp_meta_flow` configuration and reports everything that depends
//! on that flow alone. [`check_onboarding`] runs on an `sdp_meta_onboarding` configuration and
//! reports only what needs the whole file set, the runner or the sdp-meta build (each flow is
//! also an `sdp_meta_flow` resource, so its own findings are not reported a second time).
//! A rule whose inputs are unknown (known after apply) says nothing.
//!
//! The rules, their levels and where each finding points are data in [`rules`], which also
//! generates the rule tables of the docs. The checks are grouped by area: `values.rs` (three-valued
//! lookups), `report.rs` (where a finding points, how it is worded), `names.rs` (identifiers),
//! `flow.rs` (a flow's blocks), `source.rs`, `layer.rs` and `onboarding.rs`.
//!
//! Builds (`sdp_meta_version`, "0.1.0" when unset): "0.1.0" and "0.1.1" (= upstream main) carry
//! the pre-fix code for #266 / #268 and the 0.1.0 behaviour of #265; a version containing
//! "+pr267" (a wheel built from the PR #267 branch) carries the fixes.
//!
//! Not decidable from the configuration (besides the rules [`rules`] marks rendered or not
//! checked): the content of an `expectations_file` or a `transformation_file`, and whether
//! source tables exist.

mod flow;
mod layer;
mod names;
mod onboarding;
mod report;
pub mod rules;
mod source;
mod values;

use flow::*;
use layer::*;
use names::*;
use onboarding::*;
use report::*;
use rules::Rule;
use source::*;
use values::*;

use brickform_core::provider::{Finding, FindingLevel};
use brickform_core::value::{Object, PathStep, Value, quote};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The key attribute of the keyed blocks `append_flow`, `sink` and `flow` (schema.rs declares
/// them `BlockType::keyed(…, "name", …)`); messages spell an item as `bronze.sink "orders_out"`.
pub const LABEL_ATTR: &str = "name";

/// Checks one `sdp_meta_flow` configuration: everything that depends on the flow alone.
pub fn check_flow(flow: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    let view = FlowView::new(flow);
    let mut r = Report {
        flow: Some(&view.label),
        base: None,
        out: &mut out,
    };
    flow_rules(&view, &mut r);
    out
}

/// Checks one `sdp_meta_onboarding` configuration: the file set as a whole, the rules across
/// flows, and the rules that depend on the runner or on the sdp-meta build. Findings about a
/// flow carry the path `flows[i]` and name the flow and its field in the message.
pub fn check_onboarding(onboarding: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    attribute_rules(onboarding, &mut out);
    let build = Build::of(onboarding, &mut out);
    let runner = Runner::of(onboarding);
    let uc_enabled = match get(onboarding, "uc_enabled") {
        Tri::Absent => Tri::Known(true),
        Tri::Known(v) => match v {
            Value::Bool(b) => Tri::Known(*b),
            Value::String(s) => Tri::Known(s.trim().eq_ignore_ascii_case("true")),
            _ => Tri::Unknown,
        },
        Tri::Unknown => Tri::Unknown,
    };
    let flows: &[Value] = match onboarding.get("flows") {
        Some(Value::List(l)) => l,
        None | Some(Value::Null) => &[],
        Some(_) => return out,
    };
    if flows.is_empty() {
        let mut r = Report {
            flow: None,
            base: None,
            out: &mut out,
        };
        r.error(
            &rules::FLOWS,
            &At::root().key("flows"),
            "flows is empty",
            "the onboarding file would hold no flow: the onboarding job fails on it and the pipelines have nothing to run",
            "list at least one sdp_meta_flow in flows",
        );
        return out;
    }
    let ctx = OnboardingCtx {
        build,
        runner,
        uc_enabled,
    };
    cross_flow_rules(flows, &ctx, &mut out);
    out
}

#[cfg(test)]
mod tests;
