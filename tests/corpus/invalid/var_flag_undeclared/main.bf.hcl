variable "region" { default = "eu" }
