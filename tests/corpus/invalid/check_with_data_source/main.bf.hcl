check "c" {
  data "t" "x" {}
  assert {
    condition     = true
    error_message = "x"
  }
}
