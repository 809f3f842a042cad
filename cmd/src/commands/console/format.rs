//! Values as `terraform console` prints them: strings quoted (a multi-line one as a heredoc),
//! lists and objects one element a line, object keys quoted and in name order, unknown values
//! as `(known after apply)`.

use brickform_core::value::Value;
use brickform_state::address::quote;

/// How `terraform console` shows a value that is not known until apply.
pub const UNKNOWN: &str = "(known after apply)";

/// How a value read from a sensitive one is shown (its value never reaches this module).
pub const SENSITIVE: &str = "(sensitive value)";

/// `v` as the console prints it.
pub fn render(v: &Value) -> String {
    let mut out = String::new();
    write(&mut out, v, 0);
    out
}

fn write(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Unknown => out.push_str(UNKNOWN),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => match heredoc(s, indent) {
            Some(h) => out.push_str(&h),
            None => out.push_str(&quote(s)),
        },
        Value::List(items) if items.is_empty() => out.push_str("[]"),
        Value::List(items) => {
            out.push('[');
            for item in items {
                newline(out, indent + 2);
                write(out, item, indent + 2);
                out.push(',');
            }
            newline(out, indent);
            out.push(']');
        }
        Value::Object(o) if o.is_empty() => out.push_str("{}"),
        Value::Object(o) => {
            // Terraform's maps and objects are ordered by key; so is what it prints.
            let mut entries: Vec<_> = o.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (k, item) in entries {
                newline(out, indent + 2);
                out.push_str(&quote(k));
                out.push_str(" = ");
                write(out, item, indent + 2);
            }
            newline(out, indent);
            out.push('}');
        }
    }
}

fn newline(out: &mut String, indent: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A string of several lines as Terraform's console writes it: `<<EOT`, each line, `EOT`
/// (`<<-EOT`, indented, inside a list or an object), the delimiter lengthened until no line
/// is it. `None` for one line, or for text with other control characters than tabs, which
/// only the quoted form can show safely.
fn heredoc(s: &str, indent: usize) -> Option<String> {
    if !s.contains('\n') || s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return None;
    }
    let lines: Vec<&str> = s.split('\n').collect();
    let mut delimiter = String::from("EOT");
    while lines.iter().any(|l| l.trim() == delimiter) {
        delimiter.push('_');
    }
    let mut out = String::from(if indent > 0 { "<<-" } else { "<<" });
    out.push_str(&delimiter);
    for line in &lines {
        newline(&mut out, indent);
        out.push_str(line);
    }
    newline(&mut out, indent);
    out.push_str(&delimiter);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use brickform_core::value::Object;

    fn obj(entries: &[(&str, Value)]) -> Value {
        Value::object(Object::from_iter(
            entries.iter().map(|(k, v)| (k.to_string(), v.clone())),
        ))
    }

    #[test]
    fn scalars() {
        assert_eq!(render(&Value::from("x")), "\"x\"");
        assert_eq!(render(&Value::from(7i64)), "7");
        assert_eq!(render(&Value::from_f64(3.5)), "3.5");
        assert_eq!(render(&Value::Bool(true)), "true");
        assert_eq!(render(&Value::Null), "null");
        assert_eq!(render(&Value::Unknown), "(known after apply)");
        assert_eq!(render(&Value::from("a\"b\\c")), r#""a\"b\\c""#);
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            render(&Value::from("\u{1b}[2J\u{0}\u{7f}\r\t")),
            r#""\u001b[2J\u0000\u007f\r\t""#
        );
        // A multi-line string with an escape sequence keeps the quoted form.
        assert_eq!(render(&Value::from("a\n\u{1b}")), r#""a\n\u001b""#);
    }

    #[test]
    fn collections_one_element_a_line() {
        let v = obj(&[
            ("name", Value::from("main")),
            (
                "b-key",
                Value::List(vec![Value::from(1i64), Value::Unknown]),
            ),
            ("a", obj(&[])),
            ("empty", Value::List(vec![])),
        ]);
        assert_eq!(
            render(&v),
            "{\n  \"a\" = {}\n  \"b-key\" = [\n    1,\n    (known after apply),\n  ]\n  \"empty\" = []\n  \"name\" = \"main\"\n}"
        );
    }

    #[test]
    fn several_lines_are_a_heredoc() {
        assert_eq!(render(&Value::from("a\nb")), "<<EOT\na\nb\nEOT");
        assert_eq!(render(&Value::from("EOT\nx\n")), "<<EOT_\nEOT\nx\n\nEOT_");
        assert_eq!(
            render(&Value::List(vec![Value::from("a\nb")])),
            "[\n  <<-EOT\n  a\n  b\n  EOT,\n]"
        );
    }
}
