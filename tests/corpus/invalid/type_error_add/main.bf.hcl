locals {
  a = 1 + "x"
}
