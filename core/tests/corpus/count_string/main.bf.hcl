provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  count = "two"
  name  = "a"
}
