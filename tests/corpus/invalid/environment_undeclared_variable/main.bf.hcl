variable "region" { default = "eu" }
environment "prod" {
  variables = {
    regon = "us"
  }
}
