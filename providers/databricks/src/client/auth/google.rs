//! Signing in to Databricks on Google Cloud with Google ID tokens, as the official SDKs do:
//! with a service-account key (`google-credentials`), or by impersonating a service account
//! with Application Default Credentials (`google-id`). Each API call carries an ID token for
//! the workspace, plus, when one can be had, the service account's Google access token (the
//! workspace uses it for operations on the account's Google Cloud resources).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

use super::AuthType;
use super::error::{AuthError, SettingError};
use super::token::{Minted, TokenSource, expires_in, field, instant_at, parse_expiry, token_call};

/// The scopes of the access token API calls carry beside the ID token.
pub(crate) const GCP_SCOPES: &str =
    "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/compute";
const CLOUD_PLATFORM: &str = "https://www.googleapis.com/auth/cloud-platform";
const SA_HEADER: &str = "X-Databricks-GCP-SA-Access-Token";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// Where Google's OAuth tokens come from when a credentials file does not say.
const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// The token endpoint, as messages name it.
const GOOGLE_TOKEN: &str = "Google's token endpoint";
const IAM: &str = "Google IAM Credentials";
const IAM_CREDENTIALS: &str = "https://iamcredentials.googleapis.com/";
const METADATA_HOST: &str = "metadata.google.internal";
const METADATA_TOKEN_PATH: &str = "computeMetadata/v1/instance/service-accounts/default/token";
/// A token without a stated lifetime is taken to last an hour, Google's usual.
const HOUR: Duration = Duration::from_secs(3600);

/// A service-account key: the JSON file Google Cloud hands out for a service account.
pub(crate) struct ServiceAccountKey {
    client_email: String,
    private_key_id: String,
    key: RsaKeyPair,
    token_uri: String,
}

impl std::fmt::Debug for ServiceAccountKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountKey")
            .field("client_email", &self.client_email)
            .field("private_key", &"[REDACTED]")
            .field("token_uri", &self.token_uri)
            .finish()
    }
}

impl ServiceAccountKey {
    /// Reads a parsed key file. `what` names it in errors (never its content).
    fn from_json(v: &Value, what: &str) -> Result<ServiceAccountKey, AuthError> {
        let need = |k: &'static str| {
            field(v, k)
                .map(str::to_string)
                .ok_or_else(|| AuthError::KeyLacks {
                    what: what.to_string(),
                    field: k,
                })
        };
        let pem = need("private_key")?;
        let der = pem_body(&pem, "PRIVATE KEY").ok_or_else(|| AuthError::NotPem {
            what: what.to_string(),
        })?;
        let key = RsaKeyPair::from_pkcs8(&der).map_err(|source| AuthError::NotRsa {
            what: what.to_string(),
            source,
        })?;
        let token_uri = field(v, "token_uri")
            .unwrap_or(GOOGLE_TOKEN_URI)
            .trim()
            .to_string();
        super::check_endpoint(&token_uri, &format!("{what}: token_uri"))?;
        Ok(ServiceAccountKey {
            client_email: need("client_email")?,
            private_key_id: need("private_key_id")?,
            key,
            token_uri,
        })
    }

    /// A signed JWT asserting the account, for its token endpoint, with one more claim
    /// (`target_audience` for an ID token, `scope` for an access token).
    fn assertion(&self, claim: (&str, &str)) -> Result<SecretString, AuthError> {
        let now = jiff::Timestamp::now().as_second();
        let header = json!({"alg": "RS256", "typ": "JWT", "kid": self.private_key_id});
        let mut claims = json!({
            "iss": self.client_email,
            "aud": self.token_uri,
            "iat": now,
            "exp": now + 3600,
        });
        claims[claim.0] = json!(claim.1);
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let mut signature = vec![0; self.key.public_modulus_len()];
        self.key
            .sign(
                &RSA_PKCS1_SHA256,
                &aws_lc_rs::rand::SystemRandom::new(),
                input.as_bytes(),
                &mut signature,
            )
            .map_err(|source| AuthError::CannotSign { source })?;
        Ok(SecretString::from(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature)
        )))
    }

    /// The JWT-bearer exchange at the key's token endpoint.
    async fn exchange(
        &self,
        http: &reqwest::Client,
        claim: (&str, &str),
    ) -> Result<Value, AuthError> {
        let assertion = self.assertion(claim)?;
        let form = [
            ("grant_type", JWT_BEARER),
            ("assertion", assertion.expose_secret()),
        ];
        token_call(http.post(&self.token_uri).form(&form), GOOGLE_TOKEN).await
    }

    async fn id_token(&self, http: &reqwest::Client, audience: &str) -> Result<Minted, AuthError> {
        let body = self.exchange(http, ("target_audience", audience)).await?;
        let token = field(&body, "id_token").ok_or(AuthError::AnswerLacks {
            what: GOOGLE_TOKEN,
            field: "id_token",
        })?;
        Ok(Minted::bearer(token, jwt_expiry(token)))
    }

    async fn access_token(&self, http: &reqwest::Client, scope: &str) -> Result<Access, AuthError> {
        let body = self.exchange(http, ("scope", scope)).await?;
        Access::from_oauth(&body, GOOGLE_TOKEN)
    }
}

/// A Google access token and until when it holds.
struct Access {
    token: SecretString,
    expires_at: Instant,
}

impl Access {
    /// An OAuth token answer: `{access_token, expires_in}`.
    fn from_oauth(body: &Value, what: &'static str) -> Result<Access, AuthError> {
        let token = field(body, "access_token").ok_or(AuthError::AnswerLacks {
            what,
            field: "access_token",
        })?;
        Ok(Access {
            token: SecretString::from(token.to_string()),
            expires_at: expires_in(body),
        })
    }
}

/// The ID token with the service account's access token beside it, when there is one: a
/// service account that may not mint access tokens still signs in, as with the SDKs.
fn with_access(mut id: Minted, access: Result<Access, AuthError>) -> Minted {
    match access {
        Ok(a) => {
            id.expires_at = id.expires_at.min(a.expires_at);
            id.extra.push((SA_HEADER, a.token));
        }
        Err(e) => {
            tracing::warn!(
                "signing in without a Google Cloud access token for the service account: {e}"
            );
        }
    }
    id
}

/// The `exp` claim of a JWT (Google's ID tokens are JWTs), else an hour from now.
fn jwt_expiry(token: &str) -> Instant {
    let exp = token
        .split('.')
        .nth(1)
        .and_then(|p| URL_SAFE_NO_PAD.decode(p.trim_end_matches('=')).ok())
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|claims| claims.get("exp").and_then(parse_expiry));
    exp.map_or_else(|| Instant::now() + HOUR, instant_at)
}

/// The DER inside a PEM block of `label`.
fn pem_body(pem: &str, label: &str) -> Option<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = pem.find(&begin)? + begin.len();
    let stop = start + pem[start..].find(&end)?;
    let b64: String = pem[start..stop]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    STANDARD.decode(b64).ok()
}

/// `google_credentials`: a key file's path, or the key's JSON itself (the SDKs' reading: a
/// file that exists, else JSON). Errors name where the value came from, never the value: it
/// may be the key.
pub(crate) fn read_credentials(value: &str, from: &str) -> Result<ServiceAccountKey, AuthError> {
    let what = format!("google_credentials (from {from})");
    let path = Path::new(value.trim());
    let (text, what) = if !value.trim_start().starts_with('{') && path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| AuthError::KeyFileUnreadable {
            what: what.clone(),
            source: Arc::new(e),
        })?;
        (text, format!("the key file of {what}"))
    } else {
        (value.to_string(), what)
    };
    if !text.trim_start().starts_with('{') {
        return Err(AuthError::NotAKey { what });
    }
    // A JSON syntax error says where the text breaks off, never what it holds.
    let v: Value = serde_json::from_str(&text).map_err(|e| AuthError::KeyNotJson {
        what: what.clone(),
        source: Arc::new(e),
    })?;
    match field(&v, "type") {
        Some("service_account") => ServiceAccountKey::from_json(&v, &what),
        Some(other) => Err(AuthError::NotServiceAccount {
            what,
            found: other.to_string(),
        }),
        None => Err(AuthError::KeyUntyped { what }),
    }
}

/// `google-credentials`: a service-account key signs its own token requests.
pub(crate) struct GoogleCredentials {
    pub key: ServiceAccountKey,
    pub host: String,
}

#[async_trait]
impl TokenSource for GoogleCredentials {
    fn auth_type(&self) -> AuthType {
        AuthType::GoogleCredentials
    }

    async fn mint(&self, http: &reqwest::Client) -> Result<Minted, AuthError> {
        let id = self.key.id_token(http, &self.host).await?;
        let access = self.key.access_token(http, GCP_SCOPES).await;
        Ok(with_access(id, access))
    }
}

/// Application Default Credentials: who `google-id` is before it impersonates the service
/// account.
pub(crate) enum Adc {
    /// `gcloud auth application-default login`: a user's refresh token.
    AuthorizedUser {
        client_id: String,
        client_secret: SecretString,
        refresh_token: SecretString,
        token_uri: String,
        file: PathBuf,
    },
    ServiceAccount {
        key: ServiceAccountKey,
        file: PathBuf,
    },
    /// The Compute Engine metadata server's token for the machine's service account.
    Metadata { url: String },
}

impl std::fmt::Debug for Adc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Adc::AuthorizedUser { file, .. } => write!(f, "AuthorizedUser({})", file.display()),
            Adc::ServiceAccount { file, .. } => write!(f, "ServiceAccount({})", file.display()),
            Adc::Metadata { url } => write!(f, "Metadata({url})"),
        }
    }
}

impl Adc {
    /// Google's order: the file GOOGLE_APPLICATION_CREDENTIALS names, else gcloud's
    /// well-known file, else the metadata server (whose absence shows when the first token
    /// is asked for).
    pub fn find(env: &dyn Fn(&str) -> Option<String>) -> Result<Adc, AuthError> {
        let get = |k: &str| {
            env(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        if let Some(file) = get("GOOGLE_APPLICATION_CREDENTIALS") {
            let path = PathBuf::from(file);
            return Adc::read(&path, "GOOGLE_APPLICATION_CREDENTIALS");
        }
        // gcloud's configuration directory: CLOUDSDK_CONFIG, else %APPDATA%\gcloud on
        // Windows and ~/.config/gcloud elsewhere.
        let well_known = match get("CLOUDSDK_CONFIG") {
            Some(dir) => Some(PathBuf::from(dir)),
            None if cfg!(windows) => get("APPDATA").map(|a| PathBuf::from(a).join("gcloud")),
            None => get("HOME").map(|h| PathBuf::from(h).join(".config").join("gcloud")),
        }
        .map(|dir| dir.join("application_default_credentials.json"));
        if let Some(path) = well_known.filter(|p| p.is_file()) {
            return Adc::read(&path, "gcloud's application default credentials");
        }
        Ok(Adc::Metadata {
            url: format!(
                "{}{METADATA_TOKEN_PATH}",
                metadata_root(get("GCE_METADATA_HOST"))?
            ),
        })
    }

    fn read(path: &Path, named_by: &str) -> Result<Adc, AuthError> {
        let what = format!("{} ({named_by})", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| AuthError::AdcUnreadable {
            what: what.clone(),
            source: Arc::new(e),
        })?;
        // A JSON syntax error says where the text breaks off, never what it holds.
        let v: Value = serde_json::from_str(&text).map_err(|e| AuthError::AdcNotJson {
            what: what.clone(),
            source: Arc::new(e),
        })?;
        let what = format!("application default credentials {what}");
        let lacks = |field: &'static str| AuthError::AdcLacks {
            what: what.clone(),
            field,
        };
        match field(&v, "type") {
            Some("authorized_user") => {
                let need =
                    |k: &'static str| field(&v, k).map(str::to_string).ok_or_else(|| lacks(k));
                let token_uri = field(&v, "token_uri")
                    .unwrap_or(GOOGLE_TOKEN_URI)
                    .trim()
                    .to_string();
                super::check_endpoint(&token_uri, &format!("{what}: token_uri"))?;
                Ok(Adc::AuthorizedUser {
                    client_id: need("client_id")?,
                    client_secret: SecretString::from(need("client_secret")?),
                    refresh_token: SecretString::from(need("refresh_token")?),
                    token_uri,
                    file: path.to_path_buf(),
                })
            }
            Some("service_account") => Ok(Adc::ServiceAccount {
                key: ServiceAccountKey::from_json(&v, &what)?,
                file: path.to_path_buf(),
            }),
            Some(other) => Err(AuthError::AdcUnsupported {
                what,
                found: other.to_string(),
            }),
            None => Err(lacks("type")),
        }
    }

    /// An access token of who the credentials are, to call IAM Credentials with.
    async fn access_token(&self, http: &reqwest::Client) -> Result<Access, AuthError> {
        match self {
            Adc::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
                ..
            } => {
                let form = [
                    ("grant_type", "refresh_token"),
                    ("client_id", client_id.as_str()),
                    ("client_secret", client_secret.expose_secret()),
                    ("refresh_token", refresh_token.expose_secret()),
                ];
                let body = token_call(http.post(token_uri).form(&form), GOOGLE_TOKEN)
                    .await
                    .map_err(|e| AuthError::AdcRefresh {
                        source: Box::new(e),
                    })?;
                Access::from_oauth(&body, GOOGLE_TOKEN)
            }
            Adc::ServiceAccount { key, .. } => key.access_token(http, CLOUD_PLATFORM).await,
            Adc::Metadata { url } => {
                let req = http
                    .get(url)
                    .header("Metadata-Flavor", "Google")
                    .timeout(Duration::from_secs(10));
                let what = "the Google Compute Engine metadata server";
                let body = token_call(req, what).await.map_err(|e| AuthError::NoAdc {
                    source: Box::new(e),
                })?;
                Access::from_oauth(&body, what)
            }
        }
    }
}

/// `http://HOST/` of the metadata server: its well-known name, or GCE_METADATA_HOST as
/// Google's libraries read it (a host, with port and path if need be), which must be the
/// metadata server's own address or a loopback one: the server speaks plain http.
fn metadata_root(host: Option<String>) -> Result<String, SettingError> {
    let Some(host) = host else {
        return Ok(format!("http://{METADATA_HOST}/"));
    };
    let root = format!("http://{}/", host.trim_end_matches('/'));
    let well_known = reqwest::Url::parse(&root).is_ok_and(|u| {
        matches!(
            u.host_str(),
            Some("metadata.google.internal" | "169.254.169.254")
        )
    });
    if well_known {
        Ok(root)
    } else {
        super::check_endpoint(&root, "GCE_METADATA_HOST")
    }
}

/// `google-id`: Application Default Credentials impersonate a service account through the
/// IAM Credentials API.
pub(crate) struct GoogleId {
    pub service_account: String,
    pub host: String,
    pub adc: Adc,
    /// `https://iamcredentials.googleapis.com/`, or GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT;
    /// ending in `/`.
    pub iam: String,
}

impl std::fmt::Debug for GoogleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleId")
            .field("service_account", &self.service_account)
            .field("adc", &self.adc)
            .field("iam", &self.iam)
            .finish()
    }
}

/// The IAM Credentials endpoint: Google's, or GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT (the
/// Terraform Google provider's name for it, which may end in the API version `v1/`).
pub(crate) fn iam_endpoint(custom: Option<String>) -> Result<String, SettingError> {
    let root = match custom
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
    {
        Some(c) => super::check_endpoint(&c, "GOOGLE_IAM_CREDENTIALS_CUSTOM_ENDPOINT")?,
        None => IAM_CREDENTIALS.to_string(),
    };
    Ok(if root.ends_with("/v1/") {
        root
    } else {
        format!("{root}v1/")
    })
}

impl GoogleId {
    fn url(&self, verb: &str) -> Result<reqwest::Url, AuthError> {
        let mut url =
            reqwest::Url::parse(&self.iam).map_err(|source| AuthError::IamNotUrl { source })?;
        url.path_segments_mut()
            .map_err(|()| AuthError::IamNoPath)?
            .pop_if_empty()
            .extend([
                "projects",
                "-",
                "serviceAccounts",
                &format!("{}:{verb}", self.service_account),
            ]);
        Ok(url)
    }

    async fn iam_call(
        &self,
        http: &reqwest::Client,
        source: &Access,
        verb: &str,
        body: &Value,
    ) -> Result<Value, AuthError> {
        let req = http
            .post(self.url(verb)?)
            .bearer_auth(source.token.expose_secret())
            .json(body);
        token_call(req, IAM)
            .await
            .map_err(|e| AuthError::Impersonating {
                service_account: self.service_account.clone(),
                source: Box::new(e),
            })
    }

    async fn access_token(
        &self,
        http: &reqwest::Client,
        source: &Access,
    ) -> Result<Access, AuthError> {
        let scopes: Vec<&str> = GCP_SCOPES.split(' ').collect();
        let body = self
            .iam_call(
                http,
                source,
                "generateAccessToken",
                &json!({"scope": scopes, "lifetime": "3600s"}),
            )
            .await?;
        let token = field(&body, "accessToken").ok_or(AuthError::AnswerLacks {
            what: IAM,
            field: "accessToken",
        })?;
        Ok(Access {
            token: SecretString::from(token.to_string()),
            expires_at: body
                .get("expireTime")
                .and_then(parse_expiry)
                .map_or_else(|| Instant::now() + HOUR, instant_at),
        })
    }
}

#[async_trait]
impl TokenSource for GoogleId {
    fn auth_type(&self) -> AuthType {
        AuthType::GoogleId
    }

    async fn mint(&self, http: &reqwest::Client) -> Result<Minted, AuthError> {
        let source = self.adc.access_token(http).await?;
        let body = self
            .iam_call(
                http,
                &source,
                "generateIdToken",
                &json!({"audience": self.host, "includeEmail": true}),
            )
            .await?;
        let token = field(&body, "token").ok_or(AuthError::AnswerLacks {
            what: IAM,
            field: "token",
        })?;
        let id = Minted::bearer(token, jwt_expiry(token));
        let access = self.access_token(http, &source).await;
        Ok(with_access(id, access))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_token_expires_when_its_exp_claim_says() {
        let exp = jiff::Timestamp::now().as_second() + 600;
        let payload = URL_SAFE_NO_PAD.encode(json!({"exp": exp}).to_string());
        let left = jwt_expiry(&format!("h.{payload}.s")).saturating_duration_since(Instant::now());
        assert!(left > Duration::from_secs(590) && left <= Duration::from_secs(600));
        let left = jwt_expiry("not-a-jwt").saturating_duration_since(Instant::now());
        assert!(left > Duration::from_secs(3590));
    }

    #[test]
    fn endpoints() {
        assert_eq!(
            iam_endpoint(None).unwrap(),
            "https://iamcredentials.googleapis.com/v1/"
        );
        assert_eq!(
            iam_endpoint(Some("https://iam.example.com/v1/".into())).unwrap(),
            "https://iam.example.com/v1/"
        );
        assert_eq!(
            iam_endpoint(Some("http://127.0.0.1:9/_identity/google/iam".into())).unwrap(),
            "http://127.0.0.1:9/_identity/google/iam/v1/"
        );
        assert!(iam_endpoint(Some("http://iam.example.com".into())).is_err());
        assert_eq!(
            metadata_root(None).unwrap(),
            "http://metadata.google.internal/"
        );
        assert_eq!(
            metadata_root(Some("169.254.169.254".into())).unwrap(),
            "http://169.254.169.254/"
        );
        assert_eq!(
            metadata_root(Some("127.0.0.1:8/x".into())).unwrap(),
            "http://127.0.0.1:8/x/"
        );
        assert!(metadata_root(Some("metadata.example.com".into())).is_err());
        let id = GoogleId {
            service_account: "sa@p.iam.gserviceaccount.com".into(),
            host: "h".into(),
            adc: Adc::Metadata { url: "u".into() },
            iam: iam_endpoint(None).unwrap(),
        };
        assert_eq!(
            id.url("generateIdToken").unwrap().as_str(),
            "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateIdToken"
        );
    }

    #[test]
    fn pem_blocks() {
        let pem = "-----BEGIN PRIVATE KEY-----\nAAEC\nAw==\n-----END PRIVATE KEY-----\n";
        assert_eq!(pem_body(pem, "PRIVATE KEY").unwrap(), vec![0, 1, 2, 3]);
        assert!(pem_body(pem, "RSA PRIVATE KEY").is_none());
        assert!(
            pem_body(
                "-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----",
                "PRIVATE KEY"
            )
            .is_none()
        );
    }
}
