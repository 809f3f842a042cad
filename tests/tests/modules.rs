//! Modules end to end against the local workspace: the multi-source Lakeflow Connect example
//! (a module instantiated per source with for_each), and what modules must keep working
//! across: `moved` into a module, `state mv` of a whole module, `count`, nesting,
//! `depends_on`, `--target`, sensitive outputs and the plan JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{config, example_copy, local_dump, objects, run, run_ok};
use std::path::Path;

fn state_list(dir: &Path) -> Vec<String> {
    run_ok(dir, &["--local", "state", "list"], &[])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn lfc_multi_source_applies_replans_empty_runs_and_destroys_to_nothing() {
    let copy = example_copy("lfc-multi-source");
    let d = copy.path();
    run_ok(d, &["--local", "validate"], &[]);

    // The plan JSON places each instance's resources under its module, as Terraform does.
    let json = run_ok(d, &["--local", "plan", "--json"], &[]);
    // The module layout (module_address, child_modules, module_calls) is documented.
    let plan = common::valid_plan_json(&common::schema(), "lfc-multi-source", &json);
    let ig = plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "module.src[\"mysql\"].databricks_ingestion_pipeline.ig")
        .expect("the MySQL ingestion pipeline is planned");
    assert_eq!(ig["module_address"], "module.src[\"mysql\"]");
    assert_eq!(ig["name"], "ig");
    let children = plan["planned_values"]["root_module"]["child_modules"]
        .as_array()
        .unwrap();
    let addresses: Vec<&str> = children
        .iter()
        .map(|c| c["address"].as_str().unwrap())
        .collect();
    assert_eq!(
        addresses,
        [
            "module.src[\"mysql\"]",
            "module.src[\"postgresql\"]",
            "module.src[\"sqlserver\"]"
        ]
    );
    assert_eq!(children[0]["resources"].as_array().unwrap().len(), 4);
    let call = &plan["configuration"]["root_module"]["module_calls"]["src"];
    assert_eq!(call["source"], "./modules/lfc-source");
    assert!(
        call["module"]["resources"].as_array().unwrap().len() == 4,
        "{call}"
    );

    let out = run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    assert!(
        out.contains("Apply complete! Resources: 14 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(
        out.contains("mysql = \"lfc_multi.lfc_mysql\""),
        "the caller reads the module's outputs: {out}"
    );
    let made = objects(&local_dump(d));
    for want in [
        "catalog:lfc_multi",
        "connection:lfc-mysql",
        "connection:lfc-postgresql",
        "connection:lfc-sqlserver",
        "schema:lfc_multi.lfc_mysql",
        "schema:lfc_multi.lfc_postgresql",
        "schema:lfc_multi.lfc_sqlserver",
    ] {
        assert!(made.contains(&want.to_string()), "{want} in {made:?}");
    }
    let listed = state_list(d);
    assert_eq!(listed.len(), 14, "{listed:?}");
    assert!(listed.contains(&"module.src[\"postgresql\"].databricks_ingestion_gateway.gw".into()));
    // The sources' passwords went to the service, not into state.
    let state = std::fs::read_to_string(d.join(".brickform/state/default.json"))
        .or_else(|_| {
            let dir = d.join(".brickform");
            let mut found = String::new();
            for e in walk(&dir) {
                if e.extension().is_some_and(|x| x == "json") && !e.starts_with(dir.join("local")) {
                    found.push_str(&std::fs::read_to_string(&e).unwrap_or_default());
                }
            }
            Ok::<_, std::io::Error>(found)
        })
        .unwrap();
    assert!(state.contains("module.src"), "state was read");
    assert!(
        !state.contains("local-workspace-only"),
        "a password reached state"
    );

    let (code, out, err) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "no changes after apply\n{out}\n{err}");

    // Running the job updates every source's pipeline; their tables then exist, and go
    // with their pipelines on destroy.
    let out = run_ok(d, &["--local", "run", "databricks_job.refresh"], &[]);
    assert!(out.contains("task ingest_mysql: SUCCESS"), "{out}");

    // One source alone is targeted by its instance address.
    let (code, out, err) = run(
        d,
        &[
            "--local",
            "plan",
            "-destroy",
            "--target",
            "module.src[\"mysql\"]",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("Plan: 0 to add, 0 to change, 5 to destroy."),
        "{out}"
    );
    assert!(!out.contains("module.src[\"sqlserver\"]"), "{out}");

    let out = run_ok(d, &["--local", "destroy", "--auto-approve"], &[]);
    assert!(out.contains("14 destroyed, 0 left behind"), "{out}");
    assert_eq!(objects(&local_dump(d)), Vec::<String>::new());
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

const AREA_MODULE: &str = r#"
variable "catalog" { type = string }
variable "name" { type = string }
variable "owner_note" {
  type      = string
  sensitive = true
  default   = "s3cret-note"
}

resource "databricks_schema" "this" {
  catalog_name = var.catalog
  name         = var.name
}

output "schema" { value = databricks_schema.this.full_name }
output "note" {
  value     = var.owner_note
  sensitive = true
}
"#;

fn with_module(root: &str) -> tempfile::TempDir {
    let dir = config(&[("main.bf.hcl", root)]);
    std::fs::create_dir_all(dir.path().join("modules/area")).unwrap();
    std::fs::write(dir.path().join("modules/area/main.bf.hcl"), AREA_MODULE).unwrap();
    dir
}

#[test]
fn a_schema_moves_into_a_module_and_a_module_moves_whole_without_recreating_anything() {
    // First the schema is the root's own.
    let dir = with_module(
        r#"
resource "databricks_catalog" "c" { name = "moves" }
resource "databricks_schema" "sales" {
  catalog_name = databricks_catalog.c.name
  name         = "sales"
}
"#,
    );
    let d = dir.path();
    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    let id_before = local_dump(d)["schemas"]["moves.sales"]["schema_id"].clone();
    assert!(id_before.is_string());

    // Then a module makes it; `moved` says it is the same schema.
    std::fs::write(
        d.join("main.bf.hcl"),
        r#"
resource "databricks_catalog" "c" { name = "moves" }
module "area" {
  source  = "./modules/area"
  catalog = databricks_catalog.c.name
  name    = "sales"
}
moved {
  from = databricks_schema.sales
  to   = module.area.databricks_schema.this
}
"#,
    )
    .unwrap();
    let out = run_ok(d, &["--local", "plan"], &[]);
    assert!(
        out.contains("# databricks_schema.sales has moved to module.area.databricks_schema.this"),
        "{out}"
    );
    assert!(out.contains("0 to add, 0 to change, 0 to destroy"), "{out}");
    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    assert!(state_list(d).contains(&"module.area.databricks_schema.this".to_string()));

    // `state mv` renames the call; the configuration follows, and nothing changes.
    let out = run_ok(
        d,
        &["--local", "state", "mv", "module.area", "module.zone"],
        &[],
    );
    assert!(out.contains("Successfully moved 1 object(s)."), "{out}");
    let text = std::fs::read_to_string(d.join("main.bf.hcl")).unwrap();
    let text = text.replace("module \"area\"", "module \"zone\"");
    let text = text[..text.find("moved {").unwrap()].to_string();
    std::fs::write(d.join("main.bf.hcl"), text).unwrap();
    let (code, out, err) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        local_dump(d)["schemas"]["moves.sales"]["schema_id"],
        id_before,
        "the schema was kept"
    );
    run_ok(d, &["--local", "destroy", "--auto-approve"], &[]);
}

#[test]
fn counted_nested_and_ordered_modules_plan_apply_and_keep_secrets() {
    let dir = with_module(
        r#"
resource "databricks_catalog" "c" { name = "nest" }

module "area" {
  count   = 2
  source  = "./modules/area"
  catalog = databricks_catalog.c.name
  name    = "area${count.index}"
}

module "outer" {
  source     = "./modules/outer"
  catalog    = databricks_catalog.c.name
  depends_on = [module.area]
}

output "schemas" { value = module.area[*].schema }
output "inner"   { value = module.outer.inner_schema }
output "note" {
  value     = module.area[0].note
  sensitive = true
}
"#,
    );
    let d = dir.path();
    std::fs::create_dir_all(d.join("modules/outer")).unwrap();
    std::fs::write(
        d.join("modules/outer/main.bf.hcl"),
        r#"
variable "catalog" { type = string }
module "inner" {
  source  = "../area"
  catalog = var.catalog
  name    = "${path.module == "modules/outer" ? "inner" : "wrong"}"
}
output "inner_schema" { value = module.inner.schema }
"#,
    )
    .unwrap();
    let out = run_ok(d, &["--local", "plan"], &[]);
    for a in [
        "module.area[0].databricks_schema.this",
        "module.area[1].databricks_schema.this",
        "module.outer.module.inner.databricks_schema.this",
    ] {
        assert!(
            out.contains(&format!("# {a} will be created")),
            "{a}\n{out}"
        );
    }
    assert!(
        !out.contains("s3cret-note"),
        "a sensitive module output was shown"
    );

    // depends_on = [module.area] orders the inner schema after every schema of module.area.
    let graph = run_ok(d, &["--local", "graph"], &[]);
    assert!(
        graph.contains(
            "\"module.outer.module.inner.databricks_schema.this\" -> \"module.area[1].databricks_schema.this\""
        ),
        "{graph}"
    );

    let out = run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    assert!(
        out.contains("schemas = [\"nest.area0\", \"nest.area1\"]"),
        "{out}"
    );
    assert!(out.contains("inner = \"nest.inner\""), "{out}");
    assert!(out.contains("note = <sensitive>"), "{out}");
    assert!(!out.contains("s3cret-note"), "{out}");
    let (code, out, err) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");

    // Fewer instances: the last one goes, the first stays.
    let text = std::fs::read_to_string(d.join("main.bf.hcl"))
        .unwrap()
        .replace("count   = 2", "count   = 1")
        .replace("module.area[*].schema", "module.area[0].schema");
    std::fs::write(d.join("main.bf.hcl"), text).unwrap();
    let out = run_ok(d, &["--local", "plan"], &[]);
    assert!(
        out.contains("# module.area[1].databricks_schema.this will be destroyed"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{out}"
    );
    run_ok(d, &["--local", "destroy", "--auto-approve"], &[]);
    assert_eq!(objects(&local_dump(d)), Vec::<String>::new());
}

#[test]
fn an_import_block_adopts_an_object_into_a_module_instance() {
    let dir = with_module(
        r#"
resource "databricks_catalog" "c" { name = "adopt" }
resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "sales"
}
"#,
    );
    let d = dir.path();
    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    run_ok(d, &["--local", "state", "rm", "databricks_schema.s"], &[]);
    std::fs::write(
        d.join("main.bf.hcl"),
        r#"
resource "databricks_catalog" "c" { name = "adopt" }
module "area" {
  source   = "./modules/area"
  for_each = toset(["sales"])
  catalog  = databricks_catalog.c.name
  name     = each.key
}
import {
  to = module.area["sales"].databricks_schema.this
  id = "adopt.sales"
}
"#,
    )
    .unwrap();
    let out = run_ok(d, &["--local", "plan"], &[]);
    assert!(
        out.contains("# module.area[\"sales\"].databricks_schema.this will be imported"),
        "{out}"
    );
    assert!(
        out.contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    assert!(state_list(d).contains(&"module.area[\"sales\"].databricks_schema.this".to_string()));
    let (code, out, err) = run(d, &["--local", "plan", "--detailed-exitcode"], &[]);
    assert_eq!(code, 0, "{out}{err}");
}
