//! What the SCIM API does to the workspace state, apart from HTTP.

use super::{Attributes, Level, Principal, PrincipalKind};
use crate::behaviours::{Behaviour, Behaviours};
use crate::errors::{ApiError, ApiResult};
use crate::store::State;
use serde_json::Value;

/// The id `GET /Me` answers with, so the seeded user is the one `Me` describes.
pub const SELF_ID: &str = "4242424242424242";

/// The id of the account's admin, the workspace's user as the account knows it.
pub const ACCOUNT_ADMIN_ID: &str = "4343434343434343";

/// The principals a new account has: its admin, the workspace's user (who acts for the
/// account as well: the local workspace has one caller).
pub fn seed_account(st: &mut State, user_name: &str) {
    let given = user_name.split('@').next().unwrap_or(user_name).to_string();
    st.scim.principals_mut(Level::Account).insert(
        ACCOUNT_ADMIN_ID.to_string(),
        Principal {
            kind: PrincipalKind::User,
            name: user_name.to_string(),
            display_name: given,
            workspace_local: false,
        },
    );
}

/// The principals a new workspace has, and the user's place in its groups.
pub fn seed(st: &mut State, user_name: &str) {
    let level = Level::Workspace;
    let given = user_name.split('@').next().unwrap_or(user_name).to_string();
    let rows = [
        (
            SELF_ID.to_string(),
            PrincipalKind::User,
            user_name.to_string(),
            given,
            false,
        ),
        (
            "1000".into(),
            PrincipalKind::Group,
            "users".into(),
            "users".into(),
            true,
        ),
        (
            "1001".into(),
            PrincipalKind::Group,
            "admins".into(),
            "admins".into(),
            true,
        ),
        (
            "1002".into(),
            PrincipalKind::Group,
            "account users".into(),
            "account users".into(),
            false,
        ),
    ];
    for (id, kind, name, display_name, workspace_local) in rows {
        st.scim.principals_mut(level).insert(
            id,
            Principal {
                kind,
                name,
                display_name,
                workspace_local,
            },
        );
    }
    // The user who has a new workspace is its admin: a member of `users` (every workspace
    // user is) and of `admins`, as `GET /Me` already answers; the group reads must agree.
    for group in ["1000", "1001"] {
        set_attributes(
            st,
            level,
            group,
            Attributes {
                members: vec![SELF_ID.to_string()],
                ..Attributes::default()
            },
        );
    }
}

/// Whether grants may name `name`: an account user (by user name, in any case), group (by
/// display name) or service principal (by application id).
pub fn principal_exists(st: &State, name: &str) -> bool {
    st.scim.principals.iter().any(|(_, p)| {
        !p.workspace_local
            && match p.kind {
                PrincipalKind::User => p.name.eq_ignore_ascii_case(name),
                _ => p.name == name,
            }
    })
}

/// The name the workspace keeps, and answers, for a principal given as `name`: with
/// `principals_as_scim_holds`, a user (by user name) or a service principal (by application
/// id) of one of `kinds`, matched in any case, in the spelling SCIM holds for it, so that one
/// user written two ways is one principal. A group (display names are case-sensitive) and a
/// name SCIM does not know stay as given, as does every name with the behaviour off.
pub fn held_name(st: &State, b: Behaviours, kinds: &[PrincipalKind], name: &str) -> String {
    if !b.on(Behaviour::PrincipalsAsScimHolds) {
        return name.to_string();
    }
    let named = |exact: bool| {
        st.scim.principals.values().find(|p| {
            p.kind != PrincipalKind::Group
                && kinds.contains(&p.kind)
                && if exact {
                    p.name == name
                } else {
                    p.name.eq_ignore_ascii_case(name)
                }
        })
    };
    named(true)
        .or_else(|| named(false))
        .map_or_else(|| name.to_string(), |p| p.name.clone())
}

/// Groups only Unity Catalog resolves: the workspace's own APIs (permissions, secret ACLs)
/// answer `Principal: GroupName(account users) does not exist` for them, and take the
/// workspace-local `users` instead.
const ACCOUNT_ONLY: &[&str] = &["account users"];

/// The principal of a kind the workspace's own APIs (permissions, secret ACLs) know by
/// `name`: a user by user name (any case), a group by display name (the workspace-local
/// `users` and `admins` included), a service principal by application id (any case).
pub fn workspace_principal<'a>(
    st: &'a State,
    kind: PrincipalKind,
    name: &str,
) -> Option<&'a Principal> {
    st.scim.principals.values().find(|p| {
        p.kind == kind
            && match kind {
                PrincipalKind::Group => p.name == name && !ACCOUNT_ONLY.contains(&name),
                _ => p.name.eq_ignore_ascii_case(name),
            }
    })
}

/// Whether any principal of the workspace goes by `name` (secret ACLs name users and
/// groups alike).
pub fn workspace_principal_named(st: &State, name: &str) -> bool {
    [
        PrincipalKind::User,
        PrincipalKind::Group,
        PrincipalKind::ServicePrincipal,
    ]
    .into_iter()
    .any(|k| workspace_principal(st, k, name).is_some())
}

pub fn create(
    st: &mut State,
    level: Level,
    kind: PrincipalKind,
    name: &str,
    display_name: &str,
) -> ApiResult<String> {
    if name.trim().is_empty() {
        return Err(ApiError::invalid(match kind {
            PrincipalKind::User => "Request is missing the userName attribute.",
            PrincipalKind::Group => "Request is missing the displayName attribute.",
            PrincipalKind::ServicePrincipal => "Request is missing the applicationId attribute.",
        }));
    }
    let taken = st.scim.principals(level).iter().any(|(_, p)| {
        p.kind == kind
            && match kind {
                PrincipalKind::User => p.name.eq_ignore_ascii_case(name),
                _ => p.name == name,
            }
    });
    if taken {
        let what = match kind {
            // The account's words differ (resource_user.go:14-20 matches both).
            PrincipalKind::User if level == Level::Account => {
                format!("User with email {name} already exists in this account.")
            }
            PrincipalKind::User => format!("User with username {name} already exists."),
            PrincipalKind::Group => format!("Group with name {name} already exists."),
            PrincipalKind::ServicePrincipal => {
                format!("Service principal with application ID {name} already exists.")
            }
        };
        return Err(ApiError::conflict("RESOURCE_ALREADY_EXISTS", what));
    }
    let id = st.next_id().to_string();
    st.scim.principals_mut(level).insert(
        id.clone(),
        Principal {
            kind,
            name: name.to_string(),
            display_name: display_name.to_string(),
            workspace_local: false,
        },
    );
    Ok(id)
}

pub fn delete(st: &mut State, level: Level, kind: PrincipalKind, id: &str) -> ApiResult<()> {
    match st.scim.principals(level).get(id) {
        // The workspace's own groups stay: they hold every user and the admins. The
        // wording is the local workspace's; the provider refuses the names before any call
        // (terraform-provider-databricks scim/resource_group.go:24-26, issue #1089).
        Some(p) if p.kind == kind && p.workspace_local => Err(ApiError::invalid(format!(
            "Cannot delete the built-in group {}.",
            p.name
        ))
        .with_code("mutability")),
        Some(p) if p.kind == kind => {
            st.scim.principals_mut(level).remove(id);
            st.scim.attrs_mut(level).remove(id);
            // Gone from every group it was in.
            let holding: Vec<String> = st
                .scim
                .attrs(level)
                .iter()
                .filter(|(_, a)| a.members.iter().any(|m| m == id))
                .map(|(g, _)| g.clone())
                .collect();
            for g in holding {
                let mut a = attributes(st, level, &g);
                a.members.retain(|m| m != id);
                set_attributes(st, level, &g, a);
            }
            Ok(())
        }
        _ => Err(missing(id)),
    }
}

/// The entitlements a workspace grants, in the order the provider reads them
/// (terraform-provider-databricks scim/scim.go:41-56).
pub const ENTITLEMENTS: &[&str] = &[
    "allow-cluster-create",
    "allow-instance-pool-create",
    "databricks-sql-access",
    "workspace-access",
    "workspace-consume",
];

/// What SCIM holds of principal `id` beyond its name.
pub fn attributes(st: &State, level: Level, id: &str) -> Attributes {
    st.scim.attrs(level).get(id).cloned().unwrap_or_default()
}

fn set_attributes(st: &mut State, level: Level, id: &str, mut a: Attributes) {
    // The account grants no workspace entitlements: a workspace does, to the account's
    // principals it holds (terraform-provider-databricks docs/resources/user.md,
    // "applicable only for workspace-level users").
    if level == Level::Account {
        a.entitlements.clear();
    }
    if a == Attributes::default() {
        if st.scim.attrs(level).contains_key(id) {
            st.scim.attrs_mut(level).remove(id);
        }
    } else {
        st.scim.attrs_mut(level).insert(id.to_string(), a);
    }
}

/// The values of a SCIM multi-valued attribute as written: `[{"value": "x"}, …]`, a list of
/// strings or one string. Empty values are nothing: the provider sends
/// `[{"value": ""}]` for no entitlements (scim/scim.go:87-93).
pub fn values_of(v: &Value) -> Vec<String> {
    let one = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Object(o) => match o.get("value") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Bool(b)) => Some(b.to_string()),
            _ => None,
        },
        _ => None,
    };
    match v {
        Value::Array(items) => items.iter().filter_map(one).collect::<Vec<_>>(),
        other => one(other).into_iter().collect(),
    }
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect()
}

fn check_entitlements(values: &[String]) -> ApiResult<()> {
    match values.iter().find(|v| !ENTITLEMENTS.contains(&v.as_str())) {
        Some(v) => {
            Err(ApiError::invalid(format!("Invalid entitlement value: {v}"))
                .with_code("invalidValue"))
        }
        None => Ok(()),
    }
}

fn check_members(
    st: &State,
    level: Level,
    group: Option<&str>,
    members: &[String],
) -> ApiResult<()> {
    for m in members {
        if Some(m.as_str()) == group {
            return Err(ApiError::invalid("A group cannot be a member of itself.")
                .with_code("invalidValue"));
        }
        if !st.scim.principals(level).contains_key(m) {
            return Err(missing(m));
        }
    }
    Ok(())
}

/// A principal made with what SCIM holds of it beyond its name.
pub fn create_with(
    st: &mut State,
    level: Level,
    kind: PrincipalKind,
    name: &str,
    display_name: &str,
    attrs: Attributes,
) -> ApiResult<String> {
    check_entitlements(&attrs.entitlements)?;
    check_members(st, level, None, &attrs.members)?;
    if kind != PrincipalKind::Group && !attrs.members.is_empty() {
        return Err(no_attribute("members"));
    }
    let id = create(st, level, kind, name, display_name)?;
    set_attributes(st, level, &id, attrs);
    Ok(id)
}

/// `invalidPath`, in the service's words (terraform-provider-databricks
/// scim/resource_entitlement.go:122).
fn no_attribute(path: &str) -> ApiError {
    ApiError::invalid(format!(
        "No such attribute with the name : {path} in the current resource"
    ))
    .with_code("invalidPath")
}

fn named(st: &State, level: Level, kind: PrincipalKind, id: &str) -> ApiResult<Principal> {
    match st.scim.principals(level).get(id) {
        Some(p) if p.kind == kind => Ok(p.clone()),
        _ => Err(missing(id)),
    }
}

/// A group's new display name: another group's is taken (409, as at create).
fn rename(
    st: &mut State,
    level: Level,
    id: &str,
    p: &mut Principal,
    display: &str,
) -> ApiResult<()> {
    if p.kind != PrincipalKind::Group {
        p.display_name = display.to_string();
        return Ok(());
    }
    if display.trim().is_empty() {
        return Err(ApiError::invalid(
            "Request is missing the displayName attribute.",
        ));
    }
    if display != p.name {
        let taken =
            st.scim.principals(level).iter().any(|(other, q)| {
                other != id && q.kind == PrincipalKind::Group && q.name == display
            });
        if taken {
            return Err(ApiError::conflict(
                "uniqueness",
                format!("Group with name {display} already exists."),
            ));
        }
        if p.workspace_local {
            return Err(
                ApiError::invalid(format!("Cannot rename the built-in group {}.", p.name))
                    .with_code("mutability"),
            );
        }
    }
    p.name = display.to_string();
    p.display_name = display.to_string();
    Ok(())
}

/// PUT: the principal replaced by what is sent (its name stays: a user's userName and a
/// service principal's applicationId do not change). A group's members are what is sent,
/// which is why the provider reads them first and sends them back
/// (terraform-provider-databricks scim/groups.go:75-91, users.go:73-86).
pub fn replace(
    st: &mut State,
    level: Level,
    kind: PrincipalKind,
    id: &str,
    display_name: Option<&str>,
    attrs: Attributes,
) -> ApiResult<()> {
    let mut p = named(st, level, kind, id)?;
    check_entitlements(&attrs.entitlements)?;
    check_members(st, level, Some(id), &attrs.members)?;
    if kind != PrincipalKind::Group && !attrs.members.is_empty() {
        return Err(no_attribute("members"));
    }
    match display_name {
        Some(d) => rename(st, level, id, &mut p, d)?,
        None if kind == PrincipalKind::Group => rename(st, level, id, &mut p, "")?,
        None => {}
    }
    st.scim.principals_mut(level).insert(id.to_string(), p);
    set_attributes(st, level, id, attrs);
    Ok(())
}

/// One PATCH operation (RFC 7644 3.5.2): `op` is `add`, `remove` or `replace`.
#[derive(Debug, Clone)]
pub struct Op {
    pub op: String,
    pub path: Option<String>,
    pub value: Option<Value>,
}

/// `members[value eq "42"]` as (`members`, `Some("42")`); a plain path as itself.
fn split_path(path: &str) -> (String, Option<String>) {
    match path.split_once('[') {
        Some((attr, rest)) => {
            let inner = rest.trim_end_matches(']');
            let value = parse_filter(inner).ok().map(|(_, v)| v);
            (attr.trim().to_string(), value)
        }
        None => (path.trim().to_string(), None),
    }
}

/// PATCH: the operations in order, all or none. The provider adds a member with
/// `add members [{value}]` and removes one with `remove members[value eq "ID"]`
/// (scim/resource_group_member.go:86-103), changes entitlements with `add`/`remove
/// entitlements [{value}]` (resource_entitlement.go:118-132), and deactivates with
/// `replace active [{value: "false"}]` (resource_user.go:172).
pub fn patch(
    st: &mut State,
    level: Level,
    kind: PrincipalKind,
    id: &str,
    ops: &[Op],
) -> ApiResult<()> {
    let mut p = named(st, level, kind, id)?;
    let mut a = attributes(st, level, id);
    let mut flat: Vec<(String, String, Option<String>, Option<Value>)> = Vec::new();
    for o in ops {
        let op = o.op.to_ascii_lowercase();
        if !["add", "remove", "replace"].contains(&op.as_str()) {
            return Err(
                ApiError::invalid(format!("Invalid patch operation: {}", o.op))
                    .with_code("invalidSyntax"),
            );
        }
        match &o.path {
            Some(path) => {
                let (attr, filter) = split_path(path);
                flat.push((op, attr, filter, o.value.clone()));
            }
            // No path: the value is an object of attributes.
            None => match &o.value {
                Some(Value::Object(m)) => {
                    for (k, v) in m {
                        flat.push((op.clone(), k.clone(), None, Some(v.clone())));
                    }
                }
                _ => {
                    return Err(ApiError::invalid(
                        "A patch operation without a path needs an object value.",
                    )
                    .with_code("invalidValue"));
                }
            },
        }
    }
    for (op, attr, filter, value) in flat {
        let given = value.as_ref().map(values_of).unwrap_or_default();
        match (attr.as_str(), op.as_str()) {
            ("members", _) if kind != PrincipalKind::Group => return Err(no_attribute(&attr)),
            ("members", "add") => {
                check_members(st, level, Some(id), &given)?;
                for m in given {
                    if !a.members.contains(&m) {
                        a.members.push(m);
                    }
                }
            }
            ("members", "replace") => {
                check_members(st, level, Some(id), &given)?;
                a.members = given;
            }
            ("members", _) => match (filter, value.is_some()) {
                (Some(m), _) => a.members.retain(|x| *x != m),
                (None, true) => a.members.retain(|x| !given.contains(x)),
                (None, false) => a.members.clear(),
            },
            ("entitlements", "add") => {
                check_entitlements(&given)?;
                for e in given {
                    if !a.entitlements.contains(&e) {
                        a.entitlements.push(e);
                    }
                }
            }
            ("entitlements", "replace") => {
                check_entitlements(&given)?;
                a.entitlements = given;
            }
            ("entitlements", _) => match (filter, value.is_some()) {
                (Some(e), _) => a.entitlements.retain(|x| *x != e),
                (None, true) => a.entitlements.retain(|x| !given.contains(x)),
                (None, false) => a.entitlements.clear(),
            },
            ("active", "add" | "replace") if kind != PrincipalKind::Group => {
                a.active = match given.first().map(String::as_str) {
                    Some("true") => true,
                    Some("false") => false,
                    _ => {
                        return Err(ApiError::invalid("active must be true or false")
                            .with_code("invalidValue"));
                    }
                };
            }
            ("displayName", "add" | "replace") => {
                let d = given.first().cloned().unwrap_or_default();
                rename(st, level, id, &mut p, &d)?;
            }
            ("externalId", "add" | "replace") => a.external_id = given.first().cloned(),
            ("externalId", "remove") => a.external_id = None,
            _ => return Err(no_attribute(&attr)),
        }
    }
    st.scim.principals_mut(level).insert(id.to_string(), p);
    a.entitlements
        .sort_by_key(|e| ENTITLEMENTS.iter().position(|k| k == e));
    set_attributes(st, level, id, a);
    Ok(())
}

/// The groups principal `id` is a direct member of, by id.
pub fn groups_of(st: &State, level: Level, id: &str) -> Vec<String> {
    st.scim
        .attrs(level)
        .iter()
        .filter(|(_, a)| a.members.iter().any(|m| m == id))
        .map(|(g, _)| g.clone())
        .collect()
}

pub fn missing(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Resource {id} not found."),
    )
}

/// The principals of a kind, in id order, that `filter` (`attr eq "value"`, the only SCIM
/// filter the workspace reads) keeps.
pub fn list<'a>(
    st: &'a State,
    level: Level,
    kind: PrincipalKind,
    filter: Option<&str>,
) -> ApiResult<Vec<(&'a String, &'a Principal)>> {
    let wanted = match filter {
        None => None,
        Some(f) => Some(parse_filter(f)?),
    };
    Ok(st
        .scim
        .principals(level)
        .iter()
        .filter(|(_, p)| p.kind == kind)
        .filter(|(id, p)| match &wanted {
            None => true,
            Some((attr, value)) => match attr.as_str() {
                "id" => *id == value,
                "username" | "applicationid" => p.name.eq_ignore_ascii_case(value),
                "displayname" => p.display_name == *value,
                _ => false,
            },
        })
        .collect())
}

fn parse_filter(f: &str) -> ApiResult<(String, String)> {
    let bad = || {
        ApiError::invalid(format!(
            "Invalid filter '{f}': only `attribute eq \"value\"` is supported"
        ))
    };
    let mut parts = f.trim().splitn(3, ' ');
    let attr = parts.next().ok_or_else(bad)?.to_ascii_lowercase();
    if !parts.next().ok_or_else(bad)?.eq_ignore_ascii_case("eq") {
        return Err(bad());
    }
    let value = parts.next().ok_or_else(bad)?.trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    Ok((attr, value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_principals_are_found_workspace_groups_are_not() {
        let mut st = State::new("me@x.com", 0);
        assert!(principal_exists(&st, "ME@x.com"));
        assert!(principal_exists(&st, "account users"));
        assert!(!principal_exists(&st, "admins"), "workspace-local");
        assert!(!principal_exists(&st, "data engineers"));
        let id = create(
            &mut st,
            Level::Workspace,
            PrincipalKind::Group,
            "data engineers",
            "data engineers",
        )
        .unwrap();
        assert!(principal_exists(&st, "data engineers"));
        assert_eq!(
            create(
                &mut st,
                Level::Workspace,
                PrincipalKind::Group,
                "data engineers",
                "x"
            )
            .unwrap_err()
            .code,
            "RESOURCE_ALREADY_EXISTS"
        );
        let found = list(
            &st,
            Level::Workspace,
            PrincipalKind::Group,
            Some("displayName eq \"data engineers\""),
        )
        .unwrap();
        assert_eq!(found.len(), 1);
        assert!(workspace_principal(&st, PrincipalKind::Group, "data engineers").is_some());
        assert!(workspace_principal(&st, PrincipalKind::Group, "users").is_some());
        assert!(workspace_principal(&st, PrincipalKind::Group, "account users").is_none());
        assert!(workspace_principal(&st, PrincipalKind::User, "Me@X.com").is_some());
        assert!(workspace_principal(&st, PrincipalKind::ServicePrincipal, "me@x.com").is_none());
        assert!(workspace_principal_named(&st, "admins"));
        delete(&mut st, Level::Workspace, PrincipalKind::Group, &id).unwrap();
        assert!(!principal_exists(&st, "data engineers"));
        assert!(
            list(
                &st,
                Level::Workspace,
                PrincipalKind::Group,
                Some("displayName co x")
            )
            .is_err()
        );
    }

    #[test]
    fn a_user_in_any_case_is_held_in_scims_spelling_only_with_the_behaviour() {
        let mut st = State::new("me@x.com", 0);
        create(
            &mut st,
            Level::Workspace,
            PrincipalKind::User,
            "Mixed.Case@Example.com",
            "m",
        )
        .unwrap();
        create(
            &mut st,
            Level::Workspace,
            PrincipalKind::Group,
            "Data Engineers",
            "Data Engineers",
        )
        .unwrap();
        create(
            &mut st,
            Level::Workspace,
            PrincipalKind::ServicePrincipal,
            "AB-12",
            "ci",
        )
        .unwrap();
        let on = Behaviours::default();
        let users = [PrincipalKind::User];
        assert!(on.on(Behaviour::PrincipalsAsScimHolds), "on by default");
        assert_eq!(
            held_name(&st, on, &users, "mixed.case@example.com"),
            "Mixed.Case@Example.com"
        );
        assert_eq!(held_name(&st, on, &users, "ME@X.COM"), "me@x.com");
        assert_eq!(held_name(&st, on, &users, "nobody@x.com"), "nobody@x.com");
        // Groups are case-sensitive: never re-spelled.
        let any = [
            PrincipalKind::User,
            PrincipalKind::Group,
            PrincipalKind::ServicePrincipal,
        ];
        assert_eq!(held_name(&st, on, &any, "data engineers"), "data engineers");
        assert_eq!(held_name(&st, on, &any, "ab-12"), "AB-12");
        assert_eq!(held_name(&st, on, &users, "ab-12"), "ab-12", "not a user");
        let off = on.without(Behaviour::PrincipalsAsScimHolds);
        assert_eq!(
            held_name(&st, off, &users, "mixed.case@example.com"),
            "mixed.case@example.com"
        );
    }
}
