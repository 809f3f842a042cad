# Three source databases replicated by Lakeflow Connect, each through the same module: a
# connection, a destination schema, a gateway and an ingestion pipeline per source. One job
# refreshes every source's ingestion pipeline.
#
#   brickform -C examples/lfc-multi-source apply --local --auto-approve
#   brickform -C examples/lfc-multi-source destroy --local --auto-approve
#
# Adding a source is one more entry in local.sources; the plan shows exactly its objects.

provider "databricks" {
  # The built-in local workspace. For a real workspace, drop this line and set
  # DATABRICKS_HOST (or a profile) and BRICKFORM_VAR_source_passwords.
  host = "local"
}

variable "catalog" {
  type        = string
  description = "The catalog the example creates and removes."
  default     = "lfc_multi"
}

variable "source_passwords" {
  type        = map(string)
  sensitive   = true
  description = "Password of each source's replication user, by source. The local workspace accepts any value."
  default = {
    sqlserver  = "local-workspace-only"
    mysql      = "local-workspace-only"
    postgresql = "local-workspace-only"
  }
}

locals {
  # One entry per source database: what kind it is, where it is and what to replicate.
  sources = {
    sqlserver = {
      connection_type = "SQLSERVER"
      host            = "sales-sqlserver.example.com"
      port            = 1433
      database        = "sales"
      schema          = "dbo"
      tables          = ["orders", "customers"]
    }
    mysql = {
      connection_type = "MYSQL"
      host            = "shop-mysql.example.com"
      port            = 3306
      database        = null
      schema          = "shop"
      tables          = ["carts"]
    }
    postgresql = {
      connection_type = "POSTGRESQL"
      host            = "billing-postgres.example.com"
      port            = 5432
      database        = "billing"
      schema          = "public"
      tables          = ["invoices", "payments"]
    }
  }
}

resource "databricks_catalog" "lake" {
  name          = var.catalog
  comment       = "Lakeflow Connect from several sources, managed by brickform"
  force_destroy = true
}

module "src" {
  source   = "./modules/lfc-source"
  for_each = local.sources

  name            = each.key
  catalog         = databricks_catalog.lake.name
  connection_type = each.value.connection_type
  host            = each.value.host
  port            = each.value.port
  user            = "lakeflow_${each.key}"
  password        = var.source_passwords[each.key]
  source_database = each.value.database
  source_schema   = each.value.schema
  tables          = each.value.tables
}

# Refreshes every source's replicated tables, one task per source.
resource "databricks_job" "refresh" {
  name = "lfc-multi-source-refresh"

  dynamic "task" {
    for_each = module.src
    content {
      task_key = "ingest_${task.key}"
      pipeline_task {
        pipeline_id = task.value.ingestion_pipeline_id
      }
    }
  }
}

output "destination_schemas" {
  description = "Where each source's tables land."
  value       = { for k, m in module.src : k => m.destination_schema }
}

output "ingestion_pipelines" {
  value = { for k, m in module.src : k => m.ingestion_pipeline_id }
}
