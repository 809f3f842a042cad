//! Values derived from sensitive ones (`comment = "copy of ${var.pw}"`): the configuration
//! decoder reports their paths, state keeps only their fingerprints, and plans never hold
//! their cleartext. Here: putting such a value back into the last applied configuration when
//! the configured value still matches its fingerprint (so the plan converges), and taking
//! them out of what a plan carries.

use crate::plan::diff::Prior;
use crate::plan::model::{FieldChange, SerValue};
use crate::provider::Schema;
use crate::value::{Object, PathStep, Value};
use std::sync::Arc;

/// A path of the state's `sensitive` map (`task.0.token`, in the text form of
/// [`brickform_state::sensitive_path`]) as steps, read against the configured object: a
/// step of digits indexes a list, and names an entry of a map (`tags.1`).
fn steps(text: &str, within: &Object) -> Vec<PathStep> {
    let names = brickform_state::sensitive_path::split(text);
    let mut out = Vec::with_capacity(names.len());
    let mut at: Option<&Value> = None;
    for (i, name) in names.into_iter().enumerate() {
        let step = match (at, name.parse::<usize>()) {
            (Some(Value::List(_)), Ok(n)) => PathStep::Index(n),
            _ => PathStep::Key(name),
        };
        at = match (&step, i) {
            (PathStep::Key(k), 0) => within.get(k),
            (step, _) => at.and_then(|v| v.get_path(std::slice::from_ref(step))),
        };
        out.push(step);
    }
    out
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
                Arc::make_mut(m).insert(k.clone(), v);
                return;
            }
            (PathStep::Index(n), Value::List(l)) if last => {
                if let Some(slot) = l.get_mut(*n) {
                    *slot = v;
                }
                return;
            }
            (PathStep::Key(k), Value::Object(m)) => match Arc::make_mut(m).get_mut(k) {
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
/// value that no longer matches stays absent, so it shows as changed (and hidden); a
/// write-only one of a nested block becomes unknown. Top-level attributes the schema marks
/// sensitive (write-only) are compared by fingerprint by the diff itself and are left alone.
pub(super) fn restore(
    prior: &mut Prior,
    config: &Object,
    schema: &Schema,
    matches: &dyn Fn(&Value, &str) -> bool,
) {
    for (text, fp) in &prior.sensitive {
        let path = steps(text, config);
        if let [PathStep::Key(k)] = path.as_slice()
            && schema.attribute(k).is_some_and(|a| a.sensitive)
        {
            continue;
        }
        let Some(v) = get(config, &path).filter(|v| v.is_wholly_known()) else {
            continue;
        };
        let write_only = is_write_only(schema, &path);
        if !matches(v, fp) {
            // A write-only attribute of a nested block (a storage credential's
            // `azure_service_principal.client_secret`): the service never answers it, so
            // its absence would compare equal to anything. The value last applied is not
            // known, only that it differs from the configured one: unknown, which no
            // configured value equals, so the new one is planned and written.
            if write_only {
                set(&mut prior.config, &path, Value::Unknown);
            }
            continue;
        }
        let v = v.clone();
        set(&mut prior.config, &path, v.clone());
        // What the service answered to the last write holds a derived value it echoes
        // (a comment that quotes a secret), but never a write-only one: put back there,
        // the answer would differ from every later read, which would be drift.
        if !write_only
            && (get(&prior.computed, &path[..path.len().saturating_sub(1)]).is_some()
                || path.len() == 1)
        {
            set(&mut prior.computed, &path, v);
        }
    }
}

/// Whether `path` leads, through nested blocks of any nesting (list indexes skipped), to an
/// attribute the schema declares sensitive: a write-only value the service never answers.
fn is_write_only(schema: &Schema, path: &[PathStep]) -> bool {
    let mut at = schema;
    let mut names = path.iter().filter_map(|s| match s {
        PathStep::Key(k) => Some(k.as_str()),
        PathStep::Index(_) => None,
    });
    while let Some(name) = names.next() {
        if let Some(b) = at.block_type(name) {
            at = &b.schema;
            continue;
        }
        return names.next().is_none() && at.attribute(name).is_some_and(|a| a.sensitive);
    }
    false
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

/// The sensitive values under a field change that change with it (a nested block's
/// write-only attribute rotated while the rest of the block stays): each as a change of its
/// own, hidden, so renderers show `~ client_secret = (sensitive value)` where the block's
/// own values, redacted, would look unchanged. Taken before the field is redacted.
pub(super) fn hidden_changes(f: &FieldChange, paths: &[Vec<PathStep>]) -> Vec<FieldChange> {
    let at = |v: &Option<SerValue>, rest: &[PathStep]| {
        let v = v.as_ref()?;
        let wrapper = Object::from_iter([(String::new(), v.0.clone())]);
        let mut path = vec![PathStep::Key(String::new())];
        path.extend(rest.iter().cloned());
        get(&wrapper, &path).filter(|v| !v.is_null()).cloned()
    };
    // A block added or removed whole shows its values (hidden ones as such) already.
    if f.before.is_none() || f.after.is_none() {
        return Vec::new();
    }
    paths
        .iter()
        .filter(|p| p.len() > f.path.len() && p.starts_with(&f.path))
        .filter_map(|p| {
            let rest = &p[f.path.len()..];
            let (before, after) = (at(&f.before, rest), at(&f.after, rest));
            let changed = match (&before, &after) {
                (Some(Value::Unknown), _) | (_, Some(Value::Unknown)) => true,
                (b, a) => b != a,
            };
            let hidden =
                |v: Option<Value>| v.map(|_| SerValue(Value::String("(sensitive value)".into())));
            changed.then(|| FieldChange {
                path: p.clone(),
                // The service never answers a write-only value and state keeps only its
                // fingerprint: in a block that exists, it is shown as replaced.
                before: hidden(before.or(Some(Value::Unknown))),
                after: hidden(after),
                live: None,
                reason: f.reason,
                forces_replacement: false,
                sensitive: true,
            })
        })
        .collect()
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
    fn a_map_key_holding_a_dot_or_digits_is_one_step() {
        let conf = |v: &str| {
            Value::object(Object::from_iter([
                ("spark.password".to_string(), Value::from(v)),
                ("1".to_string(), Value::from(v)),
            ]))
        };
        let config = Object::from_iter([("spark_conf".to_string(), conf("s3cret"))]);
        let dotted = brickform_state::sensitive_path::join(["spark_conf", "spark.password"]);
        assert_eq!(
            steps(&dotted, &config),
            [
                PathStep::Key("spark_conf".into()),
                PathStep::Key("spark.password".into())
            ]
        );
        assert_eq!(
            steps("spark_conf.1", &config)[1],
            PathStep::Key("1".into()),
            "digits name an entry of a map"
        );
        let mut prior = Prior {
            config: Object::from_iter([("spark_conf".to_string(), conf("x"))]),
            ..Prior::default()
        };
        prior.sensitive.insert(dotted, "fp".into());
        prior.sensitive.insert("spark_conf.1".into(), "fp".into());
        let same = |v: &Value, fp: &str| fp == "fp" && v.as_str() == Some("s3cret");
        restore(&mut prior, &config, &Schema::new(), &same);
        assert_eq!(prior.config["spark_conf"], conf("s3cret"));
    }

    #[test]
    fn nested_paths_are_restored_and_redacted() {
        let task = |tok: &str| {
            Value::List(vec![Value::object(Object::from_iter([
                ("key".to_string(), Value::from("a")),
                ("token".to_string(), Value::from(tok)),
            ]))])
        };
        let config = Object::from_iter([("task".to_string(), task("s3cret"))]);
        let mut prior = Prior {
            config: Object::from_iter([("task".to_string(), task("x"))]),
            ..Prior::default()
        };
        redact_object(&mut prior.config, &[steps("task.0.token", &config)]);
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
        redact_object(&mut prior2.config, &[steps("task.0.token", &config)]);
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
        redact_field(&mut f, &[steps("task.0.token", &config)]);
        let shown = serde_json::to_string(&f.after).unwrap_or_default();
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(!f.sensitive);
    }

    /// A write-only attribute inside a repeated block (a pool's Docker registry password):
    /// unchanged, it is put back into the last applied configuration but not into what the
    /// service answered, which never held it; rotated, it is unknown, so it is planned.
    #[test]
    fn a_write_only_value_of_a_repeated_block_is_never_in_the_service_answer() {
        use crate::provider::{AttrType, Attribute, BlockType};
        let schema = Schema::new().block(BlockType::list(
            "image",
            Schema::new()
                .attr(Attribute::required("url", AttrType::String))
                .block(BlockType::single(
                    "auth",
                    Schema::new()
                        .attr(Attribute::required("password", AttrType::String).sensitive()),
                )),
        ));
        let image = |password: Option<&str>| {
            let auth = match password {
                Some(p) => Object::from_iter([("password".to_string(), Value::from(p))]),
                None => Object::default(),
            };
            Value::List(vec![Value::object(Object::from_iter([
                ("url".to_string(), Value::from("r/i")),
                ("auth".to_string(), Value::object(auth)),
            ]))])
        };
        let prior_of = || Prior {
            config: Object::from_iter([("image".to_string(), image(None))]),
            computed: Object::from_iter([("image".to_string(), image(None))]),
            sensitive: [("image.0.auth.password".to_string(), "fp-pw".to_string())].into(),
        };
        let matches = |v: &Value, fp: &str| fp == format!("fp-{}", v.as_str().unwrap_or(""));

        let config = Object::from_iter([("image".to_string(), image(Some("pw")))]);
        let mut same = prior_of();
        restore(&mut same, &config, &schema, &matches);
        assert_eq!(same.config["image"], image(Some("pw")));
        assert_eq!(same.computed["image"], image(None));

        let rotated = Object::from_iter([("image".to_string(), image(Some("new")))]);
        let mut prior = prior_of();
        restore(&mut prior, &rotated, &schema, &matches);
        let at = steps("image.0.auth.password", &rotated);
        assert_eq!(get(&prior.config, &at), Some(&Value::Unknown));
        assert_eq!(prior.computed["image"], image(None));
    }

    /// A write-only attribute of a single nested block: a configured value that no longer
    /// matches the fingerprint becomes unknown in the prior (so it differs from it), and the
    /// field change of its block carries a hidden change at its own path.
    #[test]
    fn a_rotated_write_only_value_of_a_nested_block_is_a_hidden_change() {
        use crate::provider::{AttrType, Attribute, BlockType};
        let schema = Schema::new().block(BlockType::single(
            "principal",
            Schema::new()
                .attr(Attribute::required("id", AttrType::String))
                .attr(Attribute::required("secret", AttrType::String).sensitive()),
        ));
        let block = |secret: Option<&str>| {
            let mut o = Object::from_iter([("id".to_string(), Value::from("app"))]);
            if let Some(s) = secret {
                o.insert("secret".into(), Value::from(s));
            }
            Value::object(o)
        };
        let config = Object::from_iter([("principal".to_string(), block(Some("new")))]);
        let prior_of = || Prior {
            config: Object::from_iter([("principal".to_string(), block(None))]),
            sensitive: [("principal.secret".to_string(), "fp-old".to_string())].into(),
            ..Prior::default()
        };
        let matches = |v: &Value, fp: &str| fp == format!("fp-{}", v.as_str().unwrap_or(""));

        let mut rotated = prior_of();
        restore(&mut rotated, &config, &schema, &matches);
        assert_eq!(
            get(&rotated.config, &steps("principal.secret", &config)),
            Some(&Value::Unknown)
        );
        let mut same = prior_of();
        let unchanged = Object::from_iter([("principal".to_string(), block(Some("old")))]);
        restore(&mut same, &unchanged, &schema, &matches);
        assert_eq!(same.config["principal"], block(Some("old")));

        let paths = crate::engine::instance::sensitive_schema_paths(&schema);
        let f = FieldChange {
            path: vec![PathStep::Key("principal".into())],
            before: Some(SerValue(block(None))),
            after: Some(SerValue(block(Some("new")))),
            live: None,
            reason: crate::plan::model::FieldReason::Configuration,
            forces_replacement: false,
            sensitive: false,
        };
        let hidden = hidden_changes(&f, &paths);
        assert_eq!(hidden.len(), 1, "{hidden:?}");
        assert_eq!(hidden[0].path, steps("principal.secret", &config));
        assert!(hidden[0].sensitive && hidden[0].before.is_some());
        let shown = serde_json::to_string(&hidden).unwrap_or_default();
        assert!(!shown.contains("new"), "{shown}");
        // The same secret before and after is no hidden change; a block added whole shows
        // its values already.
        let same_secret = FieldChange {
            before: Some(SerValue(block(Some("new")))),
            ..f.clone()
        };
        assert!(hidden_changes(&same_secret, &paths).is_empty());
        let added = FieldChange { before: None, ..f };
        assert!(hidden_changes(&added, &paths).is_empty());
    }
}
