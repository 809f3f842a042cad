output "o" { value = 1 }

output "o" { value = 2 }
