provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name    = "a"
  commnet = "x"
}
