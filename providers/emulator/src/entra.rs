//! Stand-ins for the Azure side of signing in to Azure Databricks: the workspace's
//! `/aad/auth` login redirect (which names the tenant), Microsoft Entra ID's token endpoint
//! for a service principal's client secret, and the instance metadata service a managed
//! identity asks. Tokens minted for the Azure Databricks application are accepted on API
//! calls; tokens for the management endpoint are not, but a request that carries one in
//! `X-Databricks-Azure-SP-Management-Token` has that noted in the request log.
//!
//! Entra ID and the metadata service live elsewhere in Azure; here they are served under
//! `/_identity/azure/…` and `/_identity/azure-imds/…`, which clients reach through the Azure
//! SDKs' own settings (`AZURE_AUTHORITY_HOST`, `AZURE_POD_IDENTITY_AUTHORITY_HOST`).

use crate::app::App;
use crate::store::lock;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The tenant the local workspace belongs to.
pub const TENANT: &str = "9f37a392-f0ae-4280-9796-f1864a10effc";
/// The Azure Databricks application: what API tokens are minted for.
pub const DATABRICKS_APP: &str = "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d";
const MANAGEMENT: &str = "https://management.core.windows.net/";
const LIFETIME_S: i64 = 3599;

pub const MANAGEMENT_HEADER: &str = "x-databricks-azure-sp-management-token";
pub const RESOURCE_ID_HEADER: &str = "x-databricks-azure-workspace-resource-id";

/// Tokens minted: for the workspace (so a call can tell it came from an Entra ID sign-in)
/// and for the management endpoint (so the log can tell a real one from anything else in
/// the header).
#[derive(Default)]
pub struct Entra {
    workspace: Mutex<HashSet<String>>,
    management: Mutex<HashSet<String>>,
}

/// Whether the call's bearer token is one Entra ID (the stand-in) minted for the workspace.
pub fn signed_in_with_entra(app: &App, headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| lock(&app.entra.workspace).contains(t.trim()))
}

/// Paths served before the caller has a workspace credential.
pub fn is_public(path: &str) -> bool {
    path == "/aad/auth" || path.starts_with("/_identity/azure")
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/aad/auth", get(login_redirect))
        .route(
            "/_identity/azure/{tenant}/oauth2/token",
            post(client_secret),
        )
        .route(
            "/_identity/azure-imds/metadata/identity/oauth2/token",
            get(managed_identity),
        )
}

/// What the request log says of a call's Azure headers: whether a management token minted
/// here came with it, and the workspace resource id. `Null` when neither was sent.
pub fn log_note(app: &App, headers: &HeaderMap) -> Value {
    let management = headers
        .get(MANAGEMENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(|t| lock(&app.entra.management).contains(t));
    let resource_id = headers
        .get(RESOURCE_ID_HEADER)
        .and_then(|v| v.to_str().ok());
    if management.is_none() && resource_id.is_none() {
        return Value::Null;
    }
    json!({"management_token": management, "workspace_resource_id": resource_id})
}

/// The workspace's login page sends a browser to its tenant's sign-in page.
async fn login_redirect() -> Response {
    let to = format!(
        "https://login.microsoftonline.com/{TENANT}/oauth2/authorize?client_id={DATABRICKS_APP}&response_type=code"
    );
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

fn aad_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({
            "error": error,
            "error_description": format!("{description}\r\nTrace ID: 00000000-0000-0000-0000-000000000000\r\nCorrelation ID: 00000000-0000-0000-0000-000000000000"),
            "error_codes": [description.split(':').next().unwrap_or_default().trim_start_matches("AADSTS").parse::<i64>().unwrap_or(0)],
        })),
    )
        .into_response()
}

/// Mints a token for `resource`: one the workspace accepts, or a management token.
fn mint(app: &App, resource: &str) -> Option<String> {
    let token = format!("entra-{}", uuid::Uuid::new_v4().simple());
    if resource == DATABRICKS_APP {
        app.auth.accept(token.clone());
        lock(&app.entra.workspace).insert(token.clone());
    } else if resource.trim_end_matches('/') == MANAGEMENT.trim_end_matches('/') {
        lock(&app.entra.management).insert(token.clone());
    } else {
        return None;
    }
    Some(token)
}

fn answer(app: &App, resource: &str, token: String) -> Response {
    let now = app.now() / 1000;
    Json(json!({
        "token_type": "Bearer",
        "expires_in": LIFETIME_S.to_string(),
        "ext_expires_in": LIFETIME_S.to_string(),
        "expires_on": (now + LIFETIME_S).to_string(),
        "not_before": now.to_string(),
        "resource": resource,
        "access_token": token,
    }))
    .into_response()
}

/// Entra ID's v1 token endpoint, client-credentials grant with the secret in the form.
async fn client_secret(
    State(app): State<Arc<App>>,
    Path(tenant): Path<String>,
    form: Result<Form<HashMap<String, String>>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "AADSTS900144: The request body must contain the following parameter: 'grant_type'.",
        );
    };
    if tenant != TENANT {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("AADSTS90002: Tenant '{tenant}' not found."),
        );
    }
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "AADSTS70003: The app requested an unsupported grant type.",
        );
    }
    let id = form.get("client_id").filter(|s| !s.is_empty());
    let secret = form.get("client_secret").filter(|s| !s.is_empty());
    let (Some(_), Some(secret)) = (id, secret) else {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "AADSTS900144: The request body must contain the following parameter: 'client_id'.",
        );
    };
    if !app.auth.client_allowed(secret) {
        return aad_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.",
        );
    }
    let resource = form.get("resource").cloned().unwrap_or_default();
    match mint(&app, &resource) {
        Some(token) => answer(&app, &resource, token),
        None => aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_resource",
            &format!(
                "AADSTS500011: The resource principal named {resource} was not found in the tenant."
            ),
        ),
    }
}

/// The instance metadata service's managed-identity token.
async fn managed_identity(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if headers.get("metadata").and_then(|v| v.to_str().ok()) != Some("true") {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_request", "error_description": "Required metadata header not specified"})),
        )
            .into_response();
    }
    let resource = q.get("resource").cloned().unwrap_or_default();
    match mint(&app, &resource) {
        Some(token) => answer(&app, &resource, token),
        None => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_resource", "error_description": "AADSTS500011: The resource principal was not found."})),
        )
            .into_response(),
    }
}
