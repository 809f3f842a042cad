variable "region" {}
output "o" {
  value = var.regoin
}
