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
}

impl Shared {
    /// The plan under way, counted from 0.
    pub fn plan(&self) -> u64 {
        self.plan.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The client, once the provider is configured.
    pub fn client(&self) -> ProviderResult<Client> {
        self.client
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| ProviderError::other("the databricks provider is not configured"))
    }

    /// The user name the client acts as; `None` when the workspace does not say.
    pub async fn current_user(&self) -> ProviderResult<Option<String>> {
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

    fn set(&self, c: Client, web_host: String) {
        *self.client.write().unwrap_or_else(|p| p.into_inner()) = Some(c);
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
            .attr(Attribute::optional("host", AttrType::String).describe("Workspace URL; \"local\" for the local workspace in .brickform/local, \"local:NAME\" for another one in .brickform/local-NAME (one per environment, say)."))
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
        self.shared.set(client, web_host);
        Ok(())
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

    #[test]
    fn timeouts_in_seconds_are_checked_not_panicked_on() {
        let with = |v: Value| Object::from_iter([("http_timeout_seconds".to_string(), v)]);
        let ok = seconds(&with(Value::from_f64(1.5)), "http_timeout_seconds");
        assert_eq!(
            ok.ok().flatten(),
            Some(std::time::Duration::from_millis(1500))
        );
        assert!(matches!(
            seconds(&Object::new(), "http_timeout_seconds"),
            Ok(None)
        ));
        for bad in [-1.0, 0.0, 1e300] {
            let e = seconds(&with(Value::from_f64(bad)), "http_timeout_seconds");
            let Err(e) = e else { panic!("{bad} accepted") };
            assert!(e.message.contains("http_timeout_seconds must be"), "{e:?}");
        }
    }
}
