locals {
  a = "${local.c}"
  b = local.a
  c = [local.b]
}
