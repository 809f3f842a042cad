module "m" {
  source = "git::https://example.com/modules.git//uc"
}
