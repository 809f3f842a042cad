provider "databricks" {
  host = "local"
}

resource "databricks_sql_endpoint" "bi" {
  name           = "bi"
  cluster_size   = "Small"
  auto_stop_mins = 5
}
