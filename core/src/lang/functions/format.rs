//! `format` and `formatlist`: printf-style formatting with Terraform's verbs, which are a
//! subset of Go's (`%v %#v %t %b %d %o %x %X %e %E %f %g %G %s %q`, flags `0#-+ `, width,
//! precision and `[n]` argument indexes). Numbers are formatted the way Go formats big
//! floats and ints, which is what Terraform hands them to.

use super::{Args, Fail, Outcome, Spec, encoding, parse_bool, parse_number, to_string_value};
use crate::value::Value;
use unicode_segmentation::UnicodeSegmentation;

pub(super) static FUNCTIONS: &[Spec] = &[
    Spec::range("format", &["format", "args"], 1, None, format),
    Spec::range("formatlist", &["format", "args"], 1, None, formatlist).custom_unknowns(),
];

fn format(a: &Args) -> Outcome<Value> {
    let fmt = a.string(0)?;
    render(a, &fmt, &a.all()[1..]).map(Value::String)
}

/// Formats once per element of the list arguments (which must share a length); other
/// arguments are repeated on every row. A row whose arguments contain an unknown value
/// yields an unknown element rather than making the whole list unknown.
fn formatlist(a: &Args) -> Outcome<Value> {
    let fmt = a.string(0)?;
    let rest = &a.all()[1..];
    let mut rows: Option<(usize, usize)> = None; // (length, index of the argument that set it)
    for (i, v) in rest.iter().enumerate() {
        match v {
            Value::Unknown => return Err(Fail::Unknown),
            Value::List(l) => match rows {
                None => rows = Some((l.len(), i)),
                Some((len, first)) if len != l.len() => {
                    return Err(a.invalid(
                        i + 1,
                        format_args!(
                            "argument {} has length {}, which is inconsistent with argument {} of length {len}",
                            i + 1,
                            l.len(),
                            first + 1
                        ),
                    ));
                }
                Some(_) => {}
            },
            _ => {}
        }
    }
    let count = rows.map_or(1, |(len, _)| len);
    let mut out = Vec::with_capacity(count);
    let mut total = 0usize;
    for row in 0..count {
        let row_args: Vec<Value> = rest
            .iter()
            .map(|v| match v {
                Value::List(l) => l[row].clone(),
                v => v.clone(),
            })
            .collect();
        if row_args.iter().any(Value::contains_unknown) {
            out.push(Value::Unknown);
        } else {
            let row = render(a, &fmt, &row_args)?;
            // The rows together are held at once: bound them as one string.
            total = total.saturating_add(row.len());
            a.string_fits(total)?;
            out.push(Value::String(row));
        }
    }
    Ok(Value::List(out))
}

const MAX_WIDTH: usize = 1_000_000;

#[derive(Default)]
struct Verb<'s> {
    raw: &'s str,
    offset: usize,
    arg: usize,
    mode: char,
    sharp: bool,
    zero: bool,
    minus: bool,
    plus: bool,
    space: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// Reads a run of decimal digits starting at `*i`.
fn digits(chars: &[(usize, char)], i: &mut usize) -> usize {
    let mut n = 0usize;
    while let Some(&(_, c)) = chars.get(*i) {
        let Some(d) = c.to_digit(10) else { break };
        n = n.saturating_mul(10).saturating_add(d as usize);
        *i += 1;
    }
    n
}

/// Errors from the format string itself belong to the "format" parameter (argument 0).
fn render(a: &Args, fmt: &str, args: &[Value]) -> Outcome<String> {
    let chars: Vec<(usize, char)> = fmt.char_indices().collect();
    let mut out = String::with_capacity(fmt.len());
    let mut next_arg = 1;
    let mut highest = 0;
    let mut i = 0;
    while let Some(&(start, c)) = chars.get(i) {
        i += 1;
        // Each verb adds at most its width (limited above) or its argument, so checking
        // as the text grows stops `%1000000d` repeated before it exhausts memory.
        a.string_fits(out.len())?;
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.get(i).is_some_and(|&(_, c)| c == '%') {
            out.push('%');
            i += 1;
            continue;
        }
        let mut verb = Verb {
            offset: start,
            arg: next_arg,
            ..Verb::default()
        };
        while let Some(&(_, c)) = chars.get(i) {
            match c {
                '0' => verb.zero = true,
                '#' => verb.sharp = true,
                '-' => verb.minus = true,
                '+' => verb.plus = true,
                ' ' => verb.space = true,
                _ => break,
            }
            i += 1;
        }
        if chars.get(i).is_some_and(|&(_, c)| c.is_ascii_digit()) {
            verb.width = Some(digits(&chars, &mut i));
        }
        if chars.get(i).is_some_and(|&(_, c)| c == '.') {
            i += 1;
            verb.prec = Some(digits(&chars, &mut i));
        }
        if chars.get(i).is_some_and(|&(_, c)| c == '[') {
            i += 1;
            verb.arg = digits(&chars, &mut i);
            match chars.get(i) {
                Some(&(_, ']')) if verb.arg > 0 => i += 1,
                Some(&(p, c)) => {
                    return Err(a.invalid(
                        0,
                        format_args!("unrecognized format character {c:?} at offset {p}"),
                    ));
                }
                None => {
                    return Err(a.invalid(
                        0,
                        format_args!("invalid format string starting at offset {start}"),
                    ));
                }
            }
        }
        match chars.get(i) {
            Some(&(p, c)) if c.is_ascii_alphabetic() => {
                verb.mode = c;
                verb.raw = &fmt[start..p + 1];
                i += 1;
            }
            Some(&(p, c)) => {
                return Err(a.invalid(
                    0,
                    format_args!("unrecognized format character {c:?} at offset {p}"),
                ));
            }
            None => {
                return Err(a.invalid(
                    0,
                    format_args!("invalid format string starting at offset {start}"),
                ));
            }
        }
        // Go rejects widths and precisions this large too; they would only allocate.
        if verb.width.max(verb.prec).is_some_and(|n| n > MAX_WIDTH) {
            return Err(a.invalid(
                0,
                format_args!(
                    "width or precision too large in {:?} at offset {start}",
                    verb.raw
                ),
            ));
        }
        highest = highest.max(verb.arg);
        next_arg = verb.arg + 1;
        append(a, &verb, args, &mut out)?;
    }
    if highest < args.len() {
        let reason = if highest == 0 {
            "too many arguments; no verbs in format string".to_string()
        } else {
            format!("too many arguments; only {highest} used by format string")
        };
        return Err(a.invalid(highest + 1, reason));
    }
    Ok(out)
}

fn append(a: &Args, verb: &Verb, args: &[Value], out: &mut String) -> Outcome<()> {
    let unsupported = |why: &str| {
        a.failed(format_args!(
            "unsupported value for {:?} at {}: {why}",
            verb.raw, verb.offset
        ))
    };
    let Some(arg) = args.get(verb.arg - 1) else {
        return Err(a.failed(format_args!(
            "not enough arguments for {:?} at {}: need index {} but have {} total",
            verb.raw,
            verb.offset,
            verb.arg,
            args.len()
        )));
    };
    if verb.mode != 'v' && arg.is_null() {
        return Err(unsupported("null value cannot be formatted"));
    }
    match verb.mode {
        'v' => {
            let text = match arg {
                Value::String(s) if !verb.sharp => s.clone(),
                Value::Number(n) if !verb.sharp => go_float(n.as_f64().unwrap_or(0.0), 'g', None),
                v => encoding::json_string(v),
            };
            out.push_str(&pad(verb, &text));
        }
        't' => {
            let b = match arg {
                Value::Bool(b) => *b,
                Value::String(s) => {
                    parse_bool(s).ok_or_else(|| unsupported("a bool is required"))?
                }
                _ => return Err(unsupported("bool required")),
            };
            out.push_str(if b { "true" } else { "false" });
        }
        'b' | 'd' | 'o' | 'x' | 'X' => {
            let f = number_arg(arg).ok_or_else(|| unsupported("a number is required"))?;
            if f.fract() != 0.0 || !f.is_finite() || f.abs() >= 1.0e38 {
                return Err(unsupported("an integer is required"));
            }
            out.push_str(&go_int(verb, f as i128));
        }
        'e' | 'E' | 'f' | 'g' | 'G' => {
            let f = number_arg(arg).ok_or_else(|| unsupported("a number is required"))?;
            let prec = verb.prec.or(if matches!(verb.mode, 'g' | 'G') {
                None
            } else {
                Some(6)
            });
            out.push_str(&pad_number(
                verb,
                f < 0.0,
                &go_float(f.abs(), verb.mode, prec),
            ));
        }
        's' | 'q' => {
            let mut s = to_string_value(arg).ok_or_else(|| unsupported("string required"))?;
            if let Some(p) = verb.prec.filter(|p| *p > 0) {
                s = s.graphemes(true).take(p).collect();
            }
            if verb.mode == 'q' {
                s = encoding::json_string(&Value::String(s));
            }
            out.push_str(&pad(verb, &s));
        }
        m => {
            return Err(a.invalid(
                0,
                format_args!(
                    "unsupported format verb {m:?} in {:?} at offset {}",
                    verb.raw, verb.offset
                ),
            ));
        }
    }
    Ok(())
}

fn number_arg(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => parse_number(s),
        _ => None,
    }
}

/// Pads to the verb's width, counted in grapheme clusters.
fn pad(verb: &Verb, text: &str) -> String {
    let len = text.graphemes(true).count();
    let Some(width) = verb.width.filter(|w| *w > len) else {
        return text.to_string();
    };
    let fill = if verb.zero { "0" } else { " " }.repeat(width - len);
    if verb.minus {
        format!("{text}{fill}")
    } else {
        format!("{fill}{text}")
    }
}

/// Go's `big.Float` padding: the sign stays in front of zero padding.
fn pad_number(verb: &Verb, negative: bool, body: &str) -> String {
    let sign = if negative {
        "-"
    } else if verb.plus {
        "+"
    } else if verb.space {
        " "
    } else {
        ""
    };
    let len = sign.len() + body.len();
    let padding = verb.width.map_or(0, |w| w.saturating_sub(len));
    if verb.zero {
        format!("{sign}{}{body}", "0".repeat(padding))
    } else if verb.minus {
        format!("{sign}{body}{}", " ".repeat(padding))
    } else {
        format!("{}{sign}{body}", " ".repeat(padding))
    }
}

/// Go's `big.Int` formatting for `%b %d %o %x %X`.
fn go_int(verb: &Verb, n: i128) -> String {
    let mag = n.unsigned_abs();
    let mut digits = match verb.mode {
        'b' => format!("{mag:b}"),
        'o' => format!("{mag:o}"),
        'x' => format!("{mag:x}"),
        'X' => format!("{mag:X}"),
        _ => mag.to_string(),
    };
    let sign = if n < 0 {
        "-"
    } else if verb.plus {
        "+"
    } else if verb.space {
        " "
    } else {
        ""
    };
    let prefix = match (verb.sharp, verb.mode) {
        (true, 'b') => "0b",
        (true, 'o') => "0",
        (true, 'x') => "0x",
        (true, 'X') => "0X",
        _ => "",
    };
    let mut zeros = 0;
    if let Some(p) = verb.prec {
        if digits.len() < p {
            zeros = p - digits.len();
        } else if digits == "0" && p == 0 {
            return String::new();
        }
    }
    let len = sign.len() + prefix.len() + zeros + digits.len();
    let (mut left, mut right) = (0, 0);
    if let Some(w) = verb.width.filter(|w| *w > len) {
        let d = w - len;
        if verb.minus {
            right = d;
        } else if verb.zero && verb.prec.is_none() {
            zeros = d;
        } else {
            left = d;
        }
    }
    digits.insert_str(0, &"0".repeat(zeros));
    format!(
        "{}{sign}{prefix}{digits}{}",
        " ".repeat(left),
        " ".repeat(right)
    )
}

/// Formats a non-negative float like Go's `big.Float.Text(mode, prec)`; `prec` of `None`
/// means the shortest representation that round-trips.
pub(super) fn go_float(f: f64, mode: char, prec: Option<usize>) -> String {
    let upper = mode.is_ascii_uppercase();
    let s = match mode.to_ascii_lowercase() {
        'f' => format!("{:.*}", prec.unwrap_or(6), f),
        'e' => go_exponent(&format!("{:.*e}", prec.unwrap_or(6), f)),
        _ => go_general(f, prec),
    };
    if upper { s.to_uppercase() } else { s }
}

/// Rewrites Rust's exponent suffix (`e6`, `e-7`) into Go's (`e+06`, `e-07`).
fn go_exponent(rust: &str) -> String {
    let Some((mantissa, exp)) = rust.split_once('e') else {
        return rust.to_string();
    };
    let (sign, digits) = match exp.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exp),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// Go's `%g`: exponent form when the exponent is below -4 or at least the precision (6 for
/// the shortest representation), otherwise plain, without trailing zeros.
fn go_general(f: f64, prec: Option<usize>) -> String {
    if f == 0.0 {
        return "0".to_string();
    }
    let sci = match prec {
        Some(p) => format!("{:.*e}", p.max(1) - 1, f),
        None => format!("{f:e}"),
    };
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return sci;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let mant_digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mant_digits = mant_digits.trim_end_matches('0');
    let mant_digits = if mant_digits.is_empty() {
        "0"
    } else {
        mant_digits
    };
    let eprec = match prec {
        None => 6,
        Some(p) => {
            let p = p.max(1) as i32;
            let nd = mant_digits.len() as i32;
            if p > nd && nd > exp { nd } else { p }
        }
    };
    if exp < -4 || exp >= eprec {
        let (first, rest) = mant_digits.split_at(1);
        let body = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        return go_exponent(&format!("{body}e{exp}"));
    }
    // Plain notation with exactly the significant digits.
    let decimals = (mant_digits.len() as i32 - exp - 1).max(0) as usize;
    format!("{f:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::value::Value;

    fn fmt(f: &str, args: Vec<Value>) -> Value {
        let mut all = vec![s(f)];
        all.extend(args);
        ok("format", all)
    }

    #[test]
    fn verbs() {
        assert_eq!(fmt("Hello, %s!", vec![s("Ander")]), s("Hello, Ander!"));
        assert_eq!(
            fmt("There are %d lights", vec![n(4)]),
            s("There are 4 lights")
        );
        assert_eq!(fmt("%d", vec![s("12")]), s("12"));
        assert_eq!(fmt("%.2f", vec![f(2.34567)]), s("2.35"));
        assert_eq!(fmt("%f", vec![n(1)]), s("1.000000"));
        assert_eq!(fmt("%8.3f|", vec![f(-2.34567)]), s("  -2.346|"));
        assert_eq!(fmt("%08.3f", vec![f(-2.34567)]), s("-002.346"));
        assert_eq!(fmt("%e", vec![n(1000000)]), s("1.000000e+06"));
        assert_eq!(
            fmt("%g %g %g", vec![f(0.5), n(100000), n(1000000)]),
            s("0.5 100000 1e+06")
        );
        assert_eq!(fmt("%.3g", vec![f(2.34567)]), s("2.35"));
        assert_eq!(fmt("%q", vec![s("a\"b<")]), s("\"a\\\"b\\u003c\""));
        assert_eq!(
            fmt("%v %v %v", vec![s("x"), n(3), Value::Bool(true)]),
            s("x 3 true")
        );
        assert_eq!(
            fmt("%v", vec![obj(&[("b", n(1)), ("a", strs(&["x"]))])]),
            s(r#"{"a":["x"],"b":1}"#)
        );
        assert_eq!(fmt("%#v", vec![s("x")]), s("\"x\""));
        assert_eq!(fmt("%v", vec![Value::Null]), s("null"));
        assert_eq!(fmt("%t", vec![s("true")]), s("true"));
        assert_eq!(fmt("100%%", vec![]), s("100%"));
        assert_eq!(
            fmt("%x %X %o %b %#x", vec![n(255), n(255), n(8), n(5), n(255)]),
            s("ff FF 10 101 0xff")
        );
    }

    #[test]
    fn width_precision_and_indexes() {
        assert_eq!(fmt("%5s|%-5s|", vec![s("ab"), s("cd")]), s("   ab|cd   |"));
        assert_eq!(fmt("%.3s", vec![s("abcdef")]), s("abc"));
        assert_eq!(
            fmt("%05d|%+d|%-4d|%.3d", vec![n(42), n(7), n(1), n(5)]),
            s("00042|+7|1   |005")
        );
        assert_eq!(fmt("%[2]s %[1]s %s", vec![s("a"), s("b")]), s("b a b"));
    }

    #[test]
    fn errors() {
        let e = err("format", vec![s("%d %d"), n(1)]);
        assert_eq!(
            e.message,
            "Call to function \"format\" failed: not enough arguments for \"%d\" at 3: need index 2 but have 1 total."
        );
        let e = err("format", vec![s("%d"), n(1), n(2)]);
        assert_eq!(
            e.message,
            "Invalid value for \"args\" parameter: too many arguments; only 1 used by format string."
        );
        assert_eq!(e.arg, Some(2));
        assert!(
            err("format", vec![s("x"), n(1)])
                .message
                .contains("no verbs in format string")
        );
        assert!(
            err("format", vec![s("%d"), f(1.5)])
                .message
                .contains("an integer is required")
        );
        assert!(
            err("format", vec![s("%d"), s("x")])
                .message
                .contains("a number is required")
        );
        assert!(
            err("format", vec![s("%s"), Value::Null])
                .message
                .contains("null value cannot be formatted")
        );
        assert!(
            err("format", vec![s("%z"), n(1)])
                .message
                .contains("unsupported format verb 'z'")
        );
        assert!(
            err("format", vec![s("abc %"), n(1)])
                .message
                .contains("invalid format string starting at offset 4")
        );
        assert!(
            err("format", vec![s("%!"), n(1)])
                .message
                .contains("unrecognized format character '!'")
        );
    }

    #[test]
    fn unknowns() {
        assert_eq!(fmt("%s", vec![Value::Unknown]), Value::Unknown);
        assert_eq!(
            ok(
                "formatlist",
                vec![
                    s("%s-%s"),
                    strs(&["a", "b"]),
                    list(vec![s("x"), Value::Unknown])
                ]
            ),
            list(vec![s("a-x"), Value::Unknown])
        );
        assert_eq!(
            ok("formatlist", vec![s("%s"), Value::Unknown]),
            Value::Unknown
        );
    }

    #[test]
    fn formatlist_rows() {
        assert_eq!(
            ok(
                "formatlist",
                vec![s("Hello, %s!"), strs(&["Valentina", "Ander"])]
            ),
            strs(&["Hello, Valentina!", "Hello, Ander!"])
        );
        assert_eq!(
            ok(
                "formatlist",
                vec![
                    s("%s, %s!"),
                    s("Salutations"),
                    strs(&["Valentina", "Ander"])
                ]
            ),
            strs(&["Salutations, Valentina!", "Salutations, Ander!"])
        );
        assert_eq!(ok("formatlist", vec![s("x")]), strs(&["x"]));
        let e = err(
            "formatlist",
            vec![s("%s%s"), strs(&["a"]), strs(&["a", "b"])],
        );
        assert_eq!(
            e.message,
            "Invalid value for \"args\" parameter: argument 2 has length 2, which is inconsistent with argument 1 of length 1."
        );
    }
}
