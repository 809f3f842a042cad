provider "databricks" {
  host = "local"
}

resource "databricks_group" "eng" {
  display_name = "eng"
}

resource "databricks_user" "ann" {
  user_name = "ann@example.com"
}

resource "databricks_entitlements" "both" {
  group_id             = databricks_group.eng.id
  user_id              = databricks_user.ann.id
  allow_cluster_create = true
}
