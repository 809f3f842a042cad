output "o" {
  value      = 1
  depends_on = "test_thing.a"
}
