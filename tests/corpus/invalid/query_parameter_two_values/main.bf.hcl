provider "databricks" {
  host = "local"
}

resource "databricks_query" "q" {
  display_name = "daily"
  warehouse_id = "0123456789abcdef"
  query_text   = "select {{p}}"
  parameter {
    name = "p"
    text_value {
      value = "x"
    }
    numeric_value {
      value = 1
    }
  }
}
