//! String functions. Lengths and offsets count grapheme clusters, as Terraform does, so an
//! accented letter written with a combining mark is one character.

use super::{Args, Fail, Outcome, Spec};
use crate::value::{Object, Value};
use regex::Regex;
use unicode_segmentation::UnicodeSegmentation;

pub(super) static FUNCTIONS: &[Spec] = &[
    Spec::fixed("chomp", &["str"], chomp),
    Spec::fixed("endswith", &["str", "suffix"], endswith),
    Spec::fixed("indent", &["spaces", "str"], indent),
    Spec::range("join", &["separator", "lists"], 2, None, join),
    Spec::fixed("lower", &["str"], lower),
    Spec::fixed("regex", &["pattern", "string"], regex),
    Spec::fixed("regexall", &["pattern", "string"], regexall),
    Spec::fixed("replace", &["str", "substr", "replace"], replace),
    Spec::fixed("split", &["separator", "str"], split),
    Spec::fixed("startswith", &["str", "prefix"], startswith),
    Spec::fixed("strcontains", &["str", "substr"], strcontains),
    Spec::fixed("strrev", &["str"], strrev),
    Spec::fixed("substr", &["str", "offset", "length"], substr),
    Spec::fixed("title", &["str"], title),
    Spec::fixed("trim", &["str", "cutset"], trim),
    Spec::fixed("trimprefix", &["str", "prefix"], trimprefix),
    Spec::fixed("trimspace", &["str"], trimspace),
    Spec::fixed("trimsuffix", &["str", "suffix"], trimsuffix),
    Spec::fixed("upper", &["str"], upper),
];

fn string_result(s: impl Into<String>) -> Outcome<Value> {
    Ok(Value::String(s.into()))
}

fn upper(a: &Args) -> Outcome<Value> {
    string_result(a.string(0)?.to_uppercase())
}

fn lower(a: &Args) -> Outcome<Value> {
    string_result(a.string(0)?.to_lowercase())
}

/// Go's `strings.Title`: a letter is capitalised when the character before it separates
/// words (anything but letters, digits and `_`).
fn title(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let mut out = String::with_capacity(s.len());
    let mut prev_separates = true;
    for c in s.chars() {
        if prev_separates {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_separates = if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else {
            c.is_whitespace()
        };
    }
    string_result(out)
}

fn join(a: &Args) -> Outcome<Value> {
    let sep = a.string(0)?;
    let mut parts = Vec::new();
    for i in 1..a.len() {
        for (n, v) in a.list(i)?.iter().enumerate() {
            match super::to_string_value(v) {
                Some(s) => parts.push(s),
                None if v.is_null() => {
                    let which = if a.len() > 2 {
                        format!("element {n} of list {i}")
                    } else {
                        format!("element {n}")
                    };
                    return Err(a.invalid(
                        i,
                        format_args!("{which} is null; cannot concatenate null values"),
                    ));
                }
                None => {
                    return Err(a.invalid(
                        i,
                        format_args!("element {n}: string required, got {}", v.type_name()),
                    ));
                }
            }
        }
    }
    string_result(parts.join(&sep))
}

fn split(a: &Args) -> Outcome<Value> {
    let sep = a.string(0)?;
    let s = a.string(1)?;
    // Go's strings.Split with an empty separator splits into characters; str::split would
    // yield empty strings at both ends instead.
    let parts: Vec<Value> = if sep.is_empty() {
        s.chars().map(|c| Value::String(c.to_string())).collect()
    } else {
        s.split(sep.as_str()).map(Value::from).collect()
    };
    Ok(Value::List(parts))
}

fn is_regex_pattern(s: &str) -> bool {
    s.len() > 1 && s.starts_with('/') && s.ends_with('/')
}

fn compile(a: &Args, i: usize, pattern: &str) -> Outcome<Regex> {
    Regex::new(pattern).map_err(|e| a.invalid(i, format_args!("error parsing pattern: {e}")))
}

fn replace(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let substr = a.string(1)?;
    let with = a.string(2)?;
    if is_regex_pattern(&substr) {
        let re = compile(a, 1, &substr[1..substr.len() - 1])?;
        // Each match becomes the replacement, whose `$n` references copy at most the
        // match again each: bound the result before building it.
        let refs = with.matches('$').count();
        let grown = re.find_iter(&s).fold(s.len(), |n, m| {
            n.saturating_add(with.len())
                .saturating_add(refs.saturating_mul(m.len()))
        });
        a.string_fits(grown)?;
        // `$1` / `${name}` references in the replacement work as in Go's ReplaceAllString.
        return string_result(re.replace_all(&s, with.as_str()).into_owned());
    }
    let matches = if substr.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(substr.as_str()).count()
    };
    a.string_fits(matches.saturating_mul(with.len()).saturating_add(s.len()))?;
    if substr.is_empty() {
        // Go inserts the replacement around every character for an empty search string.
        let mut out = with.clone();
        for c in s.chars() {
            out.push(c);
            out.push_str(&with);
        }
        return string_result(out);
    }
    string_result(s.replace(&substr, &with))
}

fn trim(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let cutset = a.string(1)?;
    string_result(s.trim_matches(|c| cutset.contains(c)))
}

fn trimprefix(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let prefix = a.string(1)?;
    string_result(s.strip_prefix(prefix.as_str()).unwrap_or(&s))
}

fn trimsuffix(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let suffix = a.string(1)?;
    string_result(s.strip_suffix(suffix.as_str()).unwrap_or(&s))
}

fn trimspace(a: &Args) -> Outcome<Value> {
    string_result(a.string(0)?.trim())
}

fn startswith(a: &Args) -> Outcome<Value> {
    Ok(Value::Bool(a.string(0)?.starts_with(a.string(1)?.as_str())))
}

fn endswith(a: &Args) -> Outcome<Value> {
    Ok(Value::Bool(a.string(0)?.ends_with(a.string(1)?.as_str())))
}

fn strcontains(a: &Args) -> Outcome<Value> {
    Ok(Value::Bool(a.string(0)?.contains(a.string(1)?.as_str())))
}

fn strrev(a: &Args) -> Outcome<Value> {
    string_result(a.string(0)?.graphemes(true).rev().collect::<String>())
}

/// Removes every trailing newline sequence (`\n`, `\r\n` or `\r`).
fn chomp(a: &Args) -> Outcome<Value> {
    string_result(a.string(0)?.trim_end_matches(['\n', '\r']))
}

/// Indents every line but the first, so the result can follow an indented heredoc marker.
fn indent(a: &Args) -> Outcome<Value> {
    let spaces = a.integer(0)?;
    let s = a.string(1)?;
    let spaces = usize::try_from(spaces).unwrap_or(0);
    let lines = s.matches('\n').count();
    a.string_fits(lines.saturating_mul(spaces).saturating_add(s.len()))?;
    // No line to indent: the width is never used, however large.
    let pad = " ".repeat(if lines == 0 { 0 } else { spaces });
    string_result(s.replace('\n', &format!("\n{pad}")))
}

/// `substr(str, offset, length)`: a negative offset counts from the end; a negative length
/// takes the rest of the string.
fn substr(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let offset = a.integer(1)?;
    let length = a.integer(2)?;
    let graphemes: Vec<&str> = s.graphemes(true).collect();
    let total = graphemes.len() as i64;
    let start = if offset < 0 {
        (total + offset).max(0)
    } else {
        offset.min(total)
    };
    let end = if length < 0 {
        total
    } else {
        (start + length).min(total)
    };
    let (start, end) = (start as usize, end as usize);
    string_result(graphemes[start..end].concat())
}

/// The value one match produces: the whole match without capture groups, a list of the
/// groups when they are unnamed, a map when they are named. A group that did not take part
/// in the match is null.
fn match_value(a: &Args, re: &Regex, caps: &regex::Captures) -> Outcome<Value> {
    let names: Vec<Option<&str>> = re.capture_names().skip(1).collect();
    if names.is_empty() {
        return Ok(caps
            .get(0)
            .map(|m| Value::from(m.as_str()))
            .unwrap_or(Value::Null));
    }
    let group = |i: usize| {
        caps.get(i)
            .map(|m| Value::from(m.as_str()))
            .unwrap_or(Value::Null)
    };
    let named = names.iter().filter(|n| n.is_some()).count();
    if named == 0 {
        return Ok(Value::List((1..=names.len()).map(group).collect()));
    }
    if named != names.len() {
        return Err(a.invalid(
            0,
            "invalid regexp pattern: cannot mix both named and unnamed capture groups",
        ));
    }
    let map: Object = names
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.map(|n| (n.to_string(), group(i + 1))))
        .collect();
    Ok(Value::object(map))
}

fn regex(a: &Args) -> Outcome<Value> {
    let re = compile(a, 0, &a.string(0)?)?;
    let s = a.string(1)?;
    match re.captures(&s) {
        Some(caps) => match_value(a, &re, &caps),
        None => Err(a.failed("pattern did not match any part of the given string")),
    }
}

fn regexall(a: &Args) -> Outcome<Value> {
    let re = compile(a, 0, &a.string(0)?)?;
    let s = a.string(1)?;
    let matches: Result<Vec<Value>, Fail> = re
        .captures_iter(&s)
        .map(|c| match_value(a, &re, &c))
        .collect();
    Ok(Value::List(matches?))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::value::Value;

    #[test]
    fn case() {
        assert_eq!(ok("upper", vec![s("héllo")]), s("HÉLLO"));
        assert_eq!(ok("lower", vec![s("HeLLo")]), s("hello"));
        assert_eq!(
            ok("title", vec![s("hello world-wide web_site")]),
            s("Hello World-Wide Web_site")
        );
        assert!(
            err("title", vec![obj(&[])])
                .message
                .contains("string required, got object")
        );
        assert!(
            err("lower", vec![Value::Null])
                .message
                .contains("must not be null")
        );
    }

    #[test]
    fn join_and_split() {
        assert_eq!(
            ok("join", vec![s(", "), strs(&["a", "b"]), list(vec![n(1)])]),
            s("a, b, 1")
        );
        assert_eq!(ok("join", vec![s(","), list(vec![])]), s(""));
        let e = err("join", vec![s(","), list(vec![s("a"), Value::Null])]);
        assert_eq!(
            e.message,
            "Invalid value for \"lists\" parameter: element 1 is null; cannot concatenate null values."
        );
        assert_eq!(e.arg, Some(1));
        assert_eq!(
            ok("split", vec![s(","), s("a,b,,c")]),
            strs(&["a", "b", "", "c"])
        );
        assert_eq!(ok("split", vec![s(","), s("")]), strs(&[""]));
        assert!(
            err("split", vec![s(","), list(vec![])])
                .message
                .contains("\"str\" parameter")
        );
    }

    #[test]
    fn replace_plain_and_regex() {
        assert_eq!(
            ok("replace", vec![s("1 + 2 + 3"), s("+"), s("-")]),
            s("1 - 2 - 3")
        );
        assert_eq!(
            ok(
                "replace",
                vec![s("hello world"), s("/w.*d/"), s("everybody")]
            ),
            s("hello everybody")
        );
        assert_eq!(
            ok("replace", vec![s("a-b"), s("/(a)-(b)/"), s("$2-$1")]),
            s("b-a")
        );
        assert_eq!(ok("replace", vec![s("a/b"), s("/"), s("_")]), s("a_b"));
        let e = err("replace", vec![s("x"), s("/(/"), s("y")]);
        assert_eq!(e.arg, Some(1));
        assert!(e.message.contains("error parsing pattern"), "{}", e.message);
    }

    #[test]
    fn trimming() {
        assert_eq!(ok("trim", vec![s("?!hello?!"), s("!?")]), s("hello"));
        assert_eq!(
            ok("trimprefix", vec![s("helloworld"), s("hello")]),
            s("world")
        );
        assert_eq!(
            ok("trimprefix", vec![s("helloworld"), s("cat")]),
            s("helloworld")
        );
        assert_eq!(
            ok("trimsuffix", vec![s("helloworld"), s("world")]),
            s("hello")
        );
        assert_eq!(ok("trimspace", vec![s("  hello\n\n")]), s("hello"));
        assert_eq!(ok("chomp", vec![s("hello\r\n\n")]), s("hello"));
        assert_eq!(ok("chomp", vec![s("a\nb")]), s("a\nb"));
        assert!(
            err("trim", vec![s("x"), list(vec![])])
                .message
                .contains("\"cutset\"")
        );
        assert!(
            err("trimspace", vec![list(vec![])])
                .message
                .contains("\"str\"")
        );
        assert!(err("chomp", vec![list(vec![])]).message.contains("\"str\""));
        assert!(
            err("trimprefix", vec![s("x"), list(vec![])])
                .message
                .contains("\"prefix\"")
        );
        assert!(
            err("trimsuffix", vec![s("x"), list(vec![])])
                .message
                .contains("\"suffix\"")
        );
    }

    #[test]
    fn substr_counts_graphemes() {
        assert_eq!(ok("substr", vec![s("hello world"), n(1), n(4)]), s("ello"));
        assert_eq!(ok("substr", vec![s("hello world"), n(-5), n(3)]), s("wor"));
        assert_eq!(ok("substr", vec![s("hello"), n(2), n(-1)]), s("llo"));
        assert_eq!(ok("substr", vec![s("hello"), n(10), n(2)]), s(""));
        assert_eq!(
            ok("substr", vec![s("e\u{301}tat"), n(0), n(1)]),
            s("e\u{301}")
        );
        assert_eq!(ok("strrev", vec![s("e\u{301}x")]), s("xe\u{301}"));
        assert!(
            err("substr", vec![s("x"), n(1), f(1.5)])
                .message
                .contains("\"length\"")
        );
        assert!(
            err("strrev", vec![list(vec![])])
                .message
                .contains("\"str\"")
        );
    }

    #[test]
    fn prefixes_and_indent() {
        assert_eq!(
            ok("startswith", vec![s("hello"), s("he")]),
            Value::Bool(true)
        );
        assert_eq!(
            ok("endswith", vec![s("hello"), s("he")]),
            Value::Bool(false)
        );
        assert_eq!(ok("indent", vec![n(2), s("a\nb\nc")]), s("a\n  b\n  c"));
        assert_eq!(
            ok("strcontains", vec![s("hello world"), s("o w")]),
            Value::Bool(true)
        );
        assert_eq!(
            ok("strcontains", vec![s("hello"), s("O")]),
            Value::Bool(false)
        );
        assert_eq!(ok("strcontains", vec![s("x"), s("")]), Value::Bool(true));
        assert!(
            err("startswith", vec![list(vec![]), s("x")])
                .message
                .contains("\"str\"")
        );
        assert!(
            err("endswith", vec![s("x"), list(vec![])])
                .message
                .contains("\"suffix\"")
        );
        assert!(
            err("indent", vec![s("two"), s("x")])
                .message
                .contains("\"spaces\"")
        );
    }

    #[test]
    fn regex_shapes() {
        assert_eq!(
            ok(
                "regex",
                vec![s("[a-z]+"), s("53453453.345345aaabbbccc23454")]
            ),
            s("aaabbbccc")
        );
        assert_eq!(
            ok(
                "regex",
                vec![s(r"(\d\d\d\d)-(\d\d)-(\d\d)"), s("2019-02-01")]
            ),
            strs(&["2019", "02", "01"])
        );
        assert_eq!(
            ok(
                "regex",
                vec![s(r"^(?P<user>[^@]+)@(?P<domain>.+)$"), s("me@example.com")]
            ),
            obj(&[("user", s("me")), ("domain", s("example.com"))])
        );
        assert_eq!(
            ok("regex", vec![s("(a)|(b)"), s("b")]),
            list(vec![Value::Null, s("b")])
        );
        let e = err("regex", vec![s("z"), s("abc")]);
        assert_eq!(
            e.message,
            "Call to function \"regex\" failed: pattern did not match any part of the given string."
        );
        assert!(
            err("regex", vec![s("(?P<a>x)(y)"), s("xy")])
                .message
                .contains("cannot mix")
        );
        assert_eq!(
            ok("regexall", vec![s("[a-z]+"), s("1234abcd5678efgh9")]),
            strs(&["abcd", "efgh"])
        );
        assert_eq!(ok("regexall", vec![s("z"), s("abc")]), list(vec![]));
        assert!(
            err("regexall", vec![s("["), s("x")])
                .message
                .contains("error parsing pattern")
        );
    }
}
