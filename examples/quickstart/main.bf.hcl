provider "databricks" {
  host = "local"
}

variable "env" {
  default = "dev"
}

resource "databricks_catalog" "main" {
  name    = "quickstart_${var.env}"
  comment = "brickform quickstart"
}

resource "databricks_schema" "raw" {
  catalog_name = databricks_catalog.main.name
  name         = "raw"
}

resource "databricks_schema" "silver" {
  catalog_name = databricks_catalog.main.name
  name         = "silver"
}

resource "databricks_volume" "landing" {
  catalog_name = databricks_schema.raw.catalog_name
  schema_name  = databricks_schema.raw.name
  name         = "landing"
  volume_type  = "MANAGED"
}

resource "databricks_file" "sample" {
  path   = "${databricks_volume.landing.volume_path}/data.csv"
  source = "src/data.csv"
}

data "databricks_current_user" "me" {}

resource "databricks_notebook" "hello" {
  path   = "${data.databricks_current_user.me.home}/quickstart/hello.py"
  source = "src/hello.py"
}

output "volume_path" { value = databricks_volume.landing.volume_path }
