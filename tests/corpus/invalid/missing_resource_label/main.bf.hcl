resource "test_thing" {
  name = "a"
}
