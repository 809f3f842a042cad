provider "test" {
  host = "h"
}
resource "test_job" "j" {
  name = "j"
}
