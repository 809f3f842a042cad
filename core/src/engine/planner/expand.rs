//! `count` and `for_each`: the instances a resource block stands for.

use crate::engine::world::World;
use crate::lang::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::eval::Evaluator;
use crate::lang::load::Resource;
use crate::limits::MAX_INSTANCES;
use crate::plan::InstanceKey;
use crate::value::Value;
use std::collections::HashSet;

/// The instances a resource expands to, with their `each.value`.
pub(super) fn expand(
    r: &Resource,
    world: &World,
    base_dir: &std::path::Path,
    diags: &mut Diagnostics,
) -> Option<Vec<(Option<InstanceKey>, Option<Value>)>> {
    if let Some(c) = &r.count {
        let v = match Evaluator::new(world, base_dir).eval(&c.expr) {
            Ok(v) => v,
            Err(e) => {
                diags.push(e.to_diagnostic(c.file));
                return None;
            }
        };
        return match v {
            Value::Unknown => {
                diags.push(
                    Diagnostic::error("Invalid count argument")
                        .at(c.span())
                        .detail("The \"count\" value depends on resource attributes that cannot be determined until apply, so brickform cannot predict how many instances will be created. Use values known at plan time (variables, locals) for count."),
                );
                None
            }
            v => match v.as_i64() {
                Some(n) if n >= 0 && n as u64 > MAX_INSTANCES as u64 => {
                    diags.push(too_many_instances(c.span(), "count", n as u64));
                    None
                }
                Some(n) if n >= 0 => Some(
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
                    None
                }
            },
        };
    }
    if let Some(fe) = &r.for_each {
        let v = match Evaluator::new(world, base_dir).eval(&fe.expr) {
            Ok(v) => v,
            Err(e) => {
                diags.push(e.to_diagnostic(fe.file));
                return None;
            }
        };
        let bad = |diags: &mut Diagnostics, detail: String| {
            diags.push(
                Diagnostic::error("Invalid for_each argument")
                    .at(fe.span())
                    .detail(detail),
            );
            None
        };
        let n = match &v {
            Value::Object(o) => o.len(),
            Value::List(l) => l.len(),
            _ => 0,
        };
        if n > MAX_INSTANCES {
            diags.push(too_many_instances(fe.span(), "for_each", n as u64));
            return None;
        }
        return match v {
            Value::Object(o) => {
                Some(o.into_iter().map(|(k, v)| (Some(InstanceKey::Key(k)), Some(v))).collect())
            }
            Value::List(items) => {
                let mut out = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => out.push((Some(InstanceKey::Key(s.clone())), Some(Value::String(s)))),
                        Value::Unknown => {
                            return bad(diags, "The \"for_each\" set includes values derived from resource attributes that cannot be determined until apply, so brickform cannot determine the full set of keys that will identify the instances of this resource.".into());
                        }
                        other => {
                            return bad(diags, format!("The given \"for_each\" argument value is unsuitable: \"for_each\" supports maps and sets of strings, but you have provided a list containing a {}. Use toset() for a list of strings, or a for expression to build a map.", other.type_name()));
                        }
                    }
                }
                let mut seen = HashSet::new();
                out.retain(|(k, _)| seen.insert(k.clone()));
                Some(out)
            }
            Value::Unknown => bad(diags, "The \"for_each\" map includes keys derived from resource attributes that cannot be determined until apply, so brickform cannot determine the full set of keys that will identify the instances of this resource. Use keys known at plan time.".into()),
            Value::Null => bad(diags, "The given \"for_each\" argument value is null. A map, or set of strings, is allowed.".into()),
            other => bad(diags, format!("The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.", other.type_name())),
        };
    }
    Some(vec![(None, None)])
}

/// A `count` or `for_each` past [`MAX_INSTANCES`]: planning that many would exhaust memory
/// long before the service accepted them.
fn too_many_instances(at: Option<crate::lang::source::Span>, argument: &str, n: u64) -> Diagnostic {
    Diagnostic::error(format!("Invalid {argument} argument"))
        .at(at)
        .detail(format!(
            "The \"{argument}\" argument asks for {n} instances; one resource may have at most {MAX_INSTANCES}."
        ))
}
