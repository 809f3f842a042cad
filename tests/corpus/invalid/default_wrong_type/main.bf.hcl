variable "workers" {
  type    = number
  default = "many"
}
