provider "test" {
  host = "h"
}
resource "test_thing" "bb" {
  name = "bb"
}
resource "test_thing" "a" {
  name       = "a"
  depends_on = [test_thing.b]
}
