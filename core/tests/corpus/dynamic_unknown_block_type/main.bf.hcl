provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
  dynamic "itme" {
    for_each = ["x"]
    content {
      key = itme.value
    }
  }
}
