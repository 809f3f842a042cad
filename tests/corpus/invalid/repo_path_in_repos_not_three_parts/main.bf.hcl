provider "databricks" {
  host = "local"
}

resource "databricks_repo" "demo" {
  url  = "https://github.com/user/demo.git"
  path = "/Repos/team/nested/demo"
}
