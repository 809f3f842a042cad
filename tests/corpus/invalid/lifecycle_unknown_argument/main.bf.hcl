resource "test_thing" "a" {
  name = "a"
  lifecycle {
    prevent_destory = true
  }
}
