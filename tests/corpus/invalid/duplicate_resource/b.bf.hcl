resource "test_thing" "a" {
  name = "b"
}
