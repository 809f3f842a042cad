provider "databricks" {
  host = "local"
}

resource "databricks_cluster" "pooled" {
  cluster_name     = "pooled"
  spark_version    = "16.4.x-scala2.12"
  instance_pool_id = "0101-000000-pool"
  node_type_id     = "i3.xlarge"
}
