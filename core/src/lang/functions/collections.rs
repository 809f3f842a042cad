//! Collection functions over lists, sets and maps.
//!
//! Most of these only need the collection itself to be known: a list whose elements are
//! still unknown has a known length and known positions, so `length`, `concat`, `element`
//! or `keys` can stay exact and "(known after apply)" does not spread further than needed.

use super::{Args, Fail, Outcome, Spec, equality_key, make_set, to_string_value, values_equal};
use crate::value::{Object, Value};
use unicode_segmentation::UnicodeSegmentation;

pub(super) static FUNCTIONS: &[Spec] = &[
    Spec::fixed("alltrue", &["list"], alltrue).custom_unknowns(),
    Spec::fixed("anytrue", &["list"], anytrue).custom_unknowns(),
    Spec::range("coalesce", &["vals"], 1, None, coalesce).custom_unknowns(),
    Spec::range("coalescelist", &["vals"], 1, None, coalescelist).custom_unknowns(),
    Spec::fixed("compact", &["list"], compact),
    Spec::range("concat", &["seqs"], 1, None, concat).custom_unknowns(),
    Spec::fixed("contains", &["list", "value"], contains).custom_unknowns(),
    Spec::fixed("distinct", &["list"], distinct),
    Spec::fixed("element", &["list", "index"], element).custom_unknowns(),
    Spec::fixed("flatten", &["list"], flatten).custom_unknowns(),
    Spec::fixed("index", &["list", "value"], index).custom_unknowns(),
    Spec::fixed("keys", &["inputMap"], keys).custom_unknowns(),
    Spec::fixed("length", &["value"], length).custom_unknowns(),
    Spec::range(
        "lookup",
        &["inputMap", "key", "default"],
        2,
        Some(3),
        lookup,
    )
    .custom_unknowns(),
    Spec::range("merge", &["maps"], 0, None, merge).custom_unknowns(),
    Spec::fixed("one", &["list"], one).custom_unknowns(),
    Spec::range("range", &["params"], 1, Some(3), range),
    Spec::fixed("reverse", &["list"], reverse).custom_unknowns(),
    Spec::range(
        "setintersection",
        &["first_set", "other_sets"],
        1,
        None,
        setintersection,
    ),
    Spec::range("setproduct", &["sets"], 1, None, setproduct),
    Spec::fixed("setsubtract", &["a", "b"], setsubtract),
    Spec::range("setunion", &["first_set", "other_sets"], 1, None, setunion),
    Spec::fixed("slice", &["list", "start_index", "end_index"], slice).custom_unknowns(),
    Spec::fixed("sort", &["list"], sort),
    Spec::fixed("values", &["mapping"], values).custom_unknowns(),
    Spec::fixed("zipmap", &["keys", "values"], zipmap).custom_unknowns(),
];

fn length(a: &Args) -> Outcome<Value> {
    let n = match a.known(0)? {
        Value::List(l) => l.len(),
        Value::Object(o) => o.len(),
        Value::String(s) => s.graphemes(true).count(),
        _ => {
            return Err(a.invalid(
                0,
                "argument must be a string, a collection type, or a structural type",
            ));
        }
    };
    Ok(Value::from_i64(n as i64))
}

fn concat(a: &Args) -> Outcome<Value> {
    let mut out = Vec::new();
    for i in 0..a.len() {
        out.extend_from_slice(a.list(i)?);
    }
    Ok(Value::List(out))
}

/// Later maps win. Null arguments are skipped, as in Terraform.
fn merge(a: &Args) -> Outcome<Value> {
    let mut out = Object::default();
    for i in 0..a.len() {
        if a.get(i).is_null() {
            continue;
        }
        for (k, v) in a.object(i)? {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::object(out))
}

fn lookup(a: &Args) -> Outcome<Value> {
    let map = a.object(0)?;
    let key = a.string(1)?;
    match map.get(&key) {
        Some(v) => Ok(v.clone()),
        None if a.len() == 3 => Ok(a.get(2).clone()),
        None => Err(a.invalid(
            0,
            format_args!(
                "the given object has no attribute {}",
                crate::value::quote(&key)
            ),
        )),
    }
}

fn sorted_entries(o: &Object) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = o.iter().collect();
    entries.sort_by(|x, y| x.0.cmp(y.0));
    entries
}

/// Keys in lexical order, as Terraform returns them.
fn keys(a: &Args) -> Outcome<Value> {
    let o = a.object(0)?;
    Ok(Value::List(
        sorted_entries(o)
            .into_iter()
            .map(|(k, _)| Value::from(k.as_str()))
            .collect(),
    ))
}

/// Values in the lexical order of their keys, so `zipmap(keys(m), values(m))` is `m`.
fn values(a: &Args) -> Outcome<Value> {
    let o = a.object(0)?;
    Ok(Value::List(
        sorted_entries(o)
            .into_iter()
            .map(|(_, v)| v.clone())
            .collect(),
    ))
}

/// True as soon as a known element equals the value; unknown when no known element does but
/// an unknown one could.
fn contains(a: &Args) -> Outcome<Value> {
    let list = a.list(0)?;
    let needle = a.get(1);
    if needle.contains_unknown() {
        return Err(Fail::Unknown);
    }
    if list
        .iter()
        .any(|v| !v.contains_unknown() && values_equal(v, needle))
    {
        return Ok(Value::Bool(true));
    }
    if list.iter().any(Value::contains_unknown) {
        return Err(Fail::Unknown);
    }
    Ok(Value::Bool(false))
}

fn flatten(a: &Args) -> Outcome<Value> {
    fn walk(items: &[Value], out: &mut Vec<Value>) -> Outcome<()> {
        for v in items {
            match v {
                // An unknown element could be a list that would flatten into several.
                Value::Unknown => return Err(Fail::Unknown),
                Value::List(inner) => walk(inner, out)?,
                v => out.push(v.clone()),
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(a.list(0)?, &mut out)?;
    Ok(Value::List(out))
}

/// Every combination of one element from each list, in order (Terraform's setproduct).
fn setproduct(a: &Args) -> Outcome<Value> {
    // The product's size is known before it is built: refuse one past the limits rather
    // than run out of memory building it.
    let mut n = 1usize;
    for i in 0..a.len() {
        n = n.saturating_mul(a.list(i)?.len());
    }
    a.collection_fits(n)?;
    a.collection_fits(n.saturating_mul(a.len()))?;
    let mut out: Vec<Vec<Value>> = vec![Vec::new()];
    for i in 0..a.len() {
        let items = a.list(i)?;
        out = out
            .iter()
            .flat_map(|prefix| {
                items.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push(v.clone());
                    p
                })
            })
            .collect();
    }
    Ok(Value::List(out.into_iter().map(Value::List).collect()))
}

/// First occurrences, in order.
fn distinct(a: &Args) -> Outcome<Value> {
    let mut seen = std::collections::HashSet::new();
    let out: Vec<Value> = a
        .list(0)?
        .iter()
        .filter(|v| seen.insert(equality_key(v)))
        .cloned()
        .collect();
    Ok(Value::List(out))
}

fn zipmap(a: &Args) -> Outcome<Value> {
    let keys = a.string_list(0)?;
    let values = a.list(1)?;
    if keys.len() != values.len() {
        return Err(a.failed(format_args!(
            "number of keys ({}) does not match number of values ({})",
            keys.len(),
            values.len()
        )));
    }
    Ok(Value::Object(
        keys.into_iter()
            .zip(values.iter().cloned())
            .collect::<crate::value::Object>()
            .into(),
    ))
}

/// `range(limit)`, `range(start, limit)`, `range(start, limit, step)`; the default step is
/// 1, or -1 when counting down.
fn range(a: &Args) -> Outcome<Value> {
    let nums: Vec<f64> = (0..a.len())
        .map(|i| a.number(i))
        .collect::<Result<_, _>>()?;
    let (start, end, step) = match nums.as_slice() {
        [end] => (0.0, *end, if *end < 0.0 { -1.0 } else { 1.0 }),
        [start, end] => (*start, *end, if end < start { -1.0 } else { 1.0 }),
        [start, end, step] => (*start, *end, *step),
        _ => return Err(a.failed("must have one, two, or three arguments")),
    };
    if step == 0.0 {
        return Err(a.invalid(2, "step must not be zero"));
    }
    if step < 0.0 && end > start {
        return Err(a.invalid(1, "end must be less than start when step is negative"));
    }
    if step > 0.0 && end < start {
        return Err(a.invalid(1, "end must be greater than start when step is positive"));
    }
    let mut out = Vec::new();
    let mut i = 0.0;
    loop {
        // Multiplying instead of accumulating keeps fractional steps from drifting.
        let v = start + step * i;
        if (step > 0.0 && v >= end) || (step < 0.0 && v <= end) {
            break;
        }
        if out.len() >= 1024 {
            return Err(a.failed(
                "more than 1024 values were generated; either decrease the difference between start and end or use a smaller step",
            ));
        }
        out.push(Value::from_f64(v));
        i += 1.0;
    }
    Ok(Value::List(out))
}

/// The first argument that is neither null nor an empty string. When strings and other
/// primitives are mixed, the result is a string, as Terraform unifies the argument types.
fn coalesce(a: &Args) -> Outcome<Value> {
    let any_string = a.all().iter().any(|v| matches!(v, Value::String(_)));
    for v in a.all() {
        match v {
            Value::Unknown => return Err(Fail::Unknown),
            Value::Null => continue,
            Value::String(s) if s.is_empty() => continue,
            Value::Number(_) | Value::Bool(_) if any_string => {
                return Ok(to_string_value(v).map(Value::String).unwrap_or(Value::Null));
            }
            v => return Ok(v.clone()),
        }
    }
    Err(a.failed("no non-null, non-empty-string arguments"))
}

fn coalescelist(a: &Args) -> Outcome<Value> {
    for i in 0..a.len() {
        if a.get(i).is_null() {
            continue;
        }
        let l = a.list(i).map_err(|e| match e {
            Fail::Unknown => Fail::Unknown,
            Fail::Error(_) => a.invalid(i, "coalescelist arguments must be lists or tuples"),
        })?;
        if !l.is_empty() {
            return Ok(Value::List(l.to_vec()));
        }
    }
    Err(a.failed("no non-null arguments"))
}

/// Drops null and empty-string elements.
fn compact(a: &Args) -> Outcome<Value> {
    let mut out = Vec::new();
    for (n, v) in a.list(0)?.iter().enumerate() {
        match v {
            Value::Null => {}
            Value::String(s) if s.is_empty() => {}
            v => match to_string_value(v) {
                Some(s) => out.push(Value::String(s)),
                None => {
                    return Err(a.invalid(
                        0,
                        format_args!("element {n}: string required, got {}", v.type_name()),
                    ));
                }
            },
        }
    }
    Ok(Value::List(out))
}

/// `element(list, index)` wraps around: index 3 of a 3-element list is the first element.
fn element(a: &Args) -> Outcome<Value> {
    let list = a.list(0)?;
    let i = a.integer(1)?;
    if i < 0 {
        return Err(a.invalid(1, "cannot use element function with a negative index"));
    }
    if list.is_empty() {
        return Err(a.invalid(0, "cannot use element function with an empty list"));
    }
    Ok(list[(i as usize) % list.len()].clone())
}

fn index(a: &Args) -> Outcome<Value> {
    let list = a.list(0)?;
    let needle = a.get(1);
    if needle.contains_unknown() {
        return Err(Fail::Unknown);
    }
    for (i, v) in list.iter().enumerate() {
        // An unknown element before the match could itself be the match.
        if v.contains_unknown() {
            return Err(Fail::Unknown);
        }
        if values_equal(v, needle) {
            return Ok(Value::from_i64(i as i64));
        }
    }
    Err(a.failed("item not found"))
}

/// `slice(list, start, end)`: elements from `start` (inclusive) to `end` (exclusive).
fn slice(a: &Args) -> Outcome<Value> {
    let list = a.list(0)?;
    let start = a.integer(1)?;
    let end = a.integer(2)?;
    let len = list.len() as i64;
    let check = |i: usize, v: i64, what: &str| {
        if v < 0 {
            Err(a.invalid(i, format_args!("{what} index must not be less than zero")))
        } else if v > len {
            Err(a.invalid(
                i,
                format_args!("{what} index must not be greater than the length of the list"),
            ))
        } else {
            Ok(v as usize)
        }
    };
    let (start, end) = (check(1, start, "start")?, check(2, end, "end")?);
    if start > end {
        return Err(a.invalid(1, "start index must not be greater than end index"));
    }
    Ok(Value::List(list[start..end].to_vec()))
}

fn reverse(a: &Args) -> Outcome<Value> {
    Ok(Value::List(a.list(0)?.iter().rev().cloned().collect()))
}

/// Lexical sort of strings (numbers are converted first, so `[10, 9]` sorts as strings).
fn sort(a: &Args) -> Outcome<Value> {
    let mut items = a.string_list(0)?;
    items.sort();
    Ok(Value::List(items.into_iter().map(Value::String).collect()))
}

fn sets(a: &Args) -> Outcome<Vec<Vec<Value>>> {
    (0..a.len())
        .map(|i| make_set(a.list(i)?.iter().cloned()))
        .collect()
}

fn setunion(a: &Args) -> Outcome<Value> {
    Ok(Value::List(make_set(sets(a)?.into_iter().flatten())?))
}

fn setintersection(a: &Args) -> Outcome<Value> {
    let sets = sets(a)?;
    let (first, rest) = sets
        .split_first()
        .ok_or_else(|| a.failed("at least one set is required"))?;
    let rest: Vec<std::collections::HashSet<String>> = rest
        .iter()
        .map(|s| s.iter().map(equality_key).collect())
        .collect();
    let common = first
        .iter()
        .filter(|v| {
            let k = equality_key(v);
            rest.iter().all(|s| s.contains(&k))
        })
        .cloned();
    Ok(Value::List(make_set(common)?))
}

fn setsubtract(a: &Args) -> Outcome<Value> {
    let sets = sets(a)?;
    let (from, minus) = (&sets[0], &sets[1]);
    let minus: std::collections::HashSet<String> = minus.iter().map(equality_key).collect();
    let kept = from
        .iter()
        .filter(|v| !minus.contains(&equality_key(v)))
        .cloned();
    Ok(Value::List(make_set(kept)?))
}

/// The only element of a zero- or one-element collection (null when empty).
fn one(a: &Args) -> Outcome<Value> {
    match a.list(0)? {
        [] => Ok(Value::Null),
        [v] => Ok(v.clone()),
        _ => Err(a.invalid(
            0,
            "must be a list, set, or tuple value with either zero or one elements",
        )),
    }
}

fn bool_element(a: &Args, n: usize, v: &Value) -> Outcome<Option<bool>> {
    match v {
        Value::Unknown => Err(Fail::Unknown),
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        Value::String(s) if super::parse_bool(s).is_some() => Ok(super::parse_bool(s)),
        v => Err(a.invalid(
            0,
            format_args!("element {n}: bool required, got {}", v.type_name()),
        )),
    }
}

/// False as soon as an element is false (or null); unknown on the first unknown before that.
fn alltrue(a: &Args) -> Outcome<Value> {
    for (n, v) in a.list(0)?.iter().enumerate() {
        if bool_element(a, n, v)? != Some(true) {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

/// True as soon as a known element is true; unknown if none is and some element is unknown.
fn anytrue(a: &Args) -> Outcome<Value> {
    let mut unknown = false;
    for (n, v) in a.list(0)?.iter().enumerate() {
        match bool_element(a, n, v) {
            Err(Fail::Unknown) => unknown = true,
            Ok(Some(true)) => return Ok(Value::Bool(true)),
            Ok(_) => {}
            Err(e) => return Err(e),
        }
    }
    if unknown {
        Err(Fail::Unknown)
    } else {
        Ok(Value::Bool(false))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::value::Value;

    const U: Value = Value::Unknown;

    #[test]
    fn length_is_exact_for_known_collections() {
        assert_eq!(ok("length", vec![list(vec![U, U])]), n(2));
        assert_eq!(ok("length", vec![obj(&[("a", U)])]), n(1));
        assert_eq!(ok("length", vec![s("héllo")]), n(5));
        assert_eq!(ok("length", vec![U]), U);
        assert!(
            err("length", vec![n(5)])
                .message
                .contains("must be a string, a collection type")
        );
        assert!(
            err("length", vec![Value::Null])
                .message
                .contains("must not be null")
        );
    }

    #[test]
    fn concat_merge_lookup() {
        assert_eq!(
            ok("concat", vec![strs(&["a"]), list(vec![U]), list(vec![])]),
            list(vec![s("a"), U])
        );
        assert_eq!(ok("concat", vec![strs(&["a"]), U]), U);
        assert!(
            err("concat", vec![s("a")])
                .message
                .contains("\"seqs\" parameter: list required, got string")
        );
        assert_eq!(
            ok(
                "merge",
                vec![
                    obj(&[("a", n(1)), ("b", n(2))]),
                    Value::Null,
                    obj(&[("b", U), ("c", n(3))])
                ]
            ),
            obj(&[("a", n(1)), ("b", U), ("c", n(3))])
        );
        assert_eq!(ok("merge", vec![]), obj(&[]));
        assert_eq!(ok("merge", vec![obj(&[]), U]), U);
        assert!(
            err("merge", vec![obj(&[]), strs(&[])])
                .message
                .contains("map required, got list")
        );
        let m = obj(&[("a", s("ay")), ("b", U)]);
        assert_eq!(ok("lookup", vec![m.clone(), s("a")]), s("ay"));
        assert_eq!(ok("lookup", vec![m.clone(), s("b")]), U);
        assert_eq!(ok("lookup", vec![m.clone(), s("z"), s("dflt")]), s("dflt"));
        assert_eq!(ok("lookup", vec![m.clone(), U]), U);
        let e = err("lookup", vec![m, s("z")]);
        assert_eq!(
            e.message,
            "Invalid value for \"inputMap\" parameter: the given object has no attribute \"z\"."
        );
    }

    #[test]
    fn keys_values_zipmap() {
        let m = obj(&[("b", U), ("a", n(1))]);
        assert_eq!(ok("keys", vec![m.clone()]), strs(&["a", "b"]));
        assert_eq!(ok("values", vec![m]), list(vec![n(1), U]));
        assert!(
            err("keys", vec![strs(&[])])
                .message
                .contains("\"inputMap\" parameter: map required")
        );
        assert!(
            err("values", vec![s("x")])
                .message
                .contains("\"mapping\" parameter")
        );
        assert_eq!(
            ok("zipmap", vec![strs(&["a", "b"]), list(vec![n(1), U])]),
            obj(&[("a", n(1)), ("b", U)])
        );
        assert_eq!(ok("zipmap", vec![list(vec![U]), list(vec![n(1)])]), U);
        assert!(
            err("zipmap", vec![strs(&["a"]), list(vec![])])
                .message
                .contains("number of keys (1) does not match number of values (0)")
        );
    }

    #[test]
    fn contains_and_index() {
        assert_eq!(
            ok("contains", vec![strs(&["a", "b"]), s("b")]),
            Value::Bool(true)
        );
        assert_eq!(
            ok("contains", vec![list(vec![s("a"), U]), s("a")]),
            Value::Bool(true)
        );
        assert_eq!(ok("contains", vec![list(vec![s("a"), U]), s("z")]), U);
        assert_eq!(
            ok("contains", vec![list(vec![n(1), n(2)]), f(2.0)]),
            Value::Bool(true)
        );
        assert_eq!(ok("contains", vec![strs(&["a"]), U]), U);
        assert!(
            err("contains", vec![s("a"), s("a")])
                .message
                .contains("\"list\" parameter")
        );
        assert_eq!(ok("index", vec![strs(&["a", "b", "c"]), s("b")]), n(1));
        assert_eq!(ok("index", vec![list(vec![U, s("b")]), s("b")]), U);
        assert_eq!(
            err("index", vec![strs(&["a"]), s("z")]).message,
            "Call to function \"index\" failed: item not found."
        );
    }

    #[test]
    fn setproduct_combines_in_order() {
        assert_eq!(
            ok("setproduct", vec![strs(&["a", "b"]), strs(&["x", "y"])]),
            list(vec![
                strs(&["a", "x"]),
                strs(&["a", "y"]),
                strs(&["b", "x"]),
                strs(&["b", "y"]),
            ])
        );
        assert_eq!(
            ok("setproduct", vec![strs(&["a"]), strs(&[])]),
            list(vec![])
        );
        assert!(err("setproduct", vec![s("x")]).to_string().contains("list"));
    }

    #[test]
    fn flatten_distinct_compact_reverse_sort() {
        assert_eq!(
            ok(
                "flatten",
                vec![list(vec![
                    strs(&["a", "b"]),
                    list(vec![]),
                    list(vec![list(vec![s("c")])]),
                    s("d")
                ])]
            ),
            strs(&["a", "b", "c", "d"])
        );
        assert_eq!(ok("flatten", vec![list(vec![strs(&["a"]), U])]), U);
        assert!(
            err("flatten", vec![s("x")])
                .message
                .contains("list required")
        );
        assert_eq!(
            ok("distinct", vec![strs(&["a", "b", "a", "c", "b"])]),
            strs(&["a", "b", "c"])
        );
        assert!(
            err("distinct", vec![obj(&[])])
                .message
                .contains("list required, got object")
        );
        assert_eq!(
            ok(
                "compact",
                vec![list(vec![s("a"), s(""), Value::Null, s("b")])]
            ),
            strs(&["a", "b"])
        );
        assert!(
            err("compact", vec![list(vec![strs(&[])])])
                .message
                .contains("element 0: string required")
        );
        assert_eq!(
            ok("reverse", vec![list(vec![n(1), U, n(3)])]),
            list(vec![n(3), U, n(1)])
        );
        assert!(
            err("reverse", vec![s("abc")])
                .message
                .contains("list required")
        );
        assert_eq!(
            ok("sort", vec![list(vec![s("e"), s("d"), n(10), n(9)])]),
            strs(&["10", "9", "d", "e"])
        );
        assert!(
            err("sort", vec![list(vec![s("a"), Value::Null])])
                .message
                .contains("element 1 is null")
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(ok("range", vec![n(3)]), list(vec![n(0), n(1), n(2)]));
        assert_eq!(ok("range", vec![n(1), n(4)]), list(vec![n(1), n(2), n(3)]));
        assert_eq!(ok("range", vec![n(4), n(1)]), list(vec![n(4), n(3), n(2)]));
        assert_eq!(
            ok("range", vec![n(0), n(1), f(0.25)]),
            list(vec![n(0), f(0.25), f(0.5), f(0.75)])
        );
        assert_eq!(ok("range", vec![n(-3)]), list(vec![n(0), n(-1), n(-2)]));
        assert_eq!(ok("range", vec![n(0)]), list(vec![]));
        assert!(
            err("range", vec![n(1), n(5), n(0)])
                .message
                .contains("step must not be zero")
        );
        assert!(
            err("range", vec![n(1), n(5), n(-1)])
                .message
                .contains("end must be less than start")
        );
        assert!(
            err("range", vec![n(5000)])
                .message
                .contains("more than 1024 values")
        );
    }

    #[test]
    fn coalescing() {
        assert_eq!(ok("coalesce", vec![Value::Null, s(""), s("b"), U]), s("b"));
        assert_eq!(ok("coalesce", vec![Value::Null, U, s("b")]), U);
        assert_eq!(ok("coalesce", vec![n(1), s("x")]), s("1"));
        assert_eq!(ok("coalesce", vec![n(1), n(2)]), n(1));
        assert!(
            err("coalesce", vec![Value::Null, s("")])
                .message
                .contains("no non-null, non-empty-string arguments")
        );
        assert_eq!(
            ok("coalescelist", vec![list(vec![]), strs(&["c", "d"])]),
            strs(&["c", "d"])
        );
        assert_eq!(ok("coalescelist", vec![list(vec![]), U]), U);
        assert!(
            err("coalescelist", vec![s("x")])
                .message
                .contains("coalescelist arguments must be lists or tuples")
        );
        assert!(
            err("coalescelist", vec![list(vec![])])
                .message
                .contains("no non-null arguments")
        );
    }

    #[test]
    fn element_slice_one() {
        let l = list(vec![s("a"), U, s("c")]);
        assert_eq!(ok("element", vec![l.clone(), n(3)]), s("a"));
        assert_eq!(ok("element", vec![l.clone(), n(1)]), U);
        assert!(
            err("element", vec![list(vec![]), n(0)])
                .message
                .contains("empty list")
        );
        assert!(
            err("element", vec![l.clone(), n(-1)])
                .message
                .contains("negative index")
        );
        assert_eq!(
            ok("slice", vec![l.clone(), n(1), n(3)]),
            list(vec![U, s("c")])
        );
        assert!(
            err("slice", vec![l.clone(), n(2), n(1)])
                .message
                .contains("start index must not be greater than end index")
        );
        assert!(
            err("slice", vec![l, n(0), n(4)])
                .message
                .contains("end index must not be greater than the length")
        );
        assert_eq!(ok("one", vec![list(vec![])]), Value::Null);
        assert_eq!(ok("one", vec![strs(&["x"])]), s("x"));
        assert!(
            err("one", vec![strs(&["x", "y"])])
                .message
                .contains("either zero or one elements")
        );
    }

    #[test]
    fn set_operations() {
        assert_eq!(
            ok("setunion", vec![strs(&["b", "a"]), strs(&["c", "a"])]),
            strs(&["a", "b", "c"])
        );
        assert_eq!(
            ok(
                "setintersection",
                vec![strs(&["a", "b"]), strs(&["b", "c"]), strs(&["b", "d"])]
            ),
            strs(&["b"])
        );
        assert_eq!(
            ok(
                "setsubtract",
                vec![strs(&["a", "b", "c"]), strs(&["a", "c"])]
            ),
            strs(&["b"])
        );
        assert_eq!(
            ok("setunion", vec![list(vec![n(2), n(1)]), list(vec![n(10)])]),
            list(vec![n(1), n(2), n(10)])
        );
        assert_eq!(ok("setunion", vec![strs(&["a"]), list(vec![U])]), U);
        assert!(
            err("setunion", vec![s("a")])
                .message
                .contains("\"first_set\" parameter")
        );
        assert!(
            err("setintersection", vec![strs(&[]), s("a")])
                .message
                .contains("\"other_sets\" parameter")
        );
        assert!(
            err("setsubtract", vec![strs(&[]), s("a")])
                .message
                .contains("\"b\" parameter")
        );
    }

    #[test]
    fn all_and_any() {
        let t = Value::Bool(true);
        let fl = Value::Bool(false);
        assert_eq!(ok("alltrue", vec![list(vec![])]), t);
        assert_eq!(ok("alltrue", vec![list(vec![t.clone(), s("true")])]), t);
        assert_eq!(ok("alltrue", vec![list(vec![fl.clone(), U])]), fl);
        assert_eq!(ok("alltrue", vec![list(vec![t.clone(), U])]), U);
        assert_eq!(ok("anytrue", vec![list(vec![])]), fl);
        assert_eq!(ok("anytrue", vec![list(vec![U, t.clone()])]), t);
        assert_eq!(ok("anytrue", vec![list(vec![U, fl])]), U);
        assert!(
            err("alltrue", vec![list(vec![n(1)])])
                .message
                .contains("bool required")
        );
        assert!(
            err("anytrue", vec![s("x")])
                .message
                .contains("list required")
        );
    }
}
