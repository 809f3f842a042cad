//! Numeric functions. Whole results stay integers (`Value::from_f64`), so `max(1, 2)` is
//! `2`, not `2.0`, in plans and in JSON.

use super::{Args, Outcome, Spec, parse_number};
use crate::value::Value;

pub(super) static FUNCTIONS: &[Spec] = &[
    Spec::fixed("abs", &["num"], abs),
    Spec::fixed("ceil", &["num"], ceil),
    Spec::fixed("floor", &["num"], floor),
    Spec::fixed("log", &["num", "base"], log),
    Spec::range("max", &["numbers"], 1, None, max),
    Spec::range("min", &["numbers"], 1, None, min),
    Spec::fixed("parseint", &["number", "base"], parseint),
    Spec::fixed("pow", &["num", "power"], pow),
    Spec::fixed("signum", &["num"], signum),
    Spec::fixed("sum", &["list"], sum),
];

fn unary(a: &Args, f: fn(f64) -> f64) -> Outcome<Value> {
    Ok(Value::from_f64(f(a.number(0)?)))
}

fn abs(a: &Args) -> Outcome<Value> {
    unary(a, f64::abs)
}

fn ceil(a: &Args) -> Outcome<Value> {
    unary(a, f64::ceil)
}

fn floor(a: &Args) -> Outcome<Value> {
    unary(a, f64::floor)
}

fn signum(a: &Args) -> Outcome<Value> {
    unary(a, |x| if x == 0.0 { 0.0 } else { x.signum() })
}

fn pow(a: &Args) -> Outcome<Value> {
    let r = a.number(0)?.powf(a.number(1)?);
    finite(a, r)
}

fn log(a: &Args) -> Outcome<Value> {
    let r = a.number(0)?.log(a.number(1)?);
    finite(a, r)
}

fn finite(a: &Args, r: f64) -> Outcome<Value> {
    if r.is_finite() {
        Ok(Value::from_f64(r))
    } else {
        Err(a.failed("the result is not a finite number"))
    }
}

fn extreme(a: &Args, pick_first: fn(f64, f64) -> bool) -> Outcome<Value> {
    let mut best = a.number(0)?;
    for i in 1..a.len() {
        let x = a.number(i)?;
        if pick_first(x, best) {
            best = x;
        }
    }
    Ok(Value::from_f64(best))
}

fn max(a: &Args) -> Outcome<Value> {
    extreme(a, |x, best| x > best)
}

fn min(a: &Args) -> Outcome<Value> {
    extreme(a, |x, best| x < best)
}

/// Sums in integers while every element is one (no float rounding on large counts).
fn sum(a: &Args) -> Outcome<Value> {
    let list = a.list(0)?;
    if list.is_empty() {
        return Err(a.invalid(0, "cannot sum an empty list"));
    }
    let mut int_total: Option<i64> = Some(0);
    let mut total = 0.0;
    for (n, v) in list.iter().enumerate() {
        let x = match v {
            Value::Number(num) => {
                int_total = int_total.and_then(|t| num.as_i64().and_then(|i| t.checked_add(i)));
                num.as_f64()
            }
            Value::String(s) => {
                int_total = None;
                parse_number(s)
            }
            _ => None,
        };
        let Some(x) = x else {
            return Err(a.invalid(
                0,
                format_args!("element {n}: number required, got {}", v.type_name()),
            ));
        };
        total += x;
    }
    Ok(int_total
        .map(Value::from_i64)
        .unwrap_or_else(|| Value::from_f64(total)))
}

/// Go's `big.Int.SetString` digits: 0-9, then a-z, then (for bases above 36) A-Z.
fn digit_value(c: char, base: u32) -> Option<u32> {
    let v = match c {
        '0'..='9' => c as u32 - '0' as u32,
        'a'..='z' => c as u32 - 'a' as u32 + 10,
        'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
        'A'..='Z' => c as u32 - 'A' as u32 + 36,
        _ => return None,
    };
    (v < base).then_some(v)
}

fn parseint(a: &Args) -> Outcome<Value> {
    let s = a.string(0)?;
    let base = a.integer(1)?;
    if !(2..=62).contains(&base) {
        return Err(a.invalid(1, "base must be a whole number between 2 and 62 inclusive"));
    }
    let base = base as u32;
    let cannot = || {
        a.invalid(
            0,
            format_args!(
                "cannot parse {} as a base {base} integer",
                crate::value::quote(&s)
            ),
        )
    };
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(&s)),
    };
    if digits.is_empty() {
        return Err(cannot());
    }
    let mut n: i128 = 0;
    for c in digits.chars() {
        let d = digit_value(c, base).ok_or_else(cannot)?;
        n = n
            .checked_mul(base as i128)
            .and_then(|n| n.checked_add(d as i128))
            .ok_or_else(|| a.invalid(0, "the number is too large"))?;
    }
    let n = if negative { -n } else { n };
    Ok(match i64::try_from(n) {
        Ok(i) => Value::from_i64(i),
        Err(_) => match u64::try_from(n) {
            Ok(u) => Value::Number(u.into()),
            Err(_) => Value::from_f64(n as f64),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::value::Value;

    #[test]
    fn basics() {
        assert_eq!(ok("abs", vec![n(-12)]), n(12));
        assert_eq!(ok("abs", vec![f(-12.4)]), f(12.4));
        assert_eq!(ok("ceil", vec![f(5.1)]), n(6));
        assert_eq!(ok("floor", vec![f(-5.1)]), n(-6));
        assert_eq!(ok("signum", vec![n(-13)]), n(-1));
        assert_eq!(ok("signum", vec![n(0)]), n(0));
        assert_eq!(ok("pow", vec![n(3), n(2)]), n(9));
        assert_eq!(ok("pow", vec![n(4), f(0.5)]), n(2));
        assert_eq!(ok("log", vec![n(16), n(2)]), n(4));
        assert!(
            err("ceil", vec![Value::Bool(true)])
                .message
                .contains("\"num\" parameter: number required, got bool")
        );
        assert!(
            err("floor", vec![strs(&[])])
                .message
                .contains("number required")
        );
        assert!(
            err("signum", vec![s("z")])
                .message
                .contains("cannot convert")
        );
        assert!(err("pow", vec![n(1), s("z")]).message.contains("\"power\""));
        assert!(
            err("log", vec![n(0), n(1)])
                .message
                .contains("not a finite number")
        );
    }

    #[test]
    fn extremes_and_sum() {
        assert_eq!(ok("max", vec![n(12), n(54), n(3)]), n(54));
        assert_eq!(ok("min", vec![n(12), f(-0.5), s("3")]), f(-0.5));
        assert!(
            err("max", vec![])
                .message
                .contains("expects at least 1 argument")
        );
        assert!(
            err("min", vec![n(1), s("x")])
                .message
                .contains("\"numbers\" parameter")
        );
        assert_eq!(ok("sum", vec![list(vec![n(10), n(13), n(6)])]), n(29));
        assert_eq!(ok("sum", vec![list(vec![f(0.5), f(0.25)])]), f(0.75));
        assert!(
            err("sum", vec![list(vec![])])
                .message
                .contains("cannot sum an empty list")
        );
        assert!(
            err("sum", vec![list(vec![s("x")])])
                .message
                .contains("element 0: number required")
        );
        assert_eq!(ok("max", vec![n(1), Value::Unknown]), Value::Unknown);
    }

    #[test]
    fn parse_int() {
        assert_eq!(ok("parseint", vec![s("100"), n(10)]), n(100));
        assert_eq!(ok("parseint", vec![s("FF"), n(16)]), n(255));
        assert_eq!(ok("parseint", vec![s("-10"), n(2)]), n(-2));
        assert_eq!(ok("parseint", vec![s("zZ"), n(62)]), n(35 * 62 + 61));
        assert_eq!(
            err("parseint", vec![s("12"), n(2)]).message,
            "Invalid value for \"number\" parameter: cannot parse \"12\" as a base 2 integer."
        );
        assert!(
            err("parseint", vec![s("1"), n(63)])
                .message
                .contains("between 2 and 62")
        );
    }
}
