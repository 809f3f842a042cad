output "t" {
  value = templatefile("nope.tpl", {})
}
