provider "databricks" {
  host = "local"
}

resource "databricks_job" "nightly" {
  name = "nightly"

  task {
    task_key = "extract"
  }
}
