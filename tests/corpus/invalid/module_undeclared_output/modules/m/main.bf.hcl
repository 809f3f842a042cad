output "schema_name" { value = "s" }
