locals {
  x = "${local.z}-x"
  y = "${local.x}-y"
  z = "${local.y}-z"
}
output "o" { value = local.x }
