//! `brickform run` on pipelines as the service answers it: a continuous pipeline runs one
//! update until it is stopped, so starting another is refused with RESOURCE_CONFLICT; run
//! says why and how to restart it instead of printing the raw conflict.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config};
use common::{served as bf, served_ok as bf_ok};

const CONFIG: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
resource "databricks_pipeline" "always" {
  name       = "always_on"
  catalog    = "main"
  schema     = "default"
  serverless = true
  continuous = true
  library {
    notebook { path = "/Shared/always" }
  }
}
resource "databricks_pipeline" "batch" {
  name       = "batch"
  catalog    = "main"
  schema     = "default"
  serverless = true
  library {
    notebook { path = "/Shared/batch" }
  }
}
"#;

#[test]
fn run_on_a_running_continuous_pipeline_says_how_to_restart_it() {
    let dir = config(&[("main.bf.hcl", CONFIG)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &["--update-step-ms", "100"]);
    bf_ok(d, &serve, &["apply", "--auto-approve"]);

    let (code, out, err) = bf(d, &serve, &["run", "databricks_pipeline.always"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let text = format!("{out}{err}").replace('\n', " ");
    assert!(
        text.contains("databricks_pipeline.always is a continuous pipeline"),
        "{text}"
    );
    assert!(text.contains("databricks pipelines stop"), "{text}");
    assert!(!text.contains("RESOURCE_CONFLICT"), "{text}");

    // Stopped, it runs again (and keeps running: a continuous update does not end, so the
    // run is left running rather than waited for).
    let id = serve.ok(
        "GET",
        "/api/2.0/pipelines?filter=name%20LIKE%20%27always_on%27",
        None,
    )["statuses"][0]["pipeline_id"]
        .as_str()
        .unwrap()
        .to_string();
    serve.ok("POST", &format!("/api/2.0/pipelines/{id}/stop"), None);
    let (code, out, err) = bf(
        d,
        &serve,
        &["run", "databricks_pipeline.always", "--no-wait"],
    );
    assert_eq!(code, 0, "{out}\n{err}");

    // A batch pipeline's conflict (an update already running) is the service's own
    // message: the pipeline is not continuous.
    bf_ok(
        d,
        &serve,
        &["run", "databricks_pipeline.batch", "--no-wait"],
    );
    let (code, out, err) = bf(d, &serve, &["run", "databricks_pipeline.batch"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let text = format!("{out}{err}");
    assert!(text.contains("already has an active update"), "{text}");
    assert!(!text.contains("continuous pipeline"), "{text}");
}
