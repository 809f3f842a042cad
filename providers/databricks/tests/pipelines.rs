//! Invariants of the pipeline kinds (`databricks_pipeline`, `databricks_ingestion_gateway`,
//! `databricks_ingestion_pipeline`), in process through the engine against the emulator:
//! apply, a no-op plan, one change planned as exactly that update (or a replacement for the
//! immutable fields), destroy leaving nothing behind, and destroy again doing nothing. Also
//! what reaches the wire: `serverless = false`, full-spec PUTs, the ownership tag.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use brickform_core::engine::apply::{ApplyOptions, ApplyReport};
use brickform_core::engine::inputs::{VarInputs, resolve};
use brickform_core::engine::{Engine, PlanRequest};
use brickform_core::lang::load::load_sources;
use brickform_core::plan::{Action, FieldReason, Plan, PlanMode, ResourceChange};
use brickform_core::provider::{OpContext, Registry};
use brickform_core::value::path_string;
use brickform_databricks::client::MemoryStore;
use brickform_databricks::{DatabricksProvider, Options};
use brickform_emulator::{Emulator, EmulatorConfig, RunningEmulator};
use brickform_state::{Backend, LocalBackend, StateDocument, recover};
use serde_json::{Value as Json, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// One local workspace and one state directory.
struct Ws {
    emu: RunningEmulator,
    url: String,
    dir: tempfile::TempDir,
    registry: Registry,
    backend: Arc<dyn Backend>,
}

impl Ws {
    async fn new() -> Ws {
        let emu = Emulator::start(EmulatorConfig::for_tests()).await.unwrap();
        let url = emu.url();
        let dir = tempfile::tempdir().unwrap();
        let mut registry = Registry::new();
        registry.register(Arc::new(DatabricksProvider::new(Options {
            local: Some((url.clone(), "t".into())),
            secrets: Arc::new(MemoryStore::new()),
            env: Arc::new(|_: &str| None),
        })));
        let backend: Arc<dyn Backend> = Arc::new(LocalBackend::new(dir.path()));
        Ws {
            emu,
            url,
            dir,
            registry,
            backend,
        }
    }

    /// Plans `hcl` against the saved state; applies it when `apply` is set.
    async fn run(&self, hcl: &str, mode: PlanMode, apply: bool) -> (Plan, Option<ApplyReport>) {
        let (config, d) = load_sources(
            self.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), hcl.into())],
        );
        assert!(!d.has_errors(), "{d:?}");
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        let engine = Engine::new(&config, &self.registry, &vars, "default");
        let rec = recover(self.backend.clone(), "default").await.unwrap();
        let mut doc = rec.document;
        self.backend.save("default", &mut doc).await.unwrap();
        let req = PlanRequest {
            mode,
            refresh: true,
            ..Default::default()
        };
        let (planned, d) = engine.plan(&doc, &req).await;
        let planned = planned.unwrap_or_else(|| panic!("{d:?}"));
        assert!(!d.has_errors(), "{d:?}");
        if !apply {
            return (planned.plan, None);
        }
        let opts = ApplyOptions {
            parallelism: 10,
            cancel: CancellationToken::new(),
            on_event: Arc::new(|_| {}),
        };
        let planned = Arc::new(planned);
        let (mut doc, report) = engine.apply(planned.clone(), doc, rec.journal, opts).await;
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        self.backend.save("default", &mut doc).await.unwrap();
        (Arc::unwrap_or_clone(planned).plan, Some(report))
    }

    async fn apply(&self, hcl: &str) -> ApplyReport {
        self.run(hcl, PlanMode::Normal, true).await.1.unwrap()
    }
    async fn plan(&self, hcl: &str) -> Plan {
        self.run(hcl, PlanMode::Normal, false).await.0
    }
    async fn destroy(&self, hcl: &str) -> ApplyReport {
        self.run(hcl, PlanMode::Destroy, true).await.1.unwrap()
    }

    async fn state(&self) -> StateDocument {
        recover(self.backend.clone(), "default")
            .await
            .unwrap()
            .document
    }

    async fn api(&self, method: reqwest::Method, path: &str, body: Option<Json>) -> Json {
        let mut r = reqwest::Client::new()
            .request(method, format!("{}{path}", self.url))
            .bearer_auth("t");
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        assert!(resp.status().is_success(), "{path}: {}", resp.status());
        resp.json().await.unwrap_or(Json::Null)
    }

    async fn get(&self, path: &str) -> Json {
        self.api(reqwest::Method::GET, path, None).await
    }

    /// Request bodies the emulator logged for a method and a path pattern.
    async fn requests(&self, method: &str, path: &str) -> Vec<Json> {
        let log = self
            .get(&format!("/__emulator/requests?method={method}&path={path}"))
            .await;
        log["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["body"].clone())
            .collect()
    }

    async fn clear_requests(&self) {
        self.api(reqwest::Method::DELETE, "/__emulator/requests", None)
            .await;
    }

    async fn pipeline_ids(&self) -> Vec<String> {
        let l = self.get("/api/2.0/pipelines").await;
        l["statuses"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|s| s["pipeline_id"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn id_of(&self, address: &str) -> String {
        self.state()
            .await
            .get(&brickform_core::addrs::InstanceAddr::parse(address).unwrap())
            .unwrap()
            .id
            .clone()
    }
}

fn change<'a>(plan: &'a Plan, address: &str) -> &'a ResourceChange {
    plan.changes
        .iter()
        .find(|c| c.address() == address)
        .unwrap_or_else(|| panic!("no change for {address}: {:#?}", plan.changes))
}

/// The instances the plan would touch, with their actions.
fn touched(plan: &Plan) -> Vec<(String, Action)> {
    plan.changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| (c.address(), c.action))
        .collect()
}

fn field_names(c: &ResourceChange) -> Vec<String> {
    c.fields.iter().map(|f| path_string(&f.path)).collect()
}

fn assert_no_changes(plan: &Plan) {
    assert!(
        !plan.has_changes() && plan.drift.is_empty(),
        "expected no changes: {:#?}",
        plan.changes
            .iter()
            .filter(|c| c.action != Action::NoOp)
            .collect::<Vec<_>>()
    );
}

const UC: &str = r#"
resource "databricks_catalog" "c" {
  name          = "lake"
  force_destroy = true
}
resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "bronze"
}
"#;

fn pipeline_config(conf_value: &str, storage: &str) -> String {
    format!(
        r#"{UC}
resource "databricks_pipeline" "p" {{
  name       = "orders"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = false
  cluster {{
    num_workers = 1
  }}
  library {{
    notebook {{
      path = "/Shared/orders"
    }}
  }}
  configuration = {{
    "source" = "{conf_value}"
  }}
}}
resource "databricks_pipeline" "hms" {{
  name    = "legacy"
  storage = "{storage}"
  target  = "legacy_db"
  library {{
    file {{
      path = "/Shared/legacy.py"
    }}
  }}
}}
"#
    )
}

#[tokio::test]
async fn pipeline_apply_noop_update_replace_destroy() {
    let ws = Ws::new().await;
    let v1 = pipeline_config("/Volumes/lake/bronze/in", "dbfs:/legacy/one");
    let report = ws.apply(&v1).await;
    assert_eq!(report.added, 4);
    assert_no_changes(&ws.plan(&v1).await);

    // `serverless = false` reached the service, with the cluster.
    let posts = ws.requests("POST", "/api/2.0/pipelines").await;
    let orders = posts.iter().find(|b| b["name"] == "orders").unwrap();
    assert_eq!(orders["serverless"], json!(false), "{orders}");
    assert_eq!(orders["clusters"], json!([{"num_workers": 1}]));
    assert_eq!(orders["catalog"], json!("lake"));

    // One attribute changed: exactly that update, nothing else.
    let id = ws.id_of("databricks_pipeline.p").await;
    let v2 = pipeline_config("/Volumes/lake/bronze/landing", "dbfs:/legacy/one");
    let plan = ws.plan(&v2).await;
    assert_eq!(
        touched(&plan),
        [("databricks_pipeline.p".to_string(), Action::Update)]
    );
    assert_eq!(
        field_names(change(&plan, "databricks_pipeline.p")),
        // Every edit moves last_modified.
        ["configuration", "last_modified"]
    );
    ws.clear_requests().await;
    let report = ws.apply(&v2).await;
    assert_eq!((report.changed, report.added, report.destroyed), (1, 0, 0));
    // A full-spec PUT, with the optimistic lock and everything configured.
    let puts = ws
        .requests("PUT", &format!("/api/2.0/pipelines/{id}"))
        .await;
    assert_eq!(puts.len(), 1);
    let put = &puts[0];
    assert!(put["expected_last_modified"].is_i64(), "{put}");
    assert_eq!(put["serverless"], json!(false));
    assert_eq!(
        put["configuration"]["source"],
        "/Volumes/lake/bronze/landing"
    );
    assert_eq!(
        put["libraries"],
        json!([{"notebook": {"path": "/Shared/orders"}}])
    );
    assert_eq!(
        ws.id_of("databricks_pipeline.p").await,
        id,
        "updated in place"
    );
    let live = ws.get(&format!("/api/2.0/pipelines/{id}")).await;
    assert_eq!(
        live["spec"]["configuration"]["source"],
        "/Volumes/lake/bronze/landing"
    );
    assert_no_changes(&ws.plan(&v2).await);

    // `storage` cannot change in place.
    let old_hms = ws.id_of("databricks_pipeline.hms").await;
    let v3 = pipeline_config("/Volumes/lake/bronze/landing", "dbfs:/legacy/two");
    let plan = ws.plan(&v3).await;
    assert_eq!(
        touched(&plan),
        [(
            "databricks_pipeline.hms".to_string(),
            Action::DeleteThenCreate
        )]
    );
    let c = change(&plan, "databricks_pipeline.hms");
    // Besides the computed values a new object gets, only `storage` changes, and it is
    // what forces the replacement.
    let configured: Vec<String> = c
        .fields
        .iter()
        .filter(|f| f.reason != FieldReason::KnownAfterApply)
        .map(|f| path_string(&f.path))
        .collect();
    assert_eq!(configured, ["storage"], "{:#?}", c.fields);
    assert!(
        c.fields
            .iter()
            .any(|f| f.forces_replacement && path_string(&f.path) == "storage")
    );
    let report = ws.apply(&v3).await;
    assert_eq!((report.added, report.destroyed), (1, 1));
    let new_hms = ws.id_of("databricks_pipeline.hms").await;
    assert_ne!(new_hms, old_hms);
    assert!(!ws.pipeline_ids().await.contains(&old_hms));
    assert_no_changes(&ws.plan(&v3).await);

    // Destroy leaves nothing; a second destroy has nothing to do.
    let report = ws.destroy(&v3).await;
    assert_eq!(report.destroyed, 4);
    assert!(ws.pipeline_ids().await.is_empty());
    assert!(ws.state().await.resources().is_empty());
    let (plan, _) = ws.run(&v3, PlanMode::Destroy, false).await;
    assert!(!plan.has_changes(), "{:#?}", plan.changes);
    ws.emu.shutdown().await;
}

/// Every field of the spec set, with false values among them: round-trips without drift,
/// and every one reaches the wire under its API name.
const EVERY_FIELD: &str = r#"
resource "databricks_catalog" "c" {
  name          = "lake"
  force_destroy = true
}
resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = "silver"
}
resource "databricks_pipeline" "all" {
  name                  = "every_field"
  catalog               = "LAKE"
  schema                = databricks_schema.s.name
  serverless            = false
  continuous            = false
  development           = true
  photon                = false
  channel               = "PREVIEW"
  edition               = "PRO"
  root_path             = "/Workspace/Shared/every"
  budget_policy_id      = "bp-1"
  usage_policy_id       = "up-1"
  allow_duplicate_names = false
  cascade               = false
  configuration = {
    "spark.x" = "1"
  }
  parameters = {
    "env" = "dev"
  }
  tags = {
    team = "data"
  }
  cluster {
    label       = "default"
    num_workers = 0
    node_type_id = "i3.xlarge"
    spark_conf = {
      "spark.databricks.cluster.profile" = "singleNode"
    }
    custom_tags = {
      "ResourceClass" = "SingleNode"
    }
    aws_attributes {
      availability = "SPOT"
    }
  }
  cluster {
    label = "maintenance"
    autoscale {
      min_workers = 1
      max_workers = 3
      mode        = "ENHANCED"
    }
  }
  library {
    notebook {
      path = "/Shared/a"
    }
  }
  library {
    file {
      path = "/Shared/b.py"
    }
  }
  library {
    glob {
      include = "/Shared/transforms/**"
    }
  }
  library {
    whl = "/Volumes/lake/silver/w/x.whl"
  }
  library {
    jar = "/Volumes/lake/silver/w/x.jar"
  }
  library {
    maven {
      coordinates = "org.example:lib:1.0"
      exclusions  = ["org.slf4j:slf4j-api"]
    }
  }
  environment {
    dependencies = ["requests==2.32.0"]
  }
  event_log {
    name    = "events"
    catalog = "lake"
    schema  = "silver"
  }
  notification {
    email_recipients = ["ops@example.com"]
    alerts           = ["on-update-failure", "on-flow-failure"]
  }
  run_as {
    service_principal_name = "8f0e-sp"
  }
  restart_window {
    start_hour   = 0
    days_of_week = ["SATURDAY", "SUNDAY"]
    time_zone_id = "Europe/Amsterdam"
  }
  filters {
    include = ["com.example.*"]
  }
  trigger {
    manual {}
  }
  deployment {
    kind               = "BUNDLE"
    metadata_file_path = "/Workspace/Shared/.bundle/metadata.json"
  }
}
"#;

#[tokio::test]
async fn every_field_round_trips_without_drift() {
    let ws = Ws::new().await;
    ws.apply(EVERY_FIELD).await;
    assert_no_changes(&ws.plan(EVERY_FIELD).await);

    let posts = ws.requests("POST", "/api/2.0/pipelines").await;
    let b = posts.iter().find(|b| b["name"] == "every_field").unwrap();
    for (k, v) in [
        ("serverless", json!(false)),
        ("continuous", json!(false)),
        ("photon", json!(false)),
        ("development", json!(true)),
        ("allow_duplicate_names", json!(false)),
        ("catalog", json!("lake")),
        ("channel", json!("PREVIEW")),
        ("edition", json!("PRO")),
        ("root_path", json!("/Workspace/Shared/every")),
        ("budget_policy_id", json!("bp-1")),
        ("usage_policy_id", json!("up-1")),
        ("parameters", json!({"env": "dev"})),
        ("environment", json!({"dependencies": ["requests==2.32.0"]})),
        (
            "event_log",
            json!({"name": "events", "catalog": "lake", "schema": "silver"}),
        ),
        ("run_as", json!({"service_principal_name": "8f0e-sp"})),
        ("filters", json!({"include": ["com.example.*"]})),
        ("trigger", json!({"manual": {}})),
    ] {
        assert_eq!(b[k], v, "{k} in {b}");
    }
    assert!(
        b.get("cascade").is_none(),
        "cascade is brickform's only: {b}"
    );
    assert_eq!(b["clusters"][0]["num_workers"], json!(0), "{b}");
    assert_eq!(b["clusters"][1]["autoscale"]["max_workers"], json!(3));
    assert_eq!(b["clusters"][0]["aws_attributes"]["availability"], "SPOT");
    assert_eq!(b["libraries"].as_array().unwrap().len(), 6);
    assert_eq!(
        b["libraries"][5]["maven"]["exclusions"],
        json!(["org.slf4j:slf4j-api"])
    );
    assert_eq!(b["restart_window"]["start_hour"], json!(0));
    assert_eq!(
        b["notifications"][0]["alerts"],
        json!(["on-update-failure", "on-flow-failure"])
    );

    // Computed attributes are in state.
    let st = ws.state().await;
    let rs = st
        .get(&brickform_core::addrs::InstanceAddr::parse("databricks_pipeline.all").unwrap())
        .unwrap();
    assert_eq!(rs.computed["id"], json!(rs.id));
    assert!(rs.computed["last_modified"].is_i64());
    assert!(rs.computed["creator_user_name"].is_string());
    assert_eq!(rs.computed["run_as_user_name"], json!("8f0e-sp"));
    assert_eq!(rs.computed["state"], json!("IDLE"));
    assert!(rs.computed["url"].as_str().unwrap().ends_with(&rs.id));

    // Delete honours `cascade`.
    ws.clear_requests().await;
    ws.destroy(EVERY_FIELD).await;
    let log = ws.get("/__emulator/requests?method=DELETE").await;
    let del = log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["path"]
                .as_str()
                .unwrap()
                .starts_with("/api/2.0/pipelines/")
        })
        .unwrap()
        .clone();
    assert_eq!(del["query"], json!("cascade=false"), "{del}");
    assert!(ws.pipeline_ids().await.is_empty());
    ws.emu.shutdown().await;
}

#[tokio::test]
async fn server_defaults_and_outside_changes() {
    let ws = Ws::new().await;
    // Nothing but a name and a notebook: the service fills channel, edition, storage.
    let cfg = r#"
resource "databricks_pipeline" "p" {
  name = "bare"
  library {
    notebook {
      path = "/Shared/bare"
    }
  }
  cluster {
    num_workers = 2
  }
}
"#;
    ws.apply(cfg).await;
    let id = ws.id_of("databricks_pipeline.p").await;
    let live = ws.get(&format!("/api/2.0/pipelines/{id}")).await;
    assert_eq!(live["spec"]["edition"], "ADVANCED");
    assert_eq!(live["spec"]["channel"], "CURRENT");
    assert_eq!(
        live["spec"]["storage"],
        json!(format!("dbfs:/pipelines/{id}"))
    );
    assert_no_changes(&ws.plan(cfg).await);

    // A change made outside brickform (a full edit that drops the library and adds a
    // service-side cluster label and node type) is planned back as drift; the node type
    // the service filled and the default label are not.
    let mut spec = live["spec"].clone();
    spec["libraries"] = json!([{"notebook": {"path": "/Shared/other"}}]);
    spec["clusters"] = json!([{"label": "default", "num_workers": 2, "node_type_id": "i3.xlarge"}]);
    spec.as_object_mut().unwrap().remove("id");
    ws.api(
        reqwest::Method::PUT,
        &format!("/api/2.0/pipelines/{id}"),
        Some(spec),
    )
    .await;
    let plan = ws.plan(cfg).await;
    let c = change(&plan, "databricks_pipeline.p");
    assert_eq!(c.action, Action::Update);
    assert_eq!(field_names(c), ["library", "last_modified"]);
    assert_eq!(c.fields[0].reason, FieldReason::Drift);
    ws.apply(cfg).await;
    assert_no_changes(&ws.plan(cfg).await);
    ws.destroy(cfg).await;
    assert!(ws.pipeline_ids().await.is_empty());
    ws.emu.shutdown().await;
}

#[tokio::test]
async fn ownership_tag_on_the_wire_not_in_state() {
    let ws = Ws::new().await;
    let cfg = r#"
resource "databricks_pipeline" "p" {
  name = "tagged"
  tags = {
    team = "data"
  }
  library {
    notebook {
      path = "/Shared/t"
    }
  }
}
"#;
    ws.apply(cfg).await;
    let st = ws.state().await;
    let lineage = st.lineage().to_string();
    let rs = st
        .get(&brickform_core::addrs::InstanceAddr::parse("databricks_pipeline.p").unwrap())
        .unwrap();
    let want = format!("{lineage}/default/databricks_pipeline.p");
    let posts = ws.requests("POST", "/api/2.0/pipelines").await;
    assert_eq!(posts[0]["tags"], json!({"team": "data", "brickform": want}));
    let live = ws.get(&format!("/api/2.0/pipelines/{}", rs.id)).await;
    assert_eq!(live["spec"]["tags"]["brickform"], json!(want));
    assert_eq!(rs.config["tags"], json!({"team": "data"}));
    assert_eq!(rs.computed["tags"], json!({"team": "data"}));
    assert_no_changes(&ws.plan(cfg).await);

    // Updates keep the tag.
    let cfg2 = cfg.replace("\"data\"", "\"platform\"");
    ws.clear_requests().await;
    ws.apply(&cfg2).await;
    let puts = ws.requests("PUT", "/api/2.0/pipelines/.*").await;
    assert_eq!(
        puts[0]["tags"],
        json!({"team": "platform", "brickform": want})
    );

    // An interrupted create is found again by its natural key, and only the right one:
    // another pipeline of the same name owned by another address does not match.
    let kind = ws.registry.kind("databricks_pipeline").unwrap().clone();
    let ctx = OpContext {
        address: "databricks_pipeline.p".into(),
        lineage: lineage.clone(),
        environment: "default".into(),
        base_dir: ws.dir.path().to_path_buf(),
        create_token: None,
        output: None,
        planned: None,
    };
    let mut config = brickform_core::value::Object::default();
    config.insert("name".into(), "tagged".into());
    let key = kind.natural_key(&ctx, &config).unwrap();
    ws.api(
        reqwest::Method::POST,
        "/api/2.0/pipelines",
        Some(json!({"name": "tagged", "allow_duplicate_names": true,
                    "tags": {"brickform": format!("{lineage}/default/databricks_pipeline.q")}})),
    )
    .await;
    let found = kind.find_by_key(&ctx, &key).await.unwrap().unwrap();
    assert_eq!(found.id, rs.id);
    let other = OpContext {
        address: "databricks_pipeline.r".into(),
        ..ctx.clone()
    };
    let missing = kind
        .find_by_key(&other, &kind.natural_key(&other, &config).unwrap())
        .await
        .unwrap();
    assert!(missing.is_none());

    // A for_each address is written with cluster-tag-safe characters.
    let each = OpContext {
        address: "databricks_pipeline.p[\"a b\"]".into(),
        ..ctx
    };
    let k = kind.natural_key(&each, &config).unwrap();
    assert!(k.ends_with("/databricks_pipeline.p:5B:22a b:22:5D"), "{k}");
    ws.emu.shutdown().await;
}

fn lakeflow_config(storage_schema: &str, scd: &str, gateway_continuous: bool) -> String {
    format!(
        r#"
resource "databricks_catalog" "c" {{
  name          = "lake"
  force_destroy = true
}}
resource "databricks_schema" "stage" {{
  catalog_name = databricks_catalog.c.name
  name         = "staging"
}}
resource "databricks_schema" "stage2" {{
  catalog_name = databricks_catalog.c.name
  name         = "staging2"
}}
resource "databricks_schema" "bronze" {{
  catalog_name = databricks_catalog.c.name
  name         = "bronze"
}}
resource "databricks_connection" "sql" {{
  name            = "erp"
  connection_type = "SQLSERVER"
  options = {{
    host     = "erp.example.com"
    port     = "1433"
    user     = "reader"
    password = "secret"
  }}
}}
resource "databricks_ingestion_gateway" "gw" {{
  name                    = "erp_gateway"
  catalog                 = databricks_catalog.c.name
  schema                  = databricks_schema.{storage_schema}.name
  continuous              = {gateway_continuous}
  connection_name         = databricks_connection.sql.name
  gateway_storage_catalog = databricks_catalog.c.name
  gateway_storage_schema  = databricks_schema.{storage_schema}.name
  gateway_storage_name    = "erp_gateway_stage"
  cluster {{
    label       = "default"
    num_workers = 1
  }}
}}
resource "databricks_ingestion_pipeline" "ing" {{
  name                 = "erp_ingest"
  catalog              = databricks_catalog.c.name
  schema               = databricks_schema.bronze.name
  serverless           = false
  ingestion_gateway_id = databricks_ingestion_gateway.gw.id
  cluster {{
    num_workers = 1
  }}
  notification {{
    email_recipients = ["ops@example.com"]
    alerts           = ["on-update-fatal-failure"]
  }}
  table_configuration {{
    scd_type = "SCD_TYPE_1"
  }}
  object {{
    table {{
      source_catalog      = "erp"
      source_schema       = "dbo"
      source_table        = "Orders"
      destination_catalog = databricks_catalog.c.name
      destination_schema  = databricks_schema.bronze.name
      table_configuration {{
        scd_type     = "{scd}"
        primary_keys = ["order_id"]
        sequence_by  = ["updated_at"]
        exclude_columns = ["notes"]
      }}
    }}
  }}
  object {{
    schema {{
      source_catalog      = "erp"
      source_schema       = "sales"
      destination_catalog = databricks_catalog.c.name
      destination_schema  = databricks_schema.bronze.name
    }}
  }}
  object {{
    table {{
      source_catalog      = "erp"
      source_schema       = "dbo"
      source_table        = "Customers"
      destination_catalog = databricks_catalog.c.name
      destination_schema  = databricks_schema.bronze.name
      destination_table   = "customers_raw"
      table_configuration {{
        query_based_connector_config {{
          cursor_columns = ["modified"]
        }}
      }}
    }}
  }}
}}
output "tables" {{
  value = databricks_ingestion_pipeline.ing.tables
}}
"#
    )
}

#[tokio::test]
async fn gateway_and_ingestion_pipeline() {
    let ws = Ws::new().await;
    let v1 = lakeflow_config("stage", "SCD_TYPE_2", true);
    let report = ws.apply(&v1).await;
    assert_eq!(report.added, 7);
    // No drift and, above all, no replacement when nothing changed (#4418/#4419).
    assert_no_changes(&ws.plan(&v1).await);

    // On the wire: the definitions nest what HCL writes at the top level.
    let posts = ws.requests("POST", "/api/2.0/pipelines").await;
    let gw = posts.iter().find(|b| b["name"] == "erp_gateway").unwrap();
    assert_eq!(
        gw["gateway_definition"],
        json!({"connection_name": "erp", "gateway_storage_catalog": "lake",
               "gateway_storage_schema": "staging", "gateway_storage_name": "erp_gateway_stage"})
    );
    assert!(gw.get("connection_name").is_none());
    let gw_id = ws.id_of("databricks_ingestion_gateway.gw").await;
    let ing = posts.iter().find(|b| b["name"] == "erp_ingest").unwrap();
    assert_eq!(ing["serverless"], json!(false), "{ing}");
    let def = &ing["ingestion_definition"];
    assert_eq!(def["ingestion_gateway_id"], json!(gw_id));
    assert_eq!(
        def["table_configuration"],
        json!({"scd_type": "SCD_TYPE_1"})
    );
    assert_eq!(def["objects"].as_array().unwrap().len(), 3);
    assert_eq!(
        def["objects"][0]["table"]["table_configuration"],
        json!({"scd_type": "SCD_TYPE_2", "primary_keys": ["order_id"],
               "sequence_by": ["updated_at"], "exclude_columns": ["notes"]})
    );
    assert_eq!(def["objects"][1]["schema"]["source_schema"], "sales");
    assert!(ing.get("tables").is_none() && def.get("tables").is_none());

    // The destination tables with their SCD types, for flows to reference.
    let st = ws.state().await;
    let rs = st
        .get(
            &brickform_core::addrs::InstanceAddr::parse("databricks_ingestion_pipeline.ing")
                .unwrap(),
        )
        .unwrap();
    assert_eq!(rs.computed["source_type"], json!("SQLSERVER"));
    let tables = &rs.computed["tables"];
    assert_eq!(tables[0]["destination_table"], "lake.bronze.orders");
    assert_eq!(tables[0]["scd_type"], "SCD_TYPE_2");
    assert_eq!(tables[1]["destination_table"], "lake.bronze.customers_raw");
    assert_eq!(tables[1]["scd_type"], "SCD_TYPE_1", "pipeline-wide default");
    assert_eq!(
        rs.computed["schemas"],
        json!([{"source_catalog": "erp", "source_schema": "sales",
                "destination_schema": "lake.bronze", "scd_type": "SCD_TYPE_1"}])
    );
    let output = report
        .outputs
        .iter()
        .find(|(n, _, _)| n == "tables")
        .unwrap();
    assert_eq!(
        output.1.to_json(),
        *tables,
        "the output sees the same tables"
    );

    // An object's table configuration changes in place; the computed SCD type follows.
    let v2 = lakeflow_config("stage", "APPEND_ONLY", true);
    let plan = ws.plan(&v2).await;
    assert_eq!(
        touched(&plan),
        [(
            "databricks_ingestion_pipeline.ing".to_string(),
            Action::Update
        )]
    );
    let c = change(&plan, "databricks_ingestion_pipeline.ing");
    assert_eq!(
        field_names(c),
        ["tables", "table", "object", "last_modified"]
    );
    ws.apply(&v2).await;
    let ing_id = ws.id_of("databricks_ingestion_pipeline.ing").await;
    let live = ws.get(&format!("/api/2.0/pipelines/{ing_id}")).await;
    assert_eq!(
        live["spec"]["ingestion_definition"]["objects"][0]["table"]["table_configuration"]["scd_type"],
        "APPEND_ONLY"
    );
    let st = ws.state().await;
    assert_eq!(
        st.get(
            &brickform_core::addrs::InstanceAddr::parse("databricks_ingestion_pipeline.ing")
                .unwrap()
        )
        .unwrap()
        .computed["tables"][0]["scd_type"],
        "APPEND_ONLY"
    );
    assert_no_changes(&ws.plan(&v2).await);

    // A gateway setting that is not immutable changes in place.
    let v3 = lakeflow_config("stage", "APPEND_ONLY", false);
    let plan = ws.plan(&v3).await;
    assert_eq!(
        touched(&plan),
        [(
            "databricks_ingestion_gateway.gw".to_string(),
            Action::Update
        )]
    );
    assert_eq!(
        field_names(change(&plan, "databricks_ingestion_gateway.gw")),
        // Stopping a continuous gateway changes its state.
        ["continuous", "state", "last_modified"]
    );
    ws.apply(&v3).await;
    assert_eq!(ws.id_of("databricks_ingestion_gateway.gw").await, gw_id);
    assert_no_changes(&ws.plan(&v3).await);

    // The staging location is immutable: the gateway is replaced, and with it the
    // ingestion pipeline whose gateway id changes.
    let v4 = lakeflow_config("stage2", "APPEND_ONLY", false);
    let plan = ws.plan(&v4).await;
    let gw_change = change(&plan, "databricks_ingestion_gateway.gw");
    assert_eq!(gw_change.action, Action::DeleteThenCreate);
    let forcing: Vec<String> = gw_change
        .fields
        .iter()
        .filter(|f| f.forces_replacement)
        .map(|f| path_string(&f.path))
        .collect();
    assert_eq!(forcing, ["gateway_storage_schema"]);
    assert!(
        change(&plan, "databricks_ingestion_pipeline.ing")
            .action
            .is_replace()
    );
    ws.apply(&v4).await;
    let new_gw = ws.id_of("databricks_ingestion_gateway.gw").await;
    assert_ne!(new_gw, gw_id);
    let ing_id = ws.id_of("databricks_ingestion_pipeline.ing").await;
    let live = ws.get(&format!("/api/2.0/pipelines/{ing_id}")).await;
    assert_eq!(
        live["spec"]["ingestion_definition"]["ingestion_gateway_id"],
        json!(new_gw)
    );
    assert_no_changes(&ws.plan(&v4).await);

    // Destroy leaves nothing; again is a no-op.
    let report = ws.destroy(&v4).await;
    assert_eq!(report.destroyed, 7);
    assert!(ws.pipeline_ids().await.is_empty());
    let (plan, _) = ws.run(&v4, PlanMode::Destroy, false).await;
    assert!(
        touched(&plan).is_empty(),
        "{:#?} {:#?}",
        plan.changes,
        plan.outputs
    );
    ws.emu.shutdown().await;
}

#[tokio::test]
async fn invalid_shapes_are_rejected_before_any_call() {
    let ws = Ws::new().await;
    for (cfg, want) in [
        (
            r#"resource "databricks_pipeline" "p" {
  name = "x"
  library {
    notebook {
      path = "/a"
    }
    whl = "/b.whl"
  }
}"#,
            "library[0]: set only one of",
        ),
        (
            r#"resource "databricks_ingestion_pipeline" "p" {
  name            = "x"
  connection_name = "c"
  ingestion_gateway_id = "g"
  object {
    table {
      destination_catalog = "a"
      destination_schema  = "b"
    }
  }
}"#,
            "source: set only one of",
        ),
        (
            r#"resource "databricks_ingestion_pipeline" "p" {
  name            = "x"
  connection_name = "c"
  object {
    table {
      destination_catalog = "a"
      destination_schema  = "b"
    }
    schema {
      destination_catalog = "a"
      destination_schema  = "b"
    }
  }
}"#,
            "object[0]: set only one of",
        ),
        (
            r#"resource "databricks_ingestion_pipeline" "p" {
  name            = "x"
  connection_name = "c"
  tables          = []
  object {
    table {
      destination_catalog = "a"
      destination_schema  = "b"
    }
  }
}"#,
            "tables is derived",
        ),
        (
            r#"resource "databricks_pipeline" "p" {
  name = "x"
  tags = {
    brickform = "mine"
  }
}"#,
            "reserved for brickform",
        ),
    ] {
        let (config, d) = load_sources(
            ws.dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), cfg.into())],
        );
        assert!(!d.has_errors(), "{d:?}");
        let (vars, _) = resolve(&config, &VarInputs::default(), None);
        let engine = Engine::new(&config, &ws.registry, &vars, "default");
        let doc = recover(ws.backend.clone(), "default")
            .await
            .unwrap()
            .document;
        let (_, d) = engine.plan(&doc, &PlanRequest::default()).await;
        let text = format!("{d:?}");
        assert!(d.has_errors() && text.contains(want), "{want}: {text}");
    }
    assert!(ws.pipeline_ids().await.is_empty());
    ws.emu.shutdown().await;
}
