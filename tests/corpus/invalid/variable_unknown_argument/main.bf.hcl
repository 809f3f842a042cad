variable "x" {
  type    = string
  defualt = "a"
}
