provider "test" {
  host = "h"
}
variable "secret" {
  default   = "s"
  sensitive = true
}
resource "test_thing" "a" {
  name    = "a"
  comment = var.secret
}
output "c" {
  value = "${var.secret}-x"
}
