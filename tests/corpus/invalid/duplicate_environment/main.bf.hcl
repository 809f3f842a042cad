environment "dev" {}
environment "dev" {}
