//! Databricks SQL queries, alerts and AI/BI dashboards end to end against
//! `brickform local serve`: a query with a parameter, an alert on it, a dashboard from a
//! local file, permissions on all three (a query's deprecated CAN_VIEW held as CAN_READ);
//! apply, plan empty, the dashboard's file edited, the dashboard edited and unpublished
//! outside brickform (both planned back), all imported by id, destroy leaving nothing but
//! trashed objects.
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

fn main_config(query_level: &str) -> String {
    format!(
        r#"
provider "databricks" {{
  host = var.host
}}

resource "databricks_query" "q" {{
  display_name = "daily revenue"
  description  = "revenue of the day before"
  warehouse_id = "0123456789abcdef"
  query_text   = "select sum(amount) as value from sales where day = {{{{day}}}}"
  parent_path  = "/Workspace/Shared"
  parameter {{
    name  = "day"
    title = "Day"
    date_value {{
      dynamic_date_value = "YESTERDAY"
    }}
  }}
}}

resource "databricks_alert" "a" {{
  display_name = "revenue dropped"
  query_id     = databricks_query.q.id
  parent_path  = "/Shared"
  condition {{
    op = "LESS_THAN"
    operand {{
      column {{
        name = "value"
      }}
    }}
    threshold {{
      value {{
        double_value = 1000
      }}
    }}
  }}
  seconds_to_retrigger = 3600
}}

resource "databricks_dashboard" "d" {{
  display_name    = "revenue"
  warehouse_id    = "0123456789abcdef"
  parent_path     = "/Shared/dashboards"
  file_path       = "revenue.lvdash.json"
  dataset_catalog = "main"
}}

resource "databricks_permissions" "q" {{
  sql_query_id = databricks_query.q.id
  access_control {{
    group_name       = "analysts"
    permission_level = "{query_level}"
  }}
}}

resource "databricks_permissions" "a" {{
  sql_alert_id = databricks_alert.a.id
  access_control {{
    group_name       = "analysts"
    permission_level = "CAN_RUN"
  }}
}}

resource "databricks_permissions" "d" {{
  dashboard_id = databricks_dashboard.d.id
  access_control {{
    group_name       = "analysts"
    permission_level = "CAN_RUN"
  }}
}}
"#
    )
}

const DASHBOARD: &str = r#"{"pages":[{"name":"p1","displayName":"Revenue"}],"datasets":[{"name":"sales","query":"select * from sales"}]}"#;

fn write(d: &Path, main: &str) {
    std::fs::write(d.join("main.bf.hcl"), main).unwrap();
}

/// The id of the one object of a type (`queries`, `alerts`, `dashboards`) not in the trash.
fn only(serve: &Serve, kind: &str) -> String {
    let dump = serve.dump();
    let ids: Vec<String> = dump["sql_objects"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, o)| k.starts_with(&format!("{kind}/")) && o["lifecycle_state"] != "TRASHED")
        .map(|(k, _)| k[kind.len() + 1..].to_string())
        .collect();
    assert_eq!(ids.len(), 1, "{kind}: {ids:?}");
    ids[0].clone()
}

/// What is left of the SQL objects: those not trashed, published versions, permissions.
fn sql_left(serve: &Serve) -> Vec<String> {
    let dump = serve.dump();
    let mut out: Vec<String> = dump["sql_objects"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, o)| o["lifecycle_state"] != "TRASHED")
        .map(|(k, _)| k.clone())
        .collect();
    for (k, acl) in dump["permissions"].as_object().into_iter().flatten() {
        if (k.starts_with("sql/queries/")
            || k.starts_with("sql/alerts/")
            || k.starts_with("dashboards/"))
            && acl.as_object().is_some_and(|m| !m.is_empty())
        {
            out.push(format!("permissions:{k}"));
        }
    }
    out
}

#[test]
fn queries_alerts_dashboards_and_their_permissions_apply_import_and_destroy() {
    let dir = config(&[("variables.bf.hcl", VARIABLES)]);
    let d = dir.path();
    std::fs::write(d.join("revenue.lvdash.json"), DASHBOARD).unwrap();
    write(d, &main_config("CAN_VIEW"));
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    serve.group("analysts");

    // The dashboard's folder does not exist: the create makes it.
    let out = bf_ok(d, &serve, &["apply", "--auto-approve"]);
    assert!(out.contains("Resources: 6 added"), "{out}");
    let query = only(&serve, "queries");
    let alert = only(&serve, "alerts");
    let dashboard = only(&serve, "dashboards");

    let q = serve.ok("GET", &format!("/api/2.0/sql/queries/{query}"), None);
    assert_eq!(q["parent_path"], "/Workspace/Shared");
    assert_eq!(
        q["parameters"],
        json!([{"name": "day", "title": "Day", "date_value": {"dynamic_date_value": "YESTERDAY"}}])
    );
    let a = serve.ok("GET", &format!("/api/2.0/sql/alerts/{alert}"), None);
    assert_eq!(a["query_id"], json!(query));
    assert_eq!(a["notify_on_ok"], true, "the provider's default is sent");
    assert_eq!(a["condition"]["threshold"]["value"]["double_value"], 1000);
    let db = serve.ok(
        "GET",
        &format!("/api/2.0/lakeview/dashboards/{dashboard}"),
        None,
    );
    assert_eq!(db["path"], "/Shared/dashboards/revenue.lvdash.json");
    // Kept in the service's layout, with the dataset catalog written in.
    let kept: Value = serde_json::from_str(db["serialized_dashboard"].as_str().unwrap()).unwrap();
    assert_eq!(kept["pages"][0]["pageType"], "PAGE_TYPE_CANVAS");
    assert_eq!(kept["datasets"][0]["catalog"], "main");
    let published = serve.ok(
        "GET",
        &format!("/api/2.0/lakeview/dashboards/{dashboard}/published"),
        None,
    );
    assert_eq!(published["embed_credentials"], true);
    // The deprecated CAN_VIEW is held as CAN_READ.
    let acl = serve.ok(
        "GET",
        &format!("/api/2.0/permissions/sql/queries/{query}"),
        None,
    );
    assert_eq!(acl["object_type"], "query");
    assert!(
        acl.to_string().contains("CAN_READ") && !acl.to_string().contains("CAN_VIEW"),
        "{acl}"
    );
    let acl = serve.ok(
        "GET",
        &format!("/api/2.0/permissions/dashboards/{dashboard}"),
        None,
    );
    assert!(acl.to_string().contains("CAN_RUN"), "{acl}");
    served_plan_is_empty(d, &serve);

    // CAN_VIEW to CAN_READ: the same held level, planned as a change of the declared one.
    write(d, &main_config("CAN_READ"));
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        plan.contains("databricks_permissions.q will be updated in-place"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    served_plan_is_empty(d, &serve);

    // An edit of the dashboard's file is a change of its content.
    std::fs::write(
        d.join("revenue.lvdash.json"),
        DASHBOARD.replace("Revenue", "Revenue by day"),
    )
    .unwrap();
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        plan.contains("databricks_dashboard.d will be updated in-place"),
        "{plan}"
    );
    assert!(plan.contains("md5"), "{plan}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let db = serve.ok(
        "GET",
        &format!("/api/2.0/lakeview/dashboards/{dashboard}"),
        None,
    );
    assert!(
        db["serialized_dashboard"]
            .as_str()
            .unwrap()
            .contains("Revenue by day")
    );
    served_plan_is_empty(d, &serve);

    // Edited and unpublished outside brickform: both planned back.
    serve.ok(
        "PATCH",
        &format!("/api/2.0/lakeview/dashboards/{dashboard}"),
        Some(json!({"display_name": "revenue", "warehouse_id": "0123456789abcdef", "serialized_dashboard": "{\"pages\":[]}"})),
    );
    serve.ok(
        "DELETE",
        &format!("/api/2.0/lakeview/dashboards/{dashboard}/published"),
        None,
    );
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        plan.contains("databricks_dashboard.d will be updated in-place"),
        "{plan}"
    );
    assert!(plan.contains("embed_credentials"), "{plan}");
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let db = serve.ok(
        "GET",
        &format!("/api/2.0/lakeview/dashboards/{dashboard}"),
        None,
    );
    assert!(
        db["serialized_dashboard"]
            .as_str()
            .unwrap()
            .contains("Revenue by day")
    );
    serve.ok(
        "GET",
        &format!("/api/2.0/lakeview/dashboards/{dashboard}/published"),
        None,
    );
    served_plan_is_empty(d, &serve);

    // A query edited outside brickform is written back: the update names what changed.
    serve.ok(
        "PATCH",
        &format!("/api/2.0/sql/queries/{query}"),
        Some(json!({"update_mask": "description", "query": {"description": "by hand"}})),
    );
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        plan.contains("databricks_query.q will be updated in-place"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    let q = serve.ok("GET", &format!("/api/2.0/sql/queries/{query}"), None);
    assert_eq!(q["description"], "revenue of the day before");
    served_plan_is_empty(d, &serve);

    // All are imported by their ids, as the Terraform provider's. The service does not
    // answer a dashboard's file: an imported dashboard is written once more.
    for address in [
        "databricks_permissions.q",
        "databricks_permissions.a",
        "databricks_permissions.d",
        "databricks_query.q",
        "databricks_alert.a",
        "databricks_dashboard.d",
    ] {
        bf_ok(d, &serve, &["state", "rm", address]);
    }
    bf_ok(d, &serve, &["import", "databricks_query.q", &query]);
    bf_ok(d, &serve, &["import", "databricks_alert.a", &alert]);
    bf_ok(d, &serve, &["import", "databricks_dashboard.d", &dashboard]);
    for (address, id) in [
        ("databricks_permissions.q", format!("/sql/queries/{query}")),
        ("databricks_permissions.a", format!("/sql/alerts/{alert}")),
        (
            "databricks_permissions.d",
            format!("/dashboards/{dashboard}"),
        ),
    ] {
        bf_ok(d, &serve, &["import", address, &id]);
    }
    let plan = bf_ok(d, &serve, &["plan"]);
    assert!(
        !plan.contains("must be replaced") && !plan.contains("will be created"),
        "{plan}"
    );
    bf_ok(d, &serve, &["apply", "--auto-approve"]);
    served_plan_is_empty(d, &serve);

    // Destroy trashes them: nothing is left but the trash.
    bf_ok(d, &serve, &["destroy", "--auto-approve"]);
    assert_eq!(sql_left(&serve), Vec::<String>::new());
    for path in [
        format!("/api/2.0/sql/queries/{query}"),
        format!("/api/2.0/sql/alerts/{alert}"),
        format!("/api/2.0/lakeview/dashboards/{dashboard}"),
    ] {
        assert_eq!(
            serve.ok("GET", &path, None)["lifecycle_state"],
            "TRASHED",
            "{path}"
        );
    }
}

#[test]
fn a_name_taken_in_the_folder_and_a_bad_threshold_are_refused() {
    let dir = config(&[("variables.bf.hcl", VARIABLES)]);
    let d = dir.path();
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    // A query of that name made in the folder outside brickform.
    serve.ok(
        "POST",
        "/api/2.0/sql/queries",
        Some(json!({"query": {"display_name": "twice", "warehouse_id": "w", "query_text": "select 1", "parent_path": "/Shared"}})),
    );
    let two = r#"
provider "databricks" {
  host = var.host
}

resource "databricks_query" "two" {
  display_name = "twice"
  warehouse_id = "w"
  query_text   = "select 2"
  parent_path  = "/Workspace/Shared"
}
"#;
    write(d, two);
    let (code, out, err) = bf(d, &serve, &["apply", "--auto-approve"]);
    assert_ne!(code, 0, "{out}");
    // Found by its folder and name before anything is sent.
    assert!(
        err.contains("databricks_query.two: the name is taken by databricks_query"),
        "{err}"
    );

    let bad = r#"
provider "databricks" {
  host = var.host
}

resource "databricks_alert" "a" {
  display_name = "a"
  query_id     = "q"
  condition {
    op = "EQUAL"
    operand {
      column {
        name = "v"
      }
    }
    threshold {
      value {
        double_value = 1
        string_value = "1"
      }
    }
  }
}
"#;
    write(d, bad);
    let (code, out, err) = bf(d, &serve, &["validate"]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("exactly one of string_value, double_value, bool_value"),
        "{err}"
    );
}
