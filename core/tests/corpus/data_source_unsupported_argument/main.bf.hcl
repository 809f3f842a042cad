provider "test" {
  host = "h"
}
data "test_info" "me" {
  fliter = "x"
}
