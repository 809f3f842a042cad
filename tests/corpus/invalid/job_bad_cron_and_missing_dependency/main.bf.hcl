provider "databricks" {
  host = "local"
}

resource "databricks_job" "j" {
  name = "j"
  schedule {
    quartz_cron_expression = "not a cron"
    timezone_id            = "UTC"
  }
  task {
    task_key = "a"
    depends_on {
      task_key = "missing"
    }
    condition_task {
      op    = "EQUAL_TO"
      left  = "1"
      right = "1"
    }
  }
}
