//! The binary signs in as people do every day: a profile written by `databricks auth login`
//! (a stand-in `databricks` on PATH hands out the token), and an Azure service principal
//! from `ARM_*` variables (the local workspace serves the Entra ID stand-in) — apply, an
//! empty plan, `auth status` and destroy.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const CATALOG: &str = r#"
resource "databricks_catalog" "c" {
  name    = "signed_in"
  comment = "made by whoever signed in"
}
"#;

fn stand_in(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn a_databricks_cli_profile_applies_plans_and_destroys() {
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &["--token", "u2m-token"]);
    let tools = tempfile::tempdir().unwrap();
    stand_in(
        tools.path(),
        "databricks",
        r#"echo "{\"access_token\": \"u2m-token\", \"token_type\": \"Bearer\", \"expiry\": \"$(date -u -d '+1 hour' '+%Y-%m-%dT%H:%M:%SZ')\"}""#,
    );
    let cfg = tools.path().join("databrickscfg");
    std::fs::write(
        &cfg,
        format!("[dev]\nhost = {}\nauth_type = databricks-cli\n", serve.url),
    )
    .unwrap();
    let dir = config(&[(
        "main.bf.hcl",
        &format!(
            "provider \"databricks\" {{\n  profile     = \"dev\"\n  config_file = \"{}\"\n}}\n{CATALOG}",
            cfg.display()
        ),
    )]);
    let path = path_with(tools.path());
    let env = [("PATH", path.as_str())];
    let out = run_ok(dir.path(), &["apply", "--auto-approve"], &env);
    assert!(out.contains("1 added"), "{out}");
    let (code, out, err) = run(dir.path(), &["plan", "--detailed-exitcode"], &env);
    assert_eq!(code, 0, "{out}{err}");
    let cfg_env = cfg.display().to_string();
    let status = run_ok(
        dir.path(),
        &["auth", "status", "--profile", "dev"],
        &[
            ("PATH", path.as_str()),
            ("DATABRICKS_CONFIG_FILE", &cfg_env),
        ],
    );
    assert!(
        status.contains("Auth:        databricks-cli")
            && status.contains("User:")
            && !status.contains("u2m-token"),
        "{status}"
    );
    let mut held = 0;
    for entry in walk(&dir.path().join(".brickform")) {
        let text = std::fs::read(&entry).unwrap();
        held += 1;
        assert!(
            !String::from_utf8_lossy(&text).contains("u2m-token"),
            "{} holds the token",
            entry.display()
        );
    }
    assert!(held > 0, "state was written");

    // Signed out: the CLI's words, and nothing changes.
    stand_in(
        tools.path(),
        "databricks",
        "echo 'Error: refresh token is invalid: run databricks auth login --profile dev' >&2; exit 1",
    );
    let (code, out, err) = run(dir.path(), &["plan"], &env);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("signing in with databricks-cli failed")
            && err.contains("run databricks auth login --profile dev"),
        "{err}"
    );
    stand_in(
        tools.path(),
        "databricks",
        r#"echo "{\"access_token\": \"u2m-token\", \"token_type\": \"Bearer\", \"expiry\": \"$(date -u -d '+1 hour' '+%Y-%m-%dT%H:%M:%SZ')\"}""#,
    );
    let out = run_ok(dir.path(), &["destroy", "--auto-approve"], &env);
    assert!(out.contains("1 destroyed"), "{out}");
    assert_eq!(objects(&serve.dump()), Vec::<String>::new());
}

#[test]
fn an_azure_service_principal_from_arm_variables_applies_and_destroys() {
    let data = tempfile::tempdir().unwrap();
    // The workspace's client secrets are its tokens.
    let serve = Serve::start(data.path(), &["--token", "sp-secret"]);
    let dir = config(&[(
        "main.bf.hcl",
        &format!(
            "provider \"databricks\" {{\n  host                        = \"{}\"\n  azure_workspace_resource_id = \"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Databricks/workspaces/ws\"\n}}\n{CATALOG}",
            serve.url
        ),
    )]);
    let authority = format!("{}/_identity/azure/", serve.url);
    let env = [
        ("ARM_CLIENT_ID", "11111111-app"),
        ("ARM_CLIENT_SECRET", "sp-secret"),
        ("AZURE_AUTHORITY_HOST", authority.as_str()),
    ];
    let out = run_ok(dir.path(), &["apply", "--auto-approve"], &env);
    assert!(out.contains("1 added"), "{out}");
    let (code, out, err) = run(dir.path(), &["plan", "--detailed-exitcode"], &env);
    assert_eq!(code, 0, "{out}{err}");
    let out = run_ok(dir.path(), &["destroy", "--auto-approve"], &env);
    assert!(out.contains("1 destroyed"), "{out}");
    // A wrong secret: Entra ID's refusal, never the secret.
    let wrong = [
        ("ARM_CLIENT_ID", "11111111-app"),
        ("ARM_CLIENT_SECRET", "wrong-secret-value"),
        ("AZURE_AUTHORITY_HOST", authority.as_str()),
    ];
    let (code, out, err) = run(dir.path(), &["plan"], &wrong);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("AADSTS7000215") && !err.contains("wrong-secret-value"),
        "{err}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
