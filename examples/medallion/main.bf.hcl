# A shipment-events lakehouse: files land in a volume, three Lakeflow pipelines refine them
# bronze -> silver -> gold, and one nightly job runs the layers in order, alerts when silver
# fails and always tells ops how the night went. See README.md.

provider "databricks" {
  # The built-in local workspace; put your workspace URL here (or drop the line and set
  # DATABRICKS_HOST) to deploy for real.
  host = "local"
}

# `brickform --env prod …` selects prod; without --env the dev environment is used. Each
# environment has its own state and its own catalog (shipments_dev, shipments_prod).
environment "dev" {
  default = true
}

environment "prod" {
  variables = {
    ops_email   = "shipments-oncall@example.com"
    ops_channel = "#shipments-ops"
  }
}

variable "ops_email" {
  type    = string
  default = "shipments-dev@example.com"
}

variable "ops_channel" {
  type    = string
  default = "#shipments-dev"
}

locals {
  env     = brickform.environment
  catalog = "shipments_${brickform.environment}"
  # Only production runs on the nightly schedule; other environments run on demand.
  schedule_pause = brickform.environment == "prod" ? "UNPAUSED" : "PAUSED"
}

# ---------------------------------------------------------------- Unity Catalog

resource "databricks_catalog" "shipments" {
  name    = local.catalog
  comment = "Shipment events lakehouse (${local.env}), managed by brickform"
}

resource "databricks_schema" "bronze" {
  catalog_name = databricks_catalog.shipments.name
  name         = "bronze"
  comment      = "Raw shipment events as they landed"
}

resource "databricks_schema" "silver" {
  catalog_name = databricks_catalog.shipments.name
  name         = "silver"
  comment      = "Validated shipment events"
}

resource "databricks_schema" "gold" {
  catalog_name = databricks_catalog.shipments.name
  name         = "gold"
  comment      = "Delivery performance for reporting"
}

# Carriers drop JSON files of shipment events here.
resource "databricks_volume" "landing" {
  catalog_name = databricks_schema.bronze.catalog_name
  schema_name  = databricks_schema.bronze.name
  name         = "landing"
  volume_type  = "MANAGED"
  comment      = "Shipment event files from the carriers"
}

# A sample drop, so the first run has something to ingest.
resource "databricks_file" "sample_events" {
  path   = "${databricks_volume.landing.volume_path}/shipment_events/2024-06-04.json"
  source = "data/shipment_events.json"
}

# ---------------------------------------------------------------- source code

data "databricks_current_user" "me" {}

locals {
  code_root = "${data.databricks_current_user.me.home}/shipments_${local.env}"
}

resource "databricks_workspace_file" "bronze" {
  path   = "${local.code_root}/pipelines/bronze.sql"
  source = "src/pipelines/bronze.sql"
}

resource "databricks_workspace_file" "silver" {
  path   = "${local.code_root}/pipelines/silver.sql"
  source = "src/pipelines/silver.sql"
}

resource "databricks_workspace_file" "gold" {
  path   = "${local.code_root}/pipelines/gold.sql"
  source = "src/pipelines/gold.sql"
}

resource "databricks_notebook" "alert_on_failure" {
  path   = "${local.code_root}/notebooks/alert_on_failure.py"
  source = "src/notebooks/alert_on_failure.py"
}

resource "databricks_notebook" "notify_ops" {
  path   = "${local.code_root}/notebooks/notify_ops.py"
  source = "src/notebooks/notify_ops.py"
}

# ---------------------------------------------------------------- pipelines

# One pipeline per layer, so the job can run (and a failure can stop) each layer on its own.

resource "databricks_pipeline" "bronze" {
  name       = "shipments-bronze-${local.env}"
  catalog    = databricks_catalog.shipments.name
  schema     = databricks_schema.bronze.name
  serverless = true

  configuration = {
    landing_path = "${databricks_volume.landing.volume_path}/shipment_events/"
  }

  library {
    file {
      path = databricks_workspace_file.bronze.path
    }
  }

  tags = {
    layer = "bronze"
  }
}

resource "databricks_pipeline" "silver" {
  name       = "shipments-silver-${local.env}"
  catalog    = databricks_catalog.shipments.name
  schema     = databricks_schema.silver.name
  serverless = true

  configuration = {
    bronze_table = "${databricks_schema.bronze.full_name}.shipment_events_raw"
  }

  library {
    file {
      path = databricks_workspace_file.silver.path
    }
  }

  tags = {
    layer = "silver"
  }
}

resource "databricks_pipeline" "gold" {
  name       = "shipments-gold-${local.env}"
  catalog    = databricks_catalog.shipments.name
  schema     = databricks_schema.gold.name
  serverless = true

  configuration = {
    silver_table = "${databricks_schema.silver.full_name}.shipment_events"
  }

  library {
    file {
      path = databricks_workspace_file.gold.path
    }
  }

  tags = {
    layer = "gold"
  }
}

# ---------------------------------------------------------------- the nightly job

resource "databricks_job" "nightly" {
  name        = "shipments-nightly-${local.env}"
  description = "bronze -> silver -> gold; alert when silver fails; always notify ops"

  schedule {
    quartz_cron_expression = "0 30 2 * * ?"
    timezone_id            = "Europe/Berlin"
    pause_status           = local.schedule_pause
  }

  email_notifications {
    on_failure = [var.ops_email]
  }

  task {
    task_key = "bronze"
    pipeline_task {
      pipeline_id = databricks_pipeline.bronze.id
    }
  }

  task {
    task_key = "silver"
    depends_on {
      task_key = "bronze"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.silver.id
    }
  }

  task {
    task_key = "gold"
    depends_on {
      task_key = "silver"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.gold.id
    }
  }

  # Only when silver failed: gold was not refreshed, somebody should look.
  task {
    task_key = "alert_on_failure"
    run_if   = "AT_LEAST_ONE_FAILED"
    depends_on {
      task_key = "silver"
    }
    notebook_task {
      notebook_path = databricks_notebook.alert_on_failure.id
      base_parameters = {
        job_name = "shipments-nightly-${local.env}"
        run_id   = "{{job.run_id}}"
        channel  = var.ops_channel
      }
    }
  }

  # After gold, whatever happened to it (succeeded, failed, or skipped because silver failed).
  task {
    task_key = "notify_ops"
    run_if   = "ALL_DONE"
    depends_on {
      task_key = "gold"
    }
    notebook_task {
      notebook_path = databricks_notebook.notify_ops.id
      base_parameters = {
        job_name   = "shipments-nightly-${local.env}"
        run_id     = "{{job.run_id}}"
        channel    = var.ops_channel
        gold_table = "${databricks_schema.gold.full_name}.carrier_daily_performance"
      }
    }
  }

  tags = {
    domain = "shipments"
  }
}

output "landing_path" {
  value = "${databricks_volume.landing.volume_path}/shipment_events/"
}

output "job_id" {
  value = databricks_job.nightly.id
}

output "schedule" {
  value = "${databricks_job.nightly.schedule.quartz_cron_expression} ${databricks_job.nightly.schedule.timezone_id} (${databricks_job.nightly.schedule.pause_status})"
}
