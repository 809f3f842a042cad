provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
  dynamic "item" {
    for_each = 3
    content {
      key = "k"
    }
  }
}
