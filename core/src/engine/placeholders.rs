//! Values that look like a template's unfilled placeholder (`<your-bucket>`, `__SET_ME__`,
//! `CHANGE_ME`): copied from an example and never filled in, they would be sent as they
//! are, and the service either refuses them far from where they were written or, worse,
//! takes them (an object named `<your-bucket>`). A warning names each one where it is.

use crate::provider::{Finding, FindingLevel};
use crate::value::{Object, PathStep, Value};
use regex::Regex;
use std::sync::LazyLock;

#[allow(clippy::expect_used)] // a constant pattern, checked by the tests
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<your[-_][^<>\s]+>|\b__SET_ME__\b|\bCHANGE_ME\b").expect("a valid pattern")
});

/// A warning for each string of `config` (nested ones too) holding a placeholder. Only the
/// placeholder is quoted, never the value around it, which may be sensitive.
pub(super) fn found(config: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    for (k, v) in config {
        path.push(PathStep::Key(k.clone()));
        walk(v, &mut path, &mut out);
        path.pop();
    }
    out
}

fn walk(v: &Value, path: &mut Vec<PathStep>, out: &mut Vec<Finding>) {
    match v {
        Value::String(s) => {
            if let Some(m) = PLACEHOLDER.find(s) {
                out.push(Finding {
                    level: FindingLevel::Warning,
                    path: path.clone(),
                    rule: None,
                    message: format!(
                        "{} holds {:?}, which looks like a placeholder that was never filled in",
                        shown(path),
                        m.as_str()
                    ),
                    hint: Some("replace it with the real value (a variable keeps it out of the configuration)".into()),
                });
            }
        }
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathStep::Index(i));
                walk(item, path, out);
                path.pop();
            }
        }
        Value::Object(o) => {
            for (k, item) in o.iter() {
                path.push(PathStep::Key(k.clone()));
                walk(item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn shown(path: &[PathStep]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            PathStep::Key(k) if s.is_empty() => s.push_str(k),
            PathStep::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            PathStep::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(config: Object) -> Vec<String> {
        found(&config).into_iter().map(|f| f.message).collect()
    }

    #[test]
    fn each_placeholder_is_named_at_its_path() {
        let mut nested = Object::default();
        nested.insert("path".into(), Value::from("/data/<your-bucket>/x"));
        let mut config = Object::default();
        config.insert("name".into(), Value::from("jobs"));
        config.insert("dependency".into(), Value::from("__SET_ME__"));
        config.insert(
            "task".into(),
            Value::List(vec![
                Value::Object(Default::default()),
                Value::object(nested),
            ]),
        );
        config.insert("owner".into(), Value::from("CHANGE_ME"));
        let found = messages(config);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(
            found
                .iter()
                .any(|m| m.starts_with("dependency holds \"__SET_ME__\"")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|m| m.starts_with("task[1].path holds \"<your-bucket>\"")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|m| m.starts_with("owner holds \"CHANGE_ME\"")),
            "{found:?}"
        );
    }

    #[test]
    fn ordinary_values_are_not_placeholders() {
        let mut config = Object::default();
        for (i, s) in [
            "<b>bold</b>",
            "your-bucket",
            "SET_ME",
            "change_me_later_x",
            "a <= b",
        ]
        .iter()
        .enumerate()
        {
            config.insert(format!("a{i}"), Value::from(*s));
        }
        assert_eq!(messages(config), Vec::<String>::new());
    }
}
