provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  count    = 1
  for_each = toset(["x"])
  name     = "a"
}
