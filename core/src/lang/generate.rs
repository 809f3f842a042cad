//! Configuration written from values rather than by a person: a resource block from the
//! attributes a kind read of a live object, laid out by the kind's schema, with chosen values
//! written as expressions (a reference to another resource, a variable) instead of their
//! literals. `brickform adopt` writes what it finds with it.
//!
//! What is written is what configures the object as it is: every attribute a configuration
//! may set that has a value, except one equal to the service's default; computed attributes
//! never. Planned against the object it was read from, it plans nothing.

use crate::provider::{
    AttrType, Attribute, BlockType, Nesting, Presence, Reference, ResourceKind, Schema,
};
use crate::value::{Object, PathStep, Value, path_string, source_key, source_string};
use std::collections::BTreeMap;

/// Values written as expressions, by their path (`step[0].runs.target_id`, as
/// [`path_string`] writes it).
pub type Exprs = BTreeMap<String, String>;

/// `resource "TYPE" "NAME" { … }`, formatted.
pub fn resource_block(
    type_name: &str,
    name: &str,
    schema: &Schema,
    values: &Object,
    exprs: &Exprs,
) -> String {
    let mut out = format!(
        "resource {} {} {{\n",
        source_string(type_name),
        source_string(name)
    );
    body(schema, values, exprs, &mut Vec::new(), 1, &mut out);
    out.push_str("}\n");
    formatted(out)
}

/// `import { to = ADDRESS  id = "ID" }`.
pub fn import_block(address: &str, id: &str) -> String {
    formatted(format!(
        "import {{\n  to = {address}\n  id = {}\n}}\n",
        source_string(id)
    ))
}

/// A sensitive variable with no default: a value the service never reads back (a password)
/// that the user supplies.
pub fn secret_variable(name: &str, type_expr: &str, description: &str) -> String {
    formatted(format!(
        "variable {} {{\n  type = {type_expr}\n  sensitive = true\n  description = {}\n}}\n",
        source_string(name),
        source_string(description)
    ))
}

/// Aligned as `brickform fmt` aligns; the text as built when it cannot be parsed (it always
/// can: every part is written by this module).
fn formatted(src: String) -> String {
    super::fmt::format_source(&src).unwrap_or(src)
}

fn body(
    schema: &Schema,
    values: &Object,
    exprs: &Exprs,
    path: &mut Vec<PathStep>,
    depth: usize,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    for a in schema.attributes.iter().filter(|a| a.can_configure()) {
        path.push(PathStep::Key(a.name.to_string()));
        let at = path_string(path);
        let v = values.get(a.name).unwrap_or(&Value::Null);
        if let Some(e) = exprs.get(&at) {
            out.push_str(&format!("{pad}{} = {e}\n", a.name));
        } else if !a.sensitive
            && v.is_wholly_known()
            && !v.is_null()
            && a.server_default.as_ref() != Some(v)
        {
            out.push_str(&format!("{pad}{} = ", a.name));
            literal(v, exprs, path, depth, out);
            out.push('\n');
        }
        path.pop();
    }
    for b in &schema.blocks {
        blocks(b, values.get(b.name), exprs, path, depth, out);
    }
}

fn blocks(
    b: &BlockType,
    v: Option<&Value>,
    exprs: &Exprs,
    path: &mut Vec<PathStep>,
    depth: usize,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    path.push(PathStep::Key(b.name.to_string()));
    let one = |o: &Object, path: &mut Vec<PathStep>, out: &mut String| {
        let mut inner = String::new();
        body(&b.schema, o, exprs, path, depth + 1, &mut inner);
        if inner.is_empty() {
            out.push_str(&format!("{pad}{} {{}}\n", b.name));
        } else {
            out.push_str(&format!("{pad}{} {{\n{inner}{pad}}}\n", b.name));
        }
    };
    match (&b.nesting, v) {
        // A block that sets nothing is the block left out.
        (Nesting::Single, Some(Value::Object(o))) if !sets_anything(&b.schema, o) => {}
        (Nesting::Single, Some(Value::Object(o))) => one(o, path, out),
        (Nesting::List | Nesting::Keyed(_), Some(Value::List(items))) => {
            for (i, item) in items.iter().enumerate() {
                if let Value::Object(o) = item {
                    path.push(PathStep::Index(i));
                    one(o, path, out);
                    path.pop();
                }
            }
        }
        _ => {}
    }
    path.pop();
}

/// A value as HCL source: collections of more than scalars over several lines.
fn literal(v: &Value, exprs: &Exprs, path: &mut Vec<PathStep>, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    match v {
        Value::String(s) => out.push_str(&source_string(s)),
        Value::Object(o) if o.is_empty() => out.push_str("{}"),
        Value::Object(o) => {
            out.push_str("{\n");
            for (k, inner) in o.iter() {
                path.push(PathStep::Key(k.clone()));
                out.push_str(&format!("{pad}  {} = ", source_key(k)));
                match exprs.get(&path_string(path)) {
                    Some(e) => out.push_str(e),
                    None => literal(inner, exprs, path, depth + 1, out),
                }
                out.push('\n');
                path.pop();
            }
            out.push_str(&format!("{pad}}}"));
        }
        Value::List(items) if items.iter().all(is_scalar) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                path.push(PathStep::Index(i));
                match exprs.get(&path_string(path)) {
                    Some(e) => out.push_str(e),
                    None => literal(item, exprs, path, depth, out),
                }
                path.pop();
            }
            out.push(']');
        }
        Value::List(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                path.push(PathStep::Index(i));
                out.push_str(&format!("{pad}  "));
                literal(item, exprs, path, depth + 1, out);
                out.push_str(",\n");
                path.pop();
            }
            out.push_str(&format!("{pad}]"));
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Whether a block's values set anything a configuration could.
/// Where an object's configuration holds a sensitive attribute, at any depth: every one with
/// a value, and every required one of the blocks present (its value the service does not
/// read back).
fn sensitive_sites<'s>(schema: &'s Schema, values: &Object) -> Vec<(Vec<PathStep>, &'s Attribute)> {
    fn walk<'s>(
        schema: &'s Schema,
        o: &Object,
        path: &mut Vec<PathStep>,
        out: &mut Vec<(Vec<PathStep>, &'s Attribute)>,
    ) {
        for a in schema
            .attributes
            .iter()
            .filter(|a| a.sensitive && a.can_configure())
        {
            let set = o.get(a.name).is_some_and(|v| !v.is_null());
            if set || a.presence == Presence::Required {
                path.push(PathStep::Key(a.name.to_string()));
                out.push((path.clone(), a));
                path.pop();
            }
        }
        for b in &schema.blocks {
            path.push(PathStep::Key(b.name.to_string()));
            match o.get(b.name) {
                Some(Value::Object(inner)) => walk(&b.schema, inner, path, out),
                Some(Value::List(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        if let Value::Object(inner) = item {
                            path.push(PathStep::Index(i));
                            walk(&b.schema, inner, path, out);
                            path.pop();
                        }
                    }
                }
                _ => {}
            }
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema, values, &mut Vec::new(), &mut out);
    out
}

/// A line of a `#` comment: what the service named (an object's name may hold a line break)
/// stays on the line, so it can never become configuration.
fn comment_text(line: &str) -> String {
    line.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn sets_anything(schema: &Schema, o: &Object) -> bool {
    schema
        .attributes
        .iter()
        .filter(|a| a.can_configure())
        .any(|a| {
            o.get(a.name)
                .is_some_and(|v| !v.is_null() && a.server_default.as_ref() != Some(v))
        })
        || schema.blocks.iter().any(|b| match o.get(b.name) {
            Some(Value::Object(inner)) => sets_anything(&b.schema, inner),
            Some(Value::List(items)) => !items.is_empty(),
            _ => false,
        })
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::List(_) | Value::Object(_))
}

/// One place a [`Reference`] points from: the path of the value, the value, and the name of
/// the container it is a name in, when the reference says it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub path: Vec<PathStep>,
    pub value: String,
    pub container: Option<String>,
}

/// Where `reference` points from in `values` (attributes shaped as a configuration: blocks
/// as objects or lists of objects). Only non-empty strings are sites.
pub fn reference_sites(values: &Object, reference: &Reference) -> Vec<Site> {
    let steps: Vec<&str> = reference.at.split('.').collect();
    let mut out = Vec::new();
    walk(values, &steps, reference, &mut Vec::new(), &mut out);
    out
}

fn walk(
    o: &Object,
    steps: &[&str],
    reference: &Reference,
    path: &mut Vec<PathStep>,
    out: &mut Vec<Site>,
) {
    let Some((first, rest)) = steps.split_first() else {
        return;
    };
    let container = || {
        reference
            .within
            .and_then(|c| o.get(c))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if *first == "*" {
        for (k, v) in o {
            if let (Value::String(s), true) = (v, rest.is_empty()) {
                path.push(PathStep::Key(k.clone()));
                push(path, s, container(), out);
                path.pop();
            }
        }
        return;
    }
    let Some(v) = o.get(*first) else {
        return;
    };
    path.push(PathStep::Key(first.to_string()));
    match v {
        Value::String(s) if rest.is_empty() => push(path, s, container(), out),
        // An id the service hands out as a number (a job's).
        Value::Number(n) if rest.is_empty() => push(path, &n.to_string(), container(), out),
        Value::Object(inner) => walk(inner, rest, reference, path, out),
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathStep::Index(i));
                match item {
                    Value::Object(inner) => walk(inner, rest, reference, path, out),
                    Value::String(s) if rest.is_empty() => push(path, s, container(), out),
                    _ => {}
                }
                path.pop();
            }
        }
        _ => {}
    }
    path.pop();
}

fn push(path: &[PathStep], value: &str, container: Option<String>, out: &mut Vec<Site>) {
    if !value.is_empty() {
        out.push(Site {
            path: path.to_vec(),
            value: value.to_string(),
            container,
        });
    }
}

/// Whether the value at `site` names the object `target_id` whose attributes are `target`.
/// Names (`attr = "name"`, and names within a container) are compared without case, as
/// services that take names so compare them; ids and paths exactly.
pub fn names(reference: &Reference, site: &Site, target_id: &str, target: &Object) -> bool {
    match (reference.within, &site.container) {
        (Some(_), Some(c)) => target_id.eq_ignore_ascii_case(&format!("{c}.{}", site.value)),
        (Some(_), None) => false,
        (None, _) => match target.get(reference.attr) {
            Some(Value::String(s)) if reference.attr == "name" => {
                s.eq_ignore_ascii_case(&site.value)
            }
            Some(Value::String(s)) => *s == site.value,
            Some(Value::Number(n)) => n.to_string() == site.value,
            _ => false,
        },
    }
}

/// What a site refers to in `target`: the whole of its `reference.attr` (an expression
/// `ADDRESS.ATTR`), or, for a [`Reference::prefix`], a path below it (a template of the
/// reference and the rest). `None` when it does not name it.
fn referring(
    reference: &Reference,
    site: &Site,
    address: &str,
    id: &str,
    target: &Object,
) -> Option<String> {
    if names(reference, site, id, target) {
        return Some(format!("{address}.{}", reference.attr));
    }
    let base = match target.get(reference.attr) {
        Some(Value::String(s)) if reference.prefix && !s.is_empty() => s.trim_end_matches('/'),
        _ => return None,
    };
    let rest = site
        .value
        .strip_prefix(base)
        .filter(|r| r.starts_with('/'))?;
    let quoted = source_string(rest);
    let inner = &quoted[1..quoted.len() - 1];
    Some(format!("\"${{{address}.{}}}{inner}\"", reference.attr))
}

/// A live object to write as configuration, with an `import` block that takes it under
/// management.
pub struct Adopted<'a> {
    pub kind: &'a dyn ResourceKind,
    /// What its resource name is made from (its name, a path's last part).
    pub label: String,
    /// The id its import block names.
    pub id: String,
    /// Its attributes, shaped as a configuration.
    pub values: Object,
    /// Lines written as a comment above it (why it was chosen).
    pub comment: Vec<String>,
}

/// An object the configuration manages already, which what is written may refer to.
pub struct Known {
    pub type_name: String,
    /// Its instance address (`TYPE.NAME`, `TYPE.NAME["key"]`).
    pub address: String,
    pub id: String,
    /// Its attributes as last applied and reported.
    pub values: Object,
}

/// Configuration written for adopted objects.
pub struct Written {
    pub text: String,
    /// The address of each object, in the order given.
    pub addresses: Vec<String>,
    /// Variables declared for values the service never reads back, by name.
    pub secrets: Vec<String>,
}

/// The import and resource blocks of `objects`, in the order given, each value that names
/// another of them (by its kind's [`Reference`]s) written as a reference to it. A value the
/// service never reads back that the kind requires (a password) becomes a sensitive variable.
/// Names are chosen so that no address or variable collides with one in `existing` (what
/// the configuration declares already: `TYPE.NAME`, `var.NAME`). A value naming an object of
/// `known` (one the configuration manages) refers to it too.
pub fn configuration(objects: &[Adopted], existing: &[String], known: &[Known]) -> Written {
    let mut taken: std::collections::HashSet<String> = existing.iter().cloned().collect();
    let names: Vec<String> = objects
        .iter()
        .map(|o| {
            free_name(
                &mut taken,
                &format!("{}.", o.kind.type_name()),
                &identifier(&o.label),
            )
        })
        .collect();
    let addresses: Vec<String> = objects
        .iter()
        .zip(&names)
        .map(|(o, n)| format!("{}.{n}", o.kind.type_name()))
        .collect();
    let mut text = String::new();
    let mut secrets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        let mut exprs = Exprs::new();
        for r in o.kind.references() {
            for site in reference_sites(&o.values, r) {
                let adopted = objects.iter().enumerate().find_map(|(j, t)| {
                    (j != i && r.to.contains(&t.kind.type_name()))
                        .then(|| referring(r, &site, &addresses[j], &t.id, &t.values))
                        .flatten()
                });
                let expr = adopted.or_else(|| {
                    known.iter().find_map(|k| {
                        r.to.contains(&k.type_name.as_str())
                            .then(|| referring(r, &site, &k.address, &k.id, &k.values))
                            .flatten()
                    })
                });
                if let Some(e) = expr {
                    exprs.insert(path_string(&site.path), e);
                }
            }
        }
        // A sensitive value is never written: what the service does not read back, and
        // what it does, both come from a sensitive variable the user gives.
        for (path, a) in sensitive_sites(o.kind.schema(), &o.values) {
            let at = path_string(&path);
            let mut base = names[i].clone();
            for step in &path {
                if let PathStep::Key(k) = step {
                    base.push('_');
                    base.push_str(k);
                }
            }
            let var = free_name(&mut taken, "var.", &base);
            exprs.insert(at.clone(), format!("var.{var}"));
            text.push_str(&secret_variable(
                &var,
                &type_expression(&a.ty),
                &format!("{at} of {}: sensitive, so not written here.", addresses[i]),
            ));
            text.push('\n');
            secrets.push(var);
        }
        for line in &o.comment {
            text.push_str(&format!("# {}\n", comment_text(line)));
        }
        text.push_str(&import_block(&addresses[i], &o.id));
        text.push_str(&resource_block(
            o.kind.type_name(),
            &names[i],
            o.kind.schema(),
            &o.values,
            &exprs,
        ));
        text.push('\n');
    }
    // Blocks are separated by one blank line; the file ends with its last block's line.
    while text.ends_with("\n\n") {
        text.pop();
    }
    Written {
        text,
        addresses,
        secrets,
    }
}

/// `base`, or `base_2`, `base_3`… : the first whose `PREFIX` + name is not in `taken`, which
/// then holds it.
fn free_name(taken: &mut std::collections::HashSet<String>, prefix: &str, base: &str) -> String {
    let mut name = base.to_string();
    let mut n = 2;
    while !taken.insert(format!("{prefix}{name}")) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

/// A resource name made from a label: lower case, runs of other characters as one `_`,
/// never starting with a digit.
pub fn identifier(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_').to_string();
    match out.chars().next() {
        None => "unnamed".into(),
        Some(c) if c.is_ascii_digit() => format!("_{out}"),
        Some(_) => out,
    }
}

fn type_expression(ty: &AttrType) -> String {
    match ty {
        AttrType::String => "string".into(),
        AttrType::Number => "number".into(),
        AttrType::Bool => "bool".into(),
        AttrType::List(t) => format!("list({})", type_expression(t)),
        AttrType::Set(t) => format!("set({})", type_expression(t)),
        AttrType::Map(t) => format!("map({})", type_expression(t)),
        AttrType::Any => "any".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{AttrType, Attribute};

    fn obj(j: serde_json::Value) -> Object {
        match Value::from_json(&j) {
            Value::Object(o) => std::sync::Arc::unwrap_or_clone(o),
            _ => unreachable!(),
        }
    }

    fn schema() -> Schema {
        Schema::new()
            .attr(Attribute::required("name", AttrType::String))
            .attr(Attribute::optional("comment", AttrType::String))
            .attr(Attribute::optional("read_only", AttrType::Bool).server_default(true))
            .attr(Attribute::optional(
                "tags",
                AttrType::Map(Box::new(AttrType::String)),
            ))
            .attr(Attribute::optional(
                "libs",
                AttrType::List(Box::new(AttrType::String)),
            ))
            .attr(Attribute::computed("id", AttrType::String))
            .block(BlockType::single(
                "cluster",
                Schema::new().attr(Attribute::optional("workers", AttrType::Number)),
            ))
            .block(BlockType::keyed(
                "task",
                "task_key",
                Schema::new()
                    .attr(Attribute::required("task_key", AttrType::String))
                    .attr(Attribute::optional(
                        "params",
                        AttrType::Map(Box::new(AttrType::String)),
                    ))
                    .block(BlockType::single(
                        "pipeline_task",
                        Schema::new().attr(Attribute::required("pipeline_id", AttrType::String)),
                    )),
            ))
    }

    #[test]
    fn what_configures_the_object_is_written_and_nothing_else() {
        let values = obj(serde_json::json!({
            "name": "a \"b\" ${x}",
            "comment": null,
            "read_only": true,
            "tags": {"Team": "data", "two words": "x"},
            "libs": ["a", "b"],
            "id": "123",
            "cluster": {"workers": 2},
            "task": [
                {"task_key": "one", "params": {"p": "1"}, "pipeline_task": {"pipeline_id": "abc"}},
                {"task_key": "two", "params": null, "pipeline_task": null}
            ]
        }));
        let mut exprs = Exprs::new();
        exprs.insert(
            "task[0].pipeline_task.pipeline_id".into(),
            "databricks_pipeline.p.id".into(),
        );
        exprs.insert("task[0].params.p".into(), "var.p".into());
        let text = resource_block("databricks_job", "j", &schema(), &values, &exprs);
        assert_eq!(
            text,
            r#"resource "databricks_job" "j" {
  name = "a \"b\" $${x}"
  tags = {
    Team        = "data"
    "two words" = "x"
  }
  libs = ["a", "b"]
  cluster {
    workers = 2
  }
  task {
    task_key = "one"
    params = {
      p = var.p
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.p.id
    }
  }
  task {
    task_key = "two"
  }
}
"#
        );
        // What was written is HCL that `fmt` takes.
        let parsed = crate::lang::fmt::format_source(&text);
        assert!(parsed.is_ok());
    }

    struct Kind(&'static str, Schema, &'static [Reference]);

    #[async_trait::async_trait]
    impl ResourceKind for Kind {
        fn type_name(&self) -> &'static str {
            self.0
        }
        fn schema(&self) -> &Schema {
            &self.1
        }
        fn references(&self) -> &'static [Reference] {
            self.2
        }
        async fn create(
            &self,
            _: &crate::provider::OpContext,
            _: &Object,
        ) -> crate::provider::ProviderResult<crate::provider::Remote> {
            unreachable!()
        }
        async fn read(
            &self,
            _: &crate::provider::OpContext,
            _: &str,
            _: &Object,
        ) -> crate::provider::ProviderResult<Option<crate::provider::Remote>> {
            unreachable!()
        }
        async fn update(
            &self,
            _: &crate::provider::OpContext,
            _: &str,
            _: &Object,
            _: &Object,
        ) -> crate::provider::ProviderResult<crate::provider::Remote> {
            unreachable!()
        }
        async fn delete(
            &self,
            _: &crate::provider::OpContext,
            _: &str,
            _: &Object,
        ) -> crate::provider::ProviderResult<()> {
            unreachable!()
        }
    }

    const SCHEMA_REFS: &[Reference] = &[Reference::to("catalog_name", &["t_catalog"], "name")];

    #[test]
    fn adopted_objects_refer_to_each_other_and_take_free_names() {
        let catalog = Kind(
            "t_catalog",
            Schema::new().attr(Attribute::required("name", AttrType::String)),
            &[],
        );
        let schema = Kind(
            "t_schema",
            Schema::new()
                .attr(Attribute::required("catalog_name", AttrType::String))
                .attr(Attribute::required("name", AttrType::String))
                .attr(Attribute::required("password", AttrType::String).sensitive()),
            SCHEMA_REFS,
        );
        let adopted = |kind: &'static Kind, label: &str, id: &str, v: serde_json::Value| Adopted {
            kind,
            label: label.into(),
            id: id.into(),
            values: obj(v),
            comment: vec!["why".into()],
        };
        let catalog: &'static Kind = Box::leak(Box::new(catalog));
        let schema: &'static Kind = Box::leak(Box::new(schema));
        let written = configuration(
            &[
                adopted(catalog, "Main", "main", serde_json::json!({"name": "main"})),
                adopted(
                    schema,
                    "raw",
                    "main.raw",
                    serde_json::json!({"catalog_name": "MAIN", "name": "raw"}),
                ),
                adopted(
                    schema,
                    "raw",
                    "other.raw",
                    serde_json::json!({"catalog_name": "other", "name": "raw"}),
                ),
            ],
            &["t_catalog.main".into(), "var.raw_2_password".into()],
            &[Known {
                type_name: "t_catalog".into(),
                address: "t_catalog.managed[\"x\"]".into(),
                id: "other".into(),
                values: obj(serde_json::json!({"name": "other"})),
            }],
        );
        assert_eq!(
            written.addresses,
            ["t_catalog.main_2", "t_schema.raw", "t_schema.raw_2"],
            "names the configuration has are not taken again"
        );
        let text = &written.text;
        assert!(
            text.contains("catalog_name = t_catalog.main_2.name"),
            "{text}"
        );
        assert!(
            text.contains("catalog_name = t_catalog.managed[\"x\"].name"),
            "a managed object is referred to: {text}"
        );
        assert!(text.contains("password     = var.raw_password"), "{text}");
        assert!(
            text.contains("password     = var.raw_2_password_2"),
            "{text}"
        );
        assert_eq!(written.secrets, ["raw_password", "raw_2_password_2"]);
        assert!(
            text.contains("# why\nimport {\n  to = t_catalog.main_2\n  id = \"main\"\n}"),
            "{text}"
        );
        assert!(crate::lang::fmt::format_source(text).is_ok());
    }

    #[test]
    fn sensitive_values_at_any_depth_become_variables_and_names_stay_in_comments() {
        let auth = Schema::new()
            .attr(Attribute::required("username", AttrType::String))
            .attr(Attribute::required("password", AttrType::String).sensitive());
        let kind: &'static Kind = Box::leak(Box::new(Kind(
            "t_job",
            Schema::new()
                .attr(Attribute::required("name", AttrType::String))
                .attr(Attribute::optional("key", AttrType::String).sensitive())
                .block(BlockType::keyed(
                    "task",
                    "task_key",
                    Schema::new()
                        .attr(Attribute::required("task_key", AttrType::String))
                        .block(BlockType::single("auth", auth)),
                )),
            &[],
        )));
        let written = configuration(
            &[Adopted {
                kind,
                label: "j".into(),
                id: "1".into(),
                // The service read back one password and not the other.
                values: obj(serde_json::json!({
                    "name": "x\nresource \"t_job\" \"evil\" {}",
                    "key": "s3cret-key",
                    "task": [
                        {"task_key": "a", "auth": {"username": "u", "password": "s3cret-pw"}},
                        {"task_key": "b", "auth": {"username": "v", "password": null}}
                    ]
                })),
                comment: vec!["t_job \"x\nresource \"t_job\" \"evil\" {}\" (1)".into()],
            }],
            &[],
            &[],
        );
        let text = &written.text;
        assert!(
            !text.contains("s3cret"),
            "a sensitive value is written: {text}"
        );
        assert_eq!(
            written.secrets,
            ["j_key", "j_task_auth_password", "j_task_auth_password_2"]
        );
        assert!(
            text.contains("password = var.j_task_auth_password\n"),
            "{text}"
        );
        assert!(
            text.contains("password = var.j_task_auth_password_2\n"),
            "{text}"
        );
        assert!(text.contains("key  = var.j_key\n"), "{text}");
        // The name is one comment line and one string: no second resource block.
        assert_eq!(text.matches("resource \"t_job\"").count(), 2, "{text}");
        assert!(
            text.contains("# t_job \"x resource \"t_job\" \"evil\" {}\" (1)\n"),
            "{text}"
        );
        assert!(crate::lang::fmt::format_source(text).is_ok());
        let parsed: hcl_edit::structure::Body = text.parse().unwrap();
        assert_eq!(
            parsed
                .into_iter()
                .filter_map(|s| s.into_block().ok())
                .filter(|b| b.ident.as_str() == "resource")
                .count(),
            1
        );
    }

    const PATH_REFS: &[Reference] = &[Reference::to("params.*", &["t_store"], "path").prefix()];

    #[test]
    fn a_path_below_another_objects_is_a_template_of_its_reference() {
        let store: &'static Kind = Box::leak(Box::new(Kind(
            "t_store",
            Schema::new()
                .attr(Attribute::required("name", AttrType::String))
                .attr(Attribute::computed("path", AttrType::String)),
            &[],
        )));
        let user: &'static Kind = Box::leak(Box::new(Kind(
            "t_user",
            Schema::new().attr(Attribute::optional(
                "params",
                AttrType::Map(Box::new(AttrType::String)),
            )),
            PATH_REFS,
        )));
        let written = configuration(
            &[
                Adopted {
                    kind: store,
                    label: "v".into(),
                    id: "c.s.v".into(),
                    values: obj(serde_json::json!({"name": "v", "path": "/V/c/s/v"})),
                    comment: vec![],
                },
                Adopted {
                    kind: user,
                    label: "u".into(),
                    id: "1".into(),
                    values: obj(serde_json::json!({"params": {
                        "whole": "/V/c/s/v",
                        "below": "/V/c/s/v/landing/${x}\"q\"/",
                        "beside": "/V/c/s/v2/landing",
                        "other": "landing"
                    }})),
                    comment: vec![],
                },
            ],
            &[],
            &[],
        );
        let text = &written.text;
        assert!(text.contains("whole  = t_store.v.path\n"), "{text}");
        assert!(
            text.contains("below  = \"${t_store.v.path}/landing/$${x}\\\"q\\\"/\"\n"),
            "{text}"
        );
        assert!(text.contains("beside = \"/V/c/s/v2/landing\"\n"), "{text}");
        assert!(text.contains("other  = \"landing\"\n"), "{text}");
        assert!(crate::lang::fmt::format_source(text).is_ok());
    }

    /// Decodes the body of the one block of `src` with `schema`, as a configuration is.
    fn decode_block(schema: &Schema, src: &str) -> Object {
        struct NoRoots;
        impl crate::lang::eval::Roots for NoRoots {
            fn root(&self, _: &str) -> Option<&Value> {
                None
            }
            fn is_sensitive(&self, _: &str, _: &[&str]) -> bool {
                false
            }
        }
        let body: hcl_edit::structure::Body = src.parse().expect("generated HCL parses");
        let block = body
            .into_iter()
            .find_map(|s| s.into_block().ok())
            .expect("a block");
        let mut ev = crate::lang::eval::Evaluator::new(&NoRoots, std::path::Path::new("."));
        let (decoded, diags) = crate::lang::decode::Decoder::new(&mut ev, crate::source::FileId(0))
            .decode(&block.body, schema, Some(0..1));
        assert!(diags.is_empty(), "{src}\n{diags:?}");
        decoded.value
    }

    fn scalar() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        prop_oneof![
            any::<String>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<bool>().prop_map(Value::Bool),
        ]
    }

    proptest::proptest! {
        /// Whatever the values (quotes, `${`, newlines, any key), what is written decodes
        /// back to them.
        #[test]
        fn what_is_written_decodes_back_to_the_values(
            name in proptest::prelude::any::<String>(),
            tags in proptest::collection::btree_map(proptest::prelude::any::<String>(), proptest::prelude::any::<String>(), 0..4),
            libs in proptest::collection::vec(proptest::prelude::any::<String>(), 0..4),
            free in proptest::collection::btree_map("[a-z]{1,5}", scalar(), 0..4),
            workers in proptest::prelude::any::<i64>(),
            keys in proptest::collection::btree_set("[a-z]{1,6}", 0..4),
        ) {
            let schema = schema().attr(Attribute::optional("free", AttrType::Any));
            let mut values = Object::default();
            values.insert("name".into(), Value::from(name));
            values.insert("tags".into(), Value::object(tags.into_iter().map(|(k, v)| (k, Value::from(v))).collect()));
            values.insert("libs".into(), Value::List(libs.into_iter().map(Value::from).collect()));
            values.insert("free".into(), Value::object(free.into_iter().collect()));
            values.insert("cluster".into(), Value::object(Object::from_iter([("workers".to_string(), Value::from(workers))])));
            values.insert("task".into(), Value::List(keys.into_iter().map(|k| Value::object(Object::from_iter([("task_key".to_string(), Value::from(k))]))).collect()));
            let text = resource_block("t", "n", &schema, &values, &Exprs::new());
            let back = decode_block(&schema, &text);
            for (k, v) in &values {
                let got = back.get(k).unwrap_or(&Value::Null);
                let got = match (k.as_str(), got) {
                    ("task", Value::List(items)) => Value::List(items.iter().map(|i| match i {
                        Value::Object(o) => Value::object(o.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect()),
                        other => other.clone(),
                    }).collect()),
                    _ => got.clone(),
                };
                proptest::prop_assert!(crate::value::values_equal(&got, v), "{k}: {got:?} != {v:?}\n{text}");
            }
        }
    }

    #[test]
    fn identifiers_are_made_from_any_label() {
        for (label, ident) in [
            ("sdp-meta-lfc-bronze-a1", "sdp_meta_lfc_bronze_a1"),
            ("Sales.Report (2024)", "sales_report_2024"),
            ("2024_sales", "_2024_sales"),
            ("--", "unnamed"),
            ("über", "ber"),
        ] {
            assert_eq!(identifier(label), ident, "{label}");
        }
    }

    #[test]
    fn reference_sites_walk_blocks_lists_and_maps() {
        let values = obj(serde_json::json!({
            "catalog": "c",
            "schema": "s",
            "task": [
                {"pipeline_task": {"pipeline_id": "p1"}, "base_parameters": {"a": "x", "b": ""}},
                {"pipeline_task": null},
                {"pipeline_task": {"pipeline_id": "p2"}}
            ]
        }));
        let sites = reference_sites(
            &values,
            &Reference::to("task.pipeline_task.pipeline_id", &["p"], "id"),
        );
        let paths: Vec<String> = sites.iter().map(|s| path_string(&s.path)).collect();
        assert_eq!(
            paths,
            [
                "task[0].pipeline_task.pipeline_id",
                "task[2].pipeline_task.pipeline_id"
            ]
        );
        let params = reference_sites(
            &values,
            &Reference::to("task.base_parameters.*", &["j"], "id"),
        );
        assert_eq!(params.len(), 1, "empty strings are no site");
        assert_eq!(path_string(&params[0].path), "task[0].base_parameters.a");
        let within = reference_sites(
            &values,
            &Reference::to("schema", &["s"], "name").within("catalog"),
        );
        assert_eq!(within[0].container.as_deref(), Some("c"));
        assert_eq!(within[0].value, "s");
    }
}
