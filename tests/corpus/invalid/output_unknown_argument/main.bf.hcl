output "o" {
  value    = 1
  sensitve = true
}
