resource "test_thing" "main" {
  name = "a"
}
output "id" {
  value = test_thing.mian.id
}
