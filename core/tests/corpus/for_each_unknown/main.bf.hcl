provider "test" {
  host = "h"
}
resource "test_thing" "src" {
  name = "src"
}
resource "test_thing" "a" {
  for_each = toset(test_thing.src.endpoints)
  name     = each.key
}
