//! The machine-readable plan in the shape of `terraform show -json` (plan format 1.2), so
//! tools written for Terraform plans (checkov, terraform-compliance, OPA policies) read it
//! unchanged: planned values, prior state, configuration, variables, resource changes and
//! drift. Values are laid out as the Terraform provider lays out the same resources: keys
//! in order, every nested block a list (a single block a one-element list). brickform's own
//! additions (`environment`, `mode`, `summary`, `change.fields`, …) sit beside Terraform's
//! fields, which consumers ignore when they do not know them. The schema is documented in
//! `docs/plan-json.md` and `docs/plan-json.schema.json`.
//!
//! Unlike Terraform, sensitive values are never written: they are `null` in `before`/`after`
//! and flagged in `before_sensitive`/`after_sensitive`, and sensitive variables and outputs
//! have no value.

use super::model::{
    Action, ActionReason, Drift, FieldChange, FieldReason, InstanceKey, Mode, OutputChange, Plan,
    PlanMode, ResourceChange, SerValue,
};
use crate::addrs::ModuleInstance;
use crate::value::{PathStep, Value};
use serde_json::{Map, Value as Json, json};

/// The `format_version` written; bumped on incompatible changes (see docs/plan-json.md).
pub const FORMAT_VERSION: &str = "1.2";

/// `terraform_version`: the Terraform release whose plan format this follows (tools check
/// it against the releases they support). brickform's own version is `brickform_version`.
pub const TERRAFORM_VERSION: &str = "1.9.0";

/// Renders a plan as JSON.
pub fn render(plan: &Plan) -> Json {
    let s = plan.summary();
    let by_address = plan.changes_by_address();
    let ctx = &plan.context;
    let mut o = Map::new();
    o.insert("format_version".into(), json!(FORMAT_VERSION));
    o.insert("terraform_version".into(), json!(TERRAFORM_VERSION));
    o.insert("brickform_version".into(), json!(env!("CARGO_PKG_VERSION")));
    o.insert("environment".into(), json!(plan.environment));
    o.insert(
        "mode".into(),
        json!(match plan.mode {
            PlanMode::Normal => "normal",
            PlanMode::Destroy => "destroy",
            PlanMode::RefreshOnly => "refresh-only",
        }),
    );
    o.insert("targeted".into(), json!(plan.targeted));
    o.insert(
        "variables".into(),
        Json::Object(
            ctx.variables
                .iter()
                .map(|(k, v)| (k.clone(), json!({ "value": sorted_json(v.0.to_json()) })))
                .collect(),
        ),
    );
    o.insert("planned_values".into(), planned_values(plan, &by_address));
    o.insert(
        "resource_drift".into(),
        Json::Array(plan.drift.iter().map(|d| drift(d, plan)).collect()),
    );
    o.insert(
        "resource_changes".into(),
        Json::Array(
            by_address
                .iter()
                .map(|c| resource_change(c, plan))
                .collect(),
        ),
    );
    o.insert(
        "output_changes".into(),
        Json::Object(
            plan.outputs
                .iter()
                .map(|o| (o.name.clone(), output_change(o)))
                .collect(),
        ),
    );
    if let Some(prior) = prior_state(plan, &by_address) {
        o.insert("prior_state".into(), prior);
    }
    if !ctx.configuration.is_null() {
        o.insert("configuration".into(), ctx.configuration.clone());
    }
    o.insert(
        "relevant_attributes".into(),
        Json::Array(ctx.relevant_attributes.clone()),
    );
    if !ctx.timestamp.is_empty() {
        o.insert("timestamp".into(), json!(ctx.timestamp));
    }
    o.insert("applyable".into(), json!(plan.has_changes()));
    o.insert("complete".into(), json!(!plan.targeted));
    o.insert("errored".into(), json!(false));
    o.insert(
        "summary".into(),
        json!({
            "add": s.add,
            "change": s.change,
            "destroy": s.destroy,
            "import": s.import,
            "forget": s.forget,
            "moved": s.moved,
        }),
    );
    o.insert("has_changes".into(), json!(plan.has_changes()));
    o.insert("warnings".into(), json!(plan.warnings));
    // brickform addition: what the changes do to data, for policies to refuse; present
    // when there is something to say.
    if !plan.data_impact.is_empty() {
        o.insert("data_impact".into(), json!(plan.data_impact));
    }
    Json::Object(o)
}

/// The provider's source address (`registry.terraform.io/NAMESPACE/TYPE`), of an aliased
/// configuration (`NAME.ALIAS`) too; its local name for a plan saved without one.
fn provider_address(plan: &Plan, key: &str) -> Json {
    let name = crate::addrs::ProviderConfigAddr::name_of(key);
    json!(
        plan.context
            .providers
            .get(name)
            .map(String::as_str)
            .unwrap_or(name)
    )
}

/// How Terraform lays values out: every nested block a list, so a single block (an object
/// here) becomes a one-element list and an absent one an empty list. `blocks` are the
/// block paths without list indexes.
struct Blocks<'a>(&'a [Vec<String>]);

impl Blocks<'_> {
    /// `v`, found at `path` (without list indexes), laid out as Terraform lays it out, keys
    /// in order.
    fn layout(&self, v: Json) -> Json {
        self.walk(v, &mut Vec::new(), true)
    }

    /// Like [`Blocks::layout`], for the marker objects (`after_unknown`, `*_sensitive`),
    /// where an absent block is not a value.
    fn layout_markers(&self, v: Json) -> Json {
        self.walk(v, &mut Vec::new(), false)
    }

    /// A value found at `at` (a field's), laid out likewise.
    fn layout_at(&self, v: Json, at: &[PathStep]) -> Json {
        let mut path: Vec<String> = at
            .iter()
            .filter_map(|s| match s {
                PathStep::Key(k) => Some(k.clone()),
                PathStep::Index(_) => None,
            })
            .collect();
        let element = matches!(at.last(), Some(PathStep::Index(_)));
        let is_block = !element && self.0.contains(&path);
        match self.walk(v, &mut path, true) {
            v @ Json::Object(_) if is_block => Json::Array(vec![v]),
            v => v,
        }
    }

    fn walk(&self, v: Json, path: &mut Vec<String>, values: bool) -> Json {
        match v {
            Json::Object(m) => {
                let mut out = Map::new();
                for (k, e) in m {
                    path.push(k.clone());
                    let is_block = self.0.contains(path);
                    let e = self.walk(e, path, values);
                    let e = match e {
                        Json::Object(_) if is_block => Json::Array(vec![e]),
                        Json::Null if is_block && values => Json::Array(Vec::new()),
                        e => e,
                    };
                    path.pop();
                    out.insert(k, e);
                }
                Json::Object(sorted(out))
            }
            Json::Array(l) => {
                Json::Array(l.into_iter().map(|e| self.walk(e, path, values)).collect())
            }
            other => other,
        }
    }

    /// A path into a value, laid out likewise: a single block's attributes are reached
    /// through its element 0.
    fn path(&self, path: &[PathStep]) -> Vec<PathStep> {
        let mut out = Vec::new();
        let mut keys: Vec<String> = Vec::new();
        for (i, step) in path.iter().enumerate() {
            out.push(step.clone());
            if let PathStep::Key(k) = step {
                keys.push(k.clone());
                let is_block = self.0.contains(&keys);
                if is_block && matches!(path.get(i + 1), Some(PathStep::Key(_))) {
                    out.push(PathStep::Index(0));
                }
            }
        }
        out
    }
}

/// `planned_values`: every object as it will be once the plan is applied (unknown values
/// left out), and the outputs. After a destroy nothing is left, data sources included.
fn planned_values(plan: &Plan, by_address: &[&ResourceChange]) -> Json {
    let resources: Vec<(&ModuleInstance, Json)> = by_address
        .iter()
        .filter(|_| plan.mode != PlanMode::Destroy)
        .filter(|c| !c.deposed && !matches!(c.action, Action::Delete | Action::Forget))
        .filter_map(|c| {
            let value = match c.action {
                Action::NoOp | Action::Read => c.after.as_ref().or(c.before.as_ref()),
                _ => c.after.as_ref(),
            }?;
            let value = completed(plan, c, &value.0);
            Some((c.module(), state_resource(c, plan, &value, true)))
        })
        .collect();
    let outputs: Map<String, Json> = plan
        .outputs
        .iter()
        .filter(|o| o.action != Action::Delete)
        .filter_map(|o| Some((o.name.clone(), output_value(o, o.after.as_ref()?))))
        .collect();
    let mut m = Map::new();
    if !outputs.is_empty() {
        m.insert("outputs".into(), Json::Object(outputs));
    }
    m.insert("root_module".into(), module_tree(resources));
    Json::Object(m)
}

/// A module of `planned_values` or `prior_state` as Terraform writes it: its own resources,
/// then `child_modules`, one per module instance inside it (by address), each the same.
fn module_tree(resources: Vec<(&ModuleInstance, Json)>) -> Json {
    fn build(at: &ModuleInstance, all: &[(&ModuleInstance, Json)]) -> Map<String, Json> {
        let mut m = Map::new();
        if !at.is_root() {
            m.insert("address".into(), json!(at.to_string()));
        }
        let own: Vec<Json> = all
            .iter()
            .filter(|(module, _)| *module == at)
            .map(|(_, r)| r.clone())
            .collect();
        if !own.is_empty() {
            m.insert("resources".into(), Json::Array(own));
        }
        let depth = at.0.len();
        let mut children: Vec<ModuleInstance> = all
            .iter()
            .filter(|(module, _)| module.0.len() > depth && module.0.starts_with(&at.0))
            .map(|(module, _)| ModuleInstance(module.0[..=depth].to_vec()))
            .collect();
        children.sort();
        children.dedup();
        if !children.is_empty() {
            m.insert(
                "child_modules".into(),
                Json::Array(
                    children
                        .iter()
                        .map(|c| Json::Object(build(c, all)))
                        .collect(),
                ),
            );
        }
        m
    }
    Json::Object(build(&ModuleInstance::root(), &resources))
}

/// `prior_state`: the objects and outputs as they are before the plan is applied (after
/// refresh); absent when there are none.
fn prior_state(plan: &Plan, by_address: &[&ResourceChange]) -> Option<Json> {
    let resources: Vec<(&ModuleInstance, Json)> = by_address
        .iter()
        .filter_map(|c| {
            let before = c.before.as_ref()?;
            let mut r = state_resource(c, plan, &completed(plan, c, &before.0), false);
            if c.deposed
                && let (Json::Object(m), Some(id)) = (&mut r, &c.id)
            {
                m.insert("deposed_key".into(), json!(id));
            }
            Some((c.module(), r))
        })
        .collect();
    let outputs: Map<String, Json> = plan
        .outputs
        .iter()
        .filter_map(|o| Some((o.name.clone(), output_value(o, o.before.as_ref()?))))
        .collect();
    if resources.is_empty() && outputs.is_empty() {
        return None;
    }
    let mut values = Map::new();
    if !outputs.is_empty() {
        values.insert("outputs".into(), Json::Object(outputs));
    }
    values.insert("root_module".into(), module_tree(resources));
    Some(json!({
        "format_version": "1.0",
        "terraform_version": TERRAFORM_VERSION,
        "values": values,
    }))
}

/// An object of a change as Terraform's JSON writes it: every attribute its kind declares.
fn completed(plan: &Plan, c: &ResourceChange, o: &crate::value::Object) -> Value {
    plan.context.completed(c.mode(), c.type_name(), o)
}

/// One object of `planned_values` or `prior_state`.
fn state_resource(c: &ResourceChange, plan: &Plan, value: &Value, planned: bool) -> Json {
    let sensitive = |p: &[PathStep]| c.is_sensitive(p);
    let blocks = Blocks(&c.block_paths);
    let redacted = redacted_value(value, &mut Vec::new(), &sensitive);
    let values = if planned {
        omit_unknowns(&redacted)
    } else {
        redacted.to_json()
    };
    let marks = match sensitive_as_bool(value, &mut Vec::new(), &sensitive) {
        Json::Object(m) => Json::Object(m),
        _ => json!({}),
    };
    let mut o = Map::new();
    o.insert("address".into(), json!(c.address()));
    o.insert("mode".into(), mode_json(c.mode()));
    o.insert("type".into(), json!(c.type_name()));
    o.insert("name".into(), json!(c.name()));
    if let Some(i) = c.key() {
        o.insert("index".into(), index_json(i));
    }
    o.insert("provider_name".into(), provider_address(plan, &c.provider));
    o.insert("schema_version".into(), json!(0));
    o.insert("values".into(), blocks.layout(values));
    o.insert("sensitive_values".into(), blocks.layout_markers(marks));
    Json::Object(o)
}

/// An output as `planned_values` and `prior_state` hold it: no value when it is sensitive
/// or not known yet.
fn output_value(o: &OutputChange, v: &SerValue) -> Json {
    let mut m = Map::new();
    m.insert("sensitive".into(), json!(o.sensitive));
    if !o.sensitive && !v.0.contains_unknown() {
        m.insert("value".into(), sorted_json(v.0.to_json()));
    }
    Json::Object(m)
}

fn resource_change(rc: &ResourceChange, plan: &Plan) -> Json {
    let sensitive = |p: &[PathStep]| rc.is_sensitive(p);
    let blocks = Blocks(&rc.block_paths);
    let before = rc.before.as_ref().map(|o| completed(plan, rc, &o.0));
    let after = match rc.action {
        Action::Delete | Action::Forget => None,
        _ => rc.after.as_ref().map(|o| completed(plan, rc, &o.0)),
    };
    let mut change = values_json(
        rc.action.json_actions(),
        before.as_ref(),
        after.as_ref(),
        &sensitive,
        &blocks,
    );
    let replace_paths: Vec<Json> = rc
        .fields
        .iter()
        .filter(|f| f.forces_replacement)
        .map(|f| path_json(&blocks.path(&f.path)))
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
        Json::Array(
            rc.fields
                .iter()
                .map(|f| field(f, &sensitive, &blocks))
                .collect(),
        ),
    );
    let mut o = Map::new();
    o.insert("address".into(), json!(rc.address()));
    if !rc.module().is_root() {
        o.insert("module_address".into(), json!(rc.module().to_string()));
    }
    if let Some(prev) = &rc.moved_from {
        o.insert("previous_address".into(), json!(prev));
    }
    if rc.deposed {
        // Terraform marks a deposed object's change with its deposed key; ours is its id.
        o.insert("deposed".into(), json!(rc.id));
    }
    o.insert("mode".into(), mode_json(rc.mode()));
    o.insert("type".into(), json!(rc.type_name()));
    o.insert("name".into(), json!(rc.name()));
    if let Some(i) = rc.key() {
        o.insert("index".into(), index_json(i));
    }
    o.insert("provider_name".into(), provider_address(plan, &rc.provider));
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
    let blocks = Blocks(&d.block_paths);
    let (before, after) = d.partial_objects();
    let before = Value::object(before);
    let after = (!d.deleted).then_some(Value::object(after));
    let actions: &[&str] = if d.deleted { &["delete"] } else { &["update"] };
    let mut change = values_json(actions, Some(&before), after.as_ref(), &sensitive, &blocks);
    change.insert(
        "fields".into(),
        Json::Array(
            d.fields
                .iter()
                .map(|f| field(f, &sensitive, &blocks))
                .collect(),
        ),
    );
    // The drift record does not carry the instance key or provider; the planned change for
    // the same address does.
    let planned = plan.changes.iter().find(|c| c.addr == d.address);
    let mut o = Map::new();
    o.insert("address".into(), json!(d.address.to_string()));
    let module = &d.address.resource.module;
    if !module.is_root() {
        o.insert("module_address".into(), json!(module.to_string()));
    }
    o.insert("mode".into(), mode_json(d.mode()));
    o.insert("type".into(), json!(d.type_name));
    o.insert("name".into(), json!(d.name));
    if let Some(i) = planned.and_then(|c| c.key()) {
        o.insert("index".into(), index_json(i));
    }
    if let Some(c) = planned {
        o.insert("provider_name".into(), provider_address(plan, &c.provider));
    }
    o.insert("change".into(), Json::Object(change));
    Json::Object(o)
}

fn output_change(o: &OutputChange) -> Json {
    let hide = o.sensitive;
    let sensitive = |_: &[PathStep]| hide;
    let before = o.before.as_ref().map(|v| &v.0);
    let after = o.after.as_ref().map(|v| &v.0);
    let mut change = values_json(
        o.action.json_actions(),
        before,
        after,
        &sensitive,
        &Blocks(&[]),
    );
    if hide {
        // Terraform writes `true` for a sensitive output even when a side is absent.
        change.insert("before_sensitive".into(), json!(true));
        change.insert("after_sensitive".into(), json!(true));
    }
    Json::Object(change)
}

/// `before`, `after`, `after_unknown`, `before_sensitive`, `after_sensitive` by Terraform's
/// rules, with sensitive values replaced by null, laid out as [`Blocks`] says.
fn values_json(
    actions: &[&str],
    before: Option<&Value>,
    after: Option<&Value>,
    sensitive: &dyn Fn(&[PathStep]) -> bool,
    blocks: &Blocks,
) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("actions".into(), json!(actions));
    m.insert(
        "before".into(),
        before.map_or(Json::Null, |v| {
            blocks.layout(redacted(v, &mut Vec::new(), sensitive))
        }),
    );
    m.insert(
        "after".into(),
        after.map_or(Json::Null, |v| {
            blocks.layout(omit_unknowns(&redacted_value(
                v,
                &mut Vec::new(),
                sensitive,
            )))
        }),
    );
    m.insert(
        "after_unknown".into(),
        match after {
            Some(v) if v.contains_unknown() => blocks.layout_markers(unknown_as_bool(v)),
            _ => json!({}),
        },
    );
    m.insert(
        "before_sensitive".into(),
        before.map_or(json!(false), |v| {
            blocks.layout_markers(sensitive_as_bool(v, &mut Vec::new(), sensitive))
        }),
    );
    m.insert(
        "after_sensitive".into(),
        after.map_or(json!(false), |v| {
            blocks.layout_markers(sensitive_as_bool(v, &mut Vec::new(), sensitive))
        }),
    );
    m
}

/// One field of brickform's `change.fields`, its path laid out as [`Blocks`] says (its
/// values are the field's own, as the path reaches them).
fn field(f: &FieldChange, sensitive: &dyn Fn(&[PathStep]) -> bool, blocks: &Blocks) -> Json {
    let hide = f.sensitive || sensitive(&f.path);
    let val = |v: &Option<SerValue>| -> Json {
        match v {
            Some(v) if !hide => {
                let mut p = f.path.clone();
                blocks.layout_at(
                    omit_unknowns(&redacted_value(&v.0, &mut p, sensitive)),
                    &f.path,
                )
            }
            _ => Json::Null,
        }
    };
    let after_unknown = match &f.after {
        Some(v) if v.0.contains_unknown() => unknown_as_bool(&v.0),
        _ => json!(false),
    };
    json!({
        "path": path_json(&blocks.path(&f.path)),
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
                .collect::<crate::value::Object>()
                .into(),
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

pub(crate) fn sorted(m: Map<String, Json>) -> Map<String, Json> {
    let mut entries: Vec<(String, Json)> = m.into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

/// `v` with every object's keys in order, as Terraform writes them.
pub(crate) fn sorted_json(v: Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(sorted(
            m.into_iter().map(|(k, v)| (k, sorted_json(v))).collect(),
        )),
        Json::Array(l) => Json::Array(l.into_iter().map(sorted_json).collect()),
        other => other,
    }
}
