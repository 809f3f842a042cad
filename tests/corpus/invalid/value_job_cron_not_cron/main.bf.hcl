provider "databricks" {
  host = "local"
}

resource "databricks_job" "nightly" {
  name = "nightly"

  schedule {
    quartz_cron_expression = "every night"
    timezone_id            = "UTC"
  }

  task {
    task_key = "extract"
    notebook_task {
      notebook_path = "/Shared/extract"
    }
  }
}
