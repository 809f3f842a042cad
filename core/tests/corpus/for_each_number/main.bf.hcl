provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  for_each = 3
  name     = "a"
}
