//! The Secrets API over HTTP.

use super::KeyVault;
use super::model::{self, MAX_VALUE, check_name};
use crate::app::{App, AppState};
use crate::body::done;
use crate::body::{JsonBody, Obj, Params};
use crate::errors::{ApiError, ApiResult};
use axum::extract::State as AxState;
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::sync::Arc;

pub const PUT_PATH: &str = "/api/2.0/secrets/put";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.0/secrets/scopes/create", post(create_scope))
        .route("/api/2.0/secrets/scopes/delete", post(delete_scope))
        .route("/api/2.0/secrets/scopes/list", get(list_scopes))
        .route(PUT_PATH, post(put_secret))
        .route("/api/2.0/secrets/delete", post(delete_secret))
        .route("/api/2.0/secrets/list", get(list_secrets))
        .route("/api/2.0/secrets/get", get(get_secret))
        .route("/api/2.0/secrets/acls/put", post(put_acl))
        .route("/api/2.0/secrets/acls/get", get(get_acl))
        .route("/api/2.0/secrets/acls/list", get(list_acls))
        .route("/api/2.0/secrets/acls/delete", post(delete_acl))
}

type Reply = ApiResult<Json<Value>>;

/// Replaces a secret's value in a `secrets/put` body, for the request log: values are
/// write-only (`secrets/get` is the one, deliberate, way to read them back).
pub fn redact_write_only(body: &mut Value) {
    if let Value::Object(m) = body {
        for field in ["string_value", "bytes_value"] {
            if let Some(v) = m.get_mut(field) {
                *v = Value::String(crate::control::REDACTED.into());
            }
        }
    }
}

async fn create_scope(
    AxState(app): AppState,
    headers: axum::http::HeaderMap,
    JsonBody(b): JsonBody,
) -> Reply {
    let o = Obj::root(&b);
    let scope = o.req_str("scope")?.to_string();
    check_name("scope", &scope)?;
    let initial = o.str("initial_manage_principal")?.map(str::to_string);
    if initial.as_deref().is_some_and(|p| p != "users") {
        return Err(ApiError::invalid(
            "Invalid value for field 'initial_manage_principal': only 'users' is supported",
        ));
    }
    let backend = o
        .enum_str("scope_backend_type", &["DATABRICKS", "AZURE_KEYVAULT"])?
        .unwrap_or("DATABRICKS");
    let keyvault = if backend == "AZURE_KEYVAULT" {
        // The service creates a Key Vault-backed scope only for a caller signed in with a
        // Microsoft Entra ID token, which it reads the vault with; a personal access token
        // or a Databricks OAuth token is refused.
        if !crate::entra::signed_in_with_entra(&app, &headers) {
            return Err(ApiError::invalid(
                "Scope with Azure KeyVault must have userAADToken defined!",
            ));
        }
        let kv = o.obj("backend_azure_keyvault")?;
        let field = |k: &str| {
            kv.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        match (field("resource_id"), field("dns_name")) {
            (Some(resource_id), Some(dns_name)) => Some(KeyVault {
                resource_id,
                dns_name,
            }),
            _ => {
                return Err(ApiError::invalid(
                    "Missing required fields: backend_azure_keyvault.resource_id, backend_azure_keyvault.dns_name",
                ));
            }
        }
    } else {
        None
    };
    // The scope's first MANAGE goes to the principal named, or else to the caller.
    app.mutate(|st, ctx| {
        let manager = initial.as_deref().unwrap_or(ctx.user);
        model::create_scope(st, &scope, backend, keyvault, manager).map(|()| done())
    })
}

async fn delete_scope(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let scope = Obj::root(&b).req_str("scope")?.to_string();
    app.mutate(|st, _| model::delete_scope(st, &scope).map(|()| done()))
}

async fn list_scopes(AxState(app): AppState) -> Reply {
    app.view(|st, _| {
        let scopes: Vec<Value> = model::list_scopes(st)
            .into_iter()
            .map(|(name, scope)| {
                let mut v = json!({"name": name, "backend_type": scope.backend_type});
                if let Some(kv) = &scope.keyvault {
                    v["keyvault_metadata"] =
                        json!({"resource_id": kv.resource_id, "dns_name": kv.dns_name});
                }
                v
            })
            .collect();
        Ok(Json(json!({"scopes": scopes})))
    })
}

async fn put_secret(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let scope = o.req_str("scope")?.to_string();
    let key = o.req_str("key")?.to_string();
    check_name("key", &key)?;
    let value = match (o.str("string_value")?, o.str("bytes_value")?) {
        (Some(s), None) => s.as_bytes().to_vec(),
        (None, Some(b)) => STANDARD.decode(b).map_err(|_| {
            ApiError::invalid("Invalid value for field 'bytes_value': not valid base64")
        })?,
        (None, None) => {
            return Err(ApiError::invalid(
                "Exactly one of string_value, bytes_value must be set",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "Only one of string_value, bytes_value may be set",
            ));
        }
    };
    if value.len() > MAX_VALUE {
        return Err(ApiError::invalid(
            "Invalid value for field 'string_value': a secret is at most 128 KB",
        ));
    }
    app.mutate(|st, ctx| model::put_secret(st, ctx, &scope, &key, value).map(|()| done()))
}

async fn delete_secret(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let scope = o.req_str("scope")?.to_string();
    let key = o.req_str("key")?.to_string();
    app.mutate(|st, _| model::delete_secret(st, &scope, &key).map(|()| done()))
}

async fn list_secrets(AxState(app): AppState, q: Params) -> Reply {
    let scope = q.req_str("scope")?.to_string();
    app.view(|st, _| {
        let secrets: Vec<Value> = model::list_secrets(st, &scope)?
            .into_iter()
            .map(|(k, t)| json!({"key": k, "last_updated_timestamp": t}))
            .collect();
        Ok(Json(json!({"secrets": secrets})))
    })
}

async fn get_secret(AxState(app): AppState, q: Params) -> Reply {
    let scope = q.req_str("scope")?.to_string();
    let key = q.req_str("key")?.to_string();
    app.view(|st, _| {
        let value = model::get_secret(st, &scope, &key)?;
        Ok(Json(json!({"key": key, "value": STANDARD.encode(value)})))
    })
}

async fn put_acl(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let scope = o.req_str("scope")?.to_string();
    let principal = o.req_str("principal")?.to_string();
    let permission = o.req_str("permission")?.to_string();
    app.mutate(|st, ctx| {
        let principal = model::acl_principal(st, ctx.behaviours, &principal);
        model::put_acl(st, &scope, &principal, &permission).map(|()| done())
    })
}

async fn get_acl(AxState(app): AppState, q: Params) -> Reply {
    let scope = q.req_str("scope")?.to_string();
    let principal = q.req_str("principal")?.to_string();
    app.view(|st, ctx| {
        let principal = model::acl_principal(st, ctx.behaviours, &principal);
        let permission = model::get_acl(st, &scope, &principal)?;
        Ok(Json(
            json!({"principal": principal, "permission": permission}),
        ))
    })
}

async fn list_acls(AxState(app): AppState, q: Params) -> Reply {
    let scope = q.req_str("scope")?.to_string();
    app.view(|st, _| {
        let items: Vec<Value> = model::list_acls(st, &scope)?
            .into_iter()
            .map(|(p, l)| json!({"principal": p, "permission": l}))
            .collect();
        Ok(Json(json!({ "items": items })))
    })
}

async fn delete_acl(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let scope = o.req_str("scope")?.to_string();
    let principal = o.req_str("principal")?.to_string();
    app.mutate(|st, ctx| {
        let principal = model::acl_principal(st, ctx.behaviours, &principal);
        model::delete_acl(st, &scope, &principal).map(|()| done())
    })
}
