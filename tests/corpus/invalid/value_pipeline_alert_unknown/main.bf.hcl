provider "databricks" {
  host = "local"
}

resource "databricks_pipeline" "etl" {
  name       = "etl"
  catalog    = "main"
  schema     = "etl"
  serverless = true

  notification {
    email_recipients = ["ops@example.com"]
    alerts           = ["on-update-failure", "on-update-fail"]
  }

  library {
    notebook {
      path = "/Shared/etl"
    }
  }
}
