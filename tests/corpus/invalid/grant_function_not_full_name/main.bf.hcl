provider "databricks" {
  host = "local"
}

resource "databricks_grant" "udf" {
  function   = "main.udf"
  principal  = "account users"
  privileges = ["EXECUTE"]
}
