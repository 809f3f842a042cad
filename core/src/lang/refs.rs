//! Static references: which configuration objects an expression reads. They give the
//! dependency graph its edges and let `validate` report references to undeclared things
//! without evaluating anything.

use hcl_edit::Span as _;
use hcl_edit::expr::{Expression as E, ForExpr, FuncCall, TraversalOperator as Op};
use hcl_edit::structure::Body;
use hcl_edit::template::ForTemplateExpr;
use hcl_edit::visit::{Visit, visit_expr};
use std::ops::Range;

/// One reference found in an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ref {
    /// The root name: `var`, `local`, `data`, `each`, `count`, `self`, `path`, `brickform`,
    /// or a resource type.
    pub root: String,
    /// The attribute names that follow the root, up to the first index or splat.
    pub attrs: Vec<String>,
    pub span: Option<Range<usize>>,
}

impl Ref {
    /// The configuration object this names: `var.x`, `local.y`, `TYPE.NAME`,
    /// `data.TYPE.NAME`; `None` for `each`, `count`, `self`, `path`, `brickform` and
    /// references too short to name anything.
    /// The graph node this reference reads: a variable, a local, a resource or a data source.
    pub fn node(&self) -> Option<crate::addrs::ConfigNode> {
        self.node_in(&crate::addrs::ModuleInstance::root())
    }

    /// The same, for a reference made inside module instance `module`. `None` also for
    /// `module.NAME…`, which reads the outputs of a call's instances (see the graph).
    pub fn node_in(
        &self,
        module: &crate::addrs::ModuleInstance,
    ) -> Option<crate::addrs::ConfigNode> {
        use crate::addrs::{ConfigNode, ResourceAddr, ResourceMode, Scoped};
        match self.root.as_str() {
            "each" | "count" | "self" | "path" | "brickform" | "module" => None,
            "var" => Some(ConfigNode::Variable(Scoped::new(
                module,
                self.attrs.first()?,
            ))),
            "local" => Some(ConfigNode::Local(Scoped::new(module, self.attrs.first()?))),
            "data" => Some(ConfigNode::Resource(ResourceAddr::in_module(
                module.clone(),
                ResourceMode::Data,
                self.attrs.first()?,
                self.attrs.get(1)?,
            ))),
            root => Some(ConfigNode::Resource(ResourceAddr::in_module(
                module.clone(),
                ResourceMode::Managed,
                root,
                self.attrs.first()?,
            ))),
        }
    }

    pub fn target(&self) -> Option<String> {
        match self.root.as_str() {
            "each" | "count" | "self" | "path" | "brickform" | "module" => None,
            "data" => Some(format!(
                "data.{}.{}",
                self.attrs.first()?,
                self.attrs.get(1)?
            )),
            root => Some(format!("{root}.{}", self.attrs.first()?)),
        }
    }
}

#[derive(Default)]
struct Collector {
    refs: Vec<Ref>,
    /// Names bound by enclosing `for` expressions and template `for` directives.
    scope: Vec<String>,
    /// Functions whose arguments are not looked into (see [`expr_refs_outside`]).
    skipped: &'static [&'static str],
}

impl Collector {
    fn bound(&self, name: &str) -> bool {
        self.scope.iter().any(|s| s == name)
    }
}

impl Visit for Collector {
    fn visit_func_call(&mut self, n: &FuncCall) {
        if !self.skipped.contains(&n.name.name.as_str()) {
            hcl_edit::visit::visit_func_call(self, n);
        }
    }

    // hcl-edit 0.10's default walk skips the collection of a template `for` directive, so
    // `%{ for t in local.xs }` would lose `local.xs`; walk it ourselves.
    fn visit_for_template_expr(&mut self, n: &ForTemplateExpr) {
        self.visit_expr(&n.collection_expr);
        let k = self.scope.len();
        if let Some(kv) = &n.key_var {
            self.scope.push(kv.as_str().into());
        }
        self.scope.push(n.value_var.as_str().into());
        self.visit_template(&n.template);
        self.scope.truncate(k);
    }

    fn visit_for_expr(&mut self, n: &ForExpr) {
        self.visit_expr(&n.intro.collection_expr);
        let k = self.scope.len();
        if let Some(kv) = &n.intro.key_var {
            self.scope.push(kv.as_str().into());
        }
        self.scope.push(n.intro.value_var.as_str().into());
        if let Some(e) = &n.key_expr {
            self.visit_expr(e);
        }
        self.visit_expr(&n.value_expr);
        if let Some(c) = &n.cond {
            self.visit_expr(&c.expr);
        }
        self.scope.truncate(k);
    }

    fn visit_expr(&mut self, e: &E) {
        match e {
            E::Traversal(t) => match &t.expr {
                E::Variable(root) if !self.bound(root.as_str()) => {
                    let attrs = t
                        .operators
                        .iter()
                        .map_while(|o| match o.value() {
                            Op::GetAttr(id) => Some(id.as_str().to_string()),
                            _ => None,
                        })
                        .collect();
                    self.refs.push(Ref {
                        root: root.as_str().to_string(),
                        attrs,
                        span: t.span(),
                    });
                    for op in &t.operators {
                        if let Op::Index(ix) = op.value() {
                            self.visit_expr(ix);
                        }
                    }
                }
                _ => visit_expr(self, e),
            },
            E::Variable(v) if !self.bound(v.as_str()) => self.refs.push(Ref {
                root: v.as_str().to_string(),
                attrs: Vec::new(),
                span: e.span(),
            }),
            _ => visit_expr(self, e),
        }
    }
}

/// The references an expression makes.
pub fn expr_refs(e: &E) -> Vec<Ref> {
    let mut c = Collector::default();
    c.visit_expr(e);
    c.refs
}

/// The references an expression makes outside the arguments of calls to `functions`: the
/// console asks what a value it prints was read from, and `issensitive(var.pw)` reads
/// `var.pw` only to say whether it is sensitive.
pub fn expr_refs_outside(e: &E, functions: &'static [&'static str]) -> Vec<Ref> {
    let mut c = Collector {
        skipped: functions,
        ..Collector::default()
    };
    c.visit_expr(e);
    c.refs
}

/// The references made anywhere in a body, except inside `dynamic` block iterators'
/// own names (those are bound like `for` variables).
pub fn body_refs(b: &Body) -> Vec<Ref> {
    let mut c = Collector::default();
    collect_body(&mut c, b);
    c.refs
}

fn collect_body(c: &mut Collector, b: &Body) {
    for a in b.attributes() {
        c.visit_expr(&a.value);
    }
    for block in b.blocks() {
        if block.ident.as_str() == "dynamic" {
            let iterator = block
                .body
                .get_attribute("iterator")
                .and_then(|a| match &a.value {
                    E::Variable(v) => Some(v.as_str().to_string()),
                    // Invalid (decoding says so, at the string); scoping it here keeps
                    // `it.value` from being misreported as a reference to a resource `it`.
                    E::String(s) => Some(s.value().clone()),
                    _ => None,
                })
                .or_else(|| block.labels.first().map(|l| l.as_str().to_string()));
            if let Some(fe) = block.body.get_attribute("for_each") {
                c.visit_expr(&fe.value);
            }
            let k = c.scope.len();
            if let Some(it) = iterator {
                c.scope.push(it);
            }
            for inner in block.body.blocks() {
                if inner.ident.as_str() == "content" {
                    collect_body(c, &inner.body);
                }
            }
            c.scope.truncate(k);
        } else {
            collect_body(c, &block.body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(src: &str) -> Vec<String> {
        let e: E = src.parse().unwrap();
        expr_refs(&e).iter().filter_map(Ref::target).collect()
    }

    #[test]
    fn finds_references_everywhere() {
        assert_eq!(
            targets("databricks_catalog.main.name"),
            ["databricks_catalog.main"]
        );
        assert_eq!(
            targets("data.databricks_current_user.me.user_name"),
            ["data.databricks_current_user.me"]
        );
        assert_eq!(targets("\"${var.env}-${local.x}\""), ["var.env", "local.x"]);
        assert_eq!(targets("t.many[*].id"), ["t.many"]);
        assert_eq!(targets("t.each[var.k].id"), ["t.each", "var.k"]);
        assert_eq!(
            targets("\"%{ for t in local.xs }${t}%{ endfor }\""),
            ["local.xs"]
        );
        assert_eq!(
            targets("[for x in var.l : x.id if x != local.skip]"),
            ["var.l", "local.skip"]
        );
        assert_eq!(targets("each.value"), Vec::<String>::new());
        assert_eq!(targets("upper(count.index)"), Vec::<String>::new());
    }

    #[test]
    fn references_inside_skipped_calls_are_left_out() {
        let e: E = "issensitive(var.a) ? upper(var.b) : issensitive(local.c)"
            .parse()
            .unwrap();
        let found: Vec<String> = expr_refs_outside(&e, &["issensitive"])
            .iter()
            .filter_map(Ref::target)
            .collect();
        assert_eq!(found, ["var.b"]);
        let all: Vec<String> = expr_refs(&e).iter().filter_map(Ref::target).collect();
        assert_eq!(all, ["var.a", "var.b", "local.c"]);
    }

    #[test]
    fn dynamic_iterators_are_not_references() {
        let body: Body = r#"
name = var.n
dynamic "task" {
  for_each = local.tasks
  content {
    task_key = task.value.key
    other    = t.x.id
  }
}
"#
        .parse()
        .unwrap();
        let t: Vec<String> = body_refs(&body).iter().filter_map(Ref::target).collect();
        assert_eq!(t, ["var.n", "local.tasks", "t.x"]);
    }
}
