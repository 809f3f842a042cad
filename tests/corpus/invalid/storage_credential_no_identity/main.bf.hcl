provider "databricks" {
  host = "local"
}

resource "databricks_storage_credential" "none" {
  name    = "landing"
  comment = "no cloud identity"
}
