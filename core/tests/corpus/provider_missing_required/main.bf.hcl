provider "test" {}
resource "test_thing" "a" {
  name = "a"
}
