provider "databricks" {
  host = "local"
}

resource "databricks_ip_access_list" "office" {
  label        = "office"
  list_type    = "ALLOW"
  ip_addresses = ["10.0.0.0/8", "10.1.2"]
}
