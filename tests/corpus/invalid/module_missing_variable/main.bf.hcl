module "m" {
  source = "./modules/m"
}
