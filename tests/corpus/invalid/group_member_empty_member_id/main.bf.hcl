provider "databricks" {
  host = "local"
}

resource "databricks_group" "eng" {
  display_name = "eng"
}

resource "databricks_group_member" "nobody" {
  group_id  = databricks_group.eng.id
  member_id = ""
}
