provider "databricks" {
  host = "local"
}

resource "databricks_group" "everyone" {
  display_name = "users"
}
