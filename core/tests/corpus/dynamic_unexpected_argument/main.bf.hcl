provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
  dynamic "item" {
    for_each = ["x"]
    key      = "k"
    content {
      key = item.value
    }
  }
}
