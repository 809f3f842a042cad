resource "test_thing" "a" {
  lifecycle {
    prevent_destroy = "yes"
  }
}
