resource "databricks_pipeline" "ig" {
  name = "ig"
  ingestion_definition {
    ingestion_gateway_id = "x"
  }
}
