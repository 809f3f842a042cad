provider "databricks" {
  host = "local"
}

resource "databricks_workspace_conf" "security" {
  custom_config = {
    enableIpAccessLists = true
  }
}

resource "databricks_workspace_conf" "tokens" {
  custom_config = {
    enableTokensConfig  = true
    enableIpAccessLists = false
  }
}
