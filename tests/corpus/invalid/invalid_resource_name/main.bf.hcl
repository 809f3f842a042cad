resource "test_thing" "1abc" {
  name = "a"
}
