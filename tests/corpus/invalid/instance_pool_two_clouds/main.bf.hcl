provider "databricks" {
  host = "local"
}

resource "databricks_instance_pool" "warm" {
  instance_pool_name                    = "warm"
  node_type_id                          = "i3.xlarge"
  idle_instance_autotermination_minutes = 10
  aws_attributes {
    availability = "SPOT"
  }
  azure_attributes {
    availability = "SPOT_AZURE"
  }
}
