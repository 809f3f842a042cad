provider "databricks" {
  host = "local"
}

resource "databricks_permissions" "shared" {
  access_control {
    group_name       = "users"
    permission_level = "CAN_READ"
  }
}
