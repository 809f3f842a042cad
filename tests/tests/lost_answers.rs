//! Creates whose answer is lost after the service made the object — a 500, 502, 503 or 504,
//! for every kind — never leave a duplicate or an orphan: the next apply (or the same one)
//! finds the object it made, and destroy removes everything.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Serve, config, every_kind, objects, served as bf, served_ok as bf_ok};
use serde_json::{Value, json};

/// Every kind, and a pipeline and a job (found by their ownership tag, not by a name).
fn configuration(prefix: &str) -> String {
    format!(
        r#"{}
resource "databricks_pipeline" "p" {{
  name       = "{prefix}_refine"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = true
  library {{
    notebook {{
      path = databricks_notebook.nb.path
    }}
  }}
}}

resource "databricks_job" "nightly" {{
  name = "{prefix}_nightly"
  task {{
    task_key = "refine"
    pipeline_task {{
      pipeline_id = databricks_pipeline.p.id
    }}
  }}
}}
"#,
        every_kind(prefix)
    )
}

const CREATES: &[&str] = &[
    "/api/2.1/unity-catalog/catalogs",
    "/api/2.1/unity-catalog/schemas",
    "/api/2.1/unity-catalog/volumes",
    "/api/2.1/unity-catalog/connections",
    "/api/2.0/secrets/scopes/create",
    "/api/2.0/secrets/put",
    "/api/2.0/workspace/import",
    "/api/2.0/pipelines",
    "/api/2.[12]/jobs/create",
];

fn jobs_and_pipelines(dump: &Value) -> (usize, usize) {
    let n = |k: &str| dump[k].as_object().map(|m| m.len()).unwrap_or(0);
    (n("jobs"), n("pipelines"))
}

#[test]
fn a_create_whose_answer_is_lost_with_a_server_error_leaves_no_duplicate_and_no_orphan() {
    for status in [500, 502, 503, 504] {
        let prefix = format!("lost{status}");
        let dir = config(&[("main.bf.hcl", &configuration(&prefix))]);
        let d = dir.path();
        let serve = Serve::start(&d.join(".brickform/local"), &[]);
        for p in CREATES {
            serve.ok(
                "POST",
                "/__emulator/faults",
                Some(json!({"method": "POST", "path": p, "status": status, "times": 1, "after_side_effect": true})),
            );
        }
        // Applied until it is complete: a lost answer may fail one apply, never two.
        let mut outputs = Vec::new();
        for _ in 0..2 {
            let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
            outputs.push(format!("{out}\n{err}"));
            if code == 0 {
                break;
            }
        }
        let (code, out, err) = bf(d, &serve, &["plan", "--detailed-exitcode"]);
        assert_eq!(
            code,
            0,
            "status {status}: not converged\n{out}\n{err}\n{}",
            outputs.join("\n----\n")
        );
        let faults = serve.ok("GET", "/__emulator/faults", None);
        for f in faults["faults"].as_array().unwrap() {
            assert_eq!(
                f["fired"], 1,
                "status {status}: every answer was lost once: {f}"
            );
        }
        let dump = serve.dump();
        assert_eq!(
            jobs_and_pipelines(&dump),
            (1, 1),
            "status {status}: one job and one pipeline"
        );
        let state: Value = serde_json::from_str(
            &std::fs::read_to_string(d.join(".brickform/state/default.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            state["resources"].as_array().unwrap().len(),
            11,
            "status {status}: {state}"
        );
        bf_ok(d, &serve, &["destroy", "--auto-approve"]);
        let dump = serve.dump();
        assert_eq!(objects(&dump), Vec::<String>::new(), "status {status}");
        assert_eq!(jobs_and_pipelines(&dump), (0, 0), "status {status}");
    }
}
