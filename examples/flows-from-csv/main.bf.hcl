# 200 tables onboarded with sdp-meta from one CSV file: each row of flows.csv becomes an
# sdp_meta_flow, one onboarding file holds them all, and each of the two groups (retail,
# finance) gets its own bronze and silver pipeline. Adding a row to the CSV plans exactly one
# new flow and an update of the onboarding file showing the added entry. See README.md.

provider "databricks" {
  host = "local"
}

variable "catalog" {
  type    = string
  default = "csv_flows"
}

locals {
  env   = "dev"
  flows = { for row in csvdecode(file("flows.csv")) : row.id => row }
  # group -> layer, one pipeline each.
  pipelines = {
    for pair in setproduct(distinct([for f in local.flows : f.group]), ["bronze", "silver"]) :
    "${pair[0]}_${pair[1]}" => { group = pair[0], layer = pair[1] }
  }
}

resource "databricks_catalog" "main" {
  name          = var.catalog
  force_destroy = true
}

resource "databricks_schema" "layer" {
  for_each      = toset(["raw", "bronze", "silver", "specs"])
  catalog_name  = databricks_catalog.main.name
  name          = each.key
  force_destroy = true
}

# Where the retail files land, and where the onboarding files go.
resource "databricks_volume" "landing" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.layer["raw"].name
  name         = "landing"
  volume_type  = "MANAGED"
}

resource "databricks_volume" "conf" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.layer["specs"].name
  name         = "sdp_meta"
  volume_type  = "MANAGED"
}

resource "sdp_meta_flow" "table" {
  for_each        = local.flows
  data_flow_id    = each.key
  data_flow_group = each.value.group

  source {
    format = each.value.format
    # cloudFiles rows name a folder of the landing volume, delta rows a raw table.
    source_path = each.value.format == "cloudFiles" ? "${databricks_volume.landing.volume_path}/${each.value.source}" : null
    table       = each.value.format == "delta" ? "${databricks_catalog.main.name}.${each.value.source}" : null
  }

  bronze {
    database          = "${databricks_catalog.main.name}.${databricks_schema.layer["bronze"].name}"
    table             = each.value.table
    reader_options    = each.value.format == "cloudFiles" ? { "cloudFiles.format" = "json" } : null
    partition_columns = each.value.partition_columns == "" ? null : split(";", each.value.partition_columns)
  }

  silver {
    database = "${databricks_catalog.main.name}.${databricks_schema.layer["silver"].name}"
    table    = each.value.table

    cdc_apply_changes {
      keys        = [each.value.keys]
      sequence_by = "_ingested_at"
      scd_type    = "1"
    }
  }
}

resource "sdp_meta_onboarding" "all" {
  volume_path      = databricks_volume.conf.volume_path
  env              = local.env
  flows            = values(sdp_meta_flow.table)
  database         = "${databricks_catalog.main.name}.${databricks_schema.layer["specs"].name}"
  sdp_meta_version = "0.1.0"
  dependency       = "databricks-labs-sdp-meta==0.1.0"
}

resource "databricks_notebook" "runner" {
  path   = "${data.databricks_current_user.me.home}/csv_flows/init_sdp_meta_pipeline.py"
  source = "src/init_sdp_meta_pipeline.py"
}

data "databricks_current_user" "me" {}

resource "databricks_pipeline" "layer" {
  for_each    = local.pipelines
  name        = "csv-flows-${each.value.group}-${each.value.layer}"
  catalog     = databricks_catalog.main.name
  schema      = databricks_schema.layer[each.value.layer].name
  serverless  = true
  development = true

  configuration = sdp_meta_onboarding.all.pipeline_configuration[each.value.group][each.value.layer]

  library {
    notebook {
      path = databricks_notebook.runner.id
    }
  }
}

# Onboarding, then each group's bronze and silver.
resource "databricks_job" "refresh" {
  name = "csv-flows-refresh"

  environment {
    environment_key = "sdp_meta"
    spec {
      client       = "1"
      dependencies = [sdp_meta_onboarding.all.dependency]
    }
  }

  task {
    task_key        = "onboarding"
    environment_key = "sdp_meta"
    python_wheel_task {
      package_name     = "databricks_labs_sdp_meta"
      entry_point      = "run"
      named_parameters = sdp_meta_onboarding.all.named_parameters
    }
  }

  dynamic "task" {
    for_each = local.pipelines
    content {
      task_key = task.key
      depends_on {
        task_key = task.value.layer == "bronze" ? "onboarding" : "${task.value.group}_bronze"
      }
      pipeline_task {
        pipeline_id = databricks_pipeline.layer[task.key].id
      }
    }
  }
}

output "flows" {
  value = length(sdp_meta_flow.table)
}

output "onboarding_file" {
  value = sdp_meta_onboarding.all.onboarding_file_path
}
