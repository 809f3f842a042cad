provider "databricks" {
  host = "local"
}

resource "databricks_job" "publish" {
  task {
    task_key = "publish"
    power_bi_task {
      warehouse_id             = "abc"
      connection_resource_name = "pbi"
      power_bi_model {
        workspace_name        = "Sales"
        model_name            = "sales"
        storage_mode          = "DIRECTQUERY"
        authentication_method = "OAUTH"
      }
      tables {
        catalog      = "main"
        schema       = "sales"
        storage_mode = "IMPORT"
      }
    }
  }
}
