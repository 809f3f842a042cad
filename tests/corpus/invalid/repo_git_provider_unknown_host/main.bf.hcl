provider "databricks" {
  host = "local"
}

resource "databricks_repo" "demo" {
  url = "https://git.example.com/team/demo.git"
}
