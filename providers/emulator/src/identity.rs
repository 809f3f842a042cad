//! Stand-ins for Google's sign-in services, so Google Cloud sign-in can be tried against the
//! local workspace: an OAuth token endpoint (service-account JWTs and refresh tokens), the
//! IAM Credentials API (`generateIdToken`, `generateAccessToken`) and the Compute Engine
//! metadata server's token, all under `/_identity/google/`.
//!
//! ID tokens minted for the workspace's own URL are workspace credentials (as Databricks on
//! Google Cloud takes them); Google access tokens are not, but the IAM stand-in takes them,
//! and an API call that carries one in `X-Databricks-GCP-SA-Access-Token` is marked in the
//! request log (`gcp_sa_access_token`: `minted` or `unknown`), since the log keeps no headers.
//! Assertions are checked for shape and claims; their signatures are not verified.

use crate::app::App;
use crate::auth::{TokenForm, base_url, form_fields, not_a_form, oauth_error};
use crate::body::JsonBody;
use crate::errors::ApiResult;
use crate::store::lock;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

pub const PREFIX: &str = "/_identity/google/";
pub const TOKEN_PATH: &str = "/_identity/google/token";
const IAM_PATH: &str = "/_identity/google/iam/v1/projects/-/serviceAccounts/{*name}";
const METADATA_PATH: &str =
    "/_identity/google/metadata/computeMetadata/v1/instance/service-accounts/default/token";
const SA_HEADER: &str = "x-databricks-gcp-sa-access-token";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// Google refuses assertions meant to live longer than an hour.
const MAX_ASSERTION_S: i64 = 3600;
const DEFAULT_LIFETIME_S: i64 = 3600;

/// What the stand-ins remember.
pub struct Google {
    /// Access tokens minted here, with when they expire (seconds since the epoch).
    access: Mutex<HashMap<String, i64>>,
    /// Lifetimes of the ID and access tokens minted from now on; short ones let tests see
    /// tokens renewed.
    id_lifetime_s: AtomicI64,
    access_lifetime_s: AtomicI64,
}

impl Default for Google {
    fn default() -> Self {
        Google {
            access: Mutex::new(HashMap::new()),
            id_lifetime_s: AtomicI64::new(DEFAULT_LIFETIME_S),
            access_lifetime_s: AtomicI64::new(DEFAULT_LIFETIME_S),
        }
    }
}

impl Google {
    fn access_valid(&self, token: &str, now: i64) -> bool {
        lock(&self.access).get(token).is_some_and(|exp| *exp > now)
    }
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(TOKEN_PATH, post(token))
        .route(IAM_PATH, post(iam))
        .route(METADATA_PATH, get(metadata))
}

/// `/__emulator/identity/google`: the lifetimes of the tokens the stand-ins mint.
pub fn control_routes() -> Router<Arc<App>> {
    Router::new().route(
        "/__emulator/identity/google",
        get(show_settings).post(set_settings),
    )
}

/// For the request log: whether an API call carried a Google access token the stand-ins
/// minted (never the token itself).
pub fn sa_token_note(app: &App, headers: &HeaderMap) -> Option<Value> {
    let value = headers.get(SA_HEADER)?;
    let known = value
        .to_str()
        .is_ok_and(|t| app.google.access_valid(t.trim(), now_s(app)));
    Some(json!(if known { "minted" } else { "unknown" }))
}

fn now_s(app: &App) -> i64 {
    app.now() / 1000
}

/// Google APIs' error shape: `{"error": {code, message, status}}`.
fn google_error(status: StatusCode, message: &str) -> Response {
    let name = match status.as_u16() {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        _ => "UNKNOWN",
    };
    (
        status,
        Json(json!({"error": {"code": status.as_u16(), "message": message, "status": name}})),
    )
        .into_response()
}

fn decode_part(part: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(part.trim_end_matches('=')).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

/// Why a service-account assertion is refused: Google's `invalid_grant` answer says it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum AssertionError {
    #[error("Invalid JWT: a JWT has three parts.")]
    NotThreeParts,
    #[error("Invalid JWT Signature.")]
    NoSignature,
    #[error("Invalid JWT: the header is not base64url JSON.")]
    BadHeader,
    #[error("Invalid JWT: the algorithm must be RS256.")]
    NotRs256,
    #[error("Invalid JWT: no key id (kid).")]
    NoKeyId,
    #[error("Invalid JWT: the claims are not base64url JSON.")]
    BadClaims,
    #[error("Invalid JWT: no issuer (iss).")]
    NoIssuer,
    /// Not for this token endpoint (the audience it must name).
    #[error("Invalid JWT audience: it must be the token endpoint, {0}.")]
    WrongAudience(String),
    #[error("Invalid JWT: iat and exp are required.")]
    NoLifetime,
    #[error(
        "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
    )]
    BadLifetime,
}

/// The claims of a service-account assertion, once its shape and claims pass: an RS256
/// JWT with a key id, from an issuer, for this endpoint, not expired, at most an hour long.
fn assertion_claims(
    jwt: &str,
    audience: &str,
    now: i64,
) -> Result<Map<String, Value>, AssertionError> {
    let parts: Vec<&str> = jwt.split('.').collect();
    let [h, c, s] = parts.as_slice() else {
        return Err(AssertionError::NotThreeParts);
    };
    if s.is_empty() {
        return Err(AssertionError::NoSignature);
    }
    let header = decode_part(h).ok_or(AssertionError::BadHeader)?;
    if header.get("alg").and_then(Value::as_str) != Some("RS256") {
        return Err(AssertionError::NotRs256);
    }
    if header
        .get("kid")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(AssertionError::NoKeyId);
    }
    let claims = decode_part(c).ok_or(AssertionError::BadClaims)?;
    let text = |k: &str| claims.get(k).and_then(Value::as_str).unwrap_or_default();
    if text("iss").is_empty() {
        return Err(AssertionError::NoIssuer);
    }
    if text("aud") != audience {
        return Err(AssertionError::WrongAudience(audience.to_string()));
    }
    let (Some(iat), Some(exp)) = (
        claims.get("iat").and_then(Value::as_i64),
        claims.get("exp").and_then(Value::as_i64),
    ) else {
        return Err(AssertionError::NoLifetime);
    };
    if exp <= now || iat > now + 300 || exp - iat > MAX_ASSERTION_S {
        return Err(AssertionError::BadLifetime);
    }
    Ok(claims)
}

/// A JWT-shaped ID token for `audience`; a workspace credential when the audience is the
/// workspace itself.
fn mint_id_token(app: &App, audience: &str, email: &str, workspace: &str) -> String {
    let now = now_s(app);
    let header = json!({"alg": "RS256", "kid": "emulator", "typ": "JWT"});
    let claims = json!({
        "iss": "https://accounts.google.com",
        "aud": audience,
        "azp": email,
        "sub": email,
        "email": email,
        "email_verified": true,
        "iat": now,
        "exp": now + app.google.id_lifetime_s.load(Ordering::Relaxed),
    });
    let token = format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string()),
        URL_SAFE_NO_PAD.encode(uuid::Uuid::new_v4().as_bytes()),
    );
    if audience == workspace {
        app.auth.issue(token.clone());
    }
    token
}

/// A Google access token: the IAM stand-in takes it, the workspace does not.
fn mint_access_token(app: &App, lifetime_s: i64) -> (String, i64) {
    let token = format!("ya29.emu-{}", uuid::Uuid::new_v4().simple());
    let exp = now_s(app) + lifetime_s;
    lock(&app.google.access).insert(token.clone(), exp);
    (token, exp)
}

fn lifetime(app: &App) -> i64 {
    app.google.access_lifetime_s.load(Ordering::Relaxed)
}

fn access_answer(app: &App) -> Response {
    let lifetime = lifetime(app);
    let (token, _) = mint_access_token(app, lifetime);
    Json(json!({"access_token": token, "expires_in": lifetime, "token_type": "Bearer"}))
        .into_response()
}

async fn token(State(app): State<Arc<App>>, headers: HeaderMap, form: TokenForm) -> Response {
    let Some(form) = form_fields(form) else {
        return not_a_form();
    };
    let get = |k: &str| form.get(k).map(String::as_str).filter(|v| !v.is_empty());
    match get("grant_type") {
        Some(JWT_BEARER) => {
            let Some(assertion) = get("assertion") else {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "Missing required parameter: assertion",
                );
            };
            let base = base_url(&headers);
            let claims =
                match assertion_claims(assertion, &format!("{base}{TOKEN_PATH}"), now_s(&app)) {
                    Ok(c) => c,
                    Err(e) => {
                        return oauth_error(
                            StatusCode::BAD_REQUEST,
                            "invalid_grant",
                            &e.to_string(),
                        );
                    }
                };
            let claim = |k: &str| {
                claims
                    .get(k)
                    .and_then(Value::as_str)
                    .filter(|v| !v.is_empty())
            };
            if let Some(audience) = claim("target_audience") {
                let email = claim("iss").unwrap_or_default();
                let id = mint_id_token(&app, audience, email, &base);
                Json(json!({"id_token": id})).into_response()
            } else if claim("scope").is_some() {
                access_answer(&app)
            } else {
                oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_scope",
                    "Invalid OAuth scope or ID token audience provided.",
                )
            }
        }
        Some("refresh_token") => {
            if ["client_id", "client_secret", "refresh_token"]
                .iter()
                .any(|k| get(k).is_none())
            {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "client_id, client_secret and refresh_token are required.",
                );
            }
            access_answer(&app)
        }
        _ => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Invalid grant_type.",
        ),
    }
}

/// `POST …/serviceAccounts/{email}:{verb}`. Accounts named like Google's
/// (`…@….gserviceaccount.com`) can be impersonated; any other is refused as Google refuses
/// one the caller may not use (or that does not exist).
async fn iam(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .unwrap_or_default();
    if !app.google.access_valid(bearer, now_s(&app)) {
        return google_error(
            StatusCode::UNAUTHORIZED,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        );
    }
    let Some((account, verb)) = name.rsplit_once(':').filter(|(a, _)| !a.contains('/')) else {
        return google_error(StatusCode::NOT_FOUND, "The requested URL was not found.");
    };
    let permission = match verb {
        "generateIdToken" => "iam.serviceAccounts.getOpenIdToken",
        "generateAccessToken" => "iam.serviceAccounts.getAccessToken",
        _ => return google_error(StatusCode::NOT_FOUND, "The requested URL was not found."),
    };
    if !account.contains('@') || !account.ends_with(".gserviceaccount.com") {
        return google_error(
            StatusCode::FORBIDDEN,
            &format!("Permission '{permission}' denied on resource (or it may not exist)."),
        );
    }
    let Ok(Value::Object(req)) = serde_json::from_slice::<Value>(&body) else {
        return google_error(StatusCode::BAD_REQUEST, "The body must be a JSON object.");
    };
    if verb == "generateIdToken" {
        let Some(audience) = req
            .get("audience")
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())
        else {
            return google_error(StatusCode::BAD_REQUEST, "audience is required.");
        };
        let token = mint_id_token(&app, audience, account, &base_url(&headers));
        return Json(json!({"token": token})).into_response();
    }
    let scopes = req.get("scope").and_then(Value::as_array);
    if scopes.is_none_or(|s| s.is_empty() || s.iter().any(|v| !v.is_string())) {
        return google_error(StatusCode::BAD_REQUEST, "scope is required.");
    }
    let asked = match req.get("lifetime").and_then(Value::as_str) {
        None => DEFAULT_LIFETIME_S,
        Some(l) => match l.strip_suffix('s').and_then(|n| n.parse::<i64>().ok()) {
            Some(n) if (1..=DEFAULT_LIFETIME_S).contains(&n) => n,
            _ => {
                return google_error(
                    StatusCode::BAD_REQUEST,
                    "lifetime must be between 1s and 3600s.",
                );
            }
        },
    };
    let (token, exp) = mint_access_token(&app, asked.min(lifetime(&app)));
    let expire_time = jiff::Timestamp::from_second(exp)
        .map(|t| t.to_string())
        .unwrap_or_default();
    Json(json!({"accessToken": token, "expireTime": expire_time})).into_response()
}

/// The machine's service account token, for callers that say they mean it (the header).
async fn metadata(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if headers.get("metadata-flavor").and_then(|v| v.to_str().ok()) != Some("Google") {
        return (
            StatusCode::FORBIDDEN,
            "Missing required header \"Metadata-Flavor\": \"Google\"",
        )
            .into_response();
    }
    access_answer(&app)
}

async fn show_settings(State(app): State<Arc<App>>) -> Json<Value> {
    Json(json!({
        "id_token_lifetime_s": app.google.id_lifetime_s.load(Ordering::Relaxed),
        "access_token_lifetime_s": lifetime(&app),
    }))
}

async fn set_settings(
    State(app): State<Arc<App>>,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let fields = [
        ("id_token_lifetime_s", &app.google.id_lifetime_s),
        ("access_token_lifetime_s", &app.google.access_lifetime_s),
    ];
    // Every value is checked before any is set, so a refused request changes nothing.
    let mut set = Vec::new();
    for (key, slot) in fields {
        if let Some(v) = b.get(key) {
            let Some(s) = v.as_i64().filter(|s| *s > 0) else {
                return Err(crate::errors::ApiError::invalid(format!(
                    "Invalid value for field '{key}': must be a positive number of seconds"
                )));
            };
            set.push((slot, s));
        }
    }
    for (slot, s) in set {
        slot.store(s, Ordering::Relaxed);
    }
    Ok(show_settings(State(app)).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(header: Value, claims: Value) -> String {
        format!(
            "{}.{}.sig",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        )
    }

    #[test]
    fn assertions_are_checked_for_shape_and_claims() {
        let aud = "http://127.0.0.1:1/_identity/google/token";
        let h = json!({"alg": "RS256", "kid": "k1"});
        let ok =
            json!({"iss": "sa@p.iam.gserviceaccount.com", "aud": aud, "iat": 100, "exp": 3700});
        assert!(assertion_claims(&jwt(h.clone(), ok.clone()), aud, 200).is_ok());
        let expired = assertion_claims(&jwt(h.clone(), ok.clone()), aud, 3700).unwrap_err();
        assert!(expired.to_string().contains("short-lived"), "{expired}");
        let other = assertion_claims(&jwt(h.clone(), ok.clone()), "http://x/token", 200);
        assert!(other.unwrap_err().to_string().contains("audience"));
        let long = json!({"iss": "i", "aud": aud, "iat": 100, "exp": 9000});
        assert!(assertion_claims(&jwt(h.clone(), long), aud, 200).is_err());
        let hs = json!({"alg": "HS256", "kid": "k1"});
        assert!(assertion_claims(&jwt(hs, ok.clone()), aud, 200).is_err());
        let no_kid = json!({"alg": "RS256"});
        assert!(assertion_claims(&jwt(no_kid, ok), aud, 200).is_err());
        assert!(assertion_claims("a.b", aud, 200).is_err());
    }
}
