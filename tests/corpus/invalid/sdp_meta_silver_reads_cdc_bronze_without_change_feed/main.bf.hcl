provider "databricks" {
  host = "local"
}

resource "sdp_meta_flow" "orders" {
  data_flow_id    = "1"
  data_flow_group = "A1"

  source {
    format = "delta"
    table  = "main.raw.orders"
  }

  bronze {
    database       = "main.bronze"
    table          = "orders"
    reader_options = { readChangeFeed = "true" }

    cdc_apply_changes {
      keys               = ["order_id"]
      sequence_by        = "_commit_version"
      scd_type           = "1"
      apply_as_deletes   = "_change_type = 'delete'"
      except_column_list = ["_change_type", "_commit_version", "_commit_timestamp"]
    }
  }

  silver {
    database   = "main.silver"
    table      = "orders"
    select_exp = ["order_id", "amount", "updated_at"]

    cdc_apply_changes {
      keys        = ["order_id"]
      sequence_by = "updated_at"
      scd_type    = "1"
    }
  }
}

resource "sdp_meta_onboarding" "a1" {
  volume_path = "/Volumes/main/specs/conf"
  env         = "prod"
  database    = "main.specs"
  flows       = [sdp_meta_flow.orders]
}
