locals {
  a = uper("x")
}
