provider "databricks" {
  host = "local"
}

resource "databricks_ingestion_pipeline" "ig" {
  name                 = "ig"
  catalog              = "main"
  schema               = "lfc"
  ingestion_gateway_id = "gw-1"

  object {
    table {
      source_catalog      = "sales"
      source_schema       = "dbo"
      source_table        = "orders"
      destination_catalog = "main"
      destination_schema  = "lfc"
      table_configuration {
        scd_type = "SCD_TYPE_3"
      }
    }
  }
}
