provider "databricks" {
  host = "local"
}

resource "databricks_mlflow_experiment" "runs" {
  name = "my-experiment"
}
