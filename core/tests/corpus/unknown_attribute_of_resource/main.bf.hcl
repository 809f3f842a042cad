provider "test" {
  host = "h"
}
resource "test_thing" "src" {
  name = "src"
}
resource "test_thing" "a" {
  name    = "a"
  comment = test_thing.src.nmae
}
