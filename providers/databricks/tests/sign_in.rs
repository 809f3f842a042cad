//! Signing in as people and machines do every day: the Databricks CLI's token cache, the
//! Azure CLI, an Azure service principal and a managed identity — against the local
//! workspace, with stand-in `databricks` and `az` executables on PATH and the identity
//! endpoints the local workspace serves.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use brickform_databricks::client::{AuthType, Client, ClientError, NoStore, Settings};
use brickform_emulator::{AZURE_TENANT, Emulator, EmulatorConfig, RunningEmulator};
use serde_json::Value;
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

const RESOURCE_ID: &str =
    "/subscriptions/0c0ffee0-sub/resourceGroups/rg/providers/Microsoft.Databricks/workspaces/ws";
const ME: &str = "/api/2.0/preview/scim/v2/Me";

/// A workspace that accepts only these tokens (and what its identity endpoints mint).
async fn workspace(tokens: &[&str]) -> RunningEmulator {
    Emulator::start(EmulatorConfig {
        tokens: Some(tokens.iter().map(|t| t.to_string()).collect()),
        ..EmulatorConfig::for_tests()
    })
    .await
    .unwrap()
}

async fn connect(settings: &Settings, env: &[(&str, String)]) -> Result<Client, ClientError> {
    let map: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let settings = Settings {
        retry_timeout: Some(Duration::from_secs(10)),
        ..settings.clone()
    };
    Client::connect(&settings, &move |k| map.get(k).cloned(), &NoStore).await
}

/// A stand-in tool: a shell script that appends its arguments to `calls` and runs `body`.
fn tool(dir: &Path, name: &str, body: &str) {
    let calls = dir.join(format!("{name}.calls"));
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\n{body}\n", calls.display()),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn calls(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(format!("{name}.calls")))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `date` in RFC 3339 `secs` from now, as the Databricks CLI prints `expiry`.
fn expiry_in(secs: i64) -> String {
    (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(secs)).to_string()
}

fn path_of(dir: &Path) -> String {
    format!("{}:/usr/bin:/bin", dir.display())
}

async fn log(emu: &RunningEmulator, token: &str, path: &str) -> Vec<Value> {
    let r: Value = reqwest::Client::new()
        .get(format!("{}/__emulator/requests", emu.url()))
        .query(&[("path", path)])
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["requests"].as_array().cloned().unwrap_or_default()
}

fn cli_answer(token: &str, expiry: &str) -> String {
    format!(
        "echo '{{\"access_token\": \"{token}\", \"token_type\": \"Bearer\", \"expiry\": \"{expiry}\"}}'"
    )
}

#[tokio::test]
async fn a_profile_written_by_databricks_auth_login_signs_in_through_the_cli() {
    let emu = workspace(&["cli-token", "admin"]).await;
    let dir = tempfile::tempdir().unwrap();
    tool(
        dir.path(),
        "databricks",
        &cli_answer("cli-token", &expiry_in(3600)),
    );
    // What `databricks auth login --host … --profile dev` writes.
    let cfg = dir.path().join(".databrickscfg");
    std::fs::write(
        &cfg,
        format!(
            "[dev]\nhost      = {}\nauth_type = databricks-cli\n",
            emu.url()
        ),
    )
    .unwrap();
    let env = [
        ("PATH", path_of(dir.path())),
        ("DATABRICKS_CONFIG_FILE", cfg.display().to_string()),
        ("DATABRICKS_CONFIG_PROFILE", "dev".to_string()),
    ];
    let c = connect(&Settings::default(), &env).await.unwrap();
    assert_eq!(c.credential_info().auth_type, AuthType::DatabricksCli);
    for _ in 0..3 {
        let me = c.get(ME, &[]).await.unwrap();
        assert!(me["userName"].is_string());
    }
    // One run of the CLI serves every call while its token is fresh, and names the profile
    // its token cache is keyed by.
    assert_eq!(
        calls(dir.path(), "databricks"),
        ["auth token --profile dev"]
    );
    assert!(!format!("{c:?}").contains("cli-token"));
}

#[tokio::test]
async fn a_cli_token_about_to_expire_is_asked_for_again() {
    let emu = workspace(&["cli-token"]).await;
    let dir = tempfile::tempdir().unwrap();
    // 30 s left is within the 40 s margin: stale at once, so each call asks again.
    tool(
        dir.path(),
        "databricks",
        &cli_answer("cli-token", &expiry_in(30)),
    );
    let settings = Settings {
        host: Some(emu.url().to_string()),
        auth_type: Some("databricks-cli".into()),
        ..Settings::default()
    };
    let c = connect(&settings, &[("PATH", path_of(dir.path()))])
        .await
        .unwrap();
    c.get(ME, &[]).await.unwrap();
    c.get(ME, &[]).await.unwrap();
    let ran = calls(dir.path(), "databricks");
    assert_eq!(ran.len(), 3, "connect and each call ran the CLI: {ran:?}");
    assert_eq!(ran[0], format!("auth token --host {}", emu.url()));
}

#[tokio::test]
async fn the_cli_is_tried_when_nothing_else_is_configured() {
    let emu = workspace(&["cli-token"]).await;
    let dir = tempfile::tempdir().unwrap();
    tool(
        dir.path(),
        "databricks",
        &cli_answer("cli-token", &expiry_in(3600)),
    );
    let env = [
        ("PATH", path_of(dir.path())),
        ("DATABRICKS_HOST", emu.url().to_string()),
    ];
    let c = connect(&Settings::default(), &env).await.unwrap();
    assert_eq!(c.credential_info().auth_type, AuthType::DatabricksCli);
    c.get(ME, &[]).await.unwrap();

    // Not signed in: the CLI's own words, once, and no token anywhere in them.
    tool(
        dir.path(),
        "databricks",
        "echo 'SECRET-ISH' ; echo 'Error: cache: databricks OAuth is not configured for this host. Try logging in again with `databricks auth login --host h` before retrying.' >&2; exit 1",
    );
    let e = connect(&Settings::default(), &env)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no credentials for") && e.contains("databricks OAuth is not configured"),
        "{e}"
    );
    assert!(!e.contains("SECRET"), "{e}");

    // Pinned, the failure is the CLI's.
    let pinned = Settings {
        auth_type: Some("databricks-cli".into()),
        ..Settings::default()
    };
    let e = connect(&pinned, &env).await.unwrap_err().to_string();
    assert!(
        e.starts_with("signing in with databricks-cli failed: `databricks auth token --host"),
        "{e}"
    );

    // No CLI on PATH.
    let bare = [
        ("PATH", "/nonexistent".to_string()),
        ("DATABRICKS_HOST", emu.url().to_string()),
    ];
    let e = connect(&pinned, &bare).await.unwrap_err().to_string();
    assert!(
        e.contains("no `databricks` executable is on PATH") && e.contains("DATABRICKS_CLI_PATH"),
        "{e}"
    );
    let e = connect(&Settings::default(), &bare)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no credentials for") && e.contains("azure-cli (`az login`)"),
        "{e}"
    );

    // databricks_cli_path names it.
    let named = [
        ("PATH", "/nonexistent".to_string()),
        ("DATABRICKS_HOST", emu.url().to_string()),
        (
            "DATABRICKS_CLI_PATH",
            dir.path().join("databricks").display().to_string(),
        ),
    ];
    tool(
        dir.path(),
        "databricks",
        &cli_answer("cli-token", &expiry_in(3600)),
    );
    let c = connect(&pinned, &named).await.unwrap();
    c.get(ME, &[]).await.unwrap();
}

#[tokio::test]
async fn a_profile_brickform_cannot_sign_in_with_is_named_with_its_keys() {
    let emu = workspace(&["t"]).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join(".databrickscfg");
    std::fs::write(
        &cfg,
        format!(
            "[basic]\nhost = {}\nusername = me\npassword = hunter2\n[browser]\nhost = {}\nauth_type = external-browser\n[commented]\nhost = {}\ntoken = t\nauth_type = pat ; a comment\n",
            emu.url(),
            emu.url(),
            emu.url()
        ),
    )
    .unwrap();
    let with = |profile: &str| {
        [
            ("PATH", "/nonexistent".to_string()),
            ("DATABRICKS_CONFIG_FILE", cfg.display().to_string()),
            ("DATABRICKS_CONFIG_PROFILE", profile.to_string()),
        ]
    };
    let e = connect(&Settings::default(), &with("basic"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("profile [basic]")
            && e.contains("has host, password, username")
            && e.contains("pat (token)")
            && e.contains("azure-msi"),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");
    let e = connect(&Settings::default(), &with("browser"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("auth_type \"external-browser\" is not supported")
            && e.contains("has auth_type, host"),
        "{e}"
    );
    // configparser keeps an inline comment in the value: said so.
    let e = connect(&Settings::default(), &with("commented"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"pat ; a comment\" is not supported") && e.contains("on a line of its own"),
        "{e}"
    );
}

/// A stand-in `az`: the token for whichever `--resource` it is asked for.
fn az(dir: &Path, databricks_token: &str, management_token: &str) {
    tool(
        dir,
        "az",
        &format!(
            r#"case "$*" in
  *"--resource 2ff814a6-3304-4ab8-85cb-cd0e6f879c1d"*) t={databricks_token} ;;
  *"--resource https://management.core.windows.net/"*) t={management_token} ;;
  *) echo "unknown resource" >&2; exit 2 ;;
esac
echo "{{\"accessToken\": \"$t\", \"expiresOn\": \"$(date -d '+1 hour' '+%Y-%m-%d %H:%M:%S.000000')\", \"subscription\": \"0c0ffee0-sub\", \"tenant\": \"{AZURE_TENANT}\", \"tokenType\": \"Bearer\"}}""#
        ),
    );
}

#[tokio::test]
async fn the_azure_cli_signs_in_to_an_azure_workspace() {
    let emu = workspace(&["az-databricks", "admin"]).await;
    let dir = tempfile::tempdir().unwrap();
    az(dir.path(), "az-databricks", "az-management");
    let settings = Settings {
        host: Some(emu.url().to_string()),
        azure_workspace_resource_id: Some(RESOURCE_ID.into()),
        ..Settings::default()
    };
    // Nothing pins it: on an Azure workspace, the Azure CLI comes first.
    let c = connect(&settings, &[("PATH", path_of(dir.path()))])
        .await
        .unwrap();
    assert_eq!(c.credential_info().auth_type, AuthType::AzureCli);
    c.get(ME, &[]).await.unwrap();
    let ran = calls(dir.path(), "az");
    assert_eq!(
        ran,
        [
            "account get-access-token --resource 2ff814a6-3304-4ab8-85cb-cd0e6f879c1d --output json --subscription 0c0ffee0-sub",
            "account get-access-token --resource https://management.core.windows.net/ --output json --subscription 0c0ffee0-sub",
        ]
    );
    let seen = log(&emu, "admin", ME).await;
    let azure = &seen.last().unwrap()["azure"];
    assert_eq!(azure["workspace_resource_id"], RESOURCE_ID);
    assert_eq!(
        azure["management_token"], false,
        "a management token came along (one the local workspace did not mint)"
    );

    // Not logged in: az's words.
    tool(
        dir.path(),
        "az",
        "echo \"ERROR: Please run 'az login' to setup account.\" >&2; exit 1",
    );
    let pinned = Settings {
        auth_type: Some("azure-cli".into()),
        ..settings.clone()
    };
    let e = connect(&pinned, &[("PATH", path_of(dir.path()))])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("signing in with azure-cli failed") && e.contains("Please run 'az login'"),
        "{e}"
    );
}

#[tokio::test]
async fn an_azure_service_principal_signs_in_with_its_client_secret() {
    // Client secrets the local workspace accepts are its tokens.
    let emu = workspace(&["sp-secret", "admin"]).await;
    let authority = format!("{}/_identity/azure/", emu.url());
    let env = [
        ("AZURE_AUTHORITY_HOST", authority.clone()),
        ("ARM_CLIENT_ID", "11111111-app".to_string()),
        ("ARM_CLIENT_SECRET", "sp-secret".to_string()),
        ("DATABRICKS_AZURE_RESOURCE_ID", RESOURCE_ID.to_string()),
    ];
    let settings = Settings {
        host: Some(emu.url().to_string()),
        ..Settings::default()
    };
    // The tenant is read from the workspace's login redirect.
    let c = connect(&settings, &env).await.unwrap();
    assert_eq!(c.credential_info().auth_type, AuthType::AzureClientSecret);
    c.get(ME, &[]).await.unwrap();
    let tokens = log(&emu, "admin", "/_identity/azure/.*").await;
    assert_eq!(tokens.len(), 2, "an API token and a management token");
    assert!(
        tokens.iter().all(|t| t["path"]
            .as_str()
            .unwrap()
            .starts_with(&format!("/_identity/azure/{AZURE_TENANT}/"))),
        "{tokens:?}"
    );
    assert!(
        !format!("{tokens:?}").contains("sp-secret"),
        "the log keeps no secret"
    );
    let seen = log(&emu, "admin", ME).await;
    assert_eq!(seen.last().unwrap()["azure"]["management_token"], true);
    assert_eq!(
        seen.last().unwrap()["azure"]["workspace_resource_id"],
        RESOURCE_ID
    );

    // A wrong secret: Entra ID's first line, never the secret.
    let mut wrong = env.to_vec();
    wrong[2].1 = "not-the-secret".into();
    let e = connect(&settings, &wrong).await.unwrap_err().to_string();
    assert!(
        e.contains("signing in with azure-client-secret failed")
            && e.contains("AADSTS7000215: Invalid client secret provided")
            && !e.contains("Trace ID")
            && !e.contains("not-the-secret"),
        "{e}"
    );
    // A tenant that is not the workspace's.
    let mut other = env.to_vec();
    other.push(("ARM_TENANT_ID", "00000000-other".into()));
    let e = connect(&settings, &other).await.unwrap_err().to_string();
    assert!(e.contains("Tenant '00000000-other' not found"), "{e}");
    // A token as well: two methods, the SDK's error.
    let both = Settings {
        token: Some("sp-secret".into()),
        ..settings.clone()
    };
    let e = connect(&both, &env).await.unwrap_err().to_string();
    assert!(
        e.contains("more than one authorization method configured: azure and pat"),
        "{e}"
    );
    // Entra ID over plain http elsewhere than loopback is refused before anything is sent.
    let mut far = env.to_vec();
    far[0].1 = "http://login.example.com/".into();
    let e = connect(&settings, &far).await.unwrap_err().to_string();
    assert!(
        e.contains("AZURE_AUTHORITY_HOST") && e.contains("https://"),
        "{e}"
    );
}

#[tokio::test]
async fn a_managed_identity_signs_in_through_the_metadata_service() {
    let emu = workspace(&["admin"]).await;
    let env = [
        (
            "AZURE_POD_IDENTITY_AUTHORITY_HOST",
            format!("{}/_identity/azure-imds", emu.url()),
        ),
        ("ARM_USE_MSI", "true".to_string()),
    ];
    let settings = Settings {
        host: Some(emu.url().to_string()),
        azure_workspace_resource_id: Some(RESOURCE_ID.into()),
        ..Settings::default()
    };
    let c = connect(&settings, &env).await.unwrap();
    assert_eq!(c.credential_info().auth_type, AuthType::AzureMsi);
    c.get(ME, &[]).await.unwrap();
    let asked = log(&emu, "admin", "/_identity/azure-imds/.*").await;
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        asked[0]["query"]
            .as_str()
            .unwrap()
            .contains("resource=2ff814a6-3304-4ab8-85cb-cd0e6f879c1d"),
        "{asked:?}"
    );
    let seen = log(&emu, "admin", ME).await;
    assert_eq!(seen.last().unwrap()["azure"]["management_token"], true);
}
