//! Benchmark (issue 5, issue 13, issue 33 point 11): apply, no-op plan and destroy of 200
//! jobs with 20 tasks each and 100 pipelines against the local workspace with 20 ms of
//! latency per request, the client limiter at its default start, reported against the bound
//! `max(depth × latency, calls × latency / parallelism)` of the calls made and of the calls
//! needed (see `needs` below). The no-op plan reads jobs from `jobs/list` (100 a call) and
//! pipelines one GET each: at most [`NO_OP_CALLS`] calls.
//!
//! Run with `cargo bench -p brickform-databricks --bench jobs_scale`.

#![allow(clippy::unwrap_used)] // a benchmark may panic

mod common;

use common::{LATENCY_MS, Needs, PARALLELISM, Workload, scenario};

const JOBS: usize = 200;
const TASKS: usize = 20;
const PIPELINES: usize = 100;
/// What a no-op plan of this workload may cost: 2 job listings, 100 pipeline reads, the
/// workspace file, and room for a few more.
const NO_OP_CALLS: usize = 120;

fn config() -> String {
    format!(
        r#"
provider "databricks" {{}}
resource "databricks_workspace_file" "src" {{
  path           = "/Shared/bench/pipeline.sql"
  content_base64 = base64encode("CREATE MATERIALIZED VIEW x AS SELECT 1")
}}
resource "databricks_pipeline" "p" {{
  count      = {PIPELINES}
  name       = "bench-p${{count.index}}"
  catalog    = "main"
  schema     = "bench"
  serverless = true
  library {{
    file {{ path = databricks_workspace_file.src.path }}
  }}
}}
resource "databricks_job" "j" {{
  count = {JOBS}
  name  = "bench-j${{count.index}}"
  dynamic "task" {{
    for_each = range({TASKS})
    content {{
      task_key = "t${{task.value}}"
      dynamic "depends_on" {{
        for_each = task.value == 0 ? [] : [task.value - 1]
        content {{ task_key = "t${{depends_on.value}}" }}
      }}
      pipeline_task {{ pipeline_id = databricks_pipeline.p[(count.index + task.value) % {PIPELINES}].id }}
    }}
  }}
}}
"#
    )
}
#[tokio::main]
async fn main() {
    println!(
        "{JOBS} jobs of {TASKS} tasks, {PIPELINES} pipelines, 1 workspace file; {LATENCY_MS} ms latency, parallelism {PARALLELISM}"
    );
    // What the guarantees need. Reads of what state holds: the jobs from `jobs/list`, a
    // page of 100 each; a pipeline's spec only from its own GET (the pipelines' list holds
    // no spec); the workspace file's content. The plan of a destroy lists the tables the
    // pipelines publish, all into main.bench: one page.
    let reads = JOBS.div_ceil(100) + PIPELINES + 1;
    let work = Workload {
        config: config(),
        objects: JOBS + PIPELINES + 1,
        // One write per object and the read-back of each job and pipeline create; the
        // chain: the workspace file, then a pipeline and its read-back, then a job and its.
        apply: Needs {
            calls: JOBS + PIPELINES + 1 + JOBS + PIPELINES,
            depth: 1 + 2 + 2,
        },
        no_op: Needs {
            calls: reads,
            depth: 1,
        },
        // The reads, the tables' page, one delete per object and at least one poll per
        // pipeline delete (waited for); the chain: a read, the tables' page, a job's
        // delete, a pipeline's delete and its poll, the workspace file's delete.
        destroy: Needs {
            calls: reads + 1 + JOBS + PIPELINES + 1 + PIPELINES,
            depth: 1 + 1 + 1 + 2 + 1,
        },
    };
    let phases = scenario(
        "no service rate limit, client limiter at its default start",
        &work,
        None,
    )
    .await;
    let no_op = phases.iter().find(|p| p.name == "no-op plan").unwrap();
    println!(
        "\nno-op plan: {} calls (at most {NO_OP_CALLS})",
        no_op.calls
    );
    assert!(no_op.calls <= NO_OP_CALLS, "{:?}", no_op.endpoints);
}
