provider "databricks" {
  host = "local"
}

resource "databricks_job" "nightly" {
  name = "nightly"

  schedule {
    quartz_cron_expression = "0 0 2 * * ?"
    timezone_id            = "UTC"
    pause_status           = "PAUSE"
  }

  task {
    task_key = "extract"
    notebook_task {
      notebook_path = "/Shared/extract"
    }
  }
}
