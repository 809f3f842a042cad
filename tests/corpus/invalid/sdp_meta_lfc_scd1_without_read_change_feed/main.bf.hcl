provider "databricks" {
  host = "local"
}

# A Lakeflow Connect ingestion pipeline replicating one SQL Server table as SCD_TYPE_1.
resource "databricks_ingestion_pipeline" "ig" {
  name                 = "lfc_orders_ig"
  catalog              = "main"
  schema               = "lfc"
  ingestion_gateway_id = "0123-456789-gateway"

  object {
    table {
      source_catalog      = "erp"
      source_schema       = "dbo"
      source_table        = "orders"
      destination_catalog = "main"
      destination_schema  = "lfc"
      table_configuration {
        scd_type = "SCD_TYPE_1"
      }
    }
  }
}

resource "sdp_meta_flow" "orders" {
  data_flow_id    = "1"
  data_flow_group = "A1"

  source {
    format          = "delta"
    ingestion_table = databricks_ingestion_pipeline.ig.table["orders"]
  }

  bronze {
    database = "main.bronze"
    table    = "orders"

    cdc_apply_changes {
      keys             = ["order_id"]
      sequence_by      = "_commit_version"
      scd_type         = "1"
      apply_as_deletes = "_change_type = 'delete'"
    }
  }
}

resource "sdp_meta_onboarding" "a1" {
  volume_path = "/Volumes/main/specs/conf"
  env         = "prod"
  database    = "main.specs"
  flows       = [sdp_meta_flow.orders]
}
