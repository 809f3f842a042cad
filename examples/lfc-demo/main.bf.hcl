# The Lakeflow Connect -> sdp-meta demo as one configuration: a SQL Server database replicated
# by Lakeflow Connect (gateway + ingestion pipeline) into a destination schema, then onboarded
# by sdp-meta into bronze and silver tables by two Lakeflow pipelines, run by one job.
#
#   brickform -C examples/lfc-demo apply --local --auto-approve     # create everything, run it
#   brickform -C examples/lfc-demo destroy --local --auto-approve   # remove all of it
#
# See README.md for the walkthrough and how to point it at a real workspace.

provider "databricks" {
  # The built-in local workspace. For a real workspace, drop this line and set DATABRICKS_HOST
  # (or a profile) and BRICKFORM_VAR_source_password.
  host = "local"
}

# Two copies of the demo side by side in one workspace: `brickform -e a …` and `-e b …`, each
# with its own state, names suffixed by its run_id, and its own catalog. Without `-e`, the
# default environment is the single demo copy.
environment "a" {
  variables = {
    run_id  = "a"
    catalog = "lfc_demo_a"
  }
}

environment "b" {
  variables = {
    run_id  = "b"
    catalog = "lfc_demo_b"
  }
}

variable "source_password" {
  type        = string
  sensitive   = true
  description = "Password of the source database user. The local workspace accepts any value; for a real workspace set BRICKFORM_VAR_source_password."
  default     = "local-workspace-only"
}

variable "source_database" {
  type        = string
  description = "The source database's kind: sqlserver, mysql or postgresql (the demo's three)."
  default     = "sqlserver"
  validation {
    condition     = contains(["sqlserver", "mysql", "postgresql"], var.source_database)
    error_message = "source_database is sqlserver, mysql or postgresql."
  }
}

variable "source_host" {
  type    = string
  default = "lfcdemo-source.example.com"
}

variable "dtix_snapshot_method" {
  type        = string
  description = "How bronze reads the table without a key (dtix) as snapshots: cdf (a function that hands over a new snapshot only when the table has a new version) or full (the built-in view, every run)."
  default     = "cdf"
  validation {
    condition     = contains(["cdf", "full"], var.dtix_snapshot_method)
    error_message = "dtix_snapshot_method is cdf or full."
  }
}

variable "silver_sequence_by" {
  type        = string
  description = "The column that orders the keyed table's (intpk) changes in silver: dt (its timestamp) or pk."
  default     = "dt"
  validation {
    condition     = contains(["dt", "pk"], var.silver_sequence_by)
    error_message = "silver_sequence_by is dt or pk."
  }
}

variable "catalog" {
  type        = string
  description = "The catalog the demo creates and removes."
  default     = "lfc_demo"
}

variable "run_id" {
  type        = string
  description = "Suffix of every name, so two copies of the demo can live side by side."
  default     = "demo"
}

variable "trigger_interval_min" {
  type        = number
  description = "How often the scheduler job runs the ingestion pipeline, in minutes."
  default     = 5
}

# The sdp-meta build the pipelines and the onboarding job install. Released 0.1.0 cannot run
# this demo (snapshot flows fail with "Snapshot reader function not provided!", and the
# intpk flow loses its input view when the runner passes a snapshot function: sdp-meta issues
# #266 and #268); the fixes live on the branch of sdp-meta PR #267, installed from git here.
# `brickform validate` checks the flows against the version named below.
variable "sdp_meta_dependency" {
  type    = string
  default = "git+https://github.com/wahajahmed010/dlt-meta.git@e17cd5c"
}

variable "sdp_meta_version" {
  type    = string
  default = "0.1.0+pr267"
}

locals {
  source_type = var.source_database
  # Each source database kind: its connection type and port, and whether its tables are
  # named with a catalog (MySQL has none).
  source = {
    sqlserver  = { connection_type = "SQLSERVER", port = "1433", catalog = "lfcdemo" }
    mysql      = { connection_type = "MYSQL", port = "3306", catalog = null }
    postgresql = { connection_type = "POSTGRESQL", port = "5432", catalog = "lfcdemo" }
  }[var.source_database]
  env   = "prod"
  group = "A1"
  # Names follow the demo's: sdp_meta_<layer>_lfc_<run_id>.
  specs_schema  = "sdp_meta_dataflowspecs_lfc_${var.run_id}"
  bronze_schema = "sdp_meta_bronze_lfc_${var.run_id}"
  silver_schema = "sdp_meta_silver_lfc_${var.run_id}"
  lfc_prefix    = "lfcdemo_${local.source_type}_${var.run_id}"
  code_root     = "${data.databricks_current_user.me.home}/sdp_meta_lfc_demo_${var.run_id}"
}

data "databricks_current_user" "me" {}

resource "databricks_catalog" "demo" {
  name          = var.catalog
  comment       = "Lakeflow Connect -> sdp-meta demo, managed by brickform"
  force_destroy = true
}

# ---------------------------------------------------------------- Lakeflow Connect

resource "databricks_connection" "source" {
  name            = "lfcdemo-${local.source_type}-${var.run_id}"
  connection_type = local.source.connection_type
  comment         = "The demo's source database"
  options = {
    host     = var.source_host
    port     = local.source.port
    user     = "lfcdemo"
    password = var.source_password
  }
}

# Where Lakeflow Connect writes the replicated tables (and the gateway its staging volume).
resource "databricks_schema" "lfc_dest" {
  catalog_name  = databricks_catalog.demo.name
  name          = local.lfc_prefix
  comment       = "Lakeflow Connect destination"
  force_destroy = true
}

resource "databricks_ingestion_gateway" "gw" {
  name                    = "${local.lfc_prefix}_gw"
  connection_name         = databricks_connection.source.name
  gateway_storage_catalog = databricks_catalog.demo.name
  gateway_storage_schema  = databricks_schema.lfc_dest.name
  tags = {
    Connector = local.source_type
  }
}

resource "databricks_ingestion_pipeline" "ig" {
  name                 = "${local.lfc_prefix}_ig"
  catalog              = databricks_catalog.demo.name
  schema               = databricks_schema.lfc_dest.name
  serverless           = true
  development          = true
  ingestion_gateway_id = databricks_ingestion_gateway.gw.id

  # PostgreSQL replicates through a logical replication slot and a publication of the
  # source tables, which the demo's setup creates on the source database.
  dynamic "source_configurations" {
    for_each = var.source_database == "postgresql" ? [local.lfc_prefix] : []
    content {
      catalog {
        source_catalog = local.source.catalog
        postgres {
          slot_config {
            slot_name        = source_configurations.value
            publication_name = "${source_configurations.value}_pub"
          }
        }
      }
    }
  }

  # A table keyed by an integer: replicated as SCD type 1 (rows updated in place).
  object {
    table {
      source_catalog      = local.source.catalog
      source_schema       = "lfcdemo"
      source_table        = "intpk"
      destination_catalog = databricks_catalog.demo.name
      destination_schema  = databricks_schema.lfc_dest.name
      table_configuration {
        scd_type = "SCD_TYPE_1"
      }
    }
  }

  # A table with history: replicated as SCD type 2 (__START_AT / __END_AT per version).
  object {
    table {
      source_catalog      = local.source.catalog
      source_schema       = "lfcdemo"
      source_table        = "dtix"
      destination_catalog = databricks_catalog.demo.name
      destination_schema  = databricks_schema.lfc_dest.name
      table_configuration {
        scd_type = "SCD_TYPE_2"
      }
    }
  }

  tags = {
    Connector = local.source_type
  }
}

# Runs the ingestion pipeline every few minutes.
resource "databricks_job" "lfc_scheduler" {
  name               = "${local.lfc_prefix}_ig_scheduler"
  performance_target = "STANDARD"

  schedule {
    quartz_cron_expression = "0 0/${var.trigger_interval_min} * * * ?"
    timezone_id            = "UTC"
  }

  task {
    task_key = "run_dlt"
    pipeline_task {
      pipeline_id = databricks_ingestion_pipeline.ig.id
    }
  }
}

# ---------------------------------------------------------------- sdp-meta

resource "databricks_schema" "specs" {
  catalog_name  = databricks_catalog.demo.name
  name          = local.specs_schema
  comment       = "sdp-meta dataflowspec tables"
  force_destroy = true
}

resource "databricks_schema" "bronze" {
  catalog_name  = databricks_catalog.demo.name
  name          = local.bronze_schema
  force_destroy = true
}

resource "databricks_schema" "silver" {
  catalog_name  = databricks_catalog.demo.name
  name          = local.silver_schema
  force_destroy = true
}

# The onboarding files live here.
resource "databricks_volume" "conf" {
  catalog_name = databricks_catalog.demo.name
  schema_name  = databricks_schema.specs.name
  name         = "${var.catalog}_lfc_volume_${var.run_id}"
  volume_type  = "MANAGED"
}

# intpk: SCD type 1 at the source, so its change feed is read and applied with AUTO CDC.
resource "sdp_meta_flow" "intpk" {
  data_flow_id    = "1"
  data_flow_group = local.group
  source_system   = local.source_type

  source {
    format          = "delta"
    ingestion_table = databricks_ingestion_pipeline.ig.table["intpk"]
  }

  bronze {
    database       = "${databricks_catalog.demo.name}.${databricks_schema.bronze.name}"
    table          = "intpk"
    reader_options = { readChangeFeed = "true" }

    cdc_apply_changes {
      keys               = ["pk"]
      sequence_by        = "_commit_version"
      scd_type           = "1"
      apply_as_deletes   = "_change_type = 'delete'"
      except_column_list = ["_change_type", "_commit_version", "_commit_timestamp"]
    }

    expectations {
      expect_or_drop = { valid_pk = "pk IS NOT NULL" }
    }

    quarantine {
      database = "${databricks_catalog.demo.name}.${databricks_schema.bronze.name}"
      table    = "intpk_quarantine"
    }
  }

  silver {
    database       = "${databricks_catalog.demo.name}.${databricks_schema.silver.name}"
    table          = "intpk"
    reader_options = { readChangeFeed = "true" }
    select_exp     = ["pk", "dt", "_change_type", "_commit_version", "_commit_timestamp"]

    cdc_apply_changes {
      keys               = ["pk"]
      sequence_by        = var.silver_sequence_by
      scd_type           = "1"
      apply_as_deletes   = "_change_type = 'delete'"
      except_column_list = ["_change_type", "_commit_version", "_commit_timestamp"]
    }

    expectations {
      expect = { valid_dt = "dt IS NOT NULL" }
    }
  }
}

# dtix: SCD type 2 at the source (its __START_AT / __END_AT columns cannot feed AUTO CDC), so
# it is read as snapshots; the runner renames those columns to lfc_start_at / lfc_end_at.
resource "sdp_meta_flow" "dtix" {
  data_flow_id    = "2"
  data_flow_group = local.group
  source_system   = local.source_type

  source {
    format          = "snapshot"
    snapshot_format = "delta"
    ingestion_table = databricks_ingestion_pipeline.ig.table["dtix"]
  }

  bronze {
    database = "${databricks_catalog.demo.name}.${databricks_schema.bronze.name}"
    table    = "dtix"

    apply_changes_from_snapshot {
      keys     = ["dt", "lfc_end_at"]
      scd_type = "1"
    }
  }

  silver {
    database = "${databricks_catalog.demo.name}.${databricks_schema.silver.name}"
    table    = "dtix"

    apply_changes_from_snapshot {
      keys     = ["dt", "lfc_end_at"]
      scd_type = "1"
    }
  }
}

resource "sdp_meta_onboarding" "a1" {
  volume_path               = databricks_volume.conf.volume_path
  env                       = local.env
  flows                     = [sdp_meta_flow.intpk, sdp_meta_flow.dtix]
  database                  = "${databricks_catalog.demo.name}.${databricks_schema.specs.name}"
  bronze_dataflowspec_table = "bronze_dataflowspec_cdc"
  silver_dataflowspec_table = "silver_dataflowspec_cdc"
  import_author             = "brickform"
  sdp_meta_version          = var.sdp_meta_version
  dependency                = var.sdp_meta_dependency

  # With the "cdf" snapshot method the runner passes a snapshot function for bronze; with
  # "full" it reads the built-in view and renames dtix's columns in a transform.
  runner {
    bronze_snapshot_function = var.dtix_snapshot_method == "cdf"
  }
}

# The demo's workspace folder; destroy removes it with everything in it.
resource "databricks_directory" "code" {
  path             = local.code_root
  delete_recursive = true
}

# The pipelines' entry point: installs sdp-meta and runs the layer named in the configuration.
resource "databricks_notebook" "runner" {
  path   = "${databricks_directory.code.path}/runners/init_sdp_meta_pipeline.py"
  source = "src/init_sdp_meta_pipeline.py"
}

resource "databricks_pipeline" "bronze" {
  name        = "sdp-meta-lfc-bronze-${var.run_id}"
  catalog     = databricks_catalog.demo.name
  schema      = databricks_schema.bronze.name
  serverless  = true
  development = true
  channel     = "PREVIEW"

  configuration = merge(sdp_meta_onboarding.a1.pipeline_configuration[local.group]["bronze"], {
    dtix_snapshot_method = var.dtix_snapshot_method
  })

  library {
    notebook {
      path = databricks_notebook.runner.id
    }
  }
}

resource "databricks_pipeline" "silver" {
  name        = "sdp-meta-lfc-silver-${var.run_id}"
  catalog     = databricks_catalog.demo.name
  schema      = databricks_schema.silver.name
  serverless  = true
  development = true
  channel     = "PREVIEW"

  configuration = sdp_meta_onboarding.a1.pipeline_configuration[local.group]["silver"]

  library {
    notebook {
      path = databricks_notebook.runner.id
    }
  }
}

# As the demo's setup does: land the source's tables (the ingestion pipeline's update), then
# onboarding (the dataflowspec tables from the files), then bronze, then silver. Bronze reads
# the replicated tables, so it cannot run before they exist.
resource "databricks_job" "downstream" {
  name = "sdp-meta-lfc-demo-${var.run_id}-downstream"

  environment {
    environment_key = "sdp_meta"
    spec {
      client       = "1"
      dependencies = [var.sdp_meta_dependency]
    }
  }

  task {
    task_key = "ingest"
    pipeline_task {
      pipeline_id = databricks_ingestion_pipeline.ig.id
    }
  }

  task {
    task_key        = "onboarding_job"
    environment_key = "sdp_meta"
    depends_on {
      task_key = "ingest"
    }
    python_wheel_task {
      package_name     = "databricks_labs_sdp_meta"
      entry_point      = "run"
      named_parameters = sdp_meta_onboarding.a1.named_parameters
    }
  }

  task {
    task_key = "bronze_dlt"
    depends_on {
      task_key = "onboarding_job"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.bronze.id
    }
  }

  task {
    task_key = "silver_dlt"
    depends_on {
      task_key = "bronze_dlt"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.silver.id
    }
  }
}

# The demo's incremental re-run: land what changed at the source, then bronze, then silver.
# Onboarding is not repeated (the dataflowspec tables are current). Run it with
# `brickform run databricks_job.incremental`.
resource "databricks_job" "incremental" {
  name = "sdp-meta-lfc-demo-${var.run_id}-incremental"

  task {
    task_key = "ingest"
    pipeline_task {
      pipeline_id = databricks_ingestion_pipeline.ig.id
    }
  }

  task {
    task_key = "bronze_dlt"
    depends_on {
      task_key = "ingest"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.bronze.id
    }
  }

  task {
    task_key = "silver_dlt"
    depends_on {
      task_key = "bronze_dlt"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.silver.id
    }
  }
}

# Runs the downstream job once after apply, and again whenever the onboarding files change.
resource "databricks_job_run" "downstream" {
  job_id = databricks_job.downstream.id
  triggers = {
    onboarding = sha256(sdp_meta_onboarding.a1.onboarding_json)
  }
}

output "onboarding_file" {
  value = sdp_meta_onboarding.a1.onboarding_file_path
}

output "dataflowspec_tables" {
  value = [sdp_meta_onboarding.a1.bronze_spec_table, sdp_meta_onboarding.a1.silver_spec_table]
}

output "downstream_run" {
  value = databricks_job_run.downstream.result_state
}
