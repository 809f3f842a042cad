//! Promotion: where two environments' resolved configurations differ, and what explains each
//! difference (a variable whose value differs, the environment's name, a development preset,
//! or another difference it follows from). A difference nothing declared explains is
//! flagged: it is what a reviewer should look at before promoting.

use super::Planned;
use crate::addrs::{ConfigNode, InstanceAddr};
use crate::lang::load::Config;
use crate::lang::refs::{Ref, body_refs, expr_refs};
use crate::plan::Mode;
use crate::value::{Object, PathStep, Value};
use hcl_edit::structure::Body;
use std::collections::{BTreeMap, BTreeSet};

/// Why a value differs between the two environments.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Explanation {
    /// `var.NAME` has a different value.
    Variable(String),
    /// The expression reads `brickform.environment`.
    EnvironmentName,
    /// A development preset of the source environment (name prefix, paused schedule, …).
    Preset(String),
    /// It follows from another difference: `TYPE.NAME.ATTR`, `local.x`.
    Follows(String),
    /// Nothing declared explains it.
    Unexplained,
}

impl std::fmt::Display for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Explanation::Variable(v) => write!(f, "variable {v}"),
            Explanation::EnvironmentName => write!(f, "brickform.environment"),
            Explanation::Preset(p) => write!(f, "development preset ({p})"),
            Explanation::Follows(a) => write!(f, "follows {a}"),
            Explanation::Unexplained => write!(f, "NOTHING DECLARED EXPLAINS THIS"),
        }
    }
}

/// One place where the environments differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub address: InstanceAddr,
    /// Dotted path of the field; empty when the whole resource exists in one environment only.
    pub field: String,
    pub from: Option<Value>,
    pub to: Option<Value>,
    pub explained_by: Vec<Explanation>,
}

impl Difference {
    pub fn unexplained(&self) -> bool {
        self.explained_by.contains(&Explanation::Unexplained)
    }
}

/// What the comparison needs of each environment.
pub struct Side<'a> {
    pub planned: &'a Planned,
    pub vars: &'a Object,
    /// What the development presets changed, by address (empty outside development mode).
    pub presets: &'a super::PresetNotes,
}

fn after_objects(p: &Planned) -> BTreeMap<&InstanceAddr, &Object> {
    p.plan
        .changes
        .iter()
        .filter(|c| c.mode() == Mode::Managed)
        .filter_map(|c| c.after.as_ref().map(|a| (&c.addr, &a.0)))
        .collect()
}

/// Leaf differences between two values, with their paths. Unknown values are not compared:
/// what is known only after apply says nothing about the configuration.
fn diff_values(
    path: &[PathStep],
    a: Option<&Value>,
    b: Option<&Value>,
    out: &mut Vec<(Vec<PathStep>, Option<Value>, Option<Value>)>,
) {
    let absent = |v: Option<&Value>| v.is_none_or(Value::is_null);
    if absent(a) && absent(b) {
        return;
    }
    if matches!(a, Some(Value::Unknown)) || matches!(b, Some(Value::Unknown)) {
        return;
    }
    let and = |step: PathStep| {
        let mut p = path.to_vec();
        p.push(step);
        p
    };
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                diff_values(&and(PathStep::Key(k.clone())), x.get(k), y.get(k), out);
            }
        }
        (Some(Value::List(x)), Some(Value::List(y)))
            if x.len() == y.len() && x.iter().chain(y).all(|v| matches!(v, Value::Object(_))) =>
        {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff_values(&and(PathStep::Index(i)), Some(p), Some(q), out);
            }
        }
        (a, b) if a != b => out.push((path.to_vec(), a.cloned(), b.cloned())),
        _ => {}
    }
}

/// The attribute a path starts with (empty for the whole resource).
fn top(path: &[PathStep]) -> &str {
    match path.first() {
        Some(PathStep::Key(k)) => k,
        _ => "",
    }
}

/// The attribute expression a field was written with, found in the resource body
/// (`schedule.pause_status` is `pause_status` inside the `schedule` block; a block's index
/// picks no particular block, as before).
fn field_refs(body: &Body, path: &[PathStep]) -> Option<Vec<Ref>> {
    let mut names: Vec<&str> = path
        .iter()
        .filter_map(|s| match s {
            PathStep::Key(k) => Some(k.as_str()),
            PathStep::Index(_) => None,
        })
        .collect();
    let mut body = body;
    while names.len() > 1 {
        match body.get_attribute(names[0]) {
            Some(a) => return Some(expr_refs(&a.value)),
            None => {
                let b = body.get_blocks(names[0]).next()?;
                body = &b.body;
                names.remove(0);
            }
        }
    }
    body.get_attribute(names.first()?)
        .map(|a| expr_refs(&a.value))
}

/// Narrows an attribute's references to one key of an object it is written as
/// (`configuration = { landing = … }` for `configuration.landing`).
fn entry_refs(body: &Body, path: &[PathStep]) -> Option<Vec<Ref>> {
    let [PathStep::Key(first), PathStep::Key(key), ..] = path else {
        return None;
    };
    let a = body.get_attribute(first)?;
    let hcl_edit::expr::Expression::Object(o) = &a.value else {
        return None;
    };
    o.iter().find_map(|(k, v)| {
        let name = match k {
            hcl_edit::expr::ObjectKey::Ident(id) => id.as_str().to_string(),
            hcl_edit::expr::ObjectKey::Expression(hcl_edit::expr::Expression::String(s)) => {
                s.value().clone()
            }
            _ => return None,
        };
        (&name == key).then(|| expr_refs(v.expr()))
    })
}

struct Explainer<'a> {
    config: &'a Config,
    changed_vars: BTreeSet<String>,
    /// `address.attribute` values that differ, so a reference to one explains.
    differing: BTreeSet<String>,
}

impl Explainer<'_> {
    fn explain_refs(&self, refs: &[Ref], seen: &mut BTreeSet<String>) -> Vec<Explanation> {
        let mut out = Vec::new();
        for r in refs {
            match r.root.as_str() {
                "var" => {
                    if let Some(name) = r.attrs.first()
                        && self.changed_vars.contains(name)
                    {
                        out.push(Explanation::Variable(name.clone()));
                    }
                }
                "brickform" if r.attrs.first().map(String::as_str) == Some("environment") => {
                    out.push(Explanation::EnvironmentName)
                }
                "local" => {
                    if let Some(name) = r.attrs.first()
                        && seen
                            .insert(ConfigNode::Local(crate::addrs::Scoped::root(name)).to_string())
                        && let Some(l) = self.config.locals.get(name)
                    {
                        out.extend(self.explain_refs(&expr_refs(&l.expr.expr), seen));
                    }
                }
                "each" | "count" | "self" | "path" => {}
                _ => {
                    let Some(target) = r.target() else { continue };
                    let attr = if r.root == "data" {
                        r.attrs.get(2)
                    } else {
                        r.attrs.get(1)
                    };
                    let key = match attr {
                        Some(a) => format!("{target}.{a}"),
                        None => target.clone(),
                    };
                    if self.differing.iter().any(|d| {
                        d == &key
                            || d.starts_with(&format!("{key}."))
                            || (attr.is_none() && d.starts_with(&format!("{target}.")))
                    }) {
                        out.push(Explanation::Follows(key));
                    }
                }
            }
        }
        out.dedup();
        out
    }
}

/// The preset change that explains a field, if one does: the field itself or one inside it.
fn preset_for(field: &str, changes: &[crate::provider::PresetChange]) -> Option<String> {
    changes
        .iter()
        .find(|c| field == c.field || field.starts_with(&format!("{}.", c.field)))
        .map(|c| c.note.clone())
}

/// Every difference between the two sides' planned values, explained. Attributes only the
/// service sets (`is_computed(type, attribute)`) are left out: they follow from the rest.
pub fn compare(
    config: &Config,
    is_computed: &dyn Fn(&str, &str) -> bool,
    from: &Side,
    to: &Side,
) -> Vec<Difference> {
    let a = after_objects(from.planned);
    let b = after_objects(to.planned);
    let changed_vars: BTreeSet<String> = from
        .vars
        .keys()
        .chain(to.vars.keys())
        .filter(|k| from.vars.get(*k) != to.vars.get(*k))
        .cloned()
        .collect();
    let mut raw = Vec::new();
    // Differences are listed in the order of the addresses' text.
    let mut addresses: Vec<&InstanceAddr> = a.keys().chain(b.keys()).copied().collect();
    addresses.sort_by_cached_key(|a| a.to_string());
    addresses.dedup();
    // The first side that plans an address says its type.
    let mut type_of: std::collections::HashMap<&InstanceAddr, &str> = Default::default();
    for c in from
        .planned
        .plan
        .changes
        .iter()
        .chain(&to.planned.plan.changes)
    {
        type_of.entry(&c.addr).or_insert(c.type_name());
    }
    for addr in addresses {
        match (a.get(addr), b.get(addr)) {
            (Some(x), Some(y)) => {
                let mut d = Vec::new();
                diff_values(
                    &[],
                    Some(&Value::object((*x).clone())),
                    Some(&Value::object((*y).clone())),
                    &mut d,
                );
                let type_name = type_of.get(addr).copied().unwrap_or_default();
                for (path, f, t) in d {
                    // Computed values explain what reads them, but are not rows themselves.
                    let shown = !is_computed(type_name, top(&path));
                    raw.push((addr.clone(), path, f, t, shown));
                }
            }
            (x, y) => raw.push((
                addr.clone(),
                Vec::new(),
                x.map(|o| Value::object((*o).clone())),
                y.map(|o| Value::object((*o).clone())),
                true,
            )),
        }
    }
    let differing: BTreeSet<String> = raw
        .iter()
        .map(|(addr, path, _, _, _)| match top(path) {
            "" => addr.to_string(),
            top => format!("{addr}.{top}"),
        })
        .collect();
    let ex = Explainer {
        config,
        changed_vars,
        differing,
    };
    raw.into_iter()
        .filter(|r| r.4)
        .map(|(address, path, f, t, _)| {
            let field = super::configure::path_text(&path);
            let resource = config.resources.get(&address.resource);
            let mut why = Vec::new();
            if let Some(note) = from.presets.get(&address).and_then(|n| preset_for(&field, n)) {
                why.push(Explanation::Preset(note));
            }
            if let Some(note) = to.presets.get(&address).and_then(|n| preset_for(&field, n)) {
                why.push(Explanation::Preset(note));
            }
            if why.is_empty()
                && let Some(r) = resource
            {
                // The expression the field was written with; `None` when it is not in the
                // source as such (a dynamic block, a service default).
                let written = if field.is_empty() {
                    // The resource exists on one side only: its count or for_each decides.
                    Some(
                        r.count
                            .iter()
                            .chain(r.for_each.iter())
                            .flat_map(|e| expr_refs(&e.expr))
                            .collect::<Vec<_>>(),
                    )
                } else {
                    entry_refs(&r.body.body, &path).or_else(|| field_refs(&r.body.body, &path))
                };
                let mut seen = BTreeSet::new();
                why = match written {
                    Some(mut refs) => {
                        // An instance key from for_each explains values read through each.
                        if let Some(e) = &r.for_each {
                            refs.extend(expr_refs(&e.expr));
                        }
                        ex.explain_refs(&refs, &mut seen)
                    }
                    None => {
                        let mut w = ex.explain_refs(&body_refs(&r.body.body), &mut seen);
                        w.retain(|w| !matches!(w, Explanation::Follows(a) if a.starts_with(&format!("{address}."))));
                        w
                    }
                };
            }
            if why.is_empty() {
                why.push(Explanation::Unexplained);
            }
            Difference {
                address,
                field,
                from: f,
                to: t,
                explained_by: why,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::load::load_sources;
    use crate::plan::{Action, Plan, ResourceChange, SerObject};

    fn config(src: &str) -> Config {
        let (config, d) = load_sources(
            std::path::Path::new("."),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        );
        assert!(!d.has_errors(), "{d:?}");
        config
    }

    fn side<'a>(
        planned: &'a Planned,
        vars: &'a Object,
        presets: &'a crate::engine::PresetNotes,
    ) -> Side<'a> {
        Side {
            planned,
            vars,
            presets,
        }
    }

    fn explained(diffs: &[Difference]) -> Vec<(&str, &Vec<Explanation>)> {
        diffs
            .iter()
            .map(|d| (d.field.as_str(), &d.explained_by))
            .collect()
    }

    fn planned(after: serde_json::Value) -> Planned {
        let change = ResourceChange {
            after: Value::from_json(&after).as_object().cloned().map(SerObject),
            ..ResourceChange::bare("t_thing", "a", "t", Action::Create)
        };
        Planned {
            plan: Plan {
                changes: vec![change],
                ..Plan::default()
            },
            specs: Vec::new(),
        }
    }

    #[test]
    fn differences_are_explained_by_variables_presets_and_the_environment_or_flagged() {
        let config = config(
            r#"
variable "v" {}
resource "t_thing" "a" {
  name    = var.v
  label   = "${brickform.environment}-x"
  comment = "fixed"
  id_like = "computed"
}
"#,
        );
        let from = planned(serde_json::json!({
            "name": "dev", "label": "dev-x", "comment": "one", "id_like": 1, "same": true
        }));
        let to = planned(serde_json::json!({
            "name": "prod", "label": "prod-x", "comment": "two", "id_like": 2, "same": true
        }));
        let vars_from = Object::from_iter([("v".to_string(), Value::from("dev"))]);
        let vars_to = Object::from_iter([("v".to_string(), Value::from("prod"))]);
        let notes = BTreeMap::from([(
            InstanceAddr::parse("t_thing.a").unwrap(),
            vec![crate::provider::PresetChange::new(
                "name",
                "name prefixed with \"[dev a] \"",
            )],
        )]);
        let none = BTreeMap::new();
        let is_computed = |_: &str, a: &str| a == "id_like";
        let diffs = compare(
            &config,
            &is_computed,
            &side(&from, &vars_from, &none),
            &side(&to, &vars_to, &none),
        );
        assert_eq!(
            explained(&diffs),
            [
                ("comment", &vec![Explanation::Unexplained]),
                ("label", &vec![Explanation::EnvironmentName]),
                ("name", &vec![Explanation::Variable("v".into())]),
            ]
        );
        assert!(diffs[0].unexplained());

        // A preset of the source environment explains before anything else.
        let diffs = compare(
            &config,
            &is_computed,
            &side(&from, &vars_from, &notes),
            &side(&to, &vars_to, &none),
        );
        assert_eq!(
            diffs[2].explained_by,
            [Explanation::Preset(
                "name prefixed with \"[dev a] \"".into()
            )]
        );
    }

    #[test]
    fn a_key_with_dots_is_explained_by_what_its_own_entry_reads() {
        // Spark and pipeline settings are written as `"a.b.c" = …`: the key is one step of the
        // path, not three, so its entry is found and only what it reads explains it (not
        // var.w, which differs too but leads to the same value here).
        let config = config(
            r#"
variable "v" {}
variable "w" {}
resource "t_thing" "a" {
  configuration = {
    "pipelines.source" = var.v
    "pipelines.fixed"  = var.w
  }
}
"#,
        );
        let with_source = |v: &str| {
            planned(serde_json::json!({
                "configuration": { "pipelines.source": v, "pipelines.fixed": "same" }
            }))
        };
        let (from, to) = (with_source("dev"), with_source("prod"));
        let vars = |v: &str, w: &str| {
            Object::from_iter([
                ("v".to_string(), Value::from(v)),
                ("w".to_string(), Value::from(w)),
            ])
        };
        let (vars_from, vars_to) = (vars("dev", "a"), vars("prod", "b"));
        let none = BTreeMap::new();
        let diffs = compare(
            &config,
            &|_: &str, _: &str| false,
            &side(&from, &vars_from, &none),
            &side(&to, &vars_to, &none),
        );
        assert_eq!(
            explained(&diffs),
            [(
                "configuration.pipelines.source",
                &vec![Explanation::Variable("v".into())]
            )]
        );
    }
}
