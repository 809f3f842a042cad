variable {
  default = 1
}
