//! Secret scopes and secrets.

use crate::app::App;
use crate::body::{JsonBody, Obj, Params};
use crate::errors::{ApiError, ApiResult};
use crate::store::b64;
use axum::extract::State as AxState;
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scope {
    pub backend_type: String,
    pub secrets: BTreeMap<String, Secret>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Secret {
    #[serde(with = "b64")]
    pub value: Vec<u8>,
    pub last_updated_timestamp: i64,
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.0/secrets/scopes/create", post(create_scope))
        .route("/api/2.0/secrets/scopes/delete", post(delete_scope))
        .route("/api/2.0/secrets/scopes/list", get(list_scopes))
        .route(PUT_PATH, post(put_secret))
        .route("/api/2.0/secrets/delete", post(delete_secret))
        .route("/api/2.0/secrets/list", get(list_secrets))
        .route("/api/2.0/secrets/get", get(get_secret))
}

fn scope_missing(scope: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Scope {scope} does not exist!"),
    )
}

fn check_name(field: &str, v: &str) -> ApiResult<()> {
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

async fn create_scope(
    AxState(app): AxState<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let scope = o.req_str("scope")?.to_string();
    check_name("scope", &scope)?;
    if let Some(p) = o.str("initial_manage_principal")?
        && p != "users"
    {
        return Err(ApiError::invalid(
            "Invalid value for field 'initial_manage_principal': only 'users' is supported",
        ));
    }
    let backend = o
        .enum_str("scope_backend_type", &["DATABRICKS", "AZURE_KEYVAULT"])?
        .unwrap_or("DATABRICKS");
    if backend == "AZURE_KEYVAULT" {
        return Err(ApiError::invalid(
            "Invalid value for field 'scope_backend_type': AZURE_KEYVAULT scopes are not supported by the local workspace",
        ));
    }
    app.mutate(|st, _| {
        if st.secret_scopes.contains_key(&scope) {
            return Err(ApiError::conflict(
                "RESOURCE_ALREADY_EXISTS",
                format!("Scope {scope} already exists!"),
            ));
        }
        st.secret_scopes.insert(
            scope,
            Scope {
                backend_type: backend.to_string(),
                secrets: BTreeMap::new(),
            },
        );
        Ok(Json(json!({})))
    })
}

async fn delete_scope(
    AxState(app): AxState<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let scope = Obj::root(&b).req_str("scope")?.to_string();
    app.mutate(|st, _| {
        st.secret_scopes
            .remove(&scope)
            .ok_or_else(|| scope_missing(&scope))?;
        Ok(Json(json!({})))
    })
}

async fn list_scopes(AxState(app): AxState<Arc<App>>) -> ApiResult<Json<Value>> {
    app.view(|st, _| {
        let scopes: Vec<Value> = st
            .secret_scopes
            .iter()
            .map(|(k, s)| json!({"name": k, "backend_type": s.backend_type}))
            .collect();
        Ok(Json(json!({"scopes": scopes})))
    })
}

pub const PUT_PATH: &str = "/api/2.0/secrets/put";

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

async fn put_secret(
    AxState(app): AxState<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
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
    if value.len() > 128 * 1024 {
        return Err(ApiError::invalid(
            "Invalid value for field 'string_value': a secret is at most 128 KB",
        ));
    }
    app.mutate(|st, ctx| {
        let s = st
            .secret_scopes
            .get_mut(&scope)
            .ok_or_else(|| scope_missing(&scope))?;
        s.secrets.insert(
            key,
            Secret {
                value,
                last_updated_timestamp: ctx.now,
            },
        );
        Ok(Json(json!({})))
    })
}

async fn delete_secret(
    AxState(app): AxState<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let scope = o.req_str("scope")?.to_string();
    let key = o.req_str("key")?.to_string();
    app.mutate(|st, _| {
        let s = st
            .secret_scopes
            .get_mut(&scope)
            .ok_or_else(|| scope_missing(&scope))?;
        s.secrets.remove(&key).ok_or_else(|| {
            ApiError::not_found(
                "RESOURCE_DOES_NOT_EXIST",
                format!("Secret {key} does not exist in scope {scope}!"),
            )
        })?;
        Ok(Json(json!({})))
    })
}

async fn list_secrets(AxState(app): AxState<Arc<App>>, q: Params) -> ApiResult<Json<Value>> {
    let scope = q.req_str("scope")?.to_string();
    app.view(|st, _| {
        let s = st
            .secret_scopes
            .get(&scope)
            .ok_or_else(|| scope_missing(&scope))?;
        let secrets: Vec<Value> = s
            .secrets
            .iter()
            .map(|(k, v)| json!({"key": k, "last_updated_timestamp": v.last_updated_timestamp}))
            .collect();
        Ok(Json(json!({"secrets": secrets})))
    })
}

async fn get_secret(AxState(app): AxState<Arc<App>>, q: Params) -> ApiResult<Json<Value>> {
    let scope = q.req_str("scope")?.to_string();
    let key = q.req_str("key")?.to_string();
    app.view(|st, _| {
        let s = st
            .secret_scopes
            .get(&scope)
            .ok_or_else(|| scope_missing(&scope))?;
        let v = s.secrets.get(&key).ok_or_else(|| {
            ApiError::not_found(
                "RESOURCE_DOES_NOT_EXIST",
                format!("Secret {key} does not exist in scope {scope}!"),
            )
        })?;
        Ok(Json(
            json!({"key": key, "value": STANDARD.encode(&v.value)}),
        ))
    })
}
