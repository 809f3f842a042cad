//! `auth_type = "databricks-cli"`: the sign-in `databricks auth login` sets up (user to
//! machine OAuth). The CLI keeps the token and its refresh token in its own cache;
//! `databricks auth token` prints a valid access token, refreshing it when it has expired, so
//! brickform asks it again whenever the last token is about to expire.

use std::path::PathBuf;

use async_trait::async_trait;

use super::AuthType;
use super::command::run_json;
use super::error::AuthError;
use super::token::{Minted, TokenSource, field, instant_at, parse_expiry};

pub(crate) struct DatabricksCli {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl DatabricksCli {
    /// `databricks auth token --profile P` when the configuration names a profile (what
    /// `databricks auth login --profile P` wrote), else `--host H`.
    pub fn new(program: PathBuf, profile: Option<&str>, host: &str) -> DatabricksCli {
        let mut args = vec!["auth".to_string(), "token".to_string()];
        match profile {
            Some(p) => args.extend(["--profile".to_string(), p.to_string()]),
            None => args.extend(["--host".to_string(), host.to_string()]),
        }
        DatabricksCli { program, args }
    }
}

#[async_trait]
impl TokenSource for DatabricksCli {
    fn auth_type(&self) -> AuthType {
        AuthType::DatabricksCli
    }

    async fn mint(&self, _http: &reqwest::Client) -> Result<Minted, AuthError> {
        let lacks = |lacks| AuthError::ToolOutput {
            tool: "`databricks auth token`",
            lacks,
        };
        let out = run_json(&self.program, &self.args).await?;
        let token = field(&out, "access_token").ok_or_else(|| lacks("access_token"))?;
        let expiry = out
            .get("expiry")
            .and_then(parse_expiry)
            .ok_or_else(|| lacks("expiry it could be read by"))?;
        let kind = field(&out, "token_type").unwrap_or("Bearer");
        let mut minted = Minted::bearer(token, instant_at(expiry));
        if !kind.eq_ignore_ascii_case("bearer") {
            minted.authorization = secrecy::SecretString::from(format!("{kind} {token}"));
        }
        Ok(minted)
    }
}
