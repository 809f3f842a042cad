//! Discovery for onboarding what already exists: the schemas of a catalog, the tables, views
//! and volumes of a schema and the folders of a volume, read by data sources against
//! `brickform local serve`, with tables made where brickform does not look.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};

const SETUP: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_catalog" "c" {
  name          = "disc"
  force_destroy = true
}
resource "databricks_schema" "s" {
  for_each      = toset(["raw", "silver"])
  catalog_name  = databricks_catalog.c.name
  name          = each.key
  force_destroy = true
}
resource "databricks_volume" "v" {
  for_each     = toset(["landing", "archive"])
  catalog_name = databricks_catalog.c.name
  schema_name  = databricks_schema.s["raw"].name
  name         = each.key
  volume_type  = "MANAGED"
}
resource "databricks_file" "f" {
  for_each       = toset(["orders", "customers"])
  path           = "${databricks_volume.v["landing"].volume_path}/${each.key}/part-0.json"
  content_base64 = base64encode("{}")
}
resource "databricks_file" "readme" {
  path           = "${databricks_volume.v["landing"].volume_path}/README.txt"
  content_base64 = base64encode("landing")
}
"#;

const DISCOVER: &str = r#"
data "databricks_schemas" "all" {
  catalog_name = "disc"
}
data "databricks_tables" "raw" {
  catalog_name = "disc"
  schema_name  = "raw"
}
data "databricks_tables" "orders" {
  catalog_name = "DISC"
  schema_name  = "raw"
  name_regex   = "^orders_"
}
data "databricks_views" "raw" {
  catalog_name = "disc"
  schema_name  = "raw"
}
data "databricks_volumes" "raw" {
  catalog_name = "disc"
  schema_name  = "raw"
}
data "databricks_volume_directory" "landing" {
  path = "/Volumes/disc/raw/landing/"
}
output "found" {
  value = {
    schemas     = data.databricks_schemas.all.ids
    tables      = data.databricks_tables.raw.ids
    table_names = data.databricks_tables.raw.names
    orders      = data.databricks_tables.orders.names
    views       = data.databricks_views.raw.ids
    volumes     = data.databricks_volumes.raw.names
    folders     = data.databricks_volume_directory.landing.directories
    files       = data.databricks_volume_directory.landing.files
  }
}
"#;

fn table(serve: &Serve, full_name: &str, table_type: &str) {
    serve.ok(
        "POST",
        "/__emulator/tables",
        Some(json!({"full_name": full_name, "table_type": table_type})),
    );
}

#[test]
fn data_sources_list_what_exists_and_see_what_was_made_since() {
    let dir = config(&[("main.bf.hcl", SETUP)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    // Tables another team made: two, one of them a view (not a table), one an order table.
    table(&serve, "disc.raw.orders_eu", "MANAGED");
    table(&serve, "disc.raw.customers", "EXTERNAL");
    table(&serve, "disc.raw.orders_report", "VIEW");
    std::fs::write(d.join("discover.bf.hcl"), DISCOVER).unwrap();
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let out = common::run_ok(d, &["output", "-json", "found"], &[]);
    let found: Value = serde_json::from_str(&out).unwrap();
    // Every schema of the catalog, the ones the service makes with it included.
    let mut schemas: Vec<String> = serve.dump()["schemas"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("disc."))
        .cloned()
        .collect();
    schemas.sort();
    assert!(schemas.len() >= 2, "{schemas:?}");
    assert_eq!(
        found,
        json!({
            "schemas": schemas,
            "tables": ["disc.raw.customers", "disc.raw.orders_eu"],
            "table_names": ["customers", "orders_eu"],
            "orders": ["orders_eu"],
            "views": ["disc.raw.orders_report"],
            "volumes": ["archive", "landing"],
            "folders": ["customers", "orders"],
            "files": ["README.txt"],
        })
    );
    // A table made since shows on the next plan.
    table(&serve, "disc.raw.orders_us", "MANAGED");
    let (code, plan, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 2, "{plan}\n{err}");
    assert!(plan.contains("+ \"orders_us\""), "{plan}");

    // A mistyped folder or parent is an error, not an empty list.
    let bad = DISCOVER.replace("/Volumes/disc/raw/landing/", "/Volumes/disc/raw/landin");
    std::fs::write(d.join("discover.bf.hcl"), bad).unwrap();
    let (code, _, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("there is no directory /Volumes/disc/raw/landin"),
        "{err}"
    );
    let bad = DISCOVER.replace(
        "schema_name  = \"raw\"\n}\ndata \"databricks_tables\" \"orders\"",
        "schema_name  = \"rwa\"\n}\ndata \"databricks_tables\" \"orders\"",
    );
    std::fs::write(d.join("discover.bf.hcl"), bad).unwrap();
    let (code, _, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("disc.rwa"), "{err}");
    let bad = DISCOVER.replace("\"^orders_\"", "\"(orders\"");
    std::fs::write(d.join("discover.bf.hcl"), bad).unwrap();
    let (code, _, err) = bf(d, &serve, &["plan"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("name_regex"), "{err}");

    std::fs::remove_file(d.join("discover.bf.hcl")).unwrap();
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
}

/// `validate` has no service to ask: a `for_each` over what a data source or a resource
/// will report is valid there (the plan knows it); the plan refuses keys known only after
/// apply.
#[test]
fn for_each_over_what_only_the_service_knows_is_valid_and_planned_or_refused() {
    let text = r#"
provider "databricks" {
  host = "local"
}
data "databricks_schemas" "all" {
  catalog_name = "main"
}
data "databricks_schema" "each" {
  for_each = data.databricks_schemas.all.ids
  name     = each.value
}
resource "databricks_catalog" "c" {
  name = "fe_cat"
}
resource "databricks_schema" "s" {
  for_each     = toset([databricks_catalog.c.metastore_id])
  catalog_name = databricks_catalog.c.name
  name         = "s"
}
"#;
    let dir = config(&[("main.bf.hcl", text)]);
    let d = dir.path();
    let (code, out, err) = common::run(d, &["validate"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = common::run(d, &["plan"], &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Invalid for_each argument"), "{err}");
    assert!(err.contains("cannot be determined until apply"), "{err}");
    assert!(err.contains("main.bf.hcl:16"), "{err}");
}
