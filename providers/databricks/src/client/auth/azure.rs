//! Signing in to Azure Databricks with Microsoft Entra ID tokens, as the official SDKs do:
//! through the Azure CLI (`az login`), a service principal's client secret, or a managed
//! identity. Each API call carries the token for the Azure Databricks application, plus, when
//! one can be had, a token for Azure's management endpoint (the workspace uses it to add a
//! service principal it has not seen yet) and the workspace's resource id.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};

use super::AuthType;
use super::command::run_json;
use super::error::{AuthError, SettingError};
use super::token::{Minted, TokenSource, expires_in, field, instant_at, parse_expiry, token_call};

/// The Azure Databricks application: the `resource` of the tokens API calls carry.
pub(crate) const DATABRICKS_APP_ID: &str = "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d";

const MANAGEMENT_HEADER: &str = "X-Databricks-Azure-SP-Management-Token";
const RESOURCE_ID_HEADER: &str = "X-Databricks-Azure-Workspace-Resource-Id";

/// One Azure cloud: where Entra ID signs in, and the management resource.
#[derive(Debug)]
pub(crate) struct Cloud {
    pub service_management: &'static str,
    pub active_directory: &'static str,
}

const PUBLIC: Cloud = Cloud {
    service_management: "https://management.core.windows.net/",
    active_directory: "https://login.microsoftonline.com/",
};
const USGOVERNMENT: Cloud = Cloud {
    service_management: "https://management.core.usgovcloudapi.net/",
    active_directory: "https://login.microsoftonline.us/",
};
const CHINA: Cloud = Cloud {
    service_management: "https://management.core.chinacloudapi.cn/",
    active_directory: "https://login.chinacloudapi.cn/",
};

/// Azure Databricks host names, the application their tokens are for, and their cloud.
const ZONES: &[(&str, &str, &Cloud)] = &[
    (
        ".dev.azuredatabricks.net",
        "62a912ac-b58e-4c1d-89ea-b2dbfc7358fc",
        &PUBLIC,
    ),
    (
        ".staging.azuredatabricks.net",
        "4a67d088-db5c-48f1-9ff2-0aace800ae68",
        &PUBLIC,
    ),
    (".azuredatabricks.net", DATABRICKS_APP_ID, &PUBLIC),
    (".databricks.azure.us", DATABRICKS_APP_ID, &USGOVERNMENT),
    (".databricks.azure.cn", DATABRICKS_APP_ID, &CHINA),
];

fn zone_of(host: &str) -> Option<&'static (&'static str, &'static str, &'static Cloud)> {
    let name = host
        .split_once("://")
        .map_or(host, |(_, rest)| rest)
        .split([':', '/'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    ZONES.iter().find(|(zone, _, _)| name.ends_with(zone))
}

/// Whether the workspace is on Azure: an Azure host name, or a workspace resource id.
pub(crate) fn is_azure(host: &str, workspace_resource_id: Option<&str>) -> bool {
    workspace_resource_id.is_some() || zone_of(host).is_some()
}

/// What every Azure method needs, settled from the configuration.
#[derive(Debug, Clone)]
pub(crate) struct Azure {
    pub host: String,
    /// The application the API tokens are for.
    pub login_app_id: String,
    pub cloud: &'static Cloud,
    /// Where Entra ID answers, ending in `/`.
    pub authority: String,
    pub workspace_resource_id: Option<String>,
    pub tenant_id: Option<String>,
}

impl Azure {
    /// `environment` is `azure_environment` (PUBLIC, USGOVERNMENT, CHINA; `AzurePublicCloud`
    /// as older tools spell it); `authority` is `AZURE_AUTHORITY_HOST`, the Azure SDKs'
    /// setting for a sovereign or private Entra ID endpoint.
    pub fn settle(
        host: &str,
        workspace_resource_id: Option<String>,
        tenant_id: Option<String>,
        environment: Option<&str>,
        login_app_id: Option<String>,
        authority: Option<&str>,
    ) -> Result<Azure, SettingError> {
        let zone = zone_of(host);
        let cloud = match environment {
            Some(name) => {
                let upper = name.trim().to_ascii_uppercase();
                let bare = upper
                    .strip_prefix("AZURE")
                    .unwrap_or(&upper)
                    .trim_end_matches("CLOUD");
                match bare {
                    "PUBLIC" => &PUBLIC,
                    "USGOVERNMENT" => &USGOVERNMENT,
                    "CHINA" => &CHINA,
                    _ => {
                        return Err(SettingError::UnknownCloud {
                            name: name.to_string(),
                        });
                    }
                }
            }
            None => zone.map_or(&PUBLIC, |(_, _, cloud)| *cloud),
        };
        let authority = match authority {
            Some(a) => super::check_endpoint(a, "AZURE_AUTHORITY_HOST")?,
            None => cloud.active_directory.to_string(),
        };
        Ok(Azure {
            host: host.to_string(),
            login_app_id: login_app_id
                .unwrap_or_else(|| zone.map_or(DATABRICKS_APP_ID, |(_, id, _)| *id).to_string()),
            cloud,
            authority,
            workspace_resource_id,
            tenant_id,
        })
    }

    /// The subscription of the workspace resource id
    /// (`/subscriptions/SUB/resourceGroups/…/workspaces/NAME`).
    fn subscription(&self) -> Option<&str> {
        let id = self.workspace_resource_id.as_deref()?;
        let mut parts = id.split('/');
        (parts.nth(1)? == "subscriptions").then_some(())?;
        parts.next().filter(|s| !s.is_empty())
    }

    /// The headers of API calls: the token, the management token when there is one, and the
    /// workspace resource id when it is configured.
    fn headers(&self, api: Minted, management: Option<Minted>) -> Minted {
        let mut out = api;
        if let Some(m) = management {
            let token = m.authorization.expose_secret().split_once(' ').map_or_else(
                || m.authorization.expose_secret().to_string(),
                |(_, t)| t.to_string(),
            );
            out.extra
                .push((MANAGEMENT_HEADER, SecretString::from(token)));
            out.expires_at = out.expires_at.min(m.expires_at);
        }
        if let Some(id) = &self.workspace_resource_id {
            out.extra
                .push((RESOURCE_ID_HEADER, SecretString::from(id.clone())));
        }
        out
    }

    /// The tenant: configured, or read from where the workspace's login page sends a browser
    /// (`GET HOST/aad/auth` redirects to `https://login.microsoftonline.com/TENANT/…`).
    async fn tenant(&self) -> Result<String, AuthError> {
        if let Some(t) = &self.tenant_id {
            return Ok(t.clone());
        }
        let plain = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|e| AuthError::HttpClient(Arc::new(e)))?;
        let url = format!("{}/aad/auth", self.host);
        let resp = plain
            .get(&url)
            .send()
            .await
            .map_err(|e| AuthError::TenantUnreadable {
                url: url.clone(),
                source: Arc::new(e),
            })?;
        let no_tenant = || AuthError::NoTenant { url: url.clone() };
        if !resp.status().is_redirection() {
            return Err(no_tenant());
        }
        let location = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| reqwest::Url::parse(l).ok())
            .ok_or_else(no_tenant)?;
        location
            .path_segments()
            .and_then(|mut s| s.next())
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .ok_or_else(no_tenant)
    }
}

/// `az account get-access-token`, for whoever `az login` signed in.
pub(crate) struct AzureCli {
    pub az: PathBuf,
    pub azure: Azure,
}

impl AzureCli {
    async fn token_for(&self, resource: &str) -> Result<Minted, AuthError> {
        let mut args: Vec<String> = ["account", "get-access-token", "--resource", resource]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(["--output".to_string(), "json".to_string()]);
        if let Some(t) = &self.azure.tenant_id {
            args.extend(["--tenant".to_string(), t.clone()]);
        }
        // The workspace's subscription first, as the SDKs do; someone with access to the
        // workspace but not to its subscription gets a token without it.
        let out = match self.azure.subscription() {
            Some(sub) if self.azure.tenant_id.is_none() => {
                let mut with = args.clone();
                with.extend(["--subscription".to_string(), sub.to_string()]);
                match run_json(&self.az, &with).await {
                    Ok(out) => out,
                    Err(_) => run_json(&self.az, &args).await?,
                }
            }
            _ => run_json(&self.az, &args).await?,
        };
        let lacks = |lacks| AuthError::ToolOutput {
            tool: "`az`",
            lacks,
        };
        let token = field(&out, "accessToken").ok_or_else(|| lacks("accessToken"))?;
        let expiry = out
            .get("expires_on")
            .and_then(parse_expiry)
            .or_else(|| out.get("expiresOn").and_then(parse_expiry))
            .ok_or_else(|| lacks("expiry it could be read by"))?;
        Ok(Minted::bearer(token, instant_at(expiry)))
    }
}

#[async_trait]
impl TokenSource for AzureCli {
    fn auth_type(&self) -> AuthType {
        AuthType::AzureCli
    }

    async fn mint(&self, _http: &reqwest::Client) -> Result<Minted, AuthError> {
        let api = self.token_for(&self.azure.login_app_id).await?;
        // A user without access to the management endpoint still signs in, without it.
        let management = self
            .token_for(self.azure.cloud.service_management)
            .await
            .ok();
        Ok(self.azure.headers(api, management))
    }
}

/// A service principal's client secret, exchanged with Entra ID.
pub(crate) struct AzureClientSecret {
    pub client_id: String,
    pub client_secret: SecretString,
    pub azure: Azure,
    tenant: tokio::sync::OnceCell<String>,
}

impl AzureClientSecret {
    pub fn new(client_id: String, client_secret: SecretString, azure: Azure) -> Self {
        AzureClientSecret {
            client_id,
            client_secret,
            azure,
            tenant: tokio::sync::OnceCell::new(),
        }
    }

    async fn token_for(
        &self,
        http: &reqwest::Client,
        tenant: &str,
        resource: &str,
    ) -> Result<Minted, AuthError> {
        let url = format!("{}{tenant}/oauth2/token", self.azure.authority);
        let form = [
            ("grant_type", "client_credentials"),
            ("client_id", self.client_id.as_str()),
            ("client_secret", self.client_secret.expose_secret()),
            ("resource", resource),
        ];
        let what = "Microsoft Entra ID";
        let body = token_call(http.post(&url).form(&form), what).await?;
        let token = field(&body, "access_token").ok_or(AuthError::AnswerLacks {
            what,
            field: "access_token",
        })?;
        Ok(Minted::bearer(token, expires_in(&body)))
    }
}

#[async_trait]
impl TokenSource for AzureClientSecret {
    fn auth_type(&self) -> AuthType {
        AuthType::AzureClientSecret
    }

    async fn mint(&self, http: &reqwest::Client) -> Result<Minted, AuthError> {
        let tenant = self
            .tenant
            .get_or_try_init(|| self.azure.tenant())
            .await?
            .clone();
        let api = self
            .token_for(http, &tenant, &self.azure.login_app_id)
            .await?;
        let management = self
            .token_for(http, &tenant, self.azure.cloud.service_management)
            .await
            .ok();
        Ok(self.azure.headers(api, management))
    }
}

/// A managed identity, through the instance metadata service of the Azure machine brickform
/// runs on.
pub(crate) struct AzureMsi {
    /// A user-assigned identity's client id; the system-assigned one without it.
    pub client_id: Option<String>,
    pub azure: Azure,
    /// `http://169.254.169.254`, or `AZURE_POD_IDENTITY_AUTHORITY_HOST` (the Azure SDKs'
    /// setting for an identity endpoint elsewhere).
    pub metadata_host: String,
}

impl AzureMsi {
    async fn token_for(&self, http: &reqwest::Client, resource: &str) -> Result<Minted, AuthError> {
        let url = format!(
            "{}/metadata/identity/oauth2/token",
            self.metadata_host.trim_end_matches('/')
        );
        let mut query = vec![("api-version", "2018-02-01"), ("resource", resource)];
        if let Some(id) = &self.client_id {
            query.push(("client_id", id.as_str()));
        }
        let req = http
            .get(&url)
            .query(&query)
            .header("Metadata", "true")
            .timeout(std::time::Duration::from_secs(10));
        let what = "the Azure instance metadata service";
        let body = token_call(req, what).await?;
        let token = field(&body, "access_token").ok_or(AuthError::AnswerLacks {
            what,
            field: "access_token",
        })?;
        let expiry = body
            .get("expires_on")
            .and_then(parse_expiry)
            .map(instant_at)
            .unwrap_or_else(|| expires_in(&body));
        Ok(Minted::bearer(token, expiry))
    }
}

#[async_trait]
impl TokenSource for AzureMsi {
    fn auth_type(&self) -> AuthType {
        AuthType::AzureMsi
    }

    async fn mint(&self, http: &reqwest::Client) -> Result<Minted, AuthError> {
        let api = self.token_for(http, &self.azure.login_app_id).await?;
        let management = self
            .token_for(http, self.azure.cloud.service_management)
            .await
            .ok();
        Ok(self.azure.headers(api, management))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clouds_and_applications_follow_the_host() {
        let a = Azure::settle(
            "https://adb-1.2.azuredatabricks.net",
            None,
            None,
            None,
            None,
            None,
        )
        .unwrap();
        assert_eq!(a.login_app_id, DATABRICKS_APP_ID);
        assert_eq!(a.cloud.service_management, PUBLIC.service_management);
        assert_eq!(a.authority, "https://login.microsoftonline.com/");
        let cn = Azure::settle(
            "https://adb-1.databricks.azure.cn",
            None,
            None,
            None,
            None,
            None,
        )
        .unwrap();
        assert_eq!(cn.cloud.active_directory, "https://login.chinacloudapi.cn/");
        let dev = Azure::settle(
            "https://x.dev.azuredatabricks.net",
            None,
            None,
            None,
            None,
            None,
        )
        .unwrap();
        assert_eq!(dev.login_app_id, "62a912ac-b58e-4c1d-89ea-b2dbfc7358fc");
        let gov = Azure::settle(
            "http://127.0.0.1:9",
            None,
            None,
            Some("AzureUSGovernmentCloud"),
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            gov.cloud.active_directory,
            "https://login.microsoftonline.us/"
        );
        assert!(
            Azure::settle("h", None, None, Some("mars"), None, None)
                .unwrap_err()
                .to_string()
                .contains("PUBLIC, USGOVERNMENT or CHINA")
        );
        let local = Azure::settle(
            "http://127.0.0.1:9",
            None,
            None,
            None,
            None,
            Some("http://127.0.0.1:9/entra"),
        )
        .unwrap();
        assert_eq!(local.authority, "http://127.0.0.1:9/entra/");
        assert!(
            Azure::settle(
                "h",
                None,
                None,
                None,
                None,
                Some("http://login.example.com/")
            )
            .is_err()
        );
        assert!(is_azure("https://adb-1.azuredatabricks.net", None));
        assert!(is_azure("http://127.0.0.1:1", Some("/subscriptions/s/x")));
        assert!(!is_azure("https://dbc-1.cloud.databricks.com", None));
    }

    #[test]
    fn the_subscription_comes_from_the_resource_id() {
        let id = "/subscriptions/0000-sub/resourceGroups/rg/providers/Microsoft.Databricks/workspaces/ws";
        let a = Azure::settle("h", Some(id.into()), None, None, None, None).unwrap();
        assert_eq!(a.subscription(), Some("0000-sub"));
        let b = Azure::settle("h", Some("not/an/id".into()), None, None, None, None).unwrap();
        assert_eq!(b.subscription(), None);
    }
}
