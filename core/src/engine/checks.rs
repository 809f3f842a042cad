//! `check` blocks: each assert's condition evaluated against what the plan (or, after it,
//! the apply) knows. A condition that is false is a warning carrying its error message; a
//! condition known only after apply is left for the apply to report; nothing a check finds
//! stops a plan or an apply, as in Terraform.

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::engine::world::World;
use crate::lang::eval::Evaluator;
use crate::lang::load::{Assert, Check, Config};
use crate::value::Value;

/// One warning per assert that does not hold.
pub fn evaluate(config: &Config, world: &World) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for check in config.checks.values() {
        for assert in &check.asserts {
            if let Some(d) = failed(config, world, check, assert) {
                diags.push(d);
            }
        }
    }
    diags
}

fn failed(config: &Config, world: &World, check: &Check, assert: &Assert) -> Option<Diagnostic> {
    let at = assert.condition.span();
    let name = &check.name;
    let condition = Evaluator::new(world, &config.dir).eval(&assert.condition.expr);
    match condition {
        Ok(Value::Bool(true)) => None,
        Ok(v) if !v.is_wholly_known() => None,
        Ok(Value::Bool(false)) => Some(
            Diagnostic::warning("Check block assertion failed")
                .at(at)
                .detail(format!(
                    "check \"{name}\": {}",
                    message(config, world, assert)
                )),
        ),
        Ok(other) => Some(
            Diagnostic::warning("Invalid check condition")
                .at(at)
                .detail(format!(
                    "check \"{name}\": the condition must be true or false, not {}.",
                    other.type_name()
                )),
        ),
        Err(e) => {
            let mut d = e.to_diagnostic(assert.condition.file);
            d.severity = crate::diagnostics::Severity::Warning;
            d.summary = format!("Error in check \"{name}\": {}", d.summary);
            Some(d)
        }
    }
}

/// The assert's error message, as a string; not shown when it reads a sensitive value.
fn message(config: &Config, world: &World, assert: &Assert) -> String {
    let mut ev = Evaluator::new(world, &config.dir);
    let text = match ev.eval(&assert.error_message.expr) {
        Ok(Value::String(s)) => s,
        Ok(v) if v.is_wholly_known() => v.to_string(),
        Ok(_) => return "(the error message is known only after apply)".into(),
        Err(e) => return format!("(the error message cannot be evaluated: {})", e.summary),
    };
    if ev.touched_sensitive {
        return "(the error message reads sensitive values and is not shown)".into();
    }
    text
}
