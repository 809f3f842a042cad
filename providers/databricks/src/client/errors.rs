//! Errors of the client: `ApiError` for answers from the workspace (and transport failures),
//! `ClientError` for configuration and authentication problems found before any API call.
//!
//! Neither type ever holds a token or client secret: messages are built from names of
//! settings and where they came from, never from their values.

use brickform_core::provider::{ErrorKind, ProviderError};
use serde_json::Value;

use super::auth::{SettingError, SignInError};

/// An error answer of the Databricks REST API, or a transport failure (`status` 0).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{error_code}: {message}")]
pub struct ApiError {
    /// HTTP status; 0 when no response arrived (connection refused, timeout, TLS).
    pub status: u16,
    /// The service's `error_code`, or a code derived from the status when the body had none.
    pub error_code: String,
    pub message: String,
    pub kind: ErrorKind,
    /// The answer came to a repeat of a request whose earlier attempt failed in a way that
    /// may have reached the service (a 503, a lost response). A create that hears
    /// "already exists" from such a repeat most likely made the object itself.
    pub after_retry: bool,
    /// For a transport failure: the request may have reached the service (a timeout, a reset
    /// connection), as opposed to failing before anything was sent (DNS, TLS, refused).
    pub maybe_sent: bool,
    /// The `etag` in the metadata of the body's `google.rpc.ErrorInfo` detail: the Settings
    /// API answers a stale etag (409) or a setting not set yet (404) with the current one.
    pub etag: Option<String>,
}

impl ApiError {
    /// Builds the error from a status and the raw body, in any of the body shapes the service
    /// uses (see `parse_error_body`).
    pub(crate) fn from_response(status: u16, reason: &str, body: &[u8]) -> ApiError {
        let (code, message) = parse_error_body(status, reason, body);
        let error_code = code.unwrap_or_else(|| status_code_name(status).to_string());
        let kind = classify(&error_code, status);
        ApiError {
            status,
            error_code,
            message,
            kind,
            after_retry: false,
            maybe_sent: true,
            etag: error_info_etag(body),
        }
    }

    /// [`ApiError::from_response`] for the answer to `method path`, with the official SDK's
    /// overrides applied (see [`sdk_override`]): a few reads answer a missing object with a
    /// 400 that only its words tell from bad input.
    pub(crate) fn from_answer(
        method: &str,
        path: &str,
        status: u16,
        reason: &str,
        body: &[u8],
    ) -> ApiError {
        let mut e = ApiError::from_response(status, reason, body);
        if let Some(kind) = sdk_override(method, path, status, &e.error_code, &e.message) {
            e.kind = kind;
        }
        e
    }

    pub(crate) fn transport(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 0,
            error_code: "TRANSPORT_ERROR".into(),
            message: message.into(),
            kind: ErrorKind::Transient,
            after_retry: false,
            maybe_sent: true,
            etag: None,
        }
    }

    /// A failure before anything reached the service that repeating will not mend: the host
    /// does not resolve, its certificate is refused, nothing listens there.
    pub(crate) fn unreachable(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 0,
            error_code: "HOST_UNREACHABLE".into(),
            message: message.into(),
            kind: ErrorKind::Other,
            after_retry: false,
            maybe_sent: false,
            etag: None,
        }
    }

    /// Signing in failed before the request was sent (a sign-in tool or token endpoint
    /// refused): nothing reached the workspace.
    pub(crate) fn sign_in(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 0,
            error_code: "SIGN_IN_FAILED".into(),
            message: message.into(),
            kind: ErrorKind::Other,
            after_retry: false,
            maybe_sent: false,
            etag: None,
        }
    }

    /// A successful answer whose body could not be used (not JSON where JSON was expected).
    pub(crate) fn bad_body(status: u16, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error_code: "INVALID_RESPONSE".into(),
            message: message.into(),
            kind: ErrorKind::Other,
            after_retry: false,
            maybe_sent: true,
            etag: None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.kind == ErrorKind::NotFound
    }
}

/// A token for an API call could not be had: nothing reached the workspace.
impl From<SignInError> for ApiError {
    fn from(e: SignInError) -> ApiError {
        ApiError::sign_in(e.to_string())
    }
}

impl From<ApiError> for ProviderError {
    fn from(e: ApiError) -> ProviderError {
        let detail = if e.status == 0 {
            "no response from the workspace".to_string()
        } else {
            format!("HTTP {}", e.status)
        };
        // A server error or no answer may have come after the change was made; so may any
        // answer to a repeat of such a request.
        let uncertain = (e.status == 0 && e.maybe_sent) || e.status >= 500 || e.after_retry;
        ProviderError::new(e.kind, e.to_string())
            .with_detail(detail)
            .uncertain(uncertain)
    }
}

/// Problems with the configuration or credentials; every message says which source was used
/// and what is missing, never a secret's value.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    #[error("no Databricks host configured: {hint}")]
    NoHost { hint: String },
    #[error("invalid host {host:?}: {reason}")]
    InvalidHost { host: String, reason: String },
    #[error("no credentials for {host} (host from {host_source}): {hint}")]
    NoCredentials {
        host: String,
        host_source: String,
        hint: String,
    },
    #[error("{0}")]
    Incomplete(String),
    /// A sign-in setting that cannot be used (an endpoint, an Azure cloud).
    #[error(transparent)]
    Setting(#[from] SettingError),
    #[error(
        "validate: more than one authorization method configured: {methods} ({sources}); set auth_type to choose one"
    )]
    Ambiguous { methods: String, sources: String },
    #[error("auth_type {auth_type:?} is not supported: {hint}")]
    UnsupportedAuthType { auth_type: String, hint: String },
    /// A sign-in method was chosen but could not hand out a token.
    #[error(transparent)]
    SignIn(#[from] SignInError),
    #[error("config file {path}: {reason}")]
    ConfigFile { path: String, reason: String },
    #[error("OAuth: {0}")]
    OAuth(String),
    #[error("HTTP client: {0}")]
    Http(String),
}

/// Reads the error body shapes the SDK accepts: `{error_code, message}`, legacy `{error}`
/// (also OAuth's `{error, error_description}`), SCIM `{detail, status}`, plain text
/// `CODE: message`, HTML `<pre>`/`<title>`, or nothing (the reason phrase).
/// The etag of the first `google.rpc.ErrorInfo` detail of an error body that has one.
fn error_info_etag(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v.get("details")?
        .as_array()?
        .iter()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.ErrorInfo"))
        })
        .find_map(|d| d.get("metadata")?.get("etag")?.as_str().map(str::to_string))
}

fn parse_error_body(status: u16, reason: &str, body: &[u8]) -> (Option<String>, String) {
    if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(body) {
        let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
        if let Some(code) = s("error_code") {
            let msg = s("message").unwrap_or_default();
            return (Some(code), msg);
        }
        if let Some(detail) = s("detail") {
            let st = o
                .get("status")
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .unwrap_or_else(|| status.to_string());
            return (Some(format!("SCIM_{st}")), detail);
        }
        if let Some(err) = s("error") {
            let msg = match s("error_description") {
                Some(d) => format!("{err}: {d}"),
                None => err,
            };
            return (None, msg);
        }
        if let Some(msg) = s("message") {
            return (None, msg);
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return (None, reason.to_string());
    }
    if let Some(inner) =
        between(text, "<pre>", "</pre>").or_else(|| between(text, "<title>", "</title>"))
    {
        return (None, inner.trim().to_string());
    }
    if let Some((code, msg)) = text.split_once(": ")
        && !code.is_empty()
        && code
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
    {
        return (Some(code.to_string()), msg.trim().to_string());
    }
    // Cap what we echo: a proxy's error page can be large and is rarely useful in full.
    let mut msg: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        msg.push('…');
    }
    (None, msg)
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// The canonical code for a status, so every error carries some code even without a body.
fn status_code_name(status: u16) -> &'static str {
    match status {
        400 => "BAD_REQUEST",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "RESOURCE_CONFLICT",
        412 => "PRECONDITION_FAILED",
        429 => "TOO_MANY_REQUESTS",
        499 => "CANCELLED",
        500 => "INTERNAL_ERROR",
        501 => "NOT_IMPLEMENTED",
        502 => "BAD_GATEWAY",
        503 => "TEMPORARILY_UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

/// `error_code` first, HTTP status second (docs/architecture.md, The Databricks client): real
/// Unity Catalog has answered `CATALOG_ALREADY_EXISTS` with 400, so the status alone would call
/// an existing object bad input.
pub(crate) fn classify(error_code: &str, status: u16) -> ErrorKind {
    if let Some(kind) = classify_code(error_code) {
        return kind;
    }
    match status {
        400 | 412 | 413 | 422 => ErrorKind::InvalidInput,
        401 | 403 => ErrorKind::PermissionDenied,
        404 => ErrorKind::NotFound,
        409 => ErrorKind::Conflict,
        0 | 429 | 503 | 504 => ErrorKind::Transient,
        _ => ErrorKind::Other,
    }
}

/// One of the official SDK's error overrides: an answer to a request matching all of these
/// is of `kind`, whatever its code says.
struct Override {
    verb: &'static str,
    path: regex::Regex,
    status: u16,
    error_code: &'static str,
    message: regex::Regex,
    kind: ErrorKind,
}

/// The official SDK's overrides, as databricks-sdk-py databricks/sdk/errors/overrides.py
/// (generated from the API specification, as are databricks-sdk-go apierr/error_overrides.go
/// and databricks-sdk-java ErrorOverrides.java) lists them: clusters/get, jobs/get and
/// jobs/runs/get answer an object that is not there with `400 INVALID_PARAMETER_VALUE`, which
/// the SDK turns into `ResourceDoesNotExist` when the message says so. For runs that is
/// either `Run N does not exist` or `Run: N in job: M doesn't exist`, the words for a run the
/// service removed (runs are kept 60 days after they end).
#[allow(clippy::expect_used)] // constant patterns, checked by the tests
static SDK_OVERRIDES: std::sync::LazyLock<Vec<Override>> = std::sync::LazyLock::new(|| {
    let re = |r: &str| regex::Regex::new(r).expect("a valid override pattern");
    let not_found = |path: &str, message: &str| Override {
        verb: "GET",
        path: re(path),
        status: 400,
        error_code: "INVALID_PARAMETER_VALUE",
        message: re(message),
        kind: ErrorKind::NotFound,
    };
    vec![
        not_found(r"^/api/2\.\d/clusters/get", r"Cluster .* does not exist"),
        not_found(r"^/api/2\.\d/jobs/get", r"Job .* does not exist"),
        not_found(
            r"^/api/2\.\d/jobs/runs/get",
            r"(Run .* does not exist|Run: .* in job: .* doesn't exist)",
        ),
    ]
});

/// The kind the official SDK gives the answer to `method path`, when one of its overrides
/// matches it (see [`SDK_OVERRIDES`]).
pub(crate) fn sdk_override(
    method: &str,
    path: &str,
    status: u16,
    error_code: &str,
    message: &str,
) -> Option<ErrorKind> {
    let path = path.split('?').next().unwrap_or(path);
    SDK_OVERRIDES
        .iter()
        .find(|o| {
            o.verb == method
                && o.status == status
                && o.error_code == error_code
                && o.path.is_match(path)
                && o.message.is_match(message)
        })
        .map(|o| o.kind)
}

fn classify_code(code: &str) -> Option<ErrorKind> {
    Some(match code {
        // A wrong route is a client bug, not a missing object: calling it NotFound would let a
        // delete "succeed" silently.
        "ENDPOINT_NOT_FOUND" | "FEATURE_DISABLED" | "NOT_IMPLEMENTED" => ErrorKind::Other,
        "RESOURCE_DOES_NOT_EXIST" | "NOT_FOUND" => ErrorKind::NotFound,
        "RESOURCE_ALREADY_EXISTS" | "ALREADY_EXISTS" => ErrorKind::AlreadyExists,
        "ABORTED" | "RESOURCE_CONFLICT" => ErrorKind::Conflict,
        "RESOURCE_EXHAUSTED"
        | "REQUEST_LIMIT_EXCEEDED"
        | "TOO_MANY_REQUESTS"
        | "TEMPORARILY_UNAVAILABLE"
        | "WORKSPACE_TEMPORARILY_UNAVAILABLE"
        | "DEADLINE_EXCEEDED"
        | "TRANSPORT_ERROR" => ErrorKind::Transient,
        "PERMISSION_DENIED" | "UNAUTHENTICATED" | "UNAUTHORIZED" => ErrorKind::PermissionDenied,
        "INVALID_PARAMETER_VALUE" | "INVALID_STATE" | "BAD_REQUEST" | "MALFORMED_REQUEST" => {
            ErrorKind::InvalidInput
        }
        "UNKNOWN" | "DATA_LOSS" | "INTERNAL_ERROR" => ErrorKind::Other,
        c if c.ends_with("_DOES_NOT_EXIST") => ErrorKind::NotFound,
        c if c.ends_with("_ALREADY_EXISTS") => ErrorKind::AlreadyExists,
        // Deleting a non-empty parent is a conflict with the current state, not bad input: the
        // same request succeeds once the children are gone (or with force).
        c if c.ends_with("_NOT_EMPTY") => ErrorKind::Conflict,
        c if c.starts_with("INVALID_") => ErrorKind::InvalidInput,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_wins_over_status() {
        let e = ApiError::from_response(
            400,
            "Bad Request",
            br#"{"error_code":"CATALOG_ALREADY_EXISTS","message":"Catalog 'x' already exists"}"#,
        );
        assert_eq!(e.kind, ErrorKind::AlreadyExists);
        assert_eq!(
            e.to_string(),
            "CATALOG_ALREADY_EXISTS: Catalog 'x' already exists"
        );
    }

    #[test]
    fn status_fallback_and_shapes() {
        let cases: &[(u16, &[u8], &str, ErrorKind)] = &[
            (404, b"", "NOT_FOUND", ErrorKind::NotFound),
            (
                403,
                br#"{"error_code":"PERMISSION_DENIED","message":"no"}"#,
                "PERMISSION_DENIED",
                ErrorKind::PermissionDenied,
            ),
            (
                404,
                br#"{"error_code":"CATALOG_DOES_NOT_EXIST","message":"x"}"#,
                "CATALOG_DOES_NOT_EXIST",
                ErrorKind::NotFound,
            ),
            (
                404,
                br#"{"error_code":"ENDPOINT_NOT_FOUND","message":"x"}"#,
                "ENDPOINT_NOT_FOUND",
                ErrorKind::Other,
            ),
            (
                400,
                br#"{"error_code":"SCHEMA_NOT_EMPTY","message":"x"}"#,
                "SCHEMA_NOT_EMPTY",
                ErrorKind::Conflict,
            ),
            (
                400,
                br#"{"error_code":"INVALID_PARAMETER_VALUE","message":"x"}"#,
                "INVALID_PARAMETER_VALUE",
                ErrorKind::InvalidInput,
            ),
            (
                409,
                br#"{"error":"legacy"}"#,
                "RESOURCE_CONFLICT",
                ErrorKind::Conflict,
            ),
            (
                500,
                b"<html><pre>boom</pre></html>",
                "INTERNAL_ERROR",
                ErrorKind::Other,
            ),
            (
                503,
                b"TEMPORARILY_UNAVAILABLE: later",
                "TEMPORARILY_UNAVAILABLE",
                ErrorKind::Transient,
            ),
            (
                404,
                br#"{"detail":"User not found","status":"404"}"#,
                "SCIM_404",
                ErrorKind::NotFound,
            ),
            (
                429,
                br#"{"error_code":"REQUEST_LIMIT_EXCEEDED","message":"slow"}"#,
                "REQUEST_LIMIT_EXCEEDED",
                ErrorKind::Transient,
            ),
        ];
        for (status, body, code, kind) in cases {
            let e = ApiError::from_response(*status, "Reason", body);
            assert_eq!(
                e.error_code,
                *code,
                "{status} {}",
                String::from_utf8_lossy(body)
            );
            assert_eq!(e.kind, *kind, "{status} {}", String::from_utf8_lossy(body));
        }
        let e = ApiError::from_response(
            500,
            "Internal Server Error",
            b"<html><pre>boom</pre></html>",
        );
        assert_eq!(e.message, "boom");
        let e = ApiError::from_response(502, "Bad Gateway", b"");
        assert_eq!(e.message, "Bad Gateway");
    }

    /// databricks-sdk-py databricks/sdk/errors/overrides.py: runs/get (also runs/get-output,
    /// whose path it matches too) answers a run that is not there, or no longer kept, with
    /// 400 INVALID_PARAMETER_VALUE; the SDK calls both messages ResourceDoesNotExist.
    #[test]
    fn the_sdk_overrides_make_missing_runs_jobs_and_clusters_not_found() {
        let answer = |method: &str, path: &str, msg: &str| {
            let body = serde_json::json!({"error_code": "INVALID_PARAMETER_VALUE", "message": msg});
            ApiError::from_answer(
                method,
                path,
                400,
                "Bad Request",
                body.to_string().as_bytes(),
            )
            .kind
        };
        for (method, path, msg, kind) in [
            (
                "GET",
                "/api/2.2/jobs/runs/get",
                "Run: 1234 in job: 56 doesn't exist",
                ErrorKind::NotFound,
            ),
            (
                "GET",
                "/api/2.1/jobs/runs/get",
                "Run 1234 does not exist.",
                ErrorKind::NotFound,
            ),
            (
                "GET",
                "/api/2.2/jobs/get",
                "Job 56 does not exist.",
                ErrorKind::NotFound,
            ),
            (
                "GET",
                "/api/2.0/clusters/get",
                "Cluster 0101-abc does not exist",
                ErrorKind::NotFound,
            ),
            // Only where the SDK says so: other words, other calls, other verbs are bad input.
            (
                "GET",
                "/api/2.2/jobs/runs/get",
                "Invalid run_id",
                ErrorKind::InvalidInput,
            ),
            (
                "POST",
                "/api/2.2/jobs/runs/repair",
                "Run: 1234 in job: 56 doesn't exist",
                ErrorKind::InvalidInput,
            ),
            (
                "GET",
                "/api/2.2/jobs/list",
                "Job 56 does not exist.",
                ErrorKind::InvalidInput,
            ),
        ] {
            assert_eq!(answer(method, path, msg), kind, "{method} {path}: {msg}");
        }
        // The status and the code must match too.
        let e = ApiError::from_answer(
            "GET",
            "/api/2.2/jobs/runs/get",
            500,
            "Internal Server Error",
            br#"{"error_code":"INTERNAL_ERROR","message":"Run 1 does not exist"}"#,
        );
        assert_eq!(e.kind, ErrorKind::Other);
    }

    #[test]
    fn into_provider_error() {
        let e = ApiError::from_response(
            404,
            "Not Found",
            br#"{"error_code":"RESOURCE_DOES_NOT_EXIST","message":"Catalog 'x' does not exist."}"#,
        );
        let p: ProviderError = e.into();
        assert_eq!(p.kind, ErrorKind::NotFound);
        assert_eq!(
            p.message,
            "RESOURCE_DOES_NOT_EXIST: Catalog 'x' does not exist."
        );
    }
}
