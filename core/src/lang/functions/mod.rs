//! The standard library of functions.
//!
//! Semantics and messages follow Terraform's (go-cty's) functions, so configurations and
//! habits carry over. `try`, `can` and `templatefile` are not here: they need lazy
//! evaluation of their arguments, which only the evaluator can do.
//!
//! Each family lives in its own file and exports a table of [`Spec`]s; this module owns the
//! registry, arity checking, unknown propagation and the argument conversions every
//! family shares.

mod collections;
mod encoding;
mod files;
mod format;
mod hashing;
mod numeric;
mod strings;
mod types;

pub use files::glob_pattern;

use crate::value::{Object, Value, number_to_string, values_equal};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

/// What functions may depend on besides their arguments.
pub struct FunctionContext<'a> {
    /// The directory relative file paths are resolved against (the configuration directory).
    pub base_dir: &'a Path,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct FunctionError {
    pub message: String,
    /// Index of the offending argument, so the diagnostic can point at it.
    pub arg: Option<usize>,
}

/// Calls the standard library function `name`.
///
/// Unless a function can give an exact answer anyway, an argument containing an unknown
/// value makes the result unknown.
pub fn call(name: &str, args: &[Value], ctx: &FunctionContext) -> Result<Value, FunctionError> {
    let Some(spec) = REGISTRY.get(name) else {
        return Err(FunctionError {
            message: format!("There is no function named \"{name}\"."),
            arg: None,
        });
    };
    spec.check_arity(args.len())?;
    if spec.unknowns == Unknowns::Propagate && args.iter().any(Value::contains_unknown) {
        return Ok(Value::Unknown);
    }
    let a = Args {
        spec,
        values: args,
        ctx,
    };
    match (spec.imp)(&a) {
        Ok(v) => Ok(v),
        Err(Fail::Unknown) => Ok(Value::Unknown),
        Err(Fail::Error(e)) => Err(e),
    }
}

pub fn exists(name: &str) -> bool {
    REGISTRY.contains_key(name)
}

/// Every function name, sorted.
pub fn names() -> &'static [&'static str] {
    &NAMES
}

/// Every family of functions, with what it is called in the language reference.
static FAMILIES: &[(&str, &[Spec])] = &[
    ("Collections", collections::FUNCTIONS),
    ("Encoding", encoding::FUNCTIONS),
    ("Files", files::FUNCTIONS),
    ("Formatting", format::FUNCTIONS),
    ("Hashing", hashing::FUNCTIONS),
    ("Numbers", numeric::FUNCTIONS),
    ("Strings", strings::FUNCTIONS),
    ("Types and conversion", types::FUNCTIONS),
];

static REGISTRY: LazyLock<HashMap<&'static str, &'static Spec>> = LazyLock::new(|| {
    FAMILIES
        .iter()
        .flat_map(|(_, f)| f.iter())
        .map(|s| (s.name, s))
        .collect()
});

static NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut names: Vec<_> = REGISTRY.keys().copied().collect();
    names.sort_unstable();
    names
});

/// How a function treats unknown arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unknowns {
    /// Any unknown anywhere in the arguments makes the result unknown.
    Propagate,
    /// The function inspects unknowns itself, because it can sometimes still be exact.
    Custom,
}

type Impl = fn(&Args) -> Outcome<Value>;

/// One function's signature and implementation.
pub(super) struct Spec {
    name: &'static str,
    /// Parameter names, for messages; arguments past the end take the last name (the
    /// variadic parameter).
    params: &'static [&'static str],
    min: usize,
    max: Option<usize>,
    unknowns: Unknowns,
    imp: Impl,
}

impl Spec {
    /// A function taking exactly `params.len()` arguments.
    pub(super) const fn fixed(
        name: &'static str,
        params: &'static [&'static str],
        imp: Impl,
    ) -> Self {
        Spec {
            name,
            params,
            min: params.len(),
            max: Some(params.len()),
            unknowns: Unknowns::Propagate,
            imp,
        }
    }

    /// A function taking between `min` and `max` arguments (`None`: no upper bound).
    pub(super) const fn range(
        name: &'static str,
        params: &'static [&'static str],
        min: usize,
        max: Option<usize>,
        imp: Impl,
    ) -> Self {
        Spec {
            name,
            params,
            min,
            max,
            unknowns: Unknowns::Propagate,
            imp,
        }
    }

    /// Marks the function as handling unknown arguments itself.
    pub(super) const fn custom_unknowns(mut self) -> Self {
        self.unknowns = Unknowns::Custom;
        self
    }

    fn check_arity(&self, got: usize) -> Result<(), FunctionError> {
        let ok = got >= self.min && self.max.is_none_or(|m| got <= m);
        if ok {
            return Ok(());
        }
        let expected = match self.max {
            Some(max) if max == self.min => plural(max, "argument"),
            Some(max) if max == self.min + 1 => format!("{} or {max} arguments", self.min),
            Some(max) => format!("{} to {max} arguments", self.min),
            None => format!("at least {}", plural(self.min, "argument")),
        };
        Err(FunctionError {
            message: format!("Function \"{}\" expects {expected}, got {got}.", self.name),
            arg: if got > self.min { self.max } else { None },
        })
    }

    fn param_name(&self, i: usize) -> &'static str {
        self.params
            .get(i)
            .or(self.params.last())
            .copied()
            .unwrap_or("arg")
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Why an implementation stopped early: either the answer depends on an unknown value, or
/// the call is invalid.
pub(super) enum Fail {
    Unknown,
    Error(FunctionError),
}

impl From<FunctionError> for Fail {
    fn from(e: FunctionError) -> Self {
        Fail::Error(e)
    }
}

pub(super) type Outcome<T> = Result<T, Fail>;

/// A call's arguments, with accessors that convert the way Terraform does (a number is
/// accepted where a string is expected, `"true"` where a bool is) and report errors
/// against the right parameter.
pub(super) struct Args<'a> {
    spec: &'a Spec,
    values: &'a [Value],
    pub(super) ctx: &'a FunctionContext<'a>,
}

impl<'a> Args<'a> {
    pub(super) fn len(&self) -> usize {
        self.values.len()
    }

    pub(super) fn all(&self) -> &'a [Value] {
        self.values
    }

    pub(super) fn get(&self, i: usize) -> &'a Value {
        // Arity is checked before any implementation runs, so a missing index is a bug in
        // an optional-parameter implementation; Null keeps that from panicking.
        self.values.get(i).unwrap_or(&Value::Null)
    }

    /// An error about argument `i`: `Invalid value for "str" parameter: <reason>.`
    pub(super) fn invalid(&self, i: usize, reason: impl std::fmt::Display) -> Fail {
        Fail::Error(FunctionError {
            message: format!(
                "Invalid value for \"{}\" parameter: {reason}.",
                self.spec.param_name(i)
            ),
            arg: Some(i),
        })
    }

    /// An error about the call as a whole.
    pub(super) fn failed(&self, reason: impl std::fmt::Display) -> Fail {
        Fail::Error(FunctionError {
            message: format!("Call to function \"{}\" failed: {reason}.", self.spec.name),
            arg: None,
        })
    }

    /// A string of `len` bytes stays within [`crate::limits::MAX_STRING_BYTES`]; checked
    /// before building one whose size the arguments multiply.
    pub(super) fn string_fits(&self, len: usize) -> Outcome<()> {
        crate::limits::check_string_len(len).map_err(|why| self.failed(why))
    }

    /// A collection of `len` elements stays within
    /// [`crate::limits::MAX_COLLECTION_ELEMENTS`]; checked before building it.
    pub(super) fn collection_fits(&self, len: usize) -> Outcome<()> {
        crate::limits::check_collection_len(len).map_err(|why| self.failed(why))
    }

    /// Argument `i`, required to be known and non-null.
    pub(super) fn known(&self, i: usize) -> Outcome<&'a Value> {
        match self.get(i) {
            Value::Unknown => Err(Fail::Unknown),
            Value::Null => Err(self.invalid(i, "argument must not be null")),
            v => Ok(v),
        }
    }

    fn wrong_type(&self, i: usize, wanted: &str) -> Fail {
        self.invalid(
            i,
            format_args!("{wanted} required, got {}", self.get(i).type_name()),
        )
    }

    pub(super) fn string(&self, i: usize) -> Outcome<String> {
        let v = self.known(i)?;
        to_string_value(v).ok_or_else(|| self.wrong_type(i, "string"))
    }

    pub(super) fn number(&self, i: usize) -> Outcome<f64> {
        let v = self.known(i)?;
        match v {
            Value::Number(n) => n.as_f64().ok_or_else(|| self.invalid(i, "number out of range")),
            Value::String(s) => parse_number(s).ok_or_else(|| {
                self.invalid(
                    i,
                    format_args!(
                        "cannot convert {} to number; given string must be a decimal representation of a number",
                        crate::value::quote(s)
                    ),
                )
            }),
            _ => Err(self.wrong_type(i, "number")),
        }
    }

    /// A number that must be a whole number (an index, a count).
    pub(super) fn integer(&self, i: usize) -> Outcome<i64> {
        let f = self.number(i)?;
        if f.fract() != 0.0 || !f.is_finite() || f.abs() > 9.0e15 {
            return Err(self.invalid(i, "a whole number is required"));
        }
        Ok(f as i64)
    }

    /// A list, tuple or set. Its elements may still be unknown.
    pub(super) fn list(&self, i: usize) -> Outcome<&'a [Value]> {
        match self.known(i)? {
            Value::List(l) => Ok(l),
            _ => Err(self.wrong_type(i, "list")),
        }
    }

    /// A map or object. Its values may still be unknown.
    pub(super) fn object(&self, i: usize) -> Outcome<&'a Object> {
        match self.known(i)? {
            Value::Object(o) => Ok(o),
            _ => Err(self.wrong_type(i, "map")),
        }
    }

    /// A list of strings (numbers and bools converted), every element known and non-null.
    pub(super) fn string_list(&self, i: usize) -> Outcome<Vec<String>> {
        self.list(i)?
            .iter()
            .enumerate()
            .map(|(n, v)| match v {
                Value::Unknown => Err(Fail::Unknown),
                Value::Null => Err(self.invalid(i, format_args!("element {n} is null"))),
                v => to_string_value(v).ok_or_else(|| {
                    self.invalid(
                        i,
                        format_args!("element {n}: string required, got {}", v.type_name()),
                    )
                }),
            })
            .collect()
    }
}

/// Converts a primitive to a string the way Terraform's automatic conversion does.
pub(super) fn to_string_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(number_to_string(n)),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub(super) fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim();
    // Rust also accepts "inf", "NaN" and a leading '+', which are not HCL numbers.
    let valid = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && !t.starts_with('+');
    if !valid {
        return None;
    }
    t.parse::<f64>().ok().filter(|f| f.is_finite())
}

pub(super) fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The order set elements are kept in: numbers numerically, strings lexically, everything
/// else by its rendering (deterministic, which is all a set needs).
pub(super) fn set_order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&y.as_f64().unwrap_or(0.0)),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => a.to_string().cmp(&b.to_string()),
    }
}

/// Terraform's type unification for collection elements: when strings are mixed with
/// numbers or bools, everything becomes a string (`["a", 1]` is `["a", "1"]`).
pub(super) fn unify_primitives(items: Vec<Value>) -> Vec<Value> {
    let has_string = items.iter().any(|v| matches!(v, Value::String(_)));
    let mixed = items
        .iter()
        .any(|v| matches!(v, Value::Number(_) | Value::Bool(_)));
    if !(has_string && mixed) {
        return items;
    }
    items
        .into_iter()
        .map(|v| to_string_value(&v).map(Value::String).unwrap_or(v))
        .collect()
}

/// Builds a set from elements: mixed primitives are unified to strings as Terraform's type
/// unification does, then the elements are sorted and deduplicated. Unknown elements make
/// the set unknown, since they could equal any other element.
/// A key equal for two values exactly when [`values_equal`] holds (numbers by value, object
/// keys in any order), so duplicates are found by hashing rather than comparing every
/// pair: pairwise comparison of a million-element list would not finish.
pub(super) fn equality_key(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::Null => out.push('z'),
            Value::Unknown => out.push('u'),
            Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
            Value::Number(n) => {
                // 0.0 and -0.0 are equal numbers.
                let f = n.as_f64().unwrap_or(0.0);
                let f = if f == 0.0 { 0.0 } else { f };
                out.push('n');
                out.push_str(&f.to_bits().to_string());
                out.push(';');
            }
            Value::String(s) => {
                out.push('s');
                out.push_str(&s.len().to_string());
                out.push(':');
                out.push_str(s);
            }
            Value::List(l) => {
                out.push('[');
                for v in l {
                    walk(v, out);
                }
                out.push(']');
            }
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(&k.len().to_string());
                    out.push(':');
                    out.push_str(k);
                    if let Some(v) = o.get(k) {
                        walk(v, out);
                    }
                }
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

pub(super) fn make_set(items: impl IntoIterator<Item = Value>) -> Outcome<Vec<Value>> {
    let mut items: Vec<Value> = items.into_iter().collect();
    if items.iter().any(Value::contains_unknown) {
        return Err(Fail::Unknown);
    }
    items.retain(|v| !v.is_null());
    let mut items = unify_primitives(items);
    items.sort_by(set_order);
    items.dedup_by(|a, b| values_equal(a, b));
    Ok(items)
}

#[cfg(test)]
pub(super) mod test_support {
    use super::*;
    use crate::value::Object;

    pub fn run(name: &str, args: Vec<Value>) -> Result<Value, FunctionError> {
        let ctx = FunctionContext {
            base_dir: Path::new("."),
        };
        call(name, &args, &ctx)
    }

    pub fn ok(name: &str, args: Vec<Value>) -> Value {
        match run(name, args) {
            Ok(v) => v,
            Err(e) => panic!("{name} failed: {e}"),
        }
    }

    pub fn err(name: &str, args: Vec<Value>) -> FunctionError {
        match run(name, args) {
            Ok(v) => panic!("{name} should fail, got {v}"),
            Err(e) => e,
        }
    }

    pub fn s(x: &str) -> Value {
        Value::from(x)
    }

    pub fn n(x: i64) -> Value {
        Value::from(x)
    }

    pub fn f(x: f64) -> Value {
        Value::from_f64(x)
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(items)
    }

    pub fn strs(items: &[&str]) -> Value {
        Value::List(items.iter().map(|x| s(x)).collect())
    }

    pub fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<Object>(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    /// The functions table of docs/language.md, generated from the families.
    fn reference_table() -> String {
        let mut out = String::from("| Family | Functions |\n|---|---|\n");
        let row = |family: &str, names: &mut Vec<&str>| {
            names.sort_unstable();
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("| {family} | {} |\n", names.join(", "))
        };
        for (family, specs) in FAMILIES {
            out.push_str(&row(family, &mut specs.iter().map(|s| s.name).collect()));
        }
        out.push_str(&row(
            "Evaluated by the language itself",
            &mut crate::lang::eval::LAZY_FUNCTIONS.to_vec(),
        ));
        out
    }

    #[test]
    fn the_language_reference_lists_every_function() {
        let path = format!("{}/../docs/language.md", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let begin =
            "<!-- BEGIN functions: generated from core/src/lang/functions; do not edit -->\n";
        let end = "<!-- END functions -->";
        let start = text
            .find(begin)
            .expect("docs/language.md has the functions markers")
            + begin.len();
        let stop = start
            + text[start..]
                .find(end)
                .expect("docs/language.md has the end marker");
        let want = reference_table();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, format!("{}{want}{}", &text[..start], &text[stop..])).unwrap();
            return;
        }
        assert!(
            text[start..stop] == want,
            "the functions table of docs/language.md is out of date; regenerate it with \
             `UPDATE_DOCS=1 cargo test -p brickform-core --lib functions`"
        );
    }

    #[test]
    fn names_are_sorted_and_exclude_lazy_functions() {
        let ns = names();
        assert!(ns.windows(2).all(|w| w[0] < w[1]));
        for lazy in ["try", "can", "templatefile", "uuid", "timestamp"] {
            assert!(!exists(lazy), "{lazy} must not be in the stdlib");
        }
        assert!(exists("jsonencode"));
        assert!(ns.len() > 80, "{}", ns.len());
    }

    #[test]
    fn arity_errors_name_the_function() {
        assert_eq!(
            err("join", vec![s(",")]).message,
            "Function \"join\" expects at least 2 arguments, got 1."
        );
        assert_eq!(
            err("upper", vec![]).message,
            "Function \"upper\" expects 1 argument, got 0."
        );
        assert_eq!(
            err("lookup", vec![s("x")]).message,
            "Function \"lookup\" expects 2 or 3 arguments, got 1."
        );
        assert_eq!(
            err("range", vec![]).message,
            "Function \"range\" expects 1 to 3 arguments, got 0."
        );
        assert_eq!(
            err("nosuch", vec![]).message,
            "There is no function named \"nosuch\"."
        );
    }

    #[test]
    fn type_errors_name_the_parameter() {
        let e = err("upper", vec![strs(&["a"])]);
        assert_eq!(
            e.message,
            "Invalid value for \"str\" parameter: string required, got list."
        );
        assert_eq!(e.arg, Some(0));
        let e = err("upper", vec![Value::Null]);
        assert_eq!(
            e.message,
            "Invalid value for \"str\" parameter: argument must not be null."
        );
    }

    #[test]
    fn unknowns_propagate_by_default() {
        assert_eq!(ok("upper", vec![Value::Unknown]), Value::Unknown);
        assert_eq!(
            ok("join", vec![s(","), list(vec![s("a"), Value::Unknown])]),
            Value::Unknown
        );
        assert_eq!(
            ok("jsonencode", vec![obj(&[("a", Value::Unknown)])]),
            Value::Unknown
        );
    }

    #[test]
    fn primitives_convert_like_terraform() {
        assert_eq!(ok("upper", vec![n(5)]), s("5"));
        assert_eq!(ok("upper", vec![Value::Bool(true)]), s("TRUE"));
        assert_eq!(ok("abs", vec![s("-3")]), n(3));
        assert_eq!(
            err("abs", vec![s("x")]).message,
            "Invalid value for \"num\" parameter: cannot convert \"x\" to number; given string must be a decimal representation of a number."
        );
        let render = |x: f64| match Value::from_f64(x) {
            Value::Number(n) => number_to_string(&n),
            other => other.to_string(),
        };
        assert_eq!(render(1e21), "1000000000000000000000");
        assert_eq!(render(0.1), "0.1");
    }
}
