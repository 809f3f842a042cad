resource "databricks_catalog" "x" {
  provider = databricks.prod
  name     = "x"
}
