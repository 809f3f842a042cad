provider "test" {
  host = "h"
}
data "test_ifno" "me" {}
