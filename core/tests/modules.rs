//! Modules under generated configurations: root calls of a two-level module tree, each
//! with no repetition, `count` or `for_each`, whose instances are edited from step to step.
//! After every apply:
//! - the plan named exactly the instances the calls expand to (address by address);
//! - state holds exactly those addresses, and the service exactly their objects;
//! - an output computed from every instance's module outputs counts them all;
//! - a new plan is empty.
//!
//! A destroy at the end leaves the service empty.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use brickform_core::plan::{Action, PlanMode};
use proptest::prelude::*;
use std::collections::BTreeSet;
use support::Harness;

/// A module with one object, called for every leaf.
const LEAF: &str = r#"
variable "prefix" { type = string }
resource "test_thing" "t" {
  name = "${var.prefix}-t"
}
output "id" { value = test_thing.t.id }
"#;

/// A module with one object of its own and a leaf per entry of `leaves`.
const MID: &str = r#"
variable "prefix" { type = string }
variable "leaves" {
  type    = list(string)
  default = []
}
resource "test_thing" "m" {
  name    = "${var.prefix}-m"
  comment = "leaves: ${length(var.leaves)}"
}
module "leaf" {
  source   = "../leaf"
  for_each = toset(var.leaves)
  prefix   = "${var.prefix}-${each.key}"
}
output "leaf_ids" { value = [for l in module.leaf : l.id] }
"#;

/// How a root call repeats.
#[derive(Debug, Clone)]
enum Repeat {
    Once,
    Count(usize),
    ForEach(BTreeSet<String>),
}

/// One root call of `modules/mid`.
#[derive(Debug, Clone)]
struct Call {
    repeat: Repeat,
    leaves: BTreeSet<String>,
}

fn keys() -> impl Strategy<Value = BTreeSet<String>> {
    prop::collection::btree_set(prop::sample::select(vec!["a", "b", "c.d", "e f"]), 0..3)
        .prop_map(|s| s.into_iter().map(str::to_string).collect())
}

fn call() -> impl Strategy<Value = Call> {
    let repeat = prop_oneof![
        Just(Repeat::Once),
        (0usize..3).prop_map(Repeat::Count),
        keys().prop_map(Repeat::ForEach),
    ];
    (repeat, keys()).prop_map(|(repeat, leaves)| Call { repeat, leaves })
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

fn render(calls: &[Option<Call>]) -> String {
    let mut out = String::new();
    let mut counts = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let Some(c) = c else { continue };
        let leaves: Vec<String> = c.leaves.iter().map(|l| quoted(l)).collect();
        out.push_str(&format!(
            "module \"c{i}\" {{\n  source = \"./modules/mid\"\n"
        ));
        let (prefix, all) = match &c.repeat {
            Repeat::Once => (format!("c{i}"), format!("[module.c{i}]")),
            Repeat::Count(n) => {
                out.push_str(&format!("  count  = {n}\n"));
                (format!("c{i}-${{count.index}}"), format!("module.c{i}"))
            }
            Repeat::ForEach(keys) => {
                let keys: Vec<String> = keys.iter().map(|k| quoted(k)).collect();
                out.push_str(&format!("  for_each = toset([{}])\n", keys.join(", ")));
                (
                    format!("c{i}-${{each.key}}"),
                    format!("values(module.c{i})"),
                )
            }
        };
        out.push_str(&format!("  prefix = \"{prefix}\"\n"));
        out.push_str(&format!("  leaves = [{}]\n}}\n", leaves.join(", ")));
        counts.push(format!("[for m in {all} : length(m.leaf_ids)]"));
    }
    let total = if counts.is_empty() {
        "0".to_string()
    } else {
        format!("sum(flatten([{}, [0]]))", counts.join(", "))
    };
    out.push_str(&format!("output \"leaves\" {{ value = {total} }}\n"));
    out
}

/// The module instances a call makes, as address prefixes, with the object names' prefixes.
fn instances(i: usize, c: &Call) -> Vec<(String, String)> {
    match &c.repeat {
        Repeat::Once => vec![(format!("module.c{i}"), format!("c{i}"))],
        Repeat::Count(n) => (0..*n)
            .map(|k| (format!("module.c{i}[{k}]"), format!("c{i}-{k}")))
            .collect(),
        Repeat::ForEach(keys) => keys
            .iter()
            .map(|k| (format!("module.c{i}[{}]", quoted(k)), format!("c{i}-{k}")))
            .collect(),
    }
}

/// Every resource address the calls make, and every object name.
fn expected(calls: &[Option<Call>]) -> (BTreeSet<String>, BTreeSet<String>, usize) {
    let (mut addrs, mut names, mut leaves) = (BTreeSet::new(), BTreeSet::new(), 0);
    for (i, c) in calls.iter().enumerate() {
        let Some(c) = c else { continue };
        for (module, prefix) in instances(i, c) {
            addrs.insert(format!("{module}.test_thing.m"));
            names.insert(format!("{prefix}-m"));
            for l in &c.leaves {
                addrs.insert(format!("{module}.module.leaf[{}].test_thing.t", quoted(l)));
                names.insert(format!("{prefix}-{l}-t"));
                leaves += 1;
            }
        }
    }
    (addrs, names, leaves)
}

async fn run_case(steps: Vec<Vec<Option<Call>>>) -> Result<(), String> {
    let h = Harness::new();
    for dir in ["modules/leaf", "modules/mid"] {
        std::fs::create_dir_all(h.dir.path().join(dir)).unwrap();
    }
    std::fs::write(h.dir.path().join("modules/leaf/main.bf.hcl"), LEAF).unwrap();
    std::fs::write(h.dir.path().join("modules/mid/main.bf.hcl"), MID).unwrap();
    for (n, calls) in steps.iter().enumerate() {
        let src = render(calls);
        let at = |what: String| format!("step {n}: {what}\n--- configuration ---\n{src}");
        let (want, names, leaves) = expected(calls);
        let (plan, report) = h.run(&src, PlanMode::Normal, true).await;
        let report = report.unwrap();
        if !report.failed.is_empty() {
            return Err(at(format!("apply failed: {:?}", report.failed)));
        }
        let planned: BTreeSet<String> = plan
            .changes
            .iter()
            .filter(|c| c.action != Action::Delete)
            .map(|c| c.address())
            .collect();
        // The plan knows every instance, the ones it leaves as they are too.
        let (noop, _) = h.run(&src, PlanMode::Normal, false).await;
        let known: BTreeSet<String> = noop.changes.iter().map(|c| c.address()).collect();
        if known != want {
            return Err(at(format!("the plan names {known:?}, expected {want:?}")));
        }
        if !planned.is_subset(&want) {
            return Err(at(format!("applied {planned:?}, expected within {want:?}")));
        }
        if let Some(c) = noop.changes.iter().find(|c| c.action != Action::NoOp) {
            return Err(at(format!(
                "not empty after apply: {} {:?}",
                c.address(),
                c.action
            )));
        }
        let state: BTreeSet<String> = h
            .state()
            .await
            .resources()
            .iter()
            .map(|r| r.address())
            .collect();
        if state != want {
            return Err(at(format!("state holds {state:?}, expected {want:?}")));
        }
        let live: BTreeSet<String> = h
            .svc
            .objects
            .lock()
            .unwrap()
            .values()
            .filter_map(|o| o.get("name").and_then(|v| v.as_str()).map(str::to_string))
            .collect();
        if live != names {
            return Err(at(format!(
                "the service holds {live:?}, expected {names:?}"
            )));
        }
        let counted = report
            .outputs
            .iter()
            .find(|(name, _, _)| name == "leaves")
            .and_then(|(_, v, _)| v.as_f64());
        if counted != Some(leaves as f64) {
            return Err(at(format!(
                "output leaves = {counted:?}, expected {leaves}"
            )));
        }
    }
    let last = render(steps.last().map(Vec::as_slice).unwrap_or(&[]));
    let (_, report) = h.run(&last, PlanMode::Destroy, true).await;
    if let Some(r) = report
        && !r.failed.is_empty()
    {
        return Err(format!("destroy failed: {:?}", r.failed));
    }
    let left = h.svc.objects.lock().unwrap().len();
    if left != 0 {
        return Err(format!("{left} objects left after destroy"));
    }
    Ok(())
}

#[test]
fn generated_module_trees_expand_apply_and_destroy_exactly_their_instances() {
    let steps = prop::collection::vec(prop::collection::vec(prop::option::of(call()), 1..4), 1..4);
    support::run_generated(128, &steps, run_case);
}
