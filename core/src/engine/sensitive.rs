//! Values derived from sensitive ones (`comment = "copy of ${var.pw}"`): the configuration
//! decoder reports their paths, state keeps only their fingerprints, and plans never hold
//! their cleartext. Here: putting such a value back into the last applied configuration when
//! the configured value still matches its fingerprint (so the plan converges), and taking
//! them out of what a plan carries.

use crate::plan::diff::Prior;
use crate::plan::model::{FieldChange, SerValue};
use crate::provider::Schema;
use crate::value::{Object, PathStep, Value};

/// A state path (`task.0.token`, dot-separated, list indexes as numbers) as steps.
fn steps(dotted: &str) -> Vec<PathStep> {
    dotted
        .split('.')
        .map(|s| match s.parse::<usize>() {
            Ok(i) => PathStep::Index(i),
            Err(_) => PathStep::Key(s.to_string()),
        })
        .collect()
}

fn get<'a>(o: &'a Object, path: &[PathStep]) -> Option<&'a Value> {
    let (PathStep::Key(head), rest) = path.split_first()? else {
        return None;
    };
    o.get(head)?.get_path(rest)
}

/// Sets the leaf at `path` where its parent exists.
fn set(o: &mut Object, path: &[PathStep], v: Value) {
    let Some((PathStep::Key(head), rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        o.insert(head.clone(), v);
        return;
    }
    let Some(mut cur) = o.get_mut(head) else {
        return;
    };
    for (i, step) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        cur = match (step, cur) {
            (PathStep::Key(k), Value::Object(m)) if last => {
                m.insert(k.clone(), v);
                return;
            }
            (PathStep::Index(n), Value::List(l)) if last => {
                if let Some(slot) = l.get_mut(*n) {
                    *slot = v;
                }
                return;
            }
            (PathStep::Key(k), Value::Object(m)) => match m.get_mut(k) {
                Some(c) => c,
                None => return,
            },
            (PathStep::Index(n), Value::List(l)) => match l.get_mut(*n) {
                Some(c) => c,
                None => return,
            },
            _ => return,
        };
    }
}

/// Puts derived sensitive values back into `prior` where the configuration's value matches
/// the stored fingerprint: state does not hold them, but an unchanged one is no change. A
/// value that no longer matches stays absent, so it shows as changed (and hidden).
/// Attributes the schema marks sensitive (write-only) are compared by fingerprint by the
/// diff itself and are left alone.
pub(super) fn restore(
    prior: &mut Prior,
    config: &Object,
    schema: &Schema,
    matches: &dyn Fn(&Value, &str) -> bool,
) {
    for (dotted, fp) in &prior.sensitive {
        let path = steps(dotted);
        if let [PathStep::Key(k)] = path.as_slice()
            && schema.attribute(k).is_some_and(|a| a.sensitive)
        {
            continue;
        }
        let Some(v) = get(config, &path).filter(|v| v.is_wholly_known()) else {
            continue;
        };
        if matches(v, fp) {
            let v = v.clone();
            set(&mut prior.config, &path, v.clone());
            if get(&prior.computed, &path[..path.len().saturating_sub(1)]).is_some()
                || path.len() == 1
            {
                set(&mut prior.computed, &path, v);
            }
        }
    }
}

/// Nulls every value at `paths` (nested ones included) in an object a plan carries.
pub(super) fn redact_object(o: &mut Object, paths: &[Vec<PathStep>]) {
    for p in paths {
        if get(o, p).is_some_and(|v| !v.is_null()) {
            set(o, p, Value::Null);
        }
    }
}

/// Marks a field change sensitive when it lies at or under a sensitive path, and nulls the
/// sensitive parts of its values when a sensitive path lies under it.
pub(super) fn redact_field(f: &mut FieldChange, paths: &[Vec<PathStep>]) {
    for p in paths {
        if f.path.starts_with(p) {
            f.sensitive = true;
        } else if p.starts_with(&f.path) {
            let rest = &p[f.path.len()..];
            for v in [&mut f.before, &mut f.after, &mut f.live]
                .into_iter()
                .flatten()
            {
                redact_value(&mut v.0, rest);
            }
        }
    }
    if f.sensitive {
        // The renderers hide it; the saved plan must not hold it either.
        for v in [&mut f.before, &mut f.after, &mut f.live]
            .into_iter()
            .flatten()
        {
            if !matches!(v.0, Value::Null | Value::Unknown) {
                *v = SerValue(Value::String("(sensitive value)".into()));
            }
        }
    }
}

fn redact_value(v: &mut Value, rest: &[PathStep]) {
    let mut wrapper = Object::from_iter([(String::new(), std::mem::take(v))]);
    let mut path = vec![PathStep::Key(String::new())];
    path.extend(rest.iter().cloned());
    redact_object(&mut wrapper, &[path]);
    *v = wrapper.swap_remove("").unwrap_or(Value::Null);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_paths_are_restored_and_redacted() {
        let task = |tok: &str| {
            Value::List(vec![Value::Object(Object::from_iter([
                ("key".to_string(), Value::from("a")),
                ("token".to_string(), Value::from(tok)),
            ]))])
        };
        let config = Object::from_iter([("task".to_string(), task("s3cret"))]);
        let mut prior = Prior {
            config: Object::from_iter([("task".to_string(), task("x"))]),
            ..Prior::default()
        };
        redact_object(&mut prior.config, &[steps("task.0.token")]);
        assert_eq!(
            prior.config["task"].get_path(&[PathStep::Index(0), PathStep::Key("token".into())]),
            Some(&Value::Null)
        );
        prior.sensitive.insert("task.0.token".into(), "fp".into());
        let same = |v: &Value, fp: &str| fp == "fp" && v.as_str() == Some("s3cret");
        restore(&mut prior, &config, &Schema::new(), &same);
        assert_eq!(prior.config["task"], task("s3cret"));
        // A changed value stays out.
        let mut prior2 = Prior {
            config: Object::from_iter([("task".to_string(), task("x"))]),
            ..Prior::default()
        };
        redact_object(&mut prior2.config, &[steps("task.0.token")]);
        prior2
            .sensitive
            .insert("task.0.token".into(), "other".into());
        restore(&mut prior2, &config, &Schema::new(), &same);
        assert_ne!(prior2.config["task"], task("s3cret"));

        let mut f = FieldChange {
            path: vec![PathStep::Key("task".into())],
            before: Some(SerValue(task("old"))),
            after: Some(SerValue(task("s3cret"))),
            live: None,
            reason: crate::plan::model::FieldReason::Configuration,
            forces_replacement: false,
            sensitive: false,
        };
        redact_field(&mut f, &[steps("task.0.token")]);
        let shown = serde_json::to_string(&f.after).unwrap_or_default();
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(!f.sensitive);
    }
}
