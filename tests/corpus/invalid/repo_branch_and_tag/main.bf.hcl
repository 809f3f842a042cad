provider "databricks" {
  host = "local"
}

resource "databricks_repo" "demo" {
  url    = "https://github.com/user/demo.git"
  branch = "main"
  tag    = "v1.0"
}
