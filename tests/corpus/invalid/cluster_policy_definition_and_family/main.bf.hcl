provider "databricks" {
  host = "local"
}

resource "databricks_cluster_policy" "personal" {
  name             = "personal"
  definition       = jsonencode({ "autotermination_minutes" = { "type" = "fixed", "value" = 20 } })
  policy_family_id = "personal-vm"
}
