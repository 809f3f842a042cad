//! The engine's invariants on configurations and edit sequences nobody picked by hand.
//!
//! Each case is a sequence of steps over the test provider (`support`): a new configuration
//! (resources that refer to each other, `count`, `create_before_destroy`, kinds whose updates
//! merge and kinds written whole), changes made to the live objects outside brickform, and
//! then an apply, a targeted destroy, or a `state rm` followed by an apply. After every step:
//! - the apply fails nowhere, and a new plan is empty (apply then plan converges);
//! - every known value of the plan's `after` is what the service holds;
//! - nothing was deleted that the plan did not list;
//! - a targeted destroy removed its target and what depends on it, and nothing else;
//! - state and the service agree: every object is in state once, and only those.
//!
//! CI runs a fixed number of cases from a fixed seed; a failure prints the case (proptest
//! shrinks it to a minimal one) so it can be turned into a regression test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use brickform_core::engine::apply::ApplyOptions;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::{Action, Plan, PlanMode};
use brickform_core::value::Value;
use brickform_state::{Backend, LocalBackend, recover};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use support::Harness;
use tokio_util::sync::CancellationToken;

/// One resource block of a generated configuration.
#[derive(Debug, Clone)]
struct Res {
    whole: bool,
    /// `count`, when set.
    count: Option<u8>,
    /// Which of two names (changing it forces a replacement).
    variant: u8,
    comment: Option<u8>,
    size: Option<u8>,
    /// An earlier resource (without count) this one names as its parent.
    parent: Option<usize>,
    create_before_destroy: bool,
    items: u8,
}

fn kind(r: &Res) -> &'static str {
    if r.whole { "test_whole" } else { "test_thing" }
}

/// Object names hold the kind: two kinds of the test service share one namespace, and a
/// resource changing kind under one name is a collision the engine refuses at plan.
fn render(config: &[Option<Res>]) -> String {
    let mut out = String::new();
    for (i, r) in config.iter().enumerate() {
        let Some(r) = r else { continue };
        out.push_str(&format!("resource \"{}\" \"r{i}\" {{\n", kind(r)));
        match r.count {
            Some(n) => {
                out.push_str(&format!("  count = {n}\n"));
                out.push_str(&format!(
                    "  name  = \"r{i}_{}{}_${{count.index}}\"\n",
                    &kind(r)[5..],
                    r.variant
                ));
            }
            None => out.push_str(&format!(
                "  name  = \"r{i}_{}{}\"\n",
                &kind(r)[5..],
                r.variant
            )),
        }
        if let Some(c) = r.comment {
            out.push_str(&format!("  comment = \"c{c}\"\n"));
        }
        if let (Some(s), true) = (r.size, r.whole) {
            out.push_str(&format!("  size = {s}\n"));
        }
        if let Some(p) = r.parent
            && let Some(Some(pr)) = config.get(p)
        {
            out.push_str(&format!("  parent = {}.r{p}.id\n", kind(pr)));
        }
        for k in 0..r.items {
            out.push_str(&format!("  item {{ key = \"k{k}\" }}\n"));
        }
        if r.create_before_destroy {
            out.push_str("  lifecycle { create_before_destroy = true }\n");
        }
        out.push_str("}\n");
    }
    out
}

/// A change made to a live object outside brickform.
#[derive(Debug, Clone)]
enum Outside {
    Comment(u8),
    Size(u8),
    Delete,
}

#[derive(Debug, Clone)]
enum Op {
    Apply,
    /// Destroy the n-th resource of the configuration that has instances.
    TargetedDestroy(usize),
    /// `state rm` the n-th instance in state, then apply.
    StateRm(usize),
}

#[derive(Debug, Clone)]
struct Step {
    config: Vec<Option<Res>>,
    /// (which live object, by position among the service's objects; what to change)
    outside: Vec<(usize, Outside)>,
    op: Op,
}

fn res(index: usize) -> impl Strategy<Value = Res> {
    (
        any::<bool>(),
        prop_oneof![3 => Just(None), 1 => (0u8..3).prop_map(Some)],
        0u8..2,
        prop::option::of(0u8..3),
        prop::option::of(1u8..4),
        prop::option::of(0..index.max(1)),
        prop::bool::weighted(0.25),
        0u8..3,
    )
        .prop_map(
            move |(whole, count, variant, comment, size, parent, cbd, items)| Res {
                whole,
                count,
                variant,
                comment,
                size,
                parent: parent.filter(|p| *p < index),
                create_before_destroy: cbd,
                items,
            },
        )
}

fn config() -> impl Strategy<Value = Vec<Option<Res>>> {
    (
        prop::option::weighted(0.85, res(0)),
        prop::option::weighted(0.85, res(1)),
        prop::option::weighted(0.85, res(2)),
        prop::option::weighted(0.85, res(3)),
    )
        .prop_map(|(a, b, c, d)| {
            let mut v = vec![a, b, c, d];
            // A parent must exist and have no count (its `id` is one value).
            for i in 0..v.len() {
                let ok = |p: usize| matches!(v.get(p), Some(Some(r)) if r.count.is_none());
                let parent = v[i].as_ref().and_then(|r| r.parent);
                if let Some(p) = parent
                    && !ok(p)
                    && let Some(r) = v[i].as_mut()
                {
                    r.parent = None;
                }
            }
            v
        })
}

fn step() -> impl Strategy<Value = Step> {
    (
        config(),
        prop::collection::vec(
            (
                0usize..8,
                prop_oneof![
                    (0u8..3).prop_map(Outside::Comment),
                    (1u8..4).prop_map(Outside::Size),
                    Just(Outside::Delete),
                ],
            ),
            0..3,
        ),
        prop_oneof![
            4 => Just(Op::Apply),
            1 => (0usize..4).prop_map(Op::TargetedDestroy),
            1 => (0usize..8).prop_map(Op::StateRm),
        ],
    )
        .prop_map(|(config, outside, op)| Step {
            config,
            outside,
            op,
        })
}

/// Plans `src` against the harness's state (and applies it when asked); an error is the
/// rendered diagnostics.
async fn plan_apply(h: &Harness, src: &str, req: PlanRequest, apply: bool) -> Result<Plan, String> {
    let (config, d) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    if d.has_errors() {
        return Err(d.render_plain(&config.sources));
    }
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(h.dir.path()));
    let rec = recover(backend.clone(), "default")
        .await
        .map_err(|e| e.to_string())?;
    let mut doc = rec.document;
    if !rec.existed {
        backend
            .save("default", &mut doc)
            .await
            .map_err(|e| e.to_string())?;
    }
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let (planned, d) = engine.plan(&doc, &req).await;
    let Some(planned) = planned else {
        return Err(d.render_plain(&config.sources));
    };
    if apply {
        let opts = ApplyOptions {
            parallelism: 4,
            cancel: CancellationToken::new(),
            on_event: Arc::new(|_| {}),
        };
        let (mut doc, report) = engine.apply(&planned, doc, rec.journal, opts).await;
        backend
            .save("default", &mut doc)
            .await
            .map_err(|e| e.to_string())?;
        backend
            .wal_truncate("default")
            .await
            .map_err(|e| e.to_string())?;
        if !report.failed.is_empty() {
            return Err(format!("apply failed: {:?}", report.failed));
        }
    }
    Ok(planned.plan)
}

fn objects(h: &Harness) -> BTreeMap<String, brickform_core::value::Object> {
    h.svc.objects.lock().unwrap().clone()
}

/// Whether the service's value is what the plan's `after` says: a value it does not hold
/// is null, and an empty list is no list.
fn holds(after: &Value, live: Option<&Value>) -> bool {
    let empty = |v: &Value| matches!(v, Value::Null) || matches!(v, Value::List(l) if l.is_empty());
    match live {
        None => empty(after),
        Some(l) => brickform_core::lang::eval::values_equal(after, l) || (empty(after) && empty(l)),
    }
}

/// The checks after an apply (see the module doc).
async fn check_applied(
    h: &Harness,
    src: &str,
    plan: &Plan,
    before: &BTreeMap<String, brickform_core::value::Object>,
    left: &BTreeSet<String>,
) -> Result<(), String> {
    let after_objects = objects(h);
    // Nothing deleted that the plan did not list.
    let listed: BTreeSet<&str> = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::Delete || c.action.is_replace())
        .filter_map(|c| c.id.as_deref())
        .collect();
    for id in before.keys() {
        if !after_objects.contains_key(id) && !listed.contains(id.as_str()) {
            return Err(format!("{id} was deleted, but the plan did not list it"));
        }
    }
    // The plan's `after` is what the service holds.
    let state = h.state().await;
    for c in &plan.changes {
        let (Some(after), Some(rs)) = (&c.after, state.get(&c.address)) else {
            continue;
        };
        if c.action == Action::Delete || c.action == Action::Forget {
            continue;
        }
        let live = after_objects.get(&rs.id).ok_or_else(|| {
            format!(
                "{} is in state as {}, which the service lacks",
                c.address, rs.id
            )
        })?;
        for (k, v) in &after.0 {
            if k == "secret" || v.contains_unknown() {
                continue;
            }
            if !holds(v, live.get(k)) {
                return Err(format!(
                    "{}: the plan said {k} = {v}, the service holds {:?}",
                    c.address,
                    live.get(k)
                ));
            }
        }
    }
    // State and the service agree, but for what `state rm` left to itself and the
    // configuration did not take back.
    let in_state: BTreeSet<String> = state.resources().iter().map(|r| r.id.clone()).collect();
    let live: BTreeSet<String> = after_objects
        .keys()
        .filter(|id| in_state.contains(*id) || !left.contains(*id))
        .cloned()
        .collect();
    if in_state.len() != state.resources().len() {
        return Err("two state entries share one object".into());
    }
    if in_state != live {
        return Err(format!("state holds {in_state:?}, the service {live:?}"));
    }
    // Apply then plan is empty.
    let again = plan_apply(
        h,
        src,
        PlanRequest {
            refresh: true,
            ..Default::default()
        },
        false,
    )
    .await?;
    let pending: Vec<String> = again
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| format!("{} {:?} {:?}", c.address, c.action, c.fields))
        .collect();
    if !pending.is_empty() {
        return Err(format!("the plan after apply is not empty: {pending:?}"));
    }
    Ok(())
}

/// Whether a plan failed because a configured name is held by an object `state rm` took out
/// of state (and nothing recorded it): brickform refuses to take over what it cannot tell
/// is its own.
fn taken_by_left(e: &str, left: &BTreeSet<String>) -> bool {
    e.contains("the name is taken by")
        && left
            .iter()
            .any(|id| e.contains(&format!(" {id}\n")) || e.contains(&format!(" {id} ")))
}

async fn run_case(steps: Vec<Step>) -> Result<(), String> {
    let h = Harness::new();
    // Objects `state rm` took out of state: no longer brickform's unless taken back.
    let mut left: BTreeSet<String> = BTreeSet::new();
    for (n, step) in steps.into_iter().enumerate() {
        let src = render(&step.config);
        let at = |e: String| format!("step {n} ({:?}):\n{src}\n{e}", step.op);
        // Changes made outside brickform.
        {
            let mut objs = h.svc.objects.lock().unwrap();
            let ids: Vec<String> = objs.keys().cloned().collect();
            for (which, change) in &step.outside {
                let Some(id) = ids.get(*which) else { continue };
                match change {
                    Outside::Delete => {
                        objs.remove(id);
                    }
                    Outside::Comment(c) => {
                        if let Some(o) = objs.get_mut(id) {
                            o.insert("comment".into(), Value::from(format!("outside{c}")));
                        }
                    }
                    Outside::Size(s) => {
                        if let Some(o) = objs.get_mut(id)
                            && o.contains_key("size")
                        {
                            o.insert("size".into(), Value::from(i64::from(*s) + 10));
                        }
                    }
                }
            }
        }
        let before = objects(&h);
        match &step.op {
            Op::Apply => {
                let plan = plan_apply(
                    &h,
                    &src,
                    PlanRequest {
                        refresh: true,
                        ..Default::default()
                    },
                    true,
                )
                .await;
                let plan = match plan {
                    Ok(p) => p,
                    // The name of an object `state rm` let go of is taken: a refusal, as it must be.
                    Err(e) if taken_by_left(&e, &left) => continue,
                    Err(e) => return Err(at(e)),
                };
                check_applied(&h, &src, &plan, &before, &left)
                    .await
                    .map_err(at)?;
            }
            Op::TargetedDestroy(k) => {
                // First bring everything in line, so the destroy is the only change.
                let plan = plan_apply(
                    &h,
                    &src,
                    PlanRequest {
                        refresh: true,
                        ..Default::default()
                    },
                    true,
                )
                .await;
                let plan = match plan {
                    Ok(p) => p,
                    // The name of an object `state rm` let go of is taken: a refusal, as it must be.
                    Err(e) if taken_by_left(&e, &left) => continue,
                    Err(e) => return Err(at(e)),
                };
                check_applied(&h, &src, &plan, &before, &left)
                    .await
                    .map_err(at)?;
                let state = h.state().await;
                let with_instances: Vec<usize> = (0..step.config.len())
                    .filter(|i| {
                        state.resources().iter().any(|r| {
                            let base = r.address.split('[').next().unwrap_or(&r.address);
                            base.ends_with(&format!(".r{i}"))
                        })
                    })
                    .collect();
                let Some(&target) = with_instances.get(k % with_instances.len().max(1)) else {
                    continue;
                };
                let Some(tr) = &step.config[target] else {
                    continue;
                };
                let address = format!("{}.r{target}", kind(tr));
                // What must go: the target and, transitively, what names it as parent.
                let mut gone: BTreeSet<usize> = BTreeSet::from([target]);
                loop {
                    let more: Vec<usize> = step
                        .config
                        .iter()
                        .enumerate()
                        .filter_map(|(i, r)| {
                            let p = r.as_ref()?.parent?;
                            (gone.contains(&p) && !gone.contains(&i)).then_some(i)
                        })
                        .collect();
                    if more.is_empty() {
                        break;
                    }
                    gone.extend(more);
                }
                let before = objects(&h);
                let expected: BTreeSet<String> = state
                    .resources()
                    .iter()
                    .filter(|r| {
                        let base = r.address.split('[').next().unwrap_or(&r.address);
                        gone.iter().any(|i| base.ends_with(&format!(".r{i}")))
                    })
                    .map(|r| r.id.clone())
                    .collect();
                let req = PlanRequest {
                    mode: PlanMode::Destroy,
                    refresh: true,
                    targets: vec![address.clone()],
                    ..Default::default()
                };
                plan_apply(&h, &src, req, true).await.map_err(at)?;
                let now = objects(&h);
                let deleted: BTreeSet<String> = before
                    .keys()
                    .filter(|id| !now.contains_key(*id))
                    .cloned()
                    .collect();
                if deleted != expected {
                    return Err(at(format!(
                        "destroy --target {address} deleted {deleted:?}; its dependents are {expected:?}"
                    )));
                }
                let state = h.state().await;
                let in_state: BTreeSet<String> =
                    state.resources().iter().map(|r| r.id.clone()).collect();
                let live: BTreeSet<String> = now
                    .keys()
                    .filter(|id| in_state.contains(*id) || !left.contains(*id))
                    .cloned()
                    .collect();
                if in_state != live {
                    return Err(at(format!(
                        "after the destroy, state holds {in_state:?}, the service {live:?}"
                    )));
                }
            }
            Op::StateRm(k) => {
                let backend = LocalBackend::new(h.dir.path());
                if let Ok(Some(mut doc)) = backend.load("default").await {
                    let addresses: Vec<String> =
                        doc.resources().iter().map(|r| r.address.clone()).collect();
                    let Some(a) = addresses.get(k % addresses.len().max(1)) else {
                        continue;
                    };
                    if let Some(r) = doc.forget(a) {
                        left.insert(r.id);
                    }
                    backend
                        .save("default", &mut doc)
                        .await
                        .map_err(|e| at(e.to_string()))?;
                }
                let before = objects(&h);
                let plan = plan_apply(
                    &h,
                    &src,
                    PlanRequest {
                        refresh: true,
                        ..Default::default()
                    },
                    true,
                )
                .await;
                let plan = match plan {
                    Ok(p) => p,
                    // The name of an object `state rm` let go of is taken: a refusal, as it must be.
                    Err(e) if taken_by_left(&e, &left) => continue,
                    Err(e) => return Err(at(e)),
                };
                check_applied(&h, &src, &plan, &before, &left)
                    .await
                    .map_err(at)?;
            }
        }
    }
    Ok(())
}

#[test]
fn generated_configurations_and_edits_keep_the_engine_invariants() {
    // A fixed number of cases from a fixed seed: the same cases in every CI run.
    let cases = std::env::var("BRICKFORM_GENERATIVE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256);
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let result = runner.run(&prop::collection::vec(step(), 1..6), |steps| {
        rt.block_on(run_case(steps)).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The minimal cases the generator found, kept so they run whatever the seed gives.
#[test]
fn cases_the_generator_found() {
    let thing = |variant: u8| Res {
        whole: false,
        count: None,
        variant,
        comment: None,
        size: None,
        parent: None,
        create_before_destroy: false,
        items: 0,
    };
    let whole = |variant: u8| Res {
        whole: true,
        ..thing(variant)
    };
    let apply = |config: Vec<Option<Res>>, outside: Vec<(usize, Outside)>| Step {
        config,
        outside,
        op: Op::Apply,
    };
    let cases: Vec<Vec<Step>> = vec![
        // A create's after holds the service's default.
        vec![apply(vec![None, Some(whole(0))], vec![])],
        // An update keeps what the service reported for a field never configured.
        vec![
            apply(vec![Some(thing(0))], vec![]),
            apply(
                vec![Some(Res {
                    items: 1,
                    ..thing(0)
                })],
                vec![(0, Outside::Comment(0))],
            ),
        ],
        // A removed block is removed.
        vec![
            apply(
                vec![Some(Res {
                    items: 1,
                    ..thing(1)
                })],
                vec![],
            ),
            apply(vec![Some(thing(1))], vec![]),
        ],
        // A replaced object does not inherit what the old one was given outside.
        vec![
            apply(vec![Some(thing(0))], vec![]),
            apply(vec![Some(thing(1))], vec![(0, Outside::Comment(0))]),
        ],
        // create_before_destroy spreads to a replaced dependency.
        vec![
            apply(vec![Some(thing(0)), Some(whole(1))], vec![]),
            apply(
                vec![
                    Some(thing(1)),
                    Some(Res {
                        parent: Some(0),
                        create_before_destroy: true,
                        ..whole(0)
                    }),
                ],
                vec![],
            ),
        ],
    ];
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (i, steps) in cases.into_iter().enumerate() {
        if let Err(e) = rt.block_on(run_case(steps)) {
            panic!("case {i}: {e}");
        }
    }
}
