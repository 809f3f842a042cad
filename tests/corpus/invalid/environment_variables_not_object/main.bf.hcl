variable "region" { default = "eu" }
environment "prod" {
  variables = ["us"]
}
