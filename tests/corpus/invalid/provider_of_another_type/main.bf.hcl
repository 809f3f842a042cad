resource "databricks_catalog" "x" {
  provider = aws
  name     = "x"
}
