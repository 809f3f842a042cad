//! The values references resolve to while planning and applying: variables, locals,
//! resource instances, data sources, `path` and `brickform`.

use crate::lang::eval::Roots;
use crate::plan::{InstanceKey, Mode};
use crate::provider::{Nesting, Registry, Schema};
use crate::value::{Object, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The directory the command was started in, for `path.cwd`, when the process has since
/// changed to the configuration directory (`-C DIR`, as Terraform's `-chdir`).
static STARTED_IN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Records where the command was started, before it changes to the configuration directory.
pub fn started_in(dir: std::path::PathBuf) {
    let _ = STARTED_IN.set(dir);
}

#[derive(Debug, Default, Clone)]
pub struct World {
    roots: HashMap<String, Value>,
    sensitive_vars: HashSet<String>,
    /// Locals whose value derives from a sensitive one.
    sensitive_locals: HashSet<String>,
    /// Attributes of managed resources that are sensitive (marked so by the schema, or
    /// derived from a sensitive value), by type and name: looked up without building a key
    /// for every reference evaluated.
    sensitive_attrs: HashMap<String, HashMap<String, HashSet<String>>>,
    /// The schema of every resource kind (by type) and data source (by `data.TYPE`): an
    /// instance holds every attribute its schema declares.
    schemas: Arc<HashMap<String, Schema>>,
    /// Bytes of the values held (see [`crate::limits::value_bytes`]), against
    /// [`crate::limits::MAX_PLAN_BYTES`].
    held: u64,
    /// The deepest value held, against [`crate::limits::MAX_VALUE_DEPTH`].
    deepest: usize,
}

/// Completes an instance's value with every attribute and nested block its schema declares
/// and the value lacks: null (an empty list for repeated blocks) where the service said
/// nothing (a computed attribute some variants of an object do not have), the state was
/// written before the attribute existed, or the kind never reports it. A reference to a
/// declared attribute then reads null instead of failing — which would block every plan and
/// destroy of a configuration that reads it.
pub fn complete(schema: &Schema, o: &mut Object) {
    for a in &schema.attributes {
        if !o.contains_key(a.name) {
            o.insert(a.name.to_string(), Value::Null);
        }
    }
    for b in &schema.blocks {
        match (o.get_mut(b.name), &b.nesting) {
            (None, Nesting::Single) => {
                o.insert(b.name.to_string(), Value::Null);
            }
            (None, Nesting::List | Nesting::Keyed(_)) => {
                o.insert(b.name.to_string(), Value::List(Vec::new()));
            }
            (Some(Value::Object(inner)), _) => complete(&b.schema, inner),
            (Some(Value::List(items)), _) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        complete(&b.schema, inner);
                    }
                }
            }
            (Some(_), _) => {}
        }
    }
}

impl World {
    pub fn new(
        vars: Object,
        sensitive_vars: HashSet<String>,
        environment: &str,
        dir: &std::path::Path,
        registry: &Registry,
    ) -> Self {
        let mut roots = HashMap::new();
        roots.insert("var".to_string(), Value::Object(vars));
        roots.insert("local".to_string(), Value::Object(Object::new()));
        roots.insert("data".to_string(), Value::Object(Object::new()));
        // `-C DIR` works as Terraform's `-chdir`: relative paths (in `file()`, in `source`)
        // are read from the configuration directory, so the directory of the (root) module
        // is `.` relative to it — the same on every machine and from every working
        // directory. `path.cwd` is where the command was started, absolute, as in Terraform.
        let cwd = STARTED_IN
            .get()
            .cloned()
            .or_else(|| std::env::current_dir().ok())
            .map(|c| c.display().to_string())
            .unwrap_or_else(|| dir.display().to_string());
        roots.insert(
            "path".to_string(),
            Value::Object(Object::from_iter([
                ("root".to_string(), Value::from(".")),
                ("module".to_string(), Value::from(".")),
                ("cwd".to_string(), Value::from(cwd)),
            ])),
        );
        roots.insert(
            "brickform".to_string(),
            Value::Object(Object::from_iter([(
                "environment".to_string(),
                Value::from(environment),
            )])),
        );
        let schemas = registry
            .kinds
            .iter()
            .map(|(t, k)| (t.to_string(), k.schema().clone()))
            .chain(
                registry
                    .data_sources
                    .iter()
                    .map(|(t, d)| (format!("data.{t}"), d.schema().clone())),
            )
            .collect();
        World {
            roots,
            sensitive_vars,
            sensitive_locals: HashSet::new(),
            sensitive_attrs: HashMap::new(),
            schemas: Arc::new(schemas),
            held: 0,
            deepest: 0,
        }
    }

    /// The size counted for a value (past twice the limit it no longer matters), and its
    /// depth.
    fn size(v: &Value) -> (u64, usize) {
        crate::limits::measure(v, crate::limits::MAX_PLAN_BYTES.saturating_mul(2))
    }

    /// Counts a value of `size` coming in and the one it replaced going out.
    fn account(&mut self, (size, depth): (u64, usize), replaced: Option<Value>) {
        let old = replaced.as_ref().map_or(0, |v| World::size(v).0);
        self.held = self.held.saturating_add(size).saturating_sub(old);
        self.deepest = self.deepest.max(depth);
    }

    /// Whether the values held so far are past [`crate::limits::MAX_PLAN_BYTES`]: the plan
    /// stops with an error at the block that went over, before memory runs out.
    /// A value nested past [`crate::limits::MAX_VALUE_DEPTH`] stops it the same way.
    pub fn over_budget(&self) -> Option<String> {
        if let Err(why) = crate::limits::check_depth(self.deepest) {
            return Some(format!("One of its values is too deep: {why}."));
        }
        (self.held > crate::limits::MAX_PLAN_BYTES).then(|| {
            format!(
                "The values of this configuration add up to more than {} MiB (locals, resource and data source instances), the limit for one plan. A large value is copied into many places: reference it from one place, or make it smaller.",
                crate::limits::MAX_PLAN_BYTES >> 20
            )
        })
    }

    /// The size and depth of `Value::Object(o)` as the plan's limits count them, without
    /// making that value.
    pub fn measure_object(o: &Object) -> (u64, usize) {
        crate::limits::measure_object(o, crate::limits::MAX_PLAN_BYTES.saturating_mul(2))
    }

    /// Counts values the plan holds elsewhere (a planned change nothing refers to) against
    /// its limits, as if they were held here.
    pub fn count(&mut self, measured: (u64, usize)) {
        self.account(measured, None);
    }

    /// Marks a resource's attribute sensitive (for every instance of the resource).
    pub fn mark_sensitive(&mut self, type_name: &str, name: &str, attr: &str) {
        self.sensitive_attrs
            .entry(type_name.to_string())
            .or_default()
            .entry(name.to_string())
            .or_default()
            .insert(attr.to_string());
    }

    /// Evaluates the local `name` against what the world holds, and keeps its value
    /// (unknown when evaluating fails) and whether it derives from a sensitive value, so
    /// what reads the local is sensitive too.
    pub fn evaluate_local(
        &mut self,
        name: &str,
        expr: &hcl_edit::expr::Expression,
        dir: &std::path::Path,
    ) -> Result<(), crate::lang::eval::EvalError> {
        let (v, sensitive) = {
            let mut ev = crate::lang::eval::Evaluator::new(&*self, dir);
            let v = ev.eval(expr);
            (v, ev.touched_sensitive)
        };
        match v {
            Ok(v) => {
                self.set_local(name, v, sensitive);
                Ok(())
            }
            Err(e) => {
                self.set_local(name, Value::Unknown, false);
                Err(e)
            }
        }
    }

    pub fn set_local(&mut self, name: &str, v: Value, sensitive: bool) {
        if sensitive {
            self.sensitive_locals.insert(name.to_string());
        } else {
            self.sensitive_locals.remove(name);
        }
        let mut replaced = None;
        let size = World::size(&v);
        if let Some(Value::Object(o)) = self.roots.get_mut("local") {
            replaced = o.insert(name.to_string(), v);
        }
        self.account(size, replaced);
    }

    fn resource_slot(&mut self, mode: Mode, type_name: &str) -> &mut Object {
        let container = match mode {
            Mode::Managed => self
                .roots
                .entry(type_name.to_string())
                .or_insert_with(empty),
            Mode::Data => {
                let data =
                    ensure_object(self.roots.entry("data".to_string()).or_insert_with(empty));
                data.entry(type_name.to_string()).or_insert_with(empty)
            }
        };
        ensure_object(container)
    }

    /// Declares how a resource repeats, before its instances are set: a single object, a
    /// list (`count`) or a map (`for_each`). An unknown repetition makes the whole resource
    /// unknown.
    pub fn declare_resource(&mut self, mode: Mode, type_name: &str, name: &str, shape: Value) {
        self.resource_slot(mode, type_name)
            .insert(name.to_string(), shape);
    }

    pub fn set_instance(
        &mut self,
        mode: Mode,
        type_name: &str,
        name: &str,
        key: Option<&InstanceKey>,
        mut v: Value,
    ) {
        let schema = match mode {
            Mode::Managed => self.schemas.get(type_name),
            Mode::Data => self.schemas.get(&format!("data.{type_name}")),
        };
        if let (Some(schema), Value::Object(o)) = (schema, &mut v) {
            complete(schema, o);
        }
        let size = World::size(&v);
        let slot = self.resource_slot(mode, type_name);
        // `Some(replaced)` once the value is in; an entry of another shape (a count index
        // into a for_each map) takes nothing.
        let stored: Option<Option<Value>> = match key {
            None => Some(slot.insert(name.to_string(), v)),
            Some(InstanceKey::Index(i)) => {
                let entry = slot
                    .entry(name.to_string())
                    .or_insert_with(|| Value::List(Vec::new()));
                match entry {
                    Value::List(l) => {
                        // A new slot replaces nothing (the nulls before it are not counted).
                        let fresh = l.len() <= *i;
                        if fresh {
                            l.resize(*i + 1, Value::Null);
                        }
                        let old = std::mem::replace(&mut l[*i], v);
                        Some((!fresh).then_some(old))
                    }
                    _ => None,
                }
            }
            Some(InstanceKey::Key(k)) => {
                let entry = slot
                    .entry(name.to_string())
                    .or_insert_with(|| Value::Object(Object::new()));
                match entry {
                    Value::Object(o) => Some(o.insert(k.clone(), v)),
                    _ => None,
                }
            }
        };
        if let Some(replaced) = stored {
            self.account(size, replaced);
        }
    }
}

fn empty() -> Value {
    Value::Object(Object::new())
}

fn ensure_object(v: &mut Value) -> &mut Object {
    if !matches!(v, Value::Object(_)) {
        *v = empty();
    }
    match v {
        Value::Object(o) => o,
        // Just made an object above.
        _ => unreachable!("value was set to an object"),
    }
}

impl Roots for World {
    fn root(&self, name: &str) -> Option<&Value> {
        self.roots.get(name)
    }
    fn is_sensitive(&self, root: &str, attrs: &[&str]) -> bool {
        match (root, attrs) {
            ("var", [name, ..]) => self.sensitive_vars.contains(*name),
            ("local", [name, ..]) => self.sensitive_locals.contains(*name),
            // A whole instance holds its sensitive attributes.
            (_, [name]) => self
                .sensitive_attrs
                .get(root)
                .and_then(|r| r.get(*name))
                .is_some_and(|attrs| !attrs.is_empty()),
            (_, [name, attr, ..]) => self
                .sensitive_attrs
                .get(root)
                .and_then(|r| r.get(*name))
                .is_some_and(|attrs| attrs.contains(*attr)),
            _ => false,
        }
    }
    fn missing_root(&self, name: &str) -> String {
        format!("There is no resource type or variable named \"{name}\".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        World::new(
            Default::default(),
            Default::default(),
            "default",
            std::path::Path::new("."),
            &crate::provider::Registry::default(),
        )
    }

    #[test]
    fn a_value_counted_without_being_held_counts_as_much() {
        let o = Object::from_iter([
            ("name".to_string(), Value::from("x".repeat(100))),
            (
                "tags".to_string(),
                Value::Object(Object::from_iter([(
                    "k".to_string(),
                    Value::List(vec![Value::from("v"), Value::Null]),
                )])),
            ),
        ]);
        let (mut held, mut counted) = (world(), world());
        held.set_instance(Mode::Managed, "t", "n", None, Value::Object(o.clone()));
        counted.count(World::measure_object(&o));
        assert!(held.held > 100);
        assert_eq!((counted.held, counted.deepest), (held.held, held.deepest));
        assert!(!counted.roots.contains_key("t"));
    }

    #[test]
    fn a_value_replaced_is_no_longer_counted() {
        let mut w = world();
        let big = Value::String("x".repeat(1000));
        w.set_local("a", big.clone(), false);
        let one = w.held;
        assert!(one >= 1000);
        w.set_local("a", big.clone(), false);
        assert_eq!(w.held, one);
        w.set_instance(
            Mode::Managed,
            "t",
            "n",
            Some(&InstanceKey::Index(0)),
            big.clone(),
        );
        w.set_instance(
            Mode::Managed,
            "t",
            "n",
            Some(&InstanceKey::Index(0)),
            big.clone(),
        );
        w.set_instance(
            Mode::Managed,
            "t",
            "n",
            Some(&InstanceKey::Key("k".into())),
            Value::Null,
        );
        assert_eq!(w.held, 2 * one);
        w.set_local("a", Value::Null, false);
        assert!(w.held < 2 * one);
        assert!(w.over_budget().is_none());
    }

    #[test]
    fn a_local_derived_from_a_sensitive_value_is_sensitive() {
        let mut w = World::new(
            Object::from_iter([("pw".to_string(), Value::from("hunter2"))]),
            HashSet::from(["pw".to_string()]),
            "default",
            std::path::Path::new("."),
            &crate::provider::Registry::default(),
        );
        let dir = std::path::Path::new(".");
        let expr = |s: &str| s.parse::<hcl_edit::expr::Expression>().unwrap();
        w.evaluate_local("p", &expr("\"x-${var.pw}\""), dir)
            .unwrap();
        w.evaluate_local("q", &expr("local.p"), dir).unwrap();
        w.evaluate_local("plain", &expr("\"x\""), dir).unwrap();
        w.evaluate_local("hidden", &expr("sensitive(\"x\")"), dir)
            .unwrap();
        assert!(w.is_sensitive("local", &["p"]));
        assert!(w.is_sensitive("local", &["q"]));
        assert!(w.is_sensitive("local", &["hidden"]));
        assert!(!w.is_sensitive("local", &["plain"]));
        // Evaluated again (as apply does once resources are known), it is what it is now.
        w.evaluate_local("p", &expr("nonsensitive(var.pw)"), dir)
            .unwrap();
        assert!(!w.is_sensitive("local", &["p"]));
    }
}
