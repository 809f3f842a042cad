provider "databricks" {
  host = "local"
}

resource "databricks_file" "config" {
  path           = "/Volumes/main/raw/landing/../other/config.json"
  content_base64 = base64encode("{}")
}
