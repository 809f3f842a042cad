provider "databricks" {
  host = "local"
}

resource "sdp_meta_flow" "orders" {
  data_flow_id    = "1"
  data_flow_group = "A1"

  source {
    format = "eventhub"
    eventhub {
      name               = "orders"
      port               = "9093"
      access_key_name    = "listen"
      secrets_scope_name = "eventhub"
    }
  }

  bronze {
    database = "main.bronze"
    table    = "orders"
  }
}

resource "sdp_meta_onboarding" "a1" {
  volume_path = "/Volumes/main/specs/conf"
  env         = "prod"
  database    = "main.specs"
  flows       = [sdp_meta_flow.orders]
}
