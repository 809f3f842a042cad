check "c" {
  assert {
    condition = true
  }
}
