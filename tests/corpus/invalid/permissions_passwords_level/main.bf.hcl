provider "databricks" {
  host = "local"
}

resource "databricks_permissions" "passwords" {
  authorization = "passwords"
  access_control {
    group_name       = "users"
    permission_level = "CAN_MANAGE"
  }
}
