variable "a" { default = 1 }
variable "b" {
  default = 2
  validation {
    condition     = var.b > var.a
    error_message = "b must exceed a."
  }
}
