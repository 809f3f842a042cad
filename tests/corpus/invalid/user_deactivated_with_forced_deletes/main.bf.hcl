provider "databricks" {
  host = "local"
}

resource "databricks_user" "ann" {
  user_name                = "ann@example.com"
  disable_as_user_deletion = true
  force_delete_home_dir    = true
}
