variable "x" {
  validaton {
    condition     = true
    error_message = "x"
  }
}
