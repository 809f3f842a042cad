variable "x" {
  type = list(string, number)
}
