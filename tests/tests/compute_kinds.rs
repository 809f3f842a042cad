//! Cluster policies and instance pools end to end against `brickform local serve`: a policy
//! (its definition written with jsonencode, answered by the service in its own layout) and a
//! pool, permissions on both; apply, plan empty, changes in place, a node type the workspace
//! does not offer refused with the service's words, all three imported by id, destroy
//! leaving nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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
