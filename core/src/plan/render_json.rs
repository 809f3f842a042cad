//! The machine-readable plan, close to `terraform show -json` (format version 1.2) so policy
//! tools written for Terraform plans apply. The schema is documented in `docs/plan-json.md`
//! and `docs/plan-json.schema.json`.
//!
//! Unlike Terraform, sensitive values are never written: they are `null` in `before`/`after`
//! and flagged in `before_sensitive`/`after_sensitive`.

use super::model::{
    Action, ActionReason, Drift, FieldChange, FieldReason, InstanceKey, Mode, OutputChange, Plan,
    PlanMode, ResourceChange, SerValue,
};
use crate::value::{PathStep, Value};
use serde_json::{Map, Value as Json, json};

/// The `format_version` written; bumped on incompatible changes (see docs/plan-json.md).
pub const FORMAT_VERSION: &str = "1.2";

/// Renders a plan as JSON.
pub fn render(plan: &Plan) -> Json {
    let s = plan.summary();
    let by_address = plan.changes_by_address();
    json!({
        "format_version": FORMAT_VERSION,
        "brickform_version": env!("CARGO_PKG_VERSION"),
        "environment": plan.environment,
        "mode": match plan.mode {
            PlanMode::Normal => "normal",
            PlanMode::Destroy => "destroy",
            PlanMode::RefreshOnly => "refresh-only",
        },
        "targeted": plan.targeted,
        "resource_drift": plan.drift.iter().map(|d| drift(d, plan)).collect::<Vec<_>>(),
        "resource_changes": by_address.iter().map(|c| resource_change(c)).collect::<Vec<_>>(),
        "output_changes": plan.outputs.iter().map(|o| (o.name.clone(), output_change(o))).collect::<Map<_, _>>(),
        "summary": {
            "add": s.add,
            "change": s.change,
            "destroy": s.destroy,
            "import": s.import,
            "forget": s.forget,
            "moved": s.moved,
        },
        "has_changes": plan.has_changes(),
        "warnings": plan.warnings,
        "errored": false,
    })
}

fn resource_change(rc: &ResourceChange) -> Json {
    let sensitive = |p: &[PathStep]| rc.is_sensitive(p);
    let before = rc.before.as_ref().map(|o| Value::Object(o.0.clone()));
    let after = match rc.action {
        Action::Delete | Action::Forget => None,
        _ => rc.after.as_ref().map(|o| Value::Object(o.0.clone())),
    };
    let mut change = values_json(
        rc.action.json_actions(),
        before.as_ref(),
        after.as_ref(),
        &sensitive,
    );
    let replace_paths: Vec<Json> = rc
        .fields
        .iter()
        .filter(|f| f.forces_replacement)
        .map(|f| path_json(&f.path))
        .collect();
    if !replace_paths.is_empty() {
        change.insert("replace_paths".into(), Json::Array(replace_paths));
    }
    if let Some(id) = &rc.importing {
        change.insert("importing".into(), json!({ "id": id }));
    }
    if let Some(c) = &rc.contents {
        change.insert(
            "deletes_contents".into(),
            json!({ "managed": c.managed, "unmanaged": c.unmanaged }),
        );
    }
    if let Some(c) = &rc.container {
        change.insert("container".into(), json!(c));
    }
    change.insert(
        "fields".into(),
        Json::Array(rc.fields.iter().map(|f| field(f, &sensitive)).collect()),
    );
    let mut o = Map::new();
    o.insert("address".into(), json!(rc.address));
    if let Some(prev) = &rc.moved_from {
        o.insert("previous_address".into(), json!(prev));
    }
    if rc.deposed {
        // Terraform marks a deposed object's change with its deposed key; ours is its id.
        o.insert("deposed".into(), json!(rc.id));
    }
    o.insert("mode".into(), mode_json(rc.mode));
    o.insert("type".into(), json!(rc.type_name));
    o.insert("name".into(), json!(rc.name));
    if let Some(i) = &rc.index {
        o.insert("index".into(), index_json(i));
    }
    o.insert("provider_name".into(), json!(rc.provider));
    o.insert("change".into(), Json::Object(change));
    if let Some(r) = rc.reason {
        o.insert("action_reason".into(), reason_json(r));
    }
    if !rc.dependencies.is_empty() {
        o.insert("depends_on".into(), json!(rc.dependencies));
    }
    Json::Object(o)
}

fn drift(d: &Drift, plan: &Plan) -> Json {
    let sensitive = |p: &[PathStep]| d.is_sensitive(p);
    let (before, after) = d.partial_objects();
    let before = Value::Object(before);
    let after = (!d.deleted).then_some(Value::Object(after));
    let actions: &[&str] = if d.deleted { &["delete"] } else { &["update"] };
    let mut change = values_json(actions, Some(&before), after.as_ref(), &sensitive);
    change.insert(
        "fields".into(),
        Json::Array(d.fields.iter().map(|f| field(f, &sensitive)).collect()),
    );
    // The drift record does not carry the instance key or provider; the planned change for
    // the same address does.
    let planned = plan.changes.iter().find(|c| c.address == d.address);
    let mut o = Map::new();
    o.insert("address".into(), json!(d.address));
    o.insert("mode".into(), mode_json(d.mode()));
    o.insert("type".into(), json!(d.type_name));
    o.insert("name".into(), json!(d.name));
    if let Some(i) = planned.and_then(|c| c.index.as_ref()) {
        o.insert("index".into(), index_json(i));
    }
    if let Some(c) = planned {
        o.insert("provider_name".into(), json!(c.provider));
    }
    o.insert("change".into(), Json::Object(change));
    Json::Object(o)
}

fn output_change(o: &OutputChange) -> Json {
    let hide = o.sensitive;
    let sensitive = |_: &[PathStep]| hide;
    let before = o.before.as_ref().map(|v| &v.0);
    let after = o.after.as_ref().map(|v| &v.0);
    let mut change = values_json(o.action.json_actions(), before, after, &sensitive);
    if hide {
        // Terraform writes `true` for a sensitive output even when a side is absent.
        change.insert("before_sensitive".into(), json!(true));
        change.insert("after_sensitive".into(), json!(true));
    }
    Json::Object(change)
}

/// `before`, `after`, `after_unknown`, `before_sensitive`, `after_sensitive` by Terraform's
/// rules, with sensitive values replaced by null.
fn values_json(
    actions: &[&str],
    before: Option<&Value>,
    after: Option<&Value>,
    sensitive: &dyn Fn(&[PathStep]) -> bool,
) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("actions".into(), json!(actions));
    m.insert(
        "before".into(),
        before.map_or(Json::Null, |v| redacted(v, &mut Vec::new(), sensitive)),
    );
    m.insert(
        "after".into(),
        after.map_or(Json::Null, |v| {
            omit_unknowns(&redacted_value(v, &mut Vec::new(), sensitive))
        }),
    );
    m.insert(
        "after_unknown".into(),
        match after {
            Some(v) if v.contains_unknown() => unknown_as_bool(v),
            _ => json!({}),
        },
    );
    m.insert(
        "before_sensitive".into(),
        before.map_or(json!(false), |v| {
            sensitive_as_bool(v, &mut Vec::new(), sensitive)
        }),
    );
    m.insert(
        "after_sensitive".into(),
        after.map_or(json!(false), |v| {
            sensitive_as_bool(v, &mut Vec::new(), sensitive)
        }),
    );
    m
}

fn field(f: &FieldChange, sensitive: &dyn Fn(&[PathStep]) -> bool) -> Json {
    let hide = f.sensitive || sensitive(&f.path);
    let val = |v: &Option<SerValue>| -> Json {
        match v {
            Some(v) if !hide => {
                let mut p = f.path.clone();
                omit_unknowns(&redacted_value(&v.0, &mut p, sensitive))
            }
            _ => Json::Null,
        }
    };
    let after_unknown = match &f.after {
        Some(v) if v.0.contains_unknown() => unknown_as_bool(&v.0),
        _ => json!(false),
    };
    json!({
        "path": path_json(&f.path),
        "before": val(&f.before),
        "after": val(&f.after),
        "after_unknown": after_unknown,
        "live": val(&f.live),
        "reason": match f.reason {
            FieldReason::Configuration => "configuration",
            FieldReason::Drift => "drift",
            FieldReason::KnownAfterApply => "known_after_apply",
            FieldReason::Create => "create",
            FieldReason::Delete => "delete",
        },
        "forces_replacement": f.forces_replacement,
        "sensitive": hide,
    })
}

/// The value with every sensitive subtree replaced by null. Unknowns stay, for
/// [`omit_unknowns`] and [`unknown_as_bool`] to see.
fn redacted_value(
    v: &Value,
    path: &mut Vec<PathStep>,
    sensitive: &dyn Fn(&[PathStep]) -> bool,
) -> Value {
    if sensitive(path) {
        return Value::Null;
    }
    match v {
        Value::List(l) => Value::List(
            l.iter()
                .enumerate()
                .map(|(i, e)| {
                    path.push(PathStep::Index(i));
                    let r = redacted_value(e, path, sensitive);
                    path.pop();
                    r
                })
                .collect(),
        ),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, e)| {
                    path.push(PathStep::Key(k.clone()));
                    let r = redacted_value(e, path, sensitive);
                    path.pop();
                    (k.clone(), r)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn redacted(v: &Value, path: &mut Vec<PathStep>, sensitive: &dyn Fn(&[PathStep]) -> bool) -> Json {
    redacted_value(v, path, sensitive).to_json()
}

/// Terraform's `omitUnknowns`: unknown object attributes are left out, unknown list elements
/// become null so positions hold.
fn omit_unknowns(v: &Value) -> Json {
    match v {
        Value::Unknown => Json::Null,
        Value::List(l) => Json::Array(l.iter().map(omit_unknowns).collect()),
        Value::Object(o) => Json::Object(
            o.iter()
                .filter(|(_, e)| !matches!(e, Value::Unknown))
                .map(|(k, e)| (k.clone(), omit_unknowns(e)))
                .collect(),
        ),
        other => other.to_json(),
    }
}

/// Terraform's `unknownAsBool`: `true` for unknown leaves; known object attributes are
/// omitted, list elements keep their positions with `false`.
fn unknown_as_bool(v: &Value) -> Json {
    match v {
        Value::Unknown => json!(true),
        Value::List(l) => Json::Array(l.iter().map(unknown_as_bool).collect()),
        Value::Object(o) => Json::Object(
            o.iter()
                .map(|(k, e)| (k.clone(), unknown_as_bool(e)))
                .filter(|(_, b)| *b != json!(false))
                .collect(),
        ),
        _ => json!(false),
    }
}

/// Terraform's `SensitiveAsBool`: the same shape as [`unknown_as_bool`], for sensitive leaves.
fn sensitive_as_bool(
    v: &Value,
    path: &mut Vec<PathStep>,
    sensitive: &dyn Fn(&[PathStep]) -> bool,
) -> Json {
    if sensitive(path) {
        return json!(true);
    }
    match v {
        Value::List(l) => Json::Array(
            l.iter()
                .enumerate()
                .map(|(i, e)| {
                    path.push(PathStep::Index(i));
                    let r = sensitive_as_bool(e, path, sensitive);
                    path.pop();
                    r
                })
                .collect(),
        ),
        Value::Object(o) => Json::Object(
            o.iter()
                .filter_map(|(k, e)| {
                    path.push(PathStep::Key(k.clone()));
                    let r = sensitive_as_bool(e, path, sensitive);
                    path.pop();
                    (r != json!(false)).then(|| (k.clone(), r))
                })
                .collect(),
        ),
        _ => json!(false),
    }
}

fn path_json(path: &[PathStep]) -> Json {
    Json::Array(
        path.iter()
            .map(|s| match s {
                PathStep::Key(k) => json!(k),
                PathStep::Index(i) => json!(i),
            })
            .collect(),
    )
}

fn index_json(i: &InstanceKey) -> Json {
    match i {
        InstanceKey::Index(n) => json!(n),
        InstanceKey::Key(k) => json!(k),
    }
}

fn mode_json(m: Mode) -> Json {
    json!(match m {
        Mode::Managed => "managed",
        Mode::Data => "data",
    })
}

fn reason_json(r: ActionReason) -> Json {
    // The serde names are Terraform's `action_reason` values where Terraform has one.
    serde_json::to_value(r).unwrap_or(Json::Null)
}
