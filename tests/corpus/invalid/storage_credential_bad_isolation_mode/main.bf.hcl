provider "databricks" {
  host = "local"
}

resource "databricks_storage_credential" "isolated" {
  name           = "landing"
  isolation_mode = "ISOLATED"
  aws_iam_role {
    role_arn = "arn:aws:iam::123456789012:role/uc-access"
  }
}
