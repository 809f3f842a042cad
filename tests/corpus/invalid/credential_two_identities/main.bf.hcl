provider "databricks" {
  host = "local"
}

resource "databricks_credential" "two" {
  name    = "reach_queues"
  purpose = "SERVICE"
  aws_iam_role {
    role_arn = "arn:aws:iam::123456789012:role/queues"
  }
  databricks_gcp_service_account {}
}
