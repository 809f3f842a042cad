//! Bearer-token auth, host metadata, OAuth machine-to-machine, and SCIM `Me`.

use crate::app::App;
use crate::errors::ApiError;
use crate::store::lock;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

const TOKEN_LIFETIME_S: i64 = 3600;
pub const TOKEN_PATH: &str = "/oidc/v1/token";

/// The token endpoint's form body for the request log: only fields known to be public keep
/// their value (an allow-list, so a percent-encoded `client_secret` cannot slip through).
pub fn redact_form(form: &str) -> String {
    form.split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if matches!(k, "grant_type" | "scope" | "client_id" | "resource") => {
                format!("{k}={v}")
            }
            Some((k, _)) => format!("{k}={}", crate::control::REDACTED),
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

pub struct Auth {
    /// `None`: any non-empty bearer token is accepted.
    allowed: Option<HashSet<String>>,
    /// Access tokens minted by the token endpoint; always accepted.
    issued: Mutex<HashSet<String>>,
}

impl Auth {
    pub fn new(tokens: Option<Vec<String>>) -> Auth {
        Auth {
            allowed: tokens.map(|t| t.into_iter().collect()),
            issued: Mutex::new(HashSet::new()),
        }
    }

    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let Some(token) = token else {
            return Err(ApiError::unauthenticated(
                "Credential was not sent or was of an unsupported type for this API.",
            ));
        };
        let ok = match &self.allowed {
            None => true,
            Some(set) => set.contains(token) || lock(&self.issued).contains(token),
        };
        if ok {
            Ok(())
        } else {
            Err(ApiError::unauthenticated("Invalid access token."))
        }
    }

    /// Accepts `token` from now on: one a sign-in stand-in minted for the workspace.
    pub fn issue(&self, token: String) {
        lock(&self.issued).insert(token);
    }

    /// Whether only configured tokens are accepted (else any non-empty one is).
    pub fn has_tokens(&self) -> bool {
        self.allowed.is_some()
    }

    /// Accepts `token` on API calls from now on (a token an identity stand-in minted).
    pub fn accept(&self, token: String) {
        lock(&self.issued).insert(token);
    }

    pub fn client_allowed(&self, secret: &str) -> bool {
        match &self.allowed {
            None => true,
            Some(set) => set.contains(secret),
        }
    }
}

/// Paths that the SDK calls before it has credentials, and the sign-in stand-ins (which
/// check credentials of their own).
pub fn is_public(path: &str) -> bool {
    path.starts_with("/.well-known/")
        || path.starts_with("/oidc/")
        || path.starts_with(crate::identity::PREFIX)
        || crate::entra::is_public(path)
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/.well-known/databricks-config", get(host_metadata))
        .route(
            "/oidc/.well-known/oauth-authorization-server",
            get(discovery),
        )
        .route(TOKEN_PATH, post(token))
        .route("/api/2.0/preview/scim/v2/Me", get(me))
}

pub(crate) fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

async fn host_metadata(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let workspace_id = app.view(|st, _| Ok(st.workspace_id))?;
    Ok(Json(json!({
        "oidc_endpoint": format!("{}/oidc", base_url(&headers)),
        "workspace_id": workspace_id.to_string(),
        "account_id": crate::scim::ACCOUNT_ID,
        "cloud": "aws",
    })))
}

async fn discovery(headers: HeaderMap) -> Json<Value> {
    let base = base_url(&headers);
    Json(json!({
        "issuer": format!("{base}/oidc"),
        "authorization_endpoint": format!("{base}/oidc/v1/authorize"),
        "token_endpoint": format!("{base}/oidc/v1/token"),
        "grant_types_supported": ["client_credentials", "authorization_code", "refresh_token"],
        "scopes_supported": ["all-apis", "offline_access"],
    }))
}

/// An OAuth token endpoint's error answer (`{error, error_description}`).
pub(crate) fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

/// A token endpoint's form body, as axum hands it over.
pub(crate) type TokenForm =
    Result<Form<HashMap<String, String>>, axum::extract::rejection::FormRejection>;

/// The fields of a token request; `None` when its body is not a form.
pub(crate) fn form_fields(form: TokenForm) -> Option<HashMap<String, String>> {
    form.ok().map(|Form(f)| f)
}

/// The answer to a token request whose body is not a form.
pub(crate) fn not_a_form() -> Response {
    oauth_error(
        StatusCode::BAD_REQUEST,
        "invalid_request",
        "The body must be application/x-www-form-urlencoded.",
    )
}

/// Client credentials from `Authorization: Basic` (what the SDK sends) or the form body.
fn client_credentials(
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Option<(String, String)> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| STANDARD.decode(b.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| {
            s.split_once(':')
                .map(|(a, b)| (a.to_string(), b.to_string()))
        });
    basic.or_else(|| {
        Some((
            form.get("client_id")?.clone(),
            form.get("client_secret")?.clone(),
        ))
    })
}

async fn token(State(app): State<Arc<App>>, headers: HeaderMap, form: TokenForm) -> Response {
    let Some(form) = form_fields(form) else {
        return not_a_form();
    };
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Only client_credentials is supported.",
        );
    }
    let Some((id, secret)) = client_credentials(&headers, &form) else {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed.",
        );
    };
    if id.is_empty() || secret.is_empty() || !app.auth.client_allowed(&secret) {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed.",
        );
    }
    let access = format!("emu-{}", uuid::Uuid::new_v4().simple());
    lock(&app.auth.issued).insert(access.clone());
    Json(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": TOKEN_LIFETIME_S,
        "scope": form.get("scope").cloned().unwrap_or_else(|| "all-apis".to_string()),
    }))
    .into_response()
}

async fn me(State(app): State<Arc<App>>) -> Json<Value> {
    let user = app.user.clone();
    let given = user.split('@').next().unwrap_or(&user).to_string();
    Json(json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "id": "4242424242424242",
        "userName": user,
        "displayName": given,
        "name": {"givenName": given},
        "active": true,
        "emails": [{"value": user, "type": "work", "primary": true}],
        "groups": [{"display": "users", "value": "1000", "type": "direct"},
                   {"display": "admins", "value": "1001", "type": "direct"}],
        "entitlements": [{"value": "workspace-access"}, {"value": "allow-cluster-create"}],
    }))
}
