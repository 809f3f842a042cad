//! Errors of signing in: [`AuthError`] when a sign-in method cannot hand out a token,
//! [`SignInError`] when that happened to a chosen method (the form the client's errors take
//! it in), and [`SettingError`] for a sign-in setting that cannot be used at all.
//!
//! None of them holds a token, a client secret or a key, so deriving `Debug` shows nothing
//! secret: they name settings, files, commands and endpoints, and keep what a tool wrote on
//! standard error or what an endpoint said when it refused, never what a tool printed on
//! standard output (it holds the token) nor a credentials file's content. The causes they
//! wrap (I/O, JSON, HTTP) say what went wrong and where, not what was read or sent.
//!
//! Each message says its cause as well (the client's messages are one line for the user); the
//! cause is also the error's `source`. The causes are behind `Arc` because the client's
//! errors are `Clone` and theirs are not.

use std::sync::Arc;

use super::AuthType;

/// A sign-in setting that cannot be used: an endpoint that an environment variable or a
/// credentials file sets, or an Azure cloud brickform does not know. Found before any token
/// is asked for.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SettingError {
    #[error("{what} {raw:?} is not a URL ({source})")]
    NotUrl {
        what: String,
        raw: String,
        #[source]
        source: url::ParseError,
    },
    /// Plain http to a host that is not a loopback one, another scheme, credentials or a
    /// query in the URL: tokens would travel in clear text or somewhere unexpected.
    #[error(
        "{what} {raw:?} must be an https:// URL (plain http only on a loopback host), without credentials or query"
    )]
    Insecure { what: String, raw: String },
    #[error(
        "azure_environment {name:?} is not an Azure cloud brickform knows: use PUBLIC, USGOVERNMENT or CHINA"
    )]
    UnknownCloud { name: String },
}

/// Why a sign-in method could not hand out a token.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AuthError {
    // A sign-in tool (`databricks auth token`, `az account get-access-token`).
    /// The tool could not be run, failed or did not finish. `said` is the end of what it
    /// wrote on standard error (empty when it wrote nothing).
    #[error("{command} {status}{}", after_colon(.said))]
    CommandFailed {
        /// The command as shown: the program's name and its arguments, which name a
        /// profile, a host or a resource, never a secret.
        command: String,
        /// "exited with 3", "did not finish within 120s", "cannot run it: …".
        status: String,
        said: String,
    },
    /// The tool's standard output is not JSON. The cause says where the JSON breaks off,
    /// never what was printed.
    #[error("{command} printed something that is not JSON ({source})")]
    CommandNotJson {
        command: String,
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// The tool's JSON lacks what brickform needs (`lacks`: "access_token", "expiry it
    /// could be read by").
    #[error("{tool} printed no {lacks}")]
    ToolOutput {
        tool: &'static str,
        lacks: &'static str,
    },

    // A token endpoint: Microsoft Entra ID, a metadata server, Google's OAuth and IAM.
    /// The request could not be cloned to be sent again (a streamed body): not expected for
    /// the requests brickform builds.
    #[error("{what} could not be asked again")]
    NotRepeatable { what: &'static str },
    #[error("{what} could not be reached: {source}")]
    Unreachable {
        what: &'static str,
        #[source]
        source: Arc<reqwest::Error>,
    },
    /// The answer broke off before its end.
    #[error("{what}: {source}")]
    AnswerUnread {
        what: &'static str,
        #[source]
        source: Arc<reqwest::Error>,
    },
    /// The endpoint (a metadata server, Entra ID, Google) refused: its HTTP status and what
    /// it said, in one line.
    #[error("{what} refused the request (HTTP {status}): {said}")]
    Refused {
        what: &'static str,
        status: u16,
        said: String,
    },
    #[error("{what} answered with something that is not JSON ({source})")]
    AnswerNotJson {
        what: &'static str,
        #[source]
        source: Arc<serde_json::Error>,
    },
    #[error("{what} answered without {field}")]
    AnswerLacks {
        what: &'static str,
        field: &'static str,
    },

    // Azure: the workspace's tenant.
    /// The HTTP client that asks the workspace for its tenant could not be made.
    #[error(transparent)]
    HttpClient(Arc<reqwest::Error>),
    #[error("cannot read the tenant from {url}: {source}")]
    TenantUnreadable {
        url: String,
        #[source]
        source: Arc<reqwest::Error>,
    },
    #[error(
        "{url} did not say which Microsoft Entra ID tenant the workspace is in: set azure_tenant_id (ARM_TENANT_ID)"
    )]
    NoTenant { url: String },

    // Google: `google_credentials`, a service-account key. `what` names the setting and where
    // it came from, or the key file, never the value (it may be the key itself).
    /// The message has the I/O error's kind only, as it always had.
    #[error("{what}: the key file cannot be read ({})", .source.kind())]
    KeyFileUnreadable {
        what: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("{what} is neither a file that exists nor a service-account key's JSON")]
    NotAKey { what: String },
    /// The message has the line and column only, as it always had.
    #[error("{what} is not valid JSON (line {}, column {})", .source.line(), .source.column())]
    KeyNotJson {
        what: String,
        #[source]
        source: Arc<serde_json::Error>,
    },
    #[error(
        "{what} is a {found:?} credential; google-credentials signs in with a service-account key (type \"service_account\")"
    )]
    NotServiceAccount { what: String, found: String },
    #[error(
        "{what} has no type; google-credentials signs in with a service-account key (type \"service_account\")"
    )]
    KeyUntyped { what: String },
    #[error("{what} has no {field}")]
    KeyLacks { what: String, field: &'static str },
    #[error("{what}: private_key is not a PEM \"PRIVATE KEY\" (PKCS#8) block")]
    NotPem { what: String },
    /// The cause is the reason the crypto library gives ("InvalidEncoding"), not the key.
    #[error("{what}: private_key is not an RSA key in PKCS#8 form")]
    NotRsa {
        what: String,
        #[source]
        source: aws_lc_rs::error::KeyRejected,
    },
    #[error("the service-account key could not sign a token request")]
    CannotSign {
        #[source]
        source: aws_lc_rs::error::Unspecified,
    },

    // Google: Application Default Credentials. `what` names the file and what pointed to it.
    #[error("application default credentials {what} cannot be read ({})", .source.kind())]
    AdcUnreadable {
        what: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error(
        "application default credentials {what} are not valid JSON (line {}, column {})",
        .source.line(),
        .source.column()
    )]
    AdcNotJson {
        what: String,
        #[source]
        source: Arc<serde_json::Error>,
    },
    #[error("{what} have no {field}")]
    AdcLacks { what: String, field: &'static str },
    #[error(
        "{what} are of type {found:?}, which brickform does not sign in with: use `gcloud auth application-default login` (type \"authorized_user\") or a service-account key (type \"service_account\")"
    )]
    AdcUnsupported { what: String, found: String },
    /// Google's token endpoint refused a user's refresh token.
    #[error("{source} (running `gcloud auth application-default login` may help)")]
    AdcRefresh {
        #[source]
        source: Box<AuthError>,
    },
    /// No credentials file, and the metadata server did not hand out a token.
    #[error(
        "no application default credentials: {source}; outside Google Cloud run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"
    )]
    NoAdc {
        #[source]
        source: Box<AuthError>,
    },

    // Google: impersonating a service account through IAM Credentials.
    #[error("the IAM Credentials endpoint is not a URL ({source})")]
    IamNotUrl {
        #[source]
        source: url::ParseError,
    },
    #[error("the IAM Credentials endpoint is not a URL with a path")]
    IamNoPath,
    #[error("{source} (impersonating {service_account})")]
    Impersonating {
        service_account: String,
        #[source]
        source: Box<AuthError>,
    },

    /// An endpoint a credentials file sets (its `token_uri`) that cannot be used.
    #[error(transparent)]
    Setting(#[from] SettingError),
}

/// `: said`, or nothing when the tool said nothing.
fn after_colon(said: &str) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!(": {said}")
    }
}

/// A chosen sign-in method that could not hand out a token: the method, and why. The one form
/// the client's errors take a sign-in failure in (`From` impls for `ClientError` and
/// `ApiError`).
#[derive(Debug, Clone, thiserror::Error)]
#[error("signing in with {} failed: {source}", .auth_type.as_str())]
pub struct SignInError {
    pub auth_type: AuthType,
    #[source]
    pub source: AuthError,
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;

    #[test]
    fn messages_keep_their_wording_and_name_their_cause() {
        let failed = |said: &str| AuthError::CommandFailed {
            command: "`az account get-access-token`".into(),
            status: "exited with 1".into(),
            said: said.into(),
        };
        assert_eq!(
            failed("").to_string(),
            "`az account get-access-token` exited with 1"
        );
        assert_eq!(
            failed("run az login").to_string(),
            "`az account get-access-token` exited with 1: run az login"
        );

        let refused = AuthError::Refused {
            what: "the Google Compute Engine metadata server",
            status: 404,
            said: "not found".into(),
        };
        let e = SignInError {
            auth_type: AuthType::GoogleId,
            source: AuthError::NoAdc {
                source: Box::new(refused),
            },
        };
        assert_eq!(
            e.to_string(),
            "signing in with google-id failed: no application default credentials: the Google Compute Engine metadata server refused the request (HTTP 404): not found; outside Google Cloud run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"
        );
        let mut causes = 0;
        let mut cause = e.source();
        while let Some(c) = cause {
            causes += 1;
            cause = c.source();
        }
        assert_eq!(causes, 2, "the metadata server's refusal under NoAdc");
    }

    #[test]
    fn a_key_that_is_not_json_is_not_repeated() {
        let text = r#"{"private_key": "-----BEGIN PRIVATE KEY-----SECRET"#;
        let Err(json) = serde_json::from_str::<serde_json::Value>(text) else {
            panic!("not JSON");
        };
        let e = AuthError::KeyNotJson {
            what: "google_credentials (from env GOOGLE_CREDENTIALS)".into(),
            source: Arc::new(json),
        };
        assert!(e.to_string().starts_with(
            "google_credentials (from env GOOGLE_CREDENTIALS) is not valid JSON (line 1, column "
        ));
        let cause = e.source().map(ToString::to_string).unwrap_or_default();
        for shown in [e.to_string(), format!("{e:?}"), cause] {
            assert!(!shown.contains("SECRET"), "{shown}");
        }
    }
}
