provider "databricks" {
  host = "local"
}

resource "databricks_pipeline" "etl" {
  name       = "etl"
  catalog    = "main"
  schema     = "etl"
  serverless = true
  edition    = "ADVANCE"

  library {
    notebook {
      path = "/Shared/etl"
    }
  }
}
