provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  for_each = [1, 2]
  name     = "a"
}
