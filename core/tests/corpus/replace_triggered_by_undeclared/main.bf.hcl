provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
  lifecycle {
    replace_triggered_by = [test_thing.b.id]
  }
}
