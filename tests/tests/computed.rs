//! Every computed attribute of every resource kind and data source is set or null, never
//! missing: one configuration with a resource of every kind (and the variants the service
//! answers with fewer attributes: a HIVE_METASTORE connection, a foreign catalog) and every
//! data source, reading every computed attribute through an output, applies, plans no
//! change, and destroys. The outputs come from `brickform schema`, so a new computed
//! attribute is read by this test as soon as it is declared, and a new kind fails it until
//! the configuration below has one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{config, local_dump, objects, run, run_ok};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// One resource of every kind, and every data source.
const EVERY_KIND: &str = r#"
provider "databricks" {
  host = "local"
}

data "databricks_current_user" "me" {}

data "databricks_spark_version" "lts" {
  long_term_support = true
}

data "databricks_node_type" "smallest" {
  local_disk = true
}

resource "databricks_catalog" "main" {
  name          = "every_kind"
  force_destroy = true
}

resource "databricks_schema" "raw" {
  catalog_name  = databricks_catalog.main.name
  name          = "raw"
  force_destroy = true
}

resource "databricks_volume" "landing" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.raw.name
  name         = "landing"
  volume_type  = "MANAGED"
}

resource "databricks_file" "csv" {
  path           = "${databricks_volume.landing.volume_path}/in/data.csv"
  content_base64 = base64encode("id\n1\n")
}

resource "databricks_artifact" "tool" {
  source_dir = "."
  build      = ["python3", "-c", "import os; os.makedirs('out', exist_ok=True); open('out/tool.bin', 'w').write('1')"]
  inputs     = ["*.bf.hcl"]
  output     = "out/*.bin"
  path       = "${databricks_volume.landing.volume_path}/tools"
}

resource "databricks_connection" "sqlserver" {
  name            = "every_kind_sqlserver"
  connection_type = "SQLSERVER"
  options = {
    host     = "db.example.com"
    port     = "1433"
    user     = "app"
    password = "local-only"
  }
}

# Federation of the workspace's own Hive metastore: the service reports no url and no
# credential type for it.
resource "databricks_connection" "hms" {
  name            = "every_kind_hms"
  connection_type = "HIVE_METASTORE"
  options = {
    builtin = "true"
  }
}

# A foreign catalog has no storage location.
resource "databricks_catalog" "foreign" {
  name            = "every_kind_hms"
  connection_name = databricks_connection.hms.name
  options = {
    authorized_paths = "s3://bucket/hms"
  }
}

data "databricks_catalog" "foreign" {
  name = databricks_catalog.foreign.name
}

data "databricks_connection" "hms" {
  name = databricks_connection.hms.name
}

resource "databricks_storage_credential" "aws" {
  name = "every_kind_cred"
  aws_iam_role {
    role_arn = "arn:aws:iam::123456789012:role/uc-access"
  }
}

resource "databricks_credential" "service" {
  name    = "every_kind_service"
  purpose = "SERVICE"
  databricks_gcp_service_account {}
}

resource "databricks_external_location" "landing" {
  name            = "every_kind_landing"
  url             = "s3://every-kind-bucket/landing"
  credential_name = databricks_storage_credential.aws.name
}

data "databricks_storage_credential" "aws" {
  name = databricks_storage_credential.aws.name
}

data "databricks_external_location" "landing" {
  name = databricks_external_location.landing.name
}

data "databricks_storage_credentials" "all" {
  depends_on = [databricks_storage_credential.aws]
}

data "databricks_external_locations" "all" {
  depends_on = [databricks_external_location.landing]
}

data "databricks_current_metastore" "this" {}

data "databricks_metastore" "this" {
  metastore_id = data.databricks_current_metastore.this.id
}

resource "databricks_metastore_assignment" "this" {
  metastore_id = data.databricks_metastore.this.metastore_id
}

resource "databricks_default_namespace_setting" "this" {
  namespace {
    value = "main"
  }
}

data "databricks_schema" "raw" {
  catalog_name = databricks_schema.raw.catalog_name
  name         = databricks_schema.raw.name
}

resource "databricks_ingestion_gateway" "gw" {
  name                    = "every_kind_gw"
  connection_name         = databricks_connection.sqlserver.name
  gateway_storage_catalog = databricks_catalog.main.name
  gateway_storage_schema  = databricks_schema.raw.name
}

resource "databricks_ingestion_pipeline" "ig" {
  name                 = "every_kind_ig"
  catalog              = databricks_catalog.main.name
  schema               = databricks_schema.raw.name
  serverless           = true
  ingestion_gateway_id = databricks_ingestion_gateway.gw.id

  object {
    table {
      source_catalog      = "src"
      source_schema       = "dbo"
      source_table        = "orders"
      destination_catalog = databricks_catalog.main.name
      destination_schema  = databricks_schema.raw.name
    }
  }
}

resource "sdp_meta_flow" "orders" {
  data_flow_id    = "1"
  data_flow_group = "G1"
  source_system   = "sqlserver"

  source {
    format          = "delta"
    ingestion_table = databricks_ingestion_pipeline.ig.table["orders"]
  }

  bronze {
    database       = "${databricks_catalog.main.name}.${databricks_schema.raw.name}"
    table          = "orders_bronze"
    reader_options = { readChangeFeed = "true" }

    cdc_apply_changes {
      keys               = ["id"]
      sequence_by        = "_commit_version"
      scd_type           = "1"
      apply_as_deletes   = "_change_type = 'delete'"
      except_column_list = ["_change_type", "_commit_version", "_commit_timestamp"]
    }
  }
}

resource "sdp_meta_onboarding" "g1" {
  volume_path = databricks_volume.landing.volume_path
  env         = "dev"
  flows       = [sdp_meta_flow.orders]
  database    = "${databricks_catalog.main.name}.${databricks_schema.raw.name}"
}

resource "databricks_directory" "code" {
  path             = "${data.databricks_current_user.me.home}/every_kind"
  delete_recursive = true
}

resource "databricks_repo" "code" {
  url = "https://github.com/user/every-kind.git"
}

resource "databricks_permissions" "code_repo" {
  repo_id = databricks_repo.code.id
  access_control {
    group_name       = "users"
    permission_level = "CAN_READ"
  }
}

resource "databricks_notebook" "etl" {
  path           = "${databricks_directory.code.path}/etl.py"
  content_base64 = base64encode("print(1)")
}

resource "databricks_workspace_file" "conf" {
  path           = "${databricks_directory.code.path}/conf.json"
  content_base64 = base64encode("{}")
}

resource "databricks_pipeline" "bronze" {
  name       = "every_kind_bronze"
  catalog    = databricks_catalog.main.name
  schema     = databricks_schema.raw.name
  serverless = true

  library {
    notebook {
      path = databricks_notebook.etl.path
    }
  }
}

resource "databricks_job" "nightly" {
  name = "every_kind_nightly"

  task {
    task_key = "etl"
    notebook_task {
      notebook_path = databricks_notebook.etl.path
    }
  }

  task {
    task_key = "bronze"
    depends_on {
      task_key = "etl"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.bronze.id
    }
  }
}

resource "databricks_job_run" "once" {
  job_id = databricks_job.nightly.id
}

resource "databricks_secret_scope" "app" {
  name = "every-kind"
}

resource "databricks_sql_endpoint" "bi" {
  name         = "every-kind-bi"
  cluster_size = "2X-Small"
}

data "databricks_sql_warehouse" "bi" {
  name = databricks_sql_endpoint.bi.name
}

data "databricks_sql_warehouses" "every_kind" {
  warehouse_name_contains = "EVERY-KIND-BI"
  depends_on              = [databricks_sql_endpoint.bi]
}

resource "databricks_ip_access_list" "blocked" {
  label        = "every-kind-blocked"
  list_type    = "BLOCK"
  ip_addresses = ["203.0.113.0/24"]
}

resource "databricks_workspace_conf" "this" {
  custom_config = {
    enableTokensConfig = true
  }
}

resource "databricks_cluster_policy" "small" {
  name       = "every-kind-small"
  definition = jsonencode({ "autotermination_minutes" = { "type" = "fixed", "value" = 20 } })
}

resource "databricks_query" "top" {
  display_name = "every-kind-top"
  warehouse_id = databricks_sql_endpoint.bi.id
  query_text   = "select 42 as value"
  parent_path  = "/Shared"
}

resource "databricks_alert" "top" {
  display_name = "every-kind-top"
  query_id     = databricks_query.top.id
  condition {
    op = "GREATER_THAN"
    operand {
      column {
        name = "value"
      }
    }
    threshold {
      value {
        double_value = 41
      }
    }
  }
}

resource "databricks_dashboard" "top" {
  display_name         = "every-kind-top"
  warehouse_id         = databricks_sql_endpoint.bi.id
  parent_path          = "/Shared"
  serialized_dashboard = jsonencode({ pages = [{ name = "p", displayName = "Top" }] })
}

resource "databricks_instance_pool" "warm" {
  instance_pool_name                    = "every-kind-warm"
  node_type_id                          = "i3.xlarge"
  idle_instance_autotermination_minutes = 10
}

resource "databricks_mlflow_experiment" "runs" {
  name        = "${data.databricks_current_user.me.home}/every-kind-runs"
  description = "every kind"
  tags {
    key   = "team"
    value = "ml"
  }
}

resource "databricks_mlflow_model" "churn" {
  name        = "every-kind-churn"
  description = "every kind"
  tags {
    key   = "team"
    value = "ml"
  }
}

data "databricks_mlflow_experiment" "runs" {
  experiment_id = databricks_mlflow_experiment.runs.id
}

data "databricks_mlflow_model" "churn" {
  name = databricks_mlflow_model.churn.name
}

resource "databricks_permissions" "runs" {
  experiment_id = databricks_mlflow_experiment.runs.id
  access_control {
    group_name       = "users"
    permission_level = "CAN_READ"
  }
}

resource "databricks_permissions" "churn" {
  registered_model_id = databricks_mlflow_model.churn.registered_model_id
  access_control {
    group_name       = "users"
    permission_level = "CAN_MANAGE_STAGING_VERSIONS"
  }
}

resource "databricks_cluster" "shared" {
  cluster_name            = "every-kind-shared"
  spark_version           = data.databricks_spark_version.lts.id
  node_type_id            = data.databricks_node_type.smallest.id
  autotermination_minutes = 20
  is_pinned               = true
  library {
    pypi {
      package = "requests==2.32.3"
    }
  }
}

data "databricks_cluster" "shared" {
  cluster_id = databricks_cluster.shared.id
}

data "databricks_clusters" "every_kind" {
  cluster_name_contains = "EVERY-KIND"
  depends_on            = [databricks_cluster.shared]
}

resource "databricks_permissions" "shared_cluster" {
  cluster_id = databricks_cluster.shared.id
  access_control {
    group_name       = "users"
    permission_level = "CAN_RESTART"
  }
}

resource "databricks_secret" "token" {
  scope        = databricks_secret_scope.app.name
  key          = "token"
  string_value = "local-only"
}

data "databricks_schemas" "all" {
  catalog_name = databricks_catalog.main.name
  depends_on   = [databricks_schema.raw]
}

data "databricks_tables" "raw" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.raw.name
}

data "databricks_views" "raw" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.raw.name
}

resource "databricks_registered_model" "churn" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.raw.name
  name         = "churn"
}

data "databricks_registered_model" "churn" {
  full_name       = databricks_registered_model.churn.id
  include_aliases = true
}

resource "databricks_grants" "churn" {
  model = databricks_registered_model.churn.id
  grant {
    principal  = "account users"
    privileges = ["EXECUTE"]
  }
}

data "databricks_volumes" "raw" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.raw.name
  name_regex   = "^land"
  depends_on   = [databricks_volume.landing]
}

data "databricks_volume_directory" "landing" {
  path       = "${databricks_volume.landing.volume_path}/in"
  depends_on = [databricks_file.csv]
}

resource "databricks_grants" "raw" {
  schema = databricks_schema.raw.full_name
  grant {
    principal  = "account users"
    privileges = ["USE_SCHEMA", "SELECT"]
  }
}

resource "databricks_grant" "sqlserver" {
  foreign_connection = databricks_connection.sqlserver.name
  principal          = "account users"
  privileges         = ["USE_CONNECTION"]
}

resource "databricks_permissions" "nightly" {
  job_id = databricks_job.nightly.id
  access_control {
    group_name       = "users"
    permission_level = "CAN_VIEW"
  }
}

resource "databricks_secret_acl" "readers" {
  scope      = databricks_secret_scope.app.name
  principal  = "users"
  permission = "READ"
}

resource "databricks_group" "eng" {
  display_name         = "every-kind-eng"
  allow_cluster_create = true
}

resource "databricks_user" "ann" {
  user_name = "every.kind@example.com"
}

resource "databricks_service_principal" "ci" {
  display_name = "every-kind-ci"
}

resource "databricks_group_member" "ann" {
  group_id  = databricks_group.eng.id
  member_id = databricks_user.ann.id
}

data "databricks_group" "admins" {
  display_name = "admins"
}

# The same entitlement as the group itself declares: the two agree, so neither drifts.
resource "databricks_entitlements" "eng" {
  group_id             = databricks_group.eng.id
  allow_cluster_create = true
}

data "databricks_user" "me" {
  user_name = data.databricks_current_user.me.user_name
}

data "databricks_service_principal" "ci" {
  application_id = databricks_service_principal.ci.application_id
}
"#;

/// `(mode, type, name)` of every `resource` and `data` block of a configuration text.
fn blocks(text: &str) -> Vec<(&'static str, String, String)> {
    text.lines()
        .filter_map(|l| {
            let (mode, rest) = if let Some(r) = l.strip_prefix("resource ") {
                ("resource", r)
            } else {
                ("data", l.strip_prefix("data ")?)
            };
            let mut labels = rest.split('"').filter(|s| !s.trim().is_empty());
            let t = labels.next()?.to_string();
            let n = labels.next()?.to_string();
            Some((mode, t, n))
        })
        .collect()
}

/// An output for every computed attribute of every block, from the schemas the binary
/// prints; `(output name, attribute)` for each.
fn outputs(schema: &Value, blocks: &[(&str, String, String)]) -> (String, Vec<(String, String)>) {
    let mut text = String::new();
    let mut names = Vec::new();
    for (mode, t, n) in blocks {
        let (section, prefix) = match *mode {
            "resource" => ("resources", String::new()),
            _ => ("data_sources", "data.".to_string()),
        };
        let attrs = schema[section][t]["attributes"]
            .as_object()
            .unwrap_or_else(|| panic!("{section} {t} is not in `brickform schema`"));
        for (a, spec) in attrs {
            if spec["presence"] != "computed" {
                continue;
            }
            let output = format!("{}{t}__{n}__{a}", prefix.replace('.', "_"));
            let sensitive = if spec["sensitive"] == true {
                "\n  sensitive = true"
            } else {
                ""
            };
            text.push_str(&format!(
                "output \"{output}\" {{\n  value = {prefix}{t}.{n}.{a}{sensitive}\n}}\n\n"
            ));
            names.push((output, format!("{prefix}{t}.{n}.{a}")));
        }
    }
    (text, names)
}

fn plan_is_empty(d: &Path, when: &str) {
    let (code, out, err) = run(d, &["plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "plan after {when} is not empty\n{out}\n{err}");
    assert!(out.contains("No changes."), "{out}");
}

#[test]
fn every_computed_attribute_of_every_kind_reads_as_a_value_or_null() {
    let dir = config(&[("main.bf.hcl", EVERY_KIND)]);
    let d = dir.path();
    let schema: Value = serde_json::from_str(&run_ok(d, &["schema"], &[])).unwrap();
    let blocks = blocks(EVERY_KIND);

    // Every kind and data source the binary ships is in the configuration.
    for (section, mode) in [("resources", "resource"), ("data_sources", "data")] {
        let shipped: BTreeSet<&String> = schema[section].as_object().unwrap().keys().collect();
        let configured: BTreeSet<&String> = blocks
            .iter()
            .filter(|(m, _, _)| *m == mode)
            .map(|(_, t, _)| t)
            .collect();
        let missing: Vec<&&String> = shipped.difference(&configured).collect();
        assert!(
            missing.is_empty(),
            "add a {mode} of {missing:?} to EVERY_KIND, so its computed attributes are read"
        );
    }
    let (text, names) = outputs(&schema, &blocks);
    assert!(names.len() > 50, "{names:?}");
    std::fs::write(d.join("outputs.bf.hcl"), &text).unwrap();

    let out = run_ok(d, &["apply", "--auto-approve"], &[]);
    assert!(out.contains("Apply complete!"), "{out}");
    plan_is_empty(d, "the first apply");

    // Every output was recorded, as a value or as null; the variants the service answers
    // with fewer attributes read as null.
    let got: Value = serde_json::from_str(&run_ok(d, &["output", "--json"], &[])).unwrap();
    for (output, attribute) in &names {
        assert!(got.get(output).is_some(), "{attribute}: no output\n{got}");
    }
    let value = |o: &str| got[o]["value"].clone();
    for null in [
        "databricks_connection__hms__url",
        "databricks_connection__hms__credential_type",
        "databricks_catalog__foreign__storage_location",
        "data_databricks_catalog__foreign__storage_location",
        "data_databricks_connection__hms__url",
    ] {
        assert_eq!(value(null), Value::Null, "{null}\n{got}");
    }
    assert_eq!(
        value("databricks_catalog__foreign__catalog_type"),
        "FOREIGN_CATALOG"
    );
    // A registered model read by its full name, as the Terraform provider answers it.
    assert_eq!(
        value("data_databricks_registered_model__churn__model_info")[0]["full_name"],
        "every_kind.raw.churn",
        "{got}"
    );
    assert_eq!(
        value("databricks_connection__sqlserver__credential_type"),
        "USERNAME_PASSWORD"
    );
    // How cluster configuration refers to a secret, as the Terraform provider forms it.
    assert_eq!(
        value("databricks_secret__token__config_reference"),
        "{{secrets/every-kind/token}}",
        "{got}"
    );
    // A job's URL is its page, as the Terraform provider forms it; a local workspace, whose
    // address changes with every command, is named as the configuration names it.
    let job_id = value("databricks_job__nightly__id");
    assert_eq!(
        value("databricks_job__nightly__url"),
        format!("local/#job/{}", job_id.as_str().unwrap()),
        "{got}"
    );
    // A cluster is RUNNING after its create, pinned, its page as the Terraform provider
    // forms it; the data sources find it by id and by part of its name.
    let cluster_id = value("databricks_cluster__shared__id");
    let cluster_id = cluster_id.as_str().unwrap();
    assert_eq!(
        value("databricks_cluster__shared__state"),
        "RUNNING",
        "{got}"
    );
    assert_eq!(
        value("databricks_cluster__shared__url"),
        format!("local/#setting/clusters/{cluster_id}/configuration"),
        "{got}"
    );
    assert_eq!(
        value("data_databricks_cluster__shared__cluster_info")[0]["cluster_name"],
        "every-kind-shared",
        "{got}"
    );
    assert_eq!(
        value("data_databricks_clusters__every_kind__ids"),
        serde_json::json!([cluster_id]),
        "{got}"
    );
    // Listed by a part of its name in another case, the warehouse is the one made.
    assert_eq!(
        value("data_databricks_sql_warehouses__every_kind__ids"),
        serde_json::json!([value("databricks_sql_endpoint__bi__id")]),
        "{got}"
    );
    assert_eq!(
        value("databricks_permissions__shared_cluster__id"),
        format!("/clusters/{cluster_id}"),
        "{got}"
    );
    // A Git folder made without a path is in the caller's folder of /Repos, named after
    // its repository; its permissions are on its id.
    let repo_path = value("databricks_repo__code__workspace_path");
    assert!(
        repo_path
            .as_str()
            .is_some_and(|p| p.starts_with("/Workspace/Repos/") && p.ends_with("/every-kind")),
        "{got}"
    );
    assert_eq!(
        value("databricks_repo__code__commit_hash")
            .as_str()
            .map(str::len),
        Some(40),
        "{got}"
    );
    assert_eq!(
        value("databricks_permissions__code_repo__id"),
        format!(
            "/repos/{}",
            value("databricks_repo__code__id").as_str().unwrap()
        ),
        "{got}"
    );
    // Permissions and secret ACLs are named as the Terraform provider names them.
    assert_eq!(value("databricks_permissions__nightly__object_type"), "job");
    assert_eq!(
        value("databricks_permissions__nightly__id"),
        format!("/jobs/{}", job_id.as_str().unwrap()),
        "{got}"
    );
    assert_eq!(
        value("databricks_secret_acl__readers__id"),
        "every-kind|||users",
        "{got}"
    );
    // A workspace object's page, path on the workspace file system and id, as the
    // Terraform provider exports them.
    let notebook = value("databricks_notebook__etl__id");
    let notebook = notebook.as_str().unwrap();
    assert_eq!(
        value("databricks_notebook__etl__url"),
        format!("local/#workspace{notebook}"),
        "{got}"
    );
    assert_eq!(
        value("databricks_notebook__etl__workspace_path"),
        format!("/Workspace{notebook}"),
        "{got}"
    );
    for o in [
        "databricks_notebook__etl__object_id",
        "databricks_workspace_file__conf__object_id",
    ] {
        assert!(value(o).as_i64().is_some_and(|id| id > 0), "{o}: {got}");
    }
    for o in [
        "databricks_job__nightly__url",
        "databricks_pipeline__bronze__url",
        "databricks_workspace_file__conf__url",
    ] {
        assert!(
            value(o).as_str().is_some_and(|u| !u.is_empty()),
            "{o}: {got}"
        );
    }

    // A state written before an attribute existed (or by a kind that never set it): the
    // reference reads null; plan and destroy go on.
    let state_path = d.join(".brickform/state/default.json");
    let mut state: Value =
        serde_json::from_str(&std::fs::read_to_string(&state_path).unwrap()).unwrap();
    for r in state["resources"].as_array_mut().unwrap() {
        if r["address"] == "databricks_job.nightly" {
            r["computed"].as_object_mut().unwrap().remove("url");
        }
    }
    std::fs::write(&state_path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    let (code, out, err) = run(d, &["plan", "--refresh=false"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    plan_is_empty(d, "the state lost an attribute");

    let out = run_ok(d, &["destroy", "--auto-approve"], &[]);
    assert!(out.contains(", 0 left behind."), "{out}");
    assert_eq!(objects(&local_dump(d)), Vec::<String>::new());
    // The pinned cluster was unpinned and deleted permanently.
    assert_eq!(local_dump(d)["clusters"], serde_json::json!({}));
}
