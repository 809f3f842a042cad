variable "workers" {
  type    = number
  default = 12
  validation {
    condition     = var.workers < 10
    error_message = "At most 9 workers."
  }
}
