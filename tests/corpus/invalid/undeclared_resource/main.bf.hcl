output "id" {
  value = test_thing.main.id
}
