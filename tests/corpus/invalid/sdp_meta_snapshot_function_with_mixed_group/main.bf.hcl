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
    database = "main.bronze"
    table    = "orders"
  }
}

# A file snapshot, read by the runner's bronze_next_snapshot_and_version.
resource "sdp_meta_flow" "prices" {
  data_flow_id    = "2"
  data_flow_group = "A1"

  source {
    format          = "snapshot"
    snapshot_format = "csv"
    source_path     = "/Volumes/main/landing/files/prices/"
  }

  bronze {
    database = "main.bronze"
    table    = "prices"

    apply_changes_from_snapshot {
      keys     = ["sku"]
      scd_type = "1"
    }
  }
}

# Released 0.1.0 lacks the fix for sdp-meta #268.
resource "sdp_meta_onboarding" "a1" {
  volume_path      = "/Volumes/main/specs/conf"
  env              = "prod"
  database         = "main.specs"
  flows            = [sdp_meta_flow.orders, sdp_meta_flow.prices]
  sdp_meta_version = "0.1.0"

  runner {
    bronze_snapshot_function = true
  }
}
