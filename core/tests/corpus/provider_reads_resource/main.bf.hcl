provider "test" {
  host = test_thing.a.name
}
resource "test_thing" "a" {
  name = "a"
}
