module "m" {
  source  = "./modules/m"
  catalog = "main"
}
