provider "test" {
  host = "h"
}
data "test_info" "me" {
  user = "me"
}
