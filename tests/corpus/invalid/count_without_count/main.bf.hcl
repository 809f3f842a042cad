output "i" {
  value = count.index
}
