//! Unity Catalog grants: the privileges each principal holds on a securable, read and
//! changed through `/permissions/{securable_type}/{full_name}`. Grants belong to their
//! securable: a rename carries them along, a delete (of it or of what holds it) takes them.

use super::securables::{SECURABLES, Securable};
use crate::behaviours::Behaviours;
use crate::errors::{ApiError, ApiResult};
use crate::scim::PrincipalKind;
use crate::store::State;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Principal → privileges, for one securable.
pub type Grants = BTreeMap<String, BTreeSet<String>>;

fn key(sec: &Securable, full_name: &str) -> String {
    format!("{}:{full_name}", sec.grant_type)
}

/// The privileges a grant on the metastore may hold (terraform-provider-databricks
/// docs/resources/grants.md, "Metastore grants"; MANAGE_ALLOWLIST from Databricks' privilege
/// reference). They are not inherited by what is in it.
pub const METASTORE_PRIVILEGES: &[&str] = &[
    "CREATE_CATALOG",
    "CREATE_CLEAN_ROOM",
    "CREATE_CONNECTION",
    "CREATE_EXTERNAL_LOCATION",
    "CREATE_PROVIDER",
    "CREATE_RECIPIENT",
    "CREATE_SERVICE_CREDENTIAL",
    "CREATE_SHARE",
    "CREATE_STORAGE_CREDENTIAL",
    "MANAGE_ALLOWLIST",
    "SET_SHARE_PERMISSION",
    "USE_MARKETPLACE_ASSETS",
    "USE_PROVIDER",
    "USE_RECIPIENT",
    "USE_SHARE",
];

/// Securables of Unity Catalog the local workspace does not serve, so none exists: their
/// `securable_type`, how the service's messages name them, and the privileges a grant on
/// one may hold (terraform-provider-databricks docs/resources/grants.md, one section each).
pub const ELSEWHERE: &[(&str, &str, &[&str])] = &[
    ("share", "Share", &["SELECT"]),
    ("model_service", "Model Service", AI_GATEWAY_PRIVILEGES),
    (
        "model_provider_service",
        "Model Provider Service",
        AI_GATEWAY_PRIVILEGES,
    ),
    ("mcp_service", "MCP Service", AI_GATEWAY_PRIVILEGES),
];

/// The privileges on a Unity AI Gateway model service, model provider service or MCP
/// service (docs/resources/grants.md, "Model service grants" and the two after it).
const AI_GATEWAY_PRIVILEGES: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "EXECUTE",
    "MANAGE",
    "READ_METADATA",
];

/// What grants are on: a securable of the table, or the metastore (by its id).
struct On {
    grant_type: &'static str,
    privileges: &'static [&'static str],
    key: String,
}

impl On {
    fn grants_key(&self) -> String {
        format!("{}:{}", self.grant_type, self.key)
    }
}

/// The securable a `securable_type` names, and the key of the one `full_name` names; it
/// must exist. The metastore is the workspace's own.
fn securable(st: &State, securable_type: &str, full_name: &str) -> ApiResult<On> {
    if securable_type.eq_ignore_ascii_case("metastore") {
        if !full_name.eq_ignore_ascii_case(&st.metastore_id) {
            return Err(ApiError::not_found(
                "METASTORE_DOES_NOT_EXIST",
                format!("Metastore '{full_name}' does not exist."),
            ));
        }
        return Ok(On {
            grant_type: "metastore",
            privileges: METASTORE_PRIVILEGES,
            key: st.metastore_id.clone(),
        });
    }
    // Functions and registered models are both `function`: the row of the one that exists.
    let of_type: Vec<&Securable> = SECURABLES
        .iter()
        .filter(|s| s.grant_type.eq_ignore_ascii_case(securable_type))
        .collect();
    let found = of_type
        .iter()
        .find(|s| s.key(full_name).is_ok_and(|k| s.has(st, &k)))
        .or(of_type.first())
        .copied();
    if found.is_none()
        && let Some((_, label, _)) = ELSEWHERE
            .iter()
            .find(|(t, _, _)| t.eq_ignore_ascii_case(securable_type))
    {
        return Err(ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("{label} '{}' does not exist.", full_name.to_lowercase()),
        ));
    }
    let sec = found.ok_or_else(|| {
            ApiError::invalid(format!(
                "Invalid value for field 'securable_type': {securable_type} is not a securable type grants are kept for in the local workspace"
            ))
        })?;
    let k = sec.key(full_name)?;
    if !sec.has(st, &k) {
        return Err(sec.missing(&k));
    }
    debug_assert_eq!(key(sec, &k), format!("{}:{k}", sec.grant_type));
    Ok(On {
        grant_type: sec.grant_type,
        privileges: sec.privileges,
        key: k,
    })
}

fn render(grants: Option<&Grants>, principal: Option<&str>) -> Value {
    let assignments: Vec<Value> = grants
        .into_iter()
        .flatten()
        .filter(|(who, p)| !p.is_empty() && principal.is_none_or(|x| x == who.as_str()))
        .map(|(principal, privileges)| json!({"principal": principal, "privileges": privileges}))
        .collect();
    json!({"privilege_assignments": assignments})
}

/// The grants on a securable (of `principal` only, when given: a user in any case, with
/// `principals_as_scim_holds`).
pub fn get(
    st: &State,
    b: Behaviours,
    securable_type: &str,
    full_name: &str,
    principal: Option<&str>,
) -> ApiResult<Value> {
    let on = securable(st, securable_type, full_name)?;
    let principal = principal.map(|p| crate::scim::held_name(st, b, &[PrincipalKind::User], p));
    Ok(render(
        st.uc.grants.get(&on.grants_key()),
        principal.as_deref(),
    ))
}

/// Applies `changes` (`[{principal, add, remove}]`): every principal must be an account
/// principal, every privilege one the securable takes, and no privilege both added and
/// removed. Removing `ALL_PRIVILEGES` removes everything the principal holds. With
/// `principals_as_scim_holds` a user named in any case is kept under SCIM's spelling, so
/// changes for one user written two ways change one assignment.
pub fn update(
    st: &mut State,
    b: Behaviours,
    securable_type: &str,
    full_name: &str,
    changes: &[Value],
) -> ApiResult<Value> {
    let on = securable(st, securable_type, full_name)?;
    let k = &on.key;
    let mut parsed = Vec::new();
    for c in changes {
        let principal = c
            .get("principal")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .ok_or_else(|| ApiError::invalid("Missing required field: changes.principal"))?;
        let list = |field: &str| -> ApiResult<Vec<String>> {
            match c.get(field) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|p| {
                        p.as_str().map(str::to_string).ok_or_else(|| {
                            ApiError::invalid(format!("Invalid value for field 'changes.{field}'"))
                        })
                    })
                    .collect(),
                Some(_) => Err(ApiError::invalid(format!(
                    "Invalid value for field 'changes.{field}': expected an array"
                ))),
            }
        };
        let (add, remove) = (list("add")?, list("remove")?);
        if add.iter().any(|p| remove.contains(p)) {
            return Err(ApiError::invalid(format!(
                "Duplicate privileges to add and delete for principal {principal}."
            )));
        }
        for p in add.iter().chain(&remove) {
            if !on.privileges.contains(&p.as_str()) {
                return Err(ApiError::invalid(format!(
                    "Privilege {p} is not applicable to this entity [{k}:{}]. If you are trying to grant a privilege on a parent securable, grant it there.",
                    on.grant_type.to_ascii_uppercase()
                )));
            }
        }
        if !add.is_empty() && !crate::scim::principal_exists(st, principal) {
            return Err(ApiError::invalid(format!(
                "Could not find principal with name {principal}."
            ))
            .with_code("PRINCIPAL_DOES_NOT_EXIST"));
        }
        let principal = crate::scim::held_name(st, b, &[PrincipalKind::User], principal);
        parsed.push((principal, add, remove));
    }
    let gk = on.grants_key();
    let mut grants = st.uc.grants.get(&gk).cloned().unwrap_or_default();
    for (principal, add, remove) in parsed {
        let held = grants.entry(principal).or_default();
        for p in &remove {
            if p == "ALL_PRIVILEGES" {
                held.clear();
            } else {
                held.remove(p);
            }
        }
        held.extend(add);
    }
    grants.retain(|_, p| !p.is_empty());
    if grants.is_empty() {
        st.uc.grants.remove(&gk);
    } else {
        st.uc.grants.insert(gk.clone(), grants);
    }
    Ok(render(st.uc.grants.get(&gk), None))
}

/// The securable under `key` is being deleted: its grants, and those of everything under
/// it, go with it.
pub fn forget(st: &mut State, sec: &Securable, key_: &str) {
    let own = key(sec, key_);
    let under = format!(".{}", key_);
    let gone: Vec<String> = st
        .uc
        .grants
        .keys()
        .filter(|k| {
            **k == own
                || (sec.child_field.is_some()
                    && k.split_once(':').is_some_and(|(_, name)| {
                        format!(".{name}").starts_with(&format!("{under}."))
                    }))
        })
        .cloned()
        .collect();
    for k in gone {
        st.uc.grants.remove(&k);
    }
}

/// The securable moved from `old` to `new`: its grants, and those under it, follow.
pub fn follow(st: &mut State, sec: &Securable, old: &str, new: &str) {
    let moved: Vec<(String, String)> = st
        .uc
        .grants
        .keys()
        .filter_map(|k| {
            let (ty, name) = k.split_once(':')?;
            let rest = if name == old && ty == sec.grant_type {
                ""
            } else if sec.child_field.is_some() {
                name.strip_prefix(&format!("{old}."))
                    .map(|_| &name[old.len()..])?
            } else {
                return None;
            };
            Some((k.clone(), format!("{ty}:{new}{rest}")))
        })
        .collect();
    for (from, to) in moved {
        if let Some(g) = st.uc.grants.remove(&from) {
            st.uc.grants.insert(to, g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Ctx;

    fn change(principal: &str, add: &[&str], remove: &[&str]) -> Value {
        json!({"principal": principal, "add": add, "remove": remove})
    }

    #[test]
    fn grants_are_checked_kept_and_follow_their_securable() {
        let mut st = State::new("me@x.com", 0);
        let b = Behaviours::default();
        let ctx = Ctx::for_test(1, 100);
        super::super::model::create_catalog(
            &mut st,
            &ctx,
            super::super::model::NewCatalog {
                name: "sales".into(),
                ..Default::default()
            },
        )
        .unwrap();
        let e = update(
            &mut st,
            b,
            "catalog",
            "sales",
            &[change("nobody", &["USE_CATALOG"], &[])],
        )
        .unwrap_err();
        assert_eq!(e.code, "PRINCIPAL_DOES_NOT_EXIST");
        assert_eq!(e.message, "Could not find principal with name nobody.");
        let e = update(
            &mut st,
            b,
            "catalog",
            "sales",
            &[change("account users", &["READ_FILES"], &[])],
        )
        .unwrap_err();
        assert!(
            e.message.contains("Privilege READ_FILES is not applicable"),
            "{}",
            e.message
        );
        let e = update(
            &mut st,
            b,
            "catalog",
            "sales",
            &[change("account users", &["SELECT"], &["SELECT"])],
        )
        .unwrap_err();
        assert!(e.message.contains("Duplicate privileges"), "{}", e.message);
        let e = update(&mut st, b, "catalog", "nope", &[]).unwrap_err();
        assert_eq!(e.code, "CATALOG_DOES_NOT_EXIST");

        let got = update(
            &mut st,
            b,
            "catalog",
            "sales",
            &[
                change("account users", &["USE_CATALOG", "SELECT"], &[]),
                change("ME@x.com", &["MANAGE"], &[]),
            ],
        )
        .unwrap();
        assert_eq!(got["privilege_assignments"].as_array().unwrap().len(), 2);
        let got = update(
            &mut st,
            b,
            "catalog",
            "sales",
            &[change("account users", &[], &["SELECT"])],
        )
        .unwrap();
        // ME@x.com is the user SCIM holds as me@x.com, listed under that spelling.
        assert_eq!(
            got["privilege_assignments"],
            json!([
                {"principal": "account users", "privileges": ["USE_CATALOG"]},
                {"principal": "me@x.com", "privileges": ["MANAGE"]},
            ])
        );
        let got = update(
            &mut st,
            b,
            "catalog",
            "sales",
            &[change("ME@x.com", &[], &["ALL_PRIVILEGES"])],
        )
        .unwrap();
        assert_eq!(got["privilege_assignments"].as_array().unwrap().len(), 1);

        let sec = SECURABLES
            .iter()
            .find(|s| s.grant_type == "catalog")
            .unwrap();
        follow(&mut st, sec, "sales", "revenue");
        assert!(!st.uc.grants.contains_key("catalog:sales"));
        assert!(st.uc.grants.contains_key("catalog:revenue"));
        forget(&mut st, sec, "revenue");
        assert!(st.uc.grants.is_empty());
    }

    #[test]
    fn one_user_written_two_ways_is_one_principal_in_scims_spelling() {
        let b = Behaviours::default();
        let off = b.without(crate::behaviours::Behaviour::PrincipalsAsScimHolds);
        for (behaviours, expected) in [
            (
                b,
                json!([{"principal": "Ann@X.com", "privileges": ["CREATE_SCHEMA", "USE_CATALOG"]}]),
            ),
            (
                off,
                json!([
                    {"principal": "ANN@x.com", "privileges": ["USE_CATALOG"]},
                    {"principal": "ann@x.com", "privileges": ["CREATE_SCHEMA"]},
                ]),
            ),
        ] {
            let mut st = State::new("me@x.com", 0);
            for (id, kind, name) in [
                ("7", PrincipalKind::User, "Ann@X.com"),
                ("8", PrincipalKind::Group, "Data Engineers"),
            ] {
                st.scim.principals.insert(
                    id.into(),
                    crate::scim::Principal {
                        kind,
                        name: name.into(),
                        display_name: name.into(),
                        workspace_local: false,
                    },
                );
            }
            super::super::model::create_catalog(
                &mut st,
                &Ctx::for_test(1, 100),
                super::super::model::NewCatalog {
                    name: "sales".into(),
                    ..Default::default()
                },
            )
            .unwrap();
            let got = update(
                &mut st,
                behaviours,
                "catalog",
                "sales",
                &[
                    change("ANN@x.com", &["USE_CATALOG"], &[]),
                    change("ann@x.com", &["CREATE_SCHEMA"], &[]),
                ],
            )
            .unwrap();
            assert_eq!(got["privilege_assignments"], expected, "{behaviours:?}");
            if behaviours == b {
                let one = get(&st, b, "catalog", "sales", Some("ann@x.COM")).unwrap();
                assert_eq!(one["privilege_assignments"], expected);
                // A group's display name is matched exactly.
                let e = update(
                    &mut st,
                    b,
                    "catalog",
                    "sales",
                    &[change("data engineers", &["USE_CATALOG"], &[])],
                )
                .unwrap_err();
                assert_eq!(e.code, "PRINCIPAL_DOES_NOT_EXIST");
            }
        }
    }
}
