provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  for_each = toset(["x"])
  name     = "a-${count.index}"
}
