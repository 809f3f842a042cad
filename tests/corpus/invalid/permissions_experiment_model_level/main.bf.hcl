provider "databricks" {
  host = "local"
}

resource "databricks_permissions" "runs" {
  experiment_id = "1234567890"
  access_control {
    group_name       = "users"
    permission_level = "CAN_MANAGE_STAGING_VERSIONS"
  }
}
