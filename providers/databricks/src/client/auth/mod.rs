//! Credential resolution (docs/architecture.md, The Databricks client) and the sign-in
//! methods.
//!
//! Order: explicit settings, then environment variables, then a `~/.databrickscfg` profile,
//! then the OS keyring. Each attribute is filled from the first source that has it and
//! remembers where it came from, so errors and `auth status` can say "token from env
//! DATABRICKS_TOKEN" without ever printing the token. The method is the one `auth_type`
//! pins, else the one the attributes present point to, else the first of the Azure CLI (for
//! an Azure workspace) and the Databricks CLI that hands out a token — the official SDKs'
//! order.

mod azure;
mod command;
mod databricks_cli;
mod error;
mod google;
mod token;

use std::path::PathBuf;

use secrecy::{ExposeSecret, SecretString};

use super::Settings;
use super::config_file::ConfigFile;
use super::errors::ClientError;
use super::secrets::SecretStore;

pub use error::{AuthError, SettingError, SignInError};
pub(crate) use token::{CachedToken, Minted, TokenSource, parse_token};

/// Where a configuration value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Settings,
    Env(&'static str),
    Profile {
        name: String,
        file: PathBuf,
    },
    Keyring,
    /// Found on PATH (a sign-in tool).
    Path(PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Settings => write!(f, "provider settings"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Profile { name, file } => write!(f, "profile [{name}] in {}", file.display()),
            Source::Keyring => write!(f, "the OS keyring, saved by `brickform auth login`"),
            Source::Path(p) => write!(f, "{}", p.display()),
        }
    }
}

/// The authentication method in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthType {
    Pat,
    OAuthM2m,
    DatabricksCli,
    AzureCli,
    AzureClientSecret,
    AzureMsi,
    GoogleCredentials,
    GoogleId,
}

/// The methods brickform signs in with, each with what it needs: what messages about a
/// method it cannot use list.
pub const SUPPORTED: &[(&str, &str)] = &[
    ("pat", "token"),
    ("oauth-m2m", "client_id and client_secret"),
    ("databricks-cli", "`databricks auth login`"),
    ("azure-cli", "`az login`"),
    (
        "azure-client-secret",
        "azure_client_id, azure_client_secret and azure_tenant_id",
    ),
    ("azure-msi", "azure_use_msi = true"),
    (
        "google-credentials",
        "google_credentials, a service-account key",
    ),
    (
        "google-id",
        "google_service_account and Google application default credentials",
    ),
];

/// The names `auth_type` takes.
pub const AUTH_TYPES: [&str; 8] = [
    "pat",
    "oauth-m2m",
    "databricks-cli",
    "azure-cli",
    "azure-client-secret",
    "azure-msi",
    "google-credentials",
    "google-id",
];

fn supported_list() -> String {
    SUPPORTED
        .iter()
        .map(|(name, needs)| format!("{name} ({needs})"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl AuthType {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthType::Pat => "pat",
            AuthType::OAuthM2m => "oauth-m2m",
            AuthType::DatabricksCli => "databricks-cli",
            AuthType::AzureCli => "azure-cli",
            AuthType::AzureClientSecret => "azure-client-secret",
            AuthType::AzureMsi => "azure-msi",
            AuthType::GoogleCredentials => "google-credentials",
            AuthType::GoogleId => "google-id",
        }
    }

    /// The SDK's name for the family of attributes a method reads (its "more than one
    /// authorization method" error names these).
    fn family(self) -> &'static str {
        match self {
            AuthType::Pat => "pat",
            AuthType::OAuthM2m => "oauth",
            AuthType::DatabricksCli => "databricks-cli",
            AuthType::AzureCli | AuthType::AzureClientSecret | AuthType::AzureMsi => "azure",
            AuthType::GoogleCredentials | AuthType::GoogleId => "google",
        }
    }

    fn parse(name: &str) -> Option<AuthType> {
        [
            AuthType::Pat,
            AuthType::OAuthM2m,
            AuthType::DatabricksCli,
            AuthType::AzureCli,
            AuthType::AzureClientSecret,
            AuthType::AzureMsi,
            AuthType::GoogleCredentials,
            AuthType::GoogleId,
        ]
        .into_iter()
        .find(|t| t.as_str() == name)
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
    /// Where the token (PAT), the client credentials (M2M) or the sign-in tool came from.
    pub credential_source: Source,
    /// The Databricks account (`account_id`, DATABRICKS_ACCOUNT_ID or a profile's
    /// `account_id`, as the SDKs read it): what an accounts host's APIs are addressed by.
    pub account_id: Option<String>,
}

pub(crate) enum Credentials {
    Pat(SecretString),
    M2m {
        client_id: String,
        client_secret: SecretString,
    },
    /// A method whose tokens expire, asked for its first token when connecting.
    Minting(Box<dyn TokenSource>),
    /// Nothing configured: the first of these that hands out a token (each with where it
    /// was found), or, when none does, the error that says so.
    Chain {
        tried: Vec<(Box<dyn TokenSource>, Source)>,
        none: ClientError,
    },
}

pub(crate) struct Resolved {
    pub info: CredentialInfo,
    pub credentials: Credentials,
}

#[derive(Default, Debug)]
struct Attrs {
    host: Option<Sourced<String>>,
    account_id: Option<Sourced<String>>,
    token: Option<Sourced<SecretString>>,
    client_id: Option<Sourced<String>>,
    client_secret: Option<Sourced<SecretString>>,
    auth_type: Option<Sourced<String>>,
    profile: Option<Sourced<String>>,
    config_file: Option<Sourced<PathBuf>>,
    azure_workspace_resource_id: Option<Sourced<String>>,
    azure_client_id: Option<Sourced<String>>,
    azure_client_secret: Option<Sourced<SecretString>>,
    azure_tenant_id: Option<Sourced<String>>,
    azure_use_msi: Option<Sourced<String>>,
    azure_environment: Option<Sourced<String>>,
    azure_login_app_id: Option<Sourced<String>>,
    databricks_cli_path: Option<Sourced<String>>,
    google_credentials: Option<Sourced<SecretString>>,
    google_service_account: Option<Sourced<String>>,
    /// The profile read, and the keys it has (for messages about what it lacks).
    profile_read: Option<(Source, Vec<String>)>,
}

impl Attrs {
    /// Whether anything that signs in is configured (the SDK's `is_any_auth_configured`):
    /// then the config file is not read unless a profile is named.
    fn any_auth(&self) -> bool {
        self.token.is_some()
            || self.client_id.is_some()
            || self.client_secret.is_some()
            || self.azure_client_id.is_some()
            || self.azure_client_secret.is_some()
            || self.azure_tenant_id.is_some()
            || self.msi()
            || self.azure_login_app_id.is_some()
            || self.google_credentials.is_some()
            || self.google_service_account.is_some()
    }

    fn msi(&self) -> bool {
        self.azure_use_msi
            .as_ref()
            .is_some_and(|v| parse_bool(&v.value) == Some(true))
    }

    /// The methods the attributes present point to (without `auth_type`), each with the
    /// attribute that says so.
    fn families(&self) -> Vec<(AuthType, String)> {
        let mut out = Vec::new();
        if let Some(t) = &self.token {
            out.push((AuthType::Pat, format!("token from {}", t.source)));
        }
        if let Some(c) = &self.client_id {
            out.push((AuthType::OAuthM2m, format!("client_id from {}", c.source)));
        } else if let Some(c) = &self.client_secret {
            out.push((
                AuthType::OAuthM2m,
                format!("client_secret from {}", c.source),
            ));
        }
        if let Some(c) = &self.azure_client_secret {
            out.push((
                AuthType::AzureClientSecret,
                format!("azure_client_secret from {}", c.source),
            ));
        } else if let Some(m) = self.azure_use_msi.as_ref().filter(|_| self.msi()) {
            out.push((
                AuthType::AzureMsi,
                format!("azure_use_msi from {}", m.source),
            ));
        }
        if let Some(c) = &self.google_credentials {
            out.push((
                AuthType::GoogleCredentials,
                format!("google_credentials from {}", c.source),
            ));
        } else if let Some(s) = &self.google_service_account {
            out.push((
                AuthType::GoogleId,
                format!("google_service_account from {}", s.source),
            ));
        }
        out
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "t" | "true" | "yes" => Some(true),
        "0" | "f" | "false" | "no" | "" => Some(false),
        _ => None,
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

/// Fills every attribute from one source, by the name it has in settings and profiles.
fn fill_all(a: &mut Attrs, get: &dyn Fn(&str) -> Option<String>, source: &Source) {
    let secret = |k: &str| get(k).map(SecretString::from);
    fill(&mut a.host, get("host"), source);
    fill(&mut a.account_id, get("account_id"), source);
    fill(&mut a.token, secret("token"), source);
    fill(&mut a.client_id, get("client_id"), source);
    fill(&mut a.client_secret, secret("client_secret"), source);
    fill(&mut a.auth_type, get("auth_type"), source);
    fill(
        &mut a.azure_workspace_resource_id,
        get("azure_workspace_resource_id"),
        source,
    );
    fill(&mut a.azure_client_id, get("azure_client_id"), source);
    fill(
        &mut a.azure_client_secret,
        secret("azure_client_secret"),
        source,
    );
    fill(&mut a.azure_tenant_id, get("azure_tenant_id"), source);
    fill(&mut a.azure_use_msi, get("azure_use_msi"), source);
    fill(&mut a.azure_environment, get("azure_environment"), source);
    fill(&mut a.azure_login_app_id, get("azure_login_app_id"), source);
    fill(
        &mut a.databricks_cli_path,
        get("databricks_cli_path"),
        source,
    );
    fill(
        &mut a.google_credentials,
        secret("google_credentials"),
        source,
    );
    fill(
        &mut a.google_service_account,
        get("google_service_account"),
        source,
    );
}

/// Each attribute's environment variable, as the official SDKs name them.
const ENV: &[(&str, &str)] = &[
    ("host", "DATABRICKS_HOST"),
    ("account_id", "DATABRICKS_ACCOUNT_ID"),
    ("token", "DATABRICKS_TOKEN"),
    ("client_id", "DATABRICKS_CLIENT_ID"),
    ("client_secret", "DATABRICKS_CLIENT_SECRET"),
    ("auth_type", "DATABRICKS_AUTH_TYPE"),
    ("profile", "DATABRICKS_CONFIG_PROFILE"),
    ("config_file", "DATABRICKS_CONFIG_FILE"),
    (
        "azure_workspace_resource_id",
        "DATABRICKS_AZURE_RESOURCE_ID",
    ),
    ("azure_client_id", "ARM_CLIENT_ID"),
    ("azure_client_secret", "ARM_CLIENT_SECRET"),
    ("azure_tenant_id", "ARM_TENANT_ID"),
    ("azure_use_msi", "ARM_USE_MSI"),
    ("azure_environment", "ARM_ENVIRONMENT"),
    ("azure_login_app_id", "DATABRICKS_AZURE_LOGIN_APP_ID"),
    ("databricks_cli_path", "DATABRICKS_CLI_PATH"),
    ("google_credentials", "GOOGLE_CREDENTIALS"),
    (
        "google_service_account",
        "DATABRICKS_GOOGLE_SERVICE_ACCOUNT",
    ),
];

/// The settings that are credentials: read as secrets, never shown (the provider schema's
/// sensitive settings).
pub const SECRET_SETTINGS: &[&str] = &[
    "token",
    "client_secret",
    "azure_client_secret",
    "google_credentials",
];

/// The environment variables that carry credentials: those the secret settings are read
/// from, and the other names the SDKs and the clouds' own tools read them from.
pub fn credential_variables() -> impl Iterator<Item = &'static str> {
    ENV.iter()
        .filter(|(setting, _)| SECRET_SETTINGS.contains(setting))
        .map(|(_, var)| *var)
        .chain([
            "DATABRICKS_PASSWORD",
            "DATABRICKS_AZURE_CLIENT_SECRET",
            "AZURE_CLIENT_SECRET",
        ])
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
    let from_settings = |k: &str| {
        non_empty(match k {
            "host" => settings.host.clone(),
            "account_id" => settings.account_id.clone(),
            "token" => settings.token.clone(),
            "client_id" => settings.client_id.clone(),
            "client_secret" => settings.client_secret.clone(),
            "auth_type" => settings.auth_type.clone(),
            "azure_workspace_resource_id" => settings.azure_workspace_resource_id.clone(),
            "azure_client_id" => settings.azure_client_id.clone(),
            "azure_client_secret" => settings.azure_client_secret.clone(),
            "azure_tenant_id" => settings.azure_tenant_id.clone(),
            "azure_use_msi" => settings.azure_use_msi.map(|b| b.to_string()),
            "azure_environment" => settings.azure_environment.clone(),
            "azure_login_app_id" => settings.azure_login_app_id.clone(),
            "databricks_cli_path" => settings.databricks_cli_path.clone(),
            "google_credentials" => settings.google_credentials.clone(),
            "google_service_account" => settings.google_service_account.clone(),
            _ => None,
        })
    };
    fill_all(&mut a, &from_settings, &s);
    fill(&mut a.profile, non_empty(settings.profile.clone()), &s);
    fill(&mut a.config_file, settings.config_file.clone(), &s);

    // 2. Environment; an empty variable counts as unset, as in the SDK. Each attribute is
    //    filled from its own variable, so the source names the variable.
    for (key, var) in ENV {
        let value = non_empty(env(var));
        let source = Source::Env(var);
        match *key {
            "profile" => fill(&mut a.profile, value, &source),
            "config_file" => fill(&mut a.config_file, value.map(PathBuf::from), &source),
            _ => fill_all(
                &mut a,
                &|k: &str| if k == *key { value.clone() } else { None },
                &source,
            ),
        }
    }

    // 3. The config file, read only when a profile was asked for or nothing is configured yet
    //    (the SDK's rule): a host from the environment plus a token from an unrelated profile
    //    would be a surprising mix.
    if a.profile.is_some()
        || (a.host.is_none() && !a.any_auth() && a.azure_workspace_resource_id.is_none())
    {
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
        let hint = if a.azure_workspace_resource_id.is_some() {
            "set `host` as well as azure_workspace_resource_id: brickform does not look the workspace URL up in Azure Resource Manager"
        } else {
            "set `host` in the provider block, DATABRICKS_HOST, or a ~/.databrickscfg profile (or use --local for the local workspace)"
        };
        return Err(ClientError::NoHost { hint: hint.into() });
    };
    let host_value = normalize_host(&host.value)?;
    let account_id = a.account_id.as_ref().map(|s| s.value.clone());
    let mut resolved = choose(a, host_value, host.source, pinned, env)?;
    resolved.info.account_id = account_id;
    Ok(resolved)
}

/// A value that looks as if it ends in a comment: in `~/.databrickscfg` that is part of the
/// value, as the official SDKs read the file.
fn inline_comment_note(value: &str) -> &'static str {
    let b = value.as_bytes();
    if (1..b.len()).any(|i| matches!(b[i], b';' | b'#') && b[i - 1].is_ascii_whitespace()) {
        "; a `;` or `#` after a value in ~/.databrickscfg is part of the value, as the official SDKs read the file: put the comment on a line of its own"
    } else {
        ""
    }
}

/// What the profile that was read holds, for messages about a method it cannot use.
fn profile_note(a: &Attrs) -> String {
    match &a.profile_read {
        Some((source, keys)) => format!("; {source} has {}", keys.join(", ")),
        None => String::new(),
    }
}

fn choose(
    a: Attrs,
    host: String,
    host_source: Source,
    pinned: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, ClientError> {
    let Some(auth_type) = pick_auth_type(&a, pinned.as_deref())? else {
        return default_chain(a, host, host_source, env);
    };
    let chosen = Chosen {
        host,
        host_source,
        auth_type,
        from: source_of(&a.auth_type),
    };
    match auth_type {
        AuthType::Pat => pat(a, &chosen),
        AuthType::OAuthM2m => oauth_m2m(a, &chosen),
        AuthType::DatabricksCli => databricks_cli_method(&a, &chosen, env),
        AuthType::AzureCli => azure_cli_method(&a, &chosen, env),
        AuthType::AzureClientSecret => azure_client_secret(a, &chosen, env),
        AuthType::AzureMsi => azure_msi(a, &chosen, env),
        AuthType::GoogleCredentials => google_credentials(a, &chosen, env),
        AuthType::GoogleId => google_id(a, &chosen, env),
    }
}

/// The method `auth_type` pins, else the one family of attributes present points to;
/// `None` when nothing points anywhere, so the caller falls back to the default chain.
fn pick_auth_type(a: &Attrs, pinned: Option<&str>) -> Result<Option<AuthType>, ClientError> {
    if let Some(name) = pinned {
        return AuthType::parse(name)
            .map(Some)
            .ok_or_else(|| ClientError::UnsupportedAuthType {
                auth_type: name.to_string(),
                hint: format!(
                    "brickform signs in with {}{}{}",
                    supported_list(),
                    profile_note(a),
                    inline_comment_note(name)
                ),
            });
    }
    match a.families().as_slice() {
        [] => Ok(None),
        [(only, _)] => Ok(Some(*only)),
        many => Err(ambiguous(many)),
    }
}

/// Attributes of more than one method are present and none is pinned: the SDKs' "more than
/// one authorization method" error, naming each family once and every attribute's source.
fn ambiguous(many: &[(AuthType, String)]) -> ClientError {
    let mut names: Vec<&str> = many.iter().map(|(t, _)| t.family()).collect();
    names.sort_unstable();
    names.dedup();
    ClientError::Ambiguous {
        methods: names.join(" and "),
        sources: many
            .iter()
            .map(|(_, why)| why.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The method `choose` settled on and the host it signs in to: what every method's
/// `Resolved` reports, and what its "missing a setting" messages name.
struct Chosen {
    host: String,
    host_source: Source,
    auth_type: AuthType,
    /// Where `auth_type` came from ("nowhere" when the attributes pointed to the method).
    from: String,
}

impl Chosen {
    fn resolved(&self, credential_source: Source, credentials: Credentials) -> Resolved {
        Resolved {
            info: CredentialInfo {
                host: self.host.clone(),
                host_source: self.host_source.clone(),
                auth_type: self.auth_type,
                credential_source,
                account_id: None,
            },
            credentials,
        }
    }

    fn sign_in(&self, source: AuthError) -> SignInError {
        SignInError {
            auth_type: self.auth_type,
            source,
        }
    }
}

fn pat(a: Attrs, c: &Chosen) -> Result<Resolved, ClientError> {
    let Some(token) = a.token else {
        return Err(ClientError::Incomplete(format!(
            "auth_type \"pat\" (from {}) needs a token: set `token`, DATABRICKS_TOKEN, or run `brickform auth login --host {}`{}",
            c.from,
            c.host,
            profile_note(&a)
        )));
    };
    Ok(c.resolved(token.source, Credentials::Pat(token.value)))
}

fn oauth_m2m(a: Attrs, c: &Chosen) -> Result<Resolved, ClientError> {
    let (id, secret) = match (a.client_id, a.client_secret) {
        (Some(id), Some(secret)) => {
            return Ok(c.resolved(
                id.source,
                Credentials::M2m {
                    client_id: id.value,
                    client_secret: secret.value,
                },
            ));
        }
        pair => pair,
    };
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
            format!("auth_type from {}", c.from),
            "client_id and client_secret (DATABRICKS_CLIENT_ID, DATABRICKS_CLIENT_SECRET)",
        ),
    };
    Err(ClientError::Incomplete(format!(
        "OAuth M2M for {} is missing {missing} (have {have})",
        c.host
    )))
}

fn databricks_cli_method(
    a: &Attrs,
    c: &Chosen,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, ClientError> {
    let (cli, found) = databricks_cli(a, env).ok_or_else(|| {
        ClientError::Incomplete(format!(
            "auth_type \"databricks-cli\" (from {}) runs `databricks auth token`, but no `databricks` executable is on PATH: install the Databricks CLI, or set databricks_cli_path (DATABRICKS_CLI_PATH)",
            c.from
        ))
    })?;
    let cli = databricks_cli::DatabricksCli::new(cli, cli_profile(a), &c.host);
    Ok(c.resolved(found, Credentials::Minting(Box::new(cli))))
}

fn azure_cli_method(
    a: &Attrs,
    c: &Chosen,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, ClientError> {
    let (az, found) = azure_cli(env).ok_or_else(|| {
        ClientError::Incomplete(format!(
            "auth_type \"azure-cli\" (from {}) runs `az account get-access-token`, but no `az` executable is on PATH: install the Azure CLI and run `az login`",
            c.from
        ))
    })?;
    let azure = settle_azure(a, &c.host, env)?;
    Ok(c.resolved(
        found,
        Credentials::Minting(Box::new(azure::AzureCli { az, azure })),
    ))
}

fn azure_client_secret(
    a: Attrs,
    c: &Chosen,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, ClientError> {
    let azure = settle_azure(&a, &c.host, env)?;
    match (a.azure_client_id, a.azure_client_secret) {
        (Some(id), Some(secret)) => {
            let sp = azure::AzureClientSecret::new(id.value, secret.value, azure);
            Ok(c.resolved(id.source, Credentials::Minting(Box::new(sp))))
        }
        (id, _) => Err(ClientError::Incomplete(format!(
            "an Azure service principal for {} needs {} (have {})",
            c.host,
            if id.is_some() {
                "azure_client_secret (ARM_CLIENT_SECRET)"
            } else {
                "azure_client_id and azure_client_secret (ARM_CLIENT_ID, ARM_CLIENT_SECRET)"
            },
            id.map_or_else(
                || format!("auth_type from {}", c.from),
                |i| format!("azure_client_id from {}", i.source)
            )
        ))),
    }
}

fn azure_msi(
    a: Attrs,
    c: &Chosen,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, ClientError> {
    let azure = settle_azure(&a, &c.host, env)?;
    let source = a
        .azure_use_msi
        .as_ref()
        .map_or_else(|| from_source(&a.auth_type), |m| m.source.clone());
    let msi = azure::AzureMsi {
        client_id: a.azure_client_id.map(|id| id.value),
        azure,
        metadata_host: metadata_host(env)?,
    };
    Ok(c.resolved(source, Credentials::Minting(Box::new(msi))))
}

fn google_credentials(
    a: Attrs,
    c: &Chosen,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, ClientError> {
    let Some(creds) = a.google_credentials else {
        return Err(ClientError::Incomplete(format!(
            "auth_type \"google-credentials\" (from {}) needs google_credentials (GOOGLE_CREDENTIALS): a service-account key file's path, or its JSON{}",
            c.from,
            profile_note(&a)
        )));
    };
    let value = expand_home(std::path::Path::new(creds.value.expose_secret()), env);
    let key = google::read_credentials(&value.to_string_lossy(), &creds.source.to_string())
        .map_err(|e| c.sign_in(e))?;
    let google = google::GoogleCredentials {
        key,
        host: c.host.clone(),
    };
    Ok(c.resolved(creds.source, Credentials::Minting(Box::new(google))))
}

fn google_id(
    a: Attrs,
    c: &Chosen,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, ClientError> {
    let Some(sa) = a.google_service_account else {
        return Err(ClientError::Incomplete(format!(
            "auth_type \"google-id\" (from {}) needs google_service_account (DATABRICKS_GOOGLE_SERVICE_ACCOUNT): the service account to impersonate{}",
            c.from,
            profile_note(&a)
        )));
    };
    let iam = google::iam_endpoint(env("GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT"))?;
    let adc = google::Adc::find(env).map_err(|e| c.sign_in(e))?;
    let google = google::GoogleId {
        service_account: sa.value,
        host: c.host.clone(),
        adc,
        iam,
    };
    Ok(c.resolved(sa.source, Credentials::Minting(Box::new(google))))
}

/// Nothing pins a method and no attribute points to one: the tools that may have signed the
/// user in, in the SDKs' order (the Azure CLI for an Azure workspace, then the Databricks
/// CLI), each tried when connecting.
fn default_chain(
    a: Attrs,
    host: String,
    host_source: Source,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, ClientError> {
    let mut tried: Vec<(Box<dyn TokenSource>, Source)> = Vec::new();
    if azure::is_azure(
        &host,
        a.azure_workspace_resource_id
            .as_ref()
            .map(|s| s.value.as_str()),
    ) && let Some((az, found)) = azure_cli(env)
    {
        let azure = settle_azure(&a, &host, env)?;
        tried.push((Box::new(azure::AzureCli { az, azure }), found));
    }
    if let Some((cli, found)) = databricks_cli(&a, env) {
        tried.push((
            Box::new(databricks_cli::DatabricksCli::new(
                cli,
                cli_profile(&a),
                &host,
            )),
            found,
        ));
    }
    let none = ClientError::NoCredentials {
        hint: match &a.profile_read {
            Some((source, keys)) => format!(
                "{source} has {}, none of which brickform signs in with; it signs in with {}",
                keys.join(", "),
                supported_list()
            ),
            None => format!(
                "set `token` (or `client_id` and `client_secret`) in the provider block, DATABRICKS_TOKEN, a ~/.databrickscfg profile, run `brickform auth login --host {host}` or `databricks auth login --host {host}`; brickform signs in with {}",
                supported_list()
            ),
        },
        host: host.clone(),
        host_source: host_source.to_string(),
    };
    if tried.is_empty() {
        return Err(none);
    }
    // The first method's name until one hands out a token; `connect` puts the winner's.
    let first = tried[0].0.auth_type();
    Ok(Resolved {
        info: CredentialInfo {
            host,
            host_source,
            auth_type: first,
            credential_source: tried[0].1.clone(),
            account_id: None,
        },
        credentials: Credentials::Chain { tried, none },
    })
}

/// The profile `databricks auth token --profile` should use: one that was named (in settings,
/// DATABRICKS_CONFIG_PROFILE or `[__settings__] default_profile`), since that is what
/// `databricks auth login --profile` keys its token cache by; else none (`--host`).
fn cli_profile(a: &Attrs) -> Option<&str> {
    match &a.profile_read {
        Some((Source::Profile { name, .. }, _)) if a.profile.is_some() || name != "DEFAULT" => {
            Some(name.as_str())
        }
        _ => a.profile.as_ref().map(|p| p.value.as_str()),
    }
}

fn databricks_cli(a: &Attrs, env: &dyn Fn(&str) -> Option<String>) -> Option<(PathBuf, Source)> {
    match &a.databricks_cli_path {
        Some(p) => command::find_executable(&p.value, env("PATH").as_deref())
            .map(|found| (found, p.source.clone())),
        None => command::find_executable("databricks", env("PATH").as_deref())
            .map(|found| (found.clone(), Source::Path(found))),
    }
}

fn azure_cli(env: &dyn Fn(&str) -> Option<String>) -> Option<(PathBuf, Source)> {
    command::find_executable("az", env("PATH").as_deref())
        .map(|found| (found.clone(), Source::Path(found)))
}

fn settle_azure(
    a: &Attrs,
    host: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<azure::Azure, ClientError> {
    Ok(azure::Azure::settle(
        host,
        a.azure_workspace_resource_id
            .as_ref()
            .map(|v| v.value.clone()),
        a.azure_tenant_id.as_ref().map(|v| v.value.clone()),
        a.azure_environment.as_ref().map(|v| v.value.as_str()),
        a.azure_login_app_id.as_ref().map(|v| v.value.clone()),
        non_empty(env("AZURE_AUTHORITY_HOST")).as_deref(),
    )?)
}

/// The Azure instance metadata service: its well-known address, or
/// `AZURE_POD_IDENTITY_AUTHORITY_HOST` as the Azure SDKs read it.
fn metadata_host(env: &dyn Fn(&str) -> Option<String>) -> Result<String, ClientError> {
    match non_empty(env("AZURE_POD_IDENTITY_AUTHORITY_HOST")) {
        Some(h) => Ok(check_endpoint(&h, "AZURE_POD_IDENTITY_AUTHORITY_HOST")?),
        None => Ok("http://169.254.169.254/".to_string()),
    }
}

fn from_source<T>(s: &Option<Sourced<T>>) -> Source {
    s.as_ref().map_or(Source::Settings, |s| s.source.clone())
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
    let file = ConfigFile::parse(&text).map_err(|e| ClientError::ConfigFile {
        path: shown.clone(),
        reason: e.to_string(),
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
    let Some(section) = file.section(&name).filter(|s| !s.is_empty() || explicit) else {
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
    fill_all(a, &get, &src);
    a.profile_read = Some((src, section.keys().cloned().collect()));
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
    let loopback = is_loopback(&host);
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

fn is_loopback(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    }
}

/// A sign-in endpoint set by an environment variable (`what`): `https`, or plain http on a
/// loopback host only, as for the workspace itself. Returned ending in `/`, so paths append.
pub(crate) fn check_endpoint(raw: &str, what: &str) -> Result<String, SettingError> {
    let url = reqwest::Url::parse(raw.trim()).map_err(|source| SettingError::NotUrl {
        what: what.to_string(),
        raw: without_secrets(raw),
        source,
    })?;
    let ok = match (url.scheme(), url.host()) {
        ("https", Some(_)) => true,
        ("http", Some(h)) => is_loopback(&h),
        _ => false,
    };
    if !ok || url.query().is_some() || !url.username().is_empty() {
        return Err(SettingError::Insecure {
            what: what.to_string(),
            raw: without_secrets(raw),
        });
    }
    let mut out = url.to_string();
    if !out.ends_with('/') {
        out.push('/');
    }
    Ok(out)
}

/// An endpoint as an error shows it: a user name and password before the host, and a
/// query, may be secrets, so they are shown as `***`. Textual, so that it works on what is
/// not a URL too.
fn without_secrets(raw: &str) -> String {
    let raw = raw.trim();
    let (scheme, rest) = match raw.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), raw),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, _)) => format!("{path}?***"),
        None => tail.to_string(),
    };
    format!("{scheme}{authority}{tail}")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_refused_is_shown_without_its_credentials_or_query() {
        for raw in [
            "http://user:hunter2@login.example.com/tenant",
            "https://login.example.com/tenant?key=hunter2",
            "ht tp://user:hunter2@bad url/?key=hunter2",
        ] {
            let e = check_endpoint(raw, "AZURE_AUTHORITY_HOST").unwrap_err();
            let (shown, debug) = (e.to_string(), format!("{e:?}"));
            assert!(
                !shown.contains("hunter2") && !debug.contains("hunter2"),
                "{shown}\n{debug}"
            );
            assert!(shown.contains("AZURE_AUTHORITY_HOST"), "{shown}");
        }
        assert_eq!(
            without_secrets("https://a:b@host.example.com:8443/p?q=1#f"),
            "https://***@host.example.com:8443/p?***"
        );
        assert_eq!(without_secrets("https://host/p"), "https://host/p");
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
