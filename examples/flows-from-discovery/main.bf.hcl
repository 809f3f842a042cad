# Every table Lakeflow Connect lands in the raw schema, onboarded with sdp-meta: the flows come
# from a data source listing that schema's tables, not from a list kept by hand. A table that
# lands later shows on the next plan as exactly one new flow and an update of the onboarding
# file. See README.md.
#
#   cd examples/flows-from-discovery
#   brickform apply --local --auto-approve --target databricks_ingestion_pipeline.crm
#   brickform run --local databricks_ingestion_pipeline.crm     # lands the raw tables
#   brickform apply --local --auto-approve                      # onboards them

provider "databricks" {
  host = "local"
}

variable "catalog" {
  type    = string
  default = "discovery_flows"
}

variable "source_tables" {
  type        = list(string)
  description = "The source database's tables Lakeflow Connect replicates into the raw schema."
  default     = ["accounts", "contacts", "invoices", "orders", "payments"]
}

variable "source_password" {
  type        = string
  sensitive   = true
  description = "Password of the source database user. The local workspace accepts any value."
  default     = "local-workspace-only"
}

locals {
  env   = "dev"
  group = "crm"
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

# ---------------------------------------------------------------- upstream: Lakeflow Connect

resource "databricks_connection" "crm" {
  name            = "${var.catalog}-crm"
  connection_type = "POSTGRESQL"
  options = {
    host     = "crm-db.example.com"
    port     = "5432"
    user     = "replicator"
    password = var.source_password
  }
}

resource "databricks_ingestion_gateway" "crm" {
  name                    = "${var.catalog}_crm_gw"
  connection_name         = databricks_connection.crm.name
  gateway_storage_catalog = databricks_catalog.main.name
  gateway_storage_schema  = databricks_schema.layer["raw"].name
}

# Triggered: each update (`brickform run databricks_ingestion_pipeline.crm`, or a schedule)
# lands the tables of its objects in the raw schema.
resource "databricks_ingestion_pipeline" "crm" {
  name                 = "${var.catalog}_crm_ig"
  catalog              = databricks_catalog.main.name
  schema               = databricks_schema.layer["raw"].name
  ingestion_gateway_id = databricks_ingestion_gateway.crm.id

  dynamic "object" {
    for_each = var.source_tables
    content {
      table {
        source_catalog      = "crm"
        source_schema       = "public"
        source_table        = object.value
        destination_catalog = databricks_catalog.main.name
        destination_schema  = databricks_schema.layer["raw"].name
      }
    }
  }
}

# ---------------------------------------------------------------- discovery

# What the raw schema holds when the plan is made: the tables Lakeflow Connect has landed, and
# any other team's. A table the ingestion pipeline is about to add shows on the first plan
# after an update has landed it. (A `depends_on` on the pipeline would leave the flows' keys
# unknown in every plan that changes the pipeline.)
data "databricks_tables" "raw" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.layer["raw"].name
}

# ---------------------------------------------------------------- sdp-meta

resource "databricks_volume" "conf" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.layer["specs"].name
  name         = "sdp_meta"
  volume_type  = "MANAGED"
}

# One flow per raw table, keyed by the table's name.
resource "sdp_meta_flow" "table" {
  for_each        = toset(data.databricks_tables.raw.names)
  data_flow_id    = each.key
  data_flow_group = local.group

  source {
    format = "delta"
    table  = "${databricks_catalog.main.name}.${databricks_schema.layer["raw"].name}.${each.key}"
  }

  bronze {
    database = "${databricks_catalog.main.name}.${databricks_schema.layer["bronze"].name}"
    table    = each.key
  }

  silver {
    database = "${databricks_catalog.main.name}.${databricks_schema.layer["silver"].name}"
    table    = each.key
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

data "databricks_current_user" "me" {}

resource "databricks_notebook" "runner" {
  path   = "${data.databricks_current_user.me.home}/${var.catalog}/init_sdp_meta_pipeline.py"
  source = "src/init_sdp_meta_pipeline.py"
}

resource "databricks_pipeline" "layer" {
  for_each    = toset(["bronze", "silver"])
  name        = "${var.catalog}-${each.key}"
  catalog     = databricks_catalog.main.name
  schema      = databricks_schema.layer[each.key].name
  serverless  = true
  development = true

  configuration = sdp_meta_onboarding.all.pipeline_configuration[local.group][each.key]

  library {
    notebook {
      path = databricks_notebook.runner.id
    }
  }
}

# Onboarding, then bronze, then silver.
resource "databricks_job" "refresh" {
  name = "${var.catalog}-refresh"

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

  task {
    task_key = "bronze"
    depends_on {
      task_key = "onboarding"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.layer["bronze"].id
    }
  }

  task {
    task_key = "silver"
    depends_on {
      task_key = "bronze"
    }
    pipeline_task {
      pipeline_id = databricks_pipeline.layer["silver"].id
    }
  }
}

output "flows" {
  value = sort(keys(sdp_meta_flow.table))
}
