//! Whether a saved plan still holds: apply of a saved plan makes a fresh plan of the same
//! state and configuration and compares the two. The state serial and the configuration
//! hash catch most changes before this; what remains is what only planning shows — a live
//! object that moved on, or a file the configuration reads (its content is not in the
//! configuration hash, but what it changes is in the plan).

use super::model::{Action, Contents, Plan, ResourceChange};
use crate::value::PathStep;
use std::collections::{BTreeMap, BTreeSet};

/// What must be the same in the fresh plan for one instance: its action, the value every
/// changed field is set to with what that takes away (the elements of a list or the keys of
/// a map it drops: a grant revoked, a tag removed), and what a container's delete takes
/// with it. Values are compared in their JSON form, where a value known only after apply
/// reads as null.
#[derive(PartialEq)]
struct Reviewed<'a> {
    action: Action,
    fields: Vec<(
        &'a [PathStep],
        Option<serde_json::Value>,
        Vec<serde_json::Value>,
    )>,
    contents: Option<&'a Contents>,
}

/// What setting a field from `before` to `after` takes away: the elements of a list or the
/// keys of a map that `after` no longer holds. A scalar is overwritten, which takes nothing
/// another plan could show differently.
fn taken_away(
    before: Option<serde_json::Value>,
    after: Option<&serde_json::Value>,
) -> Vec<serde_json::Value> {
    use serde_json::Value as Json;
    match (before, after) {
        (Some(Json::Array(was)), Some(Json::Array(will))) => {
            was.into_iter().filter(|v| !will.contains(v)).collect()
        }
        (Some(Json::Object(was)), Some(Json::Object(will))) => was
            .into_iter()
            .filter(|(k, _)| !will.contains_key(k))
            .map(|(k, _)| Json::String(k))
            .collect(),
        _ => Vec::new(),
    }
}

/// The key an instance's change is matched by. A deposed object's delete shares its
/// replacement's address, so it is told apart by the object's id.
fn key(c: &ResourceChange) -> String {
    if c.deposed {
        format!(
            "{} (deposed {})",
            c.address(),
            c.id.as_deref().unwrap_or("")
        )
    } else {
        c.address()
    }
}

fn reviewed(plan: &Plan) -> BTreeMap<String, Reviewed<'_>> {
    plan.changes
        .iter()
        .map(|c| {
            let fields = c
                .fields
                .iter()
                .map(|f| {
                    let after = f.after.as_ref().map(|v| v.0.to_json());
                    let taken =
                        taken_away(f.before.as_ref().map(|v| v.0.to_json()), after.as_ref());
                    (f.path.as_slice(), after, taken)
                })
                .collect();
            let r = Reviewed {
                action: c.action,
                fields,
                contents: c.contents.as_ref(),
            };
            (key(c), r)
        })
        .collect()
}

/// The instances (by address, a deposed object's as `ADDR (deposed ID)`) whose planned
/// change differs between the saved plan and a fresh one, sorted; empty when the saved plan
/// still holds. An instance planned in only one of them differs too. What the plans saw
/// before (state and live values) and why a field changes do not count: only what apply
/// would do, and what it would take away.
pub fn differing_changes(saved: &Plan, fresh: &Plan) -> Vec<String> {
    let (then, now) = (reviewed(saved), reviewed(fresh));
    then.keys()
        .chain(now.keys())
        .filter(|k| then.get(*k) != now.get(*k))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{FieldChange, FieldReason, SerValue};
    use crate::value::Value;

    fn change(address: &str, action: Action) -> ResourceChange {
        let name = address.strip_prefix("test_thing.").unwrap_or(address);
        ResourceChange::bare("test_thing", name, "test", action)
    }

    fn field(name: &str, before: Option<Value>, after: Option<Value>) -> FieldChange {
        FieldChange {
            path: vec![PathStep::Key(name.to_string())],
            before: before.map(SerValue),
            after: after.map(SerValue),
            live: None,
            reason: FieldReason::Configuration,
            forces_replacement: false,
            sensitive: false,
        }
    }

    fn plan(changes: Vec<ResourceChange>) -> Plan {
        Plan {
            changes,
            ..Plan::default()
        }
    }

    fn with_field(mut c: ResourceChange, f: FieldChange) -> ResourceChange {
        c.fields.push(f);
        c
    }

    #[test]
    fn the_same_plan_holds() {
        let p = plan(vec![
            with_field(
                change("test_thing.a", Action::Update),
                field("comment", Some("x".into()), Some("y".into())),
            ),
            change("test_thing.b", Action::Create),
        ]);
        assert!(differing_changes(&p, &p.clone()).is_empty());
    }

    #[test]
    fn another_action_or_value_differs() {
        let saved = plan(vec![
            with_field(
                change("test_thing.a", Action::Update),
                field("comment", None, Some("y".into())),
            ),
            change("test_thing.b", Action::Update),
            change("test_thing.c", Action::NoOp),
        ]);
        let fresh = plan(vec![
            with_field(
                change("test_thing.a", Action::Update),
                field("comment", None, Some("z".into())),
            ),
            change("test_thing.b", Action::DeleteThenCreate),
            change("test_thing.c", Action::NoOp),
        ]);
        assert_eq!(
            differing_changes(&saved, &fresh),
            ["test_thing.a", "test_thing.b"]
        );
    }

    #[test]
    fn an_instance_in_only_one_plan_differs_and_the_list_is_sorted() {
        let saved = plan(vec![
            change("test_thing.z", Action::Create),
            change("test_thing.m", Action::NoOp),
        ]);
        let fresh = plan(vec![
            change("test_thing.m", Action::NoOp),
            change("test_thing.a", Action::Delete),
        ]);
        assert_eq!(
            differing_changes(&saved, &fresh),
            ["test_thing.a", "test_thing.z"]
        );
    }

    #[test]
    fn a_field_set_or_dropped_differs() {
        let saved = plan(vec![change("test_thing.a", Action::Update)]);
        let fresh = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("comment", None, Some("y".into())),
        )]);
        assert_eq!(differing_changes(&saved, &fresh), ["test_thing.a"]);
        // A field removed (after = None) is not the same as one set to null.
        let removed = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("comment", Some("x".into()), None),
        )]);
        let nulled = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("comment", Some("x".into()), Some(Value::Null)),
        )]);
        assert_eq!(differing_changes(&removed, &nulled), ["test_thing.a"]);
    }

    #[test]
    fn what_was_seen_before_does_not_count_only_what_apply_does() {
        let saved = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("comment", Some("old".into()), Some("y".into())),
        )]);
        let mut moved = with_field(
            change("test_thing.a", Action::Update),
            field("comment", Some("drifted".into()), Some("y".into())),
        );
        moved.fields[0].reason = FieldReason::Drift;
        moved.fields[0].live = Some(SerValue("drifted".into()));
        let fresh = plan(vec![moved]);
        assert!(differing_changes(&saved, &fresh).is_empty());
    }

    #[test]
    fn what_a_changed_list_or_map_takes_away_counts() {
        let list = |v: &[&str]| Some(Value::List(v.iter().map(|s| Value::from(*s)).collect()));
        let map = |v: &[&str]| {
            Some(Value::Object(
                v.iter()
                    .map(|k| (k.to_string(), Value::from("x")))
                    .collect::<crate::value::Object>()
                    .into(),
            ))
        };
        // Reviewed: one grant revoked. Since: another given, which the fresh plan revokes too.
        let saved = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("grant", list(&["a", "b"]), list(&["a"])),
        )]);
        let fresh = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("grant", list(&["a", "b", "c"]), list(&["a"])),
        )]);
        assert_eq!(differing_changes(&saved, &fresh), ["test_thing.a"]);
        // The same for a map's keys; its values overwritten are not taken away.
        let saved = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("tags", map(&["a", "b"]), map(&["a"])),
        )]);
        let fresh = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("tags", map(&["a", "b", "c"]), map(&["a"])),
        )]);
        assert_eq!(differing_changes(&saved, &fresh), ["test_thing.a"]);
        let same = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("grant", list(&["b", "a"]), list(&["a"])),
        )]);
        let reviewed = plan(vec![with_field(
            change("test_thing.a", Action::Update),
            field("grant", list(&["a", "b"]), list(&["a"])),
        )]);
        assert!(differing_changes(&reviewed, &same).is_empty());
    }

    #[test]
    fn what_a_containers_delete_takes_with_it_counts() {
        let mut saved = change("test_thing.box", Action::Delete);
        saved.contents = Some(Contents {
            managed: Vec::new(),
            unmanaged: Some(vec!["/box/a".into()]),
        });
        let mut fresh = saved.clone();
        fresh.contents = Some(Contents {
            managed: Vec::new(),
            unmanaged: Some(vec!["/box/a".into(), "/box/b".into()]),
        });
        assert_eq!(
            differing_changes(&plan(vec![saved]), &plan(vec![fresh])),
            ["test_thing.box"]
        );
    }

    #[test]
    fn a_deposed_delete_is_told_apart_from_its_replacement() {
        let replacement = change("test_thing.a", Action::Create);
        let mut deposed = change("test_thing.a", Action::Delete);
        deposed.deposed = true;
        deposed.id = Some("old-1".into());
        let saved = plan(vec![replacement.clone(), deposed.clone()]);
        assert!(differing_changes(&saved, &saved.clone()).is_empty());
        let mut other = deposed;
        other.id = Some("old-2".into());
        let fresh = plan(vec![replacement, other]);
        assert_eq!(
            differing_changes(&saved, &fresh),
            [
                "test_thing.a (deposed old-1)",
                "test_thing.a (deposed old-2)"
            ]
        );
    }
}
