//! Unity Catalog storage end to end against `brickform local serve`: a storage credential
//! (an Azure service principal, whose client secret is write-only) and an external location
//! on it, grants on both; apply, plan empty, a comment changed in place, a rename planned as
//! a replacement (as the Terraform provider does), an overlapping url refused with the
//! service's words, both imported by name, destroy leaving nothing; and the client secret
//! never in state, plan JSON or output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, objects, served_plan_is_empty};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};
use std::path::Path;

const SECRET: &str = "sp-secret-4f1c9e";

const VARIABLES: &str = r#"
variable "host" {
  type = string
}

variable "sp_secret" {
  type      = string
  sensitive = true
  default   = "sp-secret-4f1c9e"
}
"#;

fn main_config(comment: &str, extra: &str) -> String {
    format!(
        r#"
provider "databricks" {{
  host = var.host
}}

resource "databricks_storage_credential" "sp" {{
  name    = "lake_sp"
  comment = "{comment}"
  azure_service_principal {{
    directory_id   = "00000000-0000-0000-0000-000000000001"
    application_id = "00000000-0000-0000-0000-000000000002"
    client_secret  = var.sp_secret
  }}
}}

resource "databricks_external_location" "landing" {{
  name            = "landing"
  url             = "abfss://lake@account.dfs.core.windows.net/landing"
  credential_name = databricks_storage_credential.sp.name
  comment         = "raw files"
}}

resource "databricks_grants" "sp" {{
  storage_credential = databricks_storage_credential.sp.id
  grant {{
    principal  = "data-engineers"
    privileges = ["CREATE_EXTERNAL_LOCATION", "READ_FILES"]
  }}
}}

resource "databricks_grants" "landing" {{
  external_location = databricks_external_location.landing.id
  grant {{
    principal  = "data-engineers"
    privileges = ["READ_FILES", "WRITE_FILES", "CREATE_EXTERNAL_VOLUME"]
  }}
}}
{extra}"#
    )
}

fn write(d: &Path, main: &str) {
    std::fs::write(d.join("main.bf.hcl"), main).unwrap();
}

/// Every file under `dir` but the configuration, as text where it is text.
fn files_hold(dir: &Path, needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "hcl") {
                continue;
            } else if let Ok(bytes) = std::fs::read(&path)
                && String::from_utf8_lossy(&bytes).contains(needle)
            {
                out.push(path.display().to_string());
            }
        }
    }
    out
}

fn storage_objects(serve: &Serve) -> Vec<String> {
    objects(&serve.dump())
        .into_iter()
        .filter(|o| o.starts_with("storage_credential:") || o.starts_with("external_location:"))
        .collect()
}

#[test]
fn credential_location_and_grants_apply_update_import_and_destroy_without_the_secret() {
    let dir = config(&[("variables.bf.hcl", VARIABLES)]);
    let d = dir.path();
    write(d, &main_config("service principal", ""));
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("data-engineers");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 4 added"), "{out}");
    assert!(!out.contains(SECRET), "{out}");
    let cred = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/storage-credentials/lake_sp",
        None,
    );
    // The service answers the service principal without its secret.
    assert_eq!(
        cred["azure_service_principal"],
        json!({"directory_id": "00000000-0000-0000-0000-000000000001", "application_id": "00000000-0000-0000-0000-000000000002"})
    );
    let loc = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/external-locations/landing",
        None,
    );
    assert_eq!(loc["credential_name"], "lake_sp");
    assert_eq!(loc["credential_id"], cred["id"]);
    let grants = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/permissions/external_location/landing",
        None,
    );
    assert_eq!(
        grants["privilege_assignments"][0]["privileges"],
        json!(["CREATE_EXTERNAL_VOLUME", "READ_FILES", "WRITE_FILES"])
    );
    served_plan_is_empty(d, &serve);

    // The secret is in no file brickform wrote (state, its log, the workspace) nor in the
    // plan's JSON.
    assert!(
        files_hold(d, SECRET).is_empty(),
        "{:?}",
        files_hold(d, SECRET)
    );
    let (_, plan_json, err) = bf(d, &serve, &["plan", "-json"]);
    assert!(
        !plan_json.contains(SECRET) && !err.contains(SECRET),
        "{plan_json}"
    );

    // A comment changes in place.
    write(d, &main_config("rotated owner", ""));
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        plan.contains("databricks_storage_credential.sp will be updated in-place"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let cred = serve.ok(
        "GET",
        "/api/2.1/unity-catalog/storage-credentials/lake_sp",
        None,
    );
    assert_eq!(cred["comment"], "rotated owner");
    served_plan_is_empty(d, &serve);

    // The data sources answer the object as the provider's do: `NAME_info`, a list of one,
    // its nested blocks lists of one, the secret nowhere.
    let lookups = r#"
data "databricks_storage_credential" "sp" {
  name = databricks_storage_credential.sp.name
}
data "databricks_external_location" "landing" {
  name = databricks_external_location.landing.name
}
output "application_id" {
  value = data.databricks_storage_credential.sp.storage_credential_info[0].azure_service_principal[0].application_id
}
output "credential_owner" {
  value = data.databricks_storage_credential.sp.storage_credential_info[0].owner
}
output "landing_url" {
  value = data.databricks_external_location.landing.external_location_info[0].url
}
"#;
    write(d, &main_config("rotated owner", lookups));
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (_, outputs, err) = common::run(d, &["output", "--json"], &[]);
    let outputs: Value = serde_json::from_str(&outputs).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(
        outputs["application_id"]["value"],
        "00000000-0000-0000-0000-000000000002"
    );
    assert_eq!(outputs["credential_owner"]["value"], cred["owner"]);
    assert_eq!(
        outputs["landing_url"]["value"],
        "abfss://lake@account.dfs.core.windows.net/landing"
    );
    assert!(
        files_hold(d, SECRET).is_empty(),
        "{:?}",
        files_hold(d, SECRET)
    );
    write(d, &main_config("rotated owner", ""));
    bf_ok(d, &serve, &["apply", "--auto-approve"]);

    // A rotated client secret is planned (hidden) and written, though the service never
    // answers it: state's fingerprint no longer matches. Then it plans nothing.
    const ROTATED: &str = "sp-secret-rotated-77";
    let rotated = format!("sp_secret={ROTATED}");
    let plan = bf_ok(d, &serve, &["plan", "--var", &rotated]);
    assert!(
        plan.contains("databricks_storage_credential.sp will be updated in-place")
            && plan.contains("~ client_secret = (sensitive value)")
            && !plan.contains(ROTATED),
        "{plan}"
    );
    serve.ok("DELETE", "/__emulator/requests", None);
    bf_ok(d, &serve, &["apply", "--auto-approve", "--var", &rotated]);
    let patches = serve.ok(
        "GET",
        "/__emulator/requests?method=PATCH&path=/api/2.1/unity-catalog/storage-credentials/.*",
        None,
    );
    assert!(
        patches["requests"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["body"]["azure_service_principal"]["client_secret"].is_string()),
        "the new secret is sent: {patches}"
    );
    let (code, out, err) = bf(
        d,
        &serve,
        &["plan", "--detailed-exitcode", "--var", &rotated],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        files_hold(d, ROTATED).is_empty(),
        "{:?}",
        files_hold(d, ROTATED)
    );
    // Back to the first secret, for what follows.
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    served_plan_is_empty(d, &serve);

    // A new name replaces the location, as the provider's ForceNew name does.
    let renamed = main_config("rotated owner", "").replace(
        "name            = \"landing\"",
        "name            = \"landing2\"",
    );
    write(d, &renamed);
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(plan.contains("forces replacement"), "{plan}");
    write(d, &main_config("rotated owner", ""));

    // A url under the existing location's is refused with the service's words.
    let overlapping = r#"
resource "databricks_external_location" "nested" {
  name            = "nested"
  url             = "abfss://lake@account.dfs.core.windows.net/landing/2024"
  credential_name = databricks_storage_credential.sp.name
}
"#;
    write(d, &main_config("rotated owner", overlapping));
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("overlaps with an existing external location")
            && err.contains("Conflicting location: landing"),
        "{err}"
    );
    write(d, &main_config("rotated owner", ""));
    served_plan_is_empty(d, &serve);

    // Both are imported by name.
    for address in [
        "databricks_external_location.landing",
        "databricks_storage_credential.sp",
    ] {
        bf_ok(d, &serve, &["state", "rm", address]);
    }
    bf_ok(
        d,
        &serve,
        &["import", "databricks_storage_credential.sp", "lake_sp"],
    );
    bf_ok(
        d,
        &serve,
        &["import", "databricks_external_location.landing", "landing"],
    );
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        !plan.contains("must be replaced") && !plan.contains("will be created"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(
        files_hold(d, SECRET).is_empty(),
        "{:?}",
        files_hold(d, SECRET)
    );

    // Destroy leaves nothing: the location goes before its credential.
    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(!out.contains(SECRET), "{out}");
    assert_eq!(storage_objects(&serve), Vec::<String>::new());
    let dump = serve.dump();
    assert!(
        dump["grants"].as_object().is_none_or(|g| {
            g.keys().all(|k| {
                !k.starts_with("storage_credential:") && !k.starts_with("external_location:")
            })
        }),
        "{}",
        dump["grants"]
    );
}

#[test]
fn a_credential_in_use_is_deleted_only_with_force() {
    let dir = config(&[("variables.bf.hcl", VARIABLES)]);
    let d = dir.path();
    write(d, &main_config("service principal", ""));
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("data-engineers");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let (status, body) = serve.call(
        "DELETE",
        "/api/2.1/unity-catalog/storage-credentials/lake_sp",
        None,
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("1 dependent storage location(s)"),
        "{body}"
    );
    let (status, body) = serve.call(
        "DELETE",
        "/api/2.1/unity-catalog/storage-credentials/lake_sp?force=true",
        None,
    );
    assert_eq!(status, 200, "{body}");
    let missing: Value = serve
        .call(
            "GET",
            "/api/2.1/unity-catalog/storage-credentials/lake_sp",
            None,
        )
        .1;
    assert_eq!(missing["error_code"], "STORAGE_CREDENTIAL_DOES_NOT_EXIST");
}

/// A catalog and a schema whose storage roots lie under an external location's url, written
/// as literals (nothing refers to the location), are created after it and deleted before it.
#[test]
fn storage_roots_under_an_external_location_are_ordered_after_it() {
    let text = r#"
provider "databricks" { host = "local" }

resource "databricks_storage_credential" "aws" {
  name = "lake_role"
  aws_iam_role { role_arn = "arn:aws:iam::123456789012:role/lake" }
}

resource "databricks_external_location" "lake" {
  name            = "lake"
  url             = "s3://lake-bucket/managed/"
  credential_name = databricks_storage_credential.aws.name
}

resource "databricks_catalog" "sales" {
  name         = "sales"
  storage_root = "s3://lake-bucket/managed/sales"
}

resource "databricks_schema" "raw" {
  catalog_name = databricks_catalog.sales.name
  name         = "raw"
  storage_root = "s3://lake-bucket/managed"
}

resource "databricks_catalog" "elsewhere" {
  name         = "elsewhere"
  storage_root = "s3://lake-bucket/managed-other/x"
}
"#;
    let dir = config(&[("main.bf.hcl", text)]);
    let d = dir.path();
    let depends_on = |plan: &str| -> std::collections::BTreeMap<String, Vec<String>> {
        let file = d.join(plan).display().to_string();
        let shown: Value =
            serde_json::from_str(&common::run_ok(d, &["show", "--json", &file], &[])).unwrap();
        shown["resource_changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let deps = c["depends_on"]
                    .as_array()
                    .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                (c["address"].as_str().unwrap().to_string(), deps)
            })
            .collect()
    };
    let lake = "databricks_external_location.lake".to_string();
    common::run_ok(d, &["plan", "-out", "create.bin"], &[]);
    let deps = depends_on("create.bin");
    assert!(deps["databricks_catalog.sales"].contains(&lake), "{deps:?}");
    // At the location's url itself, too.
    assert!(deps["databricks_schema.raw"].contains(&lake), "{deps:?}");
    // A path that only starts with the same letters is not under it.
    assert!(
        !deps["databricks_catalog.elsewhere"].contains(&lake),
        "{deps:?}"
    );
    common::run_ok(d, &["apply", "create.bin"], &[]);
    // The destroy, planned from state alone, keeps the order the other way round.
    common::run_ok(d, &["plan", "-destroy", "-out", "destroy.bin"], &[]);
    let deps = depends_on("destroy.bin");
    assert!(deps["databricks_catalog.sales"].contains(&lake), "{deps:?}");
    common::run_ok(d, &["apply", "destroy.bin"], &[]);
}
