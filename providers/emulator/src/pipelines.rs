//! Lakeflow declarative pipelines, including Lakeflow Connect gateways and ingestion
//! pipelines, and their updates.
//!
//! An update's state is a pure function of its creation time, the step duration it was
//! created with, whether it is doomed to fail, and when it was stopped; nothing ticks.

use crate::app::App;
use crate::behaviours::Behaviour;
use crate::body::{JsonBody, Obj, Params, PathParam};
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::store::{Ctx, State};
use crate::util::{compact, drop_empty, iso_date};
use axum::extract::State as AxState;
use axum::routing::{get, post};
use axum::{Json, Router};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::ops::Bound;
use std::sync::Arc;

const STEPS: &[&str] = &[
    "QUEUED",
    "CREATED",
    "WAITING_FOR_RESOURCES",
    "INITIALIZING",
    "SETTING_UP_TABLES",
    "RUNNING",
];
/// A failing update fails when it would set up tables.
const FAIL_AT: i64 = 4;
const TERMINAL: &[&str] = &["COMPLETED", "FAILED", "CANCELED"];
const CAUSES: &[&str] = &[
    "API_CALL",
    "JOB_TASK",
    "RETRY_ON_FAILURE",
    "SCHEMA_CHANGE",
    "SERVICE_UPGRADE",
    "USER_ACTION",
    "INFRASTRUCTURE_MAINTENANCE",
];
/// Request-only fields that are not part of the stored spec.
const NOT_SPEC: &[&str] = &[
    "parameters",
    "run_as",
    "allow_duplicate_names",
    "dry_run",
    "expected_last_modified",
    "pipeline_id",
];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pipeline {
    pub id: String,
    pub spec: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as: Option<Value>,
    pub creator: String,
    pub last_modified: i64,
    /// Oldest first.
    pub updates: Vec<Update>,
    /// A delete is asynchronous: the pipeline reads as DELETING until this time, then is
    /// gone (see [`advance`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleting_until: Option<i64>,
    /// Whether the delete drops the tables the pipeline defined (`cascade`, default true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_tables: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Update {
    pub update_id: String,
    pub creation_time: i64,
    pub cause: String,
    pub request: Map<String, Value>,
    pub config: Map<String, Value>,
    pub continuous: bool,
    pub step_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canceled_at: Option<i64>,
}

impl Update {
    fn natural(&self, t: i64) -> &'static str {
        let elapsed = t.saturating_sub(self.creation_time).max(0);
        let k = if self.step_ms <= 0 {
            i64::MAX
        } else {
            elapsed / self.step_ms
        };
        let step = |i: i64| STEPS[usize::try_from(i).unwrap_or(0).min(STEPS.len() - 1)];
        if self.failure.is_some() {
            if k >= FAIL_AT { "FAILED" } else { step(k) }
        } else if self.continuous {
            step(k.min(5))
        } else if k >= 6 {
            "COMPLETED"
        } else {
            step(k)
        }
    }

    pub fn state_at(&self, now: i64) -> &'static str {
        if let Some(c) = self.canceled_at
            && now >= c
            && !TERMINAL.contains(&self.natural(c))
        {
            return "CANCELED";
        }
        self.natural(now)
    }

    pub fn is_active(&self, now: i64) -> bool {
        !TERMINAL.contains(&self.state_at(now))
    }

    /// When the update reaches a terminal state, if it does (continuous ones run until stopped).
    pub fn end_time(&self) -> Option<i64> {
        let natural = if self.failure.is_some() {
            Some(
                self.creation_time
                    .saturating_add(FAIL_AT.saturating_mul(self.step_ms.max(0))),
            )
        } else if self.continuous {
            None
        } else {
            Some(
                self.creation_time
                    .saturating_add(self.step_ms.max(0).saturating_mul(6)),
            )
        };
        match (natural, self.canceled_at) {
            (Some(n), Some(c)) => Some(n.min(c)),
            (n, c) => n.or(c),
        }
    }

    fn info(&self, pipeline_id: &str, now: i64, with_config: bool) -> Value {
        let mut m = compact(json!({
            "pipeline_id": pipeline_id, "update_id": self.update_id, "state": self.state_at(now), "cause": self.cause,
            "creation_time": self.creation_time, "full_refresh": self.request.get("full_refresh").cloned().unwrap_or(json!(false)),
            "mode": if self.continuous { "CONTINUOUS" } else { "DEFAULT" },
        }));
        for (k, v) in &self.request {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if with_config {
            m.insert("config".into(), Value::Object(self.config.clone()));
        }
        Value::Object(m)
    }
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/api/2.0/pipelines", post(create).get(list))
        .route(
            "/api/2.0/pipelines/{id}",
            get(get_pipeline).put(edit).delete(delete),
        )
        .route(
            "/api/2.0/pipelines/{id}/updates",
            post(start_update).get(list_updates),
        )
        .route(
            "/api/2.0/pipelines/{id}/updates/{update_id}",
            get(get_update),
        )
        .route("/api/2.0/pipelines/{id}/stop", post(stop))
}

type Reply = ApiResult<Json<Value>>;

fn missing(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Pipeline '{id}' does not exist."),
    )
}

fn ref_error(field: &str, what: &str) -> ApiError {
    ApiError::invalid(format!("Invalid value for field '{field}': {what}"))
}

// ---------- validation ----------

fn check_table_config(o: Obj) -> ApiResult<()> {
    o.enum_str("scd_type", &["SCD_TYPE_1", "SCD_TYPE_2", "APPEND_ONLY"])?;
    for k in [
        "primary_keys",
        "sequence_by",
        "include_columns",
        "exclude_columns",
        "clustering_columns",
    ] {
        o.strs(k)?;
    }
    if o.has("include_columns") && o.has("exclude_columns") {
        return Err(ApiError::invalid(format!(
            "Only one of {}, {} may be set",
            o.path("include_columns"),
            o.path("exclude_columns")
        )));
    }
    o.str("row_filter")?;
    o.bool("enable_auto_clustering")?;
    o.str_map("table_properties")?;
    Ok(())
}

fn check_ingestion(o: Obj) -> ApiResult<()> {
    o.str("ingestion_gateway_id")?;
    o.str("connection_name")?;
    let foreign = o.bool("ingest_from_uc_foreign_catalog")?.unwrap_or(false);
    if o.has("ingestion_gateway_id") && o.has("connection_name") {
        return Err(ApiError::invalid(
            "Only one of ingestion_definition.ingestion_gateway_id, ingestion_definition.connection_name may be set",
        ));
    }
    if !o.has("ingestion_gateway_id") && !o.has("connection_name") && !foreign {
        return Err(ApiError::invalid(
            "One of ingestion_definition.ingestion_gateway_id, ingestion_definition.connection_name or ingestion_definition.ingest_from_uc_foreign_catalog must be set",
        ));
    }
    o.enum_str("connector_type", &["CDC", "QUERY_BASED"])?;
    if let Some(tc) = o.obj("table_configuration")? {
        check_table_config(Obj::at(tc, &o.path("table_configuration")))?;
    }
    let objects = o.objs("objects")?;
    if objects.is_empty() {
        return Err(crate::body::missing(&o.path("objects")));
    }
    for (p, m) in &objects {
        let item = Obj::at(m, p);
        let kind = item.one_of(&["schema", "table", "report"])?;
        let spec_path = item.path(kind);
        let spec = Obj::at(item.req_obj(kind)?, &spec_path);
        if kind == "report" {
            spec.req_str("source_url")?;
        }
        spec.req_str("destination_catalog")?;
        spec.req_str("destination_schema")?;
        for k in [
            "source_catalog",
            "source_schema",
            "source_table",
            "destination_table",
        ] {
            spec.str(k)?;
        }
        if let Some(tc) = spec.obj("table_configuration")? {
            check_table_config(Obj::at(tc, &spec.path("table_configuration")))?;
        }
    }
    if let Some(ds) = o.obj("data_staging_options")? {
        let ds = Obj::at(ds, "ingestion_definition.data_staging_options");
        ds.req_str("catalog_name")?;
        ds.req_str("schema_name")?;
    }
    Ok(())
}

const DAYS_OF_WEEK: &[&str] = &[
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];

/// Types and shapes of a create/edit body (no lookups).
fn check_spec(o: Obj) -> ApiResult<()> {
    for k in [
        "name",
        "catalog",
        "schema",
        "target",
        "storage",
        "root_path",
        "budget_policy_id",
        "id",
        "serverless_compute_id",
    ] {
        o.str(k)?;
    }
    for k in [
        "serverless",
        "continuous",
        "development",
        "photon",
        "allow_duplicate_names",
        "dry_run",
    ] {
        o.bool(k)?;
    }
    // Taken in any case, stored upper-case (see build_spec).
    o.enum_str_any_case("channel", &["CURRENT", "PREVIEW"])?;
    o.enum_str_any_case("edition", &["CORE", "PRO", "ADVANCED"])?;
    if o.has("schema") && o.has("target") {
        return Err(ApiError::invalid("Only one of schema, target may be set"));
    }
    o.int("expected_last_modified")?;
    for k in ["configuration", "tags", "parameters"] {
        o.str_map(k)?;
    }
    for (p, lib) in o.objs("libraries")? {
        let l = Obj::at(lib, &p);
        match l.one_of(&["notebook", "file", "glob", "jar", "whl", "maven"])? {
            k @ ("notebook" | "file") => {
                Obj::at(l.req_obj(k)?, &l.path(k)).req_str("path")?;
            }
            "glob" => {
                Obj::at(l.req_obj("glob")?, &l.path("glob")).req_str("include")?;
            }
            "maven" => {
                Obj::at(l.req_obj("maven")?, &l.path("maven")).req_str("coordinates")?;
            }
            k => {
                l.req_str(k)?;
            }
        }
    }
    for (p, c) in o.objs("clusters")? {
        let c = Obj::at(c, &p);
        c.enum_str("label", &["default", "updates", "maintenance"])?;
        c.int("num_workers")?;
        if let Some(a) = c.obj("autoscale")? {
            let ap = format!("{p}.autoscale");
            let a = Obj::at(a, &ap);
            a.req_int("min_workers")?;
            a.req_int("max_workers")?;
            a.enum_str("mode", &["ENHANCED", "LEGACY"])?;
        }
        for k in ["spark_conf", "spark_env_vars", "custom_tags"] {
            c.str_map(k)?;
        }
    }
    for (p, n) in o.objs("notifications")? {
        let n = Obj::at(n, &p);
        n.strs("email_recipients")?;
        n.enum_strs(
            "alerts",
            &[
                "on-update-success",
                "on-update-failure",
                "on-update-fatal-failure",
                "on-flow-failure",
            ],
        )?;
    }
    if let Some(e) = o.obj("environment")? {
        let e = Obj::at(e, "environment");
        e.strs("dependencies")?;
        e.str("environment_version")?;
    }
    if let Some(r) = o.obj("restart_window")? {
        let r = Obj::at(r, "restart_window");
        r.enum_strs("days_of_week", DAYS_OF_WEEK)?;
        let h = r.req_int("start_hour")?;
        if !(0..24).contains(&h) {
            return Err(ApiError::invalid(
                "Invalid value for field 'restart_window.start_hour': must be 0-23",
            ));
        }
    }
    if let Some(r) = o.obj("run_as")? {
        Obj::at(r, "run_as").one_of(&["user_name", "service_principal_name", "group_name"])?;
    }
    if let Some(d) = o.obj("deployment")? {
        Obj::at(d, "deployment")
            .enum_str("kind", &["BUNDLE"])?
            .ok_or_else(|| crate::body::missing("deployment.kind"))?;
    }
    if o.has("gateway_definition") && o.has("ingestion_definition") {
        return Err(ApiError::invalid(
            "Only one of gateway_definition, ingestion_definition may be set",
        ));
    }
    if let Some(g) = o.obj("gateway_definition")? {
        let g = Obj::at(g, "gateway_definition");
        g.req_str("connection_name")?;
        g.req_str("gateway_storage_catalog")?;
        g.req_str("gateway_storage_schema")?;
        g.str("gateway_storage_name")?;
    }
    if let Some(i) = o.obj("ingestion_definition")? {
        check_ingestion(Obj::at(i, "ingestion_definition"))?;
    }
    Ok(())
}

fn gs<'a>(m: &'a Map<String, Value>, path: &[&str]) -> Option<&'a str> {
    let (last, init) = path.split_last()?;
    let mut cur = m;
    for k in init {
        cur = cur.get(*k)?.as_object()?;
    }
    cur.get(*last)?.as_str()
}

/// Referential rules: a gateway needs its connection and storage schema; an ingestion
/// pipeline needs its gateway (or connection) and every destination schema.
/// Returns the source type to report for an ingestion pipeline.
fn check_references(
    st: &State,
    spec: &Map<String, Value>,
    self_id: Option<&str>,
) -> ApiResult<Option<String>> {
    if let Some(g) = spec.get("gateway_definition").and_then(Value::as_object) {
        let conn = gs(g, &["connection_name"])
            .unwrap_or_default()
            .to_lowercase();
        if !st.connections.contains_key(&conn) {
            return Err(ref_error(
                "gateway_definition.connection_name",
                &format!("Connection '{conn}' does not exist."),
            ));
        }
        let schema = format!(
            "{}.{}",
            gs(g, &["gateway_storage_catalog"]).unwrap_or_default(),
            gs(g, &["gateway_storage_schema"]).unwrap_or_default()
        )
        .to_lowercase();
        if !st.schemas.contains_key(&schema) {
            return Err(ref_error(
                "gateway_definition.gateway_storage_schema",
                &format!("Schema '{schema}' does not exist."),
            ));
        }
    }
    let Some(i) = spec.get("ingestion_definition").and_then(Value::as_object) else {
        return Ok(None);
    };
    let mut source_type = None;
    if let Some(gw) = gs(i, &["ingestion_gateway_id"]) {
        let gateway = st
            .pipelines
            .get(gw)
            .filter(|p| Some(p.id.as_str()) != self_id);
        let Some(g) = gateway
            .and_then(|p| p.spec.get("gateway_definition"))
            .and_then(Value::as_object)
        else {
            return Err(ref_error(
                "ingestion_definition.ingestion_gateway_id",
                &format!("'{gw}' is not an existing ingestion gateway pipeline."),
            ));
        };
        let conn = gs(g, &["connection_name"])
            .unwrap_or_default()
            .to_lowercase();
        source_type = st
            .connections
            .get(&conn)
            .and_then(|c| c.info.get("connection_type"))
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if let Some(conn) = gs(i, &["connection_name"]) {
        let conn = conn.to_lowercase();
        let Some(c) = st.connections.get(&conn) else {
            return Err(ref_error(
                "ingestion_definition.connection_name",
                &format!("Connection '{conn}' does not exist."),
            ));
        };
        source_type = c
            .info
            .get("connection_type")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    for (n, obj) in i
        .get("objects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        for kind in ["schema", "table", "report"] {
            if let Some(spec) = obj.get(kind).and_then(Value::as_object) {
                let schema = format!(
                    "{}.{}",
                    gs(spec, &["destination_catalog"]).unwrap_or_default(),
                    gs(spec, &["destination_schema"]).unwrap_or_default()
                )
                .to_lowercase();
                if !st.schemas.contains_key(&schema) {
                    return Err(ref_error(
                        &format!("ingestion_definition.objects[{n}].{kind}.destination_schema"),
                        &format!("Schema '{schema}' does not exist."),
                    ));
                }
            }
        }
    }
    Ok(source_type)
}

/// The stored spec: the request minus request-only fields, with the server's defaults.
fn build_spec(
    body: &Map<String, Value>,
    id: &str,
    source_type: Option<String>,
) -> Map<String, Value> {
    let mut spec: Map<String, Value> = Map::new();
    spec.insert("id".into(), json!(id));
    for (k, v) in body {
        if !NOT_SPEC.contains(&k.as_str()) && k != "id" {
            spec.insert(k.clone(), v.clone());
        }
    }
    drop_empty(&mut spec);
    for (k, default) in [("channel", "CURRENT"), ("edition", "ADVANCED")] {
        let v = spec
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_uppercase();
        spec.insert(k.into(), json!(v));
    }
    if !spec.contains_key("catalog") && !spec.contains_key("storage") {
        spec.insert("storage".into(), json!(format!("dbfs:/pipelines/{id}")));
    }
    if let (Some(t), Some(Value::Object(i))) = (source_type, spec.get_mut("ingestion_definition")) {
        i.insert("source_type".into(), json!(t));
    }
    spec
}

/// Fields of the Lakeflow Connect definitions the service fills when a request leaves them
/// out: a gateway's staging volume name and the id of its connection, an ingestion
/// pipeline's connector type (through a gateway: CDC). A full-spec PUT that omits them keeps
/// what the pipeline had, so they survive an edit from a client that never set them.
fn fill_server_fields(
    st: &State,
    ctx: &Ctx,
    spec: &mut Map<String, Value>,
    old: Option<&Map<String, Value>>,
) {
    if !ctx.behaviours.on(Behaviour::ServerFilledPipelineFields) {
        return;
    }
    let id = s_of(spec, "id");
    let kept = |def: &str, k: &str| old.and_then(|o| o.get(def)).and_then(|d| d.get(k)).cloned();
    if let Some(Value::Object(g)) = spec.get_mut("gateway_definition") {
        if !g.contains_key("gateway_storage_name") {
            let name = kept("gateway_definition", "gateway_storage_name").unwrap_or_else(|| {
                json!(format!("__databricks_ingestion_gateway_staging_data-{id}"))
            });
            g.insert("gateway_storage_name".into(), name);
        }
        if !g.contains_key("connection_id") {
            let conn = gs(g, &["connection_name"])
                .unwrap_or_default()
                .to_lowercase();
            let cid = st
                .connections
                .get(&conn)
                .and_then(|c| c.info.get("connection_id"))
                .cloned()
                .or_else(|| kept("gateway_definition", "connection_id"));
            if let Some(cid) = cid {
                g.insert("connection_id".into(), cid);
            }
        }
    }
    if let Some(Value::Object(i)) = spec.get_mut("ingestion_definition")
        && !i.contains_key("connector_type")
    {
        let filled = kept("ingestion_definition", "connector_type")
            .or_else(|| i.contains_key("ingestion_gateway_id").then(|| json!("CDC")));
        if let Some(t) = filled {
            i.insert("connector_type".into(), t);
        }
    }
}

/// A gateway keeps its staging data in a volume it creates in its storage schema, named by
/// `gateway_storage_name` (by default `__databricks_ingestion_gateway_staging_data-ID`). The
/// volume is not the gateway's to remove: deleting the gateway leaves it (a Lakeflow Connect
/// demo's teardown drops the storage schema with force to remove it).
fn staging_volume(st: &mut State, ctx: &Ctx, spec: &Map<String, Value>) {
    if !ctx.behaviours.on(Behaviour::GatewayStagingVolume) {
        return;
    }
    let Some(g) = spec.get("gateway_definition").and_then(Value::as_object) else {
        return;
    };
    let id = s_of(spec, "id");
    let name = gs(g, &["gateway_storage_name"])
        .map(str::to_string)
        .unwrap_or_else(|| format!("__databricks_ingestion_gateway_staging_data-{id}"));
    if let (Some(c), Some(s)) = (
        gs(g, &["gateway_storage_catalog"]),
        gs(g, &["gateway_storage_schema"]),
    ) {
        crate::uc::put_staging_volume(st, ctx, c, s, &name);
    }
}

fn s_of(m: &Map<String, Value>, k: &str) -> String {
    m.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn name_taken(st: &State, name: &str, except: Option<&str>) -> bool {
    st.pipelines.values().any(|p| {
        Some(p.id.as_str()) != except && p.spec.get("name").and_then(Value::as_str) == Some(name)
    })
}

fn is_continuous(spec: &Map<String, Value>) -> bool {
    spec.get("continuous")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

// ---------- views ----------

fn state_of(p: &Pipeline, now: i64) -> (&'static str, &'static str) {
    if p.deleting_until.is_some() {
        return ("DELETING", "HEALTHY");
    }
    let Some(u) = p.updates.last() else {
        return ("IDLE", "HEALTHY");
    };
    let health = if u.state_at(now) == "FAILED" {
        "UNHEALTHY"
    } else {
        "HEALTHY"
    };
    let state = match u.state_at(now) {
        "QUEUED" | "CREATED" | "WAITING_FOR_RESOURCES" | "INITIALIZING" => "STARTING",
        "SETTING_UP_TABLES" | "RUNNING" => "RUNNING",
        _ => "IDLE",
    };
    (state, health)
}

fn latest_updates(p: &Pipeline, now: i64) -> Vec<Value> {
    p.updates
        .iter()
        .rev()
        .take(5)
        .map(|u| json!({"update_id": u.update_id, "state": u.state_at(now), "creation_time": iso_date(u.creation_time)}))
        .collect()
}

fn run_as_user(p: &Pipeline) -> String {
    p.run_as
        .as_ref()
        .and_then(|r| {
            r.get("user_name")
                .or_else(|| r.get("service_principal_name"))
        })
        .and_then(Value::as_str)
        .unwrap_or(&p.creator)
        .to_string()
}

fn view(p: &Pipeline, now: i64) -> Value {
    let (state, health) = state_of(p, now);
    let publishing = if p.spec.contains_key("target") {
        "LEGACY_PUBLISHING_MODE"
    } else {
        "DEFAULT_PUBLISHING_MODE"
    };
    Value::Object(compact(json!({
        "pipeline_id": p.id, "name": p.spec.get("name"), "spec": p.spec, "state": state, "health": health,
        "creator_user_name": p.creator, "run_as_user_name": run_as_user(p), "run_as": p.run_as,
        "parameters": p.parameters, "last_modified": p.last_modified, "latest_updates": latest_updates(p, now),
        "effective_publishing_mode": publishing,
    })))
}

fn state_info(p: &Pipeline, now: i64) -> Value {
    let (state, health) = state_of(p, now);
    Value::Object(compact(json!({
        "pipeline_id": p.id, "name": p.spec.get("name"), "state": state, "health": health,
        "creator_user_name": p.creator, "run_as_user_name": run_as_user(p), "latest_updates": latest_updates(p, now),
    })))
}

// ---------- handlers ----------

async fn create(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    check_spec(o)?;
    let allow_dup = o.bool("allow_duplicate_names")?.unwrap_or(false);
    let dry_run = o.bool("dry_run")?.unwrap_or(false);
    let run_as = o.obj("run_as")?.map(|m| Value::Object(m.clone()));
    let parameters = o
        .str_map("parameters")?
        .filter(|m| !m.is_empty())
        .map(|m| Value::Object(m.clone()));
    if dry_run {
        return app.view(|st, _| {
            let source_type = check_references(st, &b, None)?;
            Ok(Json(
                json!({"effective_settings": build_spec(&b, "dry-run", source_type)}),
            ))
        });
    }
    app.mutate(|st, ctx| {
        let source_type = check_references(st, &b, None)?;
        if let Some(name) = o.str("name")?
            && !allow_dup
            && name_taken(st, name, None)
        {
            return Err(ApiError::conflict("RESOURCE_CONFLICT", format!("A pipeline with name '{name}' already exists. Set allow_duplicate_names to create another.")));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let mut spec = build_spec(&b, &id, source_type);
        fill_server_fields(st, ctx, &mut spec, None);
        staging_volume(st, ctx, &spec);
        let continuous = is_continuous(&spec);
        let p = Pipeline { id: id.clone(), spec, parameters, run_as, creator: ctx.user.to_string(), last_modified: ctx.now, updates: Vec::new(), deleting_until: None, keep_tables: false };
        st.pipelines.insert(id.clone(), p);
        // A continuous pipeline starts as soon as it exists, as on the real service.
        if continuous {
            start(st, ctx, &id, "API_CALL", Map::new())?;
        }
        Ok(Json(json!({"pipeline_id": id})))
    })
}

async fn get_pipeline(AxState(app): AxState<Arc<App>>, PathParam(id): PathParam<String>) -> Reply {
    app.view(|st, ctx| {
        st.pipelines
            .get(&id)
            .map(|p| Json(view(p, ctx.now)))
            .ok_or_else(|| missing(&id))
    })
}

async fn edit(
    AxState(app): AxState<Arc<App>>,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let o = Obj::root(&b);
    check_spec(o)?;
    if let Some(body_id) = o.str("id")?.or(o.str("pipeline_id")?)
        && body_id != id
    {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'id': '{body_id}' does not match the pipeline id '{id}' in the path"
        )));
    }
    let expected = o.int("expected_last_modified")?;
    let allow_dup = o.bool("allow_duplicate_names")?.unwrap_or(false);
    let run_as = o.obj("run_as")?.map(|m| Value::Object(m.clone()));
    let parameters = o
        .str_map("parameters")?
        .filter(|m| !m.is_empty())
        .map(|m| Value::Object(m.clone()));
    app.mutate(|st, ctx| {
        let p = st.pipelines.get(&id).ok_or_else(|| missing(&id))?;
        if let Some(e) = expected
            && e != p.last_modified
        {
            return Err(ApiError::conflict(
                "RESOURCE_CONFLICT",
                format!(
                    "The pipeline '{id}' was modified at {} after the expected_last_modified {e}.",
                    p.last_modified
                ),
            ));
        }
        check_immutable(&p.spec, &b)?;
        let source_type = check_references(st, &b, Some(&id))?;
        if let Some(name) = o.str("name")?
            && !allow_dup
            && name_taken(st, name, Some(&id))
        {
            return Err(ApiError::conflict(
                "RESOURCE_CONFLICT",
                format!("A pipeline with name '{name}' already exists."),
            ));
        }
        let mut spec = build_spec(&b, &id, source_type);
        let old_spec = st.pipelines.get(&id).map(|p| p.spec.clone());
        fill_server_fields(st, ctx, &mut spec, old_spec.as_ref());
        staging_volume(st, ctx, &spec);
        let continuous = is_continuous(&spec);
        let Some(p) = st.pipelines.get_mut(&id) else {
            return Err(missing(&id));
        };
        p.spec = spec;
        p.parameters = parameters;
        p.run_as = run_as;
        p.last_modified = ctx.now.max(p.last_modified + 1);
        let active = p.updates.last().is_some_and(|u| u.is_active(ctx.now));
        if active && !continuous {
            if let Some(u) = p.updates.last_mut().filter(|u| u.continuous) {
                u.canceled_at = Some(ctx.now);
            }
        } else if continuous && !active {
            start(st, ctx, &id, "API_CALL", Map::new())?;
        }
        Ok(Json(json!({})))
    })
}

/// Fields the API documents as immutable cannot change in an edit.
fn check_immutable(old: &Map<String, Value>, new: &Map<String, Value>) -> ApiResult<()> {
    let fields: &[&[&str]] = &[
        &["gateway_definition", "connection_name"],
        &["gateway_definition", "gateway_storage_catalog"],
        &["gateway_definition", "gateway_storage_schema"],
        &["ingestion_definition", "ingestion_gateway_id"],
        &["ingestion_definition", "connection_name"],
    ];
    for f in fields {
        let (a, b) = (gs(old, f), gs(new, f));
        if a.is_some() && a.map(str::to_lowercase) != b.map(str::to_lowercase) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{}': it is immutable ('{}' cannot become '{}')",
                f.join("."),
                a.unwrap_or_default(),
                b.unwrap_or_default()
            )));
        }
    }
    let foreign = |m: &Map<String, Value>| {
        m.get("ingestion_definition")
            .and_then(|i| i.get("ingest_from_uc_foreign_catalog"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    if old.contains_key("ingestion_definition") && foreign(old) != foreign(new) {
        return Err(ApiError::invalid(
            "Invalid value for field 'ingestion_definition.ingest_from_uc_foreign_catalog': it is immutable",
        ));
    }
    Ok(())
}

async fn delete(
    AxState(app): AxState<Arc<App>>,
    PathParam(id): PathParam<String>,
    q: Params,
) -> Reply {
    let cascade = q.bool("cascade")?.unwrap_or(true);
    q.bool("force")?;
    app.mutate(|st, ctx| {
        let p = st.pipelines.get_mut(&id).ok_or_else(|| missing(&id))?;
        // A second delete of a pipeline being deleted is accepted and changes nothing.
        if p.deleting_until.is_none() {
            if let Some(u) = p.updates.last_mut().filter(|u| u.is_active(ctx.now)) {
                u.canceled_at = Some(ctx.now);
            }
            p.deleting_until = Some(ctx.now.saturating_add(ctx.timings.update_step_ms()));
            p.keep_tables = !cascade;
            if !ctx.behaviours.on(Behaviour::AsyncPipelineDelete) {
                st.pipelines.remove(&id);
                crate::uc::end_pipeline_tables(st, &id, !cascade);
            }
        }
        Ok(Json(json!({})))
    })
}

/// `name LIKE '%x%'` or `notebook='<path>'`.
enum Filter {
    All,
    Name(Regex),
    Notebook(String),
}

fn parse_filter(f: Option<&str>) -> ApiResult<Filter> {
    let Some(f) = f.map(str::trim).filter(|f| !f.is_empty()) else {
        return Ok(Filter::All);
    };
    let bad = || {
        ApiError::invalid(format!(
            "Invalid value for parameter 'filter': '{f}' (supported: name LIKE '<pattern>', notebook='<path>')"
        ))
    };
    let unquote = |s: &str| -> Option<String> {
        let s = s.trim();
        let q = s.chars().next()?;
        (s.len() >= 2 && (q == '\'' || q == '"') && s.ends_with(q))
            .then(|| s[1..s.len() - 1].to_string())
    };
    let lower = f.to_ascii_lowercase();
    if lower.starts_with("name") {
        let rest = f[4..].trim_start();
        let pat = if rest
            .get(..4)
            .is_some_and(|w| w.eq_ignore_ascii_case("like"))
        {
            unquote(rest.get(4..).unwrap_or_default()).ok_or_else(bad)?
        } else if let Some(r) = rest.strip_prefix('=') {
            regex_escape_like(&unquote(r).ok_or_else(bad)?)
        } else {
            return Err(bad());
        };
        let mut re = String::from("(?i)^");
        for c in pat.chars() {
            match c {
                '%' => re.push_str(".*"),
                '_' => re.push('.'),
                c => re.push_str(&regex::escape(&c.to_string())),
            }
        }
        re.push('$');
        return Regex::new(&re).map(Filter::Name).map_err(|_| bad());
    }
    if lower.starts_with("notebook") {
        let rest = f[8..].trim_start().strip_prefix('=').ok_or_else(bad)?;
        return Ok(Filter::Notebook(unquote(rest).ok_or_else(bad)?));
    }
    Err(bad())
}

/// An exact name as a LIKE pattern.
fn regex_escape_like(s: &str) -> String {
    s.replace('%', "\\%").replace('_', "\\_")
}

fn matches(f: &Filter, p: &Pipeline) -> bool {
    match f {
        Filter::All => true,
        Filter::Name(re) => p
            .spec
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| re.is_match(n)),
        Filter::Notebook(path) => p
            .spec
            .get("libraries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|l| {
                l.get("notebook")
                    .and_then(|n| n.get("path"))
                    .and_then(Value::as_str)
                    == Some(path)
            }),
    }
}

async fn list(AxState(app): AxState<Arc<App>>, q: Params) -> Reply {
    let filter = parse_filter(q.str("filter"))?;
    let page = Page::new(
        q.str("page_token"),
        q.int("max_results")?,
        25,
        100,
        "max_results",
    )?;
    if let Some(o) = q.str("order_by") {
        let ok = ["id", "name"]
            .iter()
            .any(|f| o.trim().to_ascii_lowercase().starts_with(f));
        if !ok {
            return Err(ApiError::invalid(format!(
                "Invalid value for parameter 'order_by': '{o}'"
            )));
        }
    }
    app.view(|st, ctx| {
        let start = page.after.clone().map_or(Bound::Unbounded, Bound::Excluded);
        let iter = st
            .pipelines
            .range::<String, _>((start, Bound::Unbounded))
            .filter(|(_, p)| matches(&filter, p))
            .map(|(k, p)| (k.clone(), state_info(p, ctx.now)));
        let (statuses, next) = page.collect(iter);
        let mut out = json!({"statuses": statuses});
        if let Some(t) = next {
            out["next_page_token"] = json!(t);
        }
        Ok(Json(out))
    })
}

/// Why an update of this pipeline would fail now, if it would.
fn failure_reason(st: &State, p: &Pipeline) -> Option<String> {
    for lib in p
        .spec
        .get("libraries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for kind in ["notebook", "file"] {
            if let Some(path) = lib
                .get(kind)
                .and_then(|n| n.get("path"))
                .and_then(Value::as_str)
                && !crate::workspace::runnable_exists(st, path)
            {
                return Some(format!(
                    "The {kind} '{path}' does not exist in the workspace."
                ));
            }
        }
    }
    if let Err(e) = check_references(st, &p.spec, Some(&p.id)) {
        return Some(e.message);
    }
    let is_lfc =
        p.spec.contains_key("gateway_definition") || p.spec.contains_key("ingestion_definition");
    if !is_lfc
        && let (Some(c), Some(s)) = (
            gs(&p.spec, &["catalog"]),
            gs(&p.spec, &["schema"]).or(gs(&p.spec, &["target"])),
        )
    {
        let full = format!("{c}.{s}").to_lowercase();
        if !st.schemas.contains_key(&full) {
            return Some(format!("Schema '{full}' does not exist."));
        }
    }
    None
}

/// Starts an update (also used by job pipeline tasks); fails while one is active.
pub fn start(
    st: &mut State,
    ctx: &Ctx,
    id: &str,
    cause: &str,
    request: Map<String, Value>,
) -> ApiResult<String> {
    let p = st.pipelines.get(id).ok_or_else(|| missing(id))?;
    if p.deleting_until.is_some() {
        return Err(ApiError::conflict(
            "RESOURCE_CONFLICT",
            format!("Pipeline '{id}' is being deleted."),
        ));
    }
    if let Some(u) = p.updates.last().filter(|u| u.is_active(ctx.now)) {
        return Err(ApiError::conflict(
            "RESOURCE_CONFLICT",
            format!(
                "Pipeline '{id}' already has an active update '{}'.",
                u.update_id
            ),
        ));
    }
    let failure = failure_reason(st, p);
    let update = Update {
        update_id: uuid::Uuid::new_v4().to_string(),
        creation_time: ctx.now,
        cause: cause.to_string(),
        request,
        config: p.spec.clone(),
        continuous: is_continuous(&p.spec),
        step_ms: ctx.timings.update_step_ms(),
        failure,
        canceled_at: None,
    };
    let uid = update.update_id.clone();
    let doomed = update.failure.is_some();
    let tables = if doomed || !ctx.behaviours.on(Behaviour::PipelineTables) {
        Vec::new()
    } else {
        defined_tables(&update.config)
    };
    if let Some(p) = st.pipelines.get_mut(id) {
        p.updates.push(update);
    }
    for t in tables {
        crate::uc::put_pipeline_table(st, ctx, &t, "STREAMING_TABLE", id);
    }
    Ok(uid)
}

/// The tables an update of this spec sets up, as far as the spec tells: an ingestion
/// pipeline's destination tables (a `table` object's `destination_table`, else its
/// `source_table`; a `report`'s `destination_table`). A whole-schema object's tables and a
/// declarative pipeline's datasets are defined by the source and its code, which the local
/// workspace does not run, so they are not known here.
fn defined_tables(spec: &Map<String, Value>) -> Vec<String> {
    let objects = spec
        .get("ingestion_definition")
        .and_then(|i| i.get("objects"))
        .and_then(Value::as_array);
    let mut out = Vec::new();
    for obj in objects.into_iter().flatten() {
        for kind in ["table", "report"] {
            let Some(t) = obj.get(kind).and_then(Value::as_object) else {
                continue;
            };
            let name = gs(t, &["destination_table"]).or(if kind == "table" {
                gs(t, &["source_table"])
            } else {
                None
            });
            if let (Some(c), Some(s), Some(n)) = (
                gs(t, &["destination_catalog"]),
                gs(t, &["destination_schema"]),
                name,
            ) {
                out.push(format!("{c}.{s}.{n}"));
            }
        }
    }
    out
}

/// Removes the pipelines whose delete has finished, with their tables (unless the delete
/// kept them). Returns whether anything changed.
pub fn advance(st: &mut State, ctx: &Ctx) -> bool {
    let done: Vec<(String, bool)> = st
        .pipelines
        .values()
        .filter(|p| p.deleting_until.is_some_and(|t| t <= ctx.now))
        .map(|p| (p.id.clone(), p.keep_tables))
        .collect();
    for (id, keep) in &done {
        st.pipelines.remove(id);
        crate::uc::end_pipeline_tables(st, id, *keep);
    }
    !done.is_empty()
}

async fn start_update(
    AxState(app): AxState<Arc<App>>,
    PathParam(id): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let o = Obj::root(&b);
    let full_refresh = o.bool("full_refresh")?;
    for k in [
        "full_refresh_selection",
        "refresh_selection",
        "full_refresh_selection_by_path",
        "refresh_selection_by_path",
        "reset_checkpoint_selection",
    ] {
        o.strs(k)?;
    }
    o.bool("validate_only")?;
    o.bool("development")?;
    o.str_map("parameters")?;
    let cause = o.enum_str("cause", CAUSES)?.unwrap_or("API_CALL");
    if full_refresh == Some(true)
        && (!o.arr("full_refresh_selection")?.is_empty() || !o.arr("refresh_selection")?.is_empty())
    {
        return Err(ApiError::invalid(
            "full_refresh cannot be combined with full_refresh_selection or refresh_selection",
        ));
    }
    let mut request = b.clone();
    request.remove("cause");
    drop_empty(&mut request);
    app.mutate(|st, ctx| {
        let uid = start(st, ctx, &id, cause, request)?;
        Ok(Json(json!({"update_id": uid})))
    })
}

async fn get_update(
    AxState(app): AxState<Arc<App>>,
    PathParam((id, uid)): PathParam<(String, String)>,
) -> Reply {
    app.view(|st, ctx| {
        let p = st.pipelines.get(&id).ok_or_else(|| missing(&id))?;
        let u = p
            .updates
            .iter()
            .find(|u| u.update_id == uid)
            .ok_or_else(|| {
                ApiError::not_found(
                    "RESOURCE_DOES_NOT_EXIST",
                    format!("Update '{uid}' does not exist for pipeline '{id}'."),
                )
            })?;
        Ok(Json(json!({"update": u.info(&id, ctx.now, true)})))
    })
}

async fn list_updates(
    AxState(app): AxState<Arc<App>>,
    PathParam(id): PathParam<String>,
    q: Params,
) -> Reply {
    let page = Page::new(
        q.str("page_token"),
        q.int("max_results")?,
        25,
        100,
        "max_results",
    )?;
    let until = q.str("until_update_id").map(str::to_string);
    app.view(|st, ctx| {
        let p = st.pipelines.get(&id).ok_or_else(|| missing(&id))?;
        // Newest first; the token is the index (from the oldest) of the last update returned.
        let start = page.after_key::<usize>()?.unwrap_or(p.updates.len());
        let mut items = p.updates[..start.min(p.updates.len())]
            .iter()
            .enumerate()
            .rev()
            .collect::<Vec<_>>();
        if let Some(u) = &until
            && let Some(pos) = items.iter().position(|(_, x)| &x.update_id == u)
        {
            items.truncate(pos + 1);
        }
        let (updates, next) = page.collect(
            items
                .into_iter()
                .map(|(i, u)| (i, u.info(&id, ctx.now, false))),
        );
        let mut out = json!({"updates": updates});
        if let Some(t) = next {
            out["next_page_token"] = json!(t);
        }
        Ok(Json(out))
    })
}

async fn stop(AxState(app): AxState<Arc<App>>, PathParam(id): PathParam<String>) -> Reply {
    app.mutate(|st, ctx| {
        let p = st.pipelines.get_mut(&id).ok_or_else(|| missing(&id))?;
        if let Some(u) = p.updates.last_mut().filter(|u| u.is_active(ctx.now)) {
            u.canceled_at = Some(ctx.now);
        }
        Ok(Json(json!({})))
    })
}

/// Stops a pipeline's active update (a job run that started it was canceled).
pub fn cancel_update(st: &mut State, id: &str, update_id: &str, now: i64) {
    if let Some(u) = st
        .pipelines
        .get_mut(id)
        .and_then(|p| p.updates.iter_mut().find(|u| u.update_id == update_id))
        && u.is_active(now)
    {
        u.canceled_at = Some(now);
    }
}

/// The state and end time of an update, for job pipeline tasks.
pub fn update_outcome(
    st: &State,
    id: &str,
    update_id: &str,
    now: i64,
) -> Option<(&'static str, Option<i64>, Option<String>)> {
    let u = st
        .pipelines
        .get(id)?
        .updates
        .iter()
        .find(|u| u.update_id == update_id)?;
    Some((u.state_at(now), u.end_time(), u.failure.clone()))
}
