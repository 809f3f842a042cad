//! The values references resolve to while planning and applying: variables, locals,
//! resource instances, data sources, `path` and `brickform`.

use crate::addrs::ModuleInstance;
use crate::engine::watch::Watch;
use crate::lang::eval::Roots;
use crate::plan::{InstanceKey, Mode};
use crate::provider::{Registry, Schema};
use crate::value::{Object, PathStep, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The directory the command was started in, for `path.cwd`, when the process has since
/// changed to the configuration directory (`-C DIR`, as Terraform's `-chdir`).
static STARTED_IN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Records where the command was started, before it changes to the configuration directory.
pub fn started_in(dir: std::path::PathBuf) {
    let _ = STARTED_IN.set(dir);
}

/// The names one module instance's expressions see: `var`, `local`, `data`, `module`,
/// `path`, `brickform` and its resource types, with what of them is sensitive.
#[derive(Debug, Default, Clone)]
struct Scope {
    roots: HashMap<String, Value>,
    sensitive_vars: HashSet<String>,
    /// Locals whose value derives from a sensitive one.
    sensitive_locals: HashSet<String>,
    /// Attributes of managed resources that are sensitive (marked so by the schema, or
    /// derived from a sensitive value), by type and name: looked up without building a key
    /// for every reference evaluated.
    sensitive_attrs: HashMap<String, HashMap<String, HashSet<String>>>,
    /// Outputs of the module calls made here that are sensitive, by call and output.
    sensitive_outputs: HashMap<String, HashSet<String>>,
}

static EMPTY_SCOPE: std::sync::LazyLock<Scope> = std::sync::LazyLock::new(Scope::default);

#[derive(Debug, Default, Clone)]
pub struct World {
    /// Every module instance's names, the root's included.
    scopes: HashMap<ModuleInstance, Scope>,
    environment: String,
    cwd: String,
    /// The schema of every resource kind (by type) and data source (by `data.TYPE`): an
    /// instance holds every attribute its schema declares.
    schemas: Arc<HashMap<String, Schema>>,
    /// Bytes of the values held (see [`crate::limits::value_bytes`]), against
    /// [`crate::limits::MAX_PLAN_BYTES`].
    held: u64,
    /// The deepest value held, against [`crate::limits::MAX_VALUE_DEPTH`].
    deepest: usize,
    /// Where evaluations against this world say what they read, when they are to be
    /// checked later ([`World::watched`]).
    watch: Option<Arc<Watch>>,
}

/// What expressions of one module instance resolve their names against.
pub struct At<'w> {
    scope: &'w Scope,
    /// The watch of the world, with the module instance the reads are made in.
    watch: Option<(&'w Watch, ModuleInstance)>,
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
        match o.get_mut(b.name) {
            None => {
                o.insert(b.name.to_string(), b.none());
            }
            Some(Value::Object(inner)) => complete(&b.schema, Arc::make_mut(inner)),
            Some(Value::List(items)) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        complete(&b.schema, Arc::make_mut(inner));
                    }
                }
            }
            Some(_) => {}
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
        let mut world = World {
            scopes: HashMap::new(),
            environment: environment.to_string(),
            cwd,
            schemas: Arc::new(schemas),
            held: 0,
            deepest: 0,
            watch: None,
        };
        let root = world.new_scope(".");
        world.scopes.insert(ModuleInstance::root(), root);
        let root = world.scope_mut(&ModuleInstance::root());
        root.roots.insert("var".to_string(), Value::object(vars));
        root.sensitive_vars = sensitive_vars;
        world
    }

    /// The names of a module instance before anything is set: `path.module` is `dir`.
    fn new_scope(&self, dir: &str) -> Scope {
        let mut roots = HashMap::new();
        for name in ["var", "local", "data", "module"] {
            roots.insert(name.to_string(), Value::Object(Default::default()));
        }
        roots.insert(
            "path".to_string(),
            Value::object(Object::from_iter([
                ("root".to_string(), Value::from(".")),
                ("module".to_string(), Value::from(dir)),
                ("cwd".to_string(), Value::from(self.cwd.as_str())),
            ])),
        );
        roots.insert(
            "brickform".to_string(),
            Value::object(Object::from_iter([(
                "environment".to_string(),
                Value::from(self.environment.as_str()),
            )])),
        );
        Scope {
            roots,
            ..Scope::default()
        }
    }

    fn scope_mut(&mut self, m: &ModuleInstance) -> &mut Scope {
        if !self.scopes.contains_key(m) {
            let fresh = self.new_scope(".");
            self.scopes.insert(m.clone(), fresh);
        }
        // Inserted just above when it was missing.
        self.scopes
            .get_mut(m)
            .unwrap_or_else(|| unreachable!("scope inserted above"))
    }

    /// The names the expressions of module instance `m` see.
    pub fn at(&self, m: &ModuleInstance) -> At<'_> {
        At {
            scope: self.scopes.get(m).unwrap_or(&EMPTY_SCOPE),
            watch: self.watch.as_deref().map(|w| (w, m.clone())),
        }
    }

    /// From now on, evaluations against this world say what they read to the watch
    /// returned (a copy of the world made after this shares it).
    pub fn watched(&mut self) -> Arc<Watch> {
        let watch = Arc::new(Watch::default());
        self.watch = Some(watch.clone());
        watch
    }

    /// The value under `root` at `steps`, as module instance `m` sees it.
    pub(crate) fn value_at(
        &self,
        m: &ModuleInstance,
        root: &str,
        steps: &[PathStep],
    ) -> Option<&Value> {
        let mut cur = self.scopes.get(m).unwrap_or(&EMPTY_SCOPE).roots.get(root)?;
        for step in steps {
            cur = match (step, cur) {
                (PathStep::Key(k), Value::Object(o)) => o.get(k)?,
                (PathStep::Index(i), Value::List(l)) => l.get(*i)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// Whether reading `names` under `root` reveals a sensitive value in module instance `m`.
    pub(crate) fn sensitive_at(&self, m: &ModuleInstance, root: &str, names: &[&str]) -> bool {
        At {
            scope: self.scopes.get(m).unwrap_or(&EMPTY_SCOPE),
            watch: None,
        }
        .sensitive_here(root, names)
    }

    /// Makes the scope of every module instance of `config` (with its `path.module`), and
    /// declares every call in its caller's `module` as the call repeats: an object of
    /// outputs, a list of them (`count`) or a map (`for_each`), each output unknown until it
    /// is evaluated.
    pub fn declare_modules(&mut self, config: &crate::lang::load::Config) {
        for call in &config.module_calls_made {
            let shape = if call.unknown {
                Value::Unknown
            } else if call.has_count {
                Value::List(Vec::new())
            } else if call.has_for_each {
                Value::Object(Default::default())
            } else {
                Value::Null
            };
            self.calls_mut(&call.caller)
                .entry(call.name.clone())
                .or_insert(shape);
        }
        for (path, info) in &config.module_instances {
            // A scope made already (for a call inside it) keeps what it holds and gets its
            // `path.module`.
            let fresh = self.new_scope(&info.dir);
            let scope = self.scope_mut(path);
            if let Some(p) = fresh.roots.get("path") {
                scope.roots.insert("path".to_string(), p.clone());
            }
            let Some((parent, step)) = path.parent() else {
                continue;
            };
            let outputs = Value::object(
                info.outputs
                    .iter()
                    .map(|o| (o.clone(), Value::Unknown))
                    .collect(),
            );
            // Every call's shape was declared above.
            let Some(slot) = self.calls_mut(&parent).get_mut(&step.name) else {
                continue;
            };
            match (&step.key, slot) {
                (_, Value::Unknown) => {}
                (None, slot) => *slot = outputs,
                (Some(InstanceKey::Index(i)), Value::List(l)) => {
                    if l.len() <= *i {
                        l.resize(*i + 1, Value::Null);
                    }
                    l[*i] = outputs;
                }
                (Some(InstanceKey::Key(k)), Value::Object(o)) => {
                    Arc::make_mut(o).insert(k.clone(), outputs);
                }
                _ => {}
            }
        }
    }

    /// The `module` root of `caller`: its calls, by name.
    fn calls_mut(&mut self, caller: &ModuleInstance) -> &mut Object {
        ensure_object(
            self.scope_mut(caller)
                .roots
                .entry("module".to_string())
                .or_insert_with(empty),
        )
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
    pub fn mark_sensitive(
        &mut self,
        module: &ModuleInstance,
        type_name: &str,
        name: &str,
        attr: &str,
    ) {
        self.scope_mut(module)
            .sensitive_attrs
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
        module: &ModuleInstance,
        name: &str,
        expr: &hcl_edit::expr::Expression,
        dir: &std::path::Path,
    ) -> Result<(), crate::lang::eval::EvalError> {
        let (v, sensitive) = {
            let at = self.at(module);
            let mut ev = crate::lang::eval::Evaluator::new(&at, dir);
            let v = ev.eval(expr);
            (v, ev.touched_sensitive)
        };
        match v {
            Ok(v) => {
                self.set_local(module, name, v, sensitive);
                Ok(())
            }
            Err(e) => {
                self.set_local(module, name, Value::Unknown, false);
                Err(e)
            }
        }
    }

    pub fn set_local(&mut self, module: &ModuleInstance, name: &str, v: Value, sensitive: bool) {
        self.set_named(module, "local", name, v, sensitive);
    }

    /// Sets a module's input variable, as its call gave it.
    pub fn set_var(&mut self, module: &ModuleInstance, name: &str, v: Value, sensitive: bool) {
        self.set_named(module, "var", name, v, sensitive);
    }

    /// Sets a module's output where its caller reads it: `module.NAME.OUTPUT`, with the
    /// instance's key when the call repeats. The root's outputs are not read by anything.
    pub fn set_output(&mut self, module: &ModuleInstance, name: &str, v: Value, sensitive: bool) {
        let Some((parent, step)) = module.parent() else {
            return;
        };
        let size = World::size(&v);
        let flagged = self
            .scope_mut(&parent)
            .sensitive_outputs
            .entry(step.name.clone())
            .or_default();
        if sensitive {
            flagged.insert(name.to_string());
        } else {
            flagged.remove(name);
        }
        let calls = self.calls_mut(&parent);
        let slot = match (&step.key, calls.get_mut(&step.name)) {
            (None, Some(slot)) => Some(slot),
            (Some(InstanceKey::Index(i)), Some(Value::List(l))) => l.get_mut(*i),
            (Some(InstanceKey::Key(k)), Some(Value::Object(o))) => Arc::make_mut(o).get_mut(k),
            _ => None,
        };
        let replaced = match slot {
            Some(slot) => ensure_object(slot).insert(name.to_string(), v),
            None => return,
        };
        self.account(size, replaced);
    }

    fn set_named(
        &mut self,
        module: &ModuleInstance,
        root: &str,
        name: &str,
        v: Value,
        sensitive: bool,
    ) {
        let scope = self.scope_mut(module);
        let flagged = if root == "var" {
            &mut scope.sensitive_vars
        } else {
            &mut scope.sensitive_locals
        };
        if sensitive {
            flagged.insert(name.to_string());
        } else {
            flagged.remove(name);
        }
        let mut replaced = None;
        let size = World::size(&v);
        if let Some(Value::Object(o)) = scope.roots.get_mut(root) {
            replaced = Arc::make_mut(o).insert(name.to_string(), v);
        }
        self.account(size, replaced);
    }

    fn resource_slot(
        &mut self,
        module: &ModuleInstance,
        mode: Mode,
        type_name: &str,
    ) -> &mut Object {
        let scope = self.scope_mut(module);
        let container = match mode {
            Mode::Managed => scope
                .roots
                .entry(type_name.to_string())
                .or_insert_with(empty),
            Mode::Data => {
                let data =
                    ensure_object(scope.roots.entry("data".to_string()).or_insert_with(empty));
                data.entry(type_name.to_string()).or_insert_with(empty)
            }
        };
        ensure_object(container)
    }

    /// Declares how a resource repeats, before its instances are set: a single object, a
    /// list (`count`) or a map (`for_each`). An unknown repetition makes the whole resource
    /// unknown.
    pub fn declare_resource(
        &mut self,
        module: &ModuleInstance,
        mode: Mode,
        type_name: &str,
        name: &str,
        shape: Value,
    ) {
        self.resource_slot(module, mode, type_name)
            .insert(name.to_string(), shape);
    }

    /// Declares `r` by how it repeats: a list with `count`, a map with `for_each`, else a
    /// single object, before its instances are set.
    pub fn declare_block(&mut self, r: &crate::lang::load::Resource) {
        let shape = if r.count.is_some() {
            Value::List(Vec::new())
        } else if r.for_each.is_some() {
            empty()
        } else {
            Value::Null
        };
        self.declare_resource(&r.module, r.mode, &r.type_name, &r.name, shape);
    }

    /// A world with no variables and no kinds, for tests.
    #[cfg(test)]
    pub(crate) fn bare() -> World {
        World::new(
            Default::default(),
            Default::default(),
            "default",
            std::path::Path::new("."),
            &crate::provider::Registry::default(),
        )
    }

    /// The schema of a managed resource's or a data source's kind, when a provider has it.
    pub fn schema(&self, mode: Mode, type_name: &str) -> Option<&Schema> {
        match mode {
            Mode::Managed => self.schemas.get(type_name),
            Mode::Data => self.schemas.get(&format!("data.{type_name}")),
        }
    }

    pub fn set_instance(
        &mut self,
        module: &ModuleInstance,
        mode: Mode,
        type_name: &str,
        name: &str,
        key: Option<&InstanceKey>,
        mut v: Value,
    ) {
        if let (Some(schema), Value::Object(o)) = (self.schema(mode, type_name), &mut v) {
            complete(schema, Arc::make_mut(o));
        }
        let size = World::size(&v);
        let slot = self.resource_slot(module, mode, type_name);
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
                    .or_insert_with(|| Value::Object(Default::default()));
                match entry {
                    Value::Object(o) => Some(Arc::make_mut(o).insert(k.clone(), v)),
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
    Value::Object(Default::default())
}

fn ensure_object(v: &mut Value) -> &mut Object {
    if !matches!(v, Value::Object(_)) {
        *v = empty();
    }
    match v {
        Value::Object(o) => Arc::make_mut(o),
        // Just made an object above.
        _ => unreachable!("value was set to an object"),
    }
}

impl At<'_> {
    fn sensitive_here(&self, root: &str, attrs: &[&str]) -> bool {
        let s = self.scope;
        match (root, attrs) {
            ("var", []) => !s.sensitive_vars.is_empty(),
            ("local", []) => !s.sensitive_locals.is_empty(),
            ("module", []) => s.sensitive_outputs.values().any(|o| !o.is_empty()),
            (_, []) => s
                .sensitive_attrs
                .get(root)
                .is_some_and(|names| names.values().any(|attrs| !attrs.is_empty())),
            ("var", [name, ..]) => s.sensitive_vars.contains(*name),
            ("local", [name, ..]) => s.sensitive_locals.contains(*name),
            ("module", [call]) => s
                .sensitive_outputs
                .get(*call)
                .is_some_and(|o| !o.is_empty()),
            ("module", [call, output, ..]) => s
                .sensitive_outputs
                .get(*call)
                .is_some_and(|o| o.contains(*output)),
            // A whole instance holds its sensitive attributes.
            (_, [name]) => s
                .sensitive_attrs
                .get(root)
                .and_then(|r| r.get(*name))
                .is_some_and(|attrs| !attrs.is_empty()),
            (_, [name, attr, ..]) => s
                .sensitive_attrs
                .get(root)
                .and_then(|r| r.get(*name))
                .is_some_and(|attrs| attrs.contains(*attr)),
        }
    }
}

impl Roots for At<'_> {
    fn root(&self, name: &str) -> Option<&Value> {
        self.scope.roots.get(name)
    }
    fn is_sensitive(&self, root: &str, attrs: &[&str]) -> bool {
        let answer = self.sensitive_here(root, attrs);
        if let Some((watch, m)) = &self.watch {
            watch.sensitive(m, root, attrs, answer);
        }
        answer
    }
    fn missing_root(&self, name: &str) -> String {
        format!("There is no resource type or variable named \"{name}\".")
    }
    fn watching(&self) -> bool {
        self.watch.is_some()
    }
    fn read(&self, root: &str, steps: &[PathStep], found: Option<&Value>) {
        if let Some((watch, m)) = &self.watch {
            watch.value(m, root, steps, found);
        }
    }
}

/// The world as the root module's expressions see it.
impl Roots for World {
    fn root(&self, name: &str) -> Option<&Value> {
        self.at(&ModuleInstance::root()).scope.roots.get(name)
    }
    fn is_sensitive(&self, root: &str, attrs: &[&str]) -> bool {
        self.at(&ModuleInstance::root()).is_sensitive(root, attrs)
    }
    fn missing_root(&self, name: &str) -> String {
        self.at(&ModuleInstance::root()).missing_root(name)
    }
    fn watching(&self) -> bool {
        self.watch.is_some()
    }
    fn read(&self, root: &str, steps: &[PathStep], found: Option<&Value>) {
        self.at(&ModuleInstance::root()).read(root, steps, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> ModuleInstance {
        ModuleInstance::root()
    }

    fn world() -> World {
        World::bare()
    }

    #[test]
    fn a_value_counted_without_being_held_counts_as_much() {
        let o = Object::from_iter([
            ("name".to_string(), Value::from("x".repeat(100))),
            (
                "tags".to_string(),
                Value::object(Object::from_iter([(
                    "k".to_string(),
                    Value::List(vec![Value::from("v"), Value::Null]),
                )])),
            ),
        ]);
        let (mut held, mut counted) = (world(), world());
        held.set_instance(
            &root(),
            Mode::Managed,
            "t",
            "n",
            None,
            Value::object(o.clone()),
        );
        counted.count(World::measure_object(&o));
        assert!(held.held > 100);
        assert_eq!((counted.held, counted.deepest), (held.held, held.deepest));
        assert!(counted.root("t").is_none());
    }

    #[test]
    fn a_value_replaced_is_no_longer_counted() {
        let mut w = world();
        let big = Value::String("x".repeat(1000));
        w.set_local(&root(), "a", big.clone(), false);
        let one = w.held;
        assert!(one >= 1000);
        w.set_local(&root(), "a", big.clone(), false);
        assert_eq!(w.held, one);
        w.set_instance(
            &root(),
            Mode::Managed,
            "t",
            "n",
            Some(&InstanceKey::Index(0)),
            big.clone(),
        );
        w.set_instance(
            &root(),
            Mode::Managed,
            "t",
            "n",
            Some(&InstanceKey::Index(0)),
            big.clone(),
        );
        w.set_instance(
            &root(),
            Mode::Managed,
            "t",
            "n",
            Some(&InstanceKey::Key("k".into())),
            Value::Null,
        );
        assert_eq!(w.held, 2 * one);
        w.set_local(&root(), "a", Value::Null, false);
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
        w.evaluate_local(&root(), "p", &expr("\"x-${var.pw}\""), dir)
            .unwrap();
        w.evaluate_local(&root(), "q", &expr("local.p"), dir)
            .unwrap();
        w.evaluate_local(&root(), "plain", &expr("\"x\""), dir)
            .unwrap();
        w.evaluate_local(&root(), "hidden", &expr("sensitive(\"x\")"), dir)
            .unwrap();
        assert!(w.is_sensitive("local", &["p"]));
        assert!(w.is_sensitive("local", &["q"]));
        assert!(w.is_sensitive("local", &["hidden"]));
        assert!(!w.is_sensitive("local", &["plain"]));
        // Evaluated again (as apply does once resources are known), it is what it is now.
        w.evaluate_local(&root(), "p", &expr("nonsensitive(var.pw)"), dir)
            .unwrap();
        assert!(!w.is_sensitive("local", &["p"]));
    }
}
