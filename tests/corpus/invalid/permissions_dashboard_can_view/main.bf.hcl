provider "databricks" {
  host = "local"
}

resource "databricks_permissions" "d" {
  dashboard_id = "01ef0123456789abcdef0123456789ab"
  access_control {
    group_name       = "analysts"
    permission_level = "CAN_VIEW"
  }
}
