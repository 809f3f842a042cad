provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
  item {
    key = "k"
  }
  item {
    key = "k"
  }
}
