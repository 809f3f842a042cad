//! Explicit type conversions. Null converts to null, as in Terraform, so `tostring(var.x)`
//! is safe on an optional variable.

use super::{
    Args, Fail, Outcome, Spec, make_set, parse_bool, parse_number, to_string_value,
    unify_primitives,
};
use crate::value::Value;

pub(super) static FUNCTIONS: &[Spec] = &[
    Spec::fixed("tobool", &["v"], tobool),
    Spec::fixed("tolist", &["v"], tolist).custom_unknowns(),
    Spec::fixed("tomap", &["v"], tomap).custom_unknowns(),
    Spec::fixed("tonumber", &["v"], tonumber),
    Spec::fixed("toset", &["v"], toset),
    Spec::fixed("tostring", &["v"], tostring),
];

fn cannot(a: &Args, to: &str) -> Fail {
    a.invalid(
        0,
        format_args!("cannot convert {} to {to}", a.get(0).type_name()),
    )
}

fn tostring(a: &Args) -> Outcome<Value> {
    match a.get(0) {
        Value::Null => Ok(Value::Null),
        v => to_string_value(v)
            .map(Value::String)
            .ok_or_else(|| cannot(a, "string")),
    }
}

fn tonumber(a: &Args) -> Outcome<Value> {
    match a.get(0) {
        Value::Null => Ok(Value::Null),
        Value::Number(n) => Ok(Value::Number(n.clone())),
        Value::String(s) => parse_number(s).map(Value::from_f64).ok_or_else(|| {
            a.invalid(0, format_args!("cannot convert {} to number; given string must be a decimal representation of a number", crate::value::quote(s)))
        }),
        _ => Err(cannot(a, "number")),
    }
}

fn tobool(a: &Args) -> Outcome<Value> {
    match a.get(0) {
        Value::Null => Ok(Value::Null),
        Value::Bool(b) => Ok(Value::Bool(*b)),
        Value::String(s) => parse_bool(s).map(Value::Bool).ok_or_else(|| {
            a.invalid(
                0,
                format_args!(
                    "cannot convert {} to bool; only the strings \"true\" or \"false\" are allowed",
                    crate::value::quote(s)
                ),
            )
        }),
        _ => Err(cannot(a, "bool")),
    }
}

/// Unification is skipped while elements are unknown: their types are not known yet.
fn unify_known(items: Vec<Value>) -> Vec<Value> {
    if items.iter().any(Value::contains_unknown) {
        items
    } else {
        unify_primitives(items)
    }
}

fn tolist(a: &Args) -> Outcome<Value> {
    match a.get(0) {
        Value::Null => Ok(Value::Null),
        Value::Unknown => Err(Fail::Unknown),
        Value::List(l) => Ok(Value::List(unify_known(l.clone()))),
        _ => Err(cannot(a, "list")),
    }
}

/// Sorted and without duplicates.
fn toset(a: &Args) -> Outcome<Value> {
    match a.get(0) {
        Value::Null => Ok(Value::Null),
        Value::List(l) => Ok(Value::List(make_set(l.iter().cloned())?)),
        _ => Err(cannot(a, "set")),
    }
}

fn tomap(a: &Args) -> Outcome<Value> {
    match a.get(0) {
        Value::Null => Ok(Value::Null),
        Value::Unknown => Err(Fail::Unknown),
        Value::Object(o) => {
            let (keys, values): (Vec<String>, Vec<Value>) =
                o.iter().map(|(k, v)| (k.clone(), v.clone())).unzip();
            Ok(Value::Object(
                keys.into_iter()
                    .zip(unify_known(values))
                    .collect::<crate::value::Object>()
                    .into(),
            ))
        }
        _ => Err(cannot(a, "map")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::value::Value;

    #[test]
    fn primitives() {
        assert_eq!(ok("tostring", vec![n(5)]), s("5"));
        assert_eq!(ok("tostring", vec![f(0.5)]), s("0.5"));
        assert_eq!(ok("tostring", vec![Value::Bool(false)]), s("false"));
        assert_eq!(ok("tostring", vec![Value::Null]), Value::Null);
        assert_eq!(
            err("tostring", vec![strs(&["a"])]).message,
            "Invalid value for \"v\" parameter: cannot convert list to string."
        );
        assert_eq!(ok("tonumber", vec![s("1.5")]), f(1.5));
        assert_eq!(ok("tonumber", vec![s("7")]), n(7));
        assert_eq!(ok("tonumber", vec![Value::Null]), Value::Null);
        assert!(
            err("tonumber", vec![s("no")])
                .message
                .contains("cannot convert \"no\" to number")
        );
        assert!(
            err("tonumber", vec![Value::Bool(true)])
                .message
                .contains("cannot convert bool to number")
        );
        assert_eq!(ok("tobool", vec![s("true")]), Value::Bool(true));
        assert!(
            err("tobool", vec![s("yes")])
                .message
                .contains("only the strings \"true\" or \"false\"")
        );
        assert_eq!(ok("tostring", vec![Value::Unknown]), Value::Unknown);
    }

    #[test]
    fn collections() {
        assert_eq!(
            ok("tolist", vec![list(vec![s("a"), n(1)])]),
            strs(&["a", "1"])
        );
        assert_eq!(
            ok("tolist", vec![list(vec![s("a"), Value::Unknown])]),
            list(vec![s("a"), Value::Unknown])
        );
        assert!(
            err("tolist", vec![obj(&[])])
                .message
                .contains("cannot convert object to list")
        );
        assert_eq!(
            ok("toset", vec![strs(&["c", "a", "b", "a"])]),
            strs(&["a", "b", "c"])
        );
        assert_eq!(
            ok("toset", vec![list(vec![s("a"), n(1)])]),
            strs(&["1", "a"])
        );
        assert_eq!(
            ok("toset", vec![list(vec![s("a"), Value::Unknown])]),
            Value::Unknown
        );
        assert!(
            err("toset", vec![s("a")])
                .message
                .contains("cannot convert string to set")
        );
        assert_eq!(
            ok("tomap", vec![obj(&[("a", n(1)), ("b", s("x"))])]),
            obj(&[("a", s("1")), ("b", s("x"))])
        );
        assert!(
            err("tomap", vec![strs(&[])])
                .message
                .contains("cannot convert list to map")
        );
    }
}
