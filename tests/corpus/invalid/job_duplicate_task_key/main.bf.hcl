provider "databricks" {
  host = "local"
}

resource "databricks_job" "nightly" {
  name = "nightly"

  task {
    task_key = "extract"
    notebook_task {
      notebook_path = "/Shared/extract"
    }
  }

  task {
    task_key = "extract"
    notebook_task {
      notebook_path = "/Shared/extract"
    }
  }
}
