//! Values: every lookup is three-valued, so an unknown input never fires a rule.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tri<T> {
    /// Known only after apply.
    Unknown,
    /// Not set (null, missing, or an empty string).
    Absent,
    Known(T),
}

impl<T: Copy> Tri<T> {
    pub(super) fn known(self) -> Option<T> {
        match self {
            Tri::Known(v) => Some(v),
            _ => None,
        }
    }
    pub(super) fn is_absent(self) -> bool {
        matches!(self, Tri::Absent)
    }
    pub(super) fn is_known(self) -> bool {
        matches!(self, Tri::Known(_))
    }
}

pub(super) fn get<'a>(o: &'a Object, k: &str) -> Tri<&'a Value> {
    match o.get(k) {
        None | Some(Value::Null) => Tri::Absent,
        Some(Value::Unknown) => Tri::Unknown,
        Some(v) => Tri::Known(v),
    }
}

/// A string attribute; a blank string counts as absent, a value of another type as unknown
/// (the decoder has already reported type errors).
pub(super) fn text<'a>(o: &'a Object, k: &str) -> Tri<&'a str> {
    match get(o, k) {
        Tri::Known(Value::String(s)) if s.trim().is_empty() => Tri::Absent,
        Tri::Known(Value::String(s)) => Tri::Known(s),
        Tri::Known(_) | Tri::Unknown => Tri::Unknown,
        Tri::Absent => Tri::Absent,
    }
}

/// A single nested block.
pub(super) fn block<'a>(o: &'a Object, k: &str) -> Tri<&'a Object> {
    match get(o, k) {
        Tri::Known(Value::Object(b)) => Tri::Known(b),
        Tri::Known(Value::List(l)) if l.is_empty() => Tri::Absent,
        Tri::Known(Value::List(l)) if l.len() == 1 => match l.first() {
            Some(Value::Object(b)) => Tri::Known(b),
            _ => Tri::Unknown,
        },
        Tri::Absent => Tri::Absent,
        Tri::Known(_) | Tri::Unknown => Tri::Unknown,
    }
}

/// Repeated (labelled) blocks as (index, block); `None` when the list is unknown. Unknown
/// elements are skipped.
pub(super) fn blocks<'a>(o: &'a Object, k: &str) -> Option<Vec<(usize, &'a Object)>> {
    match o.get(k) {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::List(l)) => Some(
            l.iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_object().map(|b| (i, b)))
                .collect(),
        ),
        Some(_) => None,
    }
}

/// Whether an attribute or block is set to something non-empty; `None` when unknown.
pub(super) fn configured(o: &Object, k: &str) -> Option<bool> {
    match o.get(k) {
        None | Some(Value::Null) => Some(false),
        Some(Value::Unknown) => None,
        Some(v) => Some(non_empty(v)),
    }
}

pub(super) fn non_empty(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Bool(_) | Value::Number(_) | Value::Unknown => true,
    }
}

/// `Some(true)` when any is set, `Some(false)` when all are known and unset, else `None`.
pub(super) fn any_configured(o: &Object, keys: &[&str]) -> Option<bool> {
    let mut unknown = false;
    for k in keys {
        match configured(o, k) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    if unknown { None } else { Some(false) }
}

/// A key of a map attribute, compared case-insensitively (Spark reader options are).
pub(super) fn option_ci<'a>(o: &'a Object, map: &str, key: &str) -> Tri<&'a Value> {
    match get(o, map) {
        Tri::Known(Value::Object(m)) => match m.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
            None | Some((_, Value::Null)) => Tri::Absent,
            Some((_, Value::Unknown)) => Tri::Unknown,
            Some((_, v)) => Tri::Known(v),
        },
        Tri::Absent => Tri::Absent,
        Tri::Known(_) | Tri::Unknown => Tri::Unknown,
    }
}

/// A key of a map attribute, compared exactly (sdp-meta looks source details up by name).
pub(super) fn option<'a>(o: &'a Object, map: &str, key: &str) -> Tri<&'a Value> {
    match get(o, map) {
        Tri::Known(Value::Object(m)) => match m.get(key) {
            None | Some(Value::Null) => Tri::Absent,
            Some(Value::Unknown) => Tri::Unknown,
            Some(v) => Tri::Known(v),
        },
        Tri::Absent => Tri::Absent,
        Tri::Known(_) | Tri::Unknown => Tri::Unknown,
    }
}

pub(super) fn is_true(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => s.trim().eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// `readChangeFeed = "true"` in a layer's reader_options; `None` when unknown.
pub(super) fn reads_change_feed(layer: &Object) -> Option<bool> {
    match option_ci(layer, "reader_options", "readChangeFeed") {
        Tri::Known(v) => Some(is_true(v)),
        Tri::Absent => Some(false),
        Tri::Unknown => None,
    }
}

/// The strings of a list attribute (a string is split on commas); `None` when unknown.
pub(super) fn string_list<'a>(o: &'a Object, k: &str) -> Option<Vec<&'a str>> {
    match o.get(k) {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::String(s)) => Some(s.split(',').map(str::trim).collect()),
        Some(Value::List(l)) => l.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}
