//! The dependency graph of a configuration.
//!
//! Nodes are configuration objects (variables, locals, resources, data sources, outputs);
//! an edge `a → b` means `b` reads `a`, so a topological order evaluates dependencies first.
//! The graph also finds references to undeclared objects and cycles, each reported with the
//! attribute that made the reference.

use crate::addrs::ResourceMode as Mode;
use crate::addrs::{ConfigNode, ModuleInstance, ResourceAddr, Scoped};
use crate::dag::{Dag, NodeId};
use crate::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use crate::lang::load::{Config, Expr, Resource, scoped_key};
use crate::lang::refs::{Ref, body_refs, expr_refs};
use crate::source::{FileId, Span};
use std::collections::{HashMap, HashSet};

/// Why one object depends on another: the attribute that holds the reference.
#[derive(Debug, Clone)]
pub struct Edge {
    pub attribute: String,
    pub span: Option<Span>,
}

impl std::fmt::Display for Edge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.attribute)
    }
}

/// The configuration's objects as the nodes of a [`Dag`], each edge labelled with the
/// attribute whose reference made it.
#[derive(Debug, Default)]
pub struct ConfigGraph {
    dag: Dag<ConfigNode, Edge>,
    index: HashMap<ConfigNode, NodeId>,
}

impl ConfigGraph {
    /// The graph to walk: a node per object, an edge from what is read to what reads it.
    pub fn dag(&self) -> &Dag<ConfigNode, Edge> {
        &self.dag
    }

    pub fn node(&self, n: &ConfigNode) -> Option<NodeId> {
        self.index.get(n).copied()
    }

    fn ensure(&mut self, n: ConfigNode) -> NodeId {
        if let Some(id) = self.index.get(&n) {
            return *id;
        }
        let id = self.dag.add_node(n.clone());
        self.index.insert(n, id);
        id
    }

    /// The nodes in dependency order (dependencies first); `None` when there is a cycle.
    pub fn order(&self) -> Option<Vec<NodeId>> {
        self.dag.order()
    }

    /// The objects in dependency order (dependencies first); `None` when there is a cycle.
    pub fn ordered_nodes(&self) -> Option<Vec<ConfigNode>> {
        Some(
            self.order()?
                .into_iter()
                .map(|id| self.dag[id].clone())
                .collect(),
        )
    }

    /// Whether anything (a resource, a local, an output) reads the node.
    pub fn has_dependents(&self, n: &ConfigNode) -> bool {
        self.node(n)
            .is_some_and(|id| !self.dag.dependents(id).is_empty())
    }

    /// The resources (and data sources) `n` depends on, directly or through variables,
    /// locals and outputs, sorted by their text (the order state and plans record them in).
    pub fn resource_dependencies(&self, n: &ConfigNode) -> Vec<ResourceAddr> {
        let Some(start) = self.node(n) else {
            return Vec::new();
        };
        let mut out: HashSet<&ResourceAddr> = HashSet::new();
        let mut stack = self.dag.dependencies(start);
        let mut seen = HashSet::new();
        while let Some(d) = stack.pop() {
            if !seen.insert(d) {
                continue;
            }
            match &self.dag[d] {
                ConfigNode::Resource(r) => {
                    // What a data source reads from is a dependency too: a resource created
                    // from a lookup of another managed resource must still go before it on
                    // destroy.
                    if r.mode == Mode::Data {
                        stack.extend(self.dag.dependencies(d));
                    }
                    out.insert(r);
                }
                _ => stack.extend(self.dag.dependencies(d)),
            }
        }
        let mut v: Vec<ResourceAddr> = out.into_iter().cloned().collect();
        crate::addrs::sort_by_text(&mut v);
        v
    }

    /// Graphviz DOT of the resources and the dependencies between them.
    pub fn to_dot(&self) -> String {
        let mut out = String::from(
            "digraph {\n  compound = \"true\"\n  newrank = \"true\"\n  rankdir = \"RL\"\n",
        );
        let mut resources: Vec<(String, &ConfigNode)> = self
            .index
            .keys()
            .filter(|n| n.resource().is_some())
            .map(|n| (n.to_string(), n))
            .collect();
        resources.sort();
        for (r, _) in &resources {
            out.push_str(&format!("  \"{r}\" [label = \"{r}\", shape = \"box\"]\n"));
        }
        let mut edges = Vec::new();
        for (r, n) in &resources {
            for d in self.resource_dependencies(n) {
                edges.push(format!("  \"{r}\" -> \"{d}\"\n"));
            }
        }
        edges.sort();
        edges.dedup();
        for e in edges {
            out.push_str(&e);
        }
        out.push_str("}\n");
        out
    }
}

/// Builds the graph and reports undeclared references and cycles.
pub fn build(config: &Config) -> (ConfigGraph, Diagnostics) {
    let resource_types: HashSet<&str> = config
        .resources
        .values()
        .map(|r| r.type_name.as_str())
        .collect();
    let mut b = Builder {
        scope: Scope {
            config,
            resource_types: &resource_types,
        },
        g: ConfigGraph::of_objects(config),
        diags: Diagnostics::new(),
    };
    b.check_validations();
    b.add_module_variables();
    b.add_locals();
    for r in config.resources.values() {
        b.add_resource(r);
    }
    b.add_outputs();
    b.check_checks();
    let Builder { g, mut diags, .. } = b;
    for d in cycles(&g) {
        diags.push(d);
    }
    // The instances of a module share its blocks: a problem in one is reported once.
    let mut seen = HashSet::new();
    diags.0.retain(|d| {
        seen.insert((
            d.summary.clone(),
            d.detail.clone(),
            d.span.as_ref().map(|s| (s.file, s.range.clone())),
        ))
    });
    (g, diags)
}

impl ConfigGraph {
    /// A node for every object of the configuration, without edges yet.
    fn of_objects(config: &Config) -> Self {
        let mut g = ConfigGraph::default();
        for name in config.variables.keys() {
            g.ensure(ConfigNode::Variable(Scoped::root(name)));
        }
        for v in config.module_variables.values() {
            g.ensure(ConfigNode::Variable(Scoped::new(&v.module, &v.decl.name)));
        }
        for l in config.locals.values() {
            g.ensure(ConfigNode::Local(Scoped::new(&l.module, &l.name)));
        }
        for r in config.resources.values() {
            g.ensure(r.node());
        }
        for o in config
            .outputs
            .values()
            .chain(config.module_outputs.values())
        {
            g.ensure(ConfigNode::Output(Scoped::new(&o.module, &o.name)));
        }
        g
    }

    /// The edge from `target` to `from`, which reads it.
    fn add_dependency(&mut self, target: ConfigNode, from: &ConfigNode, edge: Edge) {
        let a = self.ensure(target);
        let b = self.ensure(from.clone());
        self.dag.add_edge(a, b, edge);
    }
}

/// An object whose expressions are read for references: its node, the module it is in, and
/// what it may refer to.
#[derive(Clone, Copy)]
struct Reader<'r> {
    node: &'r ConfigNode,
    module: &'r ModuleInstance,
    ctx: RefContext,
}

/// The graph under construction, with the problems found so far.
struct Builder<'c> {
    scope: Scope<'c>,
    g: ConfigGraph,
    diags: Diagnostics,
}

impl Builder<'_> {
    /// An edge for each of `refs`, written in `attribute` of `reader` in `file`; an error for
    /// each that names nothing, or the reading resource itself.
    fn add_refs(&mut self, reader: Reader, attribute: &str, file: FileId, refs: Vec<Ref>) {
        let Reader { node, module, ctx } = reader;
        for r in refs {
            let span = r.span.clone().map(|s| Span::new(file, s));
            if let Some(d) = self.scope.check_ref(module, &r, ctx, span.clone()) {
                self.diags.push(d);
                continue;
            }
            let targets = match r.node_in(module) {
                Some(target) => vec![target],
                None => self.scope.module_outputs_read(module, &r),
            };
            for target in targets {
                if &target == node && ctx.is_resource {
                    self.diags.push(
                        Diagnostic::error("Self-referential block")
                            .at(span.clone())
                            .detail(format!("Configuration for {node} may not refer to itself.")),
                    );
                    continue;
                }
                let edge = Edge {
                    attribute: attribute.to_string(),
                    span: span.clone(),
                };
                self.g.add_dependency(target, node, edge);
            }
        }
    }

    /// A validation may only read its own variable.
    fn check_validations(&mut self) {
        let config = self.scope.config;
        for (name, v) in config.variables.iter().chain(
            config
                .module_variables
                .values()
                .map(|m| (&m.decl.name, &m.decl)),
        ) {
            for val in &v.validations {
                for r in expr_refs(&val.condition.expr) {
                    if r.root == "var" && r.attrs.first().map(String::as_str) != Some(name.as_str())
                    {
                        self.diags.push(
                            Diagnostic::error("Invalid reference in variable validation")
                                .at(r.span.map(|s| Span::new(val.condition.file, s)))
                                .detail(format!("The condition for variable \"{name}\" can only refer to the variable itself, using var.{name}.")),
                        );
                    }
                }
            }
        }
    }

    /// A module's variables read the call's arguments, in the caller's module.
    fn add_module_variables(&mut self) {
        let config = self.scope.config;
        for v in config.module_variables.values() {
            let Some(e) = &v.value else { continue };
            let caller = v.module.parent().map(|(p, _)| p).unwrap_or_default();
            let info = config.module_instances.get(&v.module);
            let ctx = RefContext {
                is_resource: false,
                has_count: info.is_some_and(|i| i.has_count),
                has_for_each: info.is_some_and(|i| i.has_for_each),
            };
            let node = ConfigNode::Variable(Scoped::new(&v.module, &v.decl.name));
            let reader = Reader {
                node: &node,
                module: &caller,
                ctx,
            };
            self.add_refs(reader, &v.decl.name, e.file, expr_refs(&e.expr));
        }
    }

    fn add_locals(&mut self) {
        for l in self.scope.config.locals.values() {
            let node = ConfigNode::Local(Scoped::new(&l.module, &l.name));
            let reader = Reader {
                node: &node,
                module: &l.module,
                ctx: RefContext::default(),
            };
            self.add_refs(reader, &l.name, l.expr.file, expr_refs(&l.expr.expr));
        }
    }

    /// A resource's references: its meta-arguments (which cannot read its own instance),
    /// attributes, nested blocks, replacement triggers and explicit dependencies.
    fn add_resource(&mut self, r: &Resource) {
        let node = r.node();
        let reader = Reader {
            node: &node,
            module: &r.module,
            ctx: RefContext {
                is_resource: true,
                has_count: r.count.is_some(),
                has_for_each: r.for_each.is_some(),
            },
        };
        let meta = Reader {
            ctx: RefContext {
                is_resource: true,
                ..RefContext::default()
            },
            ..reader
        };
        let file = r.body.file;
        for (attr, e) in [("count", &r.count), ("for_each", &r.for_each)] {
            if let Some(Expr { expr, file }) = e {
                self.add_refs(meta, attr, *file, expr_refs(expr));
            }
        }
        for a in r.body.body.attributes() {
            self.add_refs(reader, a.key.as_str(), file, expr_refs(&a.value));
        }
        for b in r.body.body.blocks() {
            let mut inner = hcl_edit::structure::Body::new();
            inner.push(b.clone());
            let name = if b.ident.as_str() == "dynamic" {
                b.labels
                    .first()
                    .map(|l| l.as_str().to_string())
                    .unwrap_or_default()
            } else {
                b.ident.as_str().to_string()
            };
            self.add_refs(reader, &name, file, body_refs(&inner));
        }
        for t in &r.lifecycle.replace_triggered_by {
            self.add_refs(meta, "replace_triggered_by", t.file, expr_refs(&t.expr));
        }
        for d in &r.depends_on {
            self.scope
                .depends_on(&mut self.g, &mut self.diags, &node, d);
        }
    }

    fn add_outputs(&mut self) {
        let config = self.scope.config;
        for o in config
            .outputs
            .values()
            .chain(config.module_outputs.values())
        {
            let node = ConfigNode::Output(Scoped::new(&o.module, &o.name));
            let reader = Reader {
                node: &node,
                module: &o.module,
                ctx: RefContext::default(),
            };
            self.add_refs(reader, "value", o.value.file, expr_refs(&o.value.expr));
            for d in &o.depends_on {
                self.scope
                    .depends_on(&mut self.g, &mut self.diags, &node, d);
            }
        }
    }

    /// Checks read what the plan knows once everything else is planned; nothing reads
    /// them, so their references are checked without taking part in the order.
    fn check_checks(&mut self) {
        for c in self.scope.config.checks.values() {
            for a in &c.asserts {
                for e in [&a.condition, &a.error_message] {
                    for r in expr_refs(&e.expr) {
                        let span = r.span.clone().map(|s| Span::new(e.file, s));
                        let ctx = RefContext::default();
                        if let Some(d) = self.scope.check_ref(&c.module, &r, ctx, span) {
                            self.diags.push(d);
                        }
                    }
                }
            }
        }
    }
}

/// What references are checked against: the whole configuration, every module instance's
/// objects in it.
struct Scope<'c> {
    config: &'c Config,
    resource_types: &'c HashSet<&'c str>,
}

impl Scope<'_> {
    /// The instances of call `name` made in `module`.
    fn call_instances<'s>(
        &'s self,
        module: &'s ModuleInstance,
        name: &'s str,
    ) -> impl Iterator<Item = &'s crate::lang::load::ModuleInstanceInfo> + 's {
        self.config.module_instances.values().filter(move |i| {
            i.path
                .parent()
                .is_some_and(|(p, step)| &p == module && step.name == name)
        })
    }

    /// The outputs `module.NAME…` read in `module`: the named one of every instance of the
    /// call, or all of them.
    fn module_outputs_read(&self, module: &ModuleInstance, r: &Ref) -> Vec<ConfigNode> {
        if r.root != "module" {
            return Vec::new();
        }
        let Some(call) = r.attrs.first() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for i in self.call_instances(module, call) {
            for o in &i.outputs {
                if r.attrs.get(1).is_none_or(|wanted| wanted == o) {
                    out.push(ConfigNode::Output(Scoped::new(&i.path, o)));
                }
            }
        }
        out
    }

    /// An edge for a `depends_on` target (an address from the root: a resource, a data
    /// source, or a module call, which stands for every resource inside its instances).
    fn depends_on(
        &self,
        g: &mut ConfigGraph,
        diags: &mut Diagnostics,
        from: &ConfigNode,
        d: &crate::lang::load::Reference,
    ) {
        // A module call's address (`module.x`, `module.x["k"]`), when the target is one.
        let call = crate::addrs::split_module(&d.target)
            .ok()
            .filter(|(m, rest)| rest.is_empty() && !m.is_root())
            .map(|(m, _)| m);
        let targets: Vec<ConfigNode> = if self.config.resource_at(&d.target).is_some() {
            ConfigNode::parse(&d.target).into_iter().collect()
        } else if let Some(m) = &call {
            self.config
                .resources
                .values()
                .filter(|r| m.holds(&r.module))
                .map(|r| r.node())
                .collect()
        } else {
            Vec::new()
        };
        let is_call = call
            .as_ref()
            .is_some_and(|m| self.config.module_instances.keys().any(|i| m.holds(i)));
        if targets.is_empty() && !is_call {
            diags.push(undeclared_resource(self.config, &d.target, d.span.clone()));
            return;
        }
        for target in targets {
            let edge = Edge {
                attribute: "depends_on".into(),
                span: d.span.clone(),
            };
            g.add_dependency(target, from, edge);
        }
    }

    fn check_ref(
        &self,
        module: &ModuleInstance,
        r: &Ref,
        ctx: RefContext,
        span: Option<Span>,
    ) -> Option<Diagnostic> {
        let config = self.config;
        let in_module = |what: &str| {
            if module.is_root() {
                String::new()
            } else {
                format!(" in {what} {}", module_name(config, module))
            }
        };
        match r.root.as_str() {
            "var" => {
                let name = r.attrs.first()?;
                let declared: Vec<&str> = if module.is_root() {
                    config.variables.keys().map(String::as_str).collect()
                } else {
                    config
                        .module_variables
                        .values()
                        .filter(|v| &v.module == module)
                        .map(|v| v.decl.name.as_str())
                        .collect()
                };
                (!declared.contains(&name.as_str())).then(|| {
                    Diagnostic::error("Reference to undeclared input variable")
                        .at(span)
                        .detail(format!("An input variable with the name \"{name}\" has not been declared{}. This variable can be declared with a variable \"{name}\" {{}} block.", in_module("module")))
                        .maybe_hint(did_you_mean(name, declared))
                })
            }
            "local" => {
                let name = r.attrs.first()?;
                (!config.locals.contains_key(&scoped_key(module, name))).then(|| {
                    let declared = config
                        .locals
                        .values()
                        .filter(|l| &l.module == module)
                        .map(|l| l.name.as_str());
                    Diagnostic::error("Reference to undeclared local value")
                        .at(span)
                        .detail(format!("A local value with the name \"{name}\" has not been declared{}.", in_module("module")))
                        .maybe_hint(did_you_mean(name, declared))
                })
            }
            "module" => {
                let Some(call) = r.attrs.first() else {
                    return Some(
                        Diagnostic::error("Invalid reference")
                            .at(span)
                            .detail("\"module\" must be followed by the name of a module call: module.NAME.OUTPUT."),
                    );
                };
                let instances: Vec<_> = self.call_instances(module, call).collect();
                if instances.is_empty() {
                    if self.declares_call(module, call) {
                        // A call with no instances (count = 0, an empty for_each).
                        return None;
                    }
                    let calls: Vec<&str> = self
                        .config
                        .module_calls_made
                        .iter()
                        .filter(|c| &c.caller == module)
                        .map(|c| c.name.as_str())
                        .collect();
                    return Some(
                        Diagnostic::error("Reference to undeclared module")
                            .at(span)
                            .detail(format!("No module call named \"{call}\" is declared{}.", in_module("module")))
                            .maybe_hint(did_you_mean(call, calls)),
                    );
                }
                let output = r.attrs.get(1)?;
                let outputs = &instances[0].outputs;
                (!outputs.contains(output)).then(|| {
                    Diagnostic::error("Unsupported attribute")
                        .at(span)
                        .detail(format!(
                            "The module \"{call}\" ({}) has no output named \"{output}\".",
                            instances[0].dir
                        ))
                        .maybe_hint(did_you_mean(output, outputs.iter().map(String::as_str)))
                })
            }
            "each" => (!ctx.has_for_each).then(|| {
                Diagnostic::error("Reference to \"each\" in context without for_each")
                    .at(span)
                    .detail("The \"each\" object can be used only in \"resource\", \"data\" and \"module\" blocks, and only when the \"for_each\" argument is set.")
            }),
            "count" => (!ctx.has_count).then(|| {
                Diagnostic::error("Reference to \"count\" in non-counted context")
                    .at(span)
                    .detail("The \"count\" object can only be used in \"resource\", \"data\" and \"module\" blocks, and only when the \"count\" argument is set.")
            }),
            "self" | "path" | "brickform" => None,
            "data" => {
                let target = r.target()?;
                config
                    .resource_in(module, &target)
                    .is_none()
                    .then(|| undeclared_resource(config, &scoped_key(module, &target), span))
            }
            root => {
                if r.attrs.is_empty() {
                    return Some(
                        Diagnostic::error("Invalid reference")
                            .at(span)
                            .detail(format!("A reference to a resource type must be followed by at least one attribute access, specifying the resource name. \"{root}\" alone refers to nothing."))
                            .maybe_hint(did_you_mean(root, ["var", "local", "data", "each", "count", "path", "brickform", "module"])),
                    );
                }
                let target = r.target()?;
                if config.resource_in(module, &target).is_some() {
                    return None;
                }
                if !self.resource_types.contains(root) {
                    let hint = did_you_mean(root, ["var", "local", "data", "each", "count", "module"].into_iter().chain(self.resource_types.iter().copied()));
                    return Some(
                        Diagnostic::error("Reference to undeclared resource")
                            .at(span)
                            .detail(format!("A managed resource \"{root}\" \"{}\" has not been declared{}.", r.attrs[0], if module.is_root() { " in the configuration".to_string() } else { in_module("module") }))
                            .maybe_hint(hint),
                    );
                }
                Some(undeclared_resource(config, &scoped_key(module, &target), span))
            }
        }
    }

    /// Whether `module` makes the call `name`, whatever its instances.
    fn declares_call(&self, module: &ModuleInstance, name: &str) -> bool {
        self.config
            .module_calls_made
            .iter()
            .any(|c| &c.caller == module && c.name == name)
    }
}

/// How messages name a module instance: `"source" (module.src["mysql"])`.
fn module_name(config: &Config, module: &ModuleInstance) -> String {
    match config.module_instances.get(module) {
        Some(i) => format!("{} ({module})", i.dir),
        None => module.to_string(),
    }
}

/// The variables and locals a root provider block reads that are not declared, reported as
/// in any other block ("Reference to undeclared input variable", with did-you-mean): a
/// provider block is no node of the graph, so its references are checked here.
pub(crate) fn undeclared_in_provider_block(
    config: &Config,
    refs: &[Ref],
    file: FileId,
) -> Vec<Diagnostic> {
    let types = HashSet::new();
    let scope = Scope {
        config,
        resource_types: &types,
    };
    let ctx = RefContext {
        is_resource: false,
        has_count: false,
        has_for_each: false,
    };
    refs.iter()
        .filter(|r| matches!(r.root.as_str(), "var" | "local"))
        .filter_map(|r| {
            let span = r.span.clone().map(|s| Span::new(file, s));
            scope.check_ref(&ModuleInstance::root(), r, ctx, span)
        })
        .collect()
}

#[derive(Debug, Clone, Copy, Default)]
struct RefContext {
    is_resource: bool,
    has_count: bool,
    has_for_each: bool,
}

fn undeclared_resource(config: &Config, full: &str, span: Option<Span>) -> Diagnostic {
    let (module, target) = crate::addrs::split_module(full).unwrap_or_default();
    let (kind, rest) = match target.strip_prefix("data.") {
        Some(rest) => ("data resource", rest),
        None => ("managed resource", target),
    };
    let (t, n) = rest.split_once('.').unwrap_or((rest, ""));
    let same_type: Vec<&str> = config
        .resources
        .values()
        .filter(|r| {
            r.module == module
                && r.type_name == t
                && (r.mode == Mode::Data) == target.starts_with("data.")
        })
        .map(|r| r.name.as_str())
        .collect();
    Diagnostic::error("Reference to undeclared resource")
        .at(span)
        .detail(if module.is_root() {
            format!("A {kind} \"{t}\" \"{n}\" has not been declared in the configuration.")
        } else {
            format!(
                "A {kind} \"{t}\" \"{n}\" has not been declared in {}.",
                module_name(config, &module)
            )
        })
        .maybe_hint(did_you_mean(n, same_type).map(|h| {
            h.replace('`', "")
                .replace("did you mean ", &format!("did you mean `{t}."))
                .replace('?', "`?")
        }))
}

/// One diagnostic per cycle, naming it as `a → b → a` with the attribute of each reference,
/// from its alphabetically first member so the message does not depend on the order the
/// configuration declares them in.
fn cycles(g: &ConfigGraph) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for cycle in g.dag.cycles() {
        let mut steps = cycle.steps;
        let name = |id: NodeId| g.dag[id].to_string();
        let Some(first) = (0..steps.len()).min_by_key(|&i| name(steps[i].0)) else {
            continue;
        };
        steps.rotate_left(first);
        // Step i leads from its node to the next one (the last back to the first).
        let to = |i: usize| steps[(i + 1) % steps.len()].0;
        let mut text = name(steps[0].0);
        for i in 0..steps.len() {
            text.push_str(&format!(" → {}", name(to(i))));
        }
        let detail = steps
            .iter()
            .enumerate()
            .map(|(i, (from, edge))| {
                format!(
                    "  {} reads {} in \"{}\"",
                    name(to(i)),
                    name(*from),
                    edge.attribute
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        out.push(
            Diagnostic::error(format!("Cycle: {text}"))
                .at(steps.first().and_then(|(_, e)| e.span.clone()))
                .label("this reference closes the cycle")
                .detail(format!(
                    "These objects depend on each other, so none can be evaluated first:\n{detail}"
                ))
                .hint("remove one of the references, or move the shared value into a local"),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::load::load_sources;
    use std::path::Path;

    fn graph(src: &str) -> (ConfigGraph, Diagnostics) {
        let (c, d) = load_sources(
            Path::new("."),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        );
        assert!(!d.has_errors(), "{d:?}");
        build(&c)
    }

    #[test]
    fn orders_dependencies_first() {
        let (g, d) = graph(
            r#"
variable "env" { default = "dev" }
locals { cat = "c_${var.env}" }
resource "t" "schema" { catalog = t.catalog.name }
resource "t" "catalog" { name = local.cat }
resource "t" "job" { depends_on = [t.schema] }
output "o" { value = t.job.id }
"#,
        );
        assert!(d.is_empty(), "{d:?}");
        let order = g.ordered_nodes().unwrap();
        let pos = |s: &str| order.iter().position(|x| x.to_string() == s).unwrap();
        assert!(pos("var.env") < pos("local.cat"));
        assert!(pos("local.cat") < pos("t.catalog"));
        assert!(pos("t.catalog") < pos("t.schema"));
        assert!(pos("t.schema") < pos("t.job"));
        assert!(pos("t.job") < pos("output.o"));
        let node = |s: &str| ConfigNode::parse(s).unwrap();
        assert_eq!(
            g.resource_dependencies(&node("t.catalog")),
            Vec::<ResourceAddr>::new()
        );
        assert_eq!(
            g.resource_dependencies(&node("output.o")),
            vec![ResourceAddr::parse("t.job").unwrap()]
        );
        let dot = g.to_dot();
        assert!(dot.contains("\"t.schema\" -> \"t.catalog\""), "{dot}");
    }

    #[test]
    fn cycles_are_named_with_their_attributes() {
        let (_, d) = graph(
            r#"
resource "t" "a" { x = t.b.id }
resource "t" "b" { y = t.a.id }
"#,
        );
        assert_eq!(d.0.len(), 1);
        assert_eq!(d.0[0].summary, "Cycle: t.a → t.b → t.a");
        let detail = d.0[0].detail.clone().unwrap();
        assert!(detail.contains("t.b reads t.a in \"y\""), "{detail}");
        assert!(detail.contains("t.a reads t.b in \"x\""), "{detail}");
    }

    #[test]
    fn a_cycle_is_named_from_its_alphabetically_first_member_whatever_its_kind() {
        let (_, d) = graph(
            r#"
resource "zt" "a" { x = local.m }
locals { m = zt.a.id }
"#,
        );
        assert_eq!(d.0.len(), 1);
        assert_eq!(d.0[0].summary, "Cycle: local.m → zt.a → local.m");
        let (_, d) = graph(
            r#"
resource "at" "a" { x = local.m }
locals { m = at.a.id }
"#,
        );
        assert_eq!(d.0[0].summary, "Cycle: at.a → local.m → at.a");
        let detail = d.0[0].detail.clone().unwrap();
        assert!(detail.contains("local.m reads at.a in \"m\""), "{detail}");
        assert!(detail.contains("at.a reads local.m in \"x\""), "{detail}");
    }

    #[test]
    fn undeclared_references_are_errors() {
        let (_, d) = graph(
            r#"
variable "env" {}
locals { a = var.evn }
resource "t" "a" {
  x = local.b
  y = t.bb.id
  z = each.key
  w = tt.a.id
}
resource "t" "b" {}
"#,
        );
        let summaries: Vec<&str> = d.iter().map(|d| d.summary.as_str()).collect();
        assert_eq!(
            summaries,
            [
                "Reference to undeclared input variable",
                "Reference to undeclared local value",
                "Reference to undeclared resource",
                "Reference to \"each\" in context without for_each",
                "Reference to undeclared resource"
            ]
        );
        assert_eq!(d.0[0].hint.as_deref(), Some("did you mean `env`?"));
        assert_eq!(d.0[2].hint.as_deref(), Some("did you mean `t.b`?"));
        assert_eq!(d.0[4].hint.as_deref(), Some("did you mean `t`?"));
    }
}
