//! brickform's Databricks provider: the API client, the resource kinds and data sources.
//!
//! Each kind lives in its own file under `resources/` (data sources under `data/`), its
//! schema declared as data; the mechanics several kinds share (Unity Catalog securables,
//! content uploads) live in one place each.

pub mod adopt;
pub mod client;
pub mod data;
mod process;
pub mod resources;
pub mod run;
pub mod sdp_meta;
pub mod terraform;
pub mod volume_path;

use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, Provider, ProviderError, ProviderResult, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use client::{Client, SecretStore, Settings};
use std::sync::{Arc, RwLock};

/// What every kind of this provider shares: the connected client.
#[derive(Default)]
pub struct Shared {
    client: RwLock<Option<Client>>,
    /// The user the client acts as, asked once (SCIM Me) when first needed.
    user: tokio::sync::OnceCell<Option<String>>,
    /// Where the workspace's pages are, for the `url` attributes (see [`Shared::web_url`]).
    web_host: RwLock<String>,
    /// Which plan is under way (see [`Provider::plan_started`]): a listing shared by one
    /// plan's lookups is not used by the next.
    plan: std::sync::atomic::AtomicU64,
    /// The schemas' tables one plan's pipelines share (see [`resources::locations::PlanTables`]).
    pub(crate) tables: resources::locations::PlanTables,
    /// Workspace folders objects of this run made or recorded as made (see
    /// [`resources::workspace_folders`]).
    pub(crate) made_folders: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// Workspace folders a plan's lookups found there or not, with the plan (see
    /// [`resources::workspace_folders::survey`]).
    pub(crate) surveyed_folders:
        std::sync::Mutex<std::collections::HashMap<String, resources::workspace_folders::Surveyed>>,
    /// The account this configuration manages, when it is account-level (see
    /// [`Shared::account`]).
    account: RwLock<Option<String>>,
}

/// The kinds an account-level configuration manages: the account's identities, through the
/// account SCIM API (the Terraform provider's "can be used with an account or
/// workspace-level provider" kinds, docs/resources/group.md, user.md, service_principal.md,
/// group_member.md). Every other kind lives in a workspace.
pub const ACCOUNT_KINDS: [&str; 4] = [
    "databricks_group",
    "databricks_user",
    "databricks_service_principal",
    "databricks_group_member",
];

/// The data sources an account-level configuration reads: the account's identities.
pub const ACCOUNT_DATA_SOURCES: [&str; 3] = [
    "databricks_group",
    "databricks_user",
    "databricks_service_principal",
];

/// The SCIM API of a workspace; an account's is [`account_scim`].
pub const WORKSPACE_SCIM: &str = "/api/2.0/preview/scim/v2";

/// The SCIM API of account `account_id`: the workspace path with `/preview` replaced by
/// `/accounts/{account_id}`, as the Terraform provider rewrites it for an account-level
/// provider (common/client.go, scimVisitorForLevel) and the SDKs address the account's
/// Groups, Users and ServicePrincipals.
pub fn account_scim(account_id: &str) -> String {
    format!("/api/2.0/accounts/{account_id}/scim/v2")
}

/// Whether `host` is an accounts host (`https://accounts.…`, `https://accounts-dod.…`),
/// whose APIs are the account's: the Go SDK's `HostType` (config/config.go), which a bare
/// host is read with `https://` for.
pub fn is_accounts_host(host: &str) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let host = if host.contains("://") {
        host
    } else {
        format!("https://{host}")
    };
    host.starts_with("https://accounts.") || host.starts_with("https://accounts-dod.")
}

/// Why an account-level configuration cannot reach a workspace kind, and what to do.
fn workspace_only(what: &str, account: &str) -> (String, String) {
    (
        format!(
            "{what} lives in a workspace, but this provider configuration is account-level (account {account}): it manages the account's groups, users, service principals and group members only"
        ),
        "give it a workspace-level provider: leave `provider` out for the default one, or name an alias whose host is a workspace URL".to_string(),
    )
}

impl Shared {
    /// The plan under way, counted from 0.
    pub fn plan(&self) -> u64 {
        self.plan.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The client of a workspace, once the provider is configured. An account-level
    /// configuration has none: what calls this lives in a workspace, and the account's host
    /// would answer 404 for it, so it is refused here with what to do (the configuration is
    /// checked before anything runs too, see [`DatabricksProvider`]'s `refuses`).
    pub fn client(&self) -> ProviderResult<Client> {
        if let Some(account) = self.account() {
            let (message, hint) = workspace_only("this resource", &account);
            return Err(ProviderError::invalid(message).with_detail(hint));
        }
        self.any_client()
    }

    /// The client whatever the level: for the identity kinds, which address the account's
    /// SCIM API or the workspace's by [`Shared::scim`].
    pub fn any_client(&self) -> ProviderResult<Client> {
        self.client
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| ProviderError::other("the databricks provider is not configured"))
    }

    /// The account this configuration manages, when it is account-level: its host is an
    /// accounts host (or, on the local workspace, its block sets `account_id`).
    pub fn account(&self) -> Option<String> {
        self.account
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Where the SCIM API is: the account's for an account-level configuration, else the
    /// workspace's.
    pub fn scim(&self) -> String {
        match self.account() {
            Some(account) => account_scim(&account),
            None => WORKSPACE_SCIM.to_string(),
        }
    }

    /// The user name the client acts as; `None` when the workspace does not say.
    /// An account-level configuration acts in no workspace: it has no such user.
    pub async fn current_user(&self) -> ProviderResult<Option<String>> {
        if self.account().is_some() {
            return Ok(None);
        }
        let client = self.client()?;
        self.user
            .get_or_try_init(|| async move {
                let me = client
                    .get("/api/2.0/preview/scim/v2/Me", &[])
                    .await
                    .map_err(ProviderError::from)?;
                Ok::<_, ProviderError>(
                    me.get("userName")
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_string),
                )
            })
            .await
            .cloned()
    }

    fn set(&self, c: Client, web_host: String, account: Option<String>) {
        *self.client.write().unwrap_or_else(|p| p.into_inner()) = Some(c);
        *self.account.write().unwrap_or_else(|p| p.into_inner()) = account;
        *self.web_host.write().unwrap_or_else(|p| p.into_inner()) = web_host;
    }

    /// The address of a page of the workspace UI, `path` after the host (`#job/42`), as the
    /// Terraform provider forms its `url` attributes. A local workspace started for one
    /// command listens on a new port each time, and has no pages anyway: its URLs name it as
    /// the configuration does (`local/#job/42`), so they stay the same from one run to the
    /// next instead of showing as a changed output on every plan.
    pub fn web_url(&self, path: &str) -> String {
        format!("{}/{path}", self.web_host())
    }

    /// The workspace as its pages are addressed (see [`Shared::web_url`]): its URL, or the
    /// local workspace as the configuration names it.
    pub fn web_host(&self) -> String {
        let host = self.web_host.read().unwrap_or_else(|p| p.into_inner());
        host.trim_end_matches('/').to_string()
    }
}

/// How the command runs the provider.
#[derive(Clone)]
pub struct Options {
    /// When set, every request goes to this local workspace (`--local`, or `host = "local"`
    /// once the command has started it): `(url, token)`.
    pub local: Option<(String, String)>,
    /// Where credentials saved by `brickform auth login` are kept.
    pub secrets: Arc<dyn SecretStore>,
    /// Reads environment variables (injected so tests never depend on the real environment).
    pub env: EnvReader,
}

/// Reads an environment variable by name.
pub type EnvReader = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

pub struct DatabricksProvider {
    shared: Arc<Shared>,
    options: Options,
    schema: Schema,
    /// The settings of `environment` blocks its kinds' presets read.
    environment_schema: Schema,
}

impl DatabricksProvider {
    pub fn new(options: Options) -> Self {
        let schema = Schema::new()
            .describe("Connection to a Databricks workspace. Unset settings come from DATABRICKS_* environment variables, a ~/.databrickscfg profile, or `brickform auth login`.")
            .attr(Attribute::optional("host", AttrType::String).describe("Workspace URL; \"local\" for the local workspace in .brickform/local, \"local:NAME\" for another one in .brickform/local-NAME (one per environment, say); an accounts host (https://accounts.cloud.databricks.com, https://accounts.azuredatabricks.net, https://accounts.gcp.databricks.com) for the account's identities."))
            .attr(Attribute::optional("account_id", AttrType::String).describe("The Databricks account, for an accounts host (DATABRICKS_ACCOUNT_ID, a profile's account_id). With an accounts host, or on the local workspace, the configuration is account-level: it manages the account's groups, users, service principals and group members, and nothing of a workspace."))
            .attr(Attribute::optional("token", AttrType::String).sensitive().describe("Personal access token."))
            .attr(Attribute::optional("client_id", AttrType::String).describe("OAuth machine-to-machine client id."))
            .attr(Attribute::optional("client_secret", AttrType::String).sensitive().describe("OAuth machine-to-machine client secret."))
            .attr(Attribute::optional("profile", AttrType::String).describe("Profile of ~/.databrickscfg."))
            .attr(Attribute::optional("config_file", AttrType::String).describe("Path of the configuration file (default ~/.databrickscfg)."))
            .attr(Attribute::optional("auth_type", AttrType::String).one_of_any_case(&client::AUTH_TYPES).describe("Pin one authentication method (docs/authentication.md)."))
            .attr(Attribute::optional("databricks_cli_path", AttrType::String).describe("The Databricks CLI that `databricks-cli` sign-in runs, when it is not `databricks` on PATH."))
            .attr(Attribute::optional("azure_workspace_resource_id", AttrType::String).describe("Azure: the workspace's resource id (/subscriptions/…/workspaces/NAME); sent with Microsoft Entra ID tokens."))
            .attr(Attribute::optional("azure_client_id", AttrType::String).describe("Azure: the service principal's (or user-assigned managed identity's) client id."))
            .attr(Attribute::optional("azure_client_secret", AttrType::String).sensitive().describe("Azure: the service principal's client secret."))
            .attr(Attribute::optional("azure_tenant_id", AttrType::String).describe("Azure: the Microsoft Entra ID tenant; read from the workspace when unset."))
            .attr(Attribute::optional("azure_use_msi", AttrType::Bool).describe("Azure: sign in as the machine's managed identity."))
            .attr(Attribute::optional("azure_environment", AttrType::String).describe("Azure: the cloud (PUBLIC, USGOVERNMENT, CHINA); from the host when unset."))
            .attr(Attribute::optional("azure_login_app_id", AttrType::String).describe("Azure: the application the tokens are for, when it is not Azure Databricks' own."))
            .attr(Attribute::optional("google_credentials", AttrType::String).sensitive().describe("Google Cloud: a service-account key, as its JSON file's path or the JSON itself."))
            .attr(Attribute::optional("google_service_account", AttrType::String).describe("Google Cloud: the service account to impersonate with application default credentials."))
            .attr(Attribute::optional("rate_limit", AttrType::Number).describe("Fixed cap on requests per second to the workspace."))
            .attr(Attribute::optional("initial_rate", AttrType::Number).describe("Requests per second the adaptive limiter starts at."))
            .attr(Attribute::optional("retry_timeout_seconds", AttrType::Number).describe("Time budget for retrying one request (default 300)."))
            .attr(Attribute::optional("http_timeout_seconds", AttrType::Number).describe("Timeout of one HTTP exchange (default 60). A write that times out is not sent again: brickform looks for what it may have made."));
        DatabricksProvider {
            shared: Arc::new(Shared::default()),
            options,
            schema,
            environment_schema: resources::presets::environment_schema(),
        }
    }

    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Whether a provider block, as written, makes an account-level configuration: its host
    /// is an accounts host, or it names an account on the local workspace (which answers for
    /// the account too, as the Go SDK takes `account_id` alone for an account client when
    /// testing: config/config.go `IsAccountClient`). A host left to the environment says
    /// nothing here; [`DatabricksProvider::account`] decides once connected.
    fn account_level_as_written(&self, settings: &Object) -> bool {
        let host = text(settings, "host");
        if host.as_deref().is_some_and(is_accounts_host) {
            return true;
        }
        let local = self.options.local.is_some() || wants_local(settings);
        local && text(settings, "account_id").is_some()
    }

    /// The account of an account-level configuration, `None` for a workspace's. On an
    /// accounts host the account id is required, as the SDKs require it for account APIs;
    /// on the local workspace it is the local account's, read from the host's metadata
    /// (`/.well-known/databricks-config`, as the Go SDK resolves `account_id` from it:
    /// config/config.go), whatever id the block names, as the local workspace stands in for
    /// every host the configuration names.
    async fn account(&self, config: &Object, client: &Client) -> ProviderResult<Option<String>> {
        if self.options.local.is_some() {
            if !self.account_level_as_written(config) {
                return Ok(None);
            }
            let meta = client.host_metadata().await.map_err(ProviderError::from)?;
            return meta
                .get("account_id")
                .and_then(serde_json::Value::as_str)
                .filter(|a| !a.is_empty())
                .map(|a| Some(a.to_string()))
                .ok_or_else(|| {
                    ProviderError::invalid(
                        "the local workspace does not say its account id (/.well-known/databricks-config)",
                    )
                });
        }
        if !is_accounts_host(client.host()) {
            return Ok(None);
        }
        match client.account_id() {
            Some(a) => Ok(Some(a.to_string())),
            None => Err(ProviderError::invalid(format!(
                "{} is an accounts host: set account_id (or DATABRICKS_ACCOUNT_ID, or account_id in the ~/.databrickscfg profile) to the account to manage",
                client.host()
            ))),
        }
    }

    /// How `brickform run` runs the objects of a kind: the kind's own runner, `None` when
    /// the kind is not this provider's or its objects cannot be run.
    pub fn runner(&self, type_name: &str) -> Option<Arc<dyn run::Runner>> {
        resources::all(&self.shared)
            .into_iter()
            .find(|k| k.type_name() == type_name)
            .and_then(|k| k.runner())
    }
}

/// Whether a provider block asks for the local workspace.
pub fn wants_local(settings: &Object) -> bool {
    settings
        .get("host")
        .and_then(Value::as_str)
        .is_some_and(|h| h == "local" || h.starts_with("local:"))
}

fn text(o: &Object, k: &str) -> Option<String> {
    o.get(k).and_then(Value::as_str).map(str::to_string)
}

/// A duration setting in seconds: positive and at most a day (`Duration::from_secs_f64`
/// panics on negative, NaN or huge values, so they are refused here with the setting's name).
fn seconds(o: &Object, k: &str) -> ProviderResult<Option<std::time::Duration>> {
    const MAX: f64 = 24.0 * 3600.0;
    match o.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|s| *s > 0.0 && *s <= MAX)
            .map(|s| Some(std::time::Duration::from_secs_f64(s)))
            .ok_or_else(|| {
                ProviderError::invalid(format!(
                    "{k} must be a number of seconds above 0 and at most {MAX}"
                ))
            }),
    }
}

#[async_trait]
impl Provider for DatabricksProvider {
    fn name(&self) -> &'static str {
        "databricks"
    }
    /// The Terraform provider's address, so policies written for its plans match ours.
    fn source_address(&self) -> String {
        "registry.terraform.io/databricks/databricks".into()
    }
    fn config_schema(&self) -> &Schema {
        &self.schema
    }
    /// Another workspace (`provider "databricks" { alias = "prod" … }`): its own client,
    /// credentials and rate limiter.
    fn another(&self) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(DatabricksProvider::new(self.options.clone())))
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
    fn plan_started(&self) {
        self.shared
            .plan
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn resource_kinds(&self) -> Vec<Arc<dyn ResourceKind>> {
        resources::all(&self.shared)
            .into_iter()
            .map(|k| k as Arc<dyn ResourceKind>)
            .collect()
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        data::all(&self.shared)
    }
    async fn current_user(&self) -> ProviderResult<Option<String>> {
        self.shared.current_user().await
    }
    fn environment_schema(&self) -> Option<&Schema> {
        Some(&self.environment_schema)
    }
    fn check_environment(
        &self,
        mode: Option<brickform_core::lang::environment::EnvMode>,
        settings: &Object,
    ) -> Vec<brickform_core::diagnostics::Diagnostic> {
        resources::presets::check_environment(mode, settings)
    }

    async fn configure(&self, config: &Object) -> ProviderResult<()> {
        let mut settings = Settings {
            host: text(config, "host"),
            account_id: text(config, "account_id"),
            token: text(config, "token"),
            client_id: text(config, "client_id"),
            client_secret: text(config, "client_secret"),
            profile: text(config, "profile"),
            config_file: text(config, "config_file").map(Into::into),
            auth_type: text(config, "auth_type"),
            azure_workspace_resource_id: text(config, "azure_workspace_resource_id"),
            azure_client_id: text(config, "azure_client_id"),
            azure_client_secret: text(config, "azure_client_secret"),
            azure_tenant_id: text(config, "azure_tenant_id"),
            azure_use_msi: config.get("azure_use_msi").and_then(Value::as_bool),
            azure_environment: text(config, "azure_environment"),
            azure_login_app_id: text(config, "azure_login_app_id"),
            databricks_cli_path: text(config, "databricks_cli_path"),
            google_credentials: text(config, "google_credentials"),
            google_service_account: text(config, "google_service_account"),
            rate_limit: config.get("rate_limit").and_then(Value::as_f64),
            initial_rate: config.get("initial_rate").and_then(Value::as_f64),
            retry_timeout: seconds(config, "retry_timeout_seconds")?,
            http_timeout: seconds(config, "http_timeout_seconds")?,
        };
        if let Some((url, token)) = &self.options.local {
            settings.host = Some(url.clone());
            settings.token = Some(token.clone());
            settings.client_id = None;
            settings.client_secret = None;
            settings.profile = None;
            settings.azure_client_secret = None;
            settings.azure_use_msi = None;
            settings.google_credentials = None;
            settings.google_service_account = None;
            settings.auth_type = Some("pat".into());
        } else if wants_local(config) {
            return Err(ProviderError::invalid(
                "host = \"local\" needs the local workspace, which this command did not start",
            ));
        }
        let env = self.options.env.clone();
        let client = Client::connect(&settings, &move |k| env(k), self.options.secrets.as_ref())
            .await
            .map_err(|e| ProviderError::invalid(e.to_string()))?;
        let web_host = if self.options.local.is_some() {
            text(config, "host")
                .filter(|h| h.starts_with("local"))
                .unwrap_or_else(|| "local".to_string())
        } else {
            client.host().to_string()
        };
        let account = self.account(config, &client).await?;
        self.shared.set(client, web_host, account);
        Ok(())
    }

    /// A configuration the settings make account-level cannot manage a workspace's kinds.
    fn refuses(
        &self,
        settings: &Object,
        type_name: &str,
        data: bool,
    ) -> Option<brickform_core::provider::Refusal> {
        let allowed: &[&str] = if data {
            &ACCOUNT_DATA_SOURCES
        } else {
            &ACCOUNT_KINDS
        };
        if allowed.contains(&type_name) || !self.account_level_as_written(settings) {
            return None;
        }
        let account = text(settings, "account_id").unwrap_or_else(|| "not set".into());
        let what = if data {
            format!("data \"{type_name}\"")
        } else {
            type_name.to_string()
        };
        let (message, hint) = workspace_only(&what, &account);
        Some(brickform_core::provider::Refusal { message, hint })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_settings_are_the_sensitive_ones_of_the_schema() {
        let p = DatabricksProvider::new(Options {
            local: None,
            secrets: Arc::new(client::NoStore),
            env: Arc::new(|_| None),
        });
        let mut sensitive: Vec<&str> = p
            .schema
            .attributes
            .iter()
            .filter(|a| a.sensitive)
            .map(|a| a.name)
            .collect();
        sensitive.sort_unstable();
        let mut secret = client::SECRET_SETTINGS.to_vec();
        secret.sort_unstable();
        assert_eq!(sensitive, secret);
        let vars: Vec<&str> = client::credential_variables().collect();
        for v in [
            "DATABRICKS_TOKEN",
            "DATABRICKS_CLIENT_SECRET",
            "ARM_CLIENT_SECRET",
            "GOOGLE_CREDENTIALS",
        ] {
            assert!(vars.contains(&v), "{v}");
        }
    }

    fn provider(local: bool, env: &'static [(&'static str, &'static str)]) -> DatabricksProvider {
        DatabricksProvider::new(Options {
            local: local.then(|| ("http://127.0.0.1:9".to_string(), "t".to_string())),
            secrets: Arc::new(client::NoStore),
            env: Arc::new(move |k| {
                env.iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| v.to_string())
            }),
        })
    }

    fn settings(pairs: &[(&str, &str)]) -> Object {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect()
    }

    #[test]
    fn accounts_hosts_are_the_sdks() {
        for host in [
            "https://accounts.cloud.databricks.com",
            "accounts.azuredatabricks.net",
            "https://accounts.gcp.databricks.com/",
            "https://accounts-dod.cloud.databricks.us",
            "HTTPS://Accounts.cloud.databricks.com",
        ] {
            assert!(is_accounts_host(host), "{host}");
        }
        for host in [
            "https://dbc-1.cloud.databricks.com",
            "https://adb-1.azuredatabricks.net",
            "https://myaccounts.cloud.databricks.com",
            "local",
        ] {
            assert!(!is_accounts_host(host), "{host}");
        }
        assert_eq!(account_scim("abc"), "/api/2.0/accounts/abc/scim/v2");
    }

    #[tokio::test]
    async fn an_accounts_host_makes_the_configuration_account_level() {
        let p = provider(false, &[]);
        p.configure(&settings(&[
            ("host", "https://accounts.cloud.databricks.com"),
            ("account_id", "abc"),
            ("token", "dapi-x"),
        ]))
        .await
        .unwrap();
        let shared = p.shared();
        assert_eq!(shared.scim(), "/api/2.0/accounts/abc/scim/v2");
        let refused = shared.client().unwrap_err();
        assert!(
            refused.message.contains("account-level (account abc)"),
            "{refused:?}"
        );
        assert!(shared.any_client().is_ok());

        // From DATABRICKS_ACCOUNT_ID, as the SDKs read it.
        let p = provider(false, &[("DATABRICKS_ACCOUNT_ID", "from-env")]);
        p.configure(&settings(&[
            ("host", "https://accounts.azuredatabricks.net"),
            ("token", "dapi-x"),
        ]))
        .await
        .unwrap();
        assert_eq!(p.shared().scim(), "/api/2.0/accounts/from-env/scim/v2");

        // A workspace host stays a workspace's, whatever account it names.
        let p = provider(false, &[]);
        p.configure(&settings(&[
            ("host", "https://dbc-1.cloud.databricks.com"),
            ("account_id", "abc"),
            ("token", "dapi-x"),
        ]))
        .await
        .unwrap();
        assert_eq!(p.shared().scim(), WORKSPACE_SCIM);
        assert!(p.shared().client().is_ok());
    }

    #[tokio::test]
    async fn an_accounts_host_without_an_account_is_refused() {
        let p = provider(false, &[]);
        let e = p
            .configure(&settings(&[
                ("host", "https://accounts.cloud.databricks.com"),
                ("token", "dapi-x"),
            ]))
            .await
            .unwrap_err();
        assert!(e.message.contains("set account_id"), "{e:?}");
    }

    #[test]
    fn an_account_level_block_refuses_the_workspaces_kinds() {
        use brickform_core::provider::Provider as _;
        let accounts = settings(&[
            ("host", "https://accounts.cloud.databricks.com"),
            ("account_id", "abc"),
        ]);
        let p = provider(false, &[]);
        for kind in ACCOUNT_KINDS {
            assert!(p.refuses(&accounts, kind, false).is_none(), "{kind}");
        }
        let r = p.refuses(&accounts, "databricks_job", false).unwrap();
        assert!(
            r.message.starts_with("databricks_job lives in a workspace"),
            "{r:?}"
        );
        assert!(r.hint.contains("workspace-level provider"), "{r:?}");
        assert!(p.refuses(&accounts, "databricks_group", true).is_none());
        assert!(
            p.refuses(&accounts, "databricks_current_user", true)
                .is_some()
        );
        // A workspace's block refuses nothing; on the local workspace `account_id` alone
        // makes the block account-level.
        let ws = settings(&[("host", "https://dbc-1.cloud.databricks.com")]);
        assert!(p.refuses(&ws, "databricks_job", false).is_none());
        let named = settings(&[("account_id", "abc")]);
        assert!(p.refuses(&named, "databricks_job", false).is_none());
        let local = provider(true, &[]);
        assert!(local.refuses(&named, "databricks_job", false).is_some());
    }

    #[test]
    fn timeouts_in_seconds_are_checked_not_panicked_on() {
        let with = |v: Value| Object::from_iter([("http_timeout_seconds".to_string(), v)]);
        let ok = seconds(&with(Value::from_f64(1.5)), "http_timeout_seconds");
        assert_eq!(
            ok.ok().flatten(),
            Some(std::time::Duration::from_millis(1500))
        );
        assert!(matches!(
            seconds(&Object::default(), "http_timeout_seconds"),
            Ok(None)
        ));
        for bad in [-1.0, 0.0, 1e300] {
            let e = seconds(&with(Value::from_f64(bad)), "http_timeout_seconds");
            let Err(e) = e else { panic!("{bad} accepted") };
            assert!(e.message.contains("http_timeout_seconds must be"), "{e:?}");
        }
    }
}
