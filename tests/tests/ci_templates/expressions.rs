//! Expressions, as far as the templates write them: GitHub Actions' (`${{ … }}`, `if:`):
//! contexts, literals, ==, !=, !, &&, ||, parentheses; and GitLab's `rules: if:`, rewritten
//! to the same grammar.

use serde_json::{Value, json};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Path(String),
    Lit(Value),
    Op(&'static str),
    Open,
    Close,
}

fn tokens(expr: &str) -> Vec<Tok> {
    let c: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                assert!(i < c.len(), "unterminated string in {expr}");
                if c[i] == '\'' {
                    if c.get(i + 1) == Some(&'\'') {
                        s.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                s.push(c[i]);
                i += 1;
            }
            out.push(Tok::Lit(Value::String(s)));
        } else if ch == '(' {
            out.push(Tok::Open);
            i += 1;
        } else if ch == ')' {
            out.push(Tok::Close);
            i += 1;
        } else if let Some(op) = match (ch, c.get(i + 1)) {
            ('=', Some('=')) => Some("=="),
            ('!', Some('=')) => Some("!="),
            ('&', Some('&')) => Some("&&"),
            ('|', Some('|')) => Some("||"),
            _ => None,
        } {
            out.push(Tok::Op(op));
            i += 2;
        } else if ch == '!' {
            out.push(Tok::Op("!"));
            i += 1;
        } else if ch.is_ascii_digit() {
            let start = i;
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                i += 1;
            }
            let n: f64 = c[start..i].iter().collect::<String>().parse().unwrap();
            out.push(Tok::Lit(json!(n)));
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || "_-.".contains(c[i])) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            assert!(
                c.get(i) != Some(&'('),
                "the test does not evaluate functions: {expr}"
            );
            out.push(match word.as_str() {
                "true" => Tok::Lit(json!(true)),
                "false" => Tok::Lit(json!(false)),
                "null" => Tok::Lit(Value::Null),
                _ => Tok::Path(word),
            });
        } else {
            panic!("the test does not evaluate {ch:?} in {expr}");
        }
    }
    out
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap(),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// GitHub's loose equality: strings case-insensitively, other types as numbers.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.eq_ignore_ascii_case(y),
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => a == b,
        _ => number(a) == number(b),
    }
}

struct Parser<'a> {
    toks: Vec<Tok>,
    at: usize,
    ctx: &'a Value,
    /// GitLab's equality: exact, an undefined variable (null) equal to null only.
    exact: bool,
}

impl<'a> Parser<'a> {
    fn new(expr: &str, ctx: &'a Value, exact: bool) -> Parser<'a> {
        Parser {
            toks: tokens(expr),
            at: 0,
            ctx,
            exact,
        }
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn or(&mut self) -> Value {
        let mut v = self.and();
        while self.peek() == Some(&Tok::Op("||")) {
            self.at += 1;
            let r = self.and();
            if !truthy(&v) {
                v = r;
            }
        }
        v
    }
    fn and(&mut self) -> Value {
        let mut v = self.cmp();
        while self.peek() == Some(&Tok::Op("&&")) {
            self.at += 1;
            let r = self.cmp();
            if truthy(&v) {
                v = r;
            }
        }
        v
    }
    fn cmp(&mut self) -> Value {
        let v = self.unary();
        match self.peek() {
            Some(Tok::Op(op @ ("==" | "!="))) => {
                let eq = *op == "==";
                self.at += 1;
                let r = self.unary();
                let same = if self.exact { v == r } else { equal(&v, &r) };
                json!(same == eq)
            }
            _ => v,
        }
    }
    fn unary(&mut self) -> Value {
        match self.peek().cloned() {
            Some(Tok::Op("!")) => {
                self.at += 1;
                json!(!truthy(&self.unary()))
            }
            Some(Tok::Open) => {
                self.at += 1;
                let v = self.or();
                assert_eq!(self.peek(), Some(&Tok::Close));
                self.at += 1;
                v
            }
            Some(Tok::Lit(v)) => {
                self.at += 1;
                v
            }
            Some(Tok::Path(p)) => {
                self.at += 1;
                let mut v = self.ctx;
                for part in p.split('.') {
                    v = v.get(part).unwrap_or(&Value::Null);
                }
                v.clone()
            }
            t => panic!("unexpected {t:?} in an expression"),
        }
    }
}

fn eval(expr: &str, ctx: &Value) -> Value {
    let mut p = Parser::new(expr, ctx, false);
    let v = p.or();
    assert_eq!(p.at, p.toks.len(), "trailing tokens in {expr}");
    v
}

pub fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// A YAML value with its `${{ … }}` replaced, as text.
pub fn interpolate(v: &Value, ctx: &Value) -> String {
    let s = text(v);
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("a closing }}") + start;
        out.push_str(&text(&eval(&rest[start + 3..end], ctx)));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// An `if:`, with or without `${{ }}`.
pub fn condition(v: &Value, ctx: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => {
            let s = s.trim();
            let inner = s
                .strip_prefix("${{")
                .and_then(|s| s.strip_suffix("}}"))
                .unwrap_or(s);
            truthy(&eval(inner, ctx))
        }
        other => panic!("if: {other}"),
    }
}

/// A `rules: if:` of GitLab: `$VAR`, "strings", ==, !=, &&, ||, parentheses.
pub fn gitlab_if(expr: &str, vars: &BTreeMap<String, String>) -> bool {
    // Rewritten to the GitHub grammar above: $VAR becomes a path into `vars`, "s" 's'.
    let mut rewritten = String::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_alphanumeric() || n == '_' {
                        name.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                rewritten.push_str(&format!("vars.{name}"));
            }
            '"' => {
                rewritten.push('\'');
                for n in chars.by_ref() {
                    if n == '"' {
                        break;
                    }
                    rewritten.push(n);
                }
                rewritten.push('\'');
            }
            c => rewritten.push(c),
        }
    }
    let ctx = json!({"vars": vars});
    truthy(&Parser::new(&rewritten, &ctx, true).or())
}
