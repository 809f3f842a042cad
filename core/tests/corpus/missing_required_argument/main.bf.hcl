provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  comment = "no name"
}
