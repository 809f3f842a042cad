provider "databricks" {
  host = "local"
}

resource "databricks_permissions" "ingest" {
  pipeline_id = "0c5b10d7-67a7-4613-838c-8222ab1cf93b"

  access_control {
    user_name        = "alice@example.com"
    permission_level = "IS_OWNER"
  }
  access_control {
    service_principal_name = "7e1b2c3d-0000-4000-8000-00000000c1c1"
    permission_level       = "IS_OWNER"
  }
}
