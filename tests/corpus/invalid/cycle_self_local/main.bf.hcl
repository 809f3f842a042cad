locals {
  me = local.me
}
