provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
}
import {
  to = test_thing.a
  id = ["123"]
}
