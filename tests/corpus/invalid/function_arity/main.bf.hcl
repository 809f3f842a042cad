locals {
  a = upper("a", "b")
}
