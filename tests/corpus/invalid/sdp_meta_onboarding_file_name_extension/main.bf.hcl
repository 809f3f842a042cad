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

resource "sdp_meta_onboarding" "a1" {
  volume_path = "/Volumes/main/specs/conf"
  file_name   = "flows.txt"
  env         = "prod"
  database    = "main.specs"
  flows       = [sdp_meta_flow.orders]
}
