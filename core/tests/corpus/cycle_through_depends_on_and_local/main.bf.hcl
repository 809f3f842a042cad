provider "test" {
  host = "h"
}
locals {
  a_name = test_thing.a.name
}
resource "test_thing" "a" {
  name       = "a"
  depends_on = [test_thing.b]
}
resource "test_thing" "b" {
  name = local.a_name
}
