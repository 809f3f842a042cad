provider "test" {
  host = "h"
}
resource "test_thing" "src" {
  name = "src"
}
resource "test_thing" "a" {
  count = length(test_thing.src.endpoints)
  name  = "a"
}
