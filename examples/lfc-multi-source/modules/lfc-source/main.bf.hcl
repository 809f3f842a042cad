# One source database replicated by Lakeflow Connect: its connection, the schema its tables
# land in (where the gateway also keeps its staging volume), the gateway that reads the
# database's change log, and the ingestion pipeline that applies it.

variable "name" {
  type        = string
  description = "The source's short name, part of every object's name."
}

variable "catalog" {
  type        = string
  description = "The catalog the destination schema goes in."
}

variable "connection_type" {
  type = string
  validation {
    condition     = contains(["SQLSERVER", "MYSQL", "POSTGRESQL"], var.connection_type)
    error_message = "This module replicates SQLSERVER, MYSQL or POSTGRESQL databases."
  }
}

variable "host" {
  type = string
}

variable "port" {
  type = number
}

variable "user" {
  type = string
}

variable "password" {
  type      = string
  sensitive = true
}

variable "source_database" {
  type        = string
  description = "The database (catalog) to read; null for MySQL, which has none."
  default     = null
}

variable "source_schema" {
  type = string
}

variable "tables" {
  type        = list(string)
  description = "The tables of source_schema to replicate."
}

variable "scd_type" {
  type    = string
  default = "SCD_TYPE_1"
}

locals {
  prefix = "lfc_${var.name}"
}

resource "databricks_connection" "this" {
  name            = "lfc-${var.name}"
  connection_type = var.connection_type
  comment         = "Source database ${var.name}"
  options = {
    host     = var.host
    port     = tostring(var.port)
    user     = var.user
    password = var.password
  }
}

resource "databricks_schema" "dest" {
  catalog_name  = var.catalog
  name          = local.prefix
  comment       = "Lakeflow Connect destination of ${var.name}"
  force_destroy = true
}

resource "databricks_ingestion_gateway" "gw" {
  name                    = "${local.prefix}_gw"
  connection_name         = databricks_connection.this.name
  gateway_storage_catalog = var.catalog
  gateway_storage_schema  = databricks_schema.dest.name
  tags = {
    Connector = lower(var.connection_type)
  }
}

resource "databricks_ingestion_pipeline" "ig" {
  name                 = "${local.prefix}_ig"
  catalog              = var.catalog
  schema               = databricks_schema.dest.name
  serverless           = true
  ingestion_gateway_id = databricks_ingestion_gateway.gw.id

  dynamic "object" {
    for_each = var.tables
    content {
      table {
        source_catalog      = var.source_database
        source_schema       = var.source_schema
        source_table        = object.value
        destination_catalog = var.catalog
        destination_schema  = databricks_schema.dest.name
        table_configuration {
          scd_type = var.scd_type
        }
      }
    }
  }

  tags = {
    Connector = lower(var.connection_type)
  }
}

output "destination_schema" {
  value = "${var.catalog}.${databricks_schema.dest.name}"
}

output "gateway_id" {
  value = databricks_ingestion_gateway.gw.id
}

output "ingestion_pipeline_id" {
  value = databricks_ingestion_pipeline.ig.id
}
