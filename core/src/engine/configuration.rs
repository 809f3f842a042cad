//! The configuration as Terraform's JSON plan describes it (`configuration`): expressions,
//! not values — a literal as `constant_value`, anything else as the `references` it makes —
//! so policy tools written for `terraform show -json` find what a resource was written with
//! (a reference to another resource rather than its value). Made at plan time and kept with
//! the plan, so a saved plan shows the configuration it was made from.
//!
//! Nothing sensitive is written: an attribute the schema marks sensitive, or a sensitive
//! variable's default, appears as an empty expression.

use crate::lang::eval::{Evaluator, Literal};
use crate::lang::load::{Config, Resource};
use crate::lang::refs::{Ref, expr_refs};
use crate::plan::Mode;
use crate::plan::render_json::{sorted, sorted_json};
use crate::provider::{Registry, Schema};
use hcl_edit::expr::Expression;
use hcl_edit::structure::Body as HclBody;
use serde_json::{Map, Value as Json, json};
use std::collections::BTreeSet;

/// The `configuration` object, and the `relevant_attributes` its references make.
pub(super) fn describe(config: &Config, registry: &Registry) -> (Json, Vec<Json>) {
    let mut relevant = BTreeSet::new();
    let root = module(
        config,
        registry,
        Declared {
            resources: config
                .resources
                .values()
                .filter(|r| r.module.is_root())
                .collect(),
            outputs: config.outputs.values().collect(),
            variables: config.variables.values().collect(),
            calls: config.module_calls.values().collect(),
        },
        &mut relevant,
    );
    let described = json!({
        "provider_config": provider_config(config, registry, &mut relevant),
        "root_module": Json::Object(root),
    });
    let relevant = relevant
        .into_iter()
        .map(|(resource, attribute)| json!({ "resource": resource, "attribute": attribute }))
        .collect();
    (described, relevant)
}

/// What one module declares, as written (a module called many times is described once).
struct Declared<'c> {
    resources: Vec<&'c Resource>,
    outputs: Vec<&'c crate::lang::load::Output>,
    variables: Vec<&'c crate::lang::load::Variable>,
    calls: Vec<&'c crate::lang::load::ModuleCall>,
}

/// A module of `configuration`: its resources, outputs, variables and `module_calls`.
fn module(
    config: &Config,
    registry: &Registry,
    declared: Declared<'_>,
    relevant: &mut BTreeSet<(String, Vec<String>)>,
) -> Map<String, Json> {
    let mut resources = Vec::new();
    for r in declared.resources {
        resources.push(resource(config, registry, r, relevant));
    }
    let mut outputs = Map::new();
    for o in declared.outputs {
        let mut m = Map::new();
        m.insert(
            "expression".into(),
            expression(config, &o.value.expr, false, &[], relevant),
        );
        if o.sensitive {
            m.insert("sensitive".into(), json!(true));
        }
        if let Some(d) = &o.description {
            m.insert("description".into(), json!(d));
        }
        if !o.depends_on.is_empty() {
            let deps: Vec<&str> = o.depends_on.iter().map(|d| d.target.as_str()).collect();
            m.insert("depends_on".into(), json!(deps));
        }
        outputs.insert(o.name.clone(), Json::Object(m));
    }
    let mut variables = Map::new();
    for v in declared.variables {
        let mut m = Map::new();
        // A sensitive variable's default is a value like any other of it: not written.
        if let Some(d) = &v.default
            && !v.sensitive
            && let Some(value) = literal(config, &d.expr)
        {
            m.insert("default".into(), value);
        }
        if let Some(d) = &v.description {
            m.insert("description".into(), json!(d));
        }
        if v.sensitive {
            m.insert("sensitive".into(), json!(true));
        }
        variables.insert(v.name.clone(), Json::Object(m));
    }
    let mut calls = Map::new();
    for c in declared.calls {
        let mut m = Map::new();
        m.insert("source".into(), json!(c.source));
        let mut inputs = Map::new();
        for (name, (e, _)) in &c.inputs {
            inputs.insert(
                name.clone(),
                expression(config, &e.expr, false, &[], relevant),
            );
        }
        m.insert("expressions".into(), Json::Object(inputs));
        if let Some(e) = &c.count {
            m.insert(
                "count_expression".into(),
                expression(config, &e.expr, false, &[], relevant),
            );
        }
        if let Some(e) = &c.for_each {
            m.insert(
                "for_each_expression".into(),
                expression(config, &e.expr, false, &[], relevant),
            );
        }
        if !c.depends_on.is_empty() {
            let deps: Vec<&str> = c.depends_on.iter().map(|d| d.target.as_str()).collect();
            m.insert("depends_on".into(), json!(deps));
        }
        if let Some(body) = &c.module {
            let inner = Declared {
                resources: body.resources.values().collect(),
                outputs: body.outputs.values().collect(),
                variables: body.variables.values().collect(),
                calls: body.calls.values().collect(),
            };
            m.insert(
                "module".into(),
                Json::Object(module(config, registry, inner, relevant)),
            );
        }
        calls.insert(c.name.clone(), Json::Object(m));
    }
    let mut out = Map::new();
    if !outputs.is_empty() {
        out.insert("outputs".into(), Json::Object(outputs));
    }
    if !resources.is_empty() {
        out.insert("resources".into(), Json::Array(resources));
    }
    if !variables.is_empty() {
        out.insert("variables".into(), Json::Object(variables));
    }
    if !calls.is_empty() {
        out.insert("module_calls".into(), Json::Object(calls));
    }
    out
}

/// Every provider the configuration uses, by local name, with its source address and the
/// expressions of its block (sensitive settings left empty).
fn provider_config(
    config: &Config,
    registry: &Registry,
    relevant: &mut BTreeSet<(String, Vec<String>)>,
) -> Json {
    let mut out = Map::new();
    let used: BTreeSet<&str> = config
        .resources
        .values()
        .filter_map(|r| registry.provider_of(&r.type_name))
        .map(|p| p.name())
        .chain(config.providers.keys().map(String::as_str))
        .collect();
    for key in used {
        // An aliased configuration is keyed `NAME.ALIAS`, as Terraform keys it.
        let addr = crate::addrs::ProviderConfigAddr::parse(key);
        let provider = registry.provider(&addr.name);
        let mut m = Map::new();
        m.insert("name".into(), json!(addr.name));
        if let Some(a) = &addr.alias {
            m.insert("alias".into(), json!(a));
        }
        if let Some(p) = provider {
            m.insert("full_name".into(), json!(p.source_address()));
        }
        if let (Some(block), Some(p)) = (config.providers.get(key), provider) {
            m.insert(
                "expressions".into(),
                body(
                    config,
                    &block.body.body,
                    Some(p.config_schema()),
                    &[],
                    relevant,
                ),
            );
        }
        out.insert(key.to_string(), Json::Object(m));
    }
    Json::Object(out)
}

fn resource(
    config: &Config,
    registry: &Registry,
    r: &Resource,
    relevant: &mut BTreeSet<(String, Vec<String>)>,
) -> Json {
    let schema = match r.mode {
        Mode::Managed => registry.kind(&r.type_name).map(|k| k.schema()),
        Mode::Data => registry.data_source(&r.type_name).map(|d| d.schema()),
    };
    let provider = match &r.provider_ref {
        Some(written) => written.clone(),
        None => registry
            .provider_of(&r.type_name)
            .map(|p| p.name().to_string())
            .unwrap_or_else(|| r.type_name.split('_').next().unwrap_or("").to_string()),
    };
    let mut m = Map::new();
    m.insert("address".into(), json!(r.address()));
    m.insert(
        "mode".into(),
        json!(match r.mode {
            Mode::Managed => "managed",
            Mode::Data => "data",
        }),
    );
    m.insert("type".into(), json!(r.type_name));
    m.insert("name".into(), json!(r.name));
    m.insert("provider_config_key".into(), json!(provider));
    m.insert(
        "expressions".into(),
        body(config, &r.body.body, schema, &[], relevant),
    );
    m.insert("schema_version".into(), json!(0));
    if let Some(c) = &r.count {
        m.insert(
            "count_expression".into(),
            expression(config, &c.expr, false, &[], relevant),
        );
    }
    if let Some(f) = &r.for_each {
        m.insert(
            "for_each_expression".into(),
            expression(config, &f.expr, false, &[], relevant),
        );
    }
    if !r.depends_on.is_empty() {
        let deps: Vec<&str> = r.depends_on.iter().map(|d| d.target.as_str()).collect();
        m.insert("depends_on".into(), json!(deps));
    }
    Json::Object(m)
}

/// A block body's expressions: attributes by name, nested blocks as lists of their bodies'
/// expressions (a `dynamic` block as its `content`). `bound` are the names a `dynamic`
/// block's iterator binds, which are not references to anything.
fn body(
    config: &Config,
    b: &HclBody,
    schema: Option<&Schema>,
    bound: &[String],
    relevant: &mut BTreeSet<(String, Vec<String>)>,
) -> Json {
    let mut out = Map::new();
    for a in b.attributes() {
        let name = a.key.as_str();
        let sensitive = schema
            .and_then(|s| s.attribute(name))
            .is_some_and(|a| a.sensitive);
        out.insert(
            name.to_string(),
            expression(config, &a.value, sensitive, bound, relevant),
        );
    }
    for block in b.blocks() {
        let (name, inner, bound) = if block.ident.as_str() == "dynamic" {
            let Some(label) = block.labels.first().map(|l| l.as_str().to_string()) else {
                continue;
            };
            let iterator = block
                .body
                .get_attribute("iterator")
                .and_then(|a| match &a.value {
                    hcl_edit::expr::Expression::Variable(v) => Some(v.as_str().to_string()),
                    _ => None,
                })
                .unwrap_or_else(|| label.clone());
            let Some(content) = block.body.blocks().find(|c| c.ident.as_str() == "content") else {
                continue;
            };
            let mut bound = bound.to_vec();
            bound.push(iterator);
            (label, &content.body, bound)
        } else {
            (
                block.ident.as_str().to_string(),
                &block.body,
                bound.to_vec(),
            )
        };
        let nested = schema.and_then(|s| s.block_type(&name)).map(|t| &t.schema);
        let described = body(config, inner, nested, &bound, relevant);
        match out.entry(name).or_insert_with(|| Json::Array(Vec::new())) {
            Json::Array(list) => list.push(described),
            other => *other = Json::Array(vec![described]),
        }
    }
    Json::Object(sorted(out))
}

/// Terraform's expression representation: `constant_value` for a literal, otherwise the
/// references it makes; empty for a sensitive attribute.
fn expression(
    config: &Config,
    e: &Expression,
    sensitive: bool,
    bound: &[String],
    relevant: &mut BTreeSet<(String, Vec<String>)>,
) -> Json {
    if sensitive {
        return json!({});
    }
    let refs: Vec<Ref> = expr_refs(e)
        .into_iter()
        .filter(|r| !bound.contains(&r.root))
        .collect();
    if refs.is_empty() {
        return match literal(config, e) {
            Some(v) => json!({ "constant_value": v }),
            None => json!({}),
        };
    }
    let mut names: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !names.contains(&s) {
            names.push(s);
        }
    };
    for r in &refs {
        let (object, attrs) = object_of(r);
        if let Some(object) = &object
            && !attrs.is_empty()
        {
            relevant.insert((object.clone(), attrs.clone()));
        }
        let mut full = vec![r.root.clone()];
        full.extend(r.attrs.iter().cloned());
        push(full.join("."));
        if let Some(object) = object {
            push(object);
        }
    }
    json!({ "references": names })
}

/// The resource a reference reads (`TYPE.NAME` or `data.TYPE.NAME`) and the attribute path
/// it reads of it; `None` for variables, locals and the other roots.
fn object_of(r: &Ref) -> (Option<String>, Vec<String>) {
    const NOT_RESOURCES: &[&str] = &[
        "var",
        "local",
        "each",
        "count",
        "self",
        "path",
        "terraform",
        "brickform",
        "module",
    ];
    if r.root == "data" {
        return match r.attrs.as_slice() {
            [t, n, rest @ ..] => (Some(format!("data.{t}.{n}")), rest.to_vec()),
            _ => (None, Vec::new()),
        };
    }
    if NOT_RESOURCES.contains(&r.root.as_str()) {
        return (None, Vec::new());
    }
    match r.attrs.as_slice() {
        [n, rest @ ..] => (Some(format!("{}.{n}", r.root)), rest.to_vec()),
        _ => (None, Vec::new()),
    }
}

/// The value of an expression that refers to nothing, if it has one without evaluation
/// context (function calls on literals included) and is not made sensitive (`sensitive("…")`).
fn literal(config: &Config, e: &Expression) -> Option<Json> {
    let mut ev = Evaluator::new(&Literal::PLAIN, &config.dir);
    let v = ev.eval(e).ok()?;
    if ev.touched_sensitive || v.contains_unknown() {
        return None;
    }
    Some(sorted_json(v.to_json()))
}
