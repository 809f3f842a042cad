//! The named values of a configuration, evaluated into the world in the graph's order by
//! both plan and apply: locals, the input variables a module call sets, and the outputs a
//! module gives its caller. (The root's variables are resolved before anything else, and
//! its outputs are the plan's.)

use super::world::World;
use crate::addrs::ConfigNode;
use crate::diagnostics::Diagnostics;
use crate::lang::eval::Evaluator;
use crate::lang::load::{Config, scoped_key};
use crate::lang::repetition::bind_instance;
use crate::value::Value;

/// Evaluates `id` into `world` when it is one of these values; what fails is reported and
/// leaves the value unknown.
pub(crate) fn evaluate(world: &mut World, config: &Config, id: &ConfigNode) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let dir = &config.dir;
    match id {
        ConfigNode::Local(s) => {
            if let Some(l) = config.local(s)
                && let Err(e) = world.evaluate_local(&s.module, &s.name, &l.expr.expr, dir)
            {
                diags.push(e.to_diagnostic(l.expr.file));
            }
        }
        ConfigNode::Variable(s) if !s.module.is_root() => {
            let Some(v) = config.module_variables.get(&scoped_key(&s.module, &s.name)) else {
                return diags;
            };
            let caller = s.module.parent().map(|(p, _)| p).unwrap_or_default();
            let instance = config.module_instances.get(&s.module);
            let mut sensitive = v.decl.sensitive;
            let raw = v.value.as_ref().map(|e| {
                let at = world.at(&caller);
                let mut ev = Evaluator::new(&at, dir);
                match instance {
                    // One instance stands for all of a call whose count or for_each is not
                    // known yet (validate without variables): its key is unknown too.
                    Some(i) if i.unknown_expansion => {
                        let unknown = |names: &[&str]| {
                            Value::Object(
                                names
                                    .iter()
                                    .map(|n| (n.to_string(), Value::Unknown))
                                    .collect::<crate::value::Object>()
                                    .into(),
                            )
                        };
                        if i.has_count {
                            ev.bind("count", unknown(&["index"]));
                        }
                        if i.has_for_each {
                            ev.bind("each", unknown(&["key", "value"]));
                        }
                    }
                    _ => {
                        let key = s.module.0.last().and_then(|step| step.key.as_ref());
                        bind_instance(&mut ev, key, instance.and_then(|i| i.each_value.as_ref()));
                    }
                }
                let out = match ev.eval(&e.expr) {
                    Ok(v) => v,
                    Err(err) => {
                        diags.push(err.to_diagnostic(e.file));
                        Value::Unknown
                    }
                };
                sensitive |= ev.touched_sensitive;
                out
            });
            let value = super::inputs::module_variable_value(
                &s.name,
                &v.decl,
                raw,
                v.value_span.clone(),
                dir,
                &mut diags,
            );
            world.set_var(&s.module, &s.name, value, sensitive);
        }
        ConfigNode::Output(s) if !s.module.is_root() => {
            let Some(o) = config.output(s) else {
                return diags;
            };
            let at = world.at(&s.module);
            let mut ev = Evaluator::new(&at, dir);
            let value = match ev.eval(&o.value.expr) {
                Ok(v) => v,
                Err(err) => {
                    diags.push(err.to_diagnostic(o.value.file));
                    Value::Unknown
                }
            };
            let sensitive = o.sensitive || ev.touched_sensitive;
            world.set_output(&s.module, &s.name, value, sensitive);
        }
        _ => {}
    }
    diags
}

/// Whether `id` is one of the values [`evaluate`] sets.
pub(crate) fn is_value(id: &ConfigNode) -> bool {
    match id {
        ConfigNode::Local(_) => true,
        ConfigNode::Variable(s) | ConfigNode::Output(s) => !s.module.is_root(),
        ConfigNode::Resource(_) => false,
    }
}
