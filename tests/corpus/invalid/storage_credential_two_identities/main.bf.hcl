provider "databricks" {
  host = "local"
}

resource "databricks_storage_credential" "two" {
  name = "landing"
  aws_iam_role {
    role_arn = "arn:aws:iam::123456789012:role/uc-access"
  }
  azure_managed_identity {
    access_connector_id = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Databricks/accessConnectors/ac"
  }
}
