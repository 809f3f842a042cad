provider "test" {
  host = "h"
}
resource "test_thing" "main" {
  name = "main"
}
resource "test_thing" "a" {
  name    = "a"
  comment = test_thing.mian.id
}
