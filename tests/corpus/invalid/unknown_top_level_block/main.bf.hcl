variable "ok" {}

varable "x" {
  default = 1
}
