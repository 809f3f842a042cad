variable "catalog" { type = string }

resource "databricks_schema" "s" {
  catalog_name = var.catalgo
  name         = "raw"
}
