//! The expression evaluator.
//!
//! Our own evaluator over hcl-edit's syntax tree (rather than hcl-rs's) for three reasons:
//! errors keep their source spans, `try` and `can` evaluate their arguments lazily, and
//! unknown values propagate through every operation.

use super::functions::{self, FunctionContext};
use crate::limits;
use crate::source::{FileId, Span};
use crate::value::{Object, PathStep, Value, values_equal};
use hcl_edit::Span as _;
use hcl_edit::expr::{
    BinaryOperator, Expression as E, ForExpr, FuncCall, ObjectKey, TraversalOperator as Op,
    UnaryOperator,
};
use hcl_edit::template::{Directive, Element, Strip, Template};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// An evaluation error, located in the expression that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalError {
    pub summary: String,
    pub detail: Option<String>,
    pub span: Option<Range<usize>>,
    pub hint: Option<String>,
}

impl EvalError {
    pub fn new(summary: impl Into<String>, span: Option<Range<usize>>) -> Self {
        EvalError {
            summary: summary.into(),
            detail: None,
            span,
            hint: None,
        }
    }
    fn detail(mut self, d: impl Into<String>) -> Self {
        self.detail = Some(d.into());
        self
    }
    fn hint(mut self, h: Option<String>) -> Self {
        self.hint = h;
        self
    }
    pub fn to_diagnostic(&self, file: FileId) -> crate::diagnostics::Diagnostic {
        let mut d = crate::diagnostics::Diagnostic::error(self.summary.clone())
            .at(self.span.clone().map(|r| Span::new(file, r)));
        d.detail = self.detail.clone();
        d.hint = self.hint.clone();
        d
    }
}

pub type EvalResult = Result<Value, EvalError>;

/// The names a traversal reads below its root, for [`Roots::is_sensitive`]: attribute names,
/// and a literal string index where a name stands (`var["pw"]` reads `var.pw`); at most two.
/// Instance keys, list indexes and splats after a name select within it and are passed over.
/// An index computed at run time where a name stands (`var[local.k]`) could read any name,
/// so the names stop there: the whole root is asked about.
fn names_read(ops: &[hcl_edit::Decorated<Op>]) -> Vec<&str> {
    let mut names = Vec::new();
    for op in ops {
        match op.value() {
            Op::GetAttr(a) => names.push(a.value().as_str()),
            Op::Index(key) if names.is_empty() => match key {
                E::String(s) => names.push(s.value().as_str()),
                _ => return names,
            },
            Op::LegacyIndex(_) | Op::AttrSplat(_) | Op::FullSplat(_) if names.is_empty() => {
                return names;
            }
            _ => {}
        }
        if names.len() == 2 {
            break;
        }
    }
    names
}

/// Where the root names of references (`var`, `local`, resource types, `data`, …) come from.
pub trait Roots {
    /// The value of a root name, e.g. `var` → object of variables, a resource type →
    /// object of resources by name.
    fn root(&self, name: &str) -> Option<&Value>;
    /// Whether reading `root.a.b…` (the names read, instance keys and list indexes left out)
    /// reveals a sensitive value: a sensitive variable, a resource's sensitive attribute. With
    /// fewer names than the root needs (none: the whole root), whether anything sensitive is
    /// below them.
    fn is_sensitive(&self, _root: &str, _attrs: &[&str]) -> bool {
        false
    }
    /// The message for a reference to a root that does not exist.
    fn missing_root(&self, name: &str) -> String {
        format!("There is no variable named \"{name}\".")
    }
    /// Whether the evaluation is to tell [`Roots::read`] what it reads (an evaluation made
    /// ahead of time is checked later against the values it read).
    fn watching(&self) -> bool {
        false
    }
    /// What an evaluation read, when [`Roots::watching`]: under root `root`, the value at
    /// `steps` (`None`: there is no such root).
    fn read(&self, _root: &str, _steps: &[PathStep], _found: Option<&Value>) {}
}

/// A scope with no roots at all, for values that must be literals (variable values,
/// backend settings): every reference is refused with `why`, which gets the name referred to.
pub struct Literal(pub fn(&str) -> String);

impl Literal {
    /// Refused with the default "no variable" message.
    pub const PLAIN: Literal = Literal(|name| format!("There is no variable named \"{name}\"."));
}

impl Roots for Literal {
    fn root(&self, _: &str) -> Option<&Value> {
        None
    }
    fn missing_root(&self, name: &str) -> String {
        (self.0)(name)
    }
}

/// A scope of for-expression variables, `each`, `count` and dynamic-block iterators.
#[derive(Clone, Default)]
struct Locals {
    vars: Vec<(String, Value)>,
}

impl Locals {
    /// Where the innermost binding of `name` is.
    fn position(&self, name: &str) -> Option<usize> {
        self.vars.iter().rposition(|(n, _)| n == name)
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// Functions the evaluator implements itself rather than the standard library: they need
/// their arguments unevaluated (`try`, `can`), files relative to the template
/// (`templatefile`), or the evaluation's sensitivity (`sensitive`, `nonsensitive`,
/// `issensitive`).
pub const LAZY_FUNCTIONS: &[&str] = &[
    "try",
    "can",
    "templatefile",
    "sensitive",
    "nonsensitive",
    "issensitive",
];

/// Evaluates expressions against [`Roots`] plus per-instance names.
pub struct Evaluator<'a> {
    roots: &'a dyn Roots,
    base_dir: &'a Path,
    locals: Locals,
    /// Set when the evaluation read a sensitive value.
    pub touched_sensitive: bool,
    /// `templatefile` nesting, to stop runaway recursion.
    depth: usize,
    /// Bytes built or copied so far, against [`limits::MAX_EVALUATION_BYTES`].
    spent: u64,
}

impl<'a> Evaluator<'a> {
    pub fn new(roots: &'a dyn Roots, base_dir: &'a Path) -> Self {
        Evaluator {
            roots,
            base_dir,
            locals: Locals::default(),
            touched_sensitive: false,
            depth: 0,
            spent: 0,
        }
    }

    /// Adds a name visible to evaluated expressions (`each`, `count`, an iterator).
    pub fn bind(&mut self, name: impl Into<String>, value: Value) {
        self.locals.vars.push((name.into(), value));
    }

    /// Removes the name bound last.
    pub fn unbind(&mut self) {
        self.locals.vars.pop();
    }

    /// Charges a value about to be copied (or just built) to this evaluation's budget, so
    /// copies that multiply one another stop with an error, not an allocation failure.
    fn charge(&mut self, v: &Value, span: &Option<Range<usize>>) -> Result<(), EvalError> {
        let left = limits::MAX_EVALUATION_BYTES.saturating_sub(self.spent);
        self.spent = self.spent.saturating_add(limits::value_bytes(v, left));
        self.check_budget(span)
    }

    /// Charges fixed work (a `for` iteration) that builds no value of its own yet.
    fn charge_step(&mut self, span: &Option<Range<usize>>) -> Result<(), EvalError> {
        self.spent = self.spent.saturating_add(limits::STEP_BYTES);
        self.check_budget(span)
    }

    fn check_budget(&self, span: &Option<Range<usize>>) -> Result<(), EvalError> {
        if self.spent > limits::MAX_EVALUATION_BYTES {
            return Err(EvalError::new("Evaluation limit reached", span.clone()).detail(format!(
                "Evaluating this expression builds or copies more than {} MiB of data, the limit for one expression.",
                limits::MAX_EVALUATION_BYTES >> 20
            )));
        }
        Ok(())
    }

    /// Whether this evaluation ran out of budget: `try` and `can` must not turn that into
    /// a fallback value, or the work would go on.
    fn exhausted(&self) -> bool {
        self.spent > limits::MAX_EVALUATION_BYTES
    }

    /// A value a function or template produced: within the string and collection limits,
    /// and charged.
    fn produced(&mut self, v: &Value, span: Option<Range<usize>>) -> Result<(), EvalError> {
        self.charge(v, &span)?;
        limits::check_value(v)
            .map_err(|why| EvalError::new("Value too large", span).detail(format!("{why}.")))
    }

    pub fn eval(&mut self, e: &E) -> EvalResult {
        match e {
            E::Null(_) => Ok(Value::Null),
            E::Bool(b) => Ok(Value::Bool(*b.value())),
            E::Number(n) => Ok(number_value(n.value())),
            E::String(s) => Ok(Value::String(s.value().clone())),
            E::Array(a) => {
                let mut out = Vec::with_capacity(a.len());
                for item in a.iter() {
                    out.push(self.eval(item)?);
                }
                Ok(Value::List(out))
            }
            E::Object(o) => {
                let mut out = Object::default();
                let mut unknown_key = false;
                for (k, v) in o.iter() {
                    let key = match k {
                        ObjectKey::Ident(id) => id.value().as_str().to_string(),
                        ObjectKey::Expression(ke) => match self.eval(ke)? {
                            Value::String(s) => s,
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            Value::Unknown => {
                                unknown_key = true;
                                continue;
                            }
                            other => {
                                return Err(EvalError::new("Invalid object key", ke.span())
                                    .detail(format!(
                                        "An object key must be a string, not a {}.",
                                        other.type_name()
                                    )));
                            }
                        },
                    };
                    let value = self.eval(v.expr())?;
                    out.insert(key, value);
                }
                Ok(if unknown_key {
                    Value::Unknown
                } else {
                    Value::object(out)
                })
            }
            E::StringTemplate(t) => self.eval_template_elements(t.iter(), e.span()),
            E::HeredocTemplate(h) => self.eval_template(&h.template, e.span()),
            E::Parenthesis(p) => self.eval(p.inner()),
            E::Variable(v) => self.lookup_variable(v.value().as_str(), e.span()),
            E::Conditional(c) => match self.eval(&c.cond_expr)? {
                Value::Bool(true) => self.eval(&c.true_expr),
                Value::Bool(false) => self.eval(&c.false_expr),
                Value::Unknown => Ok(Value::Unknown),
                other => Err(
                    EvalError::new("Incorrect condition type", c.cond_expr.span()).detail(format!(
                        "The condition expression must be of type bool, not {}.",
                        other.type_name()
                    )),
                ),
            },
            E::FuncCall(call) => self.eval_call(call, e.span()),
            E::Traversal(t) => {
                if let E::Variable(root) = &t.expr
                    && self.locals.get(root.value().as_str()).is_none()
                    && self
                        .roots
                        .is_sensitive(root.value().as_str(), &names_read(&t.operators))
                {
                    self.touched_sensitive = true;
                }
                let ops: Vec<&Op> = t.operators.iter().map(|o| o.value()).collect();
                if let E::Variable(root) = &t.expr
                    && self.locals.get(root.value().as_str()).is_none()
                    && let Some(base) = self.roots.root(root.value().as_str())
                {
                    // Walk into the root by reference and clone only what is read: a
                    // resource type's root holds every instance of that type.
                    let mut steps = self.roots.watching().then(Vec::new);
                    let (cur, done) = self.descend(base, &ops, steps.as_mut())?;
                    if let Some(steps) = steps {
                        self.roots.read(root.value().as_str(), &steps, Some(cur));
                    }
                    self.charge(cur, &e.span())?;
                    return self.apply_ops(cur.clone(), &ops[done..], &t.operators, t.expr.span());
                }
                // The same for a name bound here (`each`, `count`, an iterator) when only
                // attributes are read (`each.value.table`): the binding is lent out while
                // descending, since nothing on that path can read it.
                if let E::Variable(root) = &t.expr
                    && ops.iter().all(|o| matches!(o, Op::GetAttr(_)))
                    && let Some(at) = self.locals.position(root.value().as_str())
                {
                    let lent = std::mem::replace(&mut self.locals.vars[at].1, Value::Null);
                    let read = self.descend(&lent, &ops, None).and_then(|(cur, done)| {
                        self.charge(cur, &e.span())?;
                        self.apply_ops(cur.clone(), &ops[done..], &t.operators, t.expr.span())
                    });
                    self.locals.vars[at].1 = lent;
                    return read;
                }
                let base = self.eval(&t.expr)?;
                self.apply_ops(base, &ops, &t.operators, t.expr.span())
            }
            E::UnaryOp(u) => {
                let v = self.eval(&u.expr)?;
                match (u.operator.value(), v) {
                    (_, Value::Unknown) => Ok(Value::Unknown),
                    (UnaryOperator::Neg, v) => {
                        let n = to_number(&v).ok_or_else(|| {
                            EvalError::new("Invalid operand", u.expr.span()).detail(format!(
                                "Unsuitable value for unary operand: a number is required, got {}.",
                                v.type_name()
                            ))
                        })?;
                        Ok(Value::from_f64(-n))
                    }
                    (UnaryOperator::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
                    (UnaryOperator::Not, v) => {
                        Err(
                            EvalError::new("Invalid operand", u.expr.span()).detail(format!(
                                "Unsuitable value for unary operand: bool required, got {}.",
                                v.type_name()
                            )),
                        )
                    }
                }
            }
            E::BinaryOp(b) => {
                let op = *b.operator.value();
                let lhs = self.eval(&b.lhs_expr)?;
                // `&&` and `||` short-circuit like Terraform 1.x does not, but short-circuiting
                // lets `var.x != null && var.x.y` work, which users expect.
                match (op, &lhs) {
                    (BinaryOperator::And, Value::Bool(false)) => return Ok(Value::Bool(false)),
                    (BinaryOperator::Or, Value::Bool(true)) => return Ok(Value::Bool(true)),
                    _ => {}
                }
                let rhs = self.eval(&b.rhs_expr)?;
                binary(op, lhs, rhs).map_err(|why| {
                    EvalError::new("Invalid operand", e.span()).detail(why.to_string())
                })
            }
            E::ForExpr(f) => self.eval_for(f),
        }
    }

    fn lookup_variable(&mut self, name: &str, span: Option<Range<usize>>) -> EvalResult {
        if let Some(v) = self.locals.get(name) {
            let v = v.clone();
            self.charge(&v, &span)?;
            return Ok(v);
        }
        // A whole root (`var`, `local`, a resource type) holds whatever is sensitive in it.
        if self.roots.is_sensitive(name, &[]) {
            self.touched_sensitive = true;
        }
        let found = self.roots.root(name);
        if self.roots.watching() {
            self.roots.read(name, &[], found);
        }
        match found {
            Some(v) => {
                self.charge(v, &span)?;
                Ok(v.clone())
            }
            None => {
                Err(EvalError::new("Unknown variable", span).detail(self.roots.missing_root(name)))
            }
        }
    }

    /// Follows attribute and index steps that exist, without cloning; returns where it
    /// stopped so the general path (with its error messages, splats and unknowns) goes on.
    /// The steps followed go to `steps`, when given.
    fn descend<'v>(
        &mut self,
        mut cur: &'v Value,
        ops: &[&Op],
        mut steps: Option<&mut Vec<PathStep>>,
    ) -> Result<(&'v Value, usize), EvalError> {
        for (i, op) in ops.iter().enumerate() {
            // The step is written out only for `steps`: most evaluations keep none.
            let (next, step) = match (op, cur) {
                (Op::GetAttr(id), Value::Object(o)) => {
                    let k = id.value().as_str();
                    (
                        o.get(k),
                        steps.is_some().then(|| PathStep::Key(k.to_string())),
                    )
                }
                (Op::Index(ix), Value::Object(o)) => match self.eval(ix)? {
                    Value::String(k) => (o.get(&k), Some(PathStep::Key(k))),
                    _ => (None, None),
                },
                (Op::Index(ix), Value::List(l)) => match self.eval(ix)?.as_i64() {
                    Some(n) if n >= 0 => (l.get(n as usize), Some(PathStep::Index(n as usize))),
                    _ => (None, None),
                },
                _ => (None, None),
            };
            match next {
                Some(v) => {
                    cur = v;
                    if let (Some(steps), Some(step)) = (steps.as_deref_mut(), step) {
                        steps.push(step);
                    }
                }
                None => return Ok((cur, i)),
            }
        }
        Ok((cur, ops.len()))
    }

    fn apply_ops(
        &mut self,
        mut cur: Value,
        ops: &[&Op],
        decorated: &[hcl_edit::Decorated<Op>],
        root_span: Option<Range<usize>>,
    ) -> EvalResult {
        let offset = decorated.len() - ops.len();
        for (i, op) in ops.iter().enumerate() {
            let span = decorated
                .get(offset + i)
                .and_then(|d| d.span())
                .or(root_span.clone());
            match op {
                Op::GetAttr(id) => {
                    let name = id.value().as_str();
                    cur = match cur {
                        Value::Unknown => return Ok(Value::Unknown),
                        Value::Object(o) => match o.get(name).cloned() {
                            Some(v) => v,
                            None => {
                                let hint = crate::diagnostics::did_you_mean(
                                    name,
                                    o.keys().map(String::as_str),
                                );
                                return Err(EvalError::new("Unsupported attribute", span)
                                    .detail(format!(
                                        "This object does not have an attribute named \"{name}\"."
                                    ))
                                    .hint(hint));
                            }
                        },
                        Value::Null => {
                            return Err(EvalError::new(
                                "Attempt to get attribute from null value",
                                span,
                            )
                            .detail("This value is null, so it does not have any attributes."));
                        }
                        Value::List(_) => {
                            return Err(EvalError::new("Unsupported attribute", span).detail(format!(
                                "Can't access attribute \"{name}\" on a list. Did you mean to access an element with an index, or use a splat expression (`[*].{name}`)?"
                            )));
                        }
                        other => {
                            return Err(EvalError::new("Unsupported attribute", span).detail(
                                format!(
                                    "Can't access attributes on a primitive-typed value ({}).",
                                    other.type_name()
                                ),
                            ));
                        }
                    };
                }
                Op::Index(ix) => {
                    let key = self.eval(ix)?;
                    cur = index_value(cur, &key)
                        .map_err(|e| EvalError::new("Invalid index", span).detail(e.to_string()))?;
                }
                Op::LegacyIndex(n) => {
                    let key = Value::from_i64(*n.value() as i64);
                    cur = index_value(cur, &key)
                        .map_err(|e| EvalError::new("Invalid index", span).detail(e.to_string()))?;
                }
                Op::AttrSplat(_) | Op::FullSplat(_) => {
                    let rest = &ops[i + 1..];
                    let attr_only = matches!(op, Op::AttrSplat(_));
                    // Attribute splat applies only the attribute accesses that follow.
                    let take = if attr_only {
                        rest.iter()
                            .take_while(|o| matches!(o, Op::GetAttr(_)))
                            .count()
                    } else {
                        rest.len()
                    };
                    let (inner, after) = rest.split_at(take);
                    let items = match cur {
                        Value::Unknown => return Ok(Value::Unknown),
                        Value::Null => Vec::new(),
                        Value::List(l) => l,
                        other => vec![other],
                    };
                    let mut out = Vec::with_capacity(items.len());
                    let inner_decorated = &decorated[offset + i + 1..offset + i + 1 + take];
                    for item in items {
                        self.charge_step(&span)?;
                        out.push(self.apply_ops(item, inner, inner_decorated, span.clone())?);
                    }
                    let after_decorated = &decorated[offset + i + 1 + take..];
                    return self.apply_ops(Value::List(out), after, after_decorated, span);
                }
            }
        }
        Ok(cur)
    }

    fn eval_for(&mut self, f: &ForExpr) -> EvalResult {
        let coll = self.eval(&f.intro.collection_expr)?;
        let pairs: Vec<(Value, Value)> = match coll {
            Value::Unknown => return Ok(Value::Unknown),
            Value::List(l) => l
                .into_iter()
                .enumerate()
                .map(|(i, v)| (Value::from_i64(i as i64), v))
                .collect(),
            Value::Object(o) => Arc::unwrap_or_clone(o)
                .into_iter()
                .map(|(k, v)| (Value::String(k), v))
                .collect(),
            Value::Null => {
                return Err(EvalError::new(
                    "Iteration over null value",
                    f.intro.collection_expr.span(),
                )
                .detail("A null value cannot be used as the collection in a 'for' expression."));
            }
            other => {
                return Err(EvalError::new(
                    "Iteration over non-iterable value",
                    f.intro.collection_expr.span(),
                )
                .detail(format!(
                    "A value of type {} cannot be used as the collection in a 'for' expression.",
                    other.type_name()
                )));
            }
        };
        let key_var = f
            .intro
            .key_var
            .as_ref()
            .map(|k| k.value().as_str().to_string());
        let value_var = f.intro.value_var.value().as_str().to_string();
        let mark = self.locals.vars.len();
        let mut list = Vec::new();
        let mut obj = Object::default();
        let mut any_unknown = false;
        let result = (|| -> Result<(), EvalError> {
            for (k, v) in pairs {
                self.charge_step(&f.intro.collection_expr.span())?;
                self.locals.vars.truncate(mark);
                if let Some(kv) = &key_var {
                    self.locals.vars.push((kv.clone(), k));
                }
                self.locals.vars.push((value_var.clone(), v));
                if let Some(cond) = &f.cond {
                    match self.eval(&cond.expr)? {
                        Value::Bool(true) => {}
                        Value::Bool(false) => continue,
                        Value::Unknown => {
                            any_unknown = true;
                            continue;
                        }
                        other => {
                            return Err(EvalError::new(
                                "Invalid 'for' condition",
                                cond.expr.span(),
                            )
                            .detail(format!(
                                "The 'if' clause value must be bool, not {}.",
                                other.type_name()
                            )));
                        }
                    }
                }
                match &f.key_expr {
                    Some(ke) => {
                        let key = match self.eval(ke)? {
                            Value::String(s) => s,
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            Value::Unknown => {
                                any_unknown = true;
                                continue;
                            }
                            other => {
                                return Err(EvalError::new("Invalid object key", ke.span())
                                    .detail(format!("The key expression produced a {}, but a string is required.", other.type_name())));
                            }
                        };
                        let value = self.eval(&f.value_expr)?;
                        if f.grouping {
                            // Grouped entries are only ever lists.
                            if let Value::List(l) =
                                obj.entry(key).or_insert_with(|| Value::List(Vec::new()))
                            {
                                l.push(value);
                            }
                        } else if obj.contains_key(&key) {
                            return Err(EvalError::new("Duplicate object key", ke.span()).detail(format!(
                                "Two different items produced the key \"{key}\" in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key."
                            )));
                        } else {
                            obj.insert(key, value);
                        }
                    }
                    None => list.push(self.eval(&f.value_expr)?),
                }
            }
            Ok(())
        })();
        self.locals.vars.truncate(mark);
        result?;
        if any_unknown {
            return Ok(Value::Unknown);
        }
        let n = if f.key_expr.is_some() {
            obj.len()
        } else {
            list.len()
        };
        limits::check_collection_len(n).map_err(|why| {
            EvalError::new("Value too large", f.intro.collection_expr.span())
                .detail(format!("{why}."))
        })?;
        Ok(if f.key_expr.is_some() {
            Value::object(obj)
        } else {
            Value::List(list)
        })
    }

    fn eval_call(&mut self, call: &FuncCall, span: Option<Range<usize>>) -> EvalResult {
        let name = call.name.name.value().as_str();
        let args: Vec<&E> = call.args.iter().collect();
        match name {
            "try" => {
                if args.is_empty() {
                    return Err(EvalError::new("Not enough function arguments", span)
                        .detail("Function \"try\" expects at least one argument."));
                }
                let mut last_err = None;
                for a in &args {
                    match self.eval(a) {
                        Ok(v) => return Ok(v),
                        Err(e) if self.exhausted() => return Err(e),
                        Err(e) => last_err = Some(e),
                    }
                }
                let e = last_err.map(|e| e.summary).unwrap_or_default();
                Err(EvalError::new("Error in function call", span).detail(format!(
                    "Call to function \"try\" failed: no expression succeeded (the last error was: {e})."
                )))
            }
            "can" => {
                if args.len() != 1 {
                    return Err(EvalError::new("Wrong number of function arguments", span)
                        .detail("Function \"can\" expects 1 argument."));
                }
                match self.eval(args[0]) {
                    Ok(v) if v.contains_unknown() => Ok(Value::Unknown),
                    Ok(_) => Ok(Value::Bool(true)),
                    Err(e) if self.exhausted() => Err(e),
                    Err(_) => Ok(Value::Bool(false)),
                }
            }
            "templatefile" => self.templatefile(&args, span),
            // Sensitivity belongs to the evaluation, not to values, so these three act on
            // what evaluating their argument touched.
            "sensitive" | "nonsensitive" | "issensitive" => {
                if args.len() != 1 {
                    return Err(EvalError::new("Wrong number of function arguments", span)
                        .detail(format!("Function \"{name}\" expects 1 argument.")));
                }
                let before = self.touched_sensitive;
                self.touched_sensitive = false;
                let v = self.eval(args[0]);
                let argument_sensitive = self.touched_sensitive;
                self.touched_sensitive = match name {
                    "sensitive" => true,
                    // The copy is no longer sensitive: only what the rest of the expression
                    // read counts.
                    _ => before,
                };
                let v = v?;
                Ok(match name {
                    "issensitive" => Value::Bool(argument_sensitive),
                    _ => v,
                })
            }
            _ => {
                let mut values = Vec::with_capacity(args.len());
                for a in &args {
                    values.push(self.eval(a)?);
                }
                // `f(list...)` expands the final argument.
                if call.args.expand_final()
                    && let Some(last) = values.pop()
                {
                    match last {
                        Value::List(l) => values.extend(l),
                        Value::Unknown => return Ok(Value::Unknown),
                        other => {
                            return Err(EvalError::new("Invalid expanding argument value", span).detail(format!(
                                "The expanding argument (indicated by ...) must be of a list type, not {}.",
                                other.type_name()
                            )));
                        }
                    }
                }
                if !functions::exists(name) {
                    let hint = crate::diagnostics::did_you_mean(
                        name,
                        functions::names()
                            .iter()
                            .copied()
                            .chain(LAZY_FUNCTIONS.iter().copied()),
                    );
                    return Err(EvalError::new("Call to unknown function", span)
                        .detail(format!("There is no function named \"{name}\"."))
                        .hint(hint));
                }
                let ctx = FunctionContext {
                    base_dir: self.base_dir,
                };
                let v = functions::call(name, &values, &ctx).map_err(|e| {
                    let at = e
                        .arg
                        .and_then(|i| args.get(i))
                        .and_then(|a| a.span())
                        .or(span.clone());
                    // Errors about the call as a whole already name the function.
                    let detail = if e.message.starts_with("Call to function") {
                        e.message
                    } else {
                        format!("Call to function \"{name}\" failed: {}", e.message)
                    };
                    EvalError::new("Invalid function argument", at).detail(detail)
                })?;
                self.produced(&v, span)?;
                Ok(v)
            }
        }
    }

    fn templatefile(&mut self, args: &[&E], span: Option<Range<usize>>) -> EvalResult {
        if args.len() != 2 {
            return Err(EvalError::new("Wrong number of function arguments", span)
                .detail("Function \"templatefile\" expects 2 arguments: a path and an object of variables."));
        }
        let path = match self.eval(args[0])? {
            Value::String(s) => s,
            Value::Unknown => return Ok(Value::Unknown),
            other => {
                return Err(
                    EvalError::new("Invalid function argument", args[0].span()).detail(format!(
                        "templatefile: the path must be a string, not {}.",
                        other.type_name()
                    )),
                );
            }
        };
        let vars = match self.eval(args[1])? {
            Value::Object(o) => o,
            Value::Unknown => return Ok(Value::Unknown),
            other => {
                return Err(
                    EvalError::new("Invalid function argument", args[1].span()).detail(format!(
                        "templatefile: the variables must be an object, not {}.",
                        other.type_name()
                    )),
                );
            }
        };
        if self.depth > 8 {
            return Err(EvalError::new("Invalid function argument", span).detail(
                "templatefile: templates nest too deeply (recursive templatefile calls?).",
            ));
        }
        let full = self.base_dir.join(&path);
        let text = crate::limits::read_text_file(&full).map_err(|e| {
            EvalError::new("Invalid function argument", args[0].span())
                .detail(format!("templatefile: cannot read {}: {e}", full.display()))
        })?;
        let template: Template = text.parse().map_err(|e: hcl_edit::parser::Error| {
            EvalError::new("Invalid template", args[0].span()).detail(format!(
                "templatefile: {} has a syntax error at line {}, column {}: {}",
                full.display(),
                e.location().line(),
                e.location().column(),
                e.message()
            ))
        })?;
        // A template sees only the variables it is given, as in Terraform.
        struct Isolated;
        impl Roots for Isolated {
            fn root(&self, _: &str) -> Option<&Value> {
                None
            }
            fn missing_root(&self, name: &str) -> String {
                format!("There is no variable named \"{name}\" in the template's variables.")
            }
        }
        let mut inner = Evaluator {
            roots: &Isolated,
            base_dir: self.base_dir,
            locals: Locals {
                vars: Arc::unwrap_or_clone(vars).into_iter().collect(),
            },
            touched_sensitive: false,
            depth: self.depth + 1,
            spent: self.spent,
        };
        let result = inner.eval_template(&template, None).map_err(|e| {
            EvalError::new("Error in template", args[0].span()).detail(format!(
                "templatefile: in {}: {}{}",
                full.display(),
                e.summary,
                e.detail.map(|d| format!(": {d}")).unwrap_or_default()
            ))
        });
        self.touched_sensitive |= inner.touched_sensitive;
        self.spent = inner.spent;
        let v = result?;
        self.produced(&v, span)?;
        Ok(v)
    }

    fn eval_template(&mut self, t: &Template, span: Option<Range<usize>>) -> EvalResult {
        self.eval_template_elements(t.iter(), span)
    }

    /// Evaluates template elements. A template made of a single interpolation yields the
    /// interpolated value with its own type, per the HCL spec.
    fn eval_template_elements<'e>(
        &mut self,
        elements: impl Iterator<Item = &'e Element>,
        span: Option<Range<usize>>,
    ) -> EvalResult {
        let elements: Vec<&Element> = elements.collect();
        if let [Element::Interpolation(i)] = elements.as_slice() {
            return self.eval(&i.expr);
        }
        let mut pieces = Vec::new();
        let mut unknown = false;
        self.render_elements(&elements, &mut pieces, &mut unknown, span.clone())?;
        if unknown {
            return Ok(Value::Unknown);
        }
        let len = pieces
            .iter()
            .fold(0usize, |n, p| n.saturating_add(p.text.len()));
        limits::check_string_len(len).map_err(|why| {
            EvalError::new("Value too large", span.clone()).detail(format!("{why}."))
        })?;
        let v = Value::String(join_pieces(pieces));
        self.charge(&v, &span)?;
        Ok(v)
    }

    fn render_elements(
        &mut self,
        elements: &[&Element],
        pieces: &mut Vec<Piece>,
        unknown: &mut bool,
        span: Option<Range<usize>>,
    ) -> Result<(), EvalError> {
        for el in elements {
            match el {
                Element::Literal(s) => pieces.push(Piece::literal(s.value().clone())),
                Element::Interpolation(i) => {
                    let v = self.eval(&i.expr)?;
                    let text = match template_string(&v) {
                        Ok(Some(t)) => t,
                        Ok(None) => {
                            *unknown = true;
                            String::new()
                        }
                        Err(e) => {
                            return Err(EvalError::new(
                                "Invalid template interpolation value",
                                i.expr.span(),
                            )
                            .detail(e.to_string()));
                        }
                    };
                    pieces.push(Piece::value(text, i.strip));
                }
                Element::Directive(d) => match d.as_ref() {
                    Directive::If(ifd) => {
                        pieces.push(Piece::marker(ifd.if_expr.strip));
                        let cond = self.eval(&ifd.if_expr.cond_expr)?;
                        match cond {
                            Value::Bool(true) => {
                                let inner: Vec<&Element> = ifd.if_expr.template.iter().collect();
                                self.render_elements(&inner, pieces, unknown, span.clone())?;
                            }
                            Value::Bool(false) => {
                                if let Some(else_expr) = &ifd.else_expr {
                                    pieces.push(Piece::marker(else_expr.strip));
                                    let inner: Vec<&Element> = else_expr.template.iter().collect();
                                    self.render_elements(&inner, pieces, unknown, span.clone())?;
                                }
                            }
                            Value::Unknown => *unknown = true,
                            other => {
                                return Err(EvalError::new(
                                    "Invalid template if directive",
                                    ifd.if_expr.cond_expr.span(),
                                )
                                .detail(format!(
                                    "The condition must be bool, not {}.",
                                    other.type_name()
                                )));
                            }
                        }
                        pieces.push(Piece::marker(ifd.endif_expr.strip));
                    }
                    Directive::For(ford) => {
                        let fe = &ford.for_expr;
                        pieces.push(Piece::marker(fe.strip));
                        let coll = self.eval(&fe.collection_expr)?;
                        let pairs: Vec<(Value, Value)> = match coll {
                            Value::List(l) => l
                                .into_iter()
                                .enumerate()
                                .map(|(i, v)| (Value::from_i64(i as i64), v))
                                .collect(),
                            Value::Object(o) => Arc::unwrap_or_clone(o)
                                .into_iter()
                                .map(|(k, v)| (Value::String(k), v))
                                .collect(),
                            Value::Unknown => {
                                *unknown = true;
                                Vec::new()
                            }
                            other => {
                                return Err(EvalError::new(
                                    "Invalid template for directive",
                                    fe.collection_expr.span(),
                                )
                                .detail(format!(
                                    "A {} value cannot be iterated.",
                                    other.type_name()
                                )));
                            }
                        };
                        let mark = self.locals.vars.len();
                        let inner: Vec<&Element> = fe.template.iter().collect();
                        for (k, v) in pairs {
                            if let Err(e) = self.charge_step(&fe.collection_expr.span()) {
                                self.locals.vars.truncate(mark);
                                return Err(e);
                            }
                            self.locals.vars.truncate(mark);
                            if let Some(kv) = &fe.key_var {
                                self.locals.vars.push((kv.value().as_str().to_string(), k));
                            }
                            self.locals
                                .vars
                                .push((fe.value_var.value().as_str().to_string(), v));
                            let r = self.render_elements(&inner, pieces, unknown, span.clone());
                            if r.is_err() {
                                self.locals.vars.truncate(mark);
                                return r;
                            }
                        }
                        self.locals.vars.truncate(mark);
                        pieces.push(Piece::marker(ford.endfor_expr.strip));
                    }
                },
            }
        }
        Ok(())
    }
}

/// A part of a rendered template; markers carry `~` strip requests of directives.
struct Piece {
    text: String,
    literal: bool,
    strip: Strip,
}

impl Piece {
    fn literal(text: String) -> Self {
        Piece {
            text,
            literal: true,
            strip: Strip::None,
        }
    }
    fn value(text: String, strip: Strip) -> Self {
        Piece {
            text,
            literal: false,
            strip,
        }
    }
    fn marker(strip: Strip) -> Self {
        Piece {
            text: String::new(),
            literal: false,
            strip,
        }
    }
}

/// Joins template pieces, applying `~` strip markers to the neighbouring literals.
fn join_pieces(mut pieces: Vec<Piece>) -> String {
    for i in 0..pieces.len() {
        let strip = pieces[i].strip;
        if pieces[i].literal {
            continue;
        }
        if matches!(strip, Strip::Start | Strip::Both)
            && let Some(prev) = pieces[..i]
                .iter_mut()
                .rev()
                .find(|p| p.literal || !p.text.is_empty())
            && prev.literal
        {
            prev.text = prev.text.trim_end().to_string();
        }
        if matches!(strip, Strip::End | Strip::Both)
            && let Some(next) = pieces[i + 1..]
                .iter_mut()
                .find(|p| p.literal || !p.text.is_empty())
            && next.literal
        {
            next.text = next.text.trim_start().to_string();
        }
    }
    pieces.into_iter().map(|p| p.text).collect()
}

/// Why a value cannot be interpolated into a template.
#[derive(Debug, thiserror::Error)]
enum TemplateValueError {
    #[error("The expression result is null. Cannot include a null value in a string template.")]
    Null,
    #[error("Cannot include the given value in a string template: string required, got {0}.")]
    NotPrimitive(&'static str),
}

/// The string form of a value inside a template; `Ok(None)` when unknown.
fn template_string(v: &Value) -> Result<Option<String>, TemplateValueError> {
    match v {
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Unknown => Ok(None),
        Value::Null => Err(TemplateValueError::Null),
        other => Err(TemplateValueError::NotPrimitive(other.type_name())),
    }
}

fn number_value(n: &hcl_edit::Number) -> Value {
    if let Some(i) = n.as_i64() {
        Value::from_i64(i)
    } else if let Some(u) = n.as_u64() {
        Value::Number(serde_json::Number::from(u))
    } else {
        Value::from_f64(n.as_f64().unwrap_or(0.0))
    }
}

/// Numbers, and strings that hold numbers (HCL converts them for arithmetic).
pub fn to_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

/// Why an index (`x[k]`) selects nothing.
#[derive(Debug, thiserror::Error)]
enum IndexError {
    #[error(
        "The given key does not identify an element in this collection value: a number is required, got {0}."
    )]
    NotANumber(&'static str),
    #[error(
        "The given key does not identify an element in this collection value: the collection has {len} elements and the index is {index}."
    )]
    OutOfRange { len: usize, index: Value },
    #[error("An object key must be a string, not {0}.")]
    KeyType(&'static str),
    /// `hint` is a "did you mean" for a key close to the one given.
    #[error(
        "The given key does not identify an element in this collection value: there is no key {}{}.",
        crate::value::quote(.key),
        .hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default()
    )]
    NoKey { key: String, hint: Option<String> },
    #[error("Cannot index a null value.")]
    Null,
    #[error("This value does not have any indices: it is a {0}.")]
    NotIndexable(&'static str),
}

fn index_value(cur: Value, key: &Value) -> Result<Value, IndexError> {
    match (cur, key) {
        (Value::Unknown, _) | (_, Value::Unknown) => Ok(Value::Unknown),
        (Value::List(mut l), k) => {
            let Some(i) = to_number(k) else {
                return Err(IndexError::NotANumber(k.type_name()));
            };
            if i < 0.0 || i.fract() != 0.0 || (i as usize) >= l.len() {
                return Err(IndexError::OutOfRange {
                    len: l.len(),
                    index: Value::from_f64(i),
                });
            }
            Ok(l.swap_remove(i as usize))
        }
        (Value::Object(o), k) => {
            let key = match k {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => return Err(IndexError::KeyType(other.type_name())),
            };
            match o.get(&key).cloned() {
                Some(v) => Ok(v),
                None => {
                    let hint = crate::diagnostics::did_you_mean(&key, o.keys().map(String::as_str));
                    Err(IndexError::NoKey { key, hint })
                }
            }
        }
        (Value::Null, _) => Err(IndexError::Null),
        (other, _) => Err(IndexError::NotIndexable(other.type_name())),
    }
}

/// Why a binary operator cannot apply to its operands.
#[derive(Debug, thiserror::Error)]
enum OperandError {
    /// `got` as [`describe`] writes it.
    #[error("Unsuitable value for {side} operand: a number is required, got {got}.")]
    NotANumber { side: &'static str, got: String },
    #[error("Unsuitable value for operand: a bool is required, got {0}.")]
    NotABool(&'static str),
    #[error("Division by zero.")]
    DivisionByZero,
    #[error("Modulo by zero.")]
    ModuloByZero,
}

fn binary(op: BinaryOperator, lhs: Value, rhs: Value) -> Result<Value, OperandError> {
    use BinaryOperator as B;
    match op {
        B::Eq | B::NotEq => {
            if lhs.contains_unknown() || rhs.contains_unknown() {
                return Ok(Value::Unknown);
            }
            let eq = values_equal(&lhs, &rhs);
            Ok(Value::Bool(if op == B::Eq { eq } else { !eq }))
        }
        B::And | B::Or => {
            let l = bool_operand(&lhs)?;
            let r = bool_operand(&rhs)?;
            match (l, r) {
                (Some(l), Some(r)) => Ok(Value::Bool(if op == B::And { l && r } else { l || r })),
                _ => Ok(Value::Unknown),
            }
        }
        _ => {
            if matches!(lhs, Value::Unknown) || matches!(rhs, Value::Unknown) {
                return Ok(Value::Unknown);
            }
            let l = to_number(&lhs).ok_or_else(|| OperandError::NotANumber {
                side: "left",
                got: describe(&lhs),
            })?;
            let r = to_number(&rhs).ok_or_else(|| OperandError::NotANumber {
                side: "right",
                got: describe(&rhs),
            })?;
            Ok(match op {
                B::Plus => Value::from_f64(l + r),
                B::Minus => Value::from_f64(l - r),
                B::Mul => Value::from_f64(l * r),
                B::Div => {
                    if r == 0.0 {
                        return Err(OperandError::DivisionByZero);
                    }
                    Value::from_f64(l / r)
                }
                B::Mod => {
                    if r == 0.0 {
                        return Err(OperandError::ModuloByZero);
                    }
                    Value::from_f64(l % r)
                }
                B::Less => Value::Bool(l < r),
                B::LessEq => Value::Bool(l <= r),
                B::Greater => Value::Bool(l > r),
                B::GreaterEq => Value::Bool(l >= r),
                B::Eq | B::NotEq | B::And | B::Or => Value::Null,
            })
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("string {}", crate::value::quote(s)),
        other => other.type_name().to_string(),
    }
}

fn bool_operand(v: &Value) -> Result<Option<bool>, OperandError> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Unknown => Ok(None),
        Value::String(s) if s == "true" => Ok(Some(true)),
        Value::String(s) if s == "false" => Ok(Some(false)),
        other => Err(OperandError::NotABool(other.type_name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct TestRoots(HashMap<String, Value>);
    impl Roots for TestRoots {
        fn root(&self, name: &str) -> Option<&Value> {
            self.0.get(name)
        }
        fn is_sensitive(&self, root: &str, attrs: &[&str]) -> bool {
            root == "var" && attrs.first().is_none_or(|a| *a == "secret")
        }
    }

    fn roots() -> TestRoots {
        let var = Value::object(Object::from_iter([
            ("env".to_string(), Value::from("dev")),
            ("secret".to_string(), Value::from("hunter2")),
            ("n".to_string(), Value::from(3i64)),
            (
                "tags".to_string(),
                Value::object(Object::from_iter([(
                    "team".to_string(),
                    Value::from("data"),
                )])),
            ),
            (
                "items".to_string(),
                Value::List(vec![
                    Value::object(Object::from_iter([("id".to_string(), Value::from("a"))])),
                    Value::object(Object::from_iter([("id".to_string(), Value::from("b"))])),
                ]),
            ),
        ]));
        let cat = Value::object(Object::from_iter([(
            "main".to_string(),
            Value::object(Object::from_iter([
                ("name".to_string(), Value::from("main")),
                ("id".to_string(), Value::Unknown),
            ])),
        )]));
        TestRoots(HashMap::from([
            ("var".to_string(), var),
            ("databricks_catalog".to_string(), cat),
        ]))
    }

    fn eval(src: &str) -> EvalResult {
        let r = roots();
        let e: E = src.parse().expect("parses");
        Evaluator::new(&r, Path::new(".")).eval(&e)
    }

    #[test]
    fn literals_operators_and_conditionals() {
        assert_eq!(eval("1 + 2 * 3").unwrap(), Value::from(7i64));
        assert_eq!(eval("7 / 2").unwrap(), Value::from_f64(3.5));
        assert_eq!(
            eval("var.n > 2 ? \"big\" : \"small\"").unwrap(),
            Value::from("big")
        );
        assert_eq!(
            eval("!(1 == 1) || \"a\" != \"b\"").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(eval("-var.n").unwrap(), Value::from(-3i64));
        assert_eq!(eval("\"5\" + 1").unwrap(), Value::from(6i64));
    }

    #[test]
    fn templates_and_heredocs() {
        assert_eq!(eval("\"${var.env}_cat\"").unwrap(), Value::from("dev_cat"));
        assert_eq!(
            eval("\"${var.n}\"").unwrap(),
            Value::from(3i64),
            "a lone interpolation keeps its type"
        );
        assert_eq!(
            eval("\"%{ for t in [\"a\", \"b\"] }${t},%{ endfor }\"").unwrap(),
            Value::from("a,b,")
        );
        assert_eq!(
            eval("\"%{ if var.n > 1 }many%{ else }one%{ endif }\"").unwrap(),
            Value::from("many")
        );
        assert_eq!(
            eval("\"x ${~ var.env ~} y\"").unwrap(),
            Value::from("xdevy")
        );
        let e: E = "<<-EOT\n    hello ${var.env}\n      indented\n    EOT"
            .parse()
            .unwrap();
        let r = roots();
        assert_eq!(
            Evaluator::new(&r, Path::new(".")).eval(&e).unwrap(),
            Value::from("hello dev\n  indented\n")
        );
    }

    #[test]
    fn traversals_splats_and_for() {
        assert_eq!(eval("var.tags.team").unwrap(), Value::from("data"));
        assert_eq!(eval("var.tags[\"team\"]").unwrap(), Value::from("data"));
        assert_eq!(eval("var.items[1].id").unwrap(), Value::from("b"));
        assert_eq!(
            eval("var.items[*].id").unwrap(),
            Value::List(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            eval("var.items.*.id").unwrap(),
            Value::List(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            eval("[for i in var.items : upper(i.id) if i.id != \"a\"]").unwrap(),
            Value::List(vec!["B".into()])
        );
        assert_eq!(
            eval("{for i, x in var.items : x.id => i}").unwrap(),
            Value::object(Object::from_iter([
                ("a".to_string(), Value::from(0i64)),
                ("b".to_string(), Value::from(1i64))
            ]))
        );
        assert_eq!(
            eval("{for x in [\"a\", \"b\", \"a\"] : x => 1...}")
                .unwrap()
                .as_object()
                .map(|o| o.len()),
            Some(2)
        );
    }

    #[test]
    fn unknowns_propagate() {
        assert_eq!(eval("databricks_catalog.main.id").unwrap(), Value::Unknown);
        assert_eq!(
            eval("\"${databricks_catalog.main.id}/raw\"").unwrap(),
            Value::Unknown
        );
        assert_eq!(
            eval("upper(databricks_catalog.main.id)").unwrap(),
            Value::Unknown
        );
        assert_eq!(
            eval("databricks_catalog.main.id == \"x\" ? 1 : 2").unwrap(),
            Value::Unknown
        );
        assert_eq!(
            eval("databricks_catalog.main.name").unwrap(),
            Value::from("main")
        );
    }

    #[test]
    fn try_and_can_are_lazy() {
        assert_eq!(
            eval("try(var.nope, \"fallback\")").unwrap(),
            Value::from("fallback")
        );
        assert_eq!(
            eval("try(var.tags.team, \"x\")").unwrap(),
            Value::from("data")
        );
        assert_eq!(eval("can(var.nope)").unwrap(), Value::Bool(false));
        assert_eq!(eval("can(var.env)").unwrap(), Value::Bool(true));
        assert_eq!(
            eval("can(databricks_catalog.main.id)").unwrap(),
            Value::Unknown
        );
        assert!(eval("try(var.nope, var.nope2)").is_err());
    }

    #[test]
    fn errors_are_located_and_helpful() {
        let err = eval("var.tags.teem").unwrap_err();
        assert_eq!(err.summary, "Unsupported attribute");
        assert_eq!(err.hint.as_deref(), Some("did you mean `team`?"));
        assert!(err.span.is_some());
        let err = eval("nosuch.thing").unwrap_err();
        assert_eq!(err.summary, "Unknown variable");
        let err = eval("var.items[5]").unwrap_err();
        assert!(err.detail.unwrap().contains("has 2 elements"));
        let err = eval("uppr(\"a\")").unwrap_err();
        assert_eq!(err.summary, "Call to unknown function");
        assert_eq!(err.hint.as_deref(), Some("did you mean `upper`?"));
        let err = eval("1 + \"x\"").unwrap_err();
        assert!(err.detail.unwrap().contains("a number is required"));
    }

    #[test]
    fn reading_a_sensitive_variable_is_noticed() {
        let r = roots();
        let e: E = "\"x-${var.secret}\"".parse().unwrap();
        let mut ev = Evaluator::new(&r, Path::new("."));
        let _ = ev.eval(&e);
        assert!(ev.touched_sensitive);
        let e: E = "var.env".parse().unwrap();
        let mut ev = Evaluator::new(&r, Path::new("."));
        ev.eval(&e).unwrap();
        assert!(!ev.touched_sensitive);
    }

    #[test]
    fn a_sensitive_variable_read_by_index_or_whole_is_noticed() {
        let r = roots();
        let touched = |src: &str| {
            let e: E = src.parse().unwrap();
            let mut ev = Evaluator::new(&r, Path::new("."));
            let _ = ev.eval(&e);
            ev.touched_sensitive
        };
        assert!(touched("var[\"secret\"]"));
        assert!(touched("var"));
        assert!(touched("values(var)"));
        // A name computed at run time could be any: the whole root counts.
        assert!(touched("var[var.env == \"dev\" ? \"secret\" : \"env\"]"));
        assert!(!touched("var[\"env\"]"));
        assert!(!touched("var.items[0]"));
        assert!(!touched("var.tags[\"team\"]"));
    }

    #[test]
    fn sensitivity_is_added_removed_and_asked_for_by_functions() {
        let r = roots();
        let run = |src: &str| {
            let e: E = src.parse().unwrap();
            let mut ev = Evaluator::new(&r, Path::new("."));
            let v = ev.eval(&e).unwrap();
            (v, ev.touched_sensitive)
        };
        assert_eq!(run("sensitive(\"x\")"), (Value::from("x"), true));
        assert!(run("\"${sensitive(1)}-a\"").1);
        assert!(!run("nonsensitive(var.secret)").1);
        assert!(!run("upper(nonsensitive(var.secret))").1);
        // Only the argument is made non-sensitive; the rest of the expression still counts.
        assert!(run("\"${nonsensitive(var.env)}${var.secret}\"").1);
        assert!(run("\"${var.secret}${nonsensitive(var.env)}\"").1);
        // As in current Terraform, nonsensitive of a value that is not sensitive is allowed.
        assert!(!run("nonsensitive(var.env)").1);
        assert_eq!(run("issensitive(var.secret)"), (Value::Bool(true), false));
        assert_eq!(run("issensitive(var.env)"), (Value::Bool(false), false));
        assert_eq!(
            run("issensitive(sensitive(var.env))"),
            (Value::Bool(true), false)
        );
        let e: E = "sensitive(1, 2)".parse().unwrap();
        let err = Evaluator::new(&r, Path::new(".")).eval(&e).unwrap_err();
        assert_eq!(err.summary, "Wrong number of function arguments");
    }

    #[test]
    fn templatefile_sees_only_its_variables() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("t.tpl"),
            "hello ${name}%{ for x in xs }-${x}%{ endfor }",
        )
        .unwrap();
        let r = roots();
        let e: E = "templatefile(\"t.tpl\", { name = var.env, xs = [1, 2] })"
            .parse()
            .unwrap();
        let v = Evaluator::new(&r, dir.path()).eval(&e).unwrap();
        assert_eq!(v, Value::from("hello dev-1-2"));
        std::fs::write(dir.path().join("bad.tpl"), "${var.env}").unwrap();
        let e: E = "templatefile(\"bad.tpl\", {})".parse().unwrap();
        assert!(Evaluator::new(&r, dir.path()).eval(&e).is_err());
    }
}
