provider "databricks" {
  host = "local"
}

resource "databricks_mlflow_experiment" "runs" {
  name = "/Shared/runs"
  tags {
    key   = "mlflow.note.content"
    value = "what the runs are"
  }
}
