provider "databricks" {
  host = "local"
}

resource "databricks_metastore_assignment" "this" {
  workspace_id = 1234567890123456
}
