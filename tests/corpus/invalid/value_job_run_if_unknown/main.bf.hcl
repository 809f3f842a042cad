provider "databricks" {
  host = "local"
}

resource "databricks_job" "nightly" {
  name = "nightly"

  task {
    task_key = "extract"
    run_if   = "all_done"
    notebook_task {
      notebook_path = "/Shared/extract"
    }
  }
}
