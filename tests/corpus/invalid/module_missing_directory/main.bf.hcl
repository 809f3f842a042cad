module "m" {
  source = "./modules/absent"
}
