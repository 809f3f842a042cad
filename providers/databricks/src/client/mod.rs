//! The Databricks REST client: auth, retries, rate limiting, pagination and error
//! classification, shared by every resource kind.
//!
//! Paths are given raw (`/api/2.1/unity-catalog/catalogs/main`,
//! `/api/2.0/fs/files/Volumes/c/s/v/my file.csv`): the client percent-encodes what a URL path
//! cannot hold (spaces, `?`, `#`, non-ASCII), as the SDK's `quote(path)` does. Query parameters
//! go in `query`, never in the path.

mod auth;
mod config_file;
mod errors;
pub mod files;
mod limiter;
mod pages;
mod retry;
mod secrets;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;

pub use auth::{
    AUTH_TYPES, AuthError, AuthType, CredentialInfo, SECRET_SETTINGS, SettingError, SignInError,
    Source, credential_variables, normalize_host,
};
pub use errors::{ApiError, ClientError};
pub use pages::PageSize;
pub use secrets::{
    KEYRING_HINT, KeyringStore, MemoryStore, NoStore, SecretStore, SecretStoreError,
};

use auth::{Credentials, M2m, Minted, TokenSource};
use limiter::Limiter;

const DEFAULT_INITIAL_RATE: f64 = 30.0;
const DEFAULT_RETRY_TIMEOUT: Duration = Duration::from_secs(300);
const DEFAULT_HTTP_TIMEOUT: Duration = Duration::from_secs(60);

/// Provider block / `--local` / env / profile inputs, all optional.
#[derive(Clone, Default)]
pub struct Settings {
    pub host: Option<String>,
    /// The Databricks account, for an accounts host (`account_id`, DATABRICKS_ACCOUNT_ID).
    pub account_id: Option<String>,
    pub token: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub profile: Option<String>,
    pub config_file: Option<std::path::PathBuf>,
    pub auth_type: Option<String>,
    /// Azure: the workspace's resource id, a service principal, a managed identity, the cloud.
    pub azure_workspace_resource_id: Option<String>,
    pub azure_client_id: Option<String>,
    pub azure_client_secret: Option<String>,
    pub azure_tenant_id: Option<String>,
    pub azure_use_msi: Option<bool>,
    pub azure_environment: Option<String>,
    pub azure_login_app_id: Option<String>,
    /// Where the Databricks CLI is, when it is not `databricks` on PATH.
    pub databricks_cli_path: Option<String>,
    /// Google Cloud: a service-account key (its file's path, or its JSON), or the service
    /// account to impersonate with application default credentials.
    pub google_credentials: Option<String>,
    pub google_service_account: Option<String>,
    /// A fixed cap in requests/s; the adaptive limiter never goes above it.
    pub rate_limit: Option<f64>,
    /// Where the adaptive limiter starts (requests/s); default 30.
    pub initial_rate: Option<f64>,
    /// Time budget for retries of one call; default 5 min.
    pub retry_timeout: Option<Duration>,
    /// Timeout of one HTTP exchange; default 60 s.
    pub http_timeout: Option<Duration>,
}

fn redacted(v: &Option<String>) -> Option<&'static str> {
    v.as_ref().map(|_| "[REDACTED]")
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("host", &self.host)
            .field("account_id", &self.account_id)
            .field("token", &redacted(&self.token))
            .field("client_id", &self.client_id)
            .field("client_secret", &redacted(&self.client_secret))
            .field("profile", &self.profile)
            .field("config_file", &self.config_file)
            .field("auth_type", &self.auth_type)
            .field(
                "azure_workspace_resource_id",
                &self.azure_workspace_resource_id,
            )
            .field("azure_client_id", &self.azure_client_id)
            .field("azure_client_secret", &redacted(&self.azure_client_secret))
            .field("azure_tenant_id", &self.azure_tenant_id)
            .field("azure_use_msi", &self.azure_use_msi)
            .field("azure_environment", &self.azure_environment)
            .field("azure_login_app_id", &self.azure_login_app_id)
            .field("databricks_cli_path", &self.databricks_cli_path)
            .field("google_credentials", &redacted(&self.google_credentials))
            .field("google_service_account", &self.google_service_account)
            .field("rate_limit", &self.rate_limit)
            .field("initial_rate", &self.initial_rate)
            .field("retry_timeout", &self.retry_timeout)
            .field("http_timeout", &self.http_timeout)
            .finish()
    }
}

/// What `connect` still has to do once the client exists: discover M2M's token endpoint, or
/// get the first token of a method whose tokens expire (one method, or the first of several
/// that works).
enum Pending {
    None,
    M2m(String, SecretString),
    Minting(Box<dyn TokenSource>),
    Chain {
        tried: Vec<(Box<dyn TokenSource>, Source)>,
        none: ClientError,
    },
}

/// The HTTP client: its user agent names the sign-in method, as the SDKs' does.
fn http_client(
    timeout: Option<Duration>,
    auth_type: AuthType,
) -> Result<reqwest::Client, ClientError> {
    let user_agent = format!(
        "brickform/{} os/{} auth/{}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        auth_type.as_str()
    );
    reqwest::Client::builder()
        .user_agent(user_agent)
        .timeout(timeout.unwrap_or(DEFAULT_HTTP_TIMEOUT))
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| ClientError::Http(e.to_string()))
}

/// Counters for benchmarks and tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientStats {
    /// HTTP requests sent, retries included.
    pub requests: u64,
    /// Requests that were repeats of an earlier failed attempt.
    pub retries: u64,
    /// 429 answers seen.
    pub throttled: u64,
    /// Attempts that got no HTTP answer (connect, timeout, TLS).
    pub transport_errors: u64,
    /// The limiter's current rate in requests/s.
    pub current_rate: f64,
}

/// Metadata of a file from a HEAD request (Files API).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    pub content_length: Option<u64>,
    pub content_type: Option<String>,
    /// RFC 7231 date, as sent.
    pub last_modified: Option<String>,
}

#[derive(Debug)]
enum Auth {
    Pat(SecretString),
    M2m(M2m),
    Minting(Minting),
}

/// A method whose tokens expire, with the headers of its last token.
struct Minting {
    source: Box<dyn TokenSource>,
    cached: tokio::sync::Mutex<Option<Minted>>,
}

impl std::fmt::Debug for Minting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Minting({})", self.source.auth_type().as_str())
    }
}

struct Inner {
    host: String,
    http: reqwest::Client,
    auth: Auth,
    info: CredentialInfo,
    limiter: Limiter,
    retry_timeout: Duration,
    requests: AtomicU64,
    retries: AtomicU64,
    throttled: AtomicU64,
    transport_errors: AtomicU64,
    /// Set once the host refused connections for the whole while: later calls fail at once
    /// with the same error instead of each waiting (and warning) again.
    refused: std::sync::Mutex<Option<ApiError>>,
    /// The wait for a refusing host is said once, however many calls wait together.
    refused_warned: std::sync::atomic::AtomicBool,
}

/// The Databricks API client. Cheap to clone; clones share the connection pool, the token and
/// the rate limiter (which is per host, so one limiter serves every caller of a workspace).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("host", &self.inner.host)
            .field("auth", &self.inner.info.auth_type.as_str())
            .field(
                "credentials_from",
                &self.inner.info.credential_source.to_string(),
            )
            .finish()
    }
}

/// A request body.
enum Body<'a> {
    None,
    Json(&'a Value),
    Bytes(bytes::Bytes),
    Form(&'a [(&'a str, &'a str)]),
}

/// How a request authenticates.
#[derive(Clone, Copy)]
enum AuthMode<'a> {
    /// The workspace credentials (bearer token).
    Api,
    /// Unauthenticated (discovery).
    None,
    /// A fixed header (the token endpoint's Basic auth).
    Header(&'a str),
}

/// Whether a request may be sent again after a failure that may have reached the service
/// (a 500, 502 or 504, a reset, a timeout). Reads always may; a write only when its caller
/// says so ([`Client::idempotent`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Repeat {
    /// Sent again only when it surely did nothing (429, 503, no connection made).
    Once,
    /// Sending it twice does what sending it once does.
    Safe,
}

/// Writes that are safe to repeat ([`Client::idempotent`]): retried like reads.
#[derive(Clone, Copy)]
pub struct Idempotent<'a> {
    client: &'a Client,
}

impl Idempotent<'_> {
    /// A POST that sets a whole object or ends in the same state however often it is sent:
    /// `workspace/mkdirs`, `workspace/import` with `overwrite`, `workspace/delete`,
    /// `jobs/reset`, `jobs/delete`, a warehouse's `edit`, `secrets/put`.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.client
            .write(Method::POST, path, &[], Body::Json(body), Repeat::Safe)
            .await
    }

    /// A PUT of a whole object (permissions, a pipeline's settings).
    pub async fn put(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.client
            .write(Method::PUT, path, &[], Body::Json(body), Repeat::Safe)
            .await
    }

    /// A PATCH that sets an attribute to a value or removes given values (a SCIM `replace`
    /// or `remove` of entitlements): the same state however often it is sent.
    pub async fn patch(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.client
            .write(Method::PATCH, path, &[], Body::Json(body), Repeat::Safe)
            .await
    }

    /// A DELETE; a repeat of one that took effect answers 404, which the caller counts as
    /// deleted.
    pub async fn delete(&self, path: &str, query: &[(&str, String)]) -> Result<Value, ApiError> {
        self.client
            .write(Method::DELETE, path, query, Body::None, Repeat::Safe)
            .await
    }

    /// A Files API upload that replaces what is there (`overwrite=true`), or makes a
    /// directory.
    pub async fn put_bytes(
        &self,
        path: &str,
        query: &[(&str, String)],
        bytes: Vec<u8>,
    ) -> Result<(), ApiError> {
        self.client
            .put_bytes_as(path, query, bytes, Repeat::Safe)
            .await
    }
}

/// A raw successful answer.
struct Raw {
    status: u16,
    headers: HeaderMap,
    body: bytes::Bytes,
    /// An earlier attempt failed in a way that may have reached the service.
    after_uncertain_retry: bool,
}

impl Client {
    /// Resolves credentials in this order: explicit settings, `DATABRICKS_*` env vars,
    /// a `~/.databrickscfg` profile (same keys and precedence as the official SDK), then the OS
    /// keyring (token stored by `brickform auth login`). `env` and `secrets` are injected so
    /// tests never touch the real environment or keyring.
    ///
    /// For OAuth M2M this also discovers the token endpoint; the first token is fetched with
    /// the first API call.
    ///
    /// Resolution happens before the first `.await`, so the returned future holds neither `env`
    /// nor `secrets` and is `Send` even when `env` is not `Sync`.
    pub fn connect(
        settings: &Settings,
        env: &dyn Fn(&str) -> Option<String>,
        secrets: &dyn SecretStore,
    ) -> impl std::future::Future<Output = Result<Client, ClientError>> + Send + 'static {
        let prepared = Self::prepare(settings, env, secrets);
        let http_timeout = settings.http_timeout;
        let discovery_url = env("DATABRICKS_DISCOVERY_URL")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        async move {
            let (mut client, pending) = prepared?;
            match pending {
                Pending::None => {}
                Pending::M2m(client_id, client_secret) => {
                    let token_endpoint = client.discover_token_endpoint(discovery_url).await?;
                    client.set_auth(Auth::M2m(M2m {
                        client_id,
                        client_secret,
                        token_endpoint,
                        cached: tokio::sync::Mutex::new(None),
                    }))?;
                }
                // The first token now, so a sign-in that does not work fails here, with
                // the method's own words, and not at the first call.
                Pending::Minting(source) => {
                    let first = source.sign_in(&client.inner.http).await?;
                    client.set_auth(Auth::Minting(Minting {
                        source,
                        cached: tokio::sync::Mutex::new(Some(first)),
                    }))?;
                }
                Pending::Chain { tried, none } => {
                    let mut said = Vec::new();
                    let mut chosen = None;
                    for (source, found) in tried {
                        match source.mint(&client.inner.http).await {
                            Ok(first) => {
                                chosen = Some((source, found, first));
                                break;
                            }
                            Err(e) => said.push(format!("{}: {e}", source.auth_type().as_str())),
                        }
                    }
                    let Some((source, found, first)) = chosen else {
                        return Err(match none {
                            ClientError::NoCredentials {
                                host,
                                host_source,
                                hint,
                            } => ClientError::NoCredentials {
                                host,
                                host_source,
                                hint: format!("{hint} (tried {})", said.join("; ")),
                            },
                            other => other,
                        });
                    };
                    let auth_type = source.auth_type();
                    let inner = Arc::get_mut(&mut client.inner)
                        .ok_or_else(|| ClientError::OAuth("client shared during setup".into()))?;
                    inner.info.auth_type = auth_type;
                    inner.info.credential_source = found;
                    inner.http = http_client(http_timeout, auth_type)?;
                    client.set_auth(Auth::Minting(Minting {
                        source,
                        cached: tokio::sync::Mutex::new(Some(first)),
                    }))?;
                }
            }
            Ok(client)
        }
    }

    fn set_auth(&mut self, auth: Auth) -> Result<(), ClientError> {
        let inner = Arc::get_mut(&mut self.inner)
            .ok_or_else(|| ClientError::OAuth("client shared during setup".into()))?;
        inner.auth = auth;
        Ok(())
    }

    /// The synchronous part of `connect`: credentials and the HTTP client. For M2M the auth is
    /// a placeholder until the token endpoint is discovered.
    fn prepare(
        settings: &Settings,
        env: &dyn Fn(&str) -> Option<String>,
        secrets: &dyn SecretStore,
    ) -> Result<(Client, Pending), ClientError> {
        let resolved = auth::resolve(settings, env, secrets)?;
        let info = resolved.info;
        let http = http_client(settings.http_timeout, info.auth_type)?;
        let placeholder = || Auth::Pat(SecretString::from(String::new()));
        let (auth, pending) = match resolved.credentials {
            Credentials::Pat(t) => (Auth::Pat(t), Pending::None),
            Credentials::M2m {
                client_id,
                client_secret,
            } => (placeholder(), Pending::M2m(client_id, client_secret)),
            Credentials::Minting(source) => (placeholder(), Pending::Minting(source)),
            Credentials::Chain { tried, none } => (placeholder(), Pending::Chain { tried, none }),
        };
        let client = Client {
            inner: Arc::new(Inner {
                host: info.host.clone(),
                http,
                auth,
                info,
                limiter: Limiter::new(
                    settings.initial_rate.unwrap_or(DEFAULT_INITIAL_RATE),
                    settings.rate_limit,
                ),
                retry_timeout: settings.retry_timeout.unwrap_or(DEFAULT_RETRY_TIMEOUT),
                requests: AtomicU64::new(0),
                retries: AtomicU64::new(0),
                throttled: AtomicU64::new(0),
                transport_errors: AtomicU64::new(0),
                refused: std::sync::Mutex::new(None),
                refused_warned: std::sync::atomic::AtomicBool::new(false),
            }),
        };
        Ok((client, pending))
    }

    /// The normalised workspace URL, e.g. `https://adb-1.azuredatabricks.net`.
    pub fn host(&self) -> &str {
        &self.inner.host
    }

    /// The Databricks account the settings name (`account_id`, DATABRICKS_ACCOUNT_ID, a
    /// profile's `account_id`), if any.
    pub fn account_id(&self) -> Option<&str> {
        self.inner.info.account_id.as_deref()
    }

    /// The host's metadata (`GET /.well-known/databricks-config`, unauthenticated, as the Go
    /// SDK's config resolution reads it: config/host_metadata.go): its `account_id`,
    /// `workspace_id`, `oidc_endpoint`, `cloud`.
    pub async fn host_metadata(&self) -> Result<Value, ApiError> {
        self.send(
            Method::GET,
            "/.well-known/databricks-config",
            &[],
            Body::None,
            AuthMode::None,
            Repeat::Safe,
        )
        .await
        .and_then(json_body)
    }

    /// Which method authenticates and where host and credentials came from.
    pub fn credential_info(&self) -> &CredentialInfo {
        &self.inner.info
    }

    pub fn stats(&self) -> ClientStats {
        let i = &self.inner;
        ClientStats {
            requests: i.requests.load(Ordering::Relaxed),
            retries: i.retries.load(Ordering::Relaxed),
            throttled: i.throttled.load(Ordering::Relaxed),
            transport_errors: i.transport_errors.load(Ordering::Relaxed),
            current_rate: i.limiter.rate(),
        }
    }

    pub async fn get(&self, path: &str, query: &[(&str, String)]) -> Result<Value, ApiError> {
        let raw = self
            .send(
                Method::GET,
                path,
                query,
                Body::None,
                AuthMode::Api,
                Repeat::Once,
            )
            .await?;
        json_body(raw)
    }

    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.write(Method::POST, path, &[], Body::Json(body), Repeat::Once)
            .await
    }

    /// A POST that creates something not identified by the caller (a job, a pipeline): the
    /// answer, and whether an earlier attempt may have created one too (its response was
    /// lost and the call was repeated), so the caller can look for a duplicate.
    pub async fn post_create(&self, path: &str, body: &Value) -> Result<(Value, bool), ApiError> {
        let raw = self
            .send(
                Method::POST,
                path,
                &[],
                Body::Json(body),
                AuthMode::Api,
                Repeat::Once,
            )
            .await?;
        let uncertain = raw.after_uncertain_retry;
        Ok((json_body(raw)?, uncertain))
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.write(Method::PATCH, path, &[], Body::Json(body), Repeat::Once)
            .await
    }

    /// A POST or PATCH whose request also takes query parameters (a Lakeview dashboard's
    /// `dataset_catalog` / `dataset_schema`).
    pub async fn write_with_query(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: &Value,
    ) -> Result<Value, ApiError> {
        self.write(method, path, query, Body::Json(body), Repeat::Once)
            .await
    }

    pub async fn put(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.write(Method::PUT, path, &[], Body::Json(body), Repeat::Once)
            .await
    }

    pub async fn delete(&self, path: &str, query: &[(&str, String)]) -> Result<Value, ApiError> {
        self.write(Method::DELETE, path, query, Body::None, Repeat::Once)
            .await
    }

    /// DELETE with a JSON body (a few APIs, e.g. some permission endpoints, take one).
    pub async fn delete_with_body(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.write(Method::DELETE, path, &[], Body::Json(body), Repeat::Once)
            .await
    }

    /// The same client for writes that are safe to repeat: sending one twice leaves the
    /// workspace as sending it once does (an upload with overwrite, `mkdirs`, a delete, a PUT
    /// or `reset`/`edit` of a whole object). These are also sent again after a 500, 502 or
    /// 504, a reset connection or a timeout, within the retry budget, as reads are. A create
    /// the service names (`jobs/create`) is never one: repeated, it makes a second object.
    ///
    /// A repeated delete whose first attempt took effect answers 404: the caller counts
    /// that as deleted, as it counts any 404 of a delete.
    pub fn idempotent(&self) -> Idempotent<'_> {
        Idempotent { client: self }
    }

    /// A JSON write with the given repeat rule.
    async fn write(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Body<'_>,
        repeat: Repeat,
    ) -> Result<Value, ApiError> {
        let raw = self
            .send(method, path, query, body, AuthMode::Api, repeat)
            .await?;
        json_body(raw)
    }

    /// Files API upload: the raw bytes as `application/octet-stream`.
    pub async fn put_bytes(
        &self,
        path: &str,
        query: &[(&str, String)],
        bytes: Vec<u8>,
    ) -> Result<(), ApiError> {
        self.put_bytes_as(path, query, bytes, Repeat::Once).await
    }

    async fn put_bytes_as(
        &self,
        path: &str,
        query: &[(&str, String)],
        bytes: Vec<u8>,
        repeat: Repeat,
    ) -> Result<(), ApiError> {
        self.send(
            Method::PUT,
            path,
            query,
            Body::Bytes(bytes.into()),
            AuthMode::Api,
            repeat,
        )
        .await?;
        Ok(())
    }

    /// Files API download: the raw body.
    pub async fn get_bytes(&self, path: &str) -> Result<Vec<u8>, ApiError> {
        let raw = self
            .send(
                Method::GET,
                path,
                &[],
                Body::None,
                AuthMode::Api,
                Repeat::Once,
            )
            .await?;
        Ok(raw.body.to_vec())
    }

    /// Files API metadata: `None` when the object does not exist.
    pub async fn head(&self, path: &str) -> Result<Option<FileMeta>, ApiError> {
        match self
            .send(
                Method::HEAD,
                path,
                &[],
                Body::None,
                AuthMode::Api,
                Repeat::Once,
            )
            .await
        {
            Ok(raw) => {
                let h = |name: reqwest::header::HeaderName| {
                    raw.headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string)
                };
                Ok(Some(FileMeta {
                    content_length: h(reqwest::header::CONTENT_LENGTH).and_then(|v| v.parse().ok()),
                    content_type: h(reqwest::header::CONTENT_TYPE),
                    last_modified: h(reqwest::header::LAST_MODIFIED),
                }))
            }
            Err(e) if e.status == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("https://") || path.starts_with("http://") {
            return path.to_string();
        }
        let mut url = self.inner.host.clone();
        if !path.starts_with('/') {
            url.push('/');
        }
        url.push_str(&escape_path(path));
        url
    }

    /// The headers that authenticate API calls: `Authorization`, and for some clouds more
    /// (Azure's management token). For OAuth methods, fetches or refreshes the token.
    async fn api_headers(&self) -> Result<Vec<(HeaderName, HeaderValue)>, ApiError> {
        let sensitive = |name: HeaderName, value: &str| {
            let mut v = HeaderValue::from_str(value).map_err(|_| {
                ApiError::bad_body(0, "the token contains characters not allowed in a header")
            })?;
            v.set_sensitive(true);
            Ok::<_, ApiError>((name, v))
        };
        let token = match &self.inner.auth {
            Auth::Pat(t) => t.expose_secret().to_string(),
            Auth::Minting(m) => {
                let mut cached = m.cached.lock().await;
                if !cached.as_ref().is_some_and(Minted::fresh) {
                    let fresh = m.source.sign_in(&self.inner.http).await?;
                    *cached = Some(fresh);
                }
                let Some(minted) = cached.as_ref() else {
                    return Err(ApiError::sign_in("no token"));
                };
                let mut out = vec![sensitive(
                    reqwest::header::AUTHORIZATION,
                    minted.authorization.expose_secret(),
                )?];
                for (name, value) in &minted.extra {
                    let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                        ApiError::bad_body(0, "a sign-in header has an invalid name")
                    })?;
                    out.push(sensitive(name, value.expose_secret())?);
                }
                return Ok(out);
            }
            Auth::M2m(m) => {
                let mut cached = m.cached.lock().await;
                match cached.as_ref() {
                    Some(t) if t.fresh() => t.token.expose_secret().to_string(),
                    _ => {
                        let basic = m.basic_auth();
                        let form = [("grant_type", "client_credentials"), ("scope", "all-apis")];
                        // Boxed: the token request goes through `send`, which calls `bearer`.
                        let raw = Box::pin(self.send(
                            Method::POST,
                            &m.token_endpoint,
                            &[],
                            Body::Form(&form),
                            AuthMode::Header(&basic),
                            Repeat::Once,
                        ))
                        .await
                        .map_err(|e| ApiError {
                            message: format!("OAuth token request failed: {}", e.message),
                            ..e
                        })?;
                        let body = json_body(raw)?;
                        let fresh = auth::parse_token(&body)
                            .map_err(|e| ApiError::bad_body(200, e.to_string()))?;
                        let value = fresh.token.expose_secret().to_string();
                        *cached = Some(fresh);
                        value
                    }
                }
            }
        };
        Ok(vec![sensitive(
            reqwest::header::AUTHORIZATION,
            &format!("Bearer {token}"),
        )?])
    }

    /// Drops a cached OAuth token after a 401 so the next attempt fetches a new one.
    async fn invalidate_token(&self) -> bool {
        match &self.inner.auth {
            Auth::M2m(m) => {
                *m.cached.lock().await = None;
                true
            }
            Auth::Minting(m) => {
                *m.cached.lock().await = None;
                true
            }
            Auth::Pat(_) => false,
        }
    }

    /// One call with retries inside the time budget, paced by the limiter.
    async fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Body<'_>,
        auth: AuthMode<'_>,
        repeat: Repeat,
    ) -> Result<Raw, ApiError> {
        if let Some(e) = self.refused().clone() {
            return Err(e);
        }
        let inner = &self.inner;
        let now = Instant::now();
        // Sending these again changes nothing: reads, the OAuth token request (a form), and
        // the writes their caller marked safe to repeat (`Client::idempotent`). Any other
        // write whose answer was lost is not repeated blindly (a second jobs/create makes a
        // second job): it fails as uncertain and the engine looks for what it made.
        let repeatable = repeat == Repeat::Safe
            || method == Method::GET
            || method == Method::HEAD
            || matches!(body, Body::Form(_));
        let mut call = Call {
            url: self.url(path),
            log_path: path.split('?').next().unwrap_or(path),
            method,
            path,
            query,
            body,
            auth,
            repeatable,
            deadline: now + inner.retry_timeout,
            refused_deadline: now + REFUSED_FOR.min(inner.retry_timeout),
            attempt: 0,
            uncertain: false,
            reauthenticated: false,
        };
        loop {
            let req = self.request(&call).await?;
            // One of the engine's call slots, for this exchange only: given back before
            // the answer is decoded, a retry waits or a token is fetched again.
            let slot = brickform_core::call_slots::take().await;
            let permit = inner.limiter.acquire().await;
            inner.requests.fetch_add(1, Ordering::Relaxed);
            let started = Instant::now();
            let result = exchange(req).await;
            drop(slot);
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let failed = match result {
                Ok(raw) => {
                    tracing::debug!(method = %call.method, path = call.log_path, status = raw.status, elapsed_ms, attempt = call.attempt, "databricks api");
                    if (200..300).contains(&raw.status) {
                        inner.limiter.on_success(permit);
                        return Ok(Raw {
                            after_uncertain_retry: call.uncertain,
                            ..raw
                        });
                    }
                    self.answer_failed(&mut call, raw, permit).await
                }
                Err(e) => self.transport_failed(&call, &e, elapsed_ms),
            };
            match failed {
                Failed::Final(e) => return Err(e),
                Failed::AgainNow => {}
                Failed::Again(f) => self.wait_to_retry(&mut call, f).await?,
            }
        }
    }

    /// The error that every call fails with once the host refused connections for the
    /// whole while.
    fn refused(&self) -> std::sync::MutexGuard<'_, Option<ApiError>> {
        self.inner
            .refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One attempt's request: authenticated, with the body and the `Accept` header.
    async fn request(&self, call: &Call<'_>) -> Result<reqwest::RequestBuilder, ApiError> {
        let authorization = match call.auth {
            AuthMode::Api => self.api_headers().await?,
            AuthMode::None => Vec::new(),
            AuthMode::Header(h) => {
                let mut v = HeaderValue::from_str(h).map_err(|_| {
                    ApiError::bad_body(
                        0,
                        "client credentials contain characters not allowed in a header",
                    )
                })?;
                v.set_sensitive(true);
                vec![(reqwest::header::AUTHORIZATION, v)]
            }
        };
        let mut req = self.inner.http.request(call.method.clone(), &call.url);
        if !call.query.is_empty() {
            req = req.query(call.query);
        }
        for (name, value) in authorization {
            req = req.header(name, value);
        }
        // What the SDK sends: JSON APIs get `Accept: application/json`; file transfers take
        // whatever the server sends.
        let accept = match (&call.body, &call.method) {
            (Body::Bytes(_), _) | (_, &Method::HEAD) => "*/*",
            _ if call.path.starts_with("/api/2.0/fs/files") => "application/octet-stream",
            _ => "application/json",
        };
        req = req.header(reqwest::header::ACCEPT, accept);
        Ok(match &call.body {
            Body::None => req,
            Body::Json(v) => req.json(v),
            Body::Bytes(b) => req
                .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                .body(b.clone()),
            Body::Form(f) => req.form(f),
        })
    }

    /// An answer other than a success: the limiter learns from it, a 401 gets one fresh
    /// token, and what is worth repeating is tried again.
    async fn answer_failed(
        &self,
        call: &mut Call<'_>,
        raw: Raw,
        permit: limiter::Permit,
    ) -> Failed {
        let inner = &self.inner;
        let reason = reqwest::StatusCode::from_u16(raw.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let err = ApiError::from_answer(
            call.method.as_str(),
            call.path,
            raw.status,
            reason,
            &raw.body,
        );
        if raw.status == 429 {
            inner.throttled.fetch_add(1, Ordering::Relaxed);
            inner.limiter.on_throttled(permit);
        } else if raw.status < 500 {
            // The service answered at this rate without turning the call away: a 404 of a
            // lookup (a plan asking whether 500 new names are free hears little else)
            // proves the rate as well as a 200 does. Only a server error says nothing
            // about it.
            inner.limiter.on_success(permit);
        }
        // An OAuth token can be revoked or expire early; one fresh token is worth a try
        // before calling the credentials bad.
        if raw.status == 401
            && matches!(call.auth, AuthMode::Api)
            && !call.reauthenticated
            && self.invalidate_token().await
        {
            call.reauthenticated = true;
            inner.retries.fetch_add(1, Ordering::Relaxed);
            call.attempt += 1;
            return Failed::AgainNow;
        }
        if !retry::retryable_status(raw.status, &err.message, call.repeatable) {
            return Failed::Final(ApiError {
                after_retry: call.uncertain,
                ..err
            });
        }
        let retry_after = retry::parse_retry_after(
            raw.headers
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
        );
        Failed::Again(Failure {
            err,
            retry_after,
            refused: false,
        })
    }

    /// No answer: a name that does not resolve or a certificate that is not valid stays so;
    /// a refused connection is waited for a short while; a call that may have been carried
    /// out is repeated only when that is safe.
    fn transport_failed(&self, call: &Call<'_>, e: &reqwest::Error, elapsed_ms: u64) -> Failed {
        let inner = &self.inner;
        inner.transport_errors.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(method = %call.method, path = call.log_path, elapsed_ms, attempt = call.attempt, error = %e, "databricks api transport error");
        let message = transport_message(e);
        let again = |err: ApiError, refused: bool| {
            Failed::Again(Failure {
                err,
                retry_after: None,
                refused,
            })
        };
        match transport_cause(e) {
            Cause::Dns => Failed::Final(ApiError::unreachable(format!(
                "cannot resolve the host of {}: check the workspace URL ({message})",
                inner.host
            ))),
            Cause::Tls => Failed::Final(ApiError::unreachable(format!(
                "the TLS connection to {} failed: check the workspace URL and the certificates this machine trusts ({message})",
                inner.host
            ))),
            // A workspace (or a proxy) that is restarting refuses for a moment: a short
            // while is worth waiting, visibly; then it is unreachable.
            Cause::Refused => {
                if call.attempt == 0 && !inner.refused_warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(target: "notice", "Warning: {} refused the connection; trying again for up to {}s", inner.host, REFUSED_FOR.as_secs());
                }
                again(ApiError::unreachable(message), true)
            }
            // No connection was made (a connect timeout, an unreachable network): nothing
            // reached the service, so any call may be tried again.
            Cause::NotConnected => again(
                ApiError {
                    maybe_sent: false,
                    ..ApiError::transport(message)
                },
                false,
            ),
            // A timeout, a reset or a cut answer: the request may have been carried out.
            Cause::Other if !call.repeatable => Failed::Final(ApiError {
                message: format!(
                    "{message} (not sent again: the workspace may have carried it out)"
                ),
                after_retry: call.uncertain,
                ..ApiError::transport(message.clone())
            }),
            Cause::Other => again(ApiError::transport(message), false),
        }
    }

    /// Waits before the next attempt, or gives up when the wait would end past the
    /// call's deadline (a refused connection's shorter one, after which every call fails
    /// at once).
    async fn wait_to_retry(&self, call: &mut Call<'_>, f: Failure) -> Result<(), ApiError> {
        let inner = &self.inner;
        let err = f.err;
        // A server error or a lost response may have come after the change was made; a 429
        // was turned away before it, and a refused connection carried nothing.
        call.uncertain |= (err.status == 0 && err.maybe_sent) || err.status >= 500;
        call.attempt += 1;
        let wait = retry::backoff(call.attempt, f.retry_after);
        let until = if f.refused {
            call.refused_deadline
        } else {
            call.deadline
        };
        if Instant::now() + wait > until {
            if f.refused {
                let e = ApiError::unreachable(format!(
                    "nothing accepts connections at {} (connection refused for {}s): check the workspace URL",
                    inner.host,
                    REFUSED_FOR.min(inner.retry_timeout).as_secs()
                ));
                *self.refused() = Some(e.clone());
                return Err(e);
            }
            return Err(ApiError {
                message: format!(
                    "{} (gave up after {} attempts: retry budget of {}s exhausted)",
                    err.message,
                    call.attempt,
                    inner.retry_timeout.as_secs_f64()
                ),
                ..err
            });
        }
        inner.retries.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(method = %call.method, path = call.log_path, attempt = call.attempt, wait_ms = wait.as_millis() as u64, code = %err.error_code, "retrying");
        tokio::time::sleep(wait).await;
        Ok(())
    }

    /// Finds the OAuth token endpoint: host metadata → OIDC discovery document, falling back to
    /// the conventional `<host>/oidc/v1/token` when the workspace does not publish metadata.
    async fn discover_token_endpoint(
        &self,
        discovery_url: Option<String>,
    ) -> Result<String, ClientError> {
        let discovery_url = match discovery_url {
            Some(u) => Some(u),
            None => match self
                .send(
                    Method::GET,
                    "/.well-known/databricks-config",
                    &[],
                    Body::None,
                    AuthMode::None,
                    Repeat::Once,
                )
                .await
                .and_then(json_body)
            {
                Ok(meta) => meta
                    .get("oidc_endpoint")
                    .and_then(Value::as_str)
                    .and_then(|o| oidc_root(o, self.account_id()))
                    .map(|o| {
                        format!(
                            "{}/.well-known/oauth-authorization-server",
                            o.trim_end_matches('/')
                        )
                    }),
                Err(e) if e.status == 0 => {
                    return Err(ClientError::OAuth(format!(
                        "cannot reach {}: {}",
                        self.host(),
                        e.message
                    )));
                }
                Err(_) => None,
            },
        };
        let endpoint = match discovery_url {
            Some(url) => {
                check_oauth_url(&url)?;
                let doc = self
                    .send(
                        Method::GET,
                        &url,
                        &[],
                        Body::None,
                        AuthMode::None,
                        Repeat::Once,
                    )
                    .await
                    .and_then(json_body)
                    .map_err(|e| {
                        ClientError::OAuth(format!("OIDC discovery at {url} failed: {e}"))
                    })?;
                doc.get("token_endpoint")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| {
                        ClientError::OAuth(format!(
                            "the discovery document at {url} has no token_endpoint"
                        ))
                    })?
            }
            None => conventional_token_endpoint(self.host(), self.account_id()),
        };
        check_oauth_url(&endpoint)?;
        Ok(endpoint)
    }
}

/// The OIDC root a host's metadata names: an accounts host's holds an `{account_id}`
/// placeholder, filled with the account as the Go SDK fills it (config/config.go,
/// resolveHostMetadata); without an account it is not used.
fn oidc_root(endpoint: &str, account_id: Option<&str>) -> Option<String> {
    match (endpoint.contains("{account_id}"), account_id) {
        (false, _) => Some(endpoint.to_string()),
        (true, Some(a)) => Some(endpoint.replace("{account_id}", a)),
        (true, None) => None,
    }
}

/// The token endpoint when the host publishes no metadata: a workspace's `/oidc/v1/token`;
/// an account's, fixed by its host and id (the Go SDK's GetAccountOAuthEndpoints,
/// credentials/u2m/endpoint_supplier.go).
fn conventional_token_endpoint(host: &str, account_id: Option<&str>) -> String {
    match account_id {
        Some(a) if crate::is_accounts_host(host) => format!("{host}/oidc/accounts/{a}/v1/token"),
        _ => format!("{host}/oidc/v1/token"),
    }
}

/// The client secret goes to the token endpoint, so it gets the same https rule as the host.
fn check_oauth_url(url: &str) -> Result<(), ClientError> {
    normalize_host(url)
        .map(|_| ())
        .map_err(|e| ClientError::OAuth(format!("refusing OAuth endpoint: {e}")))
}

/// How long a refused connection is tried again before the host counts as unreachable.
const REFUSED_FOR: Duration = Duration::from_secs(10);

/// One call to the API: what it sends, and how far its attempts got.
struct Call<'a> {
    method: Method,
    path: &'a str,
    /// The path without its query, for the log.
    log_path: &'a str,
    url: String,
    query: &'a [(&'a str, String)],
    body: Body<'a>,
    auth: AuthMode<'a>,
    /// Sending it again changes nothing.
    repeatable: bool,
    deadline: Instant,
    /// When a host that refuses connections counts as unreachable.
    refused_deadline: Instant,
    attempt: u32,
    /// An earlier attempt failed in a way that may have reached the service.
    uncertain: bool,
    /// A fresh token was fetched after a 401.
    reauthenticated: bool,
}

/// What a failed attempt leaves to do.
enum Failed {
    /// Give up with this error.
    Final(ApiError),
    /// Try again at once (with a fresh token).
    AgainNow,
    /// Try again after a wait, if the call's time allows.
    Again(Failure),
}

/// A failure worth another attempt.
struct Failure {
    err: ApiError,
    /// The wait the service asked for.
    retry_after: Option<Duration>,
    /// The host refused the connection.
    refused: bool,
}

/// Sends a request and reads the whole answer.
async fn exchange(req: reqwest::RequestBuilder) -> Result<Raw, reqwest::Error> {
    let resp = req.send().await?;
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp.bytes().await?;
    Ok(Raw {
        status: status.as_u16(),
        headers,
        body,
        after_uncertain_retry: false,
    })
}

/// Why no answer came, as far as the error's causes tell.
enum Cause {
    Dns,
    Tls,
    Refused,
    /// Connecting failed otherwise (timed out, network unreachable): nothing was sent.
    NotConnected,
    /// The request may have been sent: a timeout, a reset, an incomplete answer.
    Other,
}

fn transport_cause(e: &reqwest::Error) -> Cause {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut text = String::new();
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return Cause::Refused;
        }
        text.push_str(&s.to_string().to_lowercase());
        text.push('\n');
        src = s.source();
    }
    // hyper's resolver and rustls name their failures in words only.
    if text.contains("dns error")
        || text.contains("failed to lookup address")
        || text.contains("name or service not known")
        || text.contains("no such host")
    {
        Cause::Dns
    } else if text.contains("certificate")
        || text.contains("tls")
        || text.contains("handshake")
        || text.contains("corrupt message")
    {
        Cause::Tls
    } else if e.is_connect() {
        Cause::NotConnected
    } else {
        Cause::Other
    }
}

fn transport_message(e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    // The error's source chain names the cause (refused, DNS, TLS); URLs carry no secrets.
    let mut msg = format!("{what}: {e}");
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(&format!(": {s}"));
        src = s.source();
    }
    msg
}

/// JSON of a 2xx answer; an empty body is `{}` (as in the SDK).
fn json_body(raw: Raw) -> Result<Value, ApiError> {
    if raw.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_slice(&raw.body)
        .map_err(|e| ApiError::bad_body(raw.status, format!("the answer is not JSON: {e}")))
}

/// Percent-encodes a raw path like Python's `urllib.parse.quote(path)`: unreserved characters
/// and `/` stay, everything else (spaces, `?`, `#`, `%`, non-ASCII) is escaped.
fn escape_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accounts_oauth_endpoints_name_the_account() {
        let acc = "https://accounts.cloud.databricks.com";
        assert_eq!(
            conventional_token_endpoint(acc, Some("abc")),
            "https://accounts.cloud.databricks.com/oidc/accounts/abc/v1/token"
        );
        let ws = "https://dbc-1.cloud.databricks.com";
        assert_eq!(
            conventional_token_endpoint(ws, Some("abc")),
            "https://dbc-1.cloud.databricks.com/oidc/v1/token"
        );
        assert_eq!(
            conventional_token_endpoint(acc, None),
            "https://accounts.cloud.databricks.com/oidc/v1/token"
        );
        let meta = "https://accounts.cloud.databricks.com/oidc/accounts/{account_id}";
        assert_eq!(
            oidc_root(meta, Some("abc")).as_deref(),
            Some("https://accounts.cloud.databricks.com/oidc/accounts/abc")
        );
        assert_eq!(oidc_root(meta, None), None);
        assert_eq!(
            oidc_root("https://dbc-1/oidc", Some("abc")).as_deref(),
            Some("https://dbc-1/oidc")
        );
    }

    #[test]
    fn escapes_paths_like_python_quote() {
        assert_eq!(
            escape_path("/api/2.0/fs/files/Volumes/c/s/v/a b.csv"),
            "/api/2.0/fs/files/Volumes/c/s/v/a%20b.csv"
        );
        assert_eq!(escape_path("/x/q?#%é"), "/x/q%3F%23%25%C3%A9");
        assert_eq!(
            escape_path("/api/2.1/unity-catalog/schemas/main.default"),
            "/api/2.1/unity-catalog/schemas/main.default"
        );
    }

    #[test]
    fn settings_debug_hides_secrets() {
        let s = Settings {
            token: Some("dapi-very-secret".into()),
            client_secret: Some("oauth-very-secret".into()),
            google_credentials: Some(r#"{"private_key": "very-secret"}"#.into()),
            ..Settings::default()
        };
        let d = format!("{s:?}");
        assert!(!d.contains("very-secret"), "{d}");
        assert!(d.contains("REDACTED"));
    }
}
