# One configuration, two environments: dev (development mode, on one local workspace) and
# prod (production mode, protected, on another). `brickform promote --from dev --to prod`
# plans prod and shows every place where the two resolved configurations differ, and why.
# See README.md.

provider "databricks" {
  host = "local"
}

environment "dev" {
  default        = true
  mode           = "development"
  prefix_schemas = true
  variables = {
    catalog   = "orders_dev"
    ops_email = "orders-dev@example.com"
  }
  provider "databricks" {
    host = "local:dev"
  }
}

environment "prod" {
  mode    = "production"
  protect = true
  variables = {
    catalog   = "orders_prod"
    ops_email = "orders-oncall@example.com"
  }
  provider "databricks" {
    host = "local:prod"
  }
}

variable "catalog" {
  type = string
}

variable "ops_email" {
  type = string
}

resource "databricks_catalog" "orders" {
  name          = var.catalog
  comment       = "Orders lakehouse, managed by brickform"
  force_destroy = true
}

resource "databricks_schema" "bronze" {
  catalog_name = databricks_catalog.orders.name
  name         = "bronze"
}

resource "databricks_schema" "silver" {
  catalog_name = databricks_catalog.orders.name
  name         = "silver"
}

resource "databricks_volume" "landing" {
  catalog_name = databricks_catalog.orders.name
  schema_name  = databricks_schema.bronze.name
  name         = "landing"
  volume_type  = "MANAGED"
}

data "databricks_current_user" "me" {}

resource "databricks_workspace_file" "refine" {
  path   = "${data.databricks_current_user.me.home}/orders_${brickform.environment}/refine.sql"
  source = "src/refine.sql"
}

resource "databricks_pipeline" "refine" {
  name       = "orders-refine"
  catalog    = databricks_catalog.orders.name
  schema     = databricks_schema.silver.name
  serverless = true

  configuration = {
    landing = databricks_volume.landing.volume_path
    bronze  = databricks_schema.bronze.name
  }

  library {
    file {
      path = databricks_workspace_file.refine.path
    }
  }
}

resource "databricks_job" "nightly" {
  name = "orders-nightly"

  schedule {
    quartz_cron_expression = "0 0 3 * * ?"
    timezone_id            = "UTC"
  }

  email_notifications {
    on_failure = [var.ops_email]
  }

  task {
    task_key = "refine"
    pipeline_task {
      pipeline_id = databricks_pipeline.refine.id
    }
  }
}

output "job_name" {
  value = databricks_job.nightly.name
}
