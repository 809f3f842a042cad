//! Sensitive values (a connection password, a secret's value, the provider token) never
//! appear in state files, saved plans, debug logs, or the output of any command; and the
//! workspace never returns a connection's password.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, every_kind, run};
use std::path::Path;

const PASSWORD: &str = "Pg-pa55word-e2e-7781";
const API_KEY: &str = "sk-live-e2e-0f3c9a61";
const TOKEN: &str = "dapi-e2e-token-5c2b";
const NEW_PASSWORD: &str = "Pg-rotated-e2e-9902";

/// Fails if any sensitive value is in `text`.
fn clean(what: &str, text: &str) {
    for s in [PASSWORD, API_KEY, TOKEN, NEW_PASSWORD] {
        assert!(
            !text.contains(s),
            "{what} contains the sensitive value {s:?}:\n{text}"
        );
    }
}

fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn sensitive_values_never_reach_state_plans_logs_or_output() {
    // The token is given as a provider argument from a sensitive variable, the others
    // through variables too: every path a secret can take into brickform.
    let text = every_kind("sec").replace(
        "provider \"databricks\" {\n  host = var.host\n}",
        "variable \"token\" {\n  type      = string\n  sensitive = true\n}\n\nprovider \"databricks\" {\n  host  = var.host\n  token = var.token\n}",
    ) + "\noutput \"password\" {\n  value     = var.db_password\n  sensitive = true\n}\n";
    let dir = config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--token", TOKEN]);
    let host = format!("host={}", serve.url);
    let pw = format!("db_password={PASSWORD}");
    let new_pw = format!("db_password={NEW_PASSWORD}");
    let envs = [("BRICKFORM_LOG", "debug")];
    let var_args = |pw: &str| -> Vec<String> {
        vec![
            "--var".into(),
            host.clone(),
            "--var".into(),
            pw.to_string(),
            "--var".into(),
            format!("api_key={API_KEY}"),
            "--var".into(),
            format!("token={TOKEN}"),
        ]
    };
    let step = |args: &[&str], pw: &str, expect: i32| {
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        if !matches!(args[0], "show" | "output" | "state") {
            a.extend(var_args(pw));
        }
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, out, err) = run(d, &a, &envs);
        assert_eq!(code, expect, "brickform {args:?}\n{out}\n{err}");
        clean(&format!("stdout of {args:?}"), &out);
        clean(&format!("stderr (BRICKFORM_LOG=debug) of {args:?}"), &err);
        (out, err)
    };

    let create = d.join("create.plan").display().to_string();
    let rotate = d.join("rotate.plan").display().to_string();
    let (out, _) = step(&["plan", "--out", &create], &pw, 0);
    assert!(out.contains("(sensitive value)"), "{out}");
    step(&["plan", "--json"], &pw, 0);
    step(&["show", &create], &pw, 0);
    step(&["show", "--json", &create], &pw, 0);
    let (out, err) = step(&["apply", &create], &pw, 0);
    assert!(out.contains("Apply complete!"), "{out}");
    assert!(
        err.contains("DEBUG") || err.contains("debug"),
        "BRICKFORM_LOG=debug gave no log to scan:\n{err}"
    );
    step(&["plan", "--detailed-exitcode"], &pw, 0);
    // A changed password is noticed through its fingerprint, still without showing it.
    let (out, _) = step(
        &["plan", "--detailed-exitcode", "--out", &rotate],
        &new_pw,
        2,
    );
    assert!(
        out.contains("# databricks_connection.pg will be updated in-place"),
        "{out}"
    );
    step(&["apply", "--auto-approve"], &new_pw, 0);
    step(&["show"], &new_pw, 0);
    step(&["show", "--json"], &new_pw, 0);
    step(&["output"], &new_pw, 0);
    step(&["output", "--json"], &new_pw, 0);
    step(&["state", "pull"], &new_pw, 0);
    step(&["state", "show", "databricks_secret.k"], &new_pw, 0);
    step(&["state", "show", "databricks_connection.pg"], &new_pw, 0);

    // Every file brickform wrote: state, its backup and log, and the saved plans.
    let mut scanned = 0;
    for p in files_under(&d.join(".brickform/state"))
        .into_iter()
        .chain([d.join("create.plan"), d.join("rotate.plan")])
    {
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        clean(&p.display().to_string(), &text);
        scanned += 1;
    }
    assert!(scanned >= 3, "nothing to scan");

    // The workspace keeps the password (it is the service), but never returns it.
    let (s, conn) = serve.call("GET", "/api/2.1/unity-catalog/connections/sec_pg", None);
    assert_eq!(s, 200, "{conn}");
    clean("GET connection", &conn.to_string());
    assert!(conn["options"].get("password").is_none(), "{conn}");
    // Nor the user name: the service withholds it with the password.
    assert!(conn["options"].get("user").is_none(), "{conn}");
    assert_eq!(conn["options"]["host"], "db.example.com", "{conn}");
    let (s, list) = serve.call("GET", "/api/2.1/unity-catalog/connections", None);
    assert_eq!(s, 200);
    clean("list connections", &list.to_string());
    // And it was given the rotated one.
    let dump = serve.dump();
    assert_eq!(
        dump["connections"]["sec_pg"]["secret_options"]["password"],
        NEW_PASSWORD
    );
    // Its request log saw every create and update, yet keeps none of the values.
    let (s, log) = serve.call("GET", "/__emulator/requests", None);
    assert_eq!(s, 200);
    let logged = log.to_string();
    assert!(logged.contains("/api/2.0/secrets/put"), "{logged}");
    clean("the request log", &logged);
    // And with a token set, its control endpoints want it: the state holds the secrets.
    for path in ["/__emulator/state", "/__emulator/requests"] {
        let (s, _) = common::http_auth(
            "GET",
            &format!("{}{path}", serve.url),
            None,
            "application/json",
            "not-the-token",
        );
        assert_eq!(s, 401, "{path}");
    }

    let (out, _) = step(&["destroy", "--auto-approve"], &new_pw, 0);
    assert!(out.contains("0 left behind"), "{out}");
}

/// A value built from a sensitive one is sensitive too: hidden in every plan, kept in state
/// only as a fingerprint, passed on sensitive to what reads it, and the plan converges.
#[test]
fn values_derived_from_sensitive_ones_stay_secret_and_converge() {
    derived_value_stays_secret("", r#""copy of ${var.pw}""#);
}

/// The same when the value passes through locals: a local built from a sensitive value is
/// sensitive, and so is a local that reads it.
#[test]
fn a_sensitive_value_passed_through_locals_stays_secret() {
    derived_value_stays_secret(
        "locals {\n  copy  = \"copy of ${var.pw}\"\n  again = local.copy\n}\n",
        "local.again",
    );
}

/// `sensitive()` makes a value sensitive, as a sensitive variable is; here it restores what
/// `nonsensitive()` took away.
#[test]
fn a_value_marked_with_sensitive_stays_secret() {
    derived_value_stays_secret(
        "locals {\n  exposed = \"copy of ${nonsensitive(var.pw)}\"\n}\n",
        "sensitive(local.exposed)",
    );
}

/// A sensitive variable read by index (`var["pw"]`), or by a name computed at run time,
/// is as secret as `var.pw`.
#[test]
fn a_sensitive_variable_read_by_index_stays_secret() {
    derived_value_stays_secret("", "var[\"pw\"]");
    derived_value_stays_secret(
        "locals {\n  which = \"pw\"\n}\n",
        "\"copy of ${var[local.which]}\"",
    );
}

/// A sensitive value under a map key holding a dot (as Spark settings' keys do) is kept in
/// state only as a fingerprint, is not shown, and the plan converges.
#[test]
fn a_sensitive_value_under_a_dotted_map_key_stays_secret_and_converges() {
    let text = format!(
        r#"
provider "databricks" {{ host = "local" }}
variable "pw" {{
  default   = "{PASSWORD}"
  sensitive = true
}}
resource "databricks_catalog" "c" {{
  name       = "dotted_cat"
  properties = {{
    "fs.azure.account.key" = var.pw
    plain                  = "x"
  }}
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    let ok = ok_in(d);
    ok(&["apply", "--auto-approve"]);
    kept_files_clean(d, &[]);
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "the plan converges:\n{out}{err}");
    ok(&["destroy", "--auto-approve"]);
}

/// Runs brickform in `d`, which must succeed without showing a sensitive value: its output.
fn ok_in(d: &Path) -> impl Fn(&[&str]) -> String + '_ {
    move |args| {
        let (code, out, err) = run(d, args, &[]);
        assert_eq!(code, 0, "{args:?}\n{out}{err}");
        clean(&format!("brickform {args:?}"), &format!("{out}{err}"));
        out
    }
}

/// Fails if a file brickform keeps in `d`, or one of `saved`, holds a sensitive value. The
/// local workspace's files are the service's: it holds what it was sent.
fn kept_files_clean(d: &Path, saved: &[std::path::PathBuf]) {
    let local = d.join(".brickform/local");
    for f in files_under(&d.join(".brickform"))
        .into_iter()
        .filter(|f| !f.starts_with(&local))
        .chain(saved.iter().cloned())
    {
        clean(
            &f.display().to_string(),
            &String::from_utf8_lossy(&std::fs::read(&f).unwrap()),
        );
    }
}

/// Plans, applies, re-plans and rotates a catalog whose comment is `comment` (which reads
/// `var.pw`, with the blocks `extra` declares), checking the secret is never shown or kept.
fn derived_value_stays_secret(extra: &str, comment: &str) {
    let text = format!(
        r#"
provider "databricks" {{ host = "local" }}
variable "pw" {{
  default   = "{PASSWORD}"
  sensitive = true
}}
{extra}
resource "databricks_catalog" "c" {{
  name    = "derived_cat"
  comment = {comment}
}}
resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.name
  name         = "s"
  comment      = databricks_catalog.c.comment
}}
output "comment" {{
  value     = databricks_catalog.c.comment
  sensitive = true
}}
"#
    );
    let dir = config(&[("main.bf.hcl", &text)]);
    let d = dir.path();
    let ok = ok_in(d);
    let saved = d.join("plan.bin").display().to_string();
    let update = d.join("update.bin").display().to_string();
    let out = ok(&["plan", "-out", &saved]);
    let hidden = out
        .lines()
        .filter(|l| l.contains("+ comment") && l.contains("= (sensitive value)"))
        .count();
    // The catalog's and the schema's comment, and the output.
    assert_eq!(hidden, 3, "{out}");
    ok(&["apply", &saved]);
    for args in [
        &["show"][..],
        &["show", "--json"][..],
        &["state", "pull"][..],
        &["state", "show", "databricks_catalog.c"][..],
        &["state", "show", "databricks_schema.s"][..],
        &["output"][..],
    ] {
        ok(args);
    }
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "the plan converges:\n{out}{err}");
    // A new secret: an update of hidden values, saved without either value.
    let new_pw = format!("pw={NEW_PASSWORD}");
    let out = ok(&["plan", "--var", &new_pw, "-out", &update]);
    assert!(
        out.contains("Plan: 0 to add, 2 to change, 0 to destroy."),
        "{out}"
    );
    kept_files_clean(d, &[d.join("plan.bin"), d.join("update.bin")]);
    // An output that reads the derived value must be marked sensitive.
    std::fs::write(
        d.join("main.bf.hcl"),
        text.replace("  sensitive = true\n}\n\"#", "}\n\"#")
            .replace(
                "value     = databricks_catalog.c.comment\n  sensitive = true",
                "value = databricks_catalog.c.comment",
            ),
    )
    .unwrap();
    let (code, out, err) = run(d, &["plan"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("Output refers to sensitive values"), "{err}");
    std::fs::write(d.join("main.bf.hcl"), &text).unwrap();
    ok(&["destroy", "--auto-approve"]);
}

/// The same scope for a caller signed in with Microsoft Entra ID (a service principal from
/// `ARM_*` variables, the Entra ID stand-in the local workspace serves): made with its vault,
/// re-planned empty, read-only to the Secrets API, and destroyed.
#[test]
fn a_key_vault_scope_is_made_for_an_entra_id_sign_in() {
    let main = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_secret_scope" "kv" {
  name = "keyvault-managed"
  keyvault_metadata {
    resource_id = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/kv"
    dns_name    = "https://kv.vault.azure.net/"
  }
}
"#;
    let dir = config(&[("main.bf.hcl", main)]);
    let d = dir.path();
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &[]);
    let host = format!("host={}", serve.url);
    let authority = format!("{}/_identity/azure/", serve.url);
    let env = [
        ("ARM_CLIENT_ID", "11111111-app"),
        ("ARM_CLIENT_SECRET", "sp-secret"),
        ("AZURE_AUTHORITY_HOST", authority.as_str()),
    ];
    let with = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["--var", host.as_str()]);
        run(d, &a, &env)
    };
    let (code, out, err) = with(&["apply", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    let scopes = serve.ok("GET", "/api/2.0/secrets/scopes/list", None);
    let kv = scopes["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "keyvault-managed")
        .cloned()
        .unwrap_or_else(|| panic!("{scopes}"));
    assert_eq!(kv["backend_type"], "AZURE_KEYVAULT");
    assert_eq!(
        kv["keyvault_metadata"]["dns_name"],
        "https://kv.vault.azure.net/"
    );
    let (code, out, err) = with(&["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the plan after apply is not empty:\n{out}{err}");
    let (status, body) = serve.call(
        "POST",
        "/api/2.0/secrets/put",
        Some(serde_json::json!({"scope": "keyvault-managed", "key": "k", "string_value": "v"})),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body.to_string().contains("backed by an Azure Key Vault"),
        "{body}"
    );
    let (code, out, err) = with(&["destroy", "--auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");
    let scopes = serve.ok("GET", "/api/2.0/secrets/scopes/list", None);
    assert!(!scopes.to_string().contains("keyvault-managed"), "{scopes}");
}

/// A scope backed by an Azure Key Vault, written as the Terraform provider's docs write it:
/// it validates, its create sends the vault, and the service refuses it to a caller signed in
/// with a personal access token (as the real one does), leaving nothing behind. A vault
/// named for a Databricks-backed scope, or a Key Vault scope without its vault, is refused at
/// validate where it is written.
#[test]
fn a_key_vault_scope_is_sent_with_its_vault_and_refused_to_a_token() {
    let main = r#"
resource "databricks_secret_scope" "kv" {
  name = "keyvault-managed"
  keyvault_metadata {
    resource_id = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/kv"
    dns_name    = "https://kv.vault.azure.net/"
  }
}
"#;
    let main = format!("{}{main}", common::SERVED_PROVIDER);
    let dir = config(&[("main.bf.hcl", &main)]);
    let d = dir.path();
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &[]);
    common::served_ok(d, &serve, &["validate"]);
    let (code, out, err) = common::served(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("Scope with Azure KeyVault must have userAADToken defined!"),
        "{err}"
    );
    // The request carried the vault, as the Secrets API takes it.
    let log = serve.ok(
        "GET",
        "/__emulator/requests?path=/api/2.0/secrets/scopes/create",
        None,
    );
    let create = &log["requests"][0];
    assert_eq!(
        create["body"]["scope_backend_type"], "AZURE_KEYVAULT",
        "{log}"
    );
    assert_eq!(
        create["body"]["backend_azure_keyvault"]["dns_name"], "https://kv.vault.azure.net/",
        "{log}"
    );
    let (_, out, _) = run(d, &["state", "list"], &[]);
    assert!(!out.contains("databricks_secret_scope.kv"), "{out}");
    let scopes = serve.ok("GET", "/api/2.0/secrets/scopes/list", None);
    assert!(!scopes.to_string().contains("keyvault-managed"), "{scopes}");

    for (body, message) in [
        (
            "  backend_type = \"AZURE_KEYVAULT\"\n",
            "an AZURE_KEYVAULT scope needs a keyvault_metadata block",
        ),
        (
            "  backend_type = \"DATABRICKS\"\n  keyvault_metadata {\n    resource_id = \"r\"\n    dns_name    = \"d\"\n  }\n",
            "a DATABRICKS scope has no Key Vault",
        ),
    ] {
        let text = format!(
            "provider \"databricks\" {{\n  host = \"local\"\n}}\nresource \"databricks_secret_scope\" \"s\" {{\n  name = \"s\"\n{body}}}\n"
        );
        let dir = config(&[("main.bf.hcl", &text)]);
        let (code, out, err) = run(dir.path(), &["validate", "--no-color"], &[]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(err.contains(message), "{err}");
        assert!(err.contains("main.bf.hcl:"), "located: {err}");
    }
}
