provider "test" {
  host = "h"
}
resource "test_thnig" "a" {
  name = "a"
}
