provider "databricks" {}
provider "databricks" {}
