provider "test" {
  host = "h"
}
resource "test_thing" "a" {
  name = "a"
  settings {
    mode = "x"
    retry {
      attemps = 3
    }
  }
}
