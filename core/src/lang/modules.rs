//! Modules: `module "NAME" { source = "./dir" … }` calls a directory of configuration files
//! as a module, with input variables set by the call, outputs the caller reads as
//! `module.NAME.OUTPUT`, and `count` / `for_each` for several instances.
//!
//! A module is loaded once per call ([`load_modules`]). Once the root's variables are known,
//! [`expand`] turns every call into its instances and puts each instance's objects into the
//! configuration beside the root's, each with its module instance: a resource keyed by its
//! full address (`module.src["mysql"].TYPE.NAME`), a local or output by its scoped key. The
//! rest of the engine then plans one graph in which every node knows its module instance,
//! and expressions resolve their names in that instance.
//!
//! The instances of a call must be known before anything is planned: its `count` and
//! `for_each` may read variables, locals and literals, not resources (Terraform asks the
//! same whenever they are not known at plan time).

use super::eval::{Evaluator, Roots};
use super::load::{
    Config, ModuleBody, ModuleCall, ModuleInstanceInfo, ModuleVariable, Reference,
    read_config_files, scoped_key,
};
use super::repetition::{Expansion, Instances, bind_instance, expansion};
use crate::addrs::ModuleInstance;
use crate::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use crate::source::SourceFile;
use crate::value::{Object, Value};
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// How deep modules may call modules: far past what real configurations do, and short of
/// what a call chain that never ends would take.
const MAX_MODULE_DEPTH: usize = 16;

/// Loads the module every call of the configuration names, and the modules those call.
pub fn load_modules(config: &mut Config, diags: &mut Diagnostics) {
    if config.module_calls.is_empty() {
        return;
    }
    let root = config.dir.clone();
    let mut calls = std::mem::take(&mut config.module_calls);
    let mut stack = vec![canonical(&root)];
    for call in calls.values_mut() {
        load_call(config, &root, Path::new(""), call, &mut stack, diags);
    }
    config.module_calls = calls;
}

fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// `base` joined with `rel`, `.` and `..` resolved without the file system, so
/// `path.module` reads `modules/source` for `./modules/source`.
fn join_lexically(base: &Path, rel: &str) -> PathBuf {
    let mut out: Vec<String> = base
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    for c in Path::new(rel).components() {
        match c {
            Component::Normal(s) => out.push(s.to_string_lossy().into_owned()),
            Component::ParentDir => {
                if out.last().is_some_and(|l| l != "..") {
                    out.pop();
                } else {
                    out.push("..".into());
                }
            }
            _ => {}
        }
    }
    out.iter().collect()
}

fn load_call(
    config: &mut Config,
    root: &Path,
    caller_dir: &Path,
    call: &mut ModuleCall,
    stack: &mut Vec<PathBuf>,
    diags: &mut Diagnostics,
) {
    let source = call.source.clone();
    if !(source.starts_with("./") || source.starts_with("../")) {
        diags.push(
            Diagnostic::error("Unsupported module source")
                .at(call.source_span.clone())
                .detail(format!(
                    "brickform calls modules from local directories only: a source starting with ./ or ../, relative to the calling module's directory. \"{source}\" is not one."
                ))
                .hint("copy the module into the repository, for example under ./modules, and use its path"),
        );
        return;
    }
    let rel = join_lexically(caller_dir, &source);
    let dir = root.join(&rel);
    if !dir.is_dir() {
        diags.push(
            Diagnostic::error("Module directory not found")
                .at(call.source_span.clone())
                .detail(format!(
                    "The module \"{}\" is called from {}, which is not a directory.",
                    call.name,
                    dir.display()
                )),
        );
        return;
    }
    let here = canonical(&dir);
    if stack.contains(&here) {
        diags.push(
            Diagnostic::error("Module calls itself")
                .at(call.source_span.clone())
                .detail(format!(
                    "The module \"{}\" ({}) is already being called by one of its callers: the calls would never end.",
                    call.name,
                    rel.display()
                )),
        );
        return;
    }
    if stack.len() > MAX_MODULE_DEPTH {
        diags.push(
            Diagnostic::error("Modules nested too deeply")
                .at(call.source_span.clone())
                .detail(format!(
                    "Modules may call modules {MAX_MODULE_DEPTH} levels deep at most."
                )),
        );
        return;
    }
    let (files, d) = read_config_files(&dir);
    diags.extend(d);
    if files.is_empty() {
        diags.push(
            Diagnostic::error("Empty module")
                .at(call.source_span.clone())
                .detail(format!(
                    "The module directory {} has no *{} file.",
                    dir.display(),
                    super::load::CONFIG_SUFFIX
                )),
        );
        return;
    }
    // The module's files join the configuration's source map, so diagnostics point into
    // them; the module's blocks are read into a configuration of their own.
    let mut child = Config {
        dir: dir.clone(),
        sources: std::mem::take(&mut config.sources),
        ..Config::default()
    };
    for f in files {
        let name = rel.join(&f.name).display().to_string();
        let file = child
            .sources
            .add(SourceFile::new(name, f.path, f.text.clone()));
        match f.text.parse::<hcl_edit::structure::Body>() {
            Ok(body) => super::load::load_body_into(&mut child, file, body, diags),
            Err(e) => diags.push(super::load::parse_error(file, &child.sources, &e)),
        }
    }
    config.sources = std::mem::take(&mut child.sources);
    refuse_root_only(&child, diags);
    let dir_text = match rel.display().to_string() {
        t if t.is_empty() => ".".to_string(),
        t => t,
    };
    let mut body = ModuleBody {
        dir: dir_text,
        variables: child.variables,
        locals: child.locals,
        resources: child.resources,
        outputs: child.outputs,
        checks: child.checks,
        calls: child.module_calls,
    };
    stack.push(here);
    for inner in body.calls.values_mut() {
        load_call(config, root, &rel, inner, stack, diags);
    }
    stack.pop();
    call.module = Some(Arc::new(body));
}

/// What only the root module may declare: a module gets its providers, environments,
/// backend, imports and moves from the configuration that calls it.
fn refuse_root_only(child: &Config, diags: &mut Diagnostics) {
    let spans = |v: Vec<&Option<crate::source::Span>>| v.into_iter().cloned().collect::<Vec<_>>();
    let refused = [
        (
            "Provider configuration",
            spans(child.providers.values().map(|p| &p.span).collect()),
            "move the provider block to the root module; the module uses its default provider",
        ),
        (
            "An environment block",
            spans(child.environments.values().map(|e| &e.span).collect()),
            "move the environment block to the root module",
        ),
        (
            "A backend",
            spans(child.settings.backend.iter().map(|b| &b.span).collect()),
            "move the backend block to the root module",
        ),
        (
            "An import block",
            spans(child.imports.iter().map(|i| &i.span).collect()),
            "write it in the root module with the full address: to = module.NAME.TYPE.NAME",
        ),
        (
            "A moved block",
            spans(child.moved.iter().map(|m| &m.span).collect()),
            "write it in the root module with full addresses: from = module.NAME.TYPE.OLD, to = module.NAME.TYPE.NEW",
        ),
        (
            "A removed block",
            spans(child.removed.iter().map(|r| &r.span).collect()),
            "write it in the root module with the full address: from = module.NAME.TYPE.NAME",
        ),
    ];
    for (what, at, hint) in refused {
        for span in at {
            diags.push(
                Diagnostic::error(format!("{what} in a module"))
                    .at(span)
                    .detail(format!(
                        "A module uses what its caller configures; {what} belongs in the root module."
                    ))
                    .hint(hint.to_string()),
            );
        }
    }
}

/// The values a call's `count` and `for_each` may read: the variables and locals of its
/// module instance that are known without planning anything, `path` and `brickform`.
struct Known {
    roots: HashMap<&'static str, Value>,
    /// The variables that are sensitive, and the locals that read one: a `for_each` that
    /// reads them is refused, as a resource's is, since the keys name every instance.
    sensitive_vars: HashSet<String>,
    sensitive_locals: HashSet<String>,
}

impl Roots for Known {
    fn root(&self, name: &str) -> Option<&Value> {
        self.roots.get(name)
    }
    fn is_sensitive(&self, root: &str, attrs: &[&str]) -> bool {
        let names = match root {
            "var" => &self.sensitive_vars,
            "local" => &self.sensitive_locals,
            _ => return false,
        };
        match attrs.first() {
            Some(name) => names.contains(*name),
            None => !names.is_empty(),
        }
    }
    fn missing_root(&self, name: &str) -> String {
        format!(
            "The instances of a module must be known before anything is planned: its count and for_each may use variables, locals and literals, not \"{name}\"."
        )
    }
}

impl Known {
    fn new(var: Object, sensitive_vars: HashSet<String>, dir: &str, environment: &str) -> Known {
        let mut roots = HashMap::new();
        roots.insert("var", Value::object(var));
        roots.insert("local", Value::Object(Default::default()));
        roots.insert(
            "path",
            Value::object(Object::from_iter([
                ("root".to_string(), Value::from(".")),
                ("module".to_string(), Value::from(dir)),
            ])),
        );
        roots.insert(
            "brickform",
            Value::object(Object::from_iter([(
                "environment".to_string(),
                Value::from(environment),
            )])),
        );
        Known {
            roots,
            sensitive_vars,
            sensitive_locals: HashSet::new(),
        }
    }

    /// Adds the locals that read only what is known here (and each other), in as many
    /// rounds as their references to one another need.
    fn with_locals<'l>(
        mut self,
        locals: impl Iterator<Item = (&'l String, &'l super::load::Local)>,
        base: &Path,
    ) -> Known {
        let mut pending: Vec<_> = locals.collect();
        let mut known = Object::default();
        loop {
            let before = pending.len();
            pending.retain(|(name, l)| {
                let ready =
                    super::refs::expr_refs(&l.expr.expr)
                        .iter()
                        .all(|r| match r.root.as_str() {
                            "var" | "path" | "brickform" => true,
                            "local" => r.attrs.first().is_some_and(|n| known.contains_key(n)),
                            _ => false,
                        });
                if !ready {
                    return true;
                }
                self.roots.insert("local", Value::object(known.clone()));
                let mut ev = Evaluator::new(&self, base);
                let value = ev.eval(&l.expr.expr);
                let sensitive = ev.touched_sensitive;
                if let Ok(v) = value {
                    known.insert((*name).clone(), v);
                    if sensitive {
                        self.sensitive_locals.insert((*name).clone());
                    }
                }
                false
            });
            if pending.len() == before || pending.is_empty() {
                break;
            }
        }
        self.roots.insert("local", Value::object(known));
        self
    }
}

/// Expands every module call into its instances (see the module documentation). `vars`
/// are the root module's variables; unknown ones (validate without values) expand a call
/// with unknown `count` / `for_each` into one instance that stands for all of them.
pub fn expand(
    config: &mut Config,
    vars: &Object,
    sensitive: &HashSet<String>,
    environment: &str,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if config.module_calls.is_empty() {
        return diags;
    }
    let base = config.dir.clone();
    let known = Known::new(vars.clone(), sensitive.clone(), ".", environment).with_locals(
        config.locals.iter().filter(|(_, l)| l.module.is_root()),
        &base,
    );
    let calls: Vec<ModuleCall> = config.module_calls.values().cloned().collect();
    for call in &calls {
        expand_call(
            config,
            &ModuleInstance::root(),
            &known,
            call,
            &[],
            environment,
            &mut diags,
        );
    }
    diags
}

/// A `depends_on` target of module `module` as an address from the root.
fn absolute(module: &ModuleInstance, target: &str) -> String {
    scoped_key(module, target)
}

/// The instances a call makes: their keys and `each.value`; `None` when the count or
/// for_each is not known (one instance then stands for all).
fn instances_of(
    call: &ModuleCall,
    known: &Known,
    base: &Path,
    diags: &mut Diagnostics,
) -> Option<Instances> {
    // A local left out of what is known reads resources: say so, rather than that the
    // local has no such attribute.
    let locals = known.roots.get("local");
    for e in call.count.iter().chain(&call.for_each) {
        for r in super::refs::expr_refs(&e.expr) {
            let name = r.attrs.first().cloned().unwrap_or_default();
            if r.root == "local"
                && locals
                    .and_then(Value::as_object)
                    .and_then(|l| l.get(&name))
                    .is_none()
            {
                diags.push(
                    Diagnostic::error("Module instances not known before planning")
                        .at(r.span.map(|s| crate::source::Span::new(e.file, s)))
                        .detail(format!(
                            "The count or for_each of module \"{}\" reads local.{name}, which depends on values known only once resources are planned. The instances of a module must be known before anything is planned.",
                            call.name
                        ))
                        .hint("derive count or for_each from variables, literals and locals that use only those"),
                );
                return Some(Vec::new());
            }
        }
    }
    match expansion(
        call.count.as_ref(),
        call.for_each.as_ref(),
        known,
        base,
        diags,
    ) {
        Expansion::Instances(mut i) => {
            i.sort_by(|a, b| a.0.cmp(&b.0));
            Some(i)
        }
        Expansion::Unknown(_) => None,
        Expansion::Invalid => Some(Vec::new()),
    }
}

fn expand_call(
    config: &mut Config,
    caller: &ModuleInstance,
    known: &Known,
    call: &ModuleCall,
    inherited: &[Reference],
    environment: &str,
    diags: &mut Diagnostics,
) {
    let Some(body) = call.module.clone() else {
        return;
    };
    let base = config.dir.clone();
    for (name, (_, span)) in &call.inputs {
        if !body.variables.contains_key(name) {
            diags.push(
                Diagnostic::error("Unsupported argument")
                    .at(span.clone())
                    .detail(format!(
                        "An argument named \"{name}\" is not expected here: the module \"{}\" ({}) declares no variable \"{name}\".",
                        call.name, body.dir
                    ))
                    .maybe_hint(did_you_mean(name, body.variables.keys().map(String::as_str))),
            );
        }
    }
    for (name, v) in &body.variables {
        if v.default.is_none() && !call.inputs.contains_key(name) {
            diags.push(
                Diagnostic::error("Missing required argument")
                    .at(call.span.clone())
                    .detail(format!(
                        "The module \"{}\" needs its variable \"{name}\", which has no default: set {name} = … in this module block.",
                        call.name
                    )),
            );
        }
    }
    let (instances, unknown) = match instances_of(call, known, &base, diags) {
        Some(i) => (i, false),
        None => (vec![(None, None)], true),
    };
    config.module_calls_made.push(super::load::CallMade {
        caller: caller.clone(),
        name: call.name.clone(),
        has_count: call.count.is_some(),
        has_for_each: call.for_each.is_some(),
        unknown,
    });
    // What the call's `depends_on` names, from the root; every object inside waits for it.
    let mut depends: Vec<Reference> = inherited.to_vec();
    depends.extend(call.depends_on.iter().map(|d| Reference {
        target: absolute(caller, &d.target),
        span: d.span.clone(),
    }));
    // The caller's provider configurations under the module's names: its default ones
    // carry over, an aliased one only when the call passes it.
    let parent = config
        .module_instances
        .get(caller)
        .map(|i| i.providers.clone())
        .unwrap_or_default();
    let mut providers: std::collections::BTreeMap<String, String> = parent
        .iter()
        .filter(|(k, _)| !k.contains('.'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (child, from, _) in &call.providers {
        let resolved = parent.get(from).cloned().unwrap_or_else(|| from.clone());
        providers.insert(child.clone(), resolved);
    }
    for (key, each_value) in instances {
        let path = caller.child(&call.name, key.clone());
        config.module_instances.insert(
            path.clone(),
            ModuleInstanceInfo {
                path: path.clone(),
                dir: body.dir.clone(),
                each_value: each_value.clone(),
                has_count: call.count.is_some(),
                has_for_each: call.for_each.is_some(),
                outputs: body.outputs.keys().cloned().collect(),
                providers: providers.clone(),
                span: call.span.clone(),
                unknown_expansion: unknown,
            },
        );
        let mut inner_vars = Object::default();
        let mut inner_sensitive = HashSet::new();
        for (name, decl) in &body.variables {
            let given = call.inputs.get(name);
            if decl.sensitive {
                inner_sensitive.insert(name.clone());
            }
            let value = match given {
                Some((e, _)) => {
                    let mut ev = Evaluator::new(known, &base);
                    bind_instance(&mut ev, key.as_ref(), each_value.as_ref());
                    let v = ev.eval(&e.expr).unwrap_or(Value::Unknown);
                    if ev.touched_sensitive {
                        inner_sensitive.insert(name.clone());
                    }
                    v
                }
                None => decl
                    .default
                    .as_ref()
                    .and_then(|d| {
                        Evaluator::new(&super::eval::Literal::PLAIN, &base)
                            .eval(&d.expr)
                            .ok()
                    })
                    .unwrap_or(Value::Null),
            };
            inner_vars.insert(name.clone(), value);
            config.module_variables.insert(
                scoped_key(&path, name),
                ModuleVariable {
                    module: path.clone(),
                    decl: decl.clone(),
                    value: given.map(|(e, _)| e.clone()),
                    value_span: given.and_then(|(_, s)| s.clone()),
                },
            );
        }
        for (name, l) in &body.locals {
            let mut l = l.clone();
            l.module = path.clone();
            config.locals.insert(scoped_key(&path, name), l);
        }
        for r in body.resources.values() {
            let mut r = r.clone();
            r.module = path.clone();
            for d in &mut r.depends_on {
                d.target = absolute(&path, &d.target);
            }
            r.depends_on.extend(depends.iter().cloned());
            config.resources.insert(r.addr(), r);
        }
        for (name, o) in &body.outputs {
            let mut o = o.clone();
            o.module = path.clone();
            for d in &mut o.depends_on {
                d.target = absolute(&path, &d.target);
            }
            config.module_outputs.insert(scoped_key(&path, name), o);
        }
        for (name, c) in &body.checks {
            let mut c = c.clone();
            c.module = path.clone();
            config.checks.insert(scoped_key(&path, name), c);
        }
        if body.calls.is_empty() {
            continue;
        }
        let inner = Known::new(inner_vars, inner_sensitive, &body.dir, environment)
            .with_locals(body.locals.iter(), &base);
        for c in body.calls.values() {
            expand_call(config, &path, &inner, c, &depends, environment, diags);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_join_without_the_file_system() {
        assert_eq!(
            join_lexically(Path::new(""), "./modules/x"),
            PathBuf::from("modules/x")
        );
        assert_eq!(
            join_lexically(Path::new("modules/x"), "../y"),
            PathBuf::from("modules/y")
        );
        assert_eq!(
            join_lexically(Path::new(""), "../shared/m"),
            PathBuf::from("../shared/m")
        );
    }
}
