provider "databricks" {
  host = "local"
}

resource "databricks_job" "nightly" {
  name = "nightly"

  task {
    task_key = "a"
    depends_on {
      task_key = "c"
    }
    notebook_task {
      notebook_path = "/Shared/a"
    }
  }

  task {
    task_key = "b"
    depends_on {
      task_key = "a"
    }
    notebook_task {
      notebook_path = "/Shared/b"
    }
  }

  task {
    task_key = "c"
    depends_on {
      task_key = "b"
    }
    notebook_task {
      notebook_path = "/Shared/c"
    }
  }
}
