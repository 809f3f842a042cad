provider "databricks" {
  host = "local"
}

resource "databricks_grants" "churn" {
  model = "main.ml.churn"
  grant {
    principal  = "data-scientists"
    privileges = ["EXECUTE", "SELECT"]
  }
}
