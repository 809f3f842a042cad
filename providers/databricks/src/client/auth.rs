//! Credential resolution (docs/architecture.md, The Databricks client) and the OAuth M2M token
//! source.
//!
//! Order: explicit settings, then `DATABRICKS_*` environment variables, then a
//! `~/.databrickscfg` profile, then the OS keyring. Each attribute is filled from the first
//! source that has it and remembers where it came from, so errors and `auth status` can say
//! "token from env DATABRICKS_TOKEN" without ever printing the token.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use secrecy::{ExposeSecret, SecretString};

use super::Settings;
use super::config_file::ConfigFile;
use super::errors::ClientError;
use super::secrets::SecretStore;

/// Where a configuration value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Settings,
    Env(&'static str),
    Profile { name: String, file: PathBuf },
    Keyring,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Settings => write!(f, "provider settings"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Profile { name, file } => write!(f, "profile [{name}] in {}", file.display()),
            Source::Keyring => write!(f, "the OS keyring, saved by `brickform auth login`"),
        }
    }
}

/// The authentication method in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthType {
    Pat,
    OAuthM2m,
}

impl AuthType {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthType::Pat => "pat",
            AuthType::OAuthM2m => "oauth-m2m",
        }
    }
}

/// A value and where it came from. Secret values are wrapped so Debug never shows them.
#[derive(Debug, Clone)]
struct Sourced<T> {
    value: T,
    source: Source,
}

/// The credentials `Client::connect` settled on: what `auth status` reports.
#[derive(Debug, Clone)]
pub struct CredentialInfo {
    pub host: String,
    pub host_source: Source,
    pub auth_type: AuthType,
    /// Where the token (PAT) or the client credentials (M2M) came from.
    pub credential_source: Source,
}

#[derive(Debug)]
pub(crate) enum Credentials {
    Pat(SecretString),
    M2m {
        client_id: String,
        client_secret: SecretString,
    },
}

#[derive(Debug)]
pub(crate) struct Resolved {
    pub info: CredentialInfo,
    pub credentials: Credentials,
}

#[derive(Default, Debug)]
struct Attrs {
    host: Option<Sourced<String>>,
    token: Option<Sourced<SecretString>>,
    client_id: Option<Sourced<String>>,
    client_secret: Option<Sourced<SecretString>>,
    auth_type: Option<Sourced<String>>,
    profile: Option<Sourced<String>>,
    config_file: Option<Sourced<PathBuf>>,
}

impl Attrs {
    fn any_auth(&self) -> bool {
        self.token.is_some() || self.client_id.is_some() || self.client_secret.is_some()
    }
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn fill<T>(slot: &mut Option<Sourced<T>>, value: Option<T>, source: &Source) {
    if slot.is_none()
        && let Some(value) = value
    {
        *slot = Some(Sourced {
            value,
            source: source.clone(),
        });
    }
}

/// Resolves host and credentials: explicit settings, environment, `~/.databrickscfg`, keyring.
pub(crate) fn resolve(
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
    secrets: &dyn SecretStore,
) -> Result<Resolved, ClientError> {
    let mut a = Attrs::default();

    // 1. Explicit settings.
    let s = Source::Settings;
    fill(&mut a.host, non_empty(settings.host.clone()), &s);
    fill(
        &mut a.token,
        non_empty(settings.token.clone()).map(SecretString::from),
        &s,
    );
    fill(&mut a.client_id, non_empty(settings.client_id.clone()), &s);
    fill(
        &mut a.client_secret,
        non_empty(settings.client_secret.clone()).map(SecretString::from),
        &s,
    );
    fill(&mut a.auth_type, non_empty(settings.auth_type.clone()), &s);
    fill(&mut a.profile, non_empty(settings.profile.clone()), &s);
    fill(&mut a.config_file, settings.config_file.clone(), &s);

    // 2. Environment; an empty variable counts as unset, as in the SDK.
    let var = |name: &'static str| (non_empty(env(name)), Source::Env(name));
    let (v, s) = var("DATABRICKS_HOST");
    fill(&mut a.host, v, &s);
    let (v, s) = var("DATABRICKS_TOKEN");
    fill(&mut a.token, v.map(SecretString::from), &s);
    let (v, s) = var("DATABRICKS_CLIENT_ID");
    fill(&mut a.client_id, v, &s);
    let (v, s) = var("DATABRICKS_CLIENT_SECRET");
    fill(&mut a.client_secret, v.map(SecretString::from), &s);
    let (v, s) = var("DATABRICKS_AUTH_TYPE");
    fill(&mut a.auth_type, v, &s);
    let (v, s) = var("DATABRICKS_CONFIG_PROFILE");
    fill(&mut a.profile, v, &s);
    let (v, s) = var("DATABRICKS_CONFIG_FILE");
    fill(&mut a.config_file, v.map(PathBuf::from), &s);

    // 3. The config file, read only when a profile was asked for or nothing is configured yet
    //    (the SDK's rule): a host from the environment plus a token from an unrelated profile
    //    would be a surprising mix.
    if a.profile.is_some() || (a.host.is_none() && !a.any_auth()) {
        read_profile(&mut a, env)?;
    }

    // 4. The keyring, only for a known host with no credentials anywhere else.
    let pinned = a.auth_type.as_ref().map(|t| t.value.to_ascii_lowercase());
    if !a.any_auth()
        && matches!(pinned.as_deref(), None | Some("pat"))
        && let Some(host) = &a.host
        && let Ok(normal) = normalize_host(&host.value)
        && let Some(token) = non_empty(secrets.get(&normal))
    {
        a.token = Some(Sourced {
            value: SecretString::from(token),
            source: Source::Keyring,
        });
    }

    let Some(host) = a.host.take() else {
        return Err(ClientError::NoHost {
            hint: "set `host` in the provider block, DATABRICKS_HOST, or a ~/.databrickscfg profile (or use --local for the local workspace)".into(),
        });
    };
    let host_value = normalize_host(&host.value)?;
    choose(a, host_value, host.source, pinned)
}

fn choose(
    a: Attrs,
    host: String,
    host_source: Source,
    pinned: Option<String>,
) -> Result<Resolved, ClientError> {
    let has_pat = a.token.is_some();
    let has_m2m = a.client_id.is_some() || a.client_secret.is_some();
    let auth_type = match pinned.as_deref() {
        Some("pat") => AuthType::Pat,
        Some("oauth-m2m") => AuthType::OAuthM2m,
        Some(other) => return Err(ClientError::UnsupportedAuthType(other.to_string())),
        None if has_pat && has_m2m => {
            let mut sources = Vec::new();
            if let Some(t) = &a.token {
                sources.push(format!("token from {}", t.source));
            }
            if let Some(c) = &a.client_id {
                sources.push(format!("client_id from {}", c.source));
            }
            if let Some(c) = &a.client_secret {
                sources.push(format!("client_secret from {}", c.source));
            }
            return Err(ClientError::Ambiguous {
                sources: sources.join(", "),
            });
        }
        None if has_m2m => AuthType::OAuthM2m,
        None if has_pat => AuthType::Pat,
        None => {
            return Err(ClientError::NoCredentials {
                hint: format!(
                    "set `token` (or `client_id` and `client_secret`) in the provider block, DATABRICKS_TOKEN, a ~/.databrickscfg profile, or run `brickform auth login --host {host}`"
                ),
                host,
                host_source: host_source.to_string(),
            });
        }
    };
    match auth_type {
        AuthType::Pat => {
            let Some(token) = a.token else {
                return Err(ClientError::Incomplete(format!(
                    "auth_type \"pat\" (from {}) needs a token: set `token`, DATABRICKS_TOKEN, or run `brickform auth login --host {host}`",
                    source_of(&a.auth_type)
                )));
            };
            Ok(Resolved {
                info: CredentialInfo {
                    host,
                    host_source,
                    auth_type,
                    credential_source: token.source,
                },
                credentials: Credentials::Pat(token.value),
            })
        }
        AuthType::OAuthM2m => match (a.client_id, a.client_secret) {
            (Some(id), Some(secret)) => Ok(Resolved {
                info: CredentialInfo {
                    host,
                    host_source,
                    auth_type,
                    credential_source: id.source,
                },
                credentials: Credentials::M2m {
                    client_id: id.value,
                    client_secret: secret.value,
                },
            }),
            (id, secret) => {
                let (have, missing) = match (&id, &secret) {
                    (Some(i), None) => (
                        format!("client_id from {}", i.source),
                        "client_secret (DATABRICKS_CLIENT_SECRET)",
                    ),
                    (None, Some(s)) => (
                        format!("client_secret from {}", s.source),
                        "client_id (DATABRICKS_CLIENT_ID)",
                    ),
                    _ => (
                        format!("auth_type from {}", source_of(&a.auth_type)),
                        "client_id and client_secret (DATABRICKS_CLIENT_ID, DATABRICKS_CLIENT_SECRET)",
                    ),
                };
                Err(ClientError::Incomplete(format!(
                    "OAuth M2M for {host} is missing {missing} (have {have})"
                )))
            }
        },
    }
}

fn source_of<T>(s: &Option<Sourced<T>>) -> String {
    s.as_ref()
        .map_or_else(|| "nowhere".to_string(), |s| s.source.to_string())
}

fn read_profile(a: &mut Attrs, env: &dyn Fn(&str) -> Option<String>) -> Result<(), ClientError> {
    let path = match &a.config_file {
        Some(p) => expand_home(&p.value, env),
        None => match non_empty(env("HOME")).or_else(|| non_empty(env("USERPROFILE"))) {
            Some(home) => PathBuf::from(home).join(".databrickscfg"),
            None => {
                return match &a.profile {
                    Some(p) => Err(ClientError::ConfigFile {
                        path: "~/.databrickscfg".into(),
                        reason: format!(
                            "profile {:?} (from {}) was requested but HOME is not set, so the file cannot be found",
                            p.value, p.source
                        ),
                    }),
                    None => Ok(()),
                };
            }
        },
    };
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match &a.profile {
                Some(p) => Err(ClientError::ConfigFile {
                    path: shown,
                    reason: format!(
                        "profile {:?} (from {}) was requested but the file does not exist",
                        p.value, p.source
                    ),
                }),
                None => Ok(()),
            };
        }
        Err(e) => {
            return Err(ClientError::ConfigFile {
                path: shown,
                reason: e.to_string(),
            });
        }
    };
    let file = ConfigFile::parse(&text).map_err(|reason| ClientError::ConfigFile {
        path: shown.clone(),
        reason,
    })?;
    // Profile choice: explicit, then [__settings__] default_profile, then DEFAULT (silently
    // skipped when absent).
    let (name, explicit) = match &a.profile {
        Some(p) => (p.value.clone(), true),
        None => match file
            .section("__settings__")
            .and_then(|s| s.get("default_profile"))
            .and_then(|v| non_empty(Some(v.clone())))
        {
            Some(d) => (d, true),
            None => ("DEFAULT".to_string(), false),
        },
    };
    let Some(section) = file.section(&name) else {
        if explicit {
            return Err(ClientError::ConfigFile {
                path: shown,
                reason: format!(
                    "has no profile [{name}] (profiles: {})",
                    file.profile_names().join(", ")
                ),
            });
        }
        return Ok(());
    };
    let src = Source::Profile {
        name,
        file: path.clone(),
    };
    let get = |k: &str| non_empty(section.get(k).cloned());
    fill(&mut a.host, get("host"), &src);
    fill(&mut a.token, get("token").map(SecretString::from), &src);
    fill(&mut a.client_id, get("client_id"), &src);
    fill(
        &mut a.client_secret,
        get("client_secret").map(SecretString::from),
        &src,
    );
    fill(&mut a.auth_type, get("auth_type"), &src);
    Ok(())
}

fn expand_home(p: &std::path::Path, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    if let Ok(rest) = p.strip_prefix("~")
        && let Some(home) = non_empty(env("HOME"))
    {
        return PathBuf::from(home).join(rest);
    }
    p.to_path_buf()
}

/// Normalises a host like the SDK (`https://` added to a bare host, trailing `/` and `:443`
/// removed) and allows `https` only, except for loopback hosts, where the local workspace
/// serves plain http. Tokens must never cross a network in clear text.
pub fn normalize_host(raw: &str) -> Result<String, ClientError> {
    let raw = raw.trim();
    let invalid = |reason: &str| ClientError::InvalidHost {
        host: raw.to_string(),
        reason: reason.to_string(),
    };
    let with_scheme = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("https://{raw}")
    };
    let url = reqwest::Url::parse(&with_scheme).map_err(|e| invalid(&e.to_string()))?;
    if url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(invalid(
            "a host is scheme://name[:port] only, without credentials, query or fragment",
        ));
    }
    let Some(host) = url.host() else {
        return Err(invalid("no host name"));
    };
    let loopback = match host {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(invalid(
                "plain http is refused for non-loopback hosts because the token would travel unencrypted; use https://",
            ));
        }
        other => {
            return Err(invalid(&format!(
                "unsupported scheme {other:?}; use https://"
            )));
        }
    }
    let mut out = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    // `Url::port()` already drops the scheme's default port (443 for https, 80 for http).
    if let Some(port) = url.port() {
        out.push_str(&format!(":{port}"));
    }
    let path = url.path().trim_end_matches('/');
    out.push_str(path);
    Ok(out)
}

/// An OAuth access token with its expiry.
pub(crate) struct CachedToken {
    pub token: SecretString,
    pub expires_at: Instant,
}

impl CachedToken {
    /// Tokens count as expired 40 s early (as in the SDK) so a request never starts with a
    /// token that dies in flight.
    pub fn fresh(&self) -> bool {
        Instant::now() + Duration::from_secs(40) < self.expires_at
    }
}

impl std::fmt::Debug for CachedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedToken")
            .field("token", &"[REDACTED]")
            .finish()
    }
}

/// The M2M client-credentials state: where to get tokens, and the current one.
pub(crate) struct M2m {
    pub client_id: String,
    pub client_secret: SecretString,
    pub token_endpoint: String,
    pub cached: tokio::sync::Mutex<Option<CachedToken>>,
}

impl std::fmt::Debug for M2m {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("M2m")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[REDACTED]")
            .field("token_endpoint", &self.token_endpoint)
            .finish()
    }
}

impl M2m {
    pub(crate) fn basic_auth(&self) -> String {
        use base64::Engine;
        let raw = format!("{}:{}", self.client_id, self.client_secret.expose_secret());
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        )
    }
}

/// Parses a token endpoint answer: `{access_token, token_type, expires_in}`.
pub(crate) fn parse_token(body: &serde_json::Value) -> Result<CachedToken, ClientError> {
    let token = body
        .get("access_token")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ClientError::OAuth("the token endpoint answered without access_token".into())
        })?;
    // Without expires_in, assume an hour (Databricks' usual lifetime); the 401 path refreshes
    // early if that guess is wrong.
    let secs = body
        .get("expires_in")
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .unwrap_or(3600);
    Ok(CachedToken {
        token: SecretString::from(token.to_string()),
        expires_at: Instant::now() + Duration::from_secs(secs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_expire_40s_early() {
        let t = parse_token(&serde_json::json!({"access_token": "a", "expires_in": 30})).unwrap();
        assert!(!t.fresh(), "a token with 30 s left is already stale");
        let t =
            parse_token(&serde_json::json!({"access_token": "tok-SECRET", "expires_in": "3600"}))
                .unwrap();
        assert!(t.fresh());
        assert!(!format!("{t:?}").contains("SECRET"));
        assert!(parse_token(&serde_json::json!({"token_type": "Bearer"})).is_err());
    }

    #[test]
    fn hosts() {
        let ok = [
            (
                "adb-1.azuredatabricks.net",
                "https://adb-1.azuredatabricks.net",
            ),
            (
                "https://adb-1.azuredatabricks.net/",
                "https://adb-1.azuredatabricks.net",
            ),
            (
                "https://dbc.cloud.databricks.com:443/",
                "https://dbc.cloud.databricks.com",
            ),
            (
                "https://dbc.cloud.databricks.com:8443",
                "https://dbc.cloud.databricks.com:8443",
            ),
            ("http://127.0.0.1:8765/", "http://127.0.0.1:8765"),
            ("http://127.9.9.9:1", "http://127.9.9.9:1"),
            ("http://localhost:1234", "http://localhost:1234"),
            ("http://[::1]:1234", "http://[::1]:1234"),
        ];
        for (raw, want) in ok {
            assert_eq!(normalize_host(raw).unwrap(), want, "{raw}");
        }
        for bad in [
            "http://dbc.example.com",
            "http://10.0.0.1:80",
            "ftp://x",
            "https://u:p@x",
            "http://localhost.evil.com",
        ] {
            let e = normalize_host(bad).unwrap_err().to_string();
            assert!(e.contains("invalid host"), "{bad}: {e}");
        }
    }
}
