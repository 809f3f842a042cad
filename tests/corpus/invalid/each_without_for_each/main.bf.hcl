locals {
  k = each.key
}
