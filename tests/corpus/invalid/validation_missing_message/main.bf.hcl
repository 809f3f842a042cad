variable "a" {
  default = 1
  validation {
    condition = var.a > 0
  }
}
