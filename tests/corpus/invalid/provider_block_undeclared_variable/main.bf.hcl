variable "client_id" {
  type = string
}

provider "databricks" {
  host      = "local"
  client_id = var.clientid
}
