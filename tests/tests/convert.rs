//! `brickform convert`: a Terraform configuration written as the provider's documentation
//! writes it (tests/fixtures/terraform: every kind brickform has, a Lakeflow Connect gateway
//! and ingestion pipeline, and what brickform lacks) is rewritten, validates, and — given a
//! Terraform state of objects that live in the workspace — is adopted so that the next plan
//! is empty, with no secret in brickform's state.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, run, run_ok, served, served_ok, served_plan_is_empty};
use serde_json::{Value, json};
use std::path::Path;

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("tf");
    std::fs::create_dir(&tf).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/terraform");
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), tf.join(e.file_name())).unwrap();
    }
    dir
}

#[test]
fn a_terraform_configuration_converts_and_validates() {
    let dir = fixture();
    let d = dir.path();
    let out = run_ok(d, &["convert", "tf", "--out", "bf"], &[]);
    assert!(
        out.contains("tf/main.tf") || out.contains("main.tf -> main.bf.hcl"),
        "{out}"
    );
    assert!(out.contains("15 resource(s) and 1 data source(s)"), "{out}");
    // Every change and every left-out block is named with its line.
    for says in [
        "main.tf:111: databricks_pipeline.gateway is databricks_ingestion_gateway.gateway",
        "main.tf:123: databricks_pipeline.ingestion is databricks_ingestion_pipeline.ingestion",
        "main.tf:7: terraform { backend }",
        "main.tf:161: databricks_job.this: brickform has no block provider_config",
        "main.tf:175: databricks_cluster.shared: brickform has no attribute clear_cloud_attributes_on_remove",
        "main.tf:185: module source \"git::https://example.com/databricks-modules.git\" is not a local directory",
    ] {
        assert!(out.contains(says), "missing {says:?} in\n{out}");
    }
    let text = std::fs::read_to_string(d.join("bf/main.bf.hcl")).unwrap();
    // The Lakeflow Connect kinds, their definition fields at the top, objects as object.
    assert!(
        text.contains("resource \"databricks_ingestion_gateway\" \"gateway\" {"),
        "{text}"
    );
    assert!(
        text.contains("resource \"databricks_ingestion_pipeline\" \"ingestion\" {"),
        "{text}"
    );
    assert!(
        !text.contains("gateway_definition") && !text.contains("ingestion_definition"),
        "{text}"
    );
    assert!(text.contains("  object {\n    table {"), "{text}");
    // References are rewritten everywhere: arguments, depends_on, outputs, locals.
    assert!(
        !text.contains("databricks_pipeline.gateway")
            && !text.contains("databricks_pipeline.ingestion"),
        "{text}"
    );
    assert!(
        text.contains("ingestion_gateway_id = databricks_ingestion_gateway.gateway.id"),
        "{text}"
    );
    assert!(
        text.contains("depends_on = [databricks_ingestion_gateway.gateway]"),
        "{text}"
    );
    assert!(
        text.contains("value = databricks_ingestion_gateway.gateway.id"),
        "{text}"
    );
    assert!(
        text.contains("ingestion = databricks_ingestion_pipeline.ingestion.id"),
        "{text}"
    );
    // Comments survive; what is left out stays, commented.
    assert!(text.contains("# The sandbox catalog."), "{text}");
    // A cluster keeps the provider's names; what brickform lacks is commented in place.
    assert!(
        text.contains("resource \"databricks_cluster\" \"shared\" {\n  cluster_name            = \"Shared Autoscaling\""),
        "{text}"
    );
    assert!(
        text.contains("# clear_cloud_attributes_on_remove = true"),
        "{text}"
    );
    assert!(
        text.contains("data \"databricks_clusters\" \"all\" {}"),
        "{text}"
    );
    assert!(text.contains("#   workspace_id = \"123\""), "{text}");
    // The sources notebooks are uploaded from came along.
    assert!(d.join("bf/ldp_demo.py").is_file());
    assert!(!d.join("bf/main.tf").exists());

    let out = run_ok(&d.join("bf"), &["validate"], &[]);
    assert!(
        out.contains("Success! The configuration is valid."),
        "{out}"
    );
    // Converting again gives the same files.
    run_ok(d, &["convert", "tf", "--out", "bf"], &[]);
    assert_eq!(
        std::fs::read_to_string(d.join("bf/main.bf.hcl")).unwrap(),
        text
    );
}

#[test]
fn input_that_cannot_be_read_fails() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, _, err) = run(d, &["convert", "missing"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cannot read"), "{err}");
    std::fs::create_dir(d.join("empty")).unwrap();
    let (code, _, err) = run(d, &["convert", "empty"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("holds no Terraform configuration"), "{err}");
    std::fs::create_dir(d.join("broken")).unwrap();
    std::fs::write(
        d.join("broken/main.tf"),
        "resource \"databricks_catalog\" \"c\" {\n  name = \n}\n",
    )
    .unwrap();
    let (code, _, err) = run(d, &["convert", "broken"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("broken/main.tf:2:10: invalid expression"),
        "{err}"
    );
    assert!(!d.join("broken/main.bf.hcl").exists(), "nothing written");
}

/// A state entry of `dir`'s brickform state.
fn entry(state: &Value, address: &str) -> Value {
    state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == address)
        .cloned()
        .unwrap_or_else(|| panic!("no {address} in {state:#}"))
}

fn state_of(dir: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(dir.join(".brickform/state/default.json")).unwrap(),
    )
    .unwrap()
}

/// One resource of a Terraform state, as the provider writes it.
fn tf_resource(type_name: &str, name: &str, attributes: Value) -> Value {
    json!({
        "mode": "managed",
        "type": type_name,
        "name": name,
        "provider": "provider[\"registry.terraform.io/databricks/databricks\"]",
        "instances": [{
            "schema_version": 0,
            "attributes": attributes,
            "sensitive_attributes": [],
            "private": "bnVsbA=="
        }]
    })
}

fn md5_hex(bytes: &[u8]) -> String {
    use md5::Digest as _;
    format!("{:x}", md5::Md5::digest(bytes))
}

#[test]
fn a_terraform_state_is_adopted_and_the_next_plan_is_empty() {
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &[]);
    let dir = fixture();
    let d = dir.path();
    run_ok(d, &["convert", "tf", "--out", "made"], &[]);
    // The objects Terraform made: applied from the converted configuration elsewhere, then
    // described as the provider's state describes them (its ids and attribute names).
    served_ok(&d.join("made"), &serve, &["apply", "--auto-approve"]);
    let made = state_of(&d.join("made"));
    let id = |a: &str| entry(&made, a)["id"].as_str().unwrap().to_string();
    let computed = |a: &str, k: &str| entry(&made, a)["computed"][k].clone();
    let nb = std::fs::read(d.join("tf/ldp_demo.py")).unwrap();
    let wf = std::fs::read(d.join("tf/module.py")).unwrap();
    let tfstate = json!({
        "version": 4,
        "terraform_version": "1.9.8",
        "serial": 12,
        "lineage": "2f1c0d7e-6a43-4c0b-9a55-3b8f3f6f2a10",
        "outputs": {
            "gateway_id": {"value": id("databricks_ingestion_gateway.gateway"), "type": "string"}
        },
        "resources": [
            tf_resource("databricks_catalog", "sandbox", json!({
                "id": "sandbox", "name": "sandbox", "comment": "this catalog is managed by terraform",
                "properties": {"purpose": "testing"}, "force_destroy": false, "isolation_mode": "OPEN",
                "metastore_id": computed("databricks_catalog.sandbox", "metastore_id"), "owner": "someone"
            })),
            tf_resource("databricks_schema", "things", json!({
                "id": "sandbox.things", "catalog_name": "sandbox", "name": "things",
                "comment": "this database is managed by terraform", "properties": {"kind": "various"}
            })),
            tf_resource("databricks_volume", "this", json!({
                "id": "sandbox.things.quickstart_volume", "name": "quickstart_volume",
                "catalog_name": "sandbox", "schema_name": "things", "volume_type": "MANAGED"
            })),
            tf_resource("databricks_connection", "mysql", json!({
                "id": format!("{}|mysql_connection", computed("databricks_connection.mysql", "metastore_id").as_str().unwrap()),
                "name": "mysql_connection", "connection_type": "MYSQL",
                "options": {"host": "test.mysql.database.azure.com", "port": "3306", "user": "user", "password": "password"}
            })),
            tf_resource("databricks_secret_scope", "app", json!({
                "id": "application-secret-scope", "name": "application-secret-scope", "backend_type": "DATABRICKS"
            })),
            tf_resource("databricks_secret", "publishing_api", json!({
                "id": "application-secret-scope|||publishing_api", "scope": "application-secret-scope",
                "key": "publishing_api", "string_value": "s3cr3t-v4lue", "config_reference": "{{secrets/application-secret-scope/publishing_api}}"
            })),
            tf_resource("databricks_directory", "my_custom_directory", json!({
                "id": "/Shared/my_custom_directory", "path": "/Shared/my_custom_directory", "delete_recursive": false
            })),
            tf_resource("databricks_notebook", "ldp_demo", json!({
                "id": "/Shared/my_custom_directory/ldp_demo", "path": "/Shared/my_custom_directory/ldp_demo",
                "source": "./ldp_demo.py", "md5": md5_hex(&nb), "language": "PYTHON", "format": "SOURCE"
            })),
            tf_resource("databricks_workspace_file", "module", json!({
                "id": "/Shared/module.py", "path": "/Shared/module.py",
                "source": "./module.py", "md5": md5_hex(&wf)
            })),
            tf_resource("databricks_pipeline", "this", json!({"id": id("databricks_pipeline.this"), "name": "Pipeline Name"})),
            tf_resource("databricks_pipeline", "gateway", json!({
                "id": id("databricks_ingestion_gateway.gateway"), "name": "mysql-gateway",
                "gateway_definition": [{"connection_name": "mysql_connection"}]
            })),
            tf_resource("databricks_pipeline", "ingestion", json!({
                "id": id("databricks_ingestion_pipeline.ingestion"), "name": "mysql-ingestion"
            })),
            tf_resource("databricks_job", "this", json!({
                "id": id("databricks_job.this"), "name": "Job with multiple tasks"
            })),
            // Made through the aliased provider configuration.
            {
                "mode": "managed", "type": "databricks_catalog", "name": "prod",
                "provider": "provider[\"registry.terraform.io/databricks/databricks\"].prod",
                "instances": [{"attributes": {"id": "prod", "name": "prod"}}]
            },
            // The provider's id of a cluster is its cluster id.
            tf_resource("databricks_cluster", "shared", json!({
                "id": id("databricks_cluster.shared"), "cluster_id": id("databricks_cluster.shared"),
                "cluster_name": "Shared Autoscaling", "autotermination_minutes": 20
            })),
            {"mode": "data", "type": "databricks_clusters", "name": "all",
             "provider": "provider[\"registry.terraform.io/databricks/databricks\"]",
             "instances": [{"attributes": {"id": "_"}}]}
        ]
    });
    std::fs::write(
        d.join("terraform.tfstate"),
        serde_json::to_string_pretty(&tfstate).unwrap(),
    )
    .unwrap();

    let out = served_ok(
        d,
        &serve,
        &[
            "convert",
            "tf",
            "--out",
            "bf",
            "--state",
            "terraform.tfstate",
        ],
    );
    assert!(
        out.contains("15 adopted, 0 already there, 0 failed"),
        "{out}"
    );
    assert!(
        out.contains("databricks_ingestion_gateway.gateway: Import complete"),
        "{out}"
    );
    assert!(
        out.contains("databricks_cluster.shared: Import complete"),
        "{out}"
    );
    served_plan_is_empty(&d.join("bf"), &serve);

    let bf = d.join("bf");
    let path = bf.join(".brickform/state/default.json");
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in ["s3cr3t-v4lue", "\"password\""] {
        assert!(
            !text.contains(secret),
            "{secret} reached the state:\n{text}"
        );
    }
    let state = state_of(&bf);
    assert_eq!(
        entry(&state, "databricks_catalog.prod")["provider"],
        "databricks.prod"
    );
    assert_eq!(
        entry(&state, "databricks_secret.publishing_api")["id"],
        "application-secret-scope|publishing_api"
    );
    assert!(
        entry(&state, "databricks_secret.publishing_api")["sensitive"]["string_value"]
            .as_str()
            .unwrap()
            .starts_with("hmac-sha256:")
    );
    assert_eq!(
        state["serial"],
        json!(state["serial"].as_u64().unwrap()),
        "{state}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "state file mode {mode:o}");
    }
    // Adopting again keeps what is there.
    let out = served_ok(
        d,
        &serve,
        &[
            "convert",
            "tf",
            "--out",
            "bf",
            "--state",
            "terraform.tfstate",
        ],
    );
    assert!(out.contains("0 adopted, 15 already there"), "{out}");

    // A secret whose value the configuration changed since Terraform applied it is
    // planned as the update it is.
    let main = std::fs::read_to_string(bf.join("main.bf.hcl")).unwrap();
    std::fs::write(
        bf.join("main.bf.hcl"),
        main.replace("s3cr3t-v4lue", "n3w-v4lue"),
    )
    .unwrap();
    let (code, out, err) = served(&bf, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("databricks_secret.publishing_api will be updated"),
        "{out}"
    );
    assert!(out.contains("1 to change"), "{out}");
}

/// A Terraform configuration that calls a local module with for_each converts module and
/// all, and its state's module resources (`"module": "module.area[\"a\"]"`) are adopted at
/// their module addresses, so the next plan is empty.
#[test]
fn resources_inside_modules_are_converted_and_adopted() {
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("tf/modules/area")).unwrap();
    std::fs::write(
        d.join("tf/main.tf"),
        format!(
            "{}{}",
            common::SERVED_PROVIDER,
            r#"
resource "databricks_catalog" "c" {
  name = "tfmod"
}
module "area" {
  source   = "./modules/area"
  for_each = toset(["a", "b"])
  catalog  = databricks_catalog.c.name
  name     = each.key
}
output "ids" {
  value = { for k, m in module.area : k => m.id }
}
"#
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("tf/modules/area/main.tf"),
        r#"
variable "catalog" {}
variable "name" {}
resource "databricks_schema" "this" {
  catalog_name = var.catalog
  name         = var.name
}
output "id" {
  value = databricks_schema.this.id
}
"#,
    )
    .unwrap();
    run_ok(d, &["convert", "tf", "--out", "made"], &[]);
    served_ok(&d.join("made"), &serve, &["apply", "--auto-approve"]);
    let schema = |key: &str| {
        json!({
            "module": format!("module.area[\"{key}\"]"),
            "mode": "managed",
            "type": "databricks_schema",
            "name": "this",
            "provider": "provider[\"registry.terraform.io/databricks/databricks\"]",
            "instances": [{"attributes": {
                "id": format!("tfmod.{key}"), "catalog_name": "tfmod", "name": key
            }}]
        })
    };
    let tfstate = json!({
        "version": 4,
        "serial": 3,
        "lineage": "7a0e2c1d-0000-4000-8000-000000000001",
        "outputs": {"ids": {"value": {"a": "tfmod.a", "b": "tfmod.b"}}},
        "resources": [
            tf_resource("databricks_catalog", "c", json!({"id": "tfmod", "name": "tfmod"})),
            schema("a"),
            schema("b"),
        ]
    });
    std::fs::write(d.join("terraform.tfstate"), tfstate.to_string()).unwrap();
    let out = served_ok(
        d,
        &serve,
        &[
            "convert",
            "tf",
            "--out",
            "bf",
            "--state",
            "terraform.tfstate",
        ],
    );
    assert!(
        out.contains("3 adopted, 0 already there, 0 failed"),
        "{out}"
    );
    let state = state_of(&d.join("bf"));
    assert_eq!(
        entry(&state, "module.area[\"b\"].databricks_schema.this")["id"],
        "tfmod.b"
    );
    served_plan_is_empty(&d.join("bf"), &serve);
}

/// The identity kinds convert with the provider's attribute names and references.
#[test]
fn identity_kinds_convert_as_the_provider_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("tf")).unwrap();
    std::fs::write(
        d.join("tf/main.tf"),
        r#"provider "databricks" {
  host = "local"
}

resource "databricks_group" "eng" {
  display_name          = "eng"
  allow_cluster_create  = true
  databricks_sql_access = true
  force                 = true
}

resource "databricks_user" "ann" {
  user_name                = "ann@example.com"
  display_name             = "Ann"
  workspace_access         = true
  disable_as_user_deletion = true
}

resource "databricks_service_principal" "ci" {
  display_name = "ci"
  active       = true
}

resource "databricks_group_member" "ann" {
  group_id  = databricks_group.eng.id
  member_id = databricks_user.ann.id
}

data "databricks_group" "admins" {
  display_name = "admins"
}
"#,
    )
    .unwrap();
    let out = run_ok(d, &["convert", "tf", "--out", "bf"], &[]);
    assert!(out.contains("4 resource(s)"), "{out}");
    assert!(!out.contains("no resource kind"), "{out}");
    let text = std::fs::read_to_string(d.join("bf/main.bf.hcl")).unwrap();
    for kept in [
        "resource \"databricks_group\" \"eng\"",
        "allow_cluster_create  = true",
        "disable_as_user_deletion = true",
        "member_id = databricks_user.ann.id",
    ] {
        assert!(text.contains(kept), "{kept}\n{text}");
    }
    let out = run_ok(&d.join("bf"), &["validate"], &[]);
    assert!(
        out.contains("Success! The configuration is valid."),
        "{out}"
    );
}

/// The layout of real repositories: an environment's root calls modules kept beside the
/// environments (`source = "../../modules/x"`), one of them twice and one calling another.
/// Converted into another directory, the modules are placed under it so the converted root
/// finds them, their files come along, the report says what each holds, and the result
/// applies, re-plans empty and destroys on the local workspace. Converted in place, the
/// sources stay as they are.
#[test]
fn modules_outside_the_root_are_converted_where_the_root_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in [
        "repo/envs/prod",
        "repo/modules/area",
        "repo/modules/landing",
    ] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    std::fs::write(
        d.join("repo/envs/prod/main.tf"),
        r#"provider "databricks" {
  host = "local"
}
resource "databricks_catalog" "c" {
  name          = "tfmods"
  force_destroy = true
}
module "sales" {
  source  = "../../modules/area"
  catalog = databricks_catalog.c.name
  name    = "sales"
}
module "ops" {
  source  = "../../modules/area"
  catalog = databricks_catalog.c.name
  name    = "ops"
}
"#,
    )
    .unwrap();
    std::fs::write(
        d.join("repo/modules/area/main.tf"),
        r#"variable "catalog" {}
variable "name" {}
resource "databricks_schema" "this" {
  catalog_name = var.catalog
  name         = var.name
}
module "landing" {
  source  = "../landing"
  catalog = var.catalog
  schema  = databricks_schema.this.name
}
"#,
    )
    .unwrap();
    std::fs::write(
        d.join("repo/modules/landing/main.tf"),
        r#"variable "catalog" {}
variable "schema" {}
resource "databricks_volume" "in" {
  catalog_name = var.catalog
  schema_name  = var.schema
  name         = "landing"
  volume_type  = "MANAGED"
}
resource "databricks_file" "readme" {
  path   = "${databricks_volume.in.volume_path}/README.txt"
  source = "${path.module}/README.txt"
}
"#,
    )
    .unwrap();
    std::fs::write(
        d.join("repo/modules/landing/README.txt"),
        "drop files here\n",
    )
    .unwrap();

    let out = run_ok(d, &["convert", "repo/envs/prod", "--out", "bf"], &[]);
    assert!(
        out.contains("Module ../../modules/area -> modules/area: 1 resource(s) (databricks_schema.this), 0 data source(s)."),
        "{out}"
    );
    assert!(
        out.contains("Module ../../modules/landing -> modules/landing: 2 resource(s) (databricks_file.readme, databricks_volume.in), 0 data source(s)."),
        "{out}"
    );
    assert!(
        out.contains("1 resource(s) and 0 data source(s) carried over in the root module."),
        "{out}"
    );
    assert!(out.contains("Everything was converted."), "{out}");
    let root = std::fs::read_to_string(d.join("bf/main.bf.hcl")).unwrap();
    assert_eq!(
        root.matches("source  = \"./modules/area\"").count(),
        2,
        "{root}"
    );
    let area = std::fs::read_to_string(d.join("bf/modules/area/main.bf.hcl")).unwrap();
    assert!(area.contains("source  = \"../landing\""), "{area}");
    assert_eq!(
        std::fs::read_to_string(d.join("bf/modules/landing/README.txt")).unwrap(),
        "drop files here\n"
    );
    let bf = d.join("bf");
    run_ok(&bf, &["validate"], &[]);
    let applied = run_ok(&bf, &["apply", "--auto-approve"], &[]);
    assert!(applied.contains("7 added"), "{applied}");
    let plan = run_ok(&bf, &["plan"], &[]);
    assert!(plan.contains("No changes."), "{plan}");
    run_ok(&bf, &["destroy", "--auto-approve"], &[]);
    assert!(common::objects(&common::local_dump(&bf)).is_empty());

    // In place: the .bf.hcl files go beside the .tf files and the sources stay.
    run_ok(d, &["convert", "repo/envs/prod"], &[]);
    let root = std::fs::read_to_string(d.join("repo/envs/prod/main.bf.hcl")).unwrap();
    assert!(root.contains("\"../../modules/area\""), "{root}");
    assert!(d.join("repo/modules/landing/main.bf.hcl").is_file());
    run_ok(&d.join("repo/envs/prod"), &["validate"], &[]);
}

/// A Lakeflow Connect pipeline written with the deprecated `target` publishes into
/// `schema`, which is the only name brickform's ingestion pipeline has.
#[test]
fn an_ingestion_pipelines_target_becomes_schema() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("tf")).unwrap();
    std::fs::write(
        d.join("tf/main.tf"),
        r#"provider "databricks" {
  host = "local"
}
resource "databricks_pipeline" "ingest" {
  name    = "ingest"
  catalog = "main"
  target  = "raw"
  ingestion_definition {
    connection_name = "sqlserver"
    objects {
      table {
        source_catalog      = "sales"
        source_schema       = "dbo"
        source_table        = "orders"
        destination_catalog = "main"
        destination_schema  = "raw"
      }
    }
  }
}
"#,
    )
    .unwrap();
    let out = run_ok(d, &["convert", "tf", "--out", "bf"], &[]);
    assert!(
        out.contains("databricks_pipeline.ingest: target (deprecated) is schema in databricks_ingestion_pipeline"),
        "{out}"
    );
    assert!(out.contains("Everything was converted."), "{out}");
    let text = std::fs::read_to_string(d.join("bf/main.bf.hcl")).unwrap();
    assert!(
        text.contains("schema") && !text.contains("target"),
        "{text}"
    );
    run_ok(&d.join("bf"), &["validate"], &[]);
}

/// A grant on a securable brickform does not create (a model registered elsewhere), or
/// permissions on an object it does not create (a serving endpoint, the workspace's tokens),
/// converts as it is written: brickform keeps them by the names the Terraform provider uses.
#[test]
fn grants_and_permissions_on_objects_made_elsewhere_convert_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("tf")).unwrap();
    std::fs::write(
        d.join("tf/main.tf"),
        r#"provider "databricks" {
  host = "local"
}
resource "databricks_grants" "customers" {
  model = "main.reports.churn"
  grant {
    principal  = "Data Engineers"
    privileges = ["EXECUTE"]
  }
}
resource "databricks_permissions" "serving_usage" {
  serving_endpoint_id = "123"
  access_control {
    group_name       = "users"
    permission_level = "CAN_QUERY"
  }
}
resource "databricks_permissions" "token_usage" {
  authorization = "tokens"
  access_control {
    group_name       = "users"
    permission_level = "CAN_USE"
  }
}
resource "databricks_grant" "share" {
  share      = "quarterly"
  principal  = "partner-co"
  privileges = ["SELECT"]
}
"#,
    )
    .unwrap();
    let out = run_ok(d, &["convert", "tf", "--out", "bf"], &[]);
    assert!(out.contains("4 resource(s)"), "{out}");
    assert!(out.contains("Everything was converted."), "{out}");
    let text = std::fs::read_to_string(d.join("bf/main.bf.hcl")).unwrap();
    for kept in [
        "model = \"main.reports.churn\"",
        "serving_endpoint_id = \"123\"",
        "authorization = \"tokens\"",
        "share      = \"quarterly\"",
    ] {
        assert!(text.contains(kept), "{kept} missing in\n{text}");
    }
    run_ok(&d.join("bf"), &["validate"], &[]);
}
