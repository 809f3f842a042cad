provider "databricks" {
  host = "local"
}

# Sinks are kept in name order, the file has them the other way round: the finding about
# a_out must still point at a_out.
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

    sink "z_out" {
      format  = "delta"
      options = { tablename = "main.out.orders" }
    }

    sink "a_out" {
      format  = "delta"
      options = { mergeSchema = "true" }
    }
  }
}

resource "sdp_meta_onboarding" "a1" {
  volume_path = "/Volumes/main/specs/conf"
  env         = "prod"
  database    = "main.specs"
  flows       = [sdp_meta_flow.orders]
}
