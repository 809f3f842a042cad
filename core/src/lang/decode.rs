//! Decoding a resource body into an object shaped by the kind's schema: attributes checked
//! and converted to their types, nested blocks (including `dynamic` ones) expanded, required
//! attributes enforced, and every problem reported with its location.

use super::eval::{EvalError, Evaluator};
use crate::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use crate::provider::{AttrType, Attribute, BlockType, Nesting, Presence, Schema};
use crate::source::{FileId, Span};
use crate::value::{Object, PathStep, Value};
use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, Body, Structure};
use std::ops::Range;
use std::sync::Arc;

/// The error for a name another kind holds: where it is, which kind, the rewrite.
fn elsewhere(e: &crate::provider::Elsewhere, at: Option<Span>) -> Diagnostic {
    Diagnostic::error(format!("\"{}\" belongs to another kind", e.name))
        .at(at)
        .label("not expected here")
        .detail(e.detail)
        .hint(format!("rewrite it as:\n{}", e.rewrite))
}

/// The error for a name brickform does not take here although other tools do.
fn unsupported(u: &crate::provider::Unsupported, at: Option<Span>) -> Diagnostic {
    Diagnostic::error(format!("\"{}\" is not supported", u.name))
        .at(at)
        .label("not supported")
        .detail(u.detail)
}

/// The label of a value the attribute's allowed set or rule rejects (see
/// `Decoder::reject_values`): unlike other decoding errors, it leaves the value in place.
pub const REJECTED: &str = "not accepted by the service";

/// The result of decoding a body.
#[derive(Debug, Default)]
pub struct Decoded {
    pub value: Object,
    /// Paths whose value came from a sensitive input.
    pub sensitive_paths: Vec<Vec<PathStep>>,
}

pub struct Decoder<'e, 'r> {
    pub eval: &'e mut Evaluator<'r>,
    pub file: FileId,
    pub diags: Diagnostics,
    sensitive_paths: Vec<Vec<PathStep>>,
    /// The key a labelled keyed block's label sets, for the body decoded next.
    label_key: Option<(&'static str, String)>,
}

impl<'e, 'r> Decoder<'e, 'r> {
    pub fn new(eval: &'e mut Evaluator<'r>, file: FileId) -> Self {
        Decoder {
            eval,
            file,
            diags: Diagnostics::new(),
            sensitive_paths: Vec::new(),
            label_key: None,
        }
    }

    fn span(&self, r: Option<Range<usize>>) -> Option<Span> {
        r.map(|r| Span::new(self.file, r))
    }

    fn eval_error(&mut self, e: EvalError) {
        self.diags.push(e.to_diagnostic(self.file));
    }

    /// Decodes `body` against `schema`. `block_span` locates "missing argument" errors.
    pub fn decode(
        mut self,
        body: &Body,
        schema: &Schema,
        block_span: Option<Range<usize>>,
    ) -> (Decoded, Diagnostics) {
        let value = self.decode_body(body, schema, block_span, &[]);
        (
            Decoded {
                value,
                sensitive_paths: self.sensitive_paths,
            },
            self.diags,
        )
    }

    /// Decodes one body (the resource's, or a nested block's at `path`) against `schema`.
    fn decode_body(
        &mut self,
        body: &Body,
        schema: &Schema,
        block_span: Option<Range<usize>>,
        path: &[PathStep],
    ) -> Object {
        // A nested block leaves out what it does not set (thousands of blocks of a large
        // configuration, each of a schema of dozens of names): room for what it writes.
        let nested = !path.is_empty();
        let room = if nested {
            body.len() + 1
        } else {
            schema.attributes.len() + schema.blocks.len() + 1
        };
        let mut out = Object::with_capacity_and_hasher(room, Default::default());
        if !nested {
            for a in &schema.attributes {
                if a.presence != Presence::Computed {
                    out.insert(a.name.to_string(), Value::Null);
                }
            }
        }
        if let Some((key, value)) = self.label_key.take() {
            out.insert(key.to_string(), Value::from(value.as_str()));
        }
        let mut blocks: Vec<Collected> = schema.blocks.iter().map(Collected::new).collect();
        for s in body.iter() {
            match s {
                Structure::Attribute(attr) => self.decode_attribute(attr, schema, path, &mut out),
                Structure::Block(b) => self.decode_block(b, schema, path, &mut blocks),
            }
        }
        self.check_required(body, schema, &out, &block_span);
        for (bt, collected) in schema.blocks.iter().zip(blocks) {
            self.check_blocks(bt, &collected, &block_span);
            if nested && collected.items.is_empty() {
                continue;
            }
            let v = match bt.nesting {
                Nesting::Single => collected.items.into_iter().next().unwrap_or(Value::Null),
                Nesting::List | Nesting::Keyed(_) => Value::List(collected.items),
            };
            out.insert(collected.name.to_string(), v);
        }
        out
    }

    /// Reports a name another kind holds, or one brickform does not take: whether it did.
    fn belongs_elsewhere(&mut self, schema: &Schema, name: &str, at: Option<Range<usize>>) -> bool {
        let d = if let Some(e) = schema.elsewhere.iter().find(|e| e.name == name) {
            elsewhere(e, self.span(at))
        } else if let Some(u) = schema.unsupported.iter().find(|u| u.name == name) {
            unsupported(u, self.span(at))
        } else {
            return false;
        };
        self.diags.push(d);
        true
    }

    /// Reports a name the schema does not know, with the nearest one it does.
    fn unknown_name(
        &mut self,
        schema: &Schema,
        name: &str,
        (summary, detail): (&str, String),
        at: Option<Range<usize>>,
    ) {
        self.diags.push(
            Diagnostic::error(summary)
                .at(self.span(at))
                .label("not expected here")
                .detail(detail)
                .maybe_hint(did_you_mean(name, schema.names().filter(|n| *n != name))),
        );
    }

    /// Decodes one attribute of the body into its slot of `out`.
    fn decode_attribute(
        &mut self,
        attr: &hcl_edit::structure::Attribute,
        schema: &Schema,
        path: &[PathStep],
        out: &mut Object,
    ) {
        let name = attr.key.as_str();
        if self.belongs_elsewhere(schema, name, attr.key.span()) {
            return;
        }
        let Some(def) = schema.attribute(name) else {
            let detail = if schema.block_type(name).is_some() {
                format!(
                    "An argument named \"{name}\" is not expected here. Did you mean to define a block of type \"{name}\"?"
                )
            } else {
                format!("An argument named \"{name}\" is not expected here.")
            };
            let problem = ("Unsupported argument", detail);
            self.unknown_name(schema, name, problem, attr.key.span());
            return;
        };
        if def.presence == Presence::Computed {
            self.diags.push(
                Diagnostic::error("Value for unconfigurable attribute")
                    .at(self.span(attr.key.span()))
                    .detail(format!("Can't configure a value for \"{name}\": its value will be decided automatically based on the result of applying this configuration.")),
            );
            return;
        }
        let Some(v) = self.eval_attribute(&attr.value, def, path) else {
            return;
        };
        match convert(&def.ty, v) {
            Ok(v) => {
                self.reject_values(def, &attr.value, &v);
                if v.is_null() && !path.is_empty() {
                    // A nested block leaves out what it does not set.
                    return;
                }
                // The key is there already (null) unless a label set it.
                match out.get_mut(name) {
                    Some(slot) => *slot = v,
                    None => {
                        out.insert(name.to_string(), v);
                    }
                }
            }
            Err(msg) => self.diags.push(
                Diagnostic::error("Incorrect attribute value type")
                    .at(self.span(attr.value.span()))
                    .label(format!("expected {}", def.ty.describe()))
                    .detail(format!(
                        "Inappropriate value for attribute \"{name}\": {msg}."
                    )),
            ),
        }
    }

    /// Evaluates an attribute's expression, and records its path when the value came from a
    /// sensitive input or the attribute is sensitive. `None` once an error is reported.
    fn eval_attribute(
        &mut self,
        expr: &Expression,
        def: &Attribute,
        path: &[PathStep],
    ) -> Option<Value> {
        // Whether the enclosing evaluation touched a sensitive input is kept for it.
        let before = std::mem::replace(&mut self.eval.touched_sensitive, false);
        let v = self.eval.eval(expr);
        if v.is_ok() && (self.eval.touched_sensitive || def.sensitive) {
            self.sensitive_paths
                .push(child(path, PathStep::Key(def.name.to_string())));
        }
        self.eval.touched_sensitive = before;
        match v {
            Ok(v) => Some(v),
            Err(e) => {
                self.eval_error(e);
                None
            }
        }
    }

    /// Decodes one block of the body (or the blocks a `dynamic` one generates) into its
    /// type's items.
    fn decode_block(
        &mut self,
        b: &Block,
        schema: &Schema,
        path: &[PathStep],
        blocks: &mut [Collected],
    ) {
        let Some((name, is_dynamic)) = self.block_type_name(b) else {
            return;
        };
        if self.belongs_elsewhere(schema, name, b.ident.span()) {
            return;
        }
        let Some(bt) = schema.block_type(name) else {
            let detail = if schema.attribute(name).is_some() {
                format!(
                    "Blocks of type \"{name}\" are not expected here. Did you mean to define argument \"{name}\"? If so, use the equals sign to assign it a value."
                )
            } else {
                format!("Blocks of type \"{name}\" are not expected here.")
            };
            let problem = ("Unsupported block type", detail);
            self.unknown_name(schema, name, problem, b.ident.span());
            return;
        };
        let index = blocks.iter().position(|c| c.name == name).unwrap_or(0);
        let collected = &mut blocks[index];
        let mut p = child(path, PathStep::Key(name.to_string()));
        if is_dynamic {
            let items = self.expand_dynamic(b, &bt.schema, &p);
            collected
                .spans
                .extend(items.iter().map(|_| block_header(b)));
            collected.items.extend(items);
        } else {
            self.read_labels(b, bt, name);
            if bt.nesting != Nesting::Single {
                p.push(PathStep::Index(collected.items.len()));
            }
            let v = self.decode_body(&b.body, &bt.schema, block_header(b), &p);
            collected.items.push(Value::object(v));
            collected.spans.push(block_header(b));
        }
    }

    /// The block type a block writes: its name, or a `dynamic` block's label. `None` once
    /// a dynamic block without one is reported.
    fn block_type_name<'b>(&mut self, b: &'b Block) -> Option<(&'b str, bool)> {
        if b.ident.as_str() != "dynamic" {
            return Some((b.ident.as_str(), false));
        }
        let Some(l) = b.labels.first() else {
            self.diags.push(
                Diagnostic::error("Missing name for block")
                    .at(self.span(b.ident.span()))
                    .detail(
                        "A dynamic block needs one label: the type of the blocks it generates.",
                    ),
            );
            return None;
        };
        Some((l.as_str(), true))
    }

    /// Checks a block's labels. A keyed block may name itself with its label
    /// (`sink "orders" {}`), as the key attribute would (`sink { name = "orders" }`): the
    /// label is kept for the block's body.
    fn read_labels(&mut self, b: &Block, bt: &BlockType, name: &str) {
        if let (Nesting::Keyed(key), Some(label)) = (&bt.nesting, b.labels.first()) {
            let key: &'static str = key;
            if b.body.has_attribute(key) {
                self.diags.push(
                    Diagnostic::error("Duplicate block name")
                        .at(self.span(label.span()))
                        .detail(format!("This \"{name}\" block is named both by its label and by its \"{key}\" argument; keep one.")),
                );
            }
            self.label_key = Some((key, label.as_str().to_string()));
        }
        let allowed = usize::from(matches!(bt.nesting, Nesting::Keyed(_)));
        if let Some(extra) = b.labels.get(allowed) {
            let detail = match &bt.nesting {
                Nesting::Keyed(key) => {
                    format!("Blocks of type \"{name}\" take one label at most: their \"{key}\".")
                }
                _ => format!("Blocks of type \"{name}\" take no labels."),
            };
            self.diags.push(
                Diagnostic::error("Extraneous label for block")
                    .at(self.span(extra.span()))
                    .detail(detail),
            );
        }
    }

    /// Reports required attributes the body leaves out.
    fn check_required(
        &mut self,
        body: &Body,
        schema: &Schema,
        out: &Object,
        block_span: &Option<Range<usize>>,
    ) {
        for a in &schema.attributes {
            if a.presence == Presence::Required
                && out.get(a.name).is_none_or(Value::is_null)
                && !body.has_attribute(a.name)
            {
                self.diags.push(
                    Diagnostic::error("Missing required argument")
                        .at(self.span(block_span.clone()))
                        .detail(format!(
                            "The argument \"{}\" is required, but no definition was found.",
                            a.name
                        )),
                );
            }
        }
    }

    /// Checks the blocks of one type: how many there are, and that keyed ones have
    /// distinct keys.
    fn check_blocks(
        &mut self,
        bt: &BlockType,
        collected: &Collected,
        block_span: &Option<Range<usize>>,
    ) {
        let (name, items) = (collected.name, &collected.items);
        if items.len() < bt.min_items {
            self.diags.push(
                Diagnostic::error("Insufficient blocks")
                    .at(self.span(block_span.clone()))
                    .detail(format!(
                        "At least {} \"{name}\" block{} required.",
                        bt.min_items,
                        if bt.min_items == 1 { " is" } else { "s are" }
                    )),
            );
        }
        if let Some(max) = bt.max_items
            && items.len() > max
        {
            self.diags.push(
                Diagnostic::error("Too many blocks")
                    .at(self.span(collected.span(max, block_span)))
                    .detail(format!(
                        "No more than {max} \"{name}\" block{} allowed.",
                        if max == 1 { " is" } else { "s are" }
                    )),
            );
        }
        if let Nesting::Keyed(key) = bt.nesting {
            let mut seen = std::collections::HashSet::new();
            for (i, item) in items.iter().enumerate() {
                if let Some(Value::String(k)) = item.as_object().and_then(|o| o.get(key))
                    && !seen.insert(k.as_str())
                {
                    self.diags.push(
                        Diagnostic::error(format!("Duplicate {name} {key}"))
                            .at(self.span(collected.span(i, block_span)))
                            .detail(format!(
                                "Two \"{name}\" blocks have {key} = \"{k}\"; each must be unique."
                            )),
                    );
                }
            }
        }
    }

    /// Values the attribute's allowed set or rule rejects, each at the expression that
    /// wrote it (the list element when the list is written out). The value stays in the
    /// decoded object, so checks across attributes can still run on it.
    fn reject_values(&mut self, def: &Attribute, expr: &Expression, v: &Value) {
        for (index, r) in def.rejections(v) {
            let span = match (index, expr) {
                (Some(i), Expression::Array(items)) => {
                    items.iter().nth(i).and_then(|e| e.span()).or(expr.span())
                }
                _ => expr.span(),
            };
            let detail = match index {
                Some(i) => format!("Element {i}: {}.", r.message),
                None => format!("{}.", r.message),
            };
            self.diags.push(
                Diagnostic::error(format!("Invalid value for {}", def.name))
                    .at(self.span(span))
                    .label(REJECTED)
                    .detail(detail)
                    .maybe_hint(r.hint),
            );
        }
    }

    fn expand_dynamic(&mut self, b: &Block, schema: &Schema, path: &[PathStep]) -> Vec<Value> {
        let name = b.labels.first().map(|l| l.as_str()).unwrap_or("");
        let Some(fe) = b.body.get_attribute("for_each") else {
            self.diags.push(
                Diagnostic::error("Missing required argument")
                    .at(self.span(block_header(b)))
                    .detail("The argument \"for_each\" is required in a dynamic block."),
            );
            return Vec::new();
        };
        let iterator = match b.body.get_attribute("iterator").map(|a| &a.value) {
            Some(hcl_edit::expr::Expression::Variable(v)) => v.as_str().to_string(),
            Some(other) => {
                self.diags.push(
                    Diagnostic::error("Invalid dynamic iterator name")
                        .at(self.span(other.span()))
                        .detail("The iterator must be a bare name, such as iterator = t."),
                );
                return Vec::new();
            }
            None => name.to_string(),
        };
        let content: Vec<&Block> = b.body.get_blocks("content").collect();
        let [content] = content.as_slice() else {
            self.diags.push(
                Diagnostic::error("Missing content block")
                    .at(self.span(block_header(b)))
                    .detail("A dynamic block needs exactly one content block."),
            );
            return Vec::new();
        };
        for s in b.body.iter() {
            let key = match s {
                Structure::Attribute(a) => a.key.as_str(),
                Structure::Block(bl) => bl.ident.as_str(),
            };
            if !["for_each", "iterator", "content", "labels"].contains(&key) {
                self.diags.push(
                    Diagnostic::error("Unsupported argument")
                        .at(self.span(match s {
                            Structure::Attribute(a) => a.key.span(),
                            Structure::Block(bl) => bl.ident.span(),
                        }))
                        .detail(format!("\"{key}\" is not expected in a dynamic block; put attributes of the generated block inside content {{ … }}.")),
                );
            }
        }
        let coll = match self.eval.eval(&fe.value) {
            Ok(v) => v,
            Err(e) => {
                self.eval_error(e);
                return Vec::new();
            }
        };
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
            Value::Null => Vec::new(),
            Value::Unknown => {
                self.diags.push(
                    Diagnostic::error("Invalid dynamic for_each value")
                        .at(self.span(fe.value.span()))
                        .detail("The for_each value of a dynamic block depends on values that will only be known after apply; it must be known at plan time."),
                );
                return Vec::new();
            }
            other => {
                self.diags.push(
                    Diagnostic::error("Invalid dynamic for_each value")
                        .at(self.span(fe.value.span()))
                        .detail(format!("Cannot use a {} value in for_each. An iterable collection is required.", other.type_name())),
                );
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for (k, v) in pairs {
            let it = Value::object(Object::from_iter([
                ("key".to_string(), k),
                ("value".to_string(), v),
            ]));
            self.eval.bind(iterator.clone(), it);
            let p = child(path, PathStep::Index(out.len()));
            let value = self.decode_body(&content.body, schema, block_header(content), &p);
            self.eval.unbind();
            out.push(Value::object(value));
        }
        out
    }
}

/// The blocks of one type a body holds, and where each was written (its header), so "too
/// many" and "duplicate" errors point at the offending block rather than the resource.
struct Collected {
    name: &'static str,
    items: Vec<Value>,
    spans: Vec<Option<Range<usize>>>,
}

impl Collected {
    fn new(bt: &BlockType) -> Self {
        Collected {
            name: bt.name,
            items: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// Where item `i` was written, else the enclosing block.
    fn span(&self, i: usize, block_span: &Option<Range<usize>>) -> Option<Range<usize>> {
        self.spans.get(i).cloned().flatten().or(block_span.clone())
    }
}

/// `path` and one step further, with room for the index a nested block's path adds.
fn child(path: &[PathStep], step: PathStep) -> Vec<PathStep> {
    let mut p = Vec::with_capacity(path.len() + 2);
    p.extend_from_slice(path);
    p.push(step);
    p
}

fn block_header(b: &Block) -> Option<Range<usize>> {
    let start = b.ident.span()?.start;
    let end = b
        .labels
        .last()
        .and_then(|l| l.span())
        .or(b.ident.span())?
        .end;
    Some(start..end)
}

/// Converts a value to a schema attribute type, following HCL's automatic conversions.
pub fn convert(ty: &AttrType, v: Value) -> Result<Value, super::types::ConvertError> {
    use super::types::TypeConstraint as T;
    fn to_tc(ty: &AttrType) -> T {
        match ty {
            AttrType::String => T::String,
            AttrType::Number => T::Number,
            AttrType::Bool => T::Bool,
            AttrType::List(t) => T::List(Box::new(to_tc(t))),
            AttrType::Set(t) => T::Set(Box::new(to_tc(t))),
            AttrType::Map(t) => T::Map(Box::new(to_tc(t))),
            AttrType::Any => T::Any,
        }
    }
    to_tc(ty).convert(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::eval::Roots;
    use crate::provider::BlockType;
    use std::collections::HashMap;

    struct R(HashMap<String, Value>);
    impl Roots for R {
        fn root(&self, name: &str) -> Option<&Value> {
            self.0.get(name)
        }
        fn is_sensitive(&self, root: &str, attrs: &[&str]) -> bool {
            root == "var" && attrs.first() == Some(&"pw")
        }
    }

    fn schema() -> Schema {
        Schema::new()
            .attr(Attribute::required("name", AttrType::String))
            .attr(Attribute::optional("size", AttrType::Number))
            .attr(Attribute::optional("password", AttrType::String))
            .attr(Attribute::computed("id", AttrType::String))
            .block(BlockType::keyed(
                "task",
                "task_key",
                Schema::new()
                    .attr(Attribute::required("task_key", AttrType::String))
                    .attr(Attribute::optional(
                        "depends",
                        AttrType::List(Box::new(AttrType::String)),
                    )),
            ))
    }

    fn decode(src: &str) -> (Decoded, Diagnostics) {
        let roots = R(HashMap::from([(
            "var".to_string(),
            Value::object(Object::from_iter([
                (
                    "keys".to_string(),
                    Value::List(vec!["a".into(), "b".into()]),
                ),
                ("pw".to_string(), Value::from("hunter2")),
            ])),
        )]));
        let body: Body = src.parse().unwrap();
        let mut ev = Evaluator::new(&roots, std::path::Path::new("."));
        Decoder::new(&mut ev, FileId(0)).decode(&body, &schema(), Some(0..1))
    }

    #[test]
    fn decodes_attributes_blocks_and_dynamic_blocks() {
        let (d, diags) = decode(
            r#"
name = "x"
size = "3"
password = var.pw
task { task_key = "first" }
dynamic "task" {
  for_each = var.keys
  iterator = t
  content {
    task_key = "k_${t.value}"
    depends  = ["first"]
  }
}
"#,
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(d.value["size"], Value::from(3i64));
        let tasks = d.value["task"].as_list().unwrap();
        assert_eq!(tasks.len(), 3);
        assert_eq!(
            tasks[2].as_object().unwrap()["task_key"],
            Value::from("k_b")
        );
        assert_eq!(
            d.sensitive_paths,
            vec![vec![PathStep::Key("password".into())]]
        );
        assert!(
            !d.value.contains_key("id"),
            "computed attributes are not part of the configuration"
        );
    }

    #[test]
    fn a_nested_block_holds_only_what_it_sets_and_the_resource_every_argument() {
        let (d, diags) = decode(
            r#"
name = "x"
task { task_key = "first" }
task {
  task_key = "second"
  depends  = null
}
"#,
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(
            d.value["size"],
            Value::Null,
            "the resource's own: all, unset as null"
        );
        assert_eq!(d.value["password"], Value::Null);
        for task in d.value["task"].as_list().unwrap() {
            let keys: Vec<&str> = task
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, ["task_key"], "unset and null arguments are left out");
        }
    }

    #[test]
    fn reports_all_problems() {
        let (_, diags) = decode(
            r#"
nme  = "x"
size = "big"
id   = "nope"
task { task_key = "a" }
task { task_key = "a" }
"#,
        );
        let summaries: Vec<&str> = diags.iter().map(|d| d.summary.as_str()).collect();
        assert_eq!(
            summaries,
            [
                "Unsupported argument",
                "Incorrect attribute value type",
                "Value for unconfigurable attribute",
                "Missing required argument",
                "Duplicate task task_key"
            ]
        );
        assert_eq!(diags.0[0].hint.as_deref(), Some("did you mean `name`?"));
    }

    #[test]
    fn keyed_blocks_may_be_named_by_their_label() {
        let (d, diags) = decode(
            r#"
name = "x"
task "first" {}
task { task_key = "second" }
"#,
        );
        assert!(diags.is_empty(), "{diags:?}");
        let keys: Vec<&Value> = d.value["task"]
            .as_list()
            .unwrap()
            .iter()
            .map(|t| &t.as_object().unwrap()["task_key"])
            .collect();
        assert_eq!(keys, [&Value::from("first"), &Value::from("second")]);

        let (_, diags) = decode(
            r#"
name = "x"
task "a" { task_key = "b" }
task "c" "d" {}
task "c" {}
"#,
        );
        let summaries: Vec<&str> = diags.iter().map(|d| d.summary.as_str()).collect();
        assert_eq!(
            summaries,
            [
                "Duplicate block name",
                "Extraneous label for block",
                "Duplicate task task_key"
            ]
        );
    }

    fn enum_schema() -> Schema {
        fn no_spaces(s: &str) -> Result<(), crate::provider::Rejection> {
            if s.contains(' ') {
                Err(crate::provider::Rejection::new("spaces are not allowed")
                    .hint("remove the spaces"))
            } else {
                Ok(())
            }
        }
        Schema::new()
            .attr(Attribute::optional("kind", AttrType::String).one_of(&["MANAGED", "EXTERNAL"]))
            .attr(
                Attribute::optional("tier", AttrType::String)
                    .one_of_any_case(&["CORE", "PRO"])
                    .normalize(crate::provider::Normalize::UpperCase),
            )
            .attr(Attribute::optional("code", AttrType::String).check(no_spaces))
            .block(BlockType::list(
                "rule",
                Schema::new().attr(
                    Attribute::optional("days", AttrType::List(Box::new(AttrType::String)))
                        .one_of(&["MONDAY", "TUESDAY"]),
                ),
            ))
    }

    fn decode_with(schema: &Schema, src: &str) -> (Decoded, Diagnostics) {
        let roots = R(HashMap::from([(
            "var".to_string(),
            Value::object(Object::from_iter([
                ("later".to_string(), Value::Unknown),
                ("kind".to_string(), Value::from("MANAGD")),
            ])),
        )]));
        let body: Body = src.parse().unwrap();
        let mut ev = Evaluator::new(&roots, std::path::Path::new("."));
        Decoder::new(&mut ev, FileId(0)).decode(&body, schema, Some(0..1))
    }

    #[test]
    fn values_outside_the_allowed_set_are_rejected_where_written() {
        let src = "kind = \"managed\"\ntier = \"pro\"\ncode = \"a b\"\nrule {\n  days = [\"MONDAY\", \"TUESDY\"]\n}\n";
        let (_, diags) = decode_with(&enum_schema(), src);
        let found: Vec<(&str, &str, Option<&str>)> = diags
            .iter()
            .map(|d| {
                let r = d.span.as_ref().unwrap().range.clone();
                (d.summary.as_str(), &src[r], d.hint.as_deref())
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "Invalid value for kind",
                    "\"managed\"",
                    Some("did you mean \"MANAGED\"?")
                ),
                (
                    "Invalid value for code",
                    "\"a b\"",
                    Some("remove the spaces")
                ),
                (
                    "Invalid value for days",
                    "\"TUESDY\"",
                    Some("did you mean \"TUESDAY\"?")
                ),
            ],
            "any-case values pass, exact ones and rules do not: {diags:?}"
        );
        assert!(
            diags.0[0]
                .detail
                .as_deref()
                .unwrap()
                .contains("expected one of \"MANAGED\" or \"EXTERNAL\""),
            "{diags:?}"
        );
        assert!(
            diags.0[2]
                .detail
                .as_deref()
                .unwrap()
                .starts_with("Element 1: \"TUESDY\" is not allowed")
        );
    }

    #[test]
    fn unknown_values_are_not_checked_and_known_variables_are() {
        let (d, diags) = decode_with(&enum_schema(), "kind = var.later\ntier = \"Pro\"\n");
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(d.value["kind"], Value::Unknown);
        let (_, diags) = decode_with(&enum_schema(), "kind = var.kind\n");
        assert_eq!(diags.0.len(), 1, "{diags:?}");
        assert_eq!(diags.0[0].summary, "Invalid value for kind");
    }
}
