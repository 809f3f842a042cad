provider "databricks" {
  host = "local"
}

resource "databricks_repo" "demo" {
  url = "https://github.com/user/demo.git"
}

resource "databricks_permissions" "demo" {
  repo_id = databricks_repo.demo.id

  access_control {
    group_name       = "users"
    permission_level = "CAN_USE"
  }
}
