provider "databricks" {
  host = "local"
}

resource "databricks_sql_endpoint" "bi" {
  name         = "bi"
  cluster_size = "small"
}
