variable "x" {
  default = 1

output "o" { value = 1 }
