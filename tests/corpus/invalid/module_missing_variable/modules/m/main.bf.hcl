variable "catalog" { type = string }
