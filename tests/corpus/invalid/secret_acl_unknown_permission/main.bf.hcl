provider "databricks" {
  host = "local"
}

resource "databricks_secret_acl" "readers" {
  scope      = "app"
  principal  = "data-scientists"
  permission = "read"
}
