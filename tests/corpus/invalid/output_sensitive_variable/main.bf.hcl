variable "password" {
  default   = "hunter2"
  sensitive = true
}
output "password" {
  value = var.password
}
