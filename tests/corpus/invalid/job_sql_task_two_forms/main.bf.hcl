provider "databricks" {
  host = "local"
}

resource "databricks_job" "report" {
  task {
    task_key = "report"
    sql_task {
      warehouse_id = "abc"
      query {
        query_id = "q1"
      }
      dashboard {
        dashboard_id = "d1"
      }
    }
  }
}
