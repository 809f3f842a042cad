provider "databricks" {
  host = "local"
}

resource "databricks_dashboard" "d" {
  display_name         = "revenue"
  warehouse_id         = "0123456789abcdef"
  parent_path          = "/Shared"
  serialized_dashboard = jsonencode({ pages = [] })
  file_path            = "revenue.lvdash.json"
}
