variable "region" {}
variable "zone" {}
variable "region" {
  default = "eu"
}
