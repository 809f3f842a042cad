provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name    = "a"
  comment = test_thing.a.id
}
