//! A declarative pipeline's SQL source that turns a streaming table into a materialized view:
//! the local workspace runs the pipeline's SQL as far as its declarations, so the update that
//! follows fails as on the real service (`dataset_type_fixed`), a full refresh fails too, and
//! `brickform run` says why. Destroy leaves nothing behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};

fn config_text(sql: &str) -> String {
    format!(
        r#"
variable "host" {{}}
provider "databricks" {{ host = var.host }}
resource "databricks_catalog" "c" {{
  name = "dt_cat"
}}
resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.name
  name         = "dest"
}}
resource "databricks_workspace_file" "src" {{
  path           = "/Shared/dt/orders.sql"
  content_base64 = base64encode("{sql}")
}}
resource "databricks_pipeline" "p" {{
  name       = "dt_p"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = true
  library {{
    file {{ path = databricks_workspace_file.src.path }}
  }}
}}
"#
    )
}

const STREAMING: &str = "CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM(src)";
const MATERIALIZED: &str = "CREATE OR REFRESH MATERIALIZED VIEW t AS SELECT * FROM src";

fn table(serve: &Serve) -> (u16, Value) {
    serve.call("GET", "/api/2.1/unity-catalog/tables/dt_cat.dest.t", None)
}

/// Runs the whole story; returns what the failed runs printed (None when they did not fail).
fn story(behaviour_on: bool) -> Option<String> {
    let dir = config(&[("main.bf.hcl", &config_text(STREAMING))]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--update-step-ms", "100"]);
    serve.ok(
        "POST",
        "/__emulator/behaviours",
        Some(json!({"dataset_type_fixed": behaviour_on})),
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    bf_ok(d, &serve, &["run", "databricks_pipeline.p"]);
    let (s, t) = table(&serve);
    if behaviour_on {
        assert_eq!(s, 200, "{t}");
        assert_eq!(t["table_type"], "STREAMING_TABLE", "{t}");
        let p = serve.ok("GET", "/api/2.0/pipelines", None)["statuses"][0].clone();
        assert_eq!(t["pipeline_id"], p["pipeline_id"], "{t}\n{p}");
    } else {
        assert_eq!(s, 404, "{t}");
    }
    let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the plan after apply is empty\n{out}\n{err}");

    std::fs::write(d.join("main.bf.hcl"), config_text(MATERIALIZED)).unwrap();
    // The plan names the change before it happens (brickform reads the source as well).
    let out = bf_ok(d, &serve, &["plan"]);
    assert!(
        out.contains("dataset t in /Shared/dt/orders.sql changes from a streaming table to a materialized view"),
        "{out}"
    );
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("1 changed"), "{out}");
    let (code, out, err) = bf(d, &serve, &["run", "databricks_pipeline.p"]);
    let failed = code != 0;
    let mut said = None;
    if failed {
        let text = format!("{out}{err}");
        // A full refresh does not help.
        let (code, out2, err2) = bf(
            d,
            &serve,
            &[
                "run",
                "databricks_pipeline.p",
                "--full-refresh",
                "--auto-approve",
            ],
        );
        assert_ne!(code, 0, "a full refresh fails too\n{out2}\n{err2}");
        said = Some(format!("{text}\n{out2}{err2}"));
    } else {
        let (code, out2, err2) = bf(
            d,
            &serve,
            &[
                "run",
                "databricks_pipeline.p",
                "--full-refresh",
                "--auto-approve",
            ],
        );
        assert_eq!(code, 0, "{out2}\n{err2}");
    }
    if behaviour_on {
        // The table keeps its type: the failed updates published nothing.
        assert_eq!(table(&serve).1["table_type"], "STREAMING_TABLE");
    }

    let out = bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert!(out.contains("4 destroyed"), "{out}");
    serve.ok(
        "POST",
        "/__emulator/clock",
        Some(json!({"advance_ms": 5000})),
    );
    assert_eq!(table(&serve).0, 404);
    let (s, _) = serve.call("GET", "/api/2.1/unity-catalog/catalogs/dt_cat", None);
    assert_eq!(s, 404);
    let pipelines = serve.ok("GET", "/api/2.0/pipelines", None);
    assert!(
        pipelines.get("statuses").is_none_or(|s| s == &json!([])),
        "{pipelines}"
    );
    said
}

#[test]
fn a_dataset_turned_from_streaming_table_into_materialized_view_fails_its_updates() {
    let said = story(true).expect("the update after the change fails");
    let text = said.replace('\n', " ");
    for run in text.split("ended FAILED").skip(1).take(2) {
        assert!(
            run.contains("[CANNOT_CHANGE_DATASET_TYPE] Cannot change the dataset type of a pipeline table from STREAMING_TABLE to MATERIALIZED_VIEW: `dt_cat`.`dest`.`t`"),
            "the reason reaches the user: {text}"
        );
    }
    assert_eq!(text.matches("ended FAILED").count(), 2, "{text}");
    assert!(
        text.contains("please drop the existing dataset first"),
        "{text}"
    );
}

/// Without the behaviour the same story never fails: the test above checks the behaviour.
#[test]
fn without_the_behaviour_nothing_is_published_and_nothing_fails() {
    assert_eq!(story(false), None);
}
