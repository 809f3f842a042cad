resource "databricks_pipeline" "gw" {
  name = "gw"
  gateway_definition {
    connection_name         = "pg"
    gateway_storage_catalog = "main"
    gateway_storage_schema  = "stage"
  }
}
