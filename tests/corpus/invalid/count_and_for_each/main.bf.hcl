resource "test_thing" "a" {
  count    = 2
  for_each = toset(["a"])
}
