provider "databricks" {
  host = "local"
}

resource "databricks_credential" "svc" {
  name    = "reach_queues"
  purpose = "SERVICES"
  aws_iam_role {
    role_arn = "arn:aws:iam::123456789012:role/queues"
  }
}
