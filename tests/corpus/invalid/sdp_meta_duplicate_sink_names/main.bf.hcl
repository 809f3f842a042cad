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

    sink {
      name    = "Orders_Out"
      format  = "delta"
      options = { tablename = "main.out.orders" }
    }

    # sdp-meta lower-cases sink names, so this one collides with the first.
    sink {
      name    = "orders_out"
      format  = "delta"
      options = { tablename = "main.out.orders_copy" }
    }
  }
}

resource "sdp_meta_onboarding" "a1" {
  volume_path = "/Volumes/main/specs/conf"
  env         = "prod"
  database    = "main.specs"
  flows       = [sdp_meta_flow.orders]
}
