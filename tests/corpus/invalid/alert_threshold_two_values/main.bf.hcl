provider "databricks" {
  host = "local"
}

resource "databricks_alert" "a" {
  display_name = "dropped"
  query_id     = "q"
  condition {
    op = "LESS_THAN"
    operand {
      column {
        name = "value"
      }
    }
    threshold {
      value {
        double_value = 1
        string_value = "1"
      }
    }
  }
}
