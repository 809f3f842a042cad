module "m" {
  source = "./modules/m"
}

output "x" {
  value = module.m.schema_nmae
}
