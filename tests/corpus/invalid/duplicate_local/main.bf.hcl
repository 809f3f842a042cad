locals {
  a = 1
}
locals {
  b = 2
  a = 3
}
