//! A pipeline's spec: the checks of a create or edit body, the references it must resolve
//! in the workspace, and the spec as stored (request-only fields dropped, server defaults
//! and server-filled fields in).

use crate::behaviours::Behaviour;
use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use crate::util::drop_empty;
use serde_json::{Map, Value, json};

/// Request-only fields that are not part of the stored spec.
pub const NOT_SPEC: &[&str] = &[
    "parameters",
    "run_as",
    "allow_duplicate_names",
    "dry_run",
    "expected_last_modified",
    "pipeline_id",
];

pub fn ref_error(field: &str, what: &str) -> ApiError {
    ApiError::invalid(format!("Invalid value for field '{field}': {what}"))
}

pub fn check_table_config(o: Obj) -> ApiResult<()> {
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

pub fn check_ingestion(o: Obj) -> ApiResult<()> {
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

pub const DAYS_OF_WEEK: &[&str] = &[
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];

/// Types and shapes of a create/edit body (no lookups).
pub fn check_spec(o: Obj) -> ApiResult<()> {
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
        crate::compute::check_cluster(c)?;
        if let Some(a) = c.obj("autoscale")? {
            let ap = format!("{p}.autoscale");
            Obj::at(a, &ap).enum_str("mode", &["ENHANCED", "LEGACY"])?;
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

pub fn gs<'a>(m: &'a Map<String, Value>, path: &[&str]) -> Option<&'a str> {
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
pub fn check_references(
    st: &State,
    spec: &Map<String, Value>,
    self_id: Option<&str>,
) -> ApiResult<Option<String>> {
    if let Some(g) = spec.get("gateway_definition").and_then(Value::as_object) {
        let conn = gs(g, &["connection_name"])
            .unwrap_or_default()
            .to_lowercase();
        if !st.uc.connections.contains_key(&conn) {
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
        if !st.uc.schemas.contains_key(&schema) {
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
            .uc
            .connections
            .get(&conn)
            .and_then(|c| c.info.get("connection_type"))
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if let Some(conn) = gs(i, &["connection_name"]) {
        let conn = conn.to_lowercase();
        let Some(c) = st.uc.connections.get(&conn) else {
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
                if !st.uc.schemas.contains_key(&schema) {
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
pub fn build_spec(
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

/// What the service fills into each of the pipeline's clusters as it holds them
/// (`driver_node_type_from_node_type`): a driver on the workers' node type.
pub fn fill_cluster_defaults(ctx: &Ctx, spec: &mut Map<String, Value>) {
    if !ctx.behaviours.on(Behaviour::DriverNodeTypeFromNodeType) {
        return;
    }
    if let Some(Value::Array(clusters)) = spec.get_mut("clusters") {
        for c in clusters.iter_mut() {
            if let Value::Object(c) = c {
                crate::compute::fill_driver_node_type(c);
            }
        }
    }
}

/// Fields of the Lakeflow Connect definitions the service fills when a request leaves them
/// out: a gateway's staging volume name and the id of its connection, an ingestion
/// pipeline's connector type (through a gateway: CDC). A full-spec PUT that omits them keeps
/// what the pipeline had, so they survive an edit from a client that never set them.
pub fn fill_server_fields(
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
                .uc
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

/// Fields the API documents as immutable cannot change in an edit.
pub fn check_immutable(old: &Map<String, Value>, new: &Map<String, Value>) -> ApiResult<()> {
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

pub fn is_continuous(spec: &Map<String, Value>) -> bool {
    spec.get("continuous")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

pub fn s_of(m: &Map<String, Value>, k: &str) -> String {
    m.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}
