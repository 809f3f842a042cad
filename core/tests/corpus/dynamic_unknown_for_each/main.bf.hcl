provider "test" {
  host = "h"
}
resource "test_thing" "src" {
  name = "src"
}
resource "test_thing" "a" {
  name = "a"
  dynamic "item" {
    for_each = test_thing.src.endpoints
    content {
      key = item.value
    }
  }
}
