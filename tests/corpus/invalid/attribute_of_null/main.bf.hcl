locals {
  n = null
  v = local.n.name
}
