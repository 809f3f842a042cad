variable "name" { type = string }
variable "nmae2" {
  type    = string
  default = ""
}
