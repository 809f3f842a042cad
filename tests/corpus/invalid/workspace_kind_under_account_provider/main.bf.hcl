provider "databricks" {
  host = "local"
}

provider "databricks" {
  alias      = "account"
  host       = "https://accounts.cloud.databricks.com"
  account_id = "00000000-0000-0000-0000-000000000000"
}

resource "databricks_group" "ok" {
  provider     = databricks.account
  display_name = "data-eng"
}

resource "databricks_catalog" "c" {
  provider = databricks.account
  name     = "sales"
}
