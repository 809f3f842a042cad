provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  count = 2
  name  = each.key
}
