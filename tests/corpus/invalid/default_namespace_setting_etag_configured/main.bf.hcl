provider "databricks" {
  host = "local"
}

resource "databricks_default_namespace_setting" "ns" {
  namespace {
    value = "main"
  }
  etag = "abc"
}
