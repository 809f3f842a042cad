//! Tokens that expire: the OAuth M2M token, and what every other sign-in method hands out
//! (the Databricks CLI, the Azure CLI, Microsoft Entra ID, the cloud's metadata service), with
//! the moment to ask again.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use secrecy::SecretString;

use super::AuthType;
use super::error::{AuthError, SignInError};

/// An OAuth access token with its expiry.
pub(crate) struct CachedToken {
    pub token: SecretString,
    pub expires_at: Instant,
}

/// Tokens count as expired 40 s early (as in the SDK) so a request never starts with a token
/// that dies in flight.
const EARLY: Duration = Duration::from_secs(40);

impl CachedToken {
    pub fn fresh(&self) -> bool {
        Instant::now() + EARLY < self.expires_at
    }
}

impl std::fmt::Debug for CachedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedToken")
            .field("token", &"[REDACTED]")
            .finish()
    }
}

/// Parses a token endpoint answer: `{access_token, token_type, expires_in}`.
pub(crate) fn parse_token(
    body: &serde_json::Value,
) -> Result<CachedToken, super::super::errors::ClientError> {
    let token = body
        .get("access_token")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            super::super::errors::ClientError::OAuth(
                "the token endpoint answered without access_token".into(),
            )
        })?;
    Ok(CachedToken {
        token: SecretString::from(token.to_string()),
        expires_at: expires_in(body),
    })
}

/// `expires_in` of a token answer (a number, or a string as Microsoft Entra ID writes it).
/// Without it, an hour (the usual lifetime); a 401 refreshes early if that guess is wrong.
pub(crate) fn expires_in(body: &serde_json::Value) -> Instant {
    let secs = body
        .get("expires_in")
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        })
        .unwrap_or(3600);
    Instant::now() + Duration::from_secs(secs)
}

/// What a refreshable sign-in method produced: the headers of API calls, and until when.
pub(crate) struct Minted {
    /// The `Authorization` value (`Bearer …`).
    pub authorization: SecretString,
    /// Headers some clouds want beside it: Azure's management token and workspace resource
    /// id, Google's service-account access token.
    pub extra: Vec<(&'static str, SecretString)>,
    pub expires_at: Instant,
}

impl Minted {
    pub fn bearer(token: &str, expires_at: Instant) -> Minted {
        Minted {
            authorization: SecretString::from(format!("Bearer {token}")),
            extra: Vec::new(),
            expires_at,
        }
    }

    pub fn fresh(&self) -> bool {
        Instant::now() + EARLY < self.expires_at
    }
}

impl std::fmt::Debug for Minted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Minted")
            .field("authorization", &"[REDACTED]")
            .field(
                "extra",
                &self.extra.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A sign-in method that hands out tokens which expire: asked again when its last token is
/// about to. Errors are one line for the user; they never hold a token.
#[async_trait]
pub(crate) trait TokenSource: Send + Sync {
    fn auth_type(&self) -> AuthType;
    async fn mint(&self, http: &reqwest::Client) -> Result<Minted, AuthError>;

    /// [`TokenSource::mint`] for a method that was chosen: its failure names the method.
    async fn sign_in(&self, http: &reqwest::Client) -> Result<Minted, SignInError> {
        self.mint(http).await.map_err(|source| SignInError {
            auth_type: self.auth_type(),
            source,
        })
    }
}

impl std::fmt::Debug for dyn TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TokenSource({})", self.auth_type().as_str())
    }
}

/// The `Instant` of a wall-clock moment (tokens state their expiry as a date).
pub(crate) fn instant_at(at: jiff::Timestamp) -> Instant {
    let now = jiff::Timestamp::try_from(SystemTime::now()).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let left = at.duration_since(now);
    let left = Duration::try_from(left).unwrap_or(Duration::ZERO);
    Instant::now() + left
}

/// An expiry as the CLIs print it: RFC 3339 with an offset (the Databricks CLI), seconds
/// since the epoch, or a local date and time without a zone (`2026-12-02 10:20:30.123456`,
/// the Azure CLI's `expiresOn`).
pub(crate) fn parse_expiry(raw: &serde_json::Value) -> Option<jiff::Timestamp> {
    if let Some(secs) = raw
        .as_i64()
        .or_else(|| raw.as_str().and_then(|s| s.trim().parse::<i64>().ok()))
    {
        return jiff::Timestamp::from_second(secs).ok();
    }
    let text = raw.as_str()?.trim();
    if let Ok(ts) = text.parse::<jiff::Timestamp>() {
        return Some(ts);
    }
    let civil: jiff::civil::DateTime = text.replacen(' ', "T", 1).parse().ok()?;
    jiff::tz::TimeZone::system().to_timestamp(civil).ok()
}

/// A request to a token endpoint (Entra ID, a metadata service, Google's): its JSON answer,
/// or a one-line error from what the endpoint said (`error_description` as OAuth servers
/// write it). Sent again once after a server error, throttling or a lost answer: asking for
/// a token changes nothing.
pub(crate) async fn token_call(
    req: reqwest::RequestBuilder,
    what: &'static str,
) -> Result<serde_json::Value, AuthError> {
    let mut pending = Some(req);
    let mut attempt = 0;
    loop {
        let Some(req) = pending.take() else {
            return Err(AuthError::NotRepeatable { what });
        };
        let again = req.try_clone();
        attempt += 1;
        let last = attempt >= 2 || again.is_none();
        match req.send().await {
            Ok(resp) => {
                let status = resp.status();
                let body = resp.bytes().await.map_err(|e| AuthError::AnswerUnread {
                    what,
                    source: Arc::new(e),
                })?;
                if status.is_success() {
                    return serde_json::from_slice(&body).map_err(|e| AuthError::AnswerNotJson {
                        what,
                        source: Arc::new(e),
                    });
                }
                if !last && (status.is_server_error() || status.as_u16() == 429) {
                    pending = again;
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
                return Err(AuthError::Refused {
                    what,
                    status: status.as_u16(),
                    said: said(&body),
                });
            }
            Err(e) if !last => {
                tracing::debug!(error = %e, "token request failed; asking once more");
                pending = again;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => {
                return Err(AuthError::Unreachable {
                    what,
                    source: Arc::new(e),
                });
            }
        }
    }
}

/// What a refusing endpoint said, in one line: `error_description` (its first line: Entra
/// ID appends trace ids), `error.message` (Google), `error`, or the start of the text.
fn said(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let parsed: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let line = parsed.as_ref().and_then(|v| {
        field(v, "error_description")
            .or_else(|| v.get("error").and_then(|e| field(e, "message")))
            .or_else(|| field(v, "error"))
            .or_else(|| field(v, "message"))
            .map(str::to_string)
    });
    let line = line.unwrap_or_else(|| text.chars().take(200).collect());
    line.lines().next().unwrap_or_default().trim().to_string()
}

/// A JSON field as a string, for messages about what a tool printed.
pub(crate) fn field<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_expire_40s_early() {
        let t = parse_token(&json!({"access_token": "a", "expires_in": 30})).unwrap();
        assert!(!t.fresh(), "a token with 30 s left is already stale");
        let t = parse_token(&json!({"access_token": "tok-SECRET", "expires_in": "3600"})).unwrap();
        assert!(t.fresh());
        assert!(!format!("{t:?}").contains("SECRET"));
        assert!(parse_token(&json!({"token_type": "Bearer"})).is_err());
        let m = Minted::bearer("tok-SECRET", Instant::now() + Duration::from_secs(30));
        assert!(!m.fresh());
        assert!(!format!("{m:?}").contains("SECRET"));
    }

    #[test]
    fn expiries_as_the_clis_print_them() {
        let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(600);
        let rfc = soon.to_string();
        let at = parse_expiry(&json!(rfc)).unwrap();
        assert_eq!(at.as_second(), soon.as_second());
        let with_offset = "2030-01-02T03:04:05.123456789+01:00";
        assert_eq!(
            parse_expiry(&json!(with_offset)).unwrap().to_string(),
            "2030-01-02T02:04:05.123456789Z"
        );
        assert_eq!(
            parse_expiry(&json!(1_900_000_000)).unwrap().as_second(),
            1_900_000_000
        );
        assert_eq!(
            parse_expiry(&json!("1900000000")).unwrap().as_second(),
            1_900_000_000
        );
        let local = jiff::tz::TimeZone::system()
            .to_datetime(soon)
            .strftime("%Y-%m-%d %H:%M:%S.%f")
            .to_string();
        assert_eq!(
            parse_expiry(&json!(local)).unwrap().as_second(),
            soon.as_second()
        );
        assert!(parse_expiry(&json!("tomorrow")).is_none());
        assert!(parse_expiry(&json!(null)).is_none());
        let left = instant_at(soon).saturating_duration_since(Instant::now());
        assert!(left > Duration::from_secs(590) && left <= Duration::from_secs(600));
        let past = instant_at(jiff::Timestamp::UNIX_EPOCH);
        assert!(past <= Instant::now());
    }

    #[test]
    fn refusals_say_what_the_endpoint_said_in_one_line() {
        let aad = br#"{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided.\r\nTrace ID: 1"}"#;
        assert_eq!(said(aad), "AADSTS7000215: Invalid client secret provided.");
        let google = br#"{"error":{"code":403,"message":"Permission denied on iam.serviceAccounts.getOpenIdToken"}}"#;
        assert_eq!(
            said(google),
            "Permission denied on iam.serviceAccounts.getOpenIdToken"
        );
        assert_eq!(said(br#"{"error":"invalid_grant"}"#), "invalid_grant");
        assert_eq!(said(b"404 page not found\nmore"), "404 page not found");
    }
}
