provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
  tags {
    team = "x"
  }
}
