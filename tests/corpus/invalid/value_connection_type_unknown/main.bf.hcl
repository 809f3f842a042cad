provider "databricks" {
  host = "local"
}

resource "databricks_connection" "sql" {
  name            = "sql"
  connection_type = "SQL_SERVER"
  options = {
    host = "db.example.com"
  }
}
