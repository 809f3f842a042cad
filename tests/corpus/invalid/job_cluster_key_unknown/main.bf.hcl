provider "databricks" {
  host = "local"
}

resource "databricks_job" "nightly" {
  name = "nightly"

  job_cluster {
    job_cluster_key = "main"
    new_cluster {
      spark_version = "15.4.x-scala2.12"
      num_workers   = 1
    }
  }

  task {
    task_key = "extract"
    job_cluster_key = "mian"
    notebook_task {
      notebook_path = "/Shared/extract"
    }
  }
}
