//! Building a plan: evaluate the configuration in dependency order, expand `count` and
//! `for_each`, refresh what state knows, and compare (docs/architecture.md, Plan).

use super::world::World;
use super::{Engine, InstanceSpec, PlanRequest, Planned};
use crate::addrs::{ConfigNode, base_of, instance_address, key_of};
use crate::graph::{self, ConfigGraph};
use crate::lang::decode::Decoder;
use crate::lang::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::eval::Evaluator;
use crate::lang::load::{IgnoreChanges, Resource};
use crate::limits::MAX_INSTANCES;
use crate::plan::diff::{DiffInput, Prior, diff, normalize_object};
use crate::plan::{
    Action, ActionReason, Drift, FieldChange, FieldReason, InstanceKey, Mode, OutputChange, Plan,
    PlanMode, ResourceChange, SerObject, SerValue,
};
use crate::provider::{OpContext, Remote, Schema};
use crate::value::{Object, PathStep, Value};
use brickform_state::StateDocument;
use std::collections::{BTreeMap, HashSet};

/// The instances a resource expands to, with their `each.value`.
pub(super) fn expand(
    r: &Resource,
    world: &World,
    base_dir: &std::path::Path,
    diags: &mut Diagnostics,
) -> Option<Vec<(Option<InstanceKey>, Option<Value>)>> {
    if let Some(c) = &r.count {
        let v = match Evaluator::new(world, base_dir).eval(&c.expr) {
            Ok(v) => v,
            Err(e) => {
                diags.push(e.to_diagnostic(c.file));
                return None;
            }
        };
        return match v {
            Value::Unknown => {
                diags.push(
                    Diagnostic::error("Invalid count argument")
                        .at(c.span())
                        .detail("The \"count\" value depends on resource attributes that cannot be determined until apply, so brickform cannot predict how many instances will be created. Use values known at plan time (variables, locals) for count."),
                );
                None
            }
            v => match v.as_i64() {
                Some(n) if n >= 0 && n as u64 > MAX_INSTANCES as u64 => {
                    diags.push(too_many_instances(c.span(), "count", n as u64));
                    None
                }
                Some(n) if n >= 0 => Some(
                    (0..n as usize)
                        .map(|i| (Some(InstanceKey::Index(i)), None))
                        .collect(),
                ),
                _ => {
                    diags.push(
                        Diagnostic::error("Invalid count argument")
                            .at(c.span())
                            .detail(format!("The given \"count\" argument value is unsuitable: must be a whole number greater than or equal to zero, got {v}.")),
                    );
                    None
                }
            },
        };
    }
    if let Some(fe) = &r.for_each {
        let v = match Evaluator::new(world, base_dir).eval(&fe.expr) {
            Ok(v) => v,
            Err(e) => {
                diags.push(e.to_diagnostic(fe.file));
                return None;
            }
        };
        let bad = |diags: &mut Diagnostics, detail: String| {
            diags.push(
                Diagnostic::error("Invalid for_each argument")
                    .at(fe.span())
                    .detail(detail),
            );
            None
        };
        let n = match &v {
            Value::Object(o) => o.len(),
            Value::List(l) => l.len(),
            _ => 0,
        };
        if n > MAX_INSTANCES {
            diags.push(too_many_instances(fe.span(), "for_each", n as u64));
            return None;
        }
        return match v {
            Value::Object(o) => {
                Some(o.into_iter().map(|(k, v)| (Some(InstanceKey::Key(k)), Some(v))).collect())
            }
            Value::List(items) => {
                let mut out = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => out.push((Some(InstanceKey::Key(s.clone())), Some(Value::String(s)))),
                        Value::Unknown => {
                            return bad(diags, "The \"for_each\" set includes values derived from resource attributes that cannot be determined until apply, so brickform cannot determine the full set of keys that will identify the instances of this resource.".into());
                        }
                        other => {
                            return bad(diags, format!("The given \"for_each\" argument value is unsuitable: \"for_each\" supports maps and sets of strings, but you have provided a list containing a {}. Use toset() for a list of strings, or a for expression to build a map.", other.type_name()));
                        }
                    }
                }
                let mut seen = HashSet::new();
                out.retain(|(k, _)| seen.insert(k.clone()));
                Some(out)
            }
            Value::Unknown => bad(diags, "The \"for_each\" map includes keys derived from resource attributes that cannot be determined until apply, so brickform cannot determine the full set of keys that will identify the instances of this resource. Use keys known at plan time.".into()),
            Value::Null => bad(diags, "The given \"for_each\" argument value is null. A map, or set of strings, is allowed.".into()),
            other => bad(diags, format!("The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.", other.type_name())),
        };
    }
    Some(vec![(None, None)])
}

/// A `count` or `for_each` past [`MAX_INSTANCES`]: planning that many would exhaust memory
/// long before the service accepted them.
fn too_many_instances(at: Option<crate::lang::source::Span>, argument: &str, n: u64) -> Diagnostic {
    Diagnostic::error(format!("Invalid {argument} argument"))
        .at(at)
        .detail(format!(
            "The \"{argument}\" argument asks for {n} instances; one resource may have at most {MAX_INSTANCES}."
        ))
}

/// Decodes one instance's configuration.
pub(super) fn decode_instance(
    r: &Resource,
    schema: &Schema,
    world: &World,
    base_dir: &std::path::Path,
    key: Option<&InstanceKey>,
    each_value: Option<&Value>,
) -> (Object, Vec<Vec<PathStep>>, Diagnostics) {
    let mut ev = Evaluator::new(world, base_dir);
    match key {
        Some(InstanceKey::Index(i)) => ev.bind(
            "count",
            Value::Object(Object::from_iter([(
                "index".to_string(),
                Value::from_i64(*i as i64),
            )])),
        ),
        Some(InstanceKey::Key(k)) => ev.bind(
            "each",
            Value::Object(Object::from_iter([
                ("key".to_string(), Value::from(k.as_str())),
                (
                    "value".to_string(),
                    each_value.cloned().unwrap_or(Value::Null),
                ),
            ])),
        ),
        None => {}
    }
    let header = r.span.as_ref().map(|s| s.range.clone());
    let (decoded, mut diags) =
        Decoder::new(&mut ev, r.body.file).decode(&r.body.body, schema, header);
    if key.is_some() {
        // Each instance is evaluated separately; say which one went wrong.
        let address = instance_address(&r.address(), key);
        for d in diags.0.iter_mut() {
            let note = format!("(in {address})");
            d.detail = Some(match d.detail.take() {
                Some(text) => format!("{text} {note}"),
                None => note,
            });
        }
    }
    let mut value = decoded.value;
    normalize_object(schema, &mut value);
    (value, decoded.sensitive_paths, diags)
}

impl Engine<'_> {
    /// A `protect = true` environment refuses to delete or replace data objects unless the
    /// command says --allow-destroy.
    fn protected_changes(&self, plan: &Plan) -> Diagnostics {
        let mut diags = Diagnostics::new();
        // The kinds that say data lives in their objects, named in the message.
        let protected: Vec<&str> = self
            .registry
            .kinds
            .iter()
            .filter(|(_, k)| k.protected())
            .map(|(name, _)| *name)
            .collect();
        let types = match protected.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        for c in &plan.changes {
            let destroys = c.action == Action::Delete || c.action.is_replace();
            let guarded = c.mode == Mode::Managed
                && self
                    .registry
                    .kind(&c.type_name)
                    .is_some_and(|k| k.protected());
            if destroys && guarded {
                let span = self
                    .config
                    .resources
                    .get(base_of(&c.address))
                    .and_then(|r| r.span.clone());
                diags.push(
                    Diagnostic::error(format!(
                        "{} would be {} in protected environment \"{}\"",
                        c.address,
                        if c.action == Action::Delete { "destroyed" } else { "replaced" },
                        self.environment
                    ))
                    .at(span)
                    .detail(format!("Environment blocks with protect = true do not delete or replace objects of type {types}: the data in them would go too."))
                    .hint("if this is intended, run the command again with --allow-destroy"),
                );
            }
        }
        diags
    }
}

/// A kind's static findings as diagnostics, each at the field it concerns.
fn findings(
    found: Vec<crate::provider::Finding>,
    r: &Resource,
    address: &str,
    config: &Object,
    schema: &crate::provider::Schema,
) -> Diagnostics {
    use crate::provider::FindingLevel;
    let mut out = Diagnostics::new();
    for f in found {
        let span = crate::lang::load::locate(&r.body.body, &f.path, config, schema)
            .map(|range| crate::lang::source::Span::new(r.body.file, range))
            .or_else(|| r.span.clone());
        let summary = match &f.rule {
            Some(rule) => format!("{address}: {} [{rule}]", f.message),
            None => format!("{address}: {}", f.message),
        };
        let mut d = match f.level {
            FindingLevel::Error => Diagnostic::error(summary),
            FindingLevel::Warning => Diagnostic::warning(summary),
        }
        .at(span);
        if let Some(h) = f.hint {
            d = d.hint(h);
        }
        out.push(d);
    }
    out
}

/// Paths of a schema's nested blocks, for renderers.
pub fn block_paths(schema: &Schema) -> Vec<Vec<String>> {
    fn walk(s: &Schema, prefix: &[String], out: &mut Vec<Vec<String>>) {
        for b in &s.blocks {
            let mut p = prefix.to_vec();
            p.push(b.name.to_string());
            out.push(p.clone());
            walk(&b.schema, &p, out);
        }
    }
    let mut out = Vec::new();
    walk(schema, &[], &mut out);
    out
}

/// Keyed blocks of a schema with their key attribute, for renderers.
pub fn block_keys(schema: &Schema) -> Vec<(Vec<String>, String)> {
    fn walk(s: &Schema, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
        for b in &s.blocks {
            let mut p = prefix.to_vec();
            p.push(b.name.to_string());
            if let crate::provider::Nesting::Keyed(k) = b.nesting {
                out.push((p.clone(), k.to_string()));
            }
            walk(&b.schema, &p, out);
        }
    }
    let mut out = Vec::new();
    walk(schema, &[], &mut out);
    out
}

/// What a new object gets from the service: computed attributes, and — when it replaces
/// an old one — optional+computed ones the configuration leaves out, which the diff took
/// from the old object (a replaced connection is owned by its creator, not by the old
/// one's owner). A create has them unknown already.
fn service_assigned(a: &crate::provider::Attribute, config: &Object, replace: bool) -> bool {
    a.is_computed_only()
        || (replace
            && a.presence == crate::provider::Presence::OptionalComputed
            && config.get(a.name).is_none_or(Value::is_null))
}

fn sensitive_schema_paths(schema: &Schema) -> Vec<Vec<PathStep>> {
    schema
        .attributes
        .iter()
        .filter(|a| a.sensitive)
        .map(|a| vec![PathStep::Key(a.name.to_string())])
        .collect()
}

pub(super) fn prior_of(state: &StateDocument, address: &str) -> Option<(String, Prior)> {
    let r = state.get(address)?;
    Some((r.id.clone(), prior_from(r)))
}

fn prior_from(r: &brickform_state::ResourceState) -> Prior {
    Prior {
        config: json_object(&r.config),
        computed: json_object(&r.computed),
        sensitive: r.sensitive.clone(),
    }
}

pub(super) fn json_object(m: &serde_json::Map<String, serde_json::Value>) -> Object {
    m.iter()
        .map(|(k, v)| (k.clone(), Value::from_json(v)))
        .collect()
}

fn without_sensitive(o: &Object, paths: &[Vec<PathStep>]) -> Object {
    let mut o = o.clone();
    super::sensitive::redact_object(&mut o, paths);
    o
}

impl Engine<'_> {
    pub(super) async fn build_plan(
        &self,
        state: &StateDocument,
        req: &PlanRequest,
    ) -> (Option<Planned>, Diagnostics) {
        let config = self.config;
        let mut diags = self.settings_diags.clone();
        let (cg, gd) = graph::build(config);
        diags.extend(gd);
        for r in config.resources.values() {
            let known = match r.mode {
                Mode::Managed => self.registry.kind(&r.type_name).is_some(),
                Mode::Data => self.registry.data_source(&r.type_name).is_some(),
            };
            if !known {
                let names: Vec<&str> = match r.mode {
                    Mode::Managed => self.registry.kinds.keys().copied().collect(),
                    Mode::Data => self.registry.data_sources.keys().copied().collect(),
                };
                diags.push(
                    Diagnostic::error(if r.mode == Mode::Data {
                        "Invalid data source"
                    } else {
                        "Invalid resource type"
                    })
                    .at(r.type_span.clone())
                    .detail(format!(
                        "The provider does not support {} \"{}\".",
                        if r.mode == Mode::Data {
                            "data source"
                        } else {
                            "resource type"
                        },
                        r.type_name
                    ))
                    .maybe_hint(crate::lang::diagnostics::did_you_mean(&r.type_name, names)),
                );
            }
        }
        if diags.has_errors() {
            return (None, diags);
        }
        let Some(order) = cg.order() else {
            return (None, diags);
        };
        diags.extend(self.configure_providers(&order, state).await);
        if diags.has_errors() {
            return (None, diags);
        }

        // `moved` blocks rename state entries before anything is compared.
        let mut state = state.clone();
        let mut moved_from: BTreeMap<String, String> = BTreeMap::new();
        for m in &config.moved {
            if state.get(&m.from).is_some()
                && state.get(&m.to).is_none()
                && state.mv(&m.from, &m.to).is_ok()
            {
                moved_from.insert(m.to.clone(), m.from.clone());
            }
        }

        let mut world = World::new(
            self.vars.values.clone(),
            self.vars.sensitive.clone(),
            &self.environment,
            &config.dir,
            self.registry,
        );
        let mut plan = Plan {
            mode: req.mode,
            environment: self.environment.clone(),
            targeted: !req.targets.is_empty(),
            ..Plan::default()
        };
        let mut specs: Vec<InstanceSpec> = Vec::new();
        let mut produced: HashSet<String> = HashSet::new();
        let mut preset_notes = super::PresetNotes::new();
        let import_ids = self.import_ids(&world, &mut diags);

        let mut refreshed = if req.refresh && !self.offline {
            self.refresh_all(&state, req, &import_ids).await
        } else {
            std::collections::HashMap::new()
        };
        for id in &order {
            if let Some(ConfigNode::Local(name)) = ConfigNode::parse(id) {
                let name = name.as_str();
                let Some(l) = config.locals.get(name) else {
                    continue;
                };
                match Evaluator::new(&world, &config.dir).eval(&l.expr.expr) {
                    Ok(v) => world.set_local(name, v),
                    Err(e) => {
                        diags.push(e.to_diagnostic(l.expr.file));
                        world.set_local(name, Value::Unknown);
                    }
                }
                if let Some(why) = world.over_budget() {
                    diags.push(
                        Diagnostic::error("Plan limit reached")
                            .at(l.expr.span())
                            .detail(why),
                    );
                    break;
                }
                continue;
            }
            if matches!(
                ConfigNode::parse(id),
                Some(ConfigNode::Variable(_) | ConfigNode::Output(_))
            ) {
                continue;
            }
            let Some(r) = config.resources.get(id) else {
                continue;
            };
            self.plan_resource(
                r,
                &cg,
                &mut world,
                &state,
                req,
                &moved_from,
                &import_ids,
                &mut refreshed,
                &mut plan,
                &mut specs,
                &mut produced,
                &mut preset_notes,
                &mut diags,
            )
            .await;
            if let Some(why) = world.over_budget() {
                diags.push(
                    Diagnostic::error("Plan limit reached")
                        .at(r.span.clone())
                        .detail(why),
                );
                break;
            }
        }

        // Instances in state that the configuration no longer produces.
        let removed: BTreeMap<&str, bool> = config
            .removed
            .iter()
            .map(|r| (r.from.as_str(), r.destroy))
            .collect();
        for r in state.resources() {
            if produced.contains(&r.address) || r.mode != brickform_state::ResourceMode::Managed {
                continue;
            }
            let base = base_of(&r.address);
            let (action, reason) = match removed
                .get(r.address.as_str())
                .or_else(|| removed.get(base))
            {
                Some(false) => (Action::Forget, ActionReason::ForgetBecauseRemoved),
                _ => {
                    let reason = match config.resources.get(base) {
                        None => ActionReason::DeleteBecauseNoResourceConfig,
                        Some(res) if res.count.is_some() => ActionReason::DeleteBecauseCountIndex,
                        Some(res) if res.for_each.is_some() => ActionReason::DeleteBecauseEachKey,
                        Some(_) => ActionReason::DeleteBecauseNoResourceConfig,
                    };
                    (Action::Delete, reason)
                }
            };
            if action == Action::Delete && req.mode != PlanMode::RefreshOnly {
                let lifecycle_protected = config
                    .resources
                    .get(base)
                    .is_some_and(|res| res.lifecycle.prevent_destroy);
                if lifecycle_protected {
                    diags.push(prevent_destroy_error(
                        &r.address,
                        config.resources.get(base).and_then(|res| res.span.clone()),
                    ));
                }
            }
            let action = if req.mode == PlanMode::RefreshOnly {
                Action::NoOp
            } else {
                action
            };
            plan.changes.push(self.removal(r, action, reason));
            specs.push(InstanceSpec {
                address: r.address.clone(),
                resource: None,
                key: None,
                each_value: None,
            });
        }

        // Objects create_before_destroy replacements put aside whose delete did not finish:
        // deleted now, or only forgotten when they are gone already.
        if req.mode != PlanMode::RefreshOnly {
            for r in state.deposed() {
                let gone = match self.registry.kind(&r.resource_type) {
                    Some(kind) if req.refresh && !self.offline => {
                        let ctx = OpContext {
                            address: r.address.clone(),
                            lineage: state.lineage().to_string(),
                            environment: self.environment.clone(),
                            base_dir: self.config.dir.clone(),
                            create_token: None,
                        };
                        matches!(
                            kind.read(&ctx, &r.id, &prior_from(r).merged()).await,
                            Ok(None)
                        )
                    }
                    _ => false,
                };
                let (action, reason) = if gone {
                    (Action::Forget, ActionReason::ForgetBecauseGone)
                } else {
                    (Action::Delete, ActionReason::DeleteBecauseDeposed)
                };
                let mut change = self.removal(r, action, reason);
                change.deposed = true;
                plan.changes.push(change);
                specs.push(InstanceSpec {
                    address: r.address.clone(),
                    resource: None,
                    key: None,
                    each_value: None,
                });
            }
        }

        // Outputs.
        for (name, o) in &config.outputs {
            let mut ev = Evaluator::new(&world, &config.dir);
            let after = match ev.eval(&o.value.expr) {
                Ok(v) => v,
                Err(e) => {
                    diags.push(e.to_diagnostic(o.value.file));
                    continue;
                }
            };
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
                Some(Some(b)) if crate::lang::eval::values_equal(&b, &after) && !o.sensitive => {
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
            plan.outputs.push(OutputChange {
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
                plan.outputs.push(OutputChange {
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

        if req.mode == PlanMode::Destroy {
            for c in plan.changes.iter_mut() {
                if c.mode == Mode::Data {
                    c.action = Action::NoOp;
                    continue;
                }
                if state.get(&c.address).is_some() && c.action != Action::Forget {
                    c.action = Action::Delete;
                    c.after = None;
                    c.fields.clear();
                    c.importing = None;
                } else {
                    // Not this state's: a destroy neither deletes nor imports it.
                    c.action = Action::NoOp;
                    c.importing = None;
                }
            }
        }
        create_before_destroy_spreads(&mut plan);
        if req.mode != PlanMode::RefreshOnly {
            self.plan_containers(&mut plan, &state, &mut diags).await;
        }
        for r in &req.replace {
            if !plan.changes.iter().any(|c| &c.address == r) {
                diags.push(unknown_address_error("--replace", r, &plan));
            }
        }
        if !req.targets.is_empty() {
            self.apply_targets(&mut plan, &mut specs, req, &state, &mut diags);
            plan.warnings.push("Resource targeting is in effect: the plan may be incomplete. Use --target only to recover from mistakes, not for routine changes.".into());
        }
        if req.mode == PlanMode::Destroy {
            // Only what this destroy deletes (a `--target` narrows it) is guarded.
            for c in plan.changes.iter().filter(|c| c.action == Action::Delete) {
                let base = base_of(&c.address);
                if let Some(res) = config
                    .resources
                    .get(base)
                    .filter(|res| res.lifecycle.prevent_destroy)
                {
                    diags.push(prevent_destroy_error(&c.address, res.span.clone()));
                }
            }
        }
        if self.settings.protect && !req.allow_destroy {
            diags.extend(self.protected_changes(&plan));
        }
        if let Ok(mut n) = self.preset_notes.lock() {
            n.clone_from(&preset_notes);
        }
        if let Some(p) = self.presets() {
            let touched = preset_notes.len();
            if touched > 0 {
                let mut what: Vec<&str> = preset_notes
                    .values()
                    .flatten()
                    .map(|c| c.note.as_str())
                    .collect();
                what.sort();
                what.dedup();
                plan.warnings.push(format!(
                    "Development presets of environment \"{}\" (user {}) apply to {}: {}.",
                    self.environment,
                    p.user,
                    if touched == 1 {
                        "1 resource".to_string()
                    } else {
                        format!("{touched} resources")
                    },
                    what.join("; ")
                ));
            }
        }
        diags.sort();
        if diags.has_errors() {
            return (None, diags);
        }
        (Some(Planned { plan, specs }), diags)
    }

    #[allow(clippy::too_many_arguments)]
    async fn plan_resource(
        &self,
        r: &Resource,
        cg: &ConfigGraph,
        world: &mut World,
        state: &StateDocument,
        req: &PlanRequest,
        moved_from: &BTreeMap<String, String>,
        import_ids: &BTreeMap<String, String>,
        refreshed: &mut super::refresh::Refreshed,
        plan: &mut Plan,
        specs: &mut Vec<InstanceSpec>,
        produced: &mut HashSet<String>,
        preset_notes: &mut super::PresetNotes,
        diags: &mut Diagnostics,
    ) {
        let base = r.address();
        let dependencies = cg.resource_dependencies(&base);
        let Some(instances) = expand(r, world, &self.config.dir, diags) else {
            world.declare_resource(r.mode, &r.type_name, &r.name, Value::Unknown);
            return;
        };
        let shape = if r.count.is_some() {
            Value::List(Vec::new())
        } else if r.for_each.is_some() {
            Value::Object(Object::new())
        } else {
            Value::Null
        };
        world.declare_resource(r.mode, &r.type_name, &r.name, shape);
        let provider = self
            .registry
            .provider_of(&r.type_name)
            .map(|p| p.name().to_string())
            .unwrap_or_default();

        if r.mode == Mode::Data {
            let Some(ds) = self.registry.data_source(&r.type_name).cloned() else {
                return;
            };
            for (key, each) in instances {
                let address = instance_address(&base, key.as_ref());
                let (config, _, d) = decode_instance(
                    r,
                    ds.schema(),
                    world,
                    &self.config.dir,
                    key.as_ref(),
                    each.as_ref(),
                );
                let failed = d.has_errors();
                diags.extend(d);
                if failed {
                    continue;
                }
                let mut value = config.clone();
                for a in ds
                    .schema()
                    .attributes
                    .iter()
                    .filter(|a| a.is_computed_only())
                {
                    value.insert(a.name.to_string(), Value::Unknown);
                }
                let mut action = Action::Read;
                let mut reason = Some(ActionReason::ReadBecauseConfigUnknown);
                // A lookup of something this plan creates or changes reads it during apply,
                // after that change, not now (when it may not exist yet).
                let pending = plan.changes.iter().any(|c| {
                    !matches!(c.action, Action::NoOp | Action::Read)
                        && dependencies
                            .iter()
                            .any(|d| c.address == *d || c.address.starts_with(&format!("{d}[")))
                });
                if pending {
                    reason = Some(ActionReason::ReadBecauseDependencyPending);
                }
                if !self.offline && !pending && config.values().all(Value::is_wholly_known) {
                    match ds.read(&config).await {
                        Ok(v) => {
                            value = config.clone();
                            value.extend(v);
                            action = Action::NoOp;
                            reason = None;
                        }
                        Err(e) => {
                            diags.push(
                                Diagnostic::error(format!(
                                    "Error reading {address}: {}",
                                    e.message
                                ))
                                .at(r.span.clone())
                                .detail(e.detail.unwrap_or_default()),
                            );
                            // Unknown, not null: what refers to it reports no second error.
                            world.set_instance(
                                Mode::Data,
                                &r.type_name,
                                &r.name,
                                key.as_ref(),
                                Value::Unknown,
                            );
                            continue;
                        }
                    }
                }
                world.set_instance(
                    Mode::Data,
                    &r.type_name,
                    &r.name,
                    key.as_ref(),
                    Value::Object(value.clone()),
                );
                plan.changes.push(ResourceChange {
                    address: address.clone(),
                    mode: Mode::Data,
                    type_name: r.type_name.clone(),
                    name: r.name.clone(),
                    index: key.clone(),
                    provider: provider.clone(),
                    action,
                    reason,
                    id: None,
                    before: None,
                    after: Some(SerObject(value)),
                    fields: Vec::new(),
                    block_paths: block_paths(ds.schema()),
                    block_keys: block_keys(ds.schema()),
                    sensitive_paths: Vec::new(),
                    importing: None,
                    contents: None,
                    container: None,
                    moved_from: None,
                    deposed: false,
                    dependencies: dependencies.clone(),
                });
                specs.push(InstanceSpec {
                    address,
                    resource: Some(base.clone()),
                    key,
                    each_value: each,
                });
            }
            return;
        }

        let Some(kind) = self.registry.kind(&r.type_name).cloned() else {
            return;
        };
        let schema = kind.schema();
        for (key, each) in instances {
            let address = instance_address(&base, key.as_ref());
            produced.insert(address.clone());
            let (mut config, sensitive_paths, mut d) = decode_instance(
                r,
                schema,
                world,
                &self.config.dir,
                key.as_ref(),
                each.as_ref(),
            );
            if !d.has_errors() {
                d.extend(findings(kind.check(&config), r, &address, &config, schema));
                if self.settings.mode == Some(crate::lang::environment::EnvMode::Production) {
                    let found = kind.production_findings(&config);
                    d.extend(findings(found, r, &address, &config, schema));
                }
            }
            if !d.has_errors()
                && let Some(p) = self.presets()
            {
                let notes = kind.apply_presets(p, &mut config);
                if !notes.is_empty() {
                    preset_notes.insert(address.clone(), notes);
                }
            }
            if !d.has_errors() && config.values().all(Value::is_wholly_known) {
                if let Err(msg) = kind.prepare_config(&mut config, &self.config.dir) {
                    d.push(
                        Diagnostic::error(format!("Invalid configuration for {address}"))
                            .at(r.span.clone())
                            .detail(msg),
                    );
                }
            } else if !d.has_errors() {
                // What prepare_config would derive, as far as the known values tell; the
                // rest is known after apply.
                for (k, v) in kind.plan_computed(&config) {
                    if schema.attribute(&k).is_some_and(|a| a.can_configure())
                        && config.get(&k).is_none_or(Value::is_null)
                    {
                        config.insert(k, v);
                    }
                }
            }
            let failed = d.has_errors();
            diags.extend(d);
            if failed {
                world.set_instance(
                    Mode::Managed,
                    &r.type_name,
                    &r.name,
                    key.as_ref(),
                    Value::Unknown,
                );
                continue;
            }
            let ctx = OpContext {
                address: address.clone(),
                lineage: state.lineage().to_string(),
                environment: self.environment.clone(),
                create_token: None,
                base_dir: self.config.dir.clone(),
            };
            let mut prior = prior_of(state, &address);
            if let Some((_, p)) = prior.as_mut() {
                super::sensitive::restore(p, &config, schema, &|v, fp| {
                    state.fingerprint_matches(&v.to_json(), fp)
                });
            }
            let mut importing = None;
            if prior.is_none()
                && let Some(import_id) = import_ids.get(&address)
            {
                if self.offline {
                    importing = Some(import_id.clone());
                } else {
                    match kind.import(&ctx, import_id).await {
                        Ok(Some(remote)) => {
                            importing = Some(import_id.clone());
                            prior = Some(super::adopt::imported_prior(schema, &remote, &config));
                        }
                        Ok(None) => {
                            diags.push(
                                Diagnostic::error("Cannot import non-existent remote object")
                                    .at(r.span.clone())
                                    .detail(format!("While attempting to import an existing object to \"{address}\", the provider detected that no object exists with the given id \"{import_id}\". Only pre-existing objects can be imported; check that the id is correct.")),
                            );
                            continue;
                        }
                        Err(e) => {
                            diags.push(
                                Diagnostic::error(format!(
                                    "Error importing {address}: {}",
                                    e.message
                                ))
                                .at(r.span.clone()),
                            );
                            continue;
                        }
                    }
                }
            }
            // An object the state lost track of is imported, not made twice (see adopt).
            if prior.is_none() && importing.is_none() {
                match self
                    .adopt(&kind, &ctx, &config, state, req.mode, &mut plan.warnings)
                    .await
                {
                    Ok(Some(found)) => {
                        importing = Some(found.0.clone());
                        prior = Some(found);
                    }
                    Ok(None) => {}
                    Err(d) => {
                        diags.push(d.at(r.span.clone()));
                        let (t, n) = (&r.type_name, &r.name);
                        world.set_instance(Mode::Managed, t, n, key.as_ref(), Value::Unknown);
                        continue;
                    }
                }
            }

            // Refresh.
            let mut live: Option<Remote> = None;
            let mut deleted_outside = false;
            if let Some((id, p)) = &prior
                && req.refresh
                && !self.offline
                && importing.is_none()
            {
                let read = match refreshed.remove(&address) {
                    Some(r) => r,
                    None => kind.read(&ctx, id, &p.merged()).await,
                };
                match read {
                    Ok(Some(remote)) => live = Some(remote),
                    Ok(None) => deleted_outside = true,
                    Err(e) => {
                        diags.push(
                            Diagnostic::error(format!("Error refreshing {address}: {}", e.message))
                                .at(r.span.clone())
                                .detail(e.detail.unwrap_or_default()),
                        );
                        continue;
                    }
                }
            }
            let mut live_attrs = live.as_ref().map(|l| l.attrs.clone());
            if let Some(l) = live_attrs.as_mut() {
                normalize_object(schema, l);
            }

            let ignore_all = matches!(r.lifecycle.ignore_changes, IgnoreChanges::All);
            let ignore_names: HashSet<String> = match &r.lifecycle.ignore_changes {
                IgnoreChanges::Paths(ps) => ps
                    .iter()
                    .filter_map(|(p, _)| match p.first() {
                        Some(PathStep::Key(k)) => Some(k.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => HashSet::new(),
            };
            let ignore = |name: &str| ignore_all && prior.is_some() || ignore_names.contains(name);
            let fp = |v: &Value, fp: &str| state.fingerprint_matches(&v.to_json(), fp);
            let effective_prior = if deleted_outside {
                None
            } else {
                prior.as_ref().map(|(_, p)| p)
            };
            let mut d = diff(&DiffInput {
                schema,
                config: &config,
                prior: effective_prior,
                live: live_attrs.as_ref(),
                ignore: &ignore,
                fingerprint_matches: &fp,
            });
            follow_renames(&mut d, plan, &dependencies);

            let replace_requested = req.replace.iter().any(|a| a == &address);
            let triggered = replace_triggered(r, plan);
            let mut action = match (effective_prior, deleted_outside) {
                (None, _) => Action::Create,
                (Some(_), _) if replace_requested || d.replace || triggered => {
                    if r.lifecycle.create_before_destroy {
                        Action::CreateThenDelete
                    } else {
                        Action::DeleteThenCreate
                    }
                }
                (Some(_), _) if d.fields.is_empty() => Action::NoOp,
                _ => Action::Update,
            };
            let reason = if deleted_outside {
                Some(ActionReason::CreateBecauseDeletedOutside)
            } else if replace_requested && action.is_replace() {
                Some(ActionReason::ReplaceByRequest)
            } else if triggered && action.is_replace() {
                Some(ActionReason::ReplaceByTriggers)
            } else if action.is_replace() {
                Some(ActionReason::ReplaceBecauseCannotUpdate)
            } else {
                None
            };
            if importing.is_some() && action == Action::Create {
                action = Action::NoOp;
            }
            // A replacement's new object must be creatable: if another object holds its name,
            // the create would fail after (or, without create_before_destroy, before) the old
            // one is deleted for nothing.
            if action.is_replace()
                && !self.offline
                && super::adopt::key_known(kind.as_ref(), &ctx, &config)
                && let Some((old_id, _)) = &prior
            {
                match kind.find_existing(&ctx, &config).await {
                    Ok(found) => {
                        if let Some(e) =
                            found.iter().find(|e| e.exclusive && &e.remote.id != old_id)
                        {
                            diags.push(
                                Diagnostic::error(format!("{address}: the name is taken by {}", e.what))
                                    .at(r.span.clone())
                                    .detail(format!("{address} must be replaced, and its new object would have the name {} holds: the create would fail, and {} would be deleted for nothing.", e.what, old_id))
                                    .hint("give it a name nobody holds, or remove or import the other object first"),
                            );
                            let (t, n) = (&r.type_name, &r.name);
                            world.set_instance(Mode::Managed, t, n, key.as_ref(), Value::Unknown);
                            continue;
                        }
                    }
                    Err(e) => {
                        diags.push(
                            Diagnostic::error(format!(
                                "{address}: cannot check whether its new name is free: {}",
                                e.message
                            ))
                            .at(r.span.clone()),
                        );
                    }
                }
            }
            if action == Action::Create
                && !self.offline
                && importing.is_none()
                && self.settings.mode == Some(crate::lang::environment::EnvMode::Development)
                && config.values().all(Value::is_wholly_known)
            {
                match kind.name_taken(&ctx, &config).await {
                    Ok(Some(what)) => diags.push(
                        Diagnostic::error(format!("{address}: the name is taken by {what}"))
                            .at(r.span.clone())
                            .detail("This state does not manage that object, and brickform does not take over objects of another state or another developer, nor add a twin with the same name.")
                            .hint("give this one another name (through a variable or the development presets), or import the existing object if it should be managed here"),
                    ),
                    Ok(None) => {}
                    Err(e) => diags.push(
                        Diagnostic::error(format!("{address}: cannot check whether its name is free: {}", e.message))
                            .at(r.span.clone()),
                    ),
                }
            }
            if action.is_replace() && r.lifecycle.prevent_destroy {
                diags.push(prevent_destroy_error(&address, r.span.clone()));
            }

            let mut after = d.after.clone();
            if let (Some(p), Action::Update | Action::NoOp) = (effective_prior, action) {
                // What the service fills in where the configuration is silent stays as it is;
                // showing it as removed would be noise, not a change.
                let mut current = p.merged();
                if let Some(l) = &live_attrs {
                    current.extend(l.clone());
                }
                crate::plan::diff::keep_service_values(
                    schema,
                    &mut after,
                    &current,
                    &p.config,
                    action == Action::Update,
                );
            }
            if action.is_replace() {
                // The new object holds what is configured and the service's defaults, not
                // what the old one had been given outside brickform.
                for a in schema
                    .attributes
                    .iter()
                    .filter(|a| a.presence == crate::provider::Presence::Optional && !a.sensitive)
                {
                    if config.get(a.name).is_none_or(Value::is_null) {
                        after.insert(
                            a.name.to_string(),
                            a.server_default.clone().unwrap_or(Value::Null),
                        );
                    }
                }
                for b in &schema.blocks {
                    if config.get(b.name).is_none_or(Value::is_null) {
                        after.insert(b.name.to_string(), Value::Null);
                    }
                }
            }
            if action.is_replace() || action == Action::Create {
                let known = kind.plan_computed(&config);
                for a in schema
                    .attributes
                    .iter()
                    .filter(|a| service_assigned(a, &config, action.is_replace()))
                {
                    let v = known
                        .get(a.name)
                        .filter(|v| !matches!(v, Value::Unknown))
                        .cloned()
                        .unwrap_or(Value::Unknown);
                    after.insert(a.name.to_string(), v);
                }
            }
            let mut all_sensitive = sensitive_schema_paths(schema);
            all_sensitive.extend(sensitive_paths.iter().cloned());
            for p in &all_sensitive {
                if let Some(PathStep::Key(k)) = p.first() {
                    world.mark_sensitive(&r.type_name, &r.name, k);
                }
            }
            // Drift section.
            if deleted_outside {
                plan.drift.push(Drift {
                    address: address.clone(),
                    type_name: r.type_name.clone(),
                    name: r.name.clone(),
                    deleted: true,
                    fields: Vec::new(),
                    block_paths: block_paths(schema),
                    block_keys: block_keys(schema),
                    sensitive_paths: sensitive_schema_paths(schema),
                });
            } else if !d.drift.is_empty() {
                plan.drift.push(Drift {
                    address: address.clone(),
                    type_name: r.type_name.clone(),
                    name: r.name.clone(),
                    deleted: false,
                    fields: d
                        .drift
                        .iter()
                        .cloned()
                        .map(|mut f| {
                            super::sensitive::redact_field(&mut f, &all_sensitive);
                            f
                        })
                        .collect(),
                    block_paths: block_paths(schema),
                    block_keys: block_keys(schema),
                    sensitive_paths: sensitive_schema_paths(schema),
                });
            }

            let mut fields: Vec<FieldChange> = d.fields.clone();
            for f in fields.iter_mut() {
                // The planned value with what the service keeps (see keep_service_values).
                if let ([PathStep::Key(k)], Some(a)) = (f.path.as_slice(), &f.after)
                    && !matches!(a.0, Value::Unknown)
                    && !f.sensitive
                    && let Some(v) = after.get(k)
                {
                    f.after = Some(SerValue(v.clone()));
                }
                super::sensitive::redact_field(f, &all_sensitive);
            }
            if action == Action::Create || action.is_replace() {
                for a in schema
                    .attributes
                    .iter()
                    .filter(|a| service_assigned(a, &config, action.is_replace()))
                {
                    let planned = after.get(a.name).cloned().unwrap_or(Value::Unknown);
                    let reason = if planned.is_wholly_known() {
                        FieldReason::Configuration
                    } else {
                        FieldReason::KnownAfterApply
                    };
                    fields.push(FieldChange {
                        path: vec![PathStep::Key(a.name.to_string())],
                        before: None,
                        after: Some(SerValue(planned)),
                        live: None,
                        reason,
                        forces_replacement: false,
                        sensitive: false,
                    });
                }
            }
            let action = if req.mode == PlanMode::RefreshOnly {
                Action::NoOp
            } else {
                action
            };
            let before = effective_prior.map(|p| {
                let mut b = p.merged();
                if let Some(l) = &live_attrs {
                    for (k, v) in l {
                        b.insert(k.clone(), v.clone());
                    }
                }
                SerObject(without_sensitive(&b, &all_sensitive))
            });
            // The id the object has now: a kind may find an object renamed outside brickform
            // under its new name, which the update then addresses.
            let id = live
                .as_ref()
                .map(|l| l.id.clone())
                .or_else(|| prior.as_ref().map(|(id, _)| id.clone()));
            // What references to this instance see during the rest of the plan.
            let reference_value = match action {
                Action::NoOp => {
                    let mut v = effective_prior.map(|p| p.merged()).unwrap_or_default();
                    if let Some(l) = &live_attrs {
                        v.extend(l.clone());
                    }
                    v.extend(
                        config
                            .iter()
                            .filter(|(_, v)| !v.is_null())
                            .map(|(k, v)| (k.clone(), v.clone())),
                    );
                    v
                }
                _ => after.clone(),
            };
            world.set_instance(
                Mode::Managed,
                &r.type_name,
                &r.name,
                key.as_ref(),
                Value::Object(reference_value),
            );
            plan.changes.push(ResourceChange {
                address: address.clone(),
                mode: Mode::Managed,
                type_name: r.type_name.clone(),
                name: r.name.clone(),
                index: key.clone(),
                provider: provider.clone(),
                action,
                reason,
                id,
                before,
                after: Some(SerObject(without_sensitive(&after, &all_sensitive))),
                fields,
                block_paths: block_paths(schema),
                block_keys: block_keys(schema),
                sensitive_paths: all_sensitive,
                importing,
                contents: None,
                container: None,
                moved_from: moved_from.get(&address).cloned(),
                deposed: false,
                dependencies: dependencies.clone(),
            });
            specs.push(InstanceSpec {
                address,
                resource: Some(base.clone()),
                key,
                each_value: each,
            });
        }
    }

    /// Evaluates each `provider` block against its provider's schema and, unless offline,
    /// configures every provider the configuration or the state uses.
    pub(super) async fn configure_providers(
        &self,
        order: &[String],
        state: &StateDocument,
    ) -> Diagnostics {
        let config = self.config;
        let mut diags = Diagnostics::new();
        // Provider settings may read variables and locals, not resources.
        let mut world = World::new(
            self.vars.values.clone(),
            self.vars.sensitive.clone(),
            &self.environment,
            &config.dir,
            self.registry,
        );
        for id in order {
            if let Some(ConfigNode::Local(name)) = ConfigNode::parse(id)
                && let Some(l) = config.locals.get(&name)
            {
                let v = Evaluator::new(&world, &config.dir)
                    .eval(&l.expr.expr)
                    .unwrap_or(Value::Unknown);
                world.set_local(&name, v);
            }
        }
        let mut settings: BTreeMap<&str, Object> = BTreeMap::new();
        for (name, block) in &config.providers {
            let Some(provider) = self.registry.provider(name) else {
                let names: Vec<&str> = self.registry.providers.iter().map(|p| p.name()).collect();
                diags.push(
                    Diagnostic::error("Unknown provider")
                        .at(block.span.clone())
                        .detail(format!("There is no provider named \"{name}\"."))
                        .maybe_hint(crate::lang::diagnostics::did_you_mean(name, names)),
                );
                continue;
            };
            let mut bad_reference = false;
            for r in crate::lang::refs::body_refs(&block.body.body) {
                let reads_resource =
                    !matches!(r.root.as_str(), "var" | "local" | "path" | "brickform");
                if reads_resource {
                    bad_reference = true;
                    diags.push(
                        Diagnostic::error("Invalid provider configuration reference")
                            .at(r.span.map(|s| crate::lang::source::Span::new(block.body.file, s)))
                            .detail("A provider block may only use variables, locals and brickform.environment; its values must be known before any resource is read."),
                    );
                }
            }
            if bad_reference {
                // Evaluating it would only repeat the same mistake as another error.
                continue;
            }
            let mut ev = Evaluator::new(&world, &config.dir);
            let header = block.span.as_ref().map(|s| s.range.clone());
            let (decoded, d) = Decoder::new(&mut ev, block.body.file).decode(
                &block.body.body,
                provider.config_schema(),
                header,
            );
            diags.extend(d);
            settings.insert(provider.name(), decoded.value);
        }
        // The environment's provider settings override the top-level ones, key by key.
        for (name, block) in &self.settings.providers {
            let Some(provider) = self.registry.provider(name) else {
                diags.push(
                    Diagnostic::error("Unknown provider")
                        .at(block.span.clone())
                        .detail(format!("There is no provider named \"{name}\".")),
                );
                continue;
            };
            let mut ev = Evaluator::new(&world, &config.dir);
            let header = block.span.as_ref().map(|s| s.range.clone());
            let (decoded, d) = Decoder::new(&mut ev, block.body.file).decode(
                &block.body.body,
                provider.config_schema(),
                header,
            );
            diags.extend(d);
            let merged = settings.entry(provider.name()).or_default();
            for (k, v) in decoded.value {
                if !v.is_null() {
                    merged.insert(k, v);
                }
            }
        }
        if self.offline || diags.has_errors() {
            return diags;
        }
        let used: HashSet<&str> = config
            .resources
            .values()
            .filter_map(|r| self.registry.provider_of(&r.type_name).map(|p| p.name()))
            .chain(state.resources().iter().filter_map(|r| {
                self.registry
                    .provider_of(&r.resource_type)
                    .map(|p| p.name())
            }))
            .chain(settings.keys().copied())
            .collect();
        for p in &self.registry.providers {
            if !used.contains(p.name()) {
                continue;
            }
            let s = settings.remove(p.name()).unwrap_or_default();
            if s.values().any(Value::contains_unknown) {
                diags.push(
                    Diagnostic::error(format!(
                        "Provider \"{}\" configuration is not known",
                        p.name()
                    ))
                    .detail("Its settings depend on values that are only known after apply."),
                );
                continue;
            }
            if let Err(e) = p.configure(&s).await {
                let span = config.providers.get(p.name()).and_then(|b| b.span.clone());
                diags.push(
                    Diagnostic::error(format!(
                        "Cannot configure provider \"{}\": {}",
                        p.name(),
                        e.message
                    ))
                    .at(span)
                    .detail(e.detail.unwrap_or_default()),
                );
            }
        }
        if !diags.has_errors() && self.presets.get().is_none() {
            diags.extend(self.resolve_presets(&used).await);
        }
        diags
    }

    /// In development mode, asks the providers whose user the presets name.
    async fn resolve_presets(&self, used: &HashSet<&str>) -> Diagnostics {
        let mut diags = Diagnostics::new();
        if self.settings.mode != Some(crate::lang::environment::EnvMode::Development) {
            let _ = self.presets.set(None);
            return diags;
        }
        let mut user = None;
        for p in self
            .registry
            .providers
            .iter()
            .filter(|p| used.contains(p.name()))
        {
            match p.current_user().await {
                Ok(Some(u)) => {
                    user = Some(u);
                    break;
                }
                Ok(None) => {}
                Err(e) => diags.push(
                    Diagnostic::error(format!(
                        "Cannot tell who you are for the development presets of environment \"{}\": {}",
                        self.environment, e.message
                    ))
                    .at(self.settings.span.clone()),
                ),
            }
        }
        let _ = self
            .presets
            .set(user.map(|u| crate::provider::Presets::new(&u, &self.settings.settings)));
        diags
    }

    fn import_ids(&self, world: &World, diags: &mut Diagnostics) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for i in &self.config.imports {
            let key = match &i.to_key {
                None => None,
                Some(k) => match Evaluator::new(world, &self.config.dir).eval(&k.expr) {
                    Ok(Value::String(s)) => Some(InstanceKey::Key(s)),
                    Ok(v) if v.as_i64().is_some() => {
                        Some(InstanceKey::Index(v.as_i64().unwrap_or(0) as usize))
                    }
                    Ok(_) | Err(_) => {
                        diags.push(Diagnostic::error("Invalid import address").at(k.span()).detail("The instance key of \"to\" must be a string or a number known at plan time."));
                        continue;
                    }
                },
            };
            if !self.config.resources.contains_key(&i.to.target) {
                diags.push(
                    Diagnostic::error("Configuration for import target does not exist")
                        .at(i.to.span.clone())
                        .detail(format!("The configuration for the given import target {} does not exist. All import targets must exist within the configuration.", i.to.target)),
                );
                continue;
            }
            match Evaluator::new(world, &self.config.dir).eval(&i.id.expr) {
                Ok(Value::String(id)) => {
                    out.insert(instance_address(&i.to.target, key.as_ref()), id);
                }
                Ok(other) => diags.push(
                    Diagnostic::error("Invalid import id")
                        .at(i.id.span())
                        .detail(format!(
                            "The import id must be a string known at plan time, not {}.",
                            other.type_name()
                        )),
                ),
                Err(e) => diags.push(e.to_diagnostic(i.id.file)),
            }
        }
        out
    }

    /// Narrows a plan to `--target` addresses. Applying a target needs what it depends on, so
    /// a normal plan keeps the targets and their dependencies; destroying a target takes what
    /// depends on it with it (it could not stay behind without it), and never what the target
    /// itself depends on.
    /// The planned removal (a delete or forget) of state entry `r`, which the configuration
    /// does not produce or which was put aside.
    fn removal(
        &self,
        r: &brickform_state::ResourceState,
        action: Action,
        reason: ActionReason,
    ) -> ResourceChange {
        let schema = self
            .registry
            .kind(&r.resource_type)
            .map(|k| k.schema().clone())
            .unwrap_or_default();
        ResourceChange {
            address: r.address.clone(),
            mode: Mode::Managed,
            type_name: r.resource_type.clone(),
            name: r.name.clone(),
            index: key_of(&r.address),
            provider: r.provider.clone(),
            action,
            reason: Some(reason),
            id: Some(r.id.clone()),
            before: Some(SerObject(prior_from(r).merged())),
            after: None,
            fields: Vec::new(),
            block_paths: block_paths(&schema),
            block_keys: block_keys(&schema),
            sensitive_paths: sensitive_schema_paths(&schema),
            importing: None,
            contents: None,
            container: None,
            moved_from: None,
            deposed: false,
            dependencies: r.dependencies.clone(),
        }
    }

    fn apply_targets(
        &self,
        plan: &mut Plan,
        specs: &mut Vec<InstanceSpec>,
        req: &PlanRequest,
        state: &StateDocument,
        diags: &mut Diagnostics,
    ) {
        let matches = |target: &str, address: &str| target == address || target == base_of(address);
        for t in &req.targets {
            if !plan.changes.iter().any(|c| matches(t, &c.address)) {
                diags.push(unknown_address_error("--target", t, plan));
            }
        }
        // What each instance depends on: the configuration's references, and for instances
        // being deleted also what the state recorded when they were applied.
        let depends_on = |c: &ResourceChange| -> Vec<String> {
            let mut d = c.dependencies.clone();
            if let Some(r) = state.get(&c.address) {
                d.extend(r.dependencies.iter().cloned());
            }
            d
        };
        let destroying = req.mode == PlanMode::Destroy;
        let mut keep: HashSet<String> = HashSet::new();
        let mut stack: Vec<String> = plan
            .changes
            .iter()
            .filter(|c| req.targets.iter().any(|t| matches(t, &c.address)))
            .map(|c| c.address.clone())
            .collect();
        while let Some(a) = stack.pop() {
            if !keep.insert(a.clone()) {
                continue;
            }
            if destroying {
                // Dependents: instances that name `a` (or its resource) among their dependencies.
                let a_base = base_of(&a);
                for c in &plan.changes {
                    if depends_on(c).iter().any(|d| *d == a || *d == a_base) {
                        stack.push(c.address.clone());
                    }
                }
            } else if let Some(c) = plan.changes.iter().find(|c| c.address == a) {
                for d in depends_on(c) {
                    for c2 in &plan.changes {
                        if c2.address == d || base_of(&c2.address) == d {
                            stack.push(c2.address.clone());
                        }
                    }
                }
            }
        }
        let mut i = 0;
        while i < plan.changes.len() {
            if keep.contains(&plan.changes[i].address) {
                i += 1;
            } else {
                plan.changes.remove(i);
                specs.remove(i);
            }
        }
    }
}

/// A replaced instance that something replaced with `create_before_destroy` depends on is
/// replaced that way too (as Terraform does): the dependent's new copy needs the new
/// dependency before its old copy goes, and the dependency's old copy can go only after
/// the dependent's — destroying the dependency first would make apply's graph a cycle.
fn create_before_destroy_spreads(plan: &mut Plan) {
    loop {
        let needs: HashSet<String> = plan
            .changes
            .iter()
            .filter(|c| c.action == Action::CreateThenDelete)
            .flat_map(|c| c.dependencies.iter().cloned())
            .collect();
        let mut changed = false;
        for c in plan.changes.iter_mut() {
            if c.action == Action::DeleteThenCreate
                && (needs.contains(&c.address) || needs.contains(base_of(&c.address)))
            {
                c.action = Action::CreateThenDelete;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// An address given on the command line that names no instance of the plan, with the closest
/// one it may have meant.
fn unknown_address_error(flag: &str, address: &str, plan: &Plan) -> Diagnostic {
    let mut known: Vec<&str> = plan.changes.iter().map(|c| c.address.as_str()).collect();
    let bases: Vec<&str> = known.iter().map(|a| base_of(a)).collect();
    known.extend(bases);
    known.sort();
    known.dedup();
    Diagnostic::error(format!("{flag} {address} matches no resource"))
        .detail(format!(
            "Neither the configuration nor the state has an instance at {address}, so the plan would silently do nothing for it."
        ))
        .hint(
            crate::lang::diagnostics::did_you_mean(address, known.iter().copied()).unwrap_or_else(
                || match known.len() {
                    0 => "the plan has no resources".to_string(),
                    n if n <= 10 => format!("the plan's addresses: {}", known.join(", ")),
                    n => format!("the plan's addresses (first 10 of {n}): {}", known[..10].join(", ")),
                },
            ),
        )
}

/// A value that cannot change in place but changes exactly as a dependency is renamed in
/// place (a child's reference to its parent's name, when the parent is renamed) follows the
/// rename: the service moves the child with its parent, so replacing the child would be wrong (and
/// would fail, the child being already there under the new name). A rename made outside
/// brickform that the plan puts back is followed the same way.
fn follow_renames(d: &mut crate::plan::diff::DiffOutput, plan: &Plan, dependencies: &[String]) {
    let renamed: Vec<(&Value, &Value)> = plan
        .changes
        .iter()
        .filter(|c| {
            c.action == Action::Update
                && dependencies
                    .iter()
                    .any(|dep| c.address == *dep || c.address.starts_with(&format!("{dep}[")))
        })
        .flat_map(|c| c.fields.iter())
        .filter(|f| {
            // A rename in the configuration, or one made outside brickform being put back.
            matches!(f.reason, FieldReason::Configuration | FieldReason::Drift)
                && matches!(f.path.as_slice(), [PathStep::Key(k)] if k == "name")
        })
        .filter_map(|f| Some((&f.before.as_ref()?.0, &f.after.as_ref()?.0)))
        .collect();
    if renamed.is_empty() {
        return;
    }
    let mut still_replaced = false;
    for f in d.fields.iter_mut().filter(|f| f.forces_replacement) {
        let follows = matches!((&f.before, &f.after), (Some(b), Some(a)) if renamed.iter().any(|(ob, oa)| crate::lang::eval::values_equal(ob, &b.0) && crate::lang::eval::values_equal(oa, &a.0)));
        if follows {
            f.forces_replacement = false;
        } else {
            still_replaced = true;
        }
    }
    d.replace = still_replaced;
}

/// `lifecycle.replace_triggered_by`: a referenced resource that changes in this plan.
fn replace_triggered(r: &Resource, plan: &Plan) -> bool {
    if r.lifecycle.replace_triggered_by.is_empty() {
        return false;
    }
    let targets: Vec<String> = r
        .lifecycle
        .replace_triggered_by
        .iter()
        .flat_map(|t| crate::lang::refs::expr_refs(&t.expr))
        .filter_map(|rf| rf.target())
        .collect();
    plan.changes
        .iter()
        .filter(|c| !matches!(c.action, Action::NoOp | Action::Read))
        .any(|c| {
            let base = base_of(&c.address);
            targets.iter().any(|t| t == base)
        })
}

fn prevent_destroy_error(address: &str, span: Option<crate::lang::source::Span>) -> Diagnostic {
    Diagnostic::error("Instance cannot be destroyed")
        .at(span)
        .detail(format!("Resource {address} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan using the --target flag."))
}
