//! `brickform auth login|logout|status`: a personal access token kept in the OS keyring, the
//! last source in the credential order (settings > env > ~/.databrickscfg > keyring).

use crate::failure::{Failure, Outcome};
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use brickform_databricks::client::{
    Client, KeyringStore, NoStore, SecretStore, Settings, normalize_host,
};
use clap::Subcommand;

const SCIM_ME: &str = "/api/2.0/preview/scim/v2/Me";

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: AuthCommand,
}

#[derive(Subcommand)]
enum AuthCommand {
    /// Check a personal access token against a workspace and store it in the OS keyring.
    /// The token is read from standard input (hidden prompt on a terminal).
    Login {
        /// Workspace URL (default: DATABRICKS_HOST).
        #[arg(long)]
        host: Option<String>,
    },
    /// Remove the stored token of a workspace from the OS keyring.
    Logout {
        /// Workspace URL (default: DATABRICKS_HOST).
        #[arg(long)]
        host: Option<String>,
    },
    /// Show which credentials would be used, where they come from, and who they belong to.
    Status {
        /// Workspace URL (overrides DATABRICKS_HOST and profiles).
        #[arg(long)]
        host: Option<String>,
        /// Profile of ~/.databrickscfg.
        #[arg(long)]
        profile: Option<String>,
    },
}

pub async fn exec(args: Args) -> Outcome {
    let env = |k: &str| std::env::var(k).ok();
    let store = KeyringStore;
    let mut out = std::io::stdout();
    match args.command {
        AuthCommand::Login { host } => {
            let host = host_or_env(host, &env)?;
            let token = read_token(&host)?;
            let user = login(&host, &token, &store).await?;
            writeln!(
                out,
                "Logged in to {host} as {user}; the token is stored in the OS keyring."
            )?;
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Logout { host } => {
            let host = host_or_env(host, &env)?;
            let host = logout(&host, &store)?;
            writeln!(out, "Removed the stored token for {host}.")?;
            Ok(ExitCode::SUCCESS)
        }
        AuthCommand::Status { host, profile } => {
            let settings = Settings {
                host,
                profile,
                ..Settings::default()
            };
            let (text, ok) = status(&settings, &env, &store).await;
            write!(out, "{text}")?;
            if !ok {
                return Err(Failure::reported());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn host_or_env(
    host: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<String> {
    let raw = host
        .or_else(|| env("DATABRICKS_HOST"))
        .filter(|h| !h.trim().is_empty())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no workspace given: pass --host https://<workspace> or set DATABRICKS_HOST"
            )
        })?;
    Ok(normalize_host(&raw)?)
}

/// The token from standard input: a hidden prompt on a terminal, the first line of a pipe
/// otherwise (`echo "$TOKEN" | brickform auth login --host …`), so it never lands in shell
/// history or the process list as an argument would.
fn read_token(host: &str) -> anyhow::Result<String> {
    let token = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("Personal access token for {host}: "))?
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line
    };
    let token = token.trim().to_string();
    if token.is_empty() {
        anyhow::bail!("no token given on standard input");
    }
    Ok(token)
}

/// Checks `token` with SCIM Me against `host` and stores it; returns the user name.
async fn login(host: &str, token: &str, store: &dyn SecretStore) -> anyhow::Result<String> {
    let host = normalize_host(host)?;
    // Only this token and host: the check must not pass thanks to credentials from elsewhere.
    let settings = Settings {
        host: Some(host.clone()),
        token: Some(token.to_string()),
        auth_type: Some("pat".into()),
        retry_timeout: Some(Duration::from_secs(30)),
        ..Settings::default()
    };
    let client = Client::connect(&settings, &|_| None, &NoStore).await?;
    let me = client
        .get(SCIM_ME, &[])
        .await
        .map_err(|e| anyhow::anyhow!("the token was not accepted by {host}: {e}"))?;
    let user = user_name(&me);
    store
        .set(&host, token)
        .map_err(|e| anyhow::anyhow!("the token works but could not be stored: {e}"))?;
    Ok(user)
}

fn logout(host: &str, store: &dyn SecretStore) -> anyhow::Result<String> {
    let host = normalize_host(host)?;
    store
        .delete(&host)
        .map_err(|e| anyhow::anyhow!("could not remove the token for {host}: {e}"))?;
    Ok(host)
}

/// The status report and whether the credentials work.
async fn status(
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
    store: &dyn SecretStore,
) -> (String, bool) {
    let client = match Client::connect(settings, env, store).await {
        Ok(c) => c,
        Err(e) => return (format!("Not authenticated: {e}\n"), false),
    };
    let info = client.credential_info();
    let mut text = format!(
        "Host:        {} (from {})\nAuth:        {} (from {})\n",
        info.host,
        info.host_source,
        info.auth_type.as_str(),
        info.credential_source
    );
    match client.get(SCIM_ME, &[]).await {
        Ok(me) => {
            text.push_str(&format!("User:        {}\n", user_name(&me)));
            (text, true)
        }
        Err(e) => {
            text.push_str(&format!("Check:       failed: {e}\n"));
            (text, false)
        }
    }
}

fn user_name(me: &serde_json::Value) -> String {
    me.get("userName")
        .or_else(|| me.get("displayName"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("(unknown user)")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use brickform_databricks::client::MemoryStore;
    use brickform_emulator::{Emulator, EmulatorConfig};

    #[tokio::test]
    async fn login_status_logout() {
        let emu = Emulator::start(EmulatorConfig {
            tokens: Some(vec!["dapi-good".into()]),
            ..EmulatorConfig::for_tests()
        })
        .await
        .unwrap();
        let host = emu.url();
        let store = MemoryStore::new();

        let e = login(&host, "dapi-bad", &store)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("not accepted") && !e.contains("dapi-bad"), "{e}");
        assert_eq!(store.get(&host), None, "a rejected token is not stored");

        let user = login(&format!("{host}/"), "dapi-good", &store)
            .await
            .unwrap();
        assert_eq!(user, "local-user@brickform.local");
        assert_eq!(store.get(&host).as_deref(), Some("dapi-good"));

        let env_host = host.clone();
        let env = move |k: &str| (k == "DATABRICKS_HOST").then(|| env_host.clone());
        let (text, ok) = status(&Settings::default(), &env, &store).await;
        assert!(ok, "{text}");
        assert!(
            text.contains("env DATABRICKS_HOST") && text.contains("OS keyring"),
            "{text}"
        );
        assert!(
            text.contains("local-user@brickform.local") && !text.contains("dapi-good"),
            "{text}"
        );

        logout(&host, &store).unwrap();
        assert_eq!(store.get(&host), None);
        let (text, ok) = status(&Settings::default(), &env, &store).await;
        assert!(
            !ok && text.contains("Not authenticated") && text.contains("auth login"),
            "{text}"
        );
    }

    #[test]
    fn host_required_and_checked() {
        assert!(host_or_env(None, &|_| None).is_err());
        assert!(host_or_env(Some("http://example.com".into()), &|_| None).is_err());
        assert_eq!(
            host_or_env(None, &|_| Some("dbc-1.cloud.databricks.com/".into())).unwrap(),
            "https://dbc-1.cloud.databricks.com"
        );
    }
}
