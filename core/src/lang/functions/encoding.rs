//! Encoding functions: JSON, YAML, CSV, base64 and URL encoding.
//!
//! Encoders write object keys in lexical order, as Terraform does (its objects and maps
//! have no declaration order), so the same value always encodes to the same text and
//! plans do not show spurious diffs.

use super::{Args, Outcome, Spec, number_to_string};
use crate::value::{Object, Value};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::sync::Arc;

pub(super) static FUNCTIONS: &[Spec] = &[
    Spec::fixed("base64decode", &["str"], base64decode),
    Spec::fixed("base64encode", &["str"], base64encode),
    Spec::fixed("csvdecode", &["str"], csvdecode),
    Spec::fixed("jsondecode", &["str"], jsondecode),
    Spec::fixed("jsonencode", &["val"], jsonencode),
    Spec::fixed("urlencode", &["str"], urlencode),
    Spec::fixed("yamldecode", &["src"], yamldecode),
    Spec::fixed("yamlencode", &["value"], yamlencode),
];

fn sorted(o: &Object) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = o.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// Encodes a value as compact JSON the way Terraform's `jsonencode` does: keys sorted,
/// and `<`, `>`, `&`, U+2028 and U+2029 escaped so the output is safe inside HTML.
/// Unknown values encode as null; callers check for unknowns first.
pub(super) fn json_string(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Value, out: &mut String) {
    match v {
        Value::Null | Value::Unknown => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_to_string(n)),
        Value::String(s) => write_json_string(s, out),
        Value::List(l) => {
            out.push('[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, item)) in sorted(o).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(k, out);
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
    }
}

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn jsonencode(a: &Args) -> Outcome<Value> {
    Ok(Value::String(json_string(a.get(0))))
}

/// Whole floats become integers, so decoded numbers compare equal to literals.
fn normalize_numbers(v: Value) -> Value {
    match v {
        Value::Number(n) if !(n.is_i64() || n.is_u64()) => {
            n.as_f64().map(Value::from_f64).unwrap_or(Value::Number(n))
        }
        Value::List(l) => Value::List(l.into_iter().map(normalize_numbers).collect()),
        Value::Object(o) => Value::Object(
            Arc::unwrap_or_clone(o)
                .into_iter()
                .map(|(k, v)| (k, normalize_numbers(v)))
                .collect::<crate::value::Object>()
                .into(),
        ),
        v => v,
    }
}

fn jsondecode(a: &Args) -> Outcome<Value> {
    let src = a.string(0)?;
    let j: serde_json::Value = serde_json::from_str(&src).map_err(|e| a.invalid(0, e))?;
    Ok(normalize_numbers(Value::from_json(&j)))
}

/// Terraform's `yamlencode`, in the writer's go-yaml style.
fn yamlencode(a: &Args) -> Outcome<Value> {
    Ok(Value::String(crate::yaml::to_string(
        a.get(0),
        crate::yaml::Style::GO_YAML,
    )))
}

fn yamldecode(a: &Args) -> Outcome<Value> {
    let src = a.string(0)?;
    let y: serde_yaml_ng::Value = serde_yaml_ng::from_str(&src).map_err(|e| a.invalid(0, e))?;
    from_yaml(&y).map_err(|e| a.invalid(0, e))
}

/// Why a YAML document has no value of the language.
#[derive(Debug, thiserror::Error)]
enum FromYamlError {
    /// Infinite or not a number: JSON numbers, which values hold, cannot be either.
    #[error("cannot represent the number {0}")]
    Number(serde_yaml_ng::Number),
    /// A mapping key that is a list or a mapping.
    #[error("mapping keys must be strings, got {0}")]
    KeyType(&'static str),
}

fn from_yaml(y: &serde_yaml_ng::Value) -> Result<Value, FromYamlError> {
    use serde_yaml_ng::Value as Y;
    Ok(match y {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from_i64(i)
            } else if let Some(u) = n.as_u64() {
                Value::Number(u.into())
            } else {
                match n.as_f64().filter(|f| f.is_finite()) {
                    Some(f) => Value::from_f64(f),
                    None => return Err(FromYamlError::Number(n.clone())),
                }
            }
        }
        Y::String(s) => Value::String(s.clone()),
        Y::Sequence(items) => Value::List(items.iter().map(from_yaml).collect::<Result<_, _>>()?),
        Y::Mapping(m) => {
            let mut o = Object::default();
            for (k, v) in m {
                let key = match from_yaml(k)? {
                    Value::String(s) => s,
                    Value::Number(n) => number_to_string(&n),
                    Value::Bool(b) => b.to_string(),
                    Value::Null => "null".to_string(),
                    other => return Err(FromYamlError::KeyType(other.type_name())),
                };
                o.insert(key, from_yaml(v)?);
            }
            Value::object(o)
        }
        Y::Tagged(t) => from_yaml(&t.value)?,
    })
}

/// `csvdecode`: the first line names the columns; every other line becomes a map of
/// strings. A line with a different number of fields is an error naming that line.
fn csvdecode(a: &Args) -> Outcome<Value> {
    let src = a.string(0)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(src.as_bytes());
    let parse_error = |e: csv::Error| {
        let line = e.position().map(|p| p.line()).unwrap_or(0);
        a.failed(format_args!("CSV parse error on line {line}: {e}"))
    };
    let mut records = reader.records();
    let headers = match records.next() {
        None => return Err(a.failed("missing header line")),
        Some(r) => r.map_err(parse_error)?,
    };
    let mut names: Vec<String> = Vec::with_capacity(headers.len());
    let mut seen = std::collections::HashSet::new();
    for h in &headers {
        if !seen.insert(h) {
            return Err(a.failed(format_args!(
                "duplicate column name {}",
                crate::value::quote(h)
            )));
        }
        names.push(h.to_string());
    }
    // Every row repeats the header names: a long header over many rows multiplies.
    let per_row = names.iter().map(|n| n.len() as u64 + 64).sum::<u64>();
    let mut total = 0u64;
    let mut rows = Vec::new();
    for record in records {
        let record = record.map_err(parse_error)?;
        total = total.saturating_add(per_row + record.as_slice().len() as u64);
        if total > crate::limits::MAX_EVALUATION_BYTES {
            return Err(a.failed(format_args!(
                "the decoded rows would hold more than {} MiB",
                crate::limits::MAX_EVALUATION_BYTES >> 20
            )));
        }
        a.collection_fits(rows.len() + 1)?;
        if record.len() != names.len() {
            let line = record.position().map(|p| p.line()).unwrap_or(0);
            return Err(a.failed(format_args!(
                "CSV parse error on line {line}: wrong number of fields (expected {}, got {})",
                names.len(),
                record.len()
            )));
        }
        let row: Object = names
            .iter()
            .cloned()
            .zip(record.iter().map(Value::from))
            .collect();
        rows.push(Value::object(row));
    }
    Ok(Value::List(rows))
}

fn base64encode(a: &Args) -> Outcome<Value> {
    Ok(Value::String(STANDARD.encode(a.string(0)?)))
}

fn base64decode(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let bytes = STANDARD.decode(s.as_bytes()).map_err(|e| {
        a.invalid(
            0,
            format_args!(
                "failed to decode base64 data {} ({e})",
                crate::value::quote(&s)
            ),
        )
    })?;
    String::from_utf8(bytes).map(Value::String).map_err(|_| {
        a.invalid(
            0,
            "the result of decoding the provided string is not valid UTF-8",
        )
    })
}

/// Go's `url.QueryEscape`: unreserved characters stay, spaces become `+`, everything else
/// is percent-encoded byte by byte.
fn urlencode(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    Ok(Value::String(out))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::value::Value;

    #[test]
    fn json_encode_sorts_keys_and_escapes_html() {
        let v = obj(&[
            ("b", n(1)),
            ("a", list(vec![Value::Bool(true), Value::Null, f(1.5)])),
            ("c", s("<&>\n")),
        ]);
        assert_eq!(
            ok("jsonencode", vec![v]),
            s(r#"{"a":[true,null,1.5],"b":1,"c":"\u003c\u0026\u003e\n"}"#)
        );
        assert_eq!(ok("jsonencode", vec![Value::Null]), s("null"));
        assert_eq!(ok("jsonencode", vec![Value::Unknown]), Value::Unknown);
    }

    #[test]
    fn json_decode() {
        assert_eq!(
            ok(
                "jsondecode",
                vec![s(r#"{"hello": "world", "n": [1, 2.0, 2.5]}"#)]
            ),
            obj(&[("hello", s("world")), ("n", list(vec![n(1), n(2), f(2.5)]))])
        );
        assert_eq!(ok("jsondecode", vec![s("true")]), Value::Bool(true));
        let e = err("jsondecode", vec![s("{nope")]);
        assert_eq!(e.arg, Some(0));
        assert!(
            e.message
                .starts_with("Invalid value for \"str\" parameter: key must be a string"),
            "{}",
            e.message
        );
    }

    #[test]
    fn yaml_encode_like_terraform() {
        assert_eq!(
            ok("yamlencode", vec![obj(&[("c", s("d")), ("a", s("b"))])]),
            s("\"a\": \"b\"\n\"c\": \"d\"\n")
        );
        assert_eq!(
            ok(
                "yamlencode",
                vec![obj(&[("foo", list(vec![n(1), n(2)])), ("bar", s("baz"))])]
            ),
            s("\"bar\": \"baz\"\n\"foo\":\n- 1\n- 2\n")
        );
        assert_eq!(
            ok(
                "yamlencode",
                vec![obj(&[(
                    "a",
                    obj(&[(
                        "b",
                        list(vec![n(1), obj(&[("c", n(2)), ("d", list(vec![]))])])
                    )])
                )])]
            ),
            s("\"a\":\n  \"b\":\n  - 1\n  - \"c\": 2\n    \"d\": []\n")
        );
        assert_eq!(ok("yamlencode", vec![s("x")]), s("\"x\"\n"));
        assert_eq!(
            ok("yamlencode", vec![obj(&[("sql", s("SELECT 1\nFROM t\n"))])]),
            s("\"sql\": |\n  SELECT 1\n  FROM t\n")
        );
    }

    #[test]
    fn yaml_round_trip() {
        let v = obj(&[
            ("name", s("orders")),
            ("count", n(3)),
            ("ratio", f(0.25)),
            ("enabled", Value::Bool(false)),
            ("nothing", Value::Null),
            (
                "tags",
                list(vec![s("a"), s("true"), s("1"), s("null"), s("- x"), s("")]),
            ),
            (
                "nested",
                list(vec![list(vec![n(1), n(2)]), obj(&[("k", s("v: w"))])]),
            ),
            ("sql", s("SELECT *\n  FROM t\n\n")),
            ("chomped", s("a\nb")),
            ("spacey", s(" lead\nx")),
            ("empty", obj(&[])),
        ]);
        let yaml = ok("yamlencode", vec![v.clone()]);
        let back = ok("yamldecode", vec![yaml.clone()]);
        let sort = |v: Value| ok("jsondecode", vec![ok("jsonencode", vec![v])]);
        assert_eq!(
            sort(back),
            sort(v),
            "yaml was:\n{}",
            yaml.as_str().unwrap_or("")
        );
    }

    #[test]
    fn yaml_decode() {
        assert_eq!(
            ok("yamldecode", vec![s("a: 1\nb: [x, true]\n1: ~\n")]),
            obj(&[
                ("a", n(1)),
                ("b", list(vec![s("x"), Value::Bool(true)])),
                ("1", Value::Null)
            ])
        );
        assert!(
            err("yamldecode", vec![s("a: [")])
                .message
                .starts_with("Invalid value for \"src\" parameter:")
        );
    }

    #[test]
    fn csv_decode() {
        let src =
            "name,comment\norders,\"first, second\"\nusers,\"say \"\"hi\"\"\"\nlines,\"a\nb\"\n";
        assert_eq!(
            ok("csvdecode", vec![s(src)]),
            list(vec![
                obj(&[("name", s("orders")), ("comment", s("first, second"))]),
                obj(&[("name", s("users")), ("comment", s("say \"hi\""))]),
                obj(&[("name", s("lines")), ("comment", s("a\nb"))]),
            ])
        );
        assert_eq!(ok("csvdecode", vec![s("a,b\n")]), list(vec![]));
        let e = err("csvdecode", vec![s("a,b\n1,2\n3\n")]);
        assert_eq!(
            e.message,
            "Call to function \"csvdecode\" failed: CSV parse error on line 3: wrong number of fields (expected 2, got 1)."
        );
        assert!(
            err("csvdecode", vec![s("")])
                .message
                .contains("missing header line")
        );
        assert!(
            err("csvdecode", vec![s("a,a\n")])
                .message
                .contains("duplicate column name \"a\"")
        );
    }

    #[test]
    fn base64_and_url() {
        assert_eq!(
            ok("base64encode", vec![s("Hello World")]),
            s("SGVsbG8gV29ybGQ=")
        );
        assert_eq!(
            ok("base64decode", vec![s("SGVsbG8gV29ybGQ=")]),
            s("Hello World")
        );
        assert!(
            err("base64decode", vec![s("!!")])
                .message
                .contains("failed to decode base64 data")
        );
        assert!(
            err("base64decode", vec![s("/w==")])
                .message
                .contains("not valid UTF-8")
        );
        assert!(
            err("base64encode", vec![list(vec![])])
                .message
                .contains("\"str\"")
        );
        assert_eq!(
            ok("urlencode", vec![s("Hello World!/é")]),
            s("Hello+World%21%2F%C3%A9")
        );
        assert!(err("urlencode", vec![obj(&[])]).message.contains("\"str\""));
    }
}
