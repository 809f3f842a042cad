provider "databricks" {
  host = "local"
}

resource "databricks_permissions" "nightly" {
  job_id = "123"

  access_control {
    group_name       = "users"
    permission_level = "CAN_VIEW"
  }
  access_control {
    group_name       = "data-engineers"
    permission_level = "CAN_RUN"
  }
}
