provider "test" {
  host = "h"
  hots = "h"
}
