//! The engine's invariants on configurations and edit sequences nobody picked by hand.
//!
//! Each case is a sequence of steps over the test provider (`support`): a new configuration
//! (resources that refer to each other, `count`, lifecycle settings — `ignore_changes` of
//! attributes, blocks and `all`, `create_before_destroy`, `prevent_destroy`,
//! `replace_triggered_by` of a resource or one attribute —, kinds whose updates merge and
//! kinds written whole), changes made to the live objects outside brickform, and then an
//! apply, a targeted destroy, or a `state rm` followed by an apply. Two cases in three run
//! against a service that rewrites what it is sent (a seeded choice among a name's case,
//! an alias, a default filled in, a write-only flag dropped, a list reordered), as the real
//! one does. After every step:
//! - the apply fails nowhere, and a new plan is empty (apply then plan converges);
//! - what apply sent for each configured attribute is the plan's `after`, and, where the
//!   service keeps what it is sent as it is, every known value of `after` is what it holds;
//! - an attribute `ignore_changes` covers is never changed by an update;
//! - nothing was deleted that the plan did not list;
//! - nothing `prevent_destroy` guards is deleted or replaced: such a plan is refused and
//!   leaves the service and the state as they were (as is a create-first replacement that
//!   keeps a name only one object may hold);
//! - an instance whose `replace_triggered_by` names something created, replaced or updated
//!   (in the attribute it names) is replaced, and a replacement said to be triggered has
//!   such a cause;
//! - a targeted destroy removed its target and what depends on it, and nothing else;
//! - state and the service agree: every object is in state once, and only those.
//!
//! CI runs 512 cases from a fixed seed (about 340 of them with the rewriting service); a
//! failure prints the case (proptest shrinks it to a minimal one) so it can be turned into a
//! regression test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use brickform_core::addrs::InstanceAddr;
use brickform_core::engine::apply::ApplyOptions;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::{Action, Plan, PlanMode};
use brickform_core::value::Value;
use brickform_state::{Backend, LocalBackend, recover};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use support::{Cut, CutHow, Harness};
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
    /// An earlier resource (with count or not) this one names in `depends_on`: a block of
    /// many instances after a block of many waits for all of it.
    after: Option<usize>,
    create_before_destroy: bool,
    items: u8,
    /// The position whose name the object carries, when not its own: a block `state mv`
    /// moved keeps the name it had.
    named_as: Option<usize>,
    /// `lifecycle { ignore_changes = … }`.
    ignore: Option<Ignore>,
    /// Which of two `tier` values (the service may answer one by an alias).
    tier: Option<u8>,
    /// How many `tags`, written in descending order (the service may sort them).
    tags: u8,
    /// `force = true` (a flag the service may never return).
    force: bool,
    /// `lifecycle { prevent_destroy = true }`.
    prevent_destroy: bool,
    /// `lifecycle { replace_triggered_by = [...] }`: an earlier resource, whole or (when it
    /// has no count) by its `comment`.
    triggers: Option<Trigger>,
}

/// What a generated `replace_triggered_by` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Trigger {
    of: usize,
    comment: bool,
}

/// What a generated `ignore_changes` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ignore {
    Comment,
    Size,
    /// A nested block type.
    Item,
    All,
}

impl Ignore {
    /// As written for a resource of the kind written whole (`whole`) or not: only that kind
    /// has `size`, and naming what a kind does not have is refused.
    fn hcl(self, whole: bool) -> &'static str {
        match self {
            Ignore::Comment => "[comment]",
            Ignore::Size if whole => "[size, tier]",
            Ignore::Size => "[tier]",
            Ignore::Item => "[item]",
            Ignore::All => "all",
        }
    }

    /// The attributes it covers (all of them for `all`).
    fn covers(self, name: &str) -> bool {
        match self {
            Ignore::Comment => name == "comment",
            Ignore::Size => name == "size" || name == "tier",
            Ignore::Item => name == "item",
            Ignore::All => true,
        }
    }
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
        let slot = r.named_as.unwrap_or(i);
        match r.count {
            Some(n) => {
                out.push_str(&format!("  count = {n}\n"));
                out.push_str(&format!(
                    "  name  = \"r{slot}_{}{}_${{count.index}}\"\n",
                    &kind(r)[5..],
                    r.variant
                ));
            }
            None => out.push_str(&format!(
                "  name  = \"r{slot}_{}{}\"\n",
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
        if let Some(a) = r.after
            && let Some(Some(ar)) = config.get(a)
        {
            out.push_str(&format!("  depends_on = [{}.r{a}]\n", kind(ar)));
        }
        for k in 0..r.items {
            out.push_str(&format!("  item {{ key = \"k{k}\" }}\n"));
        }
        if let Some(t) = r.tier {
            out.push_str(&format!(
                "  tier = \"{}\"\n",
                ["basic", "premium"][usize::from(t % 2)]
            ));
        }
        if r.tags > 0 {
            let tags: Vec<String> = (0..r.tags).rev().map(|t| format!("\"t{t}\"")).collect();
            out.push_str(&format!("  tags = [{}]\n", tags.join(", ")));
        }
        if r.force {
            out.push_str("  force = true\n");
        }
        let mut lifecycle = Vec::new();
        if r.create_before_destroy {
            lifecycle.push("create_before_destroy = true".to_string());
        }
        if let Some(i) = r.ignore {
            lifecycle.push(format!("ignore_changes = {}", i.hcl(r.whole)));
        }
        if r.prevent_destroy {
            lifecycle.push("prevent_destroy = true".to_string());
        }
        if let Some(t) = r.triggers
            && let Some(Some(tr)) = config.get(t.of)
        {
            let attribute = if t.comment { ".comment" } else { "" };
            lifecycle.push(format!(
                "replace_triggered_by = [{}.r{}{attribute}]",
                kind(tr),
                t.of
            ));
        }
        if !lifecycle.is_empty() {
            out.push_str(&format!(
                "  lifecycle {{\n    {}\n  }}\n",
                lifecycle.join("\n    ")
            ));
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
    /// Apply only the n-th resource of the configuration (and what it depends on).
    TargetedApply(usize),
    /// `state rm` the n-th instance in state, then apply.
    StateRm(usize),
    /// Apply, then `state mv` the n-th resource with instances to the first free position
    /// and move its block there: the next plan is empty.
    StateMv(usize),
    /// An apply interrupted at its n-th write, then an apply that finishes the work.
    Interrupted(usize, Interrupt),
}

#[derive(Debug, Clone)]
enum Interrupt {
    /// The process dies waiting for the write's answer; with `effect` the service made the
    /// change (the answer was lost), without it the request never arrived.
    Kill { effect: bool },
    /// Ctrl-C as the write starts.
    Cancel,
}

#[derive(Debug, Clone)]
struct Step {
    config: Vec<Option<Res>>,
    /// (which live object, by position among the service's objects; what to change)
    outside: Vec<(usize, Outside)>,
    op: Op,
}

fn ignore() -> impl Strategy<Value = Option<Ignore>> {
    prop_oneof![
        6 => Just(None),
        1 => Just(Some(Ignore::Comment)),
        1 => Just(Some(Ignore::Size)),
        1 => Just(Some(Ignore::Item)),
        1 => Just(Some(Ignore::All)),
    ]
}

fn res(index: usize) -> impl Strategy<Value = Res> {
    (
        (
            any::<bool>(),
            prop_oneof![3 => Just(None), 1 => (0u8..4).prop_map(Some)],
            0u8..2,
            prop::option::of(0u8..3),
            prop::option::of(1u8..4),
            prop::option::of(0..index.max(1)),
            prop::bool::weighted(0.25),
            0u8..3,
        ),
        (
            ignore(),
            prop::option::of(0u8..2),
            0u8..3,
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.1),
            prop::option::weighted(0.2, (0..index.max(1), any::<bool>())),
            prop::option::weighted(0.3, 0..index.max(1)),
        ),
    )
        .prop_map(
            move |(
                (whole, count, variant, comment, size, parent, cbd, items),
                (ignore, tier, tags, force, prevent_destroy, triggers, after),
            )| Res {
                whole,
                count,
                variant,
                comment,
                size,
                parent: parent.filter(|p| *p < index),
                after: after.filter(|p| *p < index),
                create_before_destroy: cbd,
                items,
                named_as: None,
                ignore,
                tier,
                tags,
                force,
                prevent_destroy,
                triggers: triggers
                    .filter(|(of, _)| *of < index)
                    .map(|(of, comment)| Trigger { of, comment }),
            },
        )
}

/// The service's rewriting for a case: none, or a seeded choice of its kinds.
fn normalise() -> impl Strategy<Value = support::Normalise> {
    prop_oneof![
        1 => Just(support::Normalise::default()),
        2 => (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
            |(comment_case, alias, fill_label, drop_force, sort_tags)| support::Normalise {
                comment_case,
                alias,
                fill_label,
                drop_force,
                sort_tags,
            }
        ),
    ]
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
                // What depends_on names must exist.
                let after = v[i].as_ref().and_then(|r| r.after);
                if let Some(a) = after
                    && !matches!(v.get(a), Some(Some(_)))
                    && let Some(r) = v[i].as_mut()
                {
                    r.after = None;
                }
                // A trigger must exist; naming an attribute needs one instance.
                let trigger = v[i].as_ref().and_then(|r| r.triggers);
                if let Some(t) = trigger {
                    let fits = match v.get(t.of) {
                        Some(Some(tr)) => !t.comment || tr.count.is_none(),
                        _ => false,
                    };
                    if let Some(r) = v[i].as_mut().filter(|_| !fits) {
                        r.triggers = None;
                    }
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
            1 => (0usize..4).prop_map(Op::TargetedApply),
            1 => (0usize..8).prop_map(Op::StateRm),
            1 => (0usize..4).prop_map(Op::StateMv),
            2 => (
                1usize..5,
                prop_oneof![
                    any::<bool>().prop_map(|effect| Interrupt::Kill { effect }),
                    Just(Interrupt::Cancel),
                ]
            )
                .prop_map(|(n, how)| Op::Interrupted(n, how)),
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
    plan_apply_until(h, src, req, apply, CancellationToken::new()).await
}

/// `plan_apply` with the apply's Ctrl-C token. As every command does, it first finishes
/// what an interrupted apply left in the write-ahead log.
async fn plan_apply_until(
    h: &Harness,
    src: &str,
    req: PlanRequest,
    apply: bool,
    cancel: CancellationToken,
) -> Result<Plan, String> {
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
    if !rec.unresolved.is_empty() {
        engine
            .recover_interrupted(&mut doc, &rec.journal, &rec.unresolved)
            .await
            .map_err(|d| d.render_plain(&config.sources))?;
        rec.journal
            .checkpoint(&mut doc)
            .await
            .map_err(|e| e.to_string())?;
    }
    let (planned, d) = engine.plan(&doc, &req).await;
    // Blocks planned ahead of their turn while the refresh reads (kept only when what they
    // read still holds) make the plan each block planned in its turn makes.
    let in_turn = PlanRequest {
        in_turn_only: true,
        ..req.clone()
    };
    let (planned_in_turn, d_in_turn) = engine.plan(&doc, &in_turn).await;
    assert_eq!(
        d.render_plain(&config.sources),
        d_in_turn.render_plain(&config.sources),
        "diagnostics of a plan ahead of turn and in turn"
    );
    assert_eq!(
        planned
            .as_ref()
            .map(|p| (&p.plan, format!("{:?}", p.specs))),
        planned_in_turn
            .as_ref()
            .map(|p| (&p.plan, format!("{:?}", p.specs))),
        "a plan ahead of turn and in turn"
    );
    let Some(mut planned) = planned else {
        return Err(d.render_plain(&config.sources));
    };
    if apply {
        let opts = ApplyOptions {
            parallelism: 4,
            cancel,
            on_event: Arc::new(|_| {}),
        };
        let shared = Arc::new(planned);
        let (mut doc, report) = engine.apply(shared.clone(), doc, rec.journal, opts).await;
        planned = Arc::unwrap_or_clone(shared);
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
        Some(l) => brickform_core::value::values_equal(after, l) || (empty(after) && empty(l)),
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
    deleted_only_listed(plan, before, &after_objects)?;
    // The plan's `after` is what the service holds, where it keeps what it is sent.
    let state = h.state().await;
    let rewrites = *h.svc.normalise.lock().unwrap() != support::Normalise::default();
    for c in plan.changes.iter().filter(|_| !rewrites) {
        let (Some(after), Some(rs)) = (&c.after, state.get(&c.addr)) else {
            continue;
        };
        if c.action == Action::Delete || c.action == Action::Forget {
            continue;
        }
        let live = after_objects.get(&rs.id).ok_or_else(|| {
            format!(
                "{} is in state as {}, which the service lacks",
                c.address(),
                rs.id
            )
        })?;
        for (k, v) in &after.0 {
            if k == "secret" || v.contains_unknown() {
                continue;
            }
            if !holds(v, live.get(k)) {
                return Err(format!(
                    "{}: the plan said {k} = {v}, the service holds {:?}",
                    c.address(),
                    live.get(k)
                ));
            }
        }
    }
    agree(h, left).await?;
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
        .map(|c| format!("{} {:?} {:?}", c.address(), c.action, c.fields))
        .collect();
    if !pending.is_empty() {
        return Err(format!("the plan after apply is not empty: {pending:?}"));
    }
    Ok(())
}

/// What the apply sent: for every configured attribute, the plan's `after` (where the plan
/// knew it); and an update of an object whose `ignore_changes` covers an attribute left
/// that attribute as the object had it.
async fn check_sent(
    h: &Harness,
    plan: &Plan,
    before: &BTreeMap<String, brickform_core::value::Object>,
    written: usize,
    config: &[Option<Res>],
) -> Result<(), String> {
    let state = h.state().await;
    let now = objects(h);
    let writes: Vec<(String, support::Write, brickform_core::value::Object)> =
        h.svc.writes.lock().unwrap()[written..].to_vec();
    let ignore_of = |address: &str| block_of(config, address).and_then(|(_, r)| r.ignore);
    for c in &plan.changes {
        let Some(rs) = state.get(&c.addr) else {
            continue;
        };
        let sent: Vec<&brickform_core::value::Object> = writes
            .iter()
            .filter(|(id, _, _)| *id == rs.id)
            .map(|(_, _, o)| o)
            .collect();
        if let Some(after) = &c.after {
            for config in &sent {
                for (k, v) in config.iter() {
                    let planned = after.0.get(k).unwrap_or(&Value::Null);
                    if k == "secret" || v.is_null() || planned.contains_unknown() {
                        continue;
                    }
                    if !brickform_core::value::values_equal(v, planned) {
                        return Err(format!(
                            "{}: the plan said {k} = {planned}, apply sent {v}",
                            c.address()
                        ));
                    }
                }
            }
        }
        if c.action != Action::Update {
            continue;
        }
        let Some(ignore) = ignore_of(&c.address()) else {
            continue;
        };
        let (Some(was), Some(is)) = (before.get(&rs.id), now.get(&rs.id)) else {
            continue;
        };
        for k in ["comment", "size", "tier", "item"] {
            if ignore.covers(k) && was.get(k) != is.get(k) {
                return Err(format!(
                    "{}: ignore_changes covers {k}, and the update changed it from {:?} to {:?}",
                    c.address(),
                    was.get(k),
                    is.get(k)
                ));
            }
        }
    }
    Ok(())
}

/// The block of the configuration an instance address belongs to, and its position.
fn block_of<'a>(config: &'a [Option<Res>], address: &str) -> Option<(usize, &'a Res)> {
    let base = address.split('[').next().unwrap_or(address);
    let (kind_name, i) = base.rsplit_once(".r")?;
    let i: usize = i.parse().ok()?;
    let r = config.get(i)?.as_ref()?;
    (kind(r) == kind_name).then_some((i, r))
}

/// `prevent_destroy`: a plan that was made deletes or replaces nothing guarded.
fn check_guarded(plan: &Plan, config: &[Option<Res>]) -> Result<(), String> {
    for c in &plan.changes {
        let goes = c.action == Action::Delete || c.action.is_replace();
        if goes && block_of(config, &c.address()).is_some_and(|(_, r)| r.prevent_destroy) {
            return Err(format!(
                "{} has prevent_destroy, and the plan {:?} it",
                c.address(),
                c.action
            ));
        }
    }
    Ok(())
}

/// Whether a plan was refused, as it must be, because it would destroy what
/// `prevent_destroy` guards, or replace with its new object first what keeps its name (the
/// create would fail on the old object's name): the error names an instance whose block
/// asks for it.
fn refused_by_guard(e: &str, config: &[Option<Res>]) -> bool {
    let guarded = e
        .split("Resource ")
        .skip(1)
        .filter_map(|rest| rest.split_once(" has lifecycle.prevent_destroy set"))
        .any(|(address, _)| block_of(config, address).is_some_and(|(_, r)| r.prevent_destroy));
    let created_first = e
        .lines()
        .filter_map(|l| l.split_once(": create_before_destroy needs a new name"))
        .any(|(head, _)| {
            let address = head.rsplit(' ').next().unwrap_or(head);
            block_of(config, address).is_some_and(|(_, r)| r.create_before_destroy)
        });
    guarded || created_first
}

/// `replace_triggered_by`, in a plan of the whole configuration: an instance that exists is
/// replaced when what it names is created, replaced, or updated (in its `comment`, when it
/// names that); and a replacement the plan says the trigger caused has such a cause.
fn check_triggers(plan: &Plan, config: &[Option<Res>]) -> Result<(), String> {
    let fired = |t: Trigger| {
        plan.changes.iter().any(|c| {
            block_of(config, &c.address()).is_some_and(|(i, _)| i == t.of)
                && match c.action {
                    Action::Create | Action::DeleteThenCreate | Action::CreateThenDelete => true,
                    Action::Update => {
                        !t.comment
                            || c.fields.iter().any(|f| {
                                matches!(f.path.first(), Some(brickform_core::value::PathStep::Key(k)) if k == "comment")
                            })
                    }
                    _ => false,
                }
        })
    };
    for c in &plan.changes {
        let Some((_, r)) = block_of(config, &c.address()) else {
            continue;
        };
        let by_trigger = c.reason == Some(brickform_core::plan::ActionReason::ReplaceByTriggers);
        match r.triggers {
            Some(t) if fired(t) => {
                if matches!(c.action, Action::NoOp | Action::Update) {
                    return Err(format!(
                        "{} names r{} in replace_triggered_by, which changes, but is planned {:?}",
                        c.address(),
                        t.of,
                        c.action
                    ));
                }
            }
            _ if by_trigger => {
                return Err(format!(
                    "{} is replaced by its trigger, and nothing it names changes",
                    c.address()
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// State and the service agree, but for what `state rm` left to itself and the
/// configuration did not take back: every object is in state once, and only those.
async fn agree(h: &Harness, left: &BTreeSet<String>) -> Result<(), String> {
    let state = h.state().await;
    // What a create_before_destroy put aside is in state too, until its delete is recorded.
    let entries: Vec<&str> = state
        .resources()
        .iter()
        .chain(state.deposed())
        .map(|r| r.id.as_str())
        .collect();
    let in_state: BTreeSet<String> = entries.iter().map(|id| id.to_string()).collect();
    let live: BTreeSet<String> = objects(h)
        .keys()
        .filter(|id| in_state.contains(*id) || !left.contains(*id))
        .cloned()
        .collect();
    if in_state.len() != entries.len() {
        return Err("two state entries share one object".into());
    }
    if in_state != live {
        return Err(format!("state holds {in_state:?}, the service {live:?}"));
    }
    Ok(())
}

/// The ids a plan deletes (on its own or as half of a replacement).
fn deleted_by(plan: &Plan) -> BTreeSet<&str> {
    plan.changes
        .iter()
        .filter(|c| c.action == Action::Delete || c.action.is_replace())
        .filter_map(|c| c.id.as_deref())
        .collect()
}

/// Fails when an object of `before` is gone but `plan` did not list it.
fn deleted_only_listed(
    plan: &Plan,
    before: &BTreeMap<String, brickform_core::value::Object>,
    now: &BTreeMap<String, brickform_core::value::Object>,
) -> Result<(), String> {
    let listed = deleted_by(plan);
    for id in before.keys() {
        if !now.contains_key(id) && !listed.contains(id.as_str()) {
            return Err(format!("{id} was deleted, but the plan did not list it"));
        }
    }
    Ok(())
}

/// Applies `src` with a refresh and checks the result (`check_applied`). `Ok(false)` when
/// the plan was refused because a name `state rm` let go of is taken: a refusal, as it
/// must be.
async fn apply_checked(
    h: &Harness,
    src: &str,
    left: &BTreeSet<String>,
    config: &[Option<Res>],
) -> Result<bool, String> {
    let before = objects(h);
    let state_before = h.state_if_any().await;
    let written = h.svc.writes.lock().unwrap().len();
    match plan_apply(h, src, refreshed(), true).await {
        Ok(plan) => {
            check_guarded(&plan, config)?;
            check_triggers(&plan, config)?;
            check_sent(h, &plan, &before, written, config).await?;
            check_applied(h, src, &plan, &before, left).await?;
            Ok(true)
        }
        Err(e) if taken_by_left(&e, left) => Ok(false),
        Err(e) if refused_by_guard(&e, config) => {
            unchanged(h, &before, state_before.as_ref())
                .await
                .map_err(|d| format!("a plan refused by prevent_destroy changed {d}"))?;
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Fails when the service or the state is not as it was.
async fn unchanged(
    h: &Harness,
    before: &BTreeMap<String, brickform_core::value::Object>,
    state_before: Option<&brickform_state::StateDocument>,
) -> Result<(), String> {
    if objects(h) != *before {
        return Err("the service".into());
    }
    let addresses = |s: Option<&brickform_state::StateDocument>| -> Vec<(String, String)> {
        s.map(|s| {
            s.resources()
                .iter()
                .map(|r| (r.address(), r.id.clone()))
                .collect()
        })
        .unwrap_or_default()
    };
    if addresses(h.state_if_any().await.as_ref()) != addresses(state_before) {
        return Err("the state".into());
    }
    Ok(())
}

fn refreshed() -> PlanRequest {
    PlanRequest {
        refresh: true,
        ..Default::default()
    }
}

/// The positions of the configuration whose resource has instances in state.
fn with_instances(state: &brickform_state::StateDocument, config: &[Option<Res>]) -> Vec<usize> {
    (0..config.len())
        .filter(|i| {
            state
                .resources()
                .iter()
                .any(|r| r.name() == format!("r{i}"))
        })
        .collect()
}

/// Whether a plan failed, as it must, because a configured name is held by an object
/// brickform cannot tell is this instance's: one `state rm` took out of state (and nothing
/// recorded it), or one this state manages under another address the configuration no
/// longer declares (a `state mv` the configuration does not follow); it is told to move it.
fn taken_by_left(e: &str, left: &BTreeSet<String>) -> bool {
    e.contains("the name is taken by")
        && (left
            .iter()
            .any(|id| e.contains(&format!(" {id}\n")) || e.contains(&format!(" {id} ")))
            || (e.contains("this state manages it as") && e.contains("brickform state mv")))
}

async fn run_case((normalise, steps): (support::Normalise, Vec<Step>)) -> Result<(), String> {
    let h = Harness::new();
    *h.svc.normalise.lock().unwrap() = normalise;
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
                            // Made through the service, which rewrites it as it does any write.
                            normalise.apply(o);
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
        match &step.op {
            Op::Apply => {
                apply_checked(&h, &src, &left, &step.config)
                    .await
                    .map_err(at)?;
            }
            Op::TargetedApply(k) => {
                let declared: Vec<(usize, &Res)> = step
                    .config
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| r.as_ref().map(|r| (i, r)))
                    .collect();
                let Some(&(target, tr)) = declared.get(k % declared.len().max(1)) else {
                    continue;
                };
                // What the apply may touch: the target and, transitively, what it depends on
                // (its parent, what its depends_on and its replace_triggered_by name).
                let mut reach: BTreeSet<usize> = BTreeSet::new();
                let mut next = vec![target];
                while let Some(i) = next.pop() {
                    if reach.insert(i)
                        && let Some(r) = &step.config[i]
                    {
                        next.extend(r.parent);
                        next.extend(r.after);
                        next.extend(r.triggers.map(|t| t.of));
                    }
                }
                let reached = |address: &str| {
                    let base = address.split('[').next().unwrap_or(address);
                    reach.iter().any(|i| base.ends_with(&format!(".r{i}")))
                };
                let state_before = h.state_if_any().await;
                let before = objects(&h);
                let req = PlanRequest {
                    refresh: true,
                    targets: vec![format!("{}.r{target}", kind(tr))],
                    ..Default::default()
                };
                let plan = match plan_apply(&h, &src, req, true).await {
                    Ok(plan) => plan,
                    Err(e) if taken_by_left(&e, &left) => continue,
                    Err(e) if refused_by_guard(&e, &step.config) => {
                        unchanged(&h, &before, state_before.as_ref())
                            .await
                            .map_err(|d| at(format!("a refused apply --target changed {d}")))?;
                        continue;
                    }
                    Err(e) => return Err(at(e)),
                };
                check_guarded(&plan, &step.config).map_err(at)?;
                if let Some(c) = plan
                    .changes
                    .iter()
                    .find(|c| c.action != Action::NoOp && !reached(&c.address()))
                {
                    return Err(at(format!(
                        "apply --target r{target} planned {:?} for {}, which it does not depend on",
                        c.action,
                        c.address()
                    )));
                }
                let now = objects(&h);
                deleted_only_listed(&plan, &before, &now).map_err(at)?;
                // Everything else is as it was, in state and in the service.
                let state_after = h.state().await;
                for r in state_before.iter().flat_map(|s| s.resources()) {
                    if reached(&r.address()) {
                        continue;
                    }
                    if state_after.get(&r.addr).map(|a| &a.id) != Some(&r.id) {
                        return Err(at(format!(
                            "apply --target r{target} changed the state of {}",
                            r.address()
                        )));
                    }
                    if before.get(&r.id) != now.get(&r.id) {
                        return Err(at(format!(
                            "apply --target r{target} changed {} ({})",
                            r.address(),
                            r.id
                        )));
                    }
                }
            }
            Op::TargetedDestroy(k) => {
                // First bring everything in line, so the destroy is the only change.
                if !apply_checked(&h, &src, &left, &step.config)
                    .await
                    .map_err(at)?
                {
                    continue;
                }
                let state = h.state().await;
                let with_instances = with_instances(&state, &step.config);
                let Some(&target) = with_instances.get(k % with_instances.len().max(1)) else {
                    continue;
                };
                let Some(tr) = &step.config[target] else {
                    continue;
                };
                let address = format!("{}.r{target}", kind(tr));
                // What must go: the target and, transitively, what depends on it (names it as
                // parent, in depends_on or in replace_triggered_by).
                let mut gone: BTreeSet<usize> = BTreeSet::from([target]);
                loop {
                    let more: Vec<usize> = step
                        .config
                        .iter()
                        .enumerate()
                        .filter_map(|(i, r)| {
                            let r = r.as_ref()?;
                            let needs = [r.parent, r.after, r.triggers.map(|t| t.of)];
                            let needs_gone = needs.iter().flatten().any(|p| gone.contains(p));
                            (needs_gone && !gone.contains(&i)).then_some(i)
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
                    .filter(|r| gone.iter().any(|i| r.name() == format!("r{i}")))
                    .map(|r| r.id.clone())
                    .collect();
                let req = PlanRequest {
                    mode: PlanMode::Destroy,
                    refresh: true,
                    targets: vec![address.clone()],
                    ..Default::default()
                };
                let state_before = h.state_if_any().await;
                match plan_apply(&h, &src, req, true).await {
                    Ok(plan) => check_guarded(&plan, &step.config).map_err(at)?,
                    Err(e) if refused_by_guard(&e, &step.config) => {
                        unchanged(&h, &before, state_before.as_ref())
                            .await
                            .map_err(|d| at(format!("a refused destroy changed {d}")))?;
                        continue;
                    }
                    Err(e) => return Err(at(e)),
                }
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
                agree(&h, &left)
                    .await
                    .map_err(|e| at(format!("after the destroy, {e}")))?;
            }
            Op::StateRm(k) => {
                let backend = LocalBackend::new(h.dir.path());
                if let Ok(Some(mut doc)) = backend.load("default").await {
                    let addresses: Vec<_> =
                        doc.resources().iter().map(|r| r.addr.clone()).collect();
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
                apply_checked(&h, &src, &left, &step.config)
                    .await
                    .map_err(at)?;
            }
            Op::StateMv(k) => {
                if !apply_checked(&h, &src, &left, &step.config)
                    .await
                    .map_err(at)?
                {
                    continue;
                }
                let state = h.state().await;
                let with_instances = with_instances(&state, &step.config);
                let Some(&from) = with_instances.get(k % with_instances.len().max(1)) else {
                    continue;
                };
                // The block moves to the first free position, keeping its name; what named
                // it (as parent, in depends_on or in replace_triggered_by) follows.
                let mut moved = step.config.clone();
                let Some(mut r) = moved[from].take() else {
                    continue;
                };
                let to = (0..)
                    .find(|j| !matches!(moved.get(*j), Some(Some(_))) && *j != from)
                    .unwrap();
                if to >= moved.len() {
                    moved.resize(to + 1, None);
                }
                r.named_as = Some(r.named_as.unwrap_or(from));
                let (old, new) = (
                    format!("{}.r{from}", kind(&r)),
                    format!("{}.r{to}", kind(&r)),
                );
                moved[to] = Some(r);
                for other in moved.iter_mut().flatten() {
                    if other.parent == Some(from) {
                        other.parent = Some(to);
                    }
                    if other.after == Some(from) {
                        other.after = Some(to);
                    }
                    if let Some(t) = other.triggers.as_mut().filter(|t| t.of == from) {
                        t.of = to;
                    }
                }
                let backend = LocalBackend::new(h.dir.path());
                let mut doc = backend
                    .load("default")
                    .await
                    .map_err(|e| at(e.to_string()))?
                    .unwrap();
                let addresses: Vec<String> = doc
                    .resources()
                    .iter()
                    .map(|r| r.address())
                    .filter(|a| a.split('[').next() == Some(old.as_str()))
                    .collect();
                for a in addresses {
                    let to = a.replacen(&old, &new, 1);
                    let parse = |t: &str| InstanceAddr::parse(t).map_err(|e| at(e.to_string()));
                    doc.mv(&parse(&a)?, &parse(&to)?)
                        .map_err(|e| at(e.to_string()))?;
                }
                backend
                    .save("default", &mut doc)
                    .await
                    .map_err(|e| at(e.to_string()))?;
                let src = render(&moved);
                let plan = plan_apply(&h, &src, refreshed(), false).await.map_err(at)?;
                let pending: Vec<String> = plan
                    .changes
                    .iter()
                    .filter(|c| c.action != Action::NoOp)
                    .map(|c| format!("{} {:?}", c.address(), c.action))
                    .collect();
                if !pending.is_empty() {
                    return Err(at(format!(
                        "after state mv {old} {new} and the same move in the configuration:\n{src}\nthe plan is not empty: {pending:?}"
                    )));
                }
                apply_checked(&h, &src, &left, &moved).await.map_err(at)?;
            }
            Op::Interrupted(n, how) => {
                let before = objects(&h);
                // The plan the interrupted apply carries out (planning again gives the same).
                let plan = match plan_apply(&h, &src, refreshed(), false).await {
                    Ok(p) => p,
                    Err(e) if taken_by_left(&e, &left) || refused_by_guard(&e, &step.config) => {
                        continue;
                    }
                    Err(e) => return Err(at(e)),
                };
                let cancel = CancellationToken::new();
                let how = match how {
                    Interrupt::Kill { effect } => CutHow::Kill { effect: *effect },
                    Interrupt::Cancel => CutHow::Cancel(cancel.clone()),
                };
                *h.svc.cut.lock().unwrap() = Some(Cut { after: *n, how });
                // A kill drops the apply where it waits; nothing of it runs after (the
                // runtime has one thread), as nothing of a killed process does.
                let applied = tokio::select! {
                    r = plan_apply_until(&h, &src, refreshed(), true, cancel.clone()) => Some(r),
                    () = h.svc.halted.notified() => None,
                };
                *h.svc.cut.lock().unwrap() = None;
                deleted_only_listed(&plan, &before, &objects(&h))
                    .map_err(|e| at(format!("interrupted: {e}")))?;
                match applied {
                    Some(Err(e)) => return Err(at(e)),
                    // Ctrl-C lets the writes under way finish and saves: state and the
                    // service agree without any recovery.
                    Some(Ok(_)) => {
                        // What was deleted outside before the apply may still be in state:
                        // the apply stopped before it came to it. Anything else agrees.
                        let state = h.state().await;
                        let now = objects(&h);
                        let mut recorded: BTreeSet<&str> = BTreeSet::new();
                        for r in state.resources().iter().chain(state.deposed()) {
                            if !recorded.insert(r.id.as_str()) {
                                return Err(at(format!(
                                    "after Ctrl-C, {} is in state twice",
                                    r.id
                                )));
                            }
                            if !now.contains_key(&r.id) && before.contains_key(&r.id) {
                                return Err(at(format!(
                                    "after Ctrl-C, state holds {} ({}), which the apply deleted",
                                    r.id,
                                    r.address()
                                )));
                            }
                        }
                        for id in now.keys() {
                            if !recorded.contains(id.as_str()) && !left.contains(id) {
                                return Err(at(format!(
                                    "after Ctrl-C, {id} exists and state does not hold it"
                                )));
                            }
                        }
                    }
                    None => {}
                }
                // The next apply finishes the work.
                apply_checked(&h, &src, &left, &step.config)
                    .await
                    .map_err(|e| at(format!("after the interruption: {e}")))?;
            }
        }
    }
    Ok(())
}

#[test]
fn generated_configurations_and_edits_keep_the_engine_invariants() {
    support::run_generated(
        512,
        &(normalise(), prop::collection::vec(step(), 1..6)),
        run_case,
    );
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
        after: None,
        create_before_destroy: false,
        items: 0,
        named_as: None,
        ignore: None,
        tier: None,
        tags: 0,
        force: false,
        prevent_destroy: false,
        triggers: None,
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
        // A create-first replacement whose configuration newly names what goes (through
        // replace_triggered_by), beside a dependency that changes: its old object's delete
        // is ordered by what that object depended on, so the apply has an order (it used to
        // be a cycle, and apply skipped all of it and reported success).
        vec![
            apply(
                vec![
                    Some(thing(0)),
                    Some(Res {
                        parent: Some(0),
                        ..whole(0)
                    }),
                    Some(thing(0)),
                ],
                vec![],
            ),
            apply(
                vec![
                    Some(Res {
                        tier: Some(0),
                        ..thing(0)
                    }),
                    Some(Res {
                        count: Some(0),
                        ..whole(0)
                    }),
                    Some(Res {
                        parent: Some(0),
                        create_before_destroy: true,
                        triggers: Some(Trigger {
                            of: 1,
                            comment: false,
                        }),
                        ..thing(1)
                    }),
                ],
                vec![],
            ),
        ],
        // A targeted destroy takes what depends on the target through a block with no
        // instances (`count = 0`), as Terraform's graph does: it used to leave r2, which
        // names r1 in replace_triggered_by, behind its deleted r0.
        {
            let config = vec![
                Some(thing(0)),
                Some(Res {
                    count: Some(0),
                    parent: Some(0),
                    ..thing(0)
                }),
                Some(Res {
                    triggers: Some(Trigger {
                        of: 1,
                        comment: false,
                    }),
                    ..thing(0)
                }),
            ];
            vec![
                apply(config.clone(), vec![]),
                Step {
                    config,
                    outside: vec![],
                    op: Op::TargetedDestroy(0),
                },
            ]
        },
        // An instance the plan leaves as it is keeps the dependencies its configuration
        // names now, not those it was made with: r1 stopped naming r0 (a targeted apply
        // left it unchanged), so its removal need not wait for r0's update, which a
        // create-first replacement of r3 (made after r0, its old object deleted before r1)
        // waits for. With r1's old dependency kept, the plan could not be ordered.
        vec![
            apply(
                vec![
                    Some(whole(0)),
                    Some(Res {
                        triggers: Some(Trigger {
                            of: 0,
                            comment: false,
                        }),
                        ..thing(0)
                    }),
                ],
                vec![],
            ),
            Step {
                config: vec![
                    None,
                    Some(Res {
                        ignore: Some(Ignore::All),
                        ..thing(0)
                    }),
                    None,
                    Some(Res {
                        parent: Some(1),
                        ..thing(0)
                    }),
                ],
                outside: vec![],
                op: Op::TargetedApply(1),
            },
            apply(
                vec![
                    Some(Res {
                        force: true,
                        ..whole(0)
                    }),
                    None,
                    None,
                    Some(Res {
                        create_before_destroy: true,
                        triggers: Some(Trigger {
                            of: 0,
                            comment: false,
                        }),
                        ..thing(1)
                    }),
                ],
                vec![],
            ),
        ],
        // What the old object of a create-first replacement depended on, going, goes in
        // the create-first order: after what it depended on changes. r3 (replaced
        // create-first, now under r1) was under r2, which goes and depended on r1, which
        // changes: r1 → r3's create → r3's delete → r2 → (as a plain delete, before r1
        // changes) r1 had no order.
        vec![
            apply(
                vec![
                    None,
                    Some(whole(0)),
                    Some(Res {
                        after: Some(1),
                        ..thing(0)
                    }),
                    Some(Res {
                        parent: Some(2),
                        ..whole(0)
                    }),
                ],
                vec![],
            ),
            apply(
                vec![
                    None,
                    Some(Res {
                        force: true,
                        ..whole(0)
                    }),
                    None,
                    Some(Res {
                        parent: Some(1),
                        create_before_destroy: true,
                        ..whole(1)
                    }),
                ],
                vec![],
            ),
        ],
        // create_before_destroy spreads to what a replacement depends on through other
        // instances: r3 (replaced create-first) is now under r2, a new block that depends on
        // r0, which is replaced; r3's old object was under r0. With r0 replaced delete-first
        // the plan had no order (r0's delete → its create → r2 → r3's create → r3's delete →
        // r0's delete).
        vec![
            apply(
                vec![
                    Some(thing(0)),
                    None,
                    None,
                    Some(Res {
                        parent: Some(0),
                        ..whole(0)
                    }),
                ],
                vec![],
            ),
            apply(
                vec![
                    Some(thing(1)),
                    None,
                    Some(Res {
                        after: Some(0),
                        ..thing(0)
                    }),
                    Some(Res {
                        parent: Some(2),
                        create_before_destroy: true,
                        ..whole(1)
                    }),
                ],
                vec![],
            ),
        ],
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
        // A create_before_destroy replacement killed as its new copy was created (the
        // answer lost): recovery adopts the new copy and the old one stays in state,
        // deposed, so the next apply deletes it instead of leaving it behind.
        vec![
            apply(vec![None, None, None, Some(whole(1))], vec![]),
            Step {
                config: vec![
                    None,
                    None,
                    None,
                    Some(Res {
                        create_before_destroy: true,
                        ..whole(0)
                    }),
                ],
                outside: vec![],
                op: Op::Interrupted(1, Interrupt::Kill { effect: true }),
            },
        ],
        // … and killed before the old copy's delete was sent.
        vec![
            apply(vec![Some(thing(1))], vec![]),
            Step {
                config: vec![Some(Res {
                    create_before_destroy: true,
                    ..thing(0)
                })],
                outside: vec![],
                op: Op::Interrupted(2, Interrupt::Kill { effect: false }),
            },
        ],
        // After state rm, an object is taken back even while what it refers to is being
        // made (its parent's id unknown): its name is known, so it is found, not duplicated.
        vec![
            apply(vec![None, None, Some(thing(0))], vec![]),
            Step {
                config: vec![
                    Some(thing(0)),
                    None,
                    Some(Res {
                        parent: Some(0),
                        ..thing(0)
                    }),
                ],
                outside: vec![],
                op: Op::StateRm(0),
            },
        ],
        // A replacement into a name another object holds is refused at plan, before the
        // old object is deleted for nothing (found by the 5,000-case run).
        vec![
            Step {
                config: vec![None, Some(thing(0)), Some(whole(0)), Some(thing(0))],
                outside: vec![],
                op: Op::TargetedDestroy(3),
            },
            Step {
                config: vec![None, None, None, Some(thing(1))],
                outside: vec![],
                op: Op::StateRm(2),
            },
            Step {
                config: vec![
                    None,
                    None,
                    None,
                    Some(Res {
                        create_before_destroy: true,
                        ..thing(0)
                    }),
                ],
                outside: vec![],
                op: Op::Interrupted(1, Interrupt::Kill { effect: true }),
            },
        ],
        // A state mv followed by the configuration plans nothing.
        vec![Step {
            config: vec![
                Some(thing(0)),
                Some(Res {
                    parent: Some(0),
                    ..whole(0)
                }),
            ],
            outside: vec![],
            op: Op::StateMv(0),
        }],
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (i, steps) in cases.into_iter().enumerate() {
        if let Err(e) = rt.block_on(run_case((support::Normalise::default(), steps))) {
            panic!("case {i}: {e}");
        }
    }
}
