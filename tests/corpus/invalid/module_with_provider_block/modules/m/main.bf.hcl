provider "databricks" {
  host = "https://example.cloud.databricks.com"
}
