//! `count` and `for_each`: the instances a block (a resource, a data source, a module call)
//! stands for.

use super::eval::{Evaluator, Roots};
use super::load::Expr;
use crate::addrs::InstanceKey;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::limits::MAX_INSTANCES;
use crate::value::{Object, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// The instances of a block, with their `each.value`.
pub type Instances = Vec<(Option<InstanceKey>, Option<Value>)>;

/// What a block's `count` or `for_each` makes of it.
pub enum Expansion {
    Instances(Instances),
    /// The value is not known yet; the message says why that stops a plan.
    Unknown(Diagnostic),
    /// The value is invalid (reported).
    Invalid,
}

/// The instances `count` or `for_each` (at most one of them is set) stand for, evaluated
/// against `roots`.
pub fn expansion(
    count: Option<&Expr>,
    for_each: Option<&Expr>,
    roots: &dyn Roots,
    base_dir: &std::path::Path,
    diags: &mut Diagnostics,
) -> Expansion {
    if let Some(c) = count {
        let v = match Evaluator::new(roots, base_dir).eval(&c.expr) {
            Ok(v) => v,
            Err(e) => {
                diags.push(e.to_diagnostic(c.file));
                return Expansion::Invalid;
            }
        };
        return match v {
            Value::Unknown => Expansion::Unknown(
                Diagnostic::error("Invalid count argument")
                    .at(c.span())
                    .detail("The \"count\" value depends on resource attributes that cannot be determined until apply, so brickform cannot predict how many instances will be created. Use values known at plan time (variables, locals) for count.")
                    .hint("apply the resources the count depends on first (`apply --target ADDRESS`), then apply again to converge"),
            ),
            v => match v.as_i64() {
                Some(n) if n >= 0 && n as u64 > MAX_INSTANCES as u64 => {
                    diags.push(too_many_instances(c.span(), "count", n as u64));
                    Expansion::Invalid
                }
                Some(n) if n >= 0 => Expansion::Instances(
                    (0..n as usize)
                        .map(|i| (Some(InstanceKey::Index(i)), None))
                        .collect(),
                ),
                _ => {
                    diags.push(
                        Diagnostic::error("Invalid count argument")
                            .at(c.span())
                            .detail(format!("The given \"count\" argument value is unsuitable: must be a whole number greater than or equal to zero, got {v}.")),
                    );
                    Expansion::Invalid
                }
            },
        };
    }
    if let Some(fe) = for_each {
        let mut ev = Evaluator::new(roots, base_dir);
        let v = match ev.eval(&fe.expr) {
            Ok(v) => v,
            Err(e) => {
                diags.push(e.to_diagnostic(fe.file));
                return Expansion::Invalid;
            }
        };
        if ev.touched_sensitive {
            // The keys name the instances: they are shown in every plan, kept in state and
            // sent in the ownership tag of what the instance makes. `each.value` is not
            // marked sensitive when read, so a map with a secret among its values is refused
            // too (stricter than Terraform, which marks it): nothing reaches a plan unmarked.
            diags.push(
                Diagnostic::error("Invalid for_each argument")
                    .at(fe.span())
                    .detail("Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments. If used, the sensitive value could be exposed as a resource instance key or through each.value: in plans, in state, and in the ownership tag brickform puts on the objects it makes.")
                    .hint("key the instances by something that is not secret (a name) and read the secret in the body (var.NAME, or a map indexed by each.key); if what for_each reads is not secret, say so with nonsensitive()"),
            );
            return Expansion::Invalid;
        }
        let bad = |diags: &mut Diagnostics, detail: String| {
            diags.push(
                Diagnostic::error("Invalid for_each argument")
                    .at(fe.span())
                    .detail(detail),
            );
            Expansion::Invalid
        };
        let unknown = |detail: &str| {
            Expansion::Unknown(
                Diagnostic::error("Invalid for_each argument")
                    .at(fe.span())
                    .detail(detail.to_string())
                    .hint(TWO_STEP_HINT),
            )
        };
        let n = match &v {
            Value::Object(o) => o.len(),
            Value::List(l) => l.len(),
            _ => 0,
        };
        if n > MAX_INSTANCES {
            diags.push(too_many_instances(fe.span(), "for_each", n as u64));
            return Expansion::Invalid;
        }
        return match v {
            Value::Object(o) => Expansion::Instances(
                Arc::unwrap_or_clone(o).into_iter()
                    .map(|(k, v)| (Some(InstanceKey::Key(k)), Some(v)))
                    .collect(),
            ),
            Value::List(items) => {
                let mut out = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => out.push((Some(InstanceKey::Key(s.clone())), Some(Value::String(s)))),
                        Value::Unknown => {
                            return unknown("The \"for_each\" set includes values derived from resource attributes that cannot be determined until apply, so brickform cannot determine the full set of keys that will identify the instances of this resource.");
                        }
                        other => {
                            return bad(diags, format!("The given \"for_each\" argument value is unsuitable: \"for_each\" supports maps and sets of strings, but you have provided a list containing a {}. Use toset() for a list of strings, or a for expression to build a map.", other.type_name()));
                        }
                    }
                }
                let mut seen = HashSet::new();
                out.retain(|(k, _)| seen.insert(k.clone()));
                Expansion::Instances(out)
            }
            Value::Unknown => unknown("The \"for_each\" map includes keys derived from resource attributes that cannot be determined until apply, so brickform cannot determine the full set of keys that will identify the instances of this resource."),
            Value::Null => bad(diags, "The given \"for_each\" argument value is null. A map, or set of strings, is allowed.".into()),
            other => bad(diags, format!("The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.", other.type_name())),
        };
    }
    Expansion::Instances(vec![(None, None)])
}

/// How to converge when the keys come from what only an apply makes, as Terraform advises.
const TWO_STEP_HINT: &str = "keep the keys in the configuration and put apply-time results only in the values; or apply the resources the keys depend on first (`apply --target ADDRESS`), then apply again to converge";

/// A `count` or `for_each` past [`MAX_INSTANCES`]: planning that many would exhaust memory
/// long before the service accepted them.
fn too_many_instances(at: Option<crate::source::Span>, argument: &str, n: u64) -> Diagnostic {
    Diagnostic::error(format!("Invalid {argument} argument"))
        .at(at)
        .detail(format!(
            "The \"{argument}\" argument asks for {n} instances; one resource may have at most {MAX_INSTANCES}."
        ))
}

/// Binds what an instance's expressions see of its key: `count.index`, or `each.key` and
/// `each.value`.
pub fn bind_instance(
    ev: &mut Evaluator<'_>,
    key: Option<&InstanceKey>,
    each_value: Option<&Value>,
) {
    match key {
        Some(InstanceKey::Index(i)) => ev.bind(
            "count",
            Value::object(Object::from_iter([(
                "index".to_string(),
                Value::from_i64(*i as i64),
            )])),
        ),
        Some(InstanceKey::Key(k)) => ev.bind(
            "each",
            Value::object(Object::from_iter([
                ("key".to_string(), Value::from(k.as_str())),
                (
                    "value".to_string(),
                    each_value.cloned().unwrap_or(Value::Null),
                ),
            ])),
        ),
        None => {}
    }
}
