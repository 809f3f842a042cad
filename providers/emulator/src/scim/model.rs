//! What the SCIM API does to the workspace state, apart from HTTP.

use super::{Principal, PrincipalKind};
use crate::behaviours::{Behaviour, Behaviours};
use crate::errors::{ApiError, ApiResult};
use crate::store::State;

/// The id `GET /Me` answers with, so the seeded user is the one `Me` describes.
pub const SELF_ID: &str = "4242424242424242";

/// The principals a new workspace has.
pub fn seed(st: &mut State, user_name: &str) {
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
        st.principals.insert(
            id,
            Principal {
                kind,
                name,
                display_name,
                workspace_local,
            },
        );
    }
}

/// Whether grants may name `name`: an account user (by user name, in any case), group (by
/// display name) or service principal (by application id).
pub fn principal_exists(st: &State, name: &str) -> bool {
    st.principals.iter().any(|(_, p)| {
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
        st.principals.values().find(|p| {
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
    st.principals.values().find(|p| {
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
    let taken = st.principals.iter().any(|(_, p)| {
        p.kind == kind
            && match kind {
                PrincipalKind::User => p.name.eq_ignore_ascii_case(name),
                _ => p.name == name,
            }
    });
    if taken {
        let what = match kind {
            PrincipalKind::User => format!("User with username {name} already exists."),
            PrincipalKind::Group => format!("Group with name {name} already exists."),
            PrincipalKind::ServicePrincipal => {
                format!("Service principal with application id {name} already exists.")
            }
        };
        return Err(ApiError::conflict("RESOURCE_ALREADY_EXISTS", what));
    }
    let id = st.next_id().to_string();
    st.principals.insert(
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

pub fn delete(st: &mut State, kind: PrincipalKind, id: &str) -> ApiResult<()> {
    match st.principals.get(id) {
        Some(p) if p.kind == kind => {
            st.principals.remove(id);
            Ok(())
        }
        _ => Err(missing(id)),
    }
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
    kind: PrincipalKind,
    filter: Option<&str>,
) -> ApiResult<Vec<(&'a String, &'a Principal)>> {
    let wanted = match filter {
        None => None,
        Some(f) => Some(parse_filter(f)?),
    };
    Ok(st
        .principals
        .iter()
        .filter(|(_, p)| p.kind == kind)
        .filter(|(_, p)| match &wanted {
            None => true,
            Some((attr, value)) => match attr.as_str() {
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
            PrincipalKind::Group,
            "data engineers",
            "data engineers",
        )
        .unwrap();
        assert!(principal_exists(&st, "data engineers"));
        assert_eq!(
            create(&mut st, PrincipalKind::Group, "data engineers", "x")
                .unwrap_err()
                .code,
            "RESOURCE_ALREADY_EXISTS"
        );
        let found = list(
            &st,
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
        delete(&mut st, PrincipalKind::Group, &id).unwrap();
        assert!(!principal_exists(&st, "data engineers"));
        assert!(list(&st, PrincipalKind::Group, Some("displayName co x")).is_err());
    }

    #[test]
    fn a_user_in_any_case_is_held_in_scims_spelling_only_with_the_behaviour() {
        let mut st = State::new("me@x.com", 0);
        create(&mut st, PrincipalKind::User, "Mixed.Case@Example.com", "m").unwrap();
        create(
            &mut st,
            PrincipalKind::Group,
            "Data Engineers",
            "Data Engineers",
        )
        .unwrap();
        create(&mut st, PrincipalKind::ServicePrincipal, "AB-12", "ci").unwrap();
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
