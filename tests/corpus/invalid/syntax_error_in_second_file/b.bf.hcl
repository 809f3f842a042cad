output "o" {
  value = local.ok
}
output "p" {
  value = = 2
}
