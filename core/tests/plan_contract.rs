//! The plan is the contract: apply sends what the plan said (`ignore_changes` included) and
//! nothing a reviewer did not see, and a service that rewrites what it is sent — as the real
//! one does, in ways nobody can list in advance — makes no change appear after an apply.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use brickform_core::engine::apply::ApplyOptions;
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::{Action, Plan, PlanMode};
use brickform_core::value::{Object, Value};
use brickform_state::{Backend, LocalBackend, recover};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

mod support;
use support::*;

fn pending(plan: &Plan) -> Vec<String> {
    plan.changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| format!("{} {:?} {:?}", c.address(), c.action, c.fields))
        .collect()
}

fn object_named(h: &Harness, name: &str) -> (String, Object) {
    h.svc
        .objects
        .lock()
        .unwrap()
        .iter()
        .find(|(_, o)| o.get("name").and_then(Value::as_str) == Some(name))
        .map(|(id, o)| (id.clone(), o.clone()))
        .unwrap_or_else(|| panic!("the service holds no {name}"))
}

fn updates_of(h: &Harness, id: &str) -> Vec<Object> {
    h.svc
        .writes
        .lock()
        .unwrap()
        .iter()
        .filter(|(i, w, _)| i == id && *w == Write::Update)
        .map(|(_, _, c)| c.clone())
        .collect()
}

fn config(comment: &str, tier: &str, lifecycle: &str) -> String {
    let mut out = String::new();
    for kind in ["test_thing", "test_whole"] {
        out.push_str(&format!(
            "resource \"{kind}\" \"x\" {{\n  name = \"{}\"\n  comment = \"{comment}\"\n  tier = \"{tier}\"\n  {lifecycle}\n}}\n",
            &kind[5..]
        ));
    }
    out
}

/// An ignored attribute changed in the configuration and outside brickform: the plan shows
/// only the other change, keeps the ignored value in its `after`, and the apply's write
/// sends that value, so the object keeps the comment it had (merged and whole writes alike).
#[tokio::test]
async fn an_ignored_attribute_survives_an_unrelated_update() {
    let h = Harness::new();
    let lifecycle = "lifecycle { ignore_changes = [comment] }";
    let (_, report) = h
        .run(&config("first", "basic", lifecycle), PlanMode::Normal, true)
        .await;
    assert!(report.unwrap().failed.is_empty());
    // Changed outside brickform on one of them.
    let (whole_id, _) = object_named(&h, "whole");
    h.svc
        .objects
        .lock()
        .unwrap()
        .get_mut(&whole_id)
        .unwrap()
        .insert("comment".into(), Value::from("set outside"));

    let src = config("second", "premium", lifecycle);
    let (plan, report) = h.run(&src, PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    for c in &plan.changes {
        assert_eq!(c.action, Action::Update, "{c:?}");
        let fields: Vec<String> = c.fields.iter().map(|f| format!("{:?}", f.path)).collect();
        assert!(
            fields.iter().all(|f| !f.contains("comment")),
            "{}: {fields:?}",
            c.address()
        );
        let after = &c.after.as_ref().unwrap().0;
        let kept = if c.type_name() == "test_whole" {
            "set outside"
        } else {
            "first"
        };
        assert_eq!(after["comment"], Value::from(kept), "{}", c.address());
        assert_eq!(after["tier"], Value::from("premium"));
    }
    for (name, kept) in [("thing", "first"), ("whole", "set outside")] {
        let (id, live) = object_named(&h, name);
        assert_eq!(live["comment"], Value::from(kept), "{name}");
        assert_eq!(live["tier"], Value::from("premium"), "{name}");
        for sent in updates_of(&h, &id) {
            assert_eq!(sent["comment"], Value::from(kept), "{name}: {sent:?}");
        }
    }
    let (plan, _) = h.run(&src, PlanMode::Normal, false).await;
    assert!(pending(&plan).is_empty(), "{:?}", pending(&plan));
}

/// `ignore_changes = all`: nothing the configuration says changes an existing object.
#[tokio::test]
async fn ignore_changes_all_leaves_an_existing_object_as_it_is() {
    let h = Harness::new();
    let lifecycle = "lifecycle { ignore_changes = all }";
    h.run(&config("first", "basic", lifecycle), PlanMode::Normal, true)
        .await;
    let writes = h.svc.writes.lock().unwrap().len();
    let src = config("second", "premium", lifecycle);
    let (plan, report) = h.run(&src, PlanMode::Normal, true).await;
    assert!(pending(&plan).is_empty(), "{:?}", pending(&plan));
    assert!(report.unwrap().failed.is_empty());
    assert_eq!(
        h.svc.writes.lock().unwrap().len(),
        writes,
        "nothing is sent"
    );
    for name in ["thing", "whole"] {
        assert_eq!(object_named(&h, name).1["comment"], Value::from("first"));
    }
}

/// The service rewrites what it is sent (a name's spelling, an alias, a default nobody set,
/// a flag it never returns, a list it reorders): after the apply the plan is empty, for
/// merged and whole writes alike — and a real change made outside brickform still shows.
#[tokio::test]
async fn a_value_the_service_normalises_on_write_plans_no_change() {
    let h = Harness::new();
    *h.svc.normalise.lock().unwrap() = Normalise::all();
    let mut src = String::new();
    for kind in ["test_thing", "test_whole"] {
        src.push_str(&format!(
            "resource \"{kind}\" \"x\" {{\n  name = \"{}\"\n  comment = \"Mixed case\"\n  tier = \"basic\"\n  force = true\n  tags = [\"b\", \"a\"]\n}}\n",
            &kind[5..]
        ));
    }
    let (_, report) = h.run(&src, PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    let (_, live) = object_named(&h, "whole");
    assert_eq!(
        live["comment"],
        Value::from("MIXED CASE"),
        "the service rewrote it"
    );
    assert_eq!(live["label"], Value::from("auto"));
    let (plan, _) = h.run(&src, PlanMode::Normal, false).await;
    assert!(pending(&plan).is_empty(), "{:?}", pending(&plan));
    assert!(plan.drift.is_empty(), "{:?}", plan.drift);

    // An unrelated change writes the configuration again, and converges again.
    let changed = src.replace("tier = \"basic\"", "tier = \"premium\"");
    let (plan, report) = h.run(&changed, PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    assert_eq!(plan.summary().change, 2, "{:?}", pending(&plan));
    let (plan, _) = h.run(&changed, PlanMode::Normal, false).await;
    assert!(pending(&plan).is_empty(), "{:?}", pending(&plan));

    // A change made outside brickform is drift, planned back.
    let (id, _) = object_named(&h, "thing");
    h.svc
        .objects
        .lock()
        .unwrap()
        .get_mut(&id)
        .unwrap()
        .insert("comment".into(), Value::from("OTHER"));
    let (plan, _) = h.run(&changed, PlanMode::Normal, false).await;
    assert_eq!(pending(&plan).len(), 1, "{:?}", pending(&plan));
    assert_eq!(plan.drift.len(), 1, "{:?}", plan.drift);
}

/// A value the plan knew that comes out otherwise at apply (here a file read by the
/// configuration changed between plan and apply) fails that instance, naming the attribute
/// and both values; nothing is sent for it and what depends on it is skipped.
#[tokio::test]
async fn apply_refuses_a_known_value_that_differs_from_the_plan() {
    let h = Harness::new();
    std::fs::write(h.dir.path().join("comment.txt"), "planned").unwrap();
    let src = r#"
resource "test_thing" "a" {
  name    = "a"
  comment = file("comment.txt")
}
resource "test_thing" "b" {
  name   = "b"
  parent = test_thing.a.id
}
"#;
    let (config, d) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    assert!(!d.has_errors());
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(h.dir.path()));
    let rec = recover(backend.clone(), "default").await.unwrap();
    let mut doc = rec.document;
    backend.save("default", &mut doc).await.unwrap();
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let (planned, d) = engine.plan(&doc, &PlanRequest::default()).await;
    let planned = planned.unwrap_or_else(|| panic!("{}", d.render_plain(&config.sources)));
    std::fs::write(h.dir.path().join("comment.txt"), "changed").unwrap();
    let opts = ApplyOptions {
        parallelism: 4,
        cancel: CancellationToken::new(),
        on_event: Arc::new(|_| {}),
    };
    let (_, report) = engine
        .apply(Arc::new(planned), doc, rec.journal, opts)
        .await;
    assert_eq!(report.failed.len(), 1, "{report:?}");
    let (address, failure) = &report.failed[0];
    assert_eq!(address, "test_thing.a");
    for part in ["comment", "\"planned\"", "\"changed\""] {
        assert!(
            failure.message.contains(part),
            "{part}: {}",
            failure.message
        );
    }
    assert_eq!(report.skipped, vec!["test_thing.b".to_string()]);
    assert!(h.svc.writes.lock().unwrap().is_empty(), "nothing was sent");
}

/// A sensitive value used as a `for_each` key — directly, derived, or through a map whose
/// values `each.value` would hand on unmarked — is refused at validate, located at the
/// argument, and never printed; `nonsensitive()` says a value is not secret.
#[tokio::test]
async fn a_sensitive_for_each_is_refused_at_validate() {
    let h = Harness::new();
    for for_each in [
        "toset([var.secret])",
        "toset([\"${var.secret}-x\"])",
        "{ (var.secret) = 1 }",
        "{ for k in [var.secret] : upper(k) => k }",
        "{ a = var.secret }",
    ] {
        let src = format!(
            "variable \"secret\" {{\n  default   = \"hunter2\"\n  sensitive = true\n}}\nresource \"test_thing\" \"x\" {{\n  for_each = {for_each}\n  name     = each.key\n}}\n"
        );
        let (config, d) = load_sources(
            h.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.clone())],
        );
        assert!(!d.has_errors());
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        let engine = Engine::new(&config, &h.registry, &vars, "default");
        let diags = engine.validate().await;
        let text = diags.render_plain(&config.sources);
        let d = diags
            .iter()
            .find(|d| d.summary == "Invalid for_each argument")
            .unwrap_or_else(|| panic!("{for_each}: {text}"));
        assert!(d.span.is_some(), "{for_each}: located");
        assert!(!text.contains("hunter2"), "{for_each}: {text}");
    }
    let src = "variable \"secret\" {\n  default   = \"hunter2\"\n  sensitive = true\n}\nresource \"test_thing\" \"x\" {\n  for_each = toset([nonsensitive(var.secret)])\n  name     = each.key\n}\n";
    let (config, _) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let diags = engine.validate().await;
    assert!(
        !diags.has_errors(),
        "{}",
        diags.render_plain(&config.sources)
    );
}

/// The same refusal for a data source, whose key names its instances in the plan and the
/// state as a resource's does: located at its `for_each` argument, the value not printed.
#[tokio::test]
async fn a_sensitive_for_each_of_a_data_source_is_refused_at_validate() {
    let h = Harness::new();
    for for_each in [
        "toset([var.secret])",
        "toset([\"${var.secret}-x\"])",
        "{ for k in [var.secret] : upper(k) => k }",
        "{ a = var.secret }",
    ] {
        let src = format!(
            "variable \"secret\" {{\n  default   = \"hunter2\"\n  sensitive = true\n}}\ndata \"test_info\" \"x\" {{\n  for_each = {for_each}\n  about = each.key\n}}\n"
        );
        let (config, d) = load_sources(
            h.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.clone())],
        );
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        let engine = Engine::new(&config, &h.registry, &vars, "default");
        let diags = engine.validate().await;
        let text = diags.render_plain(&config.sources);
        let d = diags
            .iter()
            .find(|d| d.summary == "Invalid for_each argument")
            .unwrap_or_else(|| panic!("{for_each}: {text}"));
        let (file, line, _) = d
            .location(&config.sources)
            .unwrap_or_else(|| panic!("{for_each}: not located"));
        assert_eq!((file.as_str(), line), ("main.bf.hcl", 6), "{src}\n{text}");
        assert!(
            !text.to_lowercase().contains("hunter2"),
            "{for_each}: {text}"
        );
    }
}

/// The same refusal for a module call, whose key is part of the address of everything the
/// module makes (and of their ownership tags): a sensitive variable read directly, through
/// a local, or, in a module called by a module, through the input it was given.
#[tokio::test]
async fn a_sensitive_for_each_of_a_module_call_is_refused_at_validate() {
    let h = Harness::new();
    for (dir, text) in [
        (
            "leaf",
            "variable \"name\" {}\nresource \"test_thing\" \"t\" {\n  name = var.name\n}\n",
        ),
        (
            "mid",
            "variable \"names\" {}\nmodule \"leaf\" {\n  source   = \"../leaf\"\n  for_each = toset(var.names)\n  name     = each.key\n}\n",
        ),
    ] {
        std::fs::create_dir_all(h.dir.path().join(dir)).unwrap();
        std::fs::write(h.dir.path().join(dir).join("main.bf.hcl"), text).unwrap();
    }
    let head = "variable \"secret\" {\n  default   = \"hunter2\"\n  sensitive = true\n}\nlocals {\n  keys = [\"${var.secret}-x\"]\n}\n";
    let cases = [
        (
            "module \"m\" {\n  for_each = toset([var.secret])\n  source   = \"./leaf\"\n  name     = each.key\n}\n",
            ("main.bf.hcl", 9),
        ),
        (
            "module \"m\" {\n  for_each = { for k in local.keys : upper(k) => k }\n  source   = \"./leaf\"\n  name     = each.key\n}\n",
            ("main.bf.hcl", 9),
        ),
        (
            "module \"m\" {\n  source = \"./mid\"\n  names  = [var.secret]\n}\n",
            ("mid/main.bf.hcl", 4),
        ),
    ];
    for (call, at) in cases {
        let src = format!("{head}{call}");
        let (config, d) = load_sources(
            h.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.clone())],
        );
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        let engine = Engine::new(&config, &h.registry, &vars, "default");
        let diags = engine.validate().await;
        let text = diags.render_plain(&config.sources);
        let d = diags
            .iter()
            .find(|d| d.summary == "Invalid for_each argument")
            .unwrap_or_else(|| panic!("{call}: {text}"));
        let (file, line, _) = d
            .location(&config.sources)
            .unwrap_or_else(|| panic!("{call}: not located"));
        assert!(
            file.ends_with(at.0) && line == at.1,
            "{file}:{line}\n{src}\n{text}"
        );
        assert!(!text.to_lowercase().contains("hunter2"), "{call}: {text}");
    }
}

/// A value the service fills in on every whole write where the configuration is silent (a
/// default nobody set) is not shown as removed by an unrelated update, and the plan's
/// `after` says what the service will hold.
#[tokio::test]
async fn a_default_the_service_fills_in_is_not_shown_going_by_an_update() {
    let h = Harness::new();
    *h.svc.normalise.lock().unwrap() = Normalise {
        fill_label: true,
        ..Normalise::default()
    };
    let src = |tier: &str| {
        format!("resource \"test_whole\" \"x\" {{\n  name = \"whole\"\n  tier = \"{tier}\"\n}}\n")
    };
    h.run(&src("basic"), PlanMode::Normal, true).await;
    let (plan, report) = h.run(&src("premium"), PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    let c = &plan.changes[0];
    assert_eq!(c.action, Action::Update);
    let fields: Vec<String> = c.fields.iter().map(|f| format!("{:?}", f.path)).collect();
    assert!(fields.iter().all(|f| !f.contains("label")), "{fields:?}");
    assert_eq!(c.after.as_ref().unwrap().0["label"], Value::from("auto"));
    assert_eq!(object_named(&h, "whole").1["label"], Value::from("auto"));
    let (plan, _) = h.run(&src("premium"), PlanMode::Normal, false).await;
    assert!(pending(&plan).is_empty(), "{:?}", pending(&plan));
}

/// A nested value the configuration set and then took out is removed by a whole write: it
/// is not mistaken for one the service fills in (found by the SDK generator: a task's
/// max_retries taken out was planned as kept).
#[tokio::test]
async fn a_nested_value_taken_out_of_the_configuration_goes_with_a_whole_write() {
    let h = Harness::new();
    let src = |note: &str, tier: &str| {
        format!(
            "resource \"test_whole\" \"x\" {{\n  name = \"whole\"\n  tier = \"{tier}\"\n  item {{\n    key = \"a\"\n    {note}\n  }}\n}}\n"
        )
    };
    h.run(&src("note = \"n\"", "basic"), PlanMode::Normal, true)
        .await;
    let (plan, report) = h.run(&src("", "premium"), PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    let after = &plan.changes[0].after.as_ref().unwrap().0;
    let item = after["item"].as_list().unwrap()[0].as_object().unwrap();
    assert_eq!(
        item.get("note").cloned().unwrap_or(Value::Null),
        Value::Null,
        "{after:?}"
    );
    let held = object_named(&h, "whole").1;
    let held_item = held["item"].as_list().unwrap()[0].as_object().unwrap();
    assert_eq!(
        held_item.get("note").cloned().unwrap_or(Value::Null),
        Value::Null
    );
    let (plan, _) = h.run(&src("", "premium"), PlanMode::Normal, false).await;
    assert!(pending(&plan).is_empty(), "{:?}", pending(&plan));
}

/// The new object of a replacement keeps, of what `ignore_changes = all` covers, what the
/// configuration writes; what the service assigned the old object (`owner` here; a managed
/// volume's storage location on the real service, which refuses it in a create) is not
/// sent for the new one.
#[tokio::test]
async fn a_replacement_does_not_send_what_the_service_assigned_the_old_object() {
    let h = Harness::new();
    let src = |trigger: &str| {
        format!(
            "resource \"test_thing\" \"t\" {{ name = \"{trigger}\" }}\nresource \"test_whole\" \"w\" {{\n  name    = \"w\"\n  comment = \"kept\"\n  lifecycle {{\n    ignore_changes       = all\n    replace_triggered_by = [test_thing.t]\n  }}\n}}\n"
        )
    };
    let (_, report) = h.run(&src("t1"), PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    let (old_id, old) = object_named(&h, "w");
    assert_eq!(old.get("owner"), Some(&Value::from("service")));
    h.svc.writes.lock().unwrap().clear();
    // The trigger is renamed in place: the whole object is replaced.
    let (plan, report) = h.run(&src("t2"), PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty(), "{:?}", pending(&plan));
    let (new_id, _) = object_named(&h, "w");
    assert_ne!(new_id, old_id, "replaced");
    let creates: Vec<Object> = h
        .svc
        .writes
        .lock()
        .unwrap()
        .iter()
        .filter(|(i, w, _)| *i == new_id && *w == Write::Create)
        .map(|(_, _, c)| c.clone())
        .collect();
    assert_eq!(creates.len(), 1);
    assert!(
        creates[0].get("owner").is_none_or(Value::is_null),
        "the create sent the old object's owner: {:?}",
        creates[0]
    );
    assert_eq!(creates[0].get("comment"), Some(&Value::from("kept")));
}

/// `ignore_changes` names what the kind has: anything else is refused at validate, located
/// at the entry; an attribute (sensitive ones too), a nested block type and an attribute
/// path are fine.
#[tokio::test]
async fn ignore_changes_of_an_unknown_attribute_is_refused_at_validate() {
    let h = Harness::new();
    for (entry, expected) in [
        ("secret", None),
        (
            "colour",
            Some("ignore_changes names colour, which test_thing does not have"),
        ),
        ("item", None),
        ("comment", None),
        ("tags[0]", None),
    ] {
        let src = format!(
            "resource \"test_thing\" \"x\" {{\n  name = \"x\"\n  lifecycle {{\n    ignore_changes = [{entry}]\n  }}\n}}\n"
        );
        let (config, d) = load_sources(
            h.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.clone())],
        );
        assert!(!d.has_errors(), "{entry}");
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        let engine = Engine::new(&config, &h.registry, &vars, "default");
        let diags = engine.validate().await;
        let text = diags.render_plain(&config.sources);
        match expected {
            Some(summary) => {
                let d = diags
                    .iter()
                    .find(|d| d.summary.ends_with(summary))
                    .unwrap_or_else(|| panic!("{entry}: {text}"));
                assert!(d.span.is_some(), "{entry}: located");
            }
            None => assert!(!diags.has_errors(), "{entry}: {text}"),
        }
        // A sensitive attribute is kept only until a write must carry it: said at validate.
        let warned = diags.iter().any(|d| {
            d.summary.ends_with(
                "ignore_changes of the sensitive attribute secret holds only until the object is written",
            )
        });
        assert_eq!(warned, entry == "secret", "{entry}: {text}");
    }
}

/// The plan of `src` against the state of `h`, refreshed: it must be refused; its
/// diagnostics as text.
async fn refused_plan(h: &Harness, src: String) -> String {
    let (config, _) = load_sources(
        h.dir.path(),
        vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src)],
    );
    let (vars, _) = resolve(&config, &VarInputs::default(), None);
    let engine = Engine::new(&config, &h.registry, &vars, "default");
    let state = h.state().await;
    let (planned, diags) = engine
        .plan(
            &state,
            &PlanRequest {
                refresh: true,
                ..Default::default()
            },
        )
        .await;
    let text = diags.render_plain(&config.sources);
    assert!(planned.is_none(), "refused: {text}");
    text
}

/// create_before_destroy spreads to a replaced dependency (its new object must exist before
/// the dependent's new one); when that dependency keeps a name only one object may hold,
/// its create would fail on its old object: the plan is refused, naming it, before anything
/// is made.
#[tokio::test]
async fn a_create_first_replacement_spread_to_a_dependency_that_keeps_its_name_is_refused() {
    let h = Harness::new();
    let src = |v: &str| {
        format!(
            r#"
resource "test_thing" "t" {{ name = "t{v}" }}
resource "test_thing" "p" {{
  name = "p"
  lifecycle {{ replace_triggered_by = [test_thing.t] }}
}}
resource "test_thing" "c" {{
  name   = "c{v}"
  parent = test_thing.p.id
  lifecycle {{ create_before_destroy = true }}
}}
"#
        )
    };
    let (_, report) = h.run(&src("1"), PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    let text = refused_plan(&h, src("2")).await;
    assert!(
        text.contains("test_thing.p: create_before_destroy needs a new name"),
        "{text}"
    );
}

/// A replacement whose new object would take a name another object holds is refused, and
/// the refusal says who holds it (here this state, under another address), as a create's
/// does.
#[tokio::test]
async fn a_replacement_into_a_taken_name_names_who_holds_it() {
    let h = Harness::new();
    let src = |t: &str, a: &str| {
        format!(
            r#"
resource "test_thing" "t" {{ name = "{t}" }}
resource "test_thing" "held" {{ name = "held" }}
resource "test_thing" "a" {{
  name = "{a}"
  lifecycle {{ replace_triggered_by = [test_thing.t] }}
}}
"#
        )
    };
    let (_, report) = h.run(&src("t1", "a"), PlanMode::Normal, true).await;
    assert!(report.unwrap().failed.is_empty());
    let text = refused_plan(&h, src("t2", "held")).await;
    assert!(
        text.contains("test_thing.a: the name is taken by"),
        "{text}"
    );
    assert!(
        text.contains("this state manages it as test_thing.held"),
        "the holder is named: {text}"
    );
}
