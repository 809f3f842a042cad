locals {
  a = "abc
}
