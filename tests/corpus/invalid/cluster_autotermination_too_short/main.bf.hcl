provider "databricks" {
  host = "local"
}

resource "databricks_cluster" "shared" {
  cluster_name            = "shared"
  spark_version           = "16.4.x-scala2.12"
  node_type_id            = "i3.xlarge"
  autotermination_minutes = 5
}
