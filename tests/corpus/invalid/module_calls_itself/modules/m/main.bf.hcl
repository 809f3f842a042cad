module "again" {
  source = "../m"
}
