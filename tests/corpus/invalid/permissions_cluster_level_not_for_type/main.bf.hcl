provider "databricks" {
  host = "local"
}

resource "databricks_permissions" "shared" {
  cluster_id = "0101-000000-abcd1234"

  access_control {
    group_name       = "users"
    permission_level = "CAN_VIEW"
  }
}
