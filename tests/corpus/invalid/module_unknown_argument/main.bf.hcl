module "m" {
  source = "./modules/m"
  name   = "a"
  nmae   = "b"
}
