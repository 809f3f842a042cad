provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
  settings "main" {
    mode = "x"
  }
}
