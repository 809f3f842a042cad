//! Cluster policies and instance pools end to end against `brickform local serve`: a policy
//! (its definition written with jsonencode, answered by the service in its own layout) and a
//! pool, permissions on both; apply, plan empty, changes in place, a node type the workspace
//! does not offer refused with the service's words, all three imported by id, destroy
//! leaving nothing. And an all-purpose cluster through its life cycle: a job task on it,
//! permissions on it, restarted by an edit while it runs, edited without a start while it is
//! terminated, started for a library and terminated again, imported by its id, and
//! permanently deleted although pinned.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Serve, config, served_plan_is_empty};
use common::{served as bf, served_ok as bf_ok};
use serde_json::{Value, json};
use std::path::Path;

const VARIABLES: &str = r#"
variable "host" {
  type = string
}
"#;

fn main_config(description: &str, max_capacity: u32, pool_level: &str) -> String {
    format!(
        r#"
provider "databricks" {{
  host = var.host
}}

resource "databricks_cluster_policy" "small" {{
  name                  = "small-clusters"
  description           = "{description}"
  max_clusters_per_user = 2
  definition = jsonencode({{
    "autotermination_minutes" = {{ "type" = "fixed", "value" = 20, "hidden" = true }}
    "node_type_id"            = {{ "type" = "allowlist", "values" = ["i3.xlarge", "m5d.large"] }}
  }})
  libraries {{
    pypi {{
      package = "requests==2.32.3"
    }}
  }}
}}

resource "databricks_instance_pool" "warm" {{
  instance_pool_name                    = "warm-i3"
  node_type_id                          = "i3.xlarge"
  min_idle_instances                    = 0
  max_capacity                          = {max_capacity}
  idle_instance_autotermination_minutes = 15
  preloaded_spark_versions              = ["16.4.x-scala2.12"]
  custom_tags = {{
    team = "data"
  }}
  aws_attributes {{
    availability           = "SPOT"
    spot_bid_price_percent = 100
  }}
}}

resource "databricks_permissions" "policy" {{
  cluster_policy_id = databricks_cluster_policy.small.id
  access_control {{
    group_name       = "data-engineers"
    permission_level = "CAN_USE"
  }}
}}

resource "databricks_permissions" "pool" {{
  instance_pool_id = databricks_instance_pool.warm.id
  access_control {{
    group_name       = "data-engineers"
    permission_level = "{pool_level}"
  }}
}}
"#
    )
}

fn write(d: &Path, main: &str) {
    std::fs::write(d.join("main.bf.hcl"), main).unwrap();
}

/// The one id of a collection of the workspace.
fn only_id(serve: &Serve, collection: &str) -> String {
    let dump = serve.dump();
    let ids: Vec<&String> = dump[collection]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(ids.len(), 1, "{collection}: {ids:?}");
    ids[0].clone()
}

fn compute_left(serve: &Serve) -> Vec<String> {
    let dump = serve.dump();
    let mut out: Vec<String> = ["cluster_policies", "instance_pools"]
        .iter()
        .flat_map(|c| {
            dump[*c]
                .as_object()
                .map(|m| m.keys().map(|k| format!("{c}:{k}")).collect::<Vec<_>>())
                .unwrap_or_default()
        })
        .collect();
    for k in dump["permissions"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        if k.starts_with("cluster-policies/") || k.starts_with("instance-pools/") {
            out.push(format!("permissions:{k}"));
        }
    }
    out
}

#[test]
fn policy_pool_and_their_permissions_apply_update_import_and_destroy() {
    let dir = config(&[("variables.bf.hcl", VARIABLES)]);
    let d = dir.path();
    write(d, &main_config("small clusters only", 4, "CAN_ATTACH_TO"));
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("data-engineers");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 4 added"), "{out}");
    let policy_id = only_id(&serve, "cluster_policies");
    let pool_id = only_id(&serve, "instance_pools");

    // The service answers the definition in its own layout: the same document, other text.
    let policy = serve.ok(
        "GET",
        &format!("/api/2.0/policies/clusters/get?policy_id={policy_id}"),
        None,
    );
    let text = policy["definition"].as_str().unwrap();
    assert!(text.contains('\n'), "{text}");
    let doc: Value = serde_json::from_str(text).unwrap();
    assert_eq!(doc["autotermination_minutes"]["value"], 20);
    assert_eq!(policy["max_clusters_per_user"], 2);
    assert_eq!(
        policy["libraries"],
        json!([{"pypi": {"package": "requests==2.32.3"}}])
    );
    let pool = serve.ok(
        "GET",
        &format!("/api/2.0/instance-pools/get?instance_pool_id={pool_id}"),
        None,
    );
    assert_eq!(pool["node_type_id"], "i3.xlarge");
    assert_eq!(pool["enable_elastic_disk"], true);
    assert_eq!(
        pool["default_tags"]["DatabricksInstancePoolId"],
        json!(pool_id)
    );
    let acl = serve.ok(
        "GET",
        &format!("/api/2.0/permissions/cluster-policies/{policy_id}"),
        None,
    );
    assert_eq!(acl["object_type"], "cluster-policy");
    assert!(acl.to_string().contains("CAN_USE"), "{acl}");
    let acl = serve.ok(
        "GET",
        &format!("/api/2.0/permissions/instance-pools/{pool_id}"),
        None,
    );
    assert_eq!(acl["object_type"], "instance-pool");
    assert!(acl.to_string().contains("CAN_ATTACH_TO"), "{acl}");
    // The definition's reformatting is no change.
    served_plan_is_empty(d, &serve);

    // A description, a capacity and a level change in place.
    write(d, &main_config("small clusters, fewer", 8, "CAN_MANAGE"));
    let plan = bf_ok(d, &serve, &["plan"]);
    for address in [
        "databricks_cluster_policy.small",
        "databricks_instance_pool.warm",
        "databricks_permissions.pool",
    ] {
        assert!(
            plan.contains(&format!("{address} will be updated in-place")),
            "{address}\n{plan}"
        );
    }
    assert!(!plan.contains("must be replaced"), "{plan}");
    assert!(!plan.contains("definition"), "{plan}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let pool = serve.ok(
        "GET",
        &format!("/api/2.0/instance-pools/get?instance_pool_id={pool_id}"),
        None,
    );
    assert_eq!(pool["max_capacity"], 8);
    assert_eq!(only_id(&serve, "instance_pools"), pool_id);
    let policy = serve.ok(
        "GET",
        &format!("/api/2.0/policies/clusters/get?policy_id={policy_id}"),
        None,
    );
    assert_eq!(policy["description"], "small clusters, fewer");
    served_plan_is_empty(d, &serve);

    // A node type the workspace does not offer is refused by the service.
    let unknown = main_config("small clusters, fewer", 8, "CAN_MANAGE")
        + r#"
resource "databricks_instance_pool" "odd" {
  instance_pool_name                    = "odd"
  node_type_id                          = "x9.huge"
  idle_instance_autotermination_minutes = 15
}
"#;
    write(d, &unknown);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("node type x9.huge is not supported"), "{err}");
    write(d, &main_config("small clusters, fewer", 8, "CAN_MANAGE"));
    served_plan_is_empty(d, &serve);
    assert_eq!(only_id(&serve, "instance_pools"), pool_id);

    // All are imported by id.
    for address in [
        "databricks_permissions.policy",
        "databricks_permissions.pool",
        "databricks_cluster_policy.small",
        "databricks_instance_pool.warm",
    ] {
        bf_ok(d, &serve, &["state", "rm", address]);
    }
    bf_ok(
        d,
        &serve,
        &["import", "databricks_cluster_policy.small", &policy_id],
    );
    bf_ok(
        d,
        &serve,
        &["import", "databricks_instance_pool.warm", &pool_id],
    );
    bf_ok(
        d,
        &serve,
        &[
            "import",
            "databricks_permissions.policy",
            &format!("/cluster-policies/{policy_id}"),
        ],
    );
    bf_ok(
        d,
        &serve,
        &[
            "import",
            "databricks_permissions.pool",
            &format!("/instance-pools/{pool_id}"),
        ],
    );
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        !plan.contains("must be replaced") && !plan.contains("will be created"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    served_plan_is_empty(d, &serve);

    // Destroy leaves nothing.
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(compute_left(&serve), Vec::<String>::new());
}

fn cluster_config(spark_conf: &str, workers: u32, library: bool) -> String {
    let library = if library {
        "  library {\n    pypi {\n      package = \"requests==2.32.3\"\n    }\n  }\n"
    } else {
        ""
    };
    format!(
        r#"
provider "databricks" {{
  host = var.host
}}

resource "databricks_cluster" "shared" {{
  cluster_name            = "etl-shared"
  spark_version           = "16.4.x-scala2.12"
  node_type_id            = "i3.xlarge"
  num_workers             = {workers}
  autotermination_minutes = 30
  is_pinned               = true
  spark_conf = {{
{spark_conf}  }}
{library}}}

resource "databricks_job" "nightly" {{
  name = "nightly-on-shared"
  task {{
    task_key            = "main"
    existing_cluster_id = databricks_cluster.shared.id
    spark_python_task {{
      python_file = "/Workspace/Shared/main.py"
    }}
  }}
}}

resource "databricks_permissions" "shared" {{
  cluster_id = databricks_cluster.shared.id
  access_control {{
    group_name       = "data-engineers"
    permission_level = "CAN_RESTART"
  }}
}}
"#
    )
}

/// The cluster as `clusters/get` answers it.
fn cluster_of(serve: &Serve, id: &str) -> Value {
    serve.ok(
        "GET",
        &format!("/api/2.1/clusters/get?cluster_id={id}"),
        None,
    )
}

/// Waits (a few seconds at most) for the cluster to reach `state`.
fn wait_for(serve: &Serve, id: &str, state: &str) {
    for _ in 0..100 {
        if cluster_of(serve, id)["state"] == state {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("cluster {id} is not {state}: {}", cluster_of(serve, id));
}

#[test]
fn a_cluster_restarts_on_an_edit_stays_terminated_installs_libraries_is_imported_and_destroyed() {
    let dir = config(&[("variables.bf.hcl", VARIABLES)]);
    let d = dir.path();
    let conf_one = "    \"spark.speculation\" = \"true\"\n";
    write(d, &cluster_config(conf_one, 1, false));
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("data-engineers");

    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 3 added"), "{out}");
    let id = only_id(&serve, "clusters");
    // The create waited for the cluster to run; it is pinned; the service filled in the
    // driver's node type and the workspace's cloud attributes.
    let c = cluster_of(&serve, &id);
    assert_eq!(c["state"], "RUNNING", "{c}");
    assert_eq!(c["driver_node_type_id"], "i3.xlarge");
    assert_eq!(c["aws_attributes"]["availability"], "SPOT_WITH_FALLBACK");
    assert_eq!(c["autotermination_minutes"], 30);
    let pinned = serve.ok(
        "GET",
        "/api/2.1/clusters/list?filter_by.is_pinned=true",
        None,
    );
    assert_eq!(pinned["clusters"][0]["cluster_id"], json!(id), "{pinned}");
    // The job's task runs on it: the cluster was made first.
    let job_id = only_id(&serve, "jobs");
    let job = serve.ok("GET", &format!("/api/2.2/jobs/get?job_id={job_id}"), None);
    assert_eq!(
        job["settings"]["tasks"][0]["existing_cluster_id"],
        json!(id),
        "{job}"
    );
    let acl = serve.ok("GET", &format!("/api/2.0/permissions/clusters/{id}"), None);
    assert_eq!(acl["object_type"], "cluster");
    assert!(acl.to_string().contains("CAN_RESTART"), "{acl}");
    served_plan_is_empty(d, &serve);

    // A change of a running cluster edits it in place, which restarts it: the plan says so.
    let conf_two = "    \"spark.speculation\" = \"false\"\n";
    write(d, &cluster_config(conf_two, 1, false));
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        plan.contains("databricks_cluster.shared will be updated in-place"),
        "{plan}"
    );
    assert!(!plan.contains("must be replaced"), "{plan}");
    assert!(
        plan.lines()
            .any(|l| l.contains("~ state") && l.contains("\"RUNNING\" -> (known after apply)")),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let c = cluster_of(&serve, &id);
    assert_eq!(c["spark_conf"]["spark.speculation"], "false");
    // The update waited for the restart to end.
    assert_eq!(c["state"], "RUNNING", "{c}");
    assert_eq!(only_id(&serve, "clusters"), id);
    served_plan_is_empty(d, &serve);

    // A change of only the size of a running cluster resizes it: no restart (its Spark
    // context stays), where an edit restarts it (a new one).
    let context = c["spark_context_id"].clone();
    write(d, &cluster_config(conf_two, 3, false));
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let c = cluster_of(&serve, &id);
    assert_eq!(c["num_workers"], 3);
    assert_eq!(c["state"], "RUNNING", "{c}");
    assert_eq!(
        c["spark_context_id"], context,
        "a resize restarted the cluster: {c}"
    );
    served_plan_is_empty(d, &serve);
    write(d, &cluster_config(conf_one, 3, false));
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let c = cluster_of(&serve, &id);
    assert_ne!(
        c["spark_context_id"], context,
        "an edit did not restart: {c}"
    );
    write(d, &cluster_config(conf_two, 1, false));
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    served_plan_is_empty(d, &serve);

    // Terminated outside brickform: its state is the service's, not drift. An edit of a
    // terminated cluster does not start it.
    serve.ok(
        "POST",
        "/api/2.1/clusters/delete",
        Some(json!({ "cluster_id": id })),
    );
    wait_for(&serve, &id, "TERMINATED");
    served_plan_is_empty(d, &serve);
    write(d, &cluster_config(conf_two, 2, false));
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let c = cluster_of(&serve, &id);
    assert_eq!(c["num_workers"], 2);
    assert_eq!(c["state"], "TERMINATED", "{c}");
    served_plan_is_empty(d, &serve);

    // A library is installed on a terminated cluster by starting it, and it is terminated
    // again after; no edit.
    write(d, &cluster_config(conf_two, 2, true));
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(!plan.contains("~ state"), "{plan}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let libs = serve.ok(
        "GET",
        &format!("/api/2.0/libraries/cluster-status?cluster_id={id}"),
        None,
    );
    assert_eq!(
        libs["library_statuses"][0]["library"],
        json!({"pypi": {"package": "requests==2.32.3"}}),
        "{libs}"
    );
    assert_eq!(libs["library_statuses"][0]["status"], "INSTALLED", "{libs}");
    wait_for(&serve, &id, "TERMINATED");
    served_plan_is_empty(d, &serve);

    // The cluster carries brickform's ownership tag (stripped on read, so no drift): after
    // `state rm`, the plan finds it again by its name and tag and imports it.
    let c = cluster_of(&serve, &id);
    assert!(
        c["custom_tags"]["brickform"]
            .as_str()
            .is_some_and(|t| t.ends_with("/databricks_cluster.shared")),
        "{c}"
    );
    bf_ok(d, &serve, &["state", "rm", "databricks_cluster.shared"]);
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        plan.contains("# databricks_cluster.shared will be imported"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert_eq!(only_id(&serve, "clusters"), id);
    served_plan_is_empty(d, &serve);

    // Imported by its id, as the Terraform provider's: nothing to change.
    bf_ok(d, &serve, &["state", "rm", "databricks_cluster.shared"]);
    bf_ok(d, &serve, &["import", "databricks_cluster.shared", &id]);
    served_plan_is_empty(d, &serve);

    // Destroy unpins the cluster and deletes it permanently, with its job and permissions.
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    let dump = serve.dump();
    assert_eq!(dump["clusters"], json!({}), "{}", dump["clusters"]);
    assert!(
        !dump["permissions"]
            .as_object()
            .into_iter()
            .flatten()
            .any(|(k, _)| k.starts_with("clusters/")),
        "{}",
        dump["permissions"]
    );
}
