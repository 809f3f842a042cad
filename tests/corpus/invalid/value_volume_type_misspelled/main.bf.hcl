provider "databricks" {
  host = "local"
}

resource "databricks_volume" "landing" {
  catalog_name = "main"
  schema_name  = "raw"
  name         = "landing"
  volume_type  = "MANAGD"
}
