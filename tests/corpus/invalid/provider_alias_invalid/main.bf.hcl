provider "databricks" {
  alias = var.name
}
