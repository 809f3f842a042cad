output "o" {
  description = "nothing"
}
