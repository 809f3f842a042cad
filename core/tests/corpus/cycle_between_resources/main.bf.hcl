provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name    = "a"
  comment = test_thing.b.id
}
resource "test_thing" "b" {
  name    = "b"
  comment = test_thing.a.id
}
