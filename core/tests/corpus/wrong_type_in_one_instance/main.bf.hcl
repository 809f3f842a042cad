provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  for_each = { small = 1, large = "huge" }
  name     = each.key
  size     = each.value
}
