provider "databricks" {
  host = "local"
}

resource "databricks_service_principal" "ci" {
  active = true
}
