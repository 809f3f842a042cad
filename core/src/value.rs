//! The values of the configuration language.
//!
//! `Unknown` is a first-class value: an attribute that only the server can fill (an id, a
//! generated path) evaluates to `Unknown` at plan time, and every operation on an unknown
//! yields an unknown, so "(known after apply)" is tracked by reference through expressions
//! instead of by string sentinels.

use indexmap::IndexMap;
use serde_json::Number;
use std::fmt;
use std::sync::Arc;

/// An object's attributes, in declaration order. Keyed with a fast seeded hash: a plan looks
/// attributes up by name millions of times (each field of each instance, on both sides of
/// the diff), and short names are where the standard hash costs the most.
pub type Object = IndexMap<String, Value, foldhash::fast::RandomState>;

#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    /// Lists, tuples and sets (a set is a list kept sorted and without duplicates).
    List(Vec<Value>),
    /// Maps and objects, shared: a map is more than twice the size of a string or a list,
    /// and held inline it set the size of every value, nulls included, of which a decoded
    /// configuration holds thousands (each block declares every attribute it has). Shared,
    /// a copy of a value copies none of its maps: the plan holds a create's configuration as
    /// decoded, as planned and as shown, and these are one. A map is copied only when one
    /// of its holders changes it ([`Arc::make_mut`]).
    Object(Arc<Object>),
    /// A value that will only be known after apply.
    Unknown,
}

impl Value {
    /// The value of map `o`.
    pub fn object(o: Object) -> Value {
        Value::Object(Arc::new(o))
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Object(_) => "object",
            Value::Unknown => "unknown",
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// True when this value or anything inside it is unknown.
    pub fn contains_unknown(&self) -> bool {
        match self {
            Value::Unknown => true,
            Value::List(l) => l.iter().any(Value::contains_unknown),
            Value::Object(o) => o.values().any(Value::contains_unknown),
            _ => false,
        }
    }

    /// True when the whole value is known (no unknown anywhere inside).
    pub fn is_wholly_known(&self) -> bool {
        !self.contains_unknown()
    }

    pub fn from_f64(f: f64) -> Value {
        if f.fract() == 0.0 && f.abs() < 9.0e15 {
            Value::Number(Number::from(f as i64))
        } else {
            Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or(Value::Null)
        }
    }

    pub fn from_i64(i: i64) -> Value {
        Value::Number(Number::from(i))
    }

    /// Look up an attribute path (object keys and list indexes written as decimal strings).
    pub fn get_path(&self, path: &[PathStep]) -> Option<&Value> {
        let mut cur = self;
        for step in path {
            cur = match (step, cur) {
                (PathStep::Key(k), Value::Object(o)) => o.get(k)?,
                (PathStep::Index(i), Value::List(l)) => l.get(*i)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// Converts to JSON. Unknown values become JSON null; callers that care check
    /// [`Value::contains_unknown`] first.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null | Value::Unknown => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::List(l) => serde_json::Value::Array(l.iter().map(Value::to_json).collect()),
            Value::Object(o) => {
                serde_json::Value::Object(o.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }

    pub fn from_json(j: &serde_json::Value) -> Value {
        match j {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.clone()),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(a) => Value::List(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect::<crate::value::Object>()
                    .into(),
            ),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::from_i64(i)
    }
}
impl From<Vec<Value>> for Value {
    fn from(l: Vec<Value>) -> Self {
        Value::List(l)
    }
}
impl From<Object> for Value {
    fn from(o: Object) -> Self {
        Value::object(o)
    }
}

/// One step of an attribute path: `tags.env` is `[Key("tags"), Key("env")]`, `task[0]` is
/// `[Key("task"), Index(0)]`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(untagged)]
pub enum PathStep {
    Key(String),
    Index(usize),
}

impl fmt::Display for PathStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathStep::Key(k) => write!(f, "{k}"),
            PathStep::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Renders a path as `a.b[0].c`.
pub fn path_string(path: &[PathStep]) -> String {
    let mut s = String::new();
    for (i, step) in path.iter().enumerate() {
        match step {
            PathStep::Key(k) => {
                if i > 0 {
                    s.push('.');
                }
                s.push_str(k);
            }
            PathStep::Index(n) => s.push_str(&format!("[{n}]")),
        }
    }
    s
}

impl fmt::Display for Value {
    /// HCL-like rendering, used in messages and plan output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => write!(f, "{n}"),
            Value::String(s) => write!(f, "{}", quote(s)),
            Value::Unknown => write!(f, "(known after apply)"),
            Value::List(l) => {
                write!(f, "[")?;
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Object(o) => {
                write!(f, "{{")?;
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{} = {v}", quote_key(k))?;
                }
                write!(f, "}}")
            }
        }
    }
}

/// Quotes a string the way HCL writes a string literal: the one quoter of string values and
/// instance keys, defined with the addresses in the state crate, which cannot depend on this one.
pub use crate::addrs::quote;

/// Object keys are written bare when they are identifiers, quoted otherwise.
pub fn quote_key(k: &str) -> String {
    let ident = !k.is_empty()
        && k.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ident { k.to_string() } else { quote(k) }
}

/// An object key in generated HCL source: bare when it is a plain identifier that is not a
/// keyword, quoted otherwise.
pub fn source_key(k: &str) -> String {
    let plain = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(k, "true" | "false" | "null" | "for" | "in" | "if");
    if plain {
        k.to_string()
    } else {
        source_string(k)
    }
}

/// A quoted HCL string literal for generated source, whose value is exactly `s`: escapes, and
/// `${` / `%{` doubled so they are not templates. ([`quote`] is for showing a value, as a
/// plan does, and leaves templates as they are.)
pub fn source_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Equality as Terraform sees it: numbers compare by value whatever their representation
/// (exactly when both are integers, so large ones are not rounded), lists and objects deeply.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match x.is_f64() || y.is_f64() {
            true => x.as_f64() == y.as_f64(),
            false => x == y,
        },
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

/// Renders a number in plain decimal (never exponent notation), as Terraform does.
pub fn number_to_string(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        // Rust's `Display` for f64 is the shortest round-tripping decimal, without exponent.
        Some(f) => f.to_string(),
        None => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value is as small as a string: a map inline would double it (see `Value::Object`).
    #[test]
    fn a_value_is_the_size_of_a_string_and_its_tag() {
        assert_eq!(
            std::mem::size_of::<Value>(),
            std::mem::size_of::<String>() + std::mem::size_of::<usize>()
        );
    }

    /// A copy of a value shares its maps, and a change to the copy leaves the original as it
    /// was (see `Value::Object`).
    #[test]
    fn a_copy_shares_its_maps_until_one_changes() {
        fn shared(v: &Value) -> &Arc<Object> {
            match v {
                Value::Object(o) => o,
                other => panic!("an object expected, not {other}"),
            }
        }
        let inner = Value::object(Object::from_iter([("x".to_string(), Value::from(1i64))]));
        let original = Value::object(Object::from_iter([("inner".to_string(), inner)]));
        let mut copy = original.clone();
        assert!(Arc::ptr_eq(shared(&original), shared(&copy)));
        assert!(Arc::ptr_eq(
            shared(&shared(&original)["inner"]),
            shared(&shared(&copy)["inner"])
        ));
        if let Value::Object(o) = &mut copy {
            Arc::make_mut(o).insert("y".to_string(), Value::from(2i64));
        }
        assert_eq!(original.as_object().map(|o| o.len()), Some(1));
        assert_eq!(copy.as_object().map(|o| o.len()), Some(2));
        // The map changed is copied; the maps inside it are still shared.
        assert!(!Arc::ptr_eq(shared(&original), shared(&copy)));
        assert!(Arc::ptr_eq(
            shared(&shared(&original)["inner"]),
            shared(&shared(&copy)["inner"])
        ));
    }

    #[test]
    fn unknown_is_found_deep_inside() {
        let v = Value::List(vec![
            Value::from("a"),
            Value::object(Object::from_iter([("x".to_string(), Value::Unknown)])),
        ]);
        assert!(v.contains_unknown());
        assert!(!Value::from("a").contains_unknown());
    }

    #[test]
    fn json_round_trip_keeps_integers() {
        let j = serde_json::json!({"a": 1, "b": [true, "x", 2.5], "c": null});
        assert_eq!(Value::from_json(&j).to_json(), j);
        assert_eq!(Value::from_f64(3.0).to_json(), serde_json::json!(3));
    }

    #[test]
    fn display_is_hcl_like() {
        let v = Value::object(Object::from_iter([
            ("name".to_string(), Value::from("x\"y")),
            ("my key".to_string(), Value::from(1i64)),
        ]));
        assert_eq!(v.to_string(), r#"{name = "x\"y", "my key" = 1}"#);
        assert_eq!(
            path_string(&[
                PathStep::Key("task".into()),
                PathStep::Index(0),
                PathStep::Key("k".into())
            ]),
            "task[0].k"
        );
    }
}
