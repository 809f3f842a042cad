provider "databricks" {
  host = "local"
}

resource "sdp_meta_flow" "orders" {
  data_flow_id    = "1"
  data_flow_group = "A1"

  source {
    format          = "snapshot"
    snapshot_format = "delta"
    table           = "main.raw.orders"
  }

  bronze {
    database = "main.bronze"
    table    = "orders"

    apply_changes_from_snapshot {
      keys     = ["order_id"]
      scd_type = "1"
    }
  }
}

# Released 0.1.0 lacks the fix for sdp-meta #266.
resource "sdp_meta_onboarding" "a1" {
  volume_path      = "/Volumes/main/specs/conf"
  env              = "prod"
  database         = "main.specs"
  flows            = [sdp_meta_flow.orders]
  sdp_meta_version = "0.1.0"
}
