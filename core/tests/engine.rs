//! The engine driven end to end through a test-only provider: plan, apply, no-op plan,
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic
//! update, replace, drift, failure isolation and destroy, with real state and WAL files.

use brickform_core::engine::apply::ApplyOptions;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::{Action, ActionReason, PlanMode};
use brickform_core::provider::*;
use brickform_core::value::{Object, Value};
use brickform_state::{Backend, LocalBackend, StateDocument, recover};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

mod support;
use support::*;

const CONFIG: &str = r#"
variable "secret" {
  default   = "hunter2"
  sensitive = true
}
locals { names = ["a", "b"] }
data "test_info" "me" {}
resource "test_thing" "parent" {
  name    = "Parent"
  comment = "owned by ${data.test_info.me.user}"
  secret  = var.secret
}
resource "test_thing" "child" {
  for_each = toset(local.names)
  name     = "child_${each.key}"
  parent   = test_thing.parent.id
  item { key = "x" }
}
output "parent_id" { value = test_thing.parent.id }
"#;

/// Changes `attr` of the object `id` on the service, as someone outside brickform would.
fn edit_by_hand(h: &Harness, id: &str, attr: &str, value: &str) {
    h.svc
        .objects
        .lock()
        .unwrap()
        .get_mut(id)
        .unwrap()
        .insert(attr.into(), Value::from(value));
}

#[tokio::test]
async fn lifecycle_plan_apply_noop_update_replace_drift_destroy() {
    let h = Harness::new();
    let (plan, report) = h.run(CONFIG, PlanMode::Normal, true).await;
    assert_eq!(plan.summary().add, 3, "{:#?}", plan.changes);
    let report = report.unwrap();
    assert_eq!(report.added, 3, "{report:?}");
    assert!(report.failed.is_empty());
    let state = h.state().await;
    let parent = state
        .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.parent").unwrap())
        .unwrap();
    assert_eq!(
        parent.config["name"],
        serde_json::json!("parent"),
        "names are normalised"
    );
    let child = state
        .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.child[\"a\"]").unwrap())
        .unwrap();
    assert_eq!(
        child.config["parent"],
        serde_json::json!(parent.id),
        "dependencies' ids reach dependents"
    );
    assert_eq!(
        child.dependencies,
        vec![brickform_core::addrs::InstanceAddr::parse("test_thing.parent").unwrap()]
    );
    let text = serde_json::to_string(&state).unwrap();
    assert!(!text.contains("hunter2"), "secrets never reach state");
    assert!(state.outputs().contains_key("parent_id"));

    // Nothing changed: the next plan is empty.
    let (plan, _) = h.run(CONFIG, PlanMode::Normal, false).await;
    assert!(
        !plan.has_changes(),
        "{:#?}",
        plan.changes
            .iter()
            .filter(|c| c.action != Action::NoOp)
            .collect::<Vec<_>>()
    );

    // A comment change is an in-place update; a name change forces replacement.
    let changed = CONFIG
        .replace("owned by", "belongs to")
        .replace("child_${each.key}", "kid_${each.key}");
    let (plan, report) = h.run(&changed, PlanMode::Normal, true).await;
    let s = plan.summary();
    assert_eq!(
        (s.add, s.change, s.destroy),
        (2, 1, 2),
        "{:#?}",
        plan.changes
    );
    let replaced = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.child[\"a\"]")
        .unwrap();
    assert_eq!(replaced.action, Action::DeleteThenCreate);
    assert_eq!(
        replaced.reason,
        Some(ActionReason::ReplaceBecauseCannotUpdate)
    );
    assert!(report.unwrap().failed.is_empty());

    // Drift: a change made outside shows and is planned back; a deleted object is recreated.
    let parent_id = h
        .state()
        .await
        .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.parent").unwrap())
        .unwrap()
        .id
        .clone();
    edit_by_hand(&h, &parent_id, "comment", "edited by hand");
    let kid_b = h
        .state()
        .await
        .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.child[\"b\"]").unwrap())
        .unwrap()
        .id
        .clone();
    h.svc.objects.lock().unwrap().remove(&kid_b);
    let (plan, _) = h.run(&changed, PlanMode::Normal, true).await;
    assert_eq!(plan.drift.len(), 2, "{:#?}", plan.drift);
    let p = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.parent")
        .unwrap();
    assert_eq!(p.action, Action::Update);
    let b = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.child[\"b\"]")
        .unwrap();
    assert_eq!(b.action, Action::Create);
    assert_eq!(b.reason, Some(ActionReason::CreateBecauseDeletedOutside));
    let (plan, _) = h.run(&changed, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "apply put the drift back");

    // A destroy shows what changed outside brickform, not what the configuration would
    // change; what reads an object it deletes reads what the object holds.
    edit_by_hand(&h, &parent_id, "comment", "edited again");
    let edited = changed.replace("belongs to", "now owned by");
    let (plan, _) = h.run(&edited, PlanMode::Destroy, false).await;
    assert_eq!(plan.drift.len(), 1, "{:#?}", plan.drift);
    assert_eq!(plan.drift[0].address.to_string(), "test_thing.parent");
    assert_eq!(plan.summary().destroy, 3, "{:#?}", plan.changes);
    for c in plan.changes.iter().filter(|c| c.action == Action::Delete) {
        assert!(c.fields.is_empty() && c.after.is_none(), "{c:#?}");
    }
    let kid = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.child[\"a\"]")
        .unwrap();
    assert!(
        kid.before.is_some(),
        "a deleted object is shown as it is: {kid:#?}"
    );

    // Destroy removes everything, children first; a second destroy does nothing.
    let (plan, report) = h.run(&changed, PlanMode::Destroy, true).await;
    assert_eq!(plan.summary().destroy, 3);
    assert_eq!(report.unwrap().destroyed, 3);
    assert!(h.svc.objects.lock().unwrap().is_empty());
    assert!(h.state().await.resources().is_empty());
    let (plan, _) = h.run(&changed, PlanMode::Destroy, false).await;
    assert_eq!(plan.summary().destroy, 0);
}

/// A destroy reads the lookups that read what it deletes, as the objects still are: the keys
/// of a `for_each` over a lookup's result stay known.
#[tokio::test]
async fn a_destroy_reads_lookups_of_what_it_deletes() {
    let src = r#"
resource "test_thing" "parent" { name = "parent" }
data "test_info" "about" { about = test_thing.parent.name }
resource "test_thing" "per_team" {
  for_each = toset([data.test_info.about.team])
  name     = "member"
}
"#;
    let h = Harness::new();
    // The keys are known once what the lookup reads exists.
    apply_targeted(&h, src, &["test_thing.parent"]).await;
    let (_, report) = h.run(src, PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    let (plan, report) = h.run(src, PlanMode::Destroy, true).await;
    assert_eq!(plan.summary().destroy, 2, "{:#?}", plan.changes);
    assert_eq!(report.unwrap().destroyed, 2);
    assert!(h.svc.objects.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_failure_skips_dependents_and_independent_branches_finish() {
    let h = Harness::new();
    h.svc.fail_names.lock().unwrap().push("broken".into());
    let src = r#"
resource "test_thing" "broken" { name = "broken" }
resource "test_thing" "dependent" {
  name   = "dep"
  parent = test_thing.broken.id
}
resource "test_thing" "independent" { name = "ok" }
"#;
    let (_, report) = h.run(src, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert_eq!(report.added, 1);
    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.failed[0].0, "test_thing.broken");
    assert_eq!(report.skipped, vec!["test_thing.dependent".to_string()]);
    let state = h.state().await;
    assert!(
        state
            .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.independent").unwrap())
            .is_some()
    );
    assert!(
        state
            .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.broken").unwrap())
            .is_none()
    );
}

#[tokio::test]
async fn orphans_are_deleted_and_removed_blocks_forget() {
    let h = Harness::new();
    h.run("resource \"test_thing\" \"a\" { name = \"a\" }\nresource \"test_thing\" \"b\" { name = \"b\" }", PlanMode::Normal, true).await;
    let src = "resource \"test_thing\" \"a\" { name = \"a\" }\nremoved {\n  from = test_thing.b\n  lifecycle { destroy = false }\n}";
    let (plan, _) = h.run(src, PlanMode::Normal, true).await;
    let b = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.b")
        .unwrap();
    assert_eq!(b.action, Action::Forget);
    assert!(
        h.state()
            .await
            .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.b").unwrap())
            .is_none()
    );
    assert_eq!(
        h.svc.objects.lock().unwrap().len(),
        2,
        "forget leaves the object"
    );
    let (plan, _) = h.run("", PlanMode::Normal, true).await;
    assert_eq!(
        plan.changes[0].reason,
        Some(ActionReason::DeleteBecauseNoResourceConfig)
    );
    assert_eq!(h.svc.objects.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn validate_reports_all_errors_without_calling_the_provider() {
    let h = Harness::new();
    let src = r#"
resource "test_thing" "a" {
  nme = "x"
}
resource "test_thingy" "b" {}
resource "test_thing" "c" {
  name    = "c"
  comment = 5 + "x"
}
"#;
    let (config, d) = load_sources(
        Path::new("."),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    assert!(!d.has_errors());
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let diags = engine.validate().await;
    let summaries: Vec<&str> = diags.iter().map(|d| d.summary.as_str()).collect();
    assert!(
        summaries.contains(&"Invalid resource type"),
        "{summaries:?}"
    );
    assert!(h.svc.objects.lock().unwrap().is_empty());
}

#[tokio::test]
async fn validate_leaves_what_the_service_assigns_to_an_import_target_unknown() {
    // Validate plans offline: an import target is not read, so its server-assigned
    // attributes are unknown, as a new object's are, and a template may use them.
    let h = Harness::new();
    let src = r#"
import {
  to = test_thing.a
  id = "existing"
}
resource "test_thing" "a" { name = "a" }
output "where" { value = "${test_thing.a.url}/x" }
"#;
    let (config, d) = load_sources(
        Path::new("."),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    assert!(!d.has_errors());
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let diags = Engine::new(&config, &h.registry, &vars, "default")
        .validate()
        .await;
    assert!(!diags.has_errors(), "{diags:?}");
    assert!(h.svc.objects.lock().unwrap().is_empty());
}

#[tokio::test]
async fn provider_blocks_are_evaluated_and_configure_the_provider() {
    let h = Harness::new();
    let src = r#"
variable "region" { default = "eu" }
locals { r = upper(var.region) }
provider "test" { region = local.r }
resource "test_thing" "a" { name = "a" }
"#;
    h.run(src, PlanMode::Normal, false).await;
    let configured = h.svc.configured.lock().unwrap().clone().unwrap();
    assert_eq!(configured["region"], Value::from("EU"));

    let (config, _) = load_sources(
        Path::new("."),
        vec![(
            "main.bf.hcl".into(),
            "main.bf.hcl".into(),
            "provider \"tset\" {}\nprovider \"test\" { regoin = 1 }\n".into(),
        )],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let diags = Engine::new(&config, &h.registry, &vars, "default")
        .validate()
        .await;
    let summaries: Vec<&str> = diags.iter().map(|d| d.summary.as_str()).collect();
    assert_eq!(summaries, ["Unknown provider", "Unsupported argument"]);
    assert_eq!(diags.0[0].hint.as_deref(), Some("did you mean `test`?"));

    let (config, _) = load_sources(h.dir.path(), vec![("main.bf.hcl".into(), "main.bf.hcl".into(), "provider \"test\" { region = \"nowhere\" }\nresource \"test_thing\" \"a\" { name = \"a\" }\n".into())]);
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let state = StateDocument::new("default");
    let (planned, diags) = Engine::new(&config, &h.registry, &vars, "default")
        .plan(&state, &PlanRequest::default())
        .await;
    assert!(planned.is_none());
    assert!(
        diags.0[0]
            .summary
            .contains("Cannot configure provider \"test\": no such region"),
        "{diags:?}"
    );
}

/// A crash between a create request and its recorded result: the object exists in the
/// service, the log holds only the intent. The next run adopts it instead of creating a
/// duplicate, and the plan after that is empty.
#[tokio::test]
async fn an_interrupted_create_is_adopted_not_duplicated() {
    let h = Harness::new();
    let src = "resource \"test_thing\" \"a\" { name = \"a\" }";
    // The service already holds what the interrupted create made.
    let remote = Thing {
        svc: h.svc.clone(),
        schema: thing_schema(),
        type_name: "test_thing",
    }
    .create(
        &OpContext {
            address: "test_thing.a".into(),
            lineage: String::new(),
            environment: "default".into(),
            base_dir: h.dir.path().into(),
            create_token: None,
            output: None,
            planned: None,
        },
        &Object::from_iter([("name".to_string(), Value::from("a"))]),
    )
    .await
    .unwrap();
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(h.dir.path()));
    let rec = recover(backend.clone(), "default").await.unwrap();
    let mut doc = rec.document;
    backend.save("default", &mut doc).await.unwrap();
    rec.journal
        .intent(
            brickform_state::WalOp::Create,
            "test_thing.a",
            "test_thing",
            Some("a".into()),
            None,
        )
        .await
        .unwrap();
    drop(rec.journal);

    let (config, _) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let rec = recover(backend.clone(), "default").await.unwrap();
    assert_eq!(rec.unresolved.len(), 1);
    let mut doc = rec.document;
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let lines = engine
        .recover_interrupted(&mut doc, &rec.journal, &rec.unresolved)
        .await
        .unwrap();
    assert!(lines[0].contains("adopted"), "{lines:?}");
    rec.journal.checkpoint(&mut doc).await.unwrap();
    assert_eq!(
        doc.get(&brickform_core::addrs::InstanceAddr::parse("test_thing.a").unwrap())
            .unwrap()
            .id,
        remote.id
    );

    let (plan, _) = h.run(src, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    assert_eq!(h.svc.objects.lock().unwrap().len(), 1, "no duplicate");
}

#[tokio::test]
async fn moved_create_before_destroy_prevent_destroy_triggers_and_targets() {
    let h = Harness::new();
    let v1 = r#"
resource "test_thing" "old" { name = "a" }
resource "test_thing" "keep" {
  name = "k1"
  lifecycle { create_before_destroy = true }
}
resource "test_thing" "guarded" {
  name = "g"
  lifecycle { prevent_destroy = true }
}
resource "test_thing" "trigger" { name = "t1" }
resource "test_thing" "follower" {
  name = "f"
  lifecycle { replace_triggered_by = [test_thing.trigger.id] }
}
"#;
    h.run(v1, PlanMode::Normal, true).await;
    let old_id = h
        .state()
        .await
        .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.old").unwrap())
        .unwrap()
        .id
        .clone();

    // moved: the same object under a new address, no destroy.
    let v2 = v1.replace("\"old\" { name = \"a\" }", "\"new\" { name = \"a\" }")
        + "moved {\n  from = test_thing.old\n  to   = test_thing.new\n}\n";
    let (plan, _) = h.run(&v2, PlanMode::Normal, true).await;
    let moved = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.new")
        .unwrap();
    assert_eq!(
        moved
            .moved_from
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("test_thing.old")
    );
    assert_eq!(moved.action, Action::NoOp);
    assert_eq!(
        h.state()
            .await
            .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.new").unwrap())
            .unwrap()
            .id,
        old_id
    );

    // create_before_destroy: a forced replacement creates the new object first.
    let v3 = v2.replace("\"k1\"", "\"k2\"");
    let (plan, report) = h.run(&v3, PlanMode::Normal, true).await;
    let keep = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.keep")
        .unwrap();
    assert_eq!(keep.action, Action::CreateThenDelete);
    assert!(report.unwrap().failed.is_empty());

    // replace_triggered_by: replacing the trigger replaces the follower too.
    let v4 = v3.replace("\"t1\"", "\"t2\"");
    let (plan, _) = h.run(&v4, PlanMode::Normal, false).await;
    let follower = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.follower")
        .unwrap();
    assert!(follower.action.is_replace(), "{:?}", follower.action);
    assert_eq!(follower.reason, Some(ActionReason::ReplaceByTriggers));

    // --target: only the target and what it depends on.
    let (config, _) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), v4.clone())],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let state = h.state().await;
    let req = PlanRequest {
        refresh: true,
        targets: vec!["test_thing.trigger".into()],
        ..Default::default()
    };
    let (planned, _) = engine.plan(&state, &req).await;
    let plan = planned.unwrap().plan;
    assert_eq!(
        plan.changes.iter().map(|c| c.address()).collect::<Vec<_>>(),
        ["test_thing.trigger"]
    );
    assert!(plan.targeted);

    // prevent_destroy: destroying the guarded object is refused.
    let (config, _) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), v4)],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let (planned, diags) = engine
        .plan(
            &state,
            &PlanRequest {
                mode: PlanMode::Destroy,
                refresh: true,
                ..Default::default()
            },
        )
        .await;
    assert!(planned.is_none());
    assert!(
        diags
            .iter()
            .any(|d| d.summary == "Instance cannot be destroyed"),
        "{diags:?}"
    );
}

/// Plans `src` against the harness's state with the given request.
async fn plan_with(
    h: &Harness,
    src: &str,
    req: PlanRequest,
) -> (
    Option<brickform_core::plan::Plan>,
    brickform_core::diagnostics::Diagnostics,
) {
    let (config, _) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let state = h.state().await;
    let (planned, diags) = engine.plan(&state, &req).await;
    (planned.map(|p| p.plan), diags)
}

#[tokio::test]
async fn a_targeted_destroy_takes_dependents_never_dependencies() {
    let h = Harness::new();
    let src = r#"
resource "test_thing" "base" { name = "base" }
resource "test_thing" "mid" {
  name   = "mid"
  parent = test_thing.base.id
}
resource "test_thing" "leaf" {
  count  = 2
  name   = "leaf${count.index}"
  parent = test_thing.mid.id
}
resource "test_thing" "other" {
  name   = "other"
  parent = test_thing.base.id
  lifecycle { prevent_destroy = true }
}
"#;
    h.run(src, PlanMode::Normal, true).await;
    let (plan, diags) = plan_with(
        &h,
        src,
        PlanRequest {
            mode: PlanMode::Destroy,
            refresh: true,
            targets: vec!["test_thing.mid".into()],
            ..Default::default()
        },
    )
    .await;
    // `other` is guarded but not targeted: it does not block this destroy.
    let plan = plan.unwrap_or_else(|| panic!("{diags:?}"));
    let mut deleted: Vec<String> = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::Delete)
        .map(|c| c.address())
        .collect();
    deleted.sort();
    assert_eq!(
        deleted,
        ["test_thing.leaf[0]", "test_thing.leaf[1]", "test_thing.mid"]
    );
    assert!(
        plan.changes.iter().all(|c| c.action == Action::Delete),
        "nothing else is in a targeted destroy: {:?}",
        plan.changes
    );

    // A normal targeted plan keeps what the target depends on instead.
    let changed = src.replace("\"leaf${count.index}\"", "\"leaf_${count.index}\"");
    let (plan, _) = plan_with(
        &h,
        &changed,
        PlanRequest {
            refresh: true,
            targets: vec!["test_thing.leaf[1]".into()],
            ..Default::default()
        },
    )
    .await;
    let plan = plan.unwrap();
    let mut kept: Vec<String> = plan.changes.iter().map(|c| c.address()).collect();
    kept.sort();
    assert_eq!(
        kept,
        ["test_thing.base", "test_thing.leaf[1]", "test_thing.mid"]
    );

    // Applying the targeted destroy leaves the target's dependencies in place.
    apply_request(
        &h,
        src,
        PlanRequest {
            mode: PlanMode::Destroy,
            refresh: true,
            targets: vec!["test_thing.mid".into()],
            ..Default::default()
        },
    )
    .await;
    let left: Vec<String> = h
        .state()
        .await
        .resources()
        .iter()
        .map(|r| r.address())
        .collect();
    assert_eq!(left, ["test_thing.base", "test_thing.other"]);
    let names: Vec<String> = h
        .svc
        .objects
        .lock()
        .unwrap()
        .values()
        .filter_map(|o| o.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// Plans `req` of `src`, applies it and saves the state, as `apply` does.
async fn apply_request(h: &Harness, src: &str, req: PlanRequest) -> brickform_core::plan::Plan {
    let (config, _) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(h.dir.path()));
    let rec = recover(backend.clone(), "default").await.unwrap();
    let (planned, diags) = engine.plan(&rec.document, &req).await;
    let planned = planned.unwrap_or_else(|| panic!("{diags:?}"));
    let opts = ApplyOptions {
        parallelism: 4,
        cancel: CancellationToken::new(),
        on_event: Arc::new(|_| {}),
    };
    let planned = Arc::new(planned);
    let (mut doc, report) = engine
        .apply(planned.clone(), rec.document, rec.journal, opts)
        .await;
    assert!(report.failed.is_empty(), "{report:?}");
    backend.save("default", &mut doc).await.unwrap();
    Arc::unwrap_or_clone(planned).plan
}

/// `apply --target` of `src`.
async fn apply_targeted(h: &Harness, src: &str, targets: &[&str]) -> brickform_core::plan::Plan {
    let req = PlanRequest {
        refresh: true,
        targets: targets.iter().map(|t| t.to_string()).collect(),
        ..Default::default()
    };
    apply_request(h, src, req).await
}

#[tokio::test]
async fn a_targeted_plan_evaluates_only_the_targets_and_what_they_read() {
    let h = Harness::new();
    // `fan`'s keys are known once `upstream` exists: a plan of everything cannot make them.
    let src = r#"
resource "test_thing" "base" { name = "base" }
resource "test_thing" "upstream" {
  name   = "up"
  parent = test_thing.base.id
}
resource "test_thing" "fan" {
  for_each = toset([test_thing.upstream.id])
  name     = "fan"
}
resource "test_thing" "other" { name = "other" }
output "fans" {
  value     = length(test_thing.fan)
  sensitive = true
}
output "other" { value = test_thing.other.name }
output "base" { value = test_thing.base.name }
"#;
    let first = r#"
resource "test_thing" "other" { name = "other" }
output "other" { value = test_thing.other.name }
"#;
    h.run(first, PlanMode::Normal, true).await;
    let (plan, diags) = plan_with(&h, src, refreshed_request()).await;
    assert!(plan.is_none());
    assert!(
        diags
            .iter()
            .any(|d| d.summary == "Invalid for_each argument"),
        "{diags:?}"
    );

    let plan = apply_targeted(&h, src, &["test_thing.upstream"]).await;
    let mut planned: Vec<(String, Action)> = plan
        .changes
        .iter()
        .map(|c| (c.address(), c.action))
        .collect();
    planned.sort();
    let planned: Vec<(&str, Action)> = planned.iter().map(|(a, x)| (a.as_str(), *x)).collect();
    assert_eq!(
        planned,
        [
            ("test_thing.base", Action::Create),
            ("test_thing.upstream", Action::Create)
        ]
    );
    // Outputs of what was walked are planned; one that reads what was left out is not,
    // and keeps the value it had.
    let outputs: Vec<&str> = plan.outputs.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(outputs, ["base"]);
    let state = h.state().await;
    assert!(
        state
            .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.other").unwrap())
            .is_some()
    );
    assert_eq!(
        state.outputs().keys().collect::<Vec<_>>(),
        ["base", "other"]
    );

    // With `upstream` applied, the whole configuration plans.
    let (plan, diags) = plan_with(&h, src, refreshed_request()).await;
    let plan = plan.unwrap_or_else(|| panic!("{diags:?}"));
    let creates: Vec<String> = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::Create)
        .map(|c| c.address())
        .collect();
    assert_eq!(creates.len(), 1, "{creates:?}");
    assert!(creates[0].starts_with("test_thing.fan["), "{creates:?}");
}

fn refreshed_request() -> PlanRequest {
    PlanRequest {
        refresh: true,
        ..Default::default()
    }
}

#[tokio::test]
async fn target_and_replace_addresses_that_match_nothing_are_errors() {
    let h = Harness::new();
    let src = r#"
resource "test_thing" "nightly_job" { name = "n" }
"#;
    h.run(src, PlanMode::Normal, true).await;
    for req in [
        PlanRequest {
            refresh: true,
            targets: vec!["test_thing.nightly_jbo".into()],
            ..Default::default()
        },
        PlanRequest {
            mode: PlanMode::Destroy,
            refresh: true,
            targets: vec!["test_thing.nightly_jbo".into()],
            ..Default::default()
        },
        PlanRequest {
            refresh: true,
            replace: vec!["test_thing.nightly_jbo".into()],
            ..Default::default()
        },
    ] {
        let (plan, diags) = plan_with(&h, src, req).await;
        assert!(plan.is_none());
        let d = diags
            .iter()
            .find(|d| {
                d.summary
                    .contains("test_thing.nightly_jbo matches no resource")
            })
            .unwrap_or_else(|| panic!("{diags:?}"));
        assert_eq!(
            d.hint.as_deref(),
            Some("did you mean `test_thing.nightly_job`?")
        );
    }
}

#[tokio::test]
async fn two_creates_of_one_object_are_refused_at_plan() {
    let h = Harness::new();
    h.run(
        r#"resource "test_thing" "z" { name = "z" }"#,
        PlanMode::Normal,
        true,
    )
    .await;
    // Three blocks name one object (the kind finds objects by their lower-cased name): each
    // later one is refused against the first, at its own block, and nothing is sent.
    let src = r#"
resource "test_thing" "b" { name = "Shared" }
resource "test_thing" "a" { name = "shared" }
resource "test_thing" "c" {
  count = 2
  name  = count.index == 0 ? "SHARED" : "other"
}
"#;
    let (plan, diags) = plan_with(&h, src, refreshed_request()).await;
    assert!(plan.is_none());
    let twice: Vec<_> = diags
        .iter()
        .filter(|d| d.summary.contains("would both create"))
        .map(|d| {
            let at = d.span.as_ref().map(|s| &src[s.range.clone()]).unwrap_or("");
            (d.summary.as_str(), at.lines().next().unwrap_or(""))
        })
        .collect();
    assert_eq!(
        twice,
        vec![
            (
                "test_thing.a and test_thing.b would both create test_thing shared",
                r#"resource "test_thing" "b""#
            ),
            (
                "test_thing.a and test_thing.c[0] would both create test_thing shared",
                r#"resource "test_thing" "c""#
            ),
        ],
        "{diags:?}"
    );
    assert_eq!(h.svc.objects.lock().unwrap().len(), 1);

    // One object made by one block, another block renamed away from it: a create and the
    // delete of what the state holds are not two creates.
    let one = r#"resource "test_thing" "a" { name = "shared" }"#;
    h.run(one, PlanMode::Normal, true).await;
    let renamed = r#"resource "test_thing" "b" { name = "shared" }"#;
    let (plan, diags) = plan_with(&h, renamed, refreshed_request()).await;
    assert!(
        !diags
            .iter()
            .any(|d| d.summary.contains("would both create")),
        "{diags:?}"
    );
    let _ = plan;
}

#[tokio::test]
async fn a_lookup_read_during_apply_is_unknown_until_then_what_it_fills_in_included() {
    let h = Harness::new();
    let src = |size: &str| {
        format!(
            r#"
resource "test_thing" "a" {{
  name    = "a"
  comment = "{size}"
}}
data "test_info" "i" {{
  about = test_thing.a.name
}}
output "team" {{ value = data.test_info.i.team }}
"#
        )
    };
    h.run(&src("1"), PlanMode::Normal, true).await;
    // `a` changes, so the lookup that reads it waits for the apply: `team`, which it fills
    // in though it may be given, is unknown until then, not null.
    let (plan, diags) = plan_with(&h, &src("2"), refreshed_request()).await;
    let plan = plan.unwrap_or_else(|| panic!("{diags:?}"));
    let read = plan
        .changes
        .iter()
        .find(|c| c.address() == "data.test_info.i")
        .unwrap();
    assert_eq!(read.action, Action::Read);
    let after = &read.after.as_ref().unwrap().0;
    assert_eq!(after.get("team"), Some(&Value::Unknown), "{after:?}");
    assert_eq!(after.get("about"), Some(&Value::from("a")), "{after:?}");
    let team = plan.outputs.iter().find(|o| o.name == "team").unwrap();
    assert_ne!(
        team.after.as_ref().map(|v| &v.0),
        Some(&Value::Null),
        "the output is not planned to become null: {team:?}"
    );
}

#[tokio::test]
async fn a_moved_block_without_keys_moves_every_instance_of_the_resource() {
    let h = Harness::new();
    let v1 = r#"
resource "test_thing" "f" {
  for_each = toset(["a", "b"])
  name     = each.key
}
"#;
    h.run(v1, PlanMode::Normal, true).await;
    let before = h.state().await;
    let id = |s: &StateDocument, a: &str| {
        s.get(&brickform_core::addrs::InstanceAddr::parse(a).unwrap())
            .map(|r| r.id.clone())
    };
    let v2 =
        v1.replace("\"f\"", "\"g\"") + "moved {\n  from = test_thing.f\n  to   = test_thing.g\n}\n";
    let (plan, _) = h.run(&v2, PlanMode::Normal, true).await;
    for key in ["a", "b"] {
        let to = format!("test_thing.g[\"{key}\"]");
        let c = plan.changes.iter().find(|c| c.address() == to).unwrap();
        assert_eq!(c.action, Action::NoOp, "{to}");
        assert_eq!(
            c.moved_from.as_ref().map(ToString::to_string).as_deref(),
            Some(format!("test_thing.f[\"{key}\"]").as_str())
        );
        let after = h.state().await;
        assert_eq!(
            id(&after, &to),
            id(&before, &format!("test_thing.f[\"{key}\"]"))
        );
    }
    assert!(
        plan.changes
            .iter()
            .all(|c| matches!(c.action, Action::NoOp)),
        "nothing made or destroyed: {:?}",
        plan.changes
    );
    assert_eq!(h.svc.objects.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_computed_attribute_the_service_never_reports_reads_as_null() {
    let h = Harness::new();
    let src = r#"
data "test_info" "me" {}
resource "test_thing" "a" {
  name = "a"
}
resource "test_thing" "b" {
  name    = "b"
  comment = "after ${coalesce(test_thing.a.url, "none")}"
}
output "url" { value = test_thing.a.url }
output "region" { value = data.test_info.me.region }
output "items" { value = length(test_thing.a.item) }
"#;
    let (_, report) = h.run(src, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    let outputs: BTreeMap<&str, &Value> = report
        .outputs
        .iter()
        .map(|(n, v, _)| (n.as_str(), v))
        .collect();
    assert_eq!(outputs["url"], &Value::Null);
    assert_eq!(outputs["region"], &Value::Null);
    assert_eq!(outputs["items"], &Value::from_i64(0));
    // State records it, as null.
    let state = h.state().await;
    let a = state
        .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.a").unwrap())
        .unwrap();
    assert_eq!(a.computed.get("url"), Some(&serde_json::Value::Null));
    assert_eq!(
        state
            .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.b").unwrap())
            .unwrap()
            .config["comment"],
        serde_json::json!("after none")
    );
    // Every later plan reads it too, and so does destroy.
    let (plan, _) = h.run(src, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    assert!(
        plan.outputs.iter().all(|o| o.action == Action::NoOp),
        "{:#?}",
        plan.outputs
    );

    // A state written before the attribute existed lacks it altogether: still no failure.
    let backend = LocalBackend::new(h.dir.path());
    let mut doc = h.state().await;
    doc.get_mut(&brickform_core::addrs::InstanceAddr::parse("test_thing.a").unwrap())
        .unwrap()
        .computed
        .remove("url");
    backend.save("default", &mut doc).await.unwrap();
    let (plan, _) = h.run(src, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    let (_, report) = h.run(src, PlanMode::Destroy, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(report.destroyed, 2);
}

/// `state rm` leaves the object behind and remembers it: the next plan imports it instead
/// of planning a create (which would fail on the taken name, or make a twin). An object of
/// the same name that nothing says is this state's is refused by the plan.
#[tokio::test]
async fn what_state_rm_removed_is_imported_and_an_unknown_object_is_refused() {
    let h = Harness::new();
    let src = "resource \"test_thing\" \"a\" {\n  name = \"a\"\n}\n";
    h.run(src, PlanMode::Normal, true).await;
    let backend = LocalBackend::new(h.dir.path());
    // As the binary does once the applied state is saved.
    backend.wal_truncate("default").await.unwrap();
    let mut doc = h.state().await;
    let id = doc
        .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.a").unwrap())
        .unwrap()
        .id
        .clone();
    doc.forget(&brickform_core::addrs::InstanceAddr::parse("test_thing.a").unwrap())
        .unwrap();
    backend.save("default", &mut doc).await.unwrap();

    let (plan, report) = h.run(src, PlanMode::Normal, true).await;
    let c = plan
        .changes
        .iter()
        .find(|c| c.address() == "test_thing.a")
        .unwrap();
    assert_eq!(c.action, Action::NoOp, "{c:#?}");
    assert_eq!(c.importing.as_deref(), Some(id.as_str()));
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.contains("`brickform state rm` took it out of this state")),
        "{:?}",
        plan.warnings
    );
    assert_eq!(report.unwrap().imported, 1);
    assert_eq!(h.svc.objects.lock().unwrap().len(), 1, "no duplicate");
    let doc = h.state().await;
    assert_eq!(
        doc.get(&brickform_core::addrs::InstanceAddr::parse("test_thing.a").unwrap())
            .unwrap()
            .id,
        id
    );
    assert!(
        doc.forgotten(&brickform_core::addrs::InstanceAddr::parse("test_thing.a").unwrap())
            .is_none()
    );

    // A plain `remove` (a lost entry without `state rm`'s record) proves nothing for a kind
    // without ownership tags: the plan refuses the taken name and says how to import.
    backend.wal_truncate("default").await.unwrap();
    let mut doc = h.state().await;
    doc.remove(&brickform_core::addrs::InstanceAddr::parse("test_thing.a").unwrap());
    backend.save("default", &mut doc).await.unwrap();
    let (config, _) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let (planned, d) = engine.plan(&doc, &PlanRequest::default()).await;
    assert!(planned.is_none());
    let text = d.render_plain(&config.sources);
    assert!(
        text.contains("test_thing.a: the name is taken by test_thing"),
        "{text}"
    );
    assert!(
        text.contains(&format!("brickform import test_thing.a {id}")),
        "{text}"
    );
    assert!(text.contains("main.bf.hcl:1"), "located: {text}");
}

/// The write-ahead log stops accepting writes (the lock was lost to another run): the apply
/// stops, since no further call could be recorded. Calls in flight finish; nothing new
/// starts, and what did not start is reported as skipped, with why the apply stopped.
#[tokio::test]
async fn a_lost_lock_stops_the_apply_instead_of_failing_one_resource() {
    let h = Harness::new();
    *h.wal_writes_left.lock().unwrap() = Some(0);
    let names: Vec<String> = (0..16).map(|i| format!("t{i}")).collect();
    let src: String = names
        .iter()
        .map(|n| format!("resource \"test_thing\" \"{n}\" {{ name = \"{n}\" }}\n"))
        .collect();
    let (_, report) = h.run(&src, PlanMode::Normal, true).await;
    let report = report.unwrap();
    let stopped = report.stopped.as_deref().unwrap_or_default();
    assert!(
        stopped.contains("could not be recorded") && stopped.contains("held by another run"),
        "{report:?}"
    );
    // At most the nodes the walk runs for the harness's parallelism (4 call slots, two
    // nodes each) had started when the first write failed.
    assert!(
        (1..=8).contains(&report.failed.len()),
        "only the nodes already running fail: {report:?}"
    );
    assert_eq!(report.failed.len() + report.skipped.len(), names.len());
    assert!(!report.interrupted);
    assert!(report.retry_may_help(), "{report:?}");
    // Nothing was sent without its intent on record.
    assert!(h.svc.objects.lock().unwrap().is_empty());
}

/// Applies twelve new objects whose creates take 20 ms to answer, all of them made.
async fn creates_twelve_slowly(h: &Harness) {
    *h.svc.create_takes.lock().unwrap() = Some(std::time::Duration::from_millis(20));
    let src: String = (0..12)
        .map(|i| format!("resource \"test_thing\" \"t{i}\" {{ name = \"t{i}\" }}\n"))
        .collect();
    let (_, report) = h.run(&src, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(report.added, 12);
}

/// The walk runs more nodes than there are call slots, but never more calls at once than
/// the parallelism: each call waits for a slot.
#[tokio::test]
async fn apply_makes_at_most_parallelism_calls_at_once() {
    use std::sync::atomic::Ordering::SeqCst;
    let h = Harness::new();
    creates_twelve_slowly(&h).await;
    // The harness applies with a parallelism of 4; every slot was used, and more nodes
    // than slots ran, so one doing its local work did not keep a slot idle.
    assert_eq!(h.svc.most_creating.load(SeqCst), 4);
    assert!(h.most_running.load(SeqCst) > 4, "{:?}", h.most_running);
}

/// A call slot is held by a request, not by a whole operation: while one create works
/// locally before its request, other creates' requests fill every slot.
#[tokio::test]
async fn local_work_of_an_operation_holds_no_call_slot() {
    use std::sync::atomic::Ordering::SeqCst;
    let h = Harness::new();
    *h.svc.create_works.lock().unwrap() = Some(std::time::Duration::from_millis(20));
    creates_twelve_slowly(&h).await;
    // Never more requests than the harness's 4 slots, yet more creates than that busy at
    // once: those working locally held none.
    assert_eq!(h.svc.most_creating.load(SeqCst), 4);
    assert!(h.svc.most_busy.load(SeqCst) > 4, "{:?}", h.svc.most_busy);
}

/// A block of many instances is prepared on several threads; its instances are planned
/// in their order all the same, each with its own values.
#[tokio::test]
async fn many_instances_are_planned_in_their_order() {
    let h = Harness::new();
    let src = r#"
resource "test_thing" "t" {
  count = 70
  name  = "t${count.index}"
}
"#;
    let (plan, _) = h.run(src, PlanMode::Normal, false).await;
    let shown: Vec<(String, String)> = plan
        .changes
        .iter()
        .map(|c| {
            let name = c.after.as_ref().unwrap().0["name"].to_string();
            (c.address(), name)
        })
        .collect();
    let expected: Vec<(String, String)> = (0..70)
        .map(|i| (format!("test_thing.t[{i}]"), format!("\"t{i}\"")))
        .collect();
    assert_eq!(shown, expected);
}

/// A node whose work panics is reported at its own address, and what depends on it as
/// skipped; independent nodes finish.
#[tokio::test]
async fn a_panicking_node_is_reported_at_its_address_with_its_dependents() {
    let h = Harness::new();
    h.svc.panic_names.lock().unwrap().push("boom".into());
    let src = r#"
resource "test_thing" "boom" { name = "boom" }
resource "test_thing" "after" {
  name   = "after"
  parent = test_thing.boom.id
}
resource "test_thing" "later" {
  name   = "later"
  parent = test_thing.after.id
}
resource "test_thing" "free" { name = "free" }
"#;
    let (_, report) = h.run(src, PlanMode::Normal, true).await;
    let report = report.unwrap();
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert_eq!(report.failed[0].0, "test_thing.boom");
    assert!(
        report.failed[0].1.contains("the provider broke on boom"),
        "{report:?}"
    );
    assert_eq!(
        report.skipped,
        vec![
            "test_thing.after".to_string(),
            "test_thing.later".to_string()
        ]
    );
    assert_eq!(report.added, 1);
    assert!(
        h.state()
            .await
            .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.free").unwrap())
            .is_some()
    );
}

/// The JSON plan's Terraform sections: the configuration as expressions (a literal as its
/// value, a reference as what it refers to, a sensitive attribute empty), the planned values
/// and prior state laid out with blocks as lists, the variables without sensitive ones, the
/// provider's source address; and no secret anywhere.
#[tokio::test]
async fn plan_json_carries_terraforms_sections_without_secrets() {
    let h = support::Harness::new();
    let src = r#"
variable "comment" { default = "hello" }
variable "token" {
  default   = "hunter2"
  sensitive = true
}
resource "test_thing" "parent" {
  name    = "p"
  comment = var.comment
  secret  = var.token
}
resource "test_thing" "literal" {
  name    = "l"
  comment = sensitive("written-in-the-file")
}
resource "test_thing" "child" {
  count  = 2
  name   = "c${count.index}"
  parent = test_thing.parent.name
  dynamic "item" {
    for_each = ["a"]
    content { key = item.value }
  }
}
"#;
    let (mut plan, _) = h.run(src, PlanMode::Normal, false).await;
    plan.context = h.describe(src, &plan);
    let doc = brickform_core::plan::render_json::render(&plan);
    let text = serde_json::to_string(&doc).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(!text.contains("written-in-the-file"), "{text}");
    assert_eq!(doc["terraform_version"], "1.9.0");
    assert_eq!(
        doc["variables"],
        serde_json::json!({"comment": {"value": "hello"}})
    );
    assert!(doc["timestamp"].as_str().unwrap().ends_with('Z'));

    let conf = &doc["configuration"]["root_module"];
    let res = |addr: &str| {
        conf["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["address"] == addr)
            .unwrap()
            .clone()
    };
    let parent = res("test_thing.parent");
    assert_eq!(parent["provider_config_key"], "test");
    assert_eq!(
        parent["expressions"]["name"],
        serde_json::json!({"constant_value": "p"})
    );
    assert_eq!(
        parent["expressions"]["comment"],
        serde_json::json!({"references": ["var.comment"]})
    );
    assert_eq!(parent["expressions"]["secret"], serde_json::json!({}));
    let child = res("test_thing.child");
    assert_eq!(
        child["expressions"]["parent"],
        serde_json::json!({"references": ["test_thing.parent.name", "test_thing.parent"]})
    );
    assert_eq!(
        child["count_expression"],
        serde_json::json!({"constant_value": 2})
    );
    // A dynamic block's iterator is bound by it, not a reference to anything.
    assert_eq!(
        child["expressions"]["item"],
        serde_json::json!([{"key": {}}])
    );
    assert_eq!(
        conf["variables"]["token"],
        serde_json::json!({"sensitive": true})
    );
    assert_eq!(
        doc["relevant_attributes"],
        serde_json::json!([{"resource": "test_thing.parent", "attribute": ["name"]}])
    );

    let planned = doc["planned_values"]["root_module"]["resources"]
        .as_array()
        .unwrap();
    assert_eq!(planned.len(), 4);
    let c0 = planned
        .iter()
        .find(|r| r["address"] == "test_thing.child[0]")
        .unwrap();
    assert_eq!(c0["index"], 0);
    // Every attribute of the block's schema, unset ones as null.
    assert_eq!(
        c0["values"]["item"],
        serde_json::json!([{"key": "a", "note": null}])
    );
    let p = planned
        .iter()
        .find(|r| r["address"] == "test_thing.parent")
        .unwrap();
    assert_eq!(p["values"]["secret"], serde_json::Value::Null);
    // As Terraform writes them: nested values keep their shape, only sensitive leaves are true.
    assert_eq!(
        p["sensitive_values"],
        serde_json::json!({"item": [], "secret": true})
    );
    assert!(
        doc.get("prior_state").is_none(),
        "nothing exists before the first apply"
    );

    // Applied, the next plan has a prior state, and the keys of every value are in order.
    h.run(src, PlanMode::Normal, true).await;
    let (mut plan, _) = h.run(src, PlanMode::Normal, false).await;
    plan.context = h.describe(src, &plan);
    let doc = brickform_core::plan::render_json::render(&plan);
    let prior = doc["prior_state"]["values"]["root_module"]["resources"]
        .as_array()
        .unwrap();
    assert_eq!(prior.len(), 4);
    for r in prior {
        let keys: Vec<&String> = r["values"].as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }
    assert_eq!(doc["applyable"], false);
    assert_eq!(doc["complete"], true);
}

/// A target naming a block that has no instances (`count = 0`) plans nothing: it is not a
/// typo, so it is not refused with a "did you mean" of itself (found by the generator).
#[tokio::test]
async fn a_target_declared_with_no_instances_plans_nothing() {
    let h = Harness::new();
    let src = r#"
resource "test_thing" "none" {
  count = 0
  name  = "n${count.index}"
}
"#;
    h.run(src, PlanMode::Normal, true).await;
    let req = PlanRequest {
        refresh: true,
        targets: vec!["test_thing.none".into()],
        ..Default::default()
    };
    let (plan, diags) = plan_with(&h, src, req).await;
    let plan = plan.unwrap_or_else(|| panic!("{diags:?}"));
    assert!(!plan.has_changes());
}

/// A block the plan makes ahead of its turn, while the reads it waits for are made, is made
/// against what state holds. When a value it reads is another by its turn (here a value the
/// service set on the object it refers to, changed outside brickform), it is planned again:
/// the plan is the one made in turn.
#[tokio::test]
async fn a_block_planned_ahead_is_planned_again_when_what_it_read_changed() {
    const SRC: &str = r#"
resource "test_thing" "holder" {
  name = "holder"
}
resource "test_thing" "reader" {
  count   = 2
  name    = "reader${count.index}"
  comment = "held by ${test_thing.holder.owner}"
}
"#;
    let h = Harness::new();
    h.run(SRC, PlanMode::Normal, true).await;
    let (plan, _) = h.run(SRC, PlanMode::Normal, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    let holder = h
        .state()
        .await
        .get(&brickform_core::addrs::InstanceAddr::parse("test_thing.holder").unwrap())
        .unwrap()
        .id
        .clone();
    edit_by_hand(&h, &holder, "owner", "someone");
    let (plan, _) = h.run(SRC, PlanMode::Normal, false).await;
    let readers: Vec<_> = plan
        .changes
        .iter()
        .filter(|c| c.addr.to_string().starts_with("test_thing.reader"))
        .collect();
    assert_eq!(readers.len(), 2);
    for c in readers {
        assert_eq!(c.action, Action::Update, "{c:#?}");
        let comment = c.after.as_ref().unwrap().0.get("comment").cloned();
        assert_eq!(comment, Some(Value::from("held by someone")), "{c:#?}");
    }
}

/// A bug of a provider that panics while a block is planned ahead of its turn does not
/// take the plan down: the guess is dropped, and the walk plans the block in its turn,
/// where the panic is reported as the plan's error, as any panic planning a block is.
#[tokio::test]
async fn a_panic_planning_a_block_ahead_is_reported_in_its_turn() {
    use futures_util::FutureExt as _;
    const SRC: &str = r#"
resource "test_thing" "holder" {
  name = "holder"
}
resource "test_thing" "reader" {
  count   = COUNT
  name    = "reader${count.index}"
  comment = "held by ${test_thing.holder.id}"
}
"#;
    let h = Harness::new();
    h.run(&SRC.replace("COUNT", "1"), PlanMode::Normal, true)
        .await;
    h.svc
        .lookup_panic_names
        .lock()
        .unwrap()
        .push("reader1".into());
    let src = SRC.replace("COUNT", "2");
    let planned = std::panic::AssertUnwindSafe(h.run(&src, PlanMode::Normal, false))
        .catch_unwind()
        .await;
    // The harness panics with the plan's diagnostics when it has errors.
    let message = match planned {
        Ok(_) => panic!("a plan whose provider panics has an error"),
        Err(p) => p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    };
    assert!(
        message.contains("Internal error planning test_thing.reader"),
        "{message}"
    );
}

/// The instances a plan will delete have their kinds' data impacts started with the plan,
/// before any read (a kind may list what they publish once for all of them), given what
/// state recorded as applied, and the work the kind gives is run: every instance in a
/// destroy, only those whose block is gone otherwise, none in a plan that deletes nothing.
#[tokio::test]
async fn data_impacts_of_deletes_are_started_with_the_plan() {
    const SRC: &str = r#"
resource "test_thing" "kept" {
  name = "kept"
}
resource "test_thing" "gone" {
  count = 2
  name  = "gone${count.index}"
}
"#;
    let h = Harness::new();
    let seen = || h.svc.lookups.lock().unwrap().clone();
    h.run(SRC, PlanMode::Normal, true).await;
    h.svc.lookups.lock().unwrap().clear();
    h.run(SRC, PlanMode::Normal, false).await;
    let unchanged = seen();
    assert!(
        unchanged.iter().any(|l| l.starts_with("read ")),
        "{unchanged:?}"
    );
    assert!(
        !unchanged.iter().any(|l| l.contains("impact")),
        "{unchanged:?}"
    );

    h.svc.lookups.lock().unwrap().clear();
    h.run(SRC, PlanMode::Destroy, false).await;
    let destroy = h.svc.lookups_once("ran ", 3).await;
    let asked: Vec<&String> = destroy.iter().take(3).collect();
    assert_eq!(
        asked,
        [
            "impact ahead test_thing.gone[0] gone0",
            "impact ahead test_thing.gone[1] gone1",
            "impact ahead test_thing.kept kept",
        ],
        "{destroy:?}"
    );
    let ran = destroy
        .iter()
        .filter(|l| l.starts_with("ran impact"))
        .count();
    assert_eq!(ran, 3, "{destroy:?}");

    h.svc.lookups.lock().unwrap().clear();
    let kept_only = "resource \"test_thing\" \"kept\" {\n  name = \"kept\"\n}\n";
    h.run(kept_only, PlanMode::Normal, false).await;
    let removed = h.svc.lookups_once("ran ", 2).await;
    let asked: Vec<&String> = removed.iter().filter(|l| l.starts_with("impact")).collect();
    assert_eq!(
        asked,
        [
            "impact ahead test_thing.gone[0] gone0",
            "impact ahead test_thing.gone[1] gone1",
        ],
        "{removed:?}"
    );
    assert!(removed[0].starts_with("impact"), "{removed:?}");
}

/// A block of which state holds no instance has its kind's lookups started with the plan,
/// before any block is planned (its kind may list its objects once for all of them), and
/// the work its kind gives is run. Blocks state holds and a destroy ask for nothing ahead.
#[tokio::test]
async fn lookups_of_new_blocks_are_started_with_the_plan() {
    const SRC: &str = r#"
resource "test_thing" "first" {
  name = "first"
}
resource "test_thing" "then" {
  count   = 2
  name    = "then${count.index}"
  comment = test_thing.first.id
}
"#;
    let h = Harness::new();
    let lookups = || h.svc.lookups.lock().unwrap().clone();
    h.run(SRC, PlanMode::Normal, false).await;
    let seen = lookups();
    let asked: Vec<&String> = seen.iter().take(2).collect();
    assert_eq!(
        asked,
        ["ahead test_thing.first", "ahead test_thing.then"],
        "{seen:?}"
    );
    assert!(seen.contains(&"lookup first".to_string()), "{seen:?}");
    // The work it gave runs (the plan may finish first: it is only a head start).
    let ran = h.svc.lookups_once("listed ahead", 2).await;
    assert_eq!(
        ran.iter().filter(|l| l.starts_with("listed ahead")).count(),
        2,
        "{ran:?}"
    );

    h.run(SRC, PlanMode::Normal, true).await;
    h.svc.lookups.lock().unwrap().clear();
    h.run(SRC, PlanMode::Normal, false).await;
    // A destroy creates nothing, even of a block state does not hold.
    let more = format!("{SRC}\nresource \"test_thing\" \"new\" {{\n  name = \"new\"\n}}\n");
    h.run(&more, PlanMode::Destroy, false).await;
    let after = lookups();
    assert!(!after.iter().any(|l| l.starts_with("ahead")), "{after:?}");
}
