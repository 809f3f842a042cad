variable "a" {
  default = 1
}

resource "databricks_catalog" "c" {
  name = "x"

variable "b" {
  default = 2
}
