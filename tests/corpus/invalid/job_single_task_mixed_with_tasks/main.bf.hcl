provider "databricks" {
  host = "local"
}

resource "databricks_job" "nightly" {
  name        = "nightly"
  max_retries = 2

  task {
    task_key = "extract"
    notebook_task {
      notebook_path = "/Shared/extract"
    }
  }
}
