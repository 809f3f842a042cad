locals {
  list = [1, 2]
  c    = local.list[5]
}
