resource "databricks_catalog" "c" {
  name = "c"
}

locals {
  names = toset([databricks_catalog.c.name])
}

module "m" {
  source   = "./modules/m"
  for_each = local.names
}
