locals {
  prefix = "x"
}
output "o" {
  value = local.prefx
}
