provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  for_each = null
  name     = "a"
}
