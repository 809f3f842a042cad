//! What the Secrets API does to the workspace state, apart from HTTP.

use super::{KeyVault, Scope, Secret};
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use std::collections::BTreeMap;

/// The most a secret's value may hold.
pub const MAX_VALUE: usize = 128 * 1024;

fn scope_missing(scope: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Scope {scope} does not exist!"),
    )
}

fn secret_missing(scope: &str, key: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Secret {key} does not exist in scope {scope}!"),
    )
}

/// Scope names and secret keys: alphanumeric, `-`, `_` and `.`, at most 128 characters.
pub fn check_name(field: &str, v: &str) -> ApiResult<()> {
    let ok = !v.is_empty()
        && v.len() <= 128
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::invalid(format!(
            "Invalid value for field '{field}': '{v}' must consist of alphanumeric characters, dashes, underscores and periods, at most 128 characters"
        )))
    }
}

/// Makes a scope. Its first ACL gives MANAGE to `manager`: the caller, or the principal
/// the request named as `initial_manage_principal`.
pub fn create_scope(
    st: &mut State,
    scope: &str,
    backend_type: &str,
    keyvault: Option<KeyVault>,
    manager: &str,
) -> ApiResult<()> {
    if st.secrets.secret_scopes.contains_key(scope) {
        return Err(ApiError::conflict(
            "RESOURCE_ALREADY_EXISTS",
            format!("Scope {scope} already exists!"),
        ));
    }
    st.secrets.secret_scopes.insert(
        scope.to_string(),
        Scope {
            backend_type: backend_type.to_string(),
            secrets: BTreeMap::new(),
            keyvault,
            acls: BTreeMap::from([(manager.to_string(), "MANAGE".to_string())]),
        },
    );
    Ok(())
}

/// Deletes a scope with its secrets.
pub fn delete_scope(st: &mut State, scope: &str) -> ApiResult<()> {
    st.secrets
        .secret_scopes
        .remove(scope)
        .map(|_| ())
        .ok_or_else(|| scope_missing(scope))
}

/// Every scope by name.
pub fn list_scopes(st: &State) -> Vec<(&str, &Scope)> {
    st.secrets
        .secret_scopes
        .iter()
        .map(|(k, s)| (k.as_str(), s))
        .collect()
}

/// A Key Vault scope is a read-only view of its vault: its secrets are set in Azure.
fn writable<'a>(st: &'a mut State, scope: &str) -> ApiResult<&'a mut Scope> {
    let s = st
        .secrets
        .secret_scopes
        .get_mut(scope)
        .ok_or_else(|| scope_missing(scope))?;
    if s.keyvault.is_some() {
        return Err(ApiError::invalid(format!(
            "Scope {scope} is backed by an Azure Key Vault: its secrets are managed in the vault, not through the Secrets API"
        )));
    }
    Ok(s)
}

/// Sets a secret (creating or replacing it).
pub fn put_secret(
    st: &mut State,
    ctx: &Ctx,
    scope: &str,
    key: &str,
    value: Vec<u8>,
) -> ApiResult<()> {
    let s = writable(st, scope)?;
    s.secrets.insert(
        key.to_string(),
        Secret {
            value,
            last_updated_timestamp: ctx.now,
        },
    );
    Ok(())
}

pub fn delete_secret(st: &mut State, scope: &str, key: &str) -> ApiResult<()> {
    let s = writable(st, scope)?;
    s.secrets
        .remove(key)
        .map(|_| ())
        .ok_or_else(|| secret_missing(scope, key))
}

/// The keys of a scope's secrets, with when each was last set; never the values.
pub fn list_secrets<'a>(st: &'a State, scope: &str) -> ApiResult<Vec<(&'a str, i64)>> {
    let s = st
        .secrets
        .secret_scopes
        .get(scope)
        .ok_or_else(|| scope_missing(scope))?;
    Ok(s.secrets
        .iter()
        .map(|(k, v)| (k.as_str(), v.last_updated_timestamp))
        .collect())
}

/// A secret's value: the one, deliberate, way to read it back.
pub fn get_secret<'a>(st: &'a State, scope: &str, key: &str) -> ApiResult<&'a [u8]> {
    let s = st
        .secrets
        .secret_scopes
        .get(scope)
        .ok_or_else(|| scope_missing(scope))?;
    s.secrets
        .get(key)
        .map(|v| v.value.as_slice())
        .ok_or_else(|| secret_missing(scope, key))
}

/// The levels of a secret ACL, weakest first.
pub const ACL_PERMISSIONS: &[&str] = &["READ", "WRITE", "MANAGE"];

fn scope_of<'a>(st: &'a State, scope: &str) -> ApiResult<&'a Scope> {
    st.secrets
        .secret_scopes
        .get(scope)
        .ok_or_else(|| scope_missing(scope))
}

fn acl_missing(scope: &str, principal: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Failed to get secret acl for principal {principal} for scope {scope}."),
    )
}

/// The name a scope's ACLs keep for `principal`: with `principals_as_scim_holds`, a user
/// or service principal named in any case is the one SCIM holds, in its spelling (groups
/// as given), so one user written two ways has one ACL.
pub fn acl_principal(st: &State, b: crate::behaviours::Behaviours, principal: &str) -> String {
    use crate::scim::PrincipalKind::{ServicePrincipal, User};
    crate::scim::held_name(st, b, &[User, ServicePrincipal], principal)
}

/// Gives `principal` `permission` on a scope, replacing what it had: the principal must be
/// a user, group or service principal of the workspace.
pub fn put_acl(st: &mut State, scope: &str, principal: &str, permission: &str) -> ApiResult<()> {
    scope_of(st, scope)?;
    if !ACL_PERMISSIONS.contains(&permission) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'permission': '{permission}' is not one of {}",
            ACL_PERMISSIONS.join(", ")
        )));
    }
    if !crate::scim::workspace_principal_named(st, principal) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'principal': {principal} is not a user, group or service principal of the workspace"
        )));
    }
    if let Some(s) = st.secrets.secret_scopes.get_mut(scope) {
        s.acls.insert(principal.to_string(), permission.to_string());
    }
    Ok(())
}

pub fn get_acl<'a>(st: &'a State, scope: &str, principal: &str) -> ApiResult<&'a str> {
    scope_of(st, scope)?
        .acls
        .get(principal)
        .map(String::as_str)
        .ok_or_else(|| acl_missing(scope, principal))
}

/// A scope's ACLs by principal.
pub fn list_acls<'a>(st: &'a State, scope: &str) -> ApiResult<Vec<(&'a str, &'a str)>> {
    Ok(scope_of(st, scope)?
        .acls
        .iter()
        .map(|(p, l)| (p.as_str(), l.as_str()))
        .collect())
}

pub fn delete_acl(st: &mut State, scope: &str, principal: &str) -> ApiResult<()> {
    let s = st
        .secrets
        .secret_scopes
        .get_mut(scope)
        .ok_or_else(|| scope_missing(scope))?;
    s.acls
        .remove(principal)
        .map(|_| ())
        .ok_or_else(|| acl_missing(scope, principal))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(now: i64) -> Ctx<'static> {
        Ctx::for_test(now, 100)
    }

    #[test]
    fn secrets_live_in_scopes_and_only_get_returns_values() {
        let mut st = State::new("u@x", 0);
        assert_eq!(
            put_secret(&mut st, &ctx(1), "s", "k", b"v".to_vec())
                .unwrap_err()
                .message,
            "Scope s does not exist!"
        );
        create_scope(&mut st, "s", "DATABRICKS", None, "u@x").unwrap();
        assert_eq!(
            create_scope(&mut st, "s", "DATABRICKS", None, "u@x")
                .unwrap_err()
                .code,
            "RESOURCE_ALREADY_EXISTS"
        );
        put_secret(&mut st, &ctx(5), "s", "k", b"v1".to_vec()).unwrap();
        put_secret(&mut st, &ctx(7), "s", "k", b"v2".to_vec()).unwrap();
        assert_eq!(list_secrets(&st, "s").unwrap(), [("k", 7)]);
        assert_eq!(get_secret(&st, "s", "k").unwrap(), b"v2");
        let scopes = list_scopes(&st);
        assert_eq!(scopes.len(), 1);
        assert_eq!(
            (scopes[0].0, scopes[0].1.backend_type.as_str()),
            ("s", "DATABRICKS")
        );
        delete_secret(&mut st, "s", "k").unwrap();
        assert_eq!(
            delete_secret(&mut st, "s", "k").unwrap_err().message,
            "Secret k does not exist in scope s!"
        );
        delete_scope(&mut st, "s").unwrap();
        assert!(delete_scope(&mut st, "s").is_err());
    }

    #[test]
    fn a_key_vault_scope_is_read_only() {
        let mut st = State::new("u@x", 0);
        let kv = KeyVault {
            resource_id:
                "/subscriptions/s/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/kv".into(),
            dns_name: "https://kv.vault.azure.net/".into(),
        };
        create_scope(&mut st, "kv", "AZURE_KEYVAULT", Some(kv.clone()), "u@x").unwrap();
        assert_eq!(list_scopes(&st)[0].1.keyvault.as_ref(), Some(&kv));
        for e in [
            put_secret(&mut st, &ctx(1), "kv", "k", b"v".to_vec()).unwrap_err(),
            delete_secret(&mut st, "kv", "k").unwrap_err(),
        ] {
            assert!(
                e.message.contains("backed by an Azure Key Vault"),
                "{}",
                e.message
            );
        }
        delete_scope(&mut st, "kv").unwrap();
    }

    #[test]
    fn acls_name_principals_of_the_workspace_and_the_creator_manages() {
        let mut st = State::new("u@x", 0);
        create_scope(&mut st, "s", "DATABRICKS", None, "u@x").unwrap();
        assert_eq!(list_acls(&st, "s").unwrap(), [("u@x", "MANAGE")]);
        put_acl(&mut st, "s", "users", "READ").unwrap();
        // A put replaces what the principal had.
        put_acl(&mut st, "s", "users", "WRITE").unwrap();
        assert_eq!(get_acl(&st, "s", "users").unwrap(), "WRITE");
        let e = put_acl(&mut st, "s", "nobody", "READ").unwrap_err();
        assert_eq!(e.code, "INVALID_PARAMETER_VALUE");
        assert!(e.message.contains("nobody is not a user"), "{}", e.message);
        assert!(put_acl(&mut st, "s", "users", "OWNER").is_err());
        assert!(put_acl(&mut st, "s", "account users", "READ").is_err());
        assert_eq!(
            put_acl(&mut st, "t", "users", "READ").unwrap_err().message,
            "Scope t does not exist!"
        );
        let b = crate::behaviours::Behaviours::default();
        let held = acl_principal(&st, b, "U@X");
        assert_eq!(held, "u@x", "a user in SCIM's spelling");
        put_acl(&mut st, "s", &held, "READ").unwrap();
        assert_eq!(
            list_acls(&st, "s").unwrap(),
            [("u@x", "READ"), ("users", "WRITE")]
        );
        let off = b.without(crate::behaviours::Behaviour::PrincipalsAsScimHolds);
        assert_eq!(acl_principal(&st, off, "U@X"), "U@X");
        assert_eq!(acl_principal(&st, b, "USERS"), "USERS", "groups as given");
        delete_acl(&mut st, "s", "users").unwrap();
        let e = get_acl(&st, "s", "users").unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            (
                "RESOURCE_DOES_NOT_EXIST",
                "Failed to get secret acl for principal users for scope s."
            )
        );
        assert!(delete_acl(&mut st, "s", "users").is_err());
        create_scope(&mut st, "shared", "DATABRICKS", None, "users").unwrap();
        assert_eq!(list_acls(&st, "shared").unwrap(), [("users", "MANAGE")]);
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("key", "a-b_c.d").is_ok());
        assert!(check_name("key", "a b").is_err());
        assert!(check_name("key", &"x".repeat(129)).is_err());
        assert!(check_name("key", "").is_err());
    }
}
