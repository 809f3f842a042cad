resource "test_thing" "a" {
  lifecycle {
    ignore_changes = [tags, upper("x")]
  }
}
