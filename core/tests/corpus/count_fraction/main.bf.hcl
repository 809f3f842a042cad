provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  count = 1.5
  name  = "a"
}
