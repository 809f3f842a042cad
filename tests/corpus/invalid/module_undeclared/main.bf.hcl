output "x" {
  value = module.nope.id
}
