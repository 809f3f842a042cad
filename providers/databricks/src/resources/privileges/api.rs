//! The permissions API of Unity Catalog: grants on a securable read (following pages),
//! changed by difference (`changes: [{principal, add, remove}]`) and read back until the
//! change shows.

use super::Target;
use crate::resources::{err, str_attr};
use brickform_core::provider::{ErrorKind, ProviderError, ProviderResult};
use brickform_core::value::Value;
use serde_json::{Value as Json, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Principal → privileges held on one securable.
pub type Assignments = BTreeMap<String, BTreeSet<String>>;

/// The path of the grants on the securable `name`.
pub fn path_of(target: &Target, name: &str) -> String {
    target
        .path
        .replace("{securable_type}", target.api)
        .replace("{full_name}", name)
}

/// The grants on a securable (of one principal, when given); `None` when the securable
/// does not exist.
pub async fn read(
    client: &crate::client::Client,
    target: &Target,
    name: &str,
    principal: Option<&str>,
) -> ProviderResult<Option<Assignments>> {
    let query: Vec<(&str, String)> = principal
        .map(|p| ("principal", p.to_string()))
        .into_iter()
        .collect();
    let listed = match client
        .list_all(
            &path_of(target, name),
            &query,
            "privilege_assignments",
            None,
        )
        .await
    {
        Ok(l) => l,
        Err(e) if e.kind == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    };
    Ok(Some(assignments_in(&listed, principal)))
}

/// The assignments a list of `privilege_assignments` holds (of one principal, when given,
/// keyed under the spelling asked for).
fn assignments_in(listed: &[Json], principal: Option<&str>) -> Assignments {
    let mut out = Assignments::new();
    for a in listed {
        let Some(who) = a.get("principal").and_then(Json::as_str) else {
            continue;
        };
        if principal.is_some_and(|p| !same_principal(p, who)) {
            continue;
        }
        // Under the spelling asked for: the service may answer a user name lower-cased.
        let who = principal.unwrap_or(who);
        let held = a
            .get("privileges")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            // Each privilege is a string; older answers wrapped it as {"privilege": …}.
            .filter_map(|p| {
                p.as_str()
                    .or_else(|| p.get("privilege").and_then(Json::as_str))
            })
            .map(str::to_string);
        out.entry(who.to_string()).or_default().extend(held);
    }
    out.retain(|_, p| !p.is_empty());
    out
}

/// The changes that turn `from` into `to` for the principals `to` speaks for (all of them
/// for authoritative grants; one for a single principal's grant).
pub fn changes(from: &Assignments, to: &Assignments, all_principals: bool) -> Vec<Json> {
    let empty = BTreeSet::new();
    // Each principal wanted, with what it holds under whichever spelling the service answers.
    let mut pairs: Vec<(&String, &BTreeSet<String>, &BTreeSet<String>)> = Vec::new();
    let mut matched: BTreeSet<&String> = BTreeSet::new();
    for (p, want) in to {
        let held = from
            .get_key_value(p)
            .or_else(|| from.iter().find(|(h, _)| same_principal(h, p)));
        if let Some((h, _)) = held {
            matched.insert(h);
        }
        pairs.push((p, held.map_or(&empty, |(_, v)| v), want));
    }
    if all_principals {
        pairs.extend(
            from.iter()
                .filter(|(h, _)| !matched.contains(h))
                .map(|(h, have)| (h, have, &empty)),
        );
    }
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    pairs
        .into_iter()
        .filter_map(|(p, have, want)| {
            let add: Vec<&String> = want.difference(have).collect();
            let remove: Vec<&String> = have.difference(want).collect();
            (!add.is_empty() || !remove.is_empty()).then(|| {
                let mut c = json!({ "principal": p });
                if !add.is_empty() {
                    c["add"] = json!(add);
                }
                if !remove.is_empty() {
                    c["remove"] = json!(remove);
                }
                c
            })
        })
        .collect()
}

/// Whether two principal names are the same principal: user names (e-mail addresses) are
/// case-insensitive, and the service may answer one lower-cased; group and service principal
/// names are compared as they are.
pub fn same_principal(a: &str, b: &str) -> bool {
    a == b || (a.contains('@') && a.eq_ignore_ascii_case(b))
}

/// How long a written change may take to show in a read (the Terraform provider waits a
/// minute too).
const SETTLE: Duration = Duration::from_secs(60);

/// Sends `changes` (when there are any) and reads the grants back until they are what the
/// service answered to the write, for the principals `want` speaks for (or `want` itself,
/// when nothing was sent or the answer holds no assignments). The answer already holds the
/// service's own spelling of names and privileges, so a rewriting of what was sent ends
/// the wait as soon as the read shows it, with no rule for that rewriting.
pub async fn write(
    client: &crate::client::Client,
    target: &Target,
    name: &str,
    changes_: Vec<Json>,
    want: &Assignments,
    principal: Option<&str>,
) -> ProviderResult<Assignments> {
    let mut answered: Option<Assignments> = None;
    if !changes_.is_empty() {
        let answer = client
            .patch(&path_of(target, name), &json!({ "changes": changes_ }))
            .await
            .map_err(err)?;
        answered = answer
            .get("privilege_assignments")
            .and_then(Json::as_array)
            .map(|listed| assignments_in(listed, principal));
    }
    let answered = &answered;
    let last = std::sync::Mutex::new(Assignments::new());
    let last_ref = &last;
    crate::resources::wait_until(
        SETTLE,
        &format!("grants on {} {name}", target.label),
        move || async move {
            let now = read(client, target, name, principal)
                .await?
                .ok_or_else(|| {
                    ProviderError::not_found(format!("{} {name} does not exist", target.label))
                })?;
            let settled = settled(&now, answered.as_ref(), want, principal.is_none());
            *last_ref.lock().unwrap_or_else(|p| p.into_inner()) = now;
            Ok((!settled).then(|| "different from what was written".to_string()))
        },
    )
    .await?;
    Ok(last.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// Whether a read shows a write done: what the service answered to it, exactly; without an
/// answer, what was wanted, for the principals it speaks for (all of them, when
/// `all_principals`).
fn settled(
    now: &Assignments,
    answered: Option<&Assignments>,
    want: &Assignments,
    all_principals: bool,
) -> bool {
    match answered {
        Some(answer) => now == answer,
        None => changes(now, want, all_principals).is_empty(),
    }
}

/// The assignments a list of `grant` objects declares.
pub fn assignments_of(grants: &Value) -> Assignments {
    let mut out = Assignments::new();
    for g in grants
        .as_list()
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
    {
        if let Some(p) = str_attr(g, "principal") {
            out.entry(p.to_string())
                .or_default()
                .extend(privileges_of(g.get("privileges")));
        }
    }
    out
}

/// The privileges a `privileges` value lists.
pub fn privileges_of(v: Option<&Value>) -> BTreeSet<String> {
    v.and_then(Value::as_list)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// A set of privileges as an attribute value (sorted, as the configuration's is).
pub fn privileges_value(p: &BTreeSet<String>) -> Value {
    Value::List(p.iter().map(|s| Value::from(s.as_str())).collect())
}

/// `held` without the privileges `taken` names, principal by principal (a user in any
/// case).
pub fn without(held: &Assignments, taken: &Assignments) -> Assignments {
    let mut out = held.clone();
    for (p, privileges) in taken {
        for (_, h) in out.iter_mut().filter(|(h, _)| same_principal(h, p)) {
            h.retain(|x| !privileges.contains(x));
        }
    }
    out
}

/// What `want` declares for the principal `held` names (a user in any case).
fn wanted_for<'a>(want: &'a Assignments, held: &str) -> Option<&'a BTreeSet<String>> {
    want.get(held).or_else(|| {
        want.iter()
            .find(|(w, _)| same_principal(w, held))
            .map(|(_, v)| v)
    })
}

/// What a create would remove that the plan did not list: privileges held that the
/// configuration does not declare, for the principals it speaks for. A create adds; it
/// does not take grants someone else gave.
pub fn unplanned_removals(
    held: &Assignments,
    want: &Assignments,
    all_principals: bool,
) -> Vec<String> {
    let empty = BTreeSet::new();
    held.iter()
        .filter(|(p, _)| all_principals || wanted_for(want, p).is_some())
        .filter_map(|(p, have)| {
            let extra: Vec<&str> = have
                .difference(wanted_for(want, p).unwrap_or(&empty))
                .map(String::as_str)
                .collect();
            (!extra.is_empty()).then(|| format!("{p}: {}", extra.join(", ")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(pairs: &[(&str, &[&str])]) -> Assignments {
        pairs
            .iter()
            .map(|(p, ps)| (p.to_string(), ps.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn a_write_is_settled_when_the_read_shows_what_the_service_answered_to_it() {
        // The service answered its own spelling of what was sent (a name, a privilege).
        let want = a(&[("Data Team", &["USE_CATALOG", "BROWSE"])]);
        let answer = a(&[("data team", &["use_catalog", "BROWSE"])]);
        assert!(settled(&answer, Some(&answer), &want, true));
        // A read that does not show the write yet is not settled, though it holds `want`.
        assert!(!settled(&want, Some(&answer), &want, true));
        // Without an answer, what was wanted.
        assert!(settled(&want, None, &want, true));
        assert!(!settled(&answer, None, &want, true));
    }

    #[test]
    fn the_answer_to_a_write_is_read_as_a_read_is() {
        let listed = vec![
            json!({"principal": "ann@x.com", "privileges": ["USE_CATALOG"]}),
            json!({"principal": "bob", "privileges": [{"privilege": "BROWSE"}]}),
            json!({"principal": "carl", "privileges": []}),
        ];
        assert_eq!(
            assignments_in(&listed, None),
            a(&[("ann@x.com", &["USE_CATALOG"]), ("bob", &["BROWSE"])])
        );
        assert_eq!(
            assignments_in(&listed, Some("Ann@X.com")),
            a(&[("Ann@X.com", &["USE_CATALOG"])])
        );
    }

    #[test]
    fn a_user_name_answered_in_another_case_is_the_same_principal() {
        let held = a(&[("ann@x.com", &["USE_CATALOG"]), ("Admins", &["BROWSE"])]);
        let want = a(&[("Ann@X.com", &["USE_CATALOG"]), ("admins", &["BROWSE"])]);
        // The user holds what is wanted; group names are case-sensitive here.
        let c = changes(&held, &want, true);
        assert_eq!(
            c,
            vec![
                json!({"principal": "Admins", "remove": ["BROWSE"]}),
                json!({"principal": "admins", "add": ["BROWSE"]}),
            ]
        );
        assert!(changes(&held, &a(&[("Ann@X.com", &["USE_CATALOG"])]), false).is_empty());
        // Held under the service's spelling, declared in another: nothing would be revoked
        // that was not planned, and what the plan saw is taken off in any case.
        assert!(unplanned_removals(&held, &want, false).is_empty());
        assert_eq!(
            unplanned_removals(&held, &want, true),
            ["Admins: BROWSE".to_string()]
        );
        let seen = a(&[("ANN@x.com", &["USE_CATALOG"])]);
        assert_eq!(
            without(&held, &seen),
            a(&[("ann@x.com", &[]), ("Admins", &["BROWSE"])])
        );
    }

    #[test]
    fn changes_add_and_remove_by_principal() {
        let from = a(&[("alice", &["SELECT", "MODIFY"]), ("bob", &["SELECT"])]);
        let to = a(&[("alice", &["SELECT", "USE_SCHEMA"]), ("carol", &["BROWSE"])]);
        assert_eq!(
            changes(&from, &to, true),
            vec![
                json!({"principal": "alice", "add": ["USE_SCHEMA"], "remove": ["MODIFY"]}),
                json!({"principal": "bob", "remove": ["SELECT"]}),
                json!({"principal": "carol", "add": ["BROWSE"]}),
            ]
        );
        // One principal's grant leaves everyone else alone.
        assert_eq!(
            changes(&from, &a(&[("bob", &["BROWSE"])]), false),
            vec![json!({"principal": "bob", "add": ["BROWSE"], "remove": ["SELECT"]})]
        );
        assert!(changes(&to, &to, true).is_empty());
    }

    #[test]
    fn a_create_does_not_take_what_others_granted() {
        let held = a(&[("alice", &["SELECT", "MODIFY"]), ("bob", &["SELECT"])]);
        let want = a(&[("alice", &["SELECT"])]);
        assert_eq!(
            unplanned_removals(&held, &want, true),
            ["alice: MODIFY", "bob: SELECT"]
        );
        assert_eq!(unplanned_removals(&held, &want, false), ["alice: MODIFY"]);
        assert!(unplanned_removals(&want, &held, true).is_empty());
    }
}
