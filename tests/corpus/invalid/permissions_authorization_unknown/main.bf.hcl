provider "databricks" {
  host = "local"
}

resource "databricks_permissions" "tokens" {
  authorization = "token"
  access_control {
    group_name       = "users"
    permission_level = "CAN_USE"
  }
}
