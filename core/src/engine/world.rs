//! The values references resolve to while planning and applying: variables, locals,
//! resource instances, data sources, `path` and `brickform`.

use crate::lang::eval::Roots;
use crate::plan::{InstanceKey, Mode};
use crate::value::{Object, Value};
use std::collections::{HashMap, HashSet};

#[derive(Debug, Default, Clone)]
pub struct World {
    roots: HashMap<String, Value>,
    sensitive_vars: HashSet<String>,
    /// `TYPE.NAME.ATTR` of managed resources whose attribute is sensitive: marked so by the
    /// schema, or derived from a sensitive value.
    sensitive_attrs: HashSet<String>,
}

impl World {
    pub fn new(
        vars: Object,
        sensitive_vars: HashSet<String>,
        environment: &str,
        dir: &std::path::Path,
    ) -> Self {
        let mut roots = HashMap::new();
        roots.insert("var".to_string(), Value::Object(vars));
        roots.insert("local".to_string(), Value::Object(Object::new()));
        roots.insert("data".to_string(), Value::Object(Object::new()));
        let dir = dir.display().to_string();
        roots.insert(
            "path".to_string(),
            Value::Object(Object::from_iter([
                ("root".to_string(), Value::from(dir.clone())),
                ("module".to_string(), Value::from(dir.clone())),
                ("cwd".to_string(), Value::from(dir)),
            ])),
        );
        roots.insert(
            "brickform".to_string(),
            Value::Object(Object::from_iter([(
                "environment".to_string(),
                Value::from(environment),
            )])),
        );
        World {
            roots,
            sensitive_vars,
            sensitive_attrs: HashSet::new(),
        }
    }

    /// Marks a resource's attribute sensitive (for every instance of the resource).
    pub fn mark_sensitive(&mut self, type_name: &str, name: &str, attr: &str) {
        self.sensitive_attrs
            .insert(format!("{type_name}.{name}.{attr}"));
    }

    pub fn set_local(&mut self, name: &str, v: Value) {
        if let Some(Value::Object(o)) = self.roots.get_mut("local") {
            o.insert(name.to_string(), v);
        }
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
        v: Value,
    ) {
        let slot = self.resource_slot(mode, type_name);
        match key {
            None => {
                slot.insert(name.to_string(), v);
            }
            Some(InstanceKey::Index(i)) => {
                let entry = slot
                    .entry(name.to_string())
                    .or_insert_with(|| Value::List(Vec::new()));
                if let Value::List(l) = entry {
                    if l.len() <= *i {
                        l.resize(*i + 1, Value::Null);
                    }
                    l[*i] = v;
                }
            }
            Some(InstanceKey::Key(k)) => {
                let entry = slot
                    .entry(name.to_string())
                    .or_insert_with(|| Value::Object(Object::new()));
                if let Value::Object(o) = entry {
                    o.insert(k.clone(), v);
                }
            }
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
            (_, [name]) => {
                // A whole instance holds its sensitive attributes.
                let prefix = format!("{root}.{name}.");
                self.sensitive_attrs.iter().any(|a| a.starts_with(&prefix))
            }
            (_, [name, attr, ..]) => self
                .sensitive_attrs
                .contains(&format!("{root}.{name}.{attr}")),
            _ => false,
        }
    }
    fn missing_root(&self, name: &str) -> String {
        format!("There is no resource type or variable named \"{name}\".")
    }
}
