provider "databricks" {
  host = "local"
}

resource "databricks_sql_endpoint" "bi" {
  name           = "bi"
  cluster_size   = "Small"
  auto_stop_mins = 5
  # A classic warehouse: below 10 minutes is for serverless ones only.
  enable_serverless_compute = false
}
