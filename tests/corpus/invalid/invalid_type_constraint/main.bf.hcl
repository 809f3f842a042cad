variable "x" {
  type = strng
}
