output "o" {
  value = vra
}
