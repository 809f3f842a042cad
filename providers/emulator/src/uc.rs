//! Unity Catalog: catalogs, schemas, volumes, tables and connections.
//!
//! Tables are not created through this API here: pipelines create them (see
//! [`put_pipeline_table`]), and they can be read, listed and dropped.

use crate::app::App;
use crate::behaviours::Behaviour;
use crate::body::{JsonBody, Obj, Params, PathParam};
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::store::{Ctx, State};
use crate::util::{compact, remove_prefix, rename_prefix, s, uc_name, with_prefix};
use axum::extract::State as AxState;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::ops::Bound;
use std::sync::Arc;

const UC: &str = "/api/2.1/unity-catalog";
/// Created with every managed catalog; not counted as content.
const INFO_SCHEMA: &str = "information_schema";
/// Page size when the caller sends `max_results=0` (the SDK's default).
const DEFAULT_PAGE: usize = 1000;

/// `ConnectionType` of the Databricks SDK.
pub const CONNECTION_TYPES: &[&str] = &[
    "ADOBE_COMMERCE",
    "ADP_WORKFORCE_NOW",
    "AHA",
    "AIRTABLE",
    "AMPLITUDE",
    "APPFIGURES",
    "APPLE_APP_STORE",
    "APPLE_SEARCH_ADS",
    "ATLASSIAN_ORGANIZATION",
    "AWIN",
    "AZURE_MONITOR_LOGS",
    "BIGLAKE",
    "BIGQUERY",
    "CERIDIAN_DAYFORCE",
    "CONFLUENCE",
    "DATABRICKS",
    "DELIGHTED",
    "DYNAMICS365",
    "EPIC_CLARITY",
    "FRESHSERVICE",
    "FRONT",
    "GA4_RAW_DATA",
    "GENESYS",
    "GITHUB",
    "GITLAB",
    "GLUE",
    "GMAIL",
    "GONG",
    "GOOGLE_ANALYTICS",
    "GOOGLE_CALENDAR",
    "GOOGLE_CLOUD_LAKEHOUSE",
    "GOOGLE_WORKSPACE",
    "GURU",
    "HIBOB",
    "HIVE_METASTORE",
    "HTTP",
    "HUBSPOT",
    "ICEBERG_REST",
    "IRONCLAD",
    "JDBC",
    "KINESIS",
    "LINEAR",
    "MARKETO",
    "META_MARKETING",
    "MICROSOFT_ENTRA_ID",
    "MONDAY_COM",
    "MYSQL",
    "NETSKOPE_LOGS",
    "NETSUITE",
    "NOTION",
    "ORACLE",
    "ORACLE_ELOQUA",
    "ORACLE_FUSION_CLOUD",
    "OUTLOOK",
    "PAGERDUTY",
    "PALANTIR",
    "PARTNERSTACK",
    "PENDO",
    "POSTGRESQL",
    "POWER_BI",
    "PUBSUB",
    "QUICKBOOKS",
    "REDSHIFT",
    "SALESFORCE",
    "SALESFORCE_DATA_CLOUD",
    "SALESLOFT",
    "SAP_SUCCESSFACTORS",
    "SAS",
    "SENDGRID",
    "SERVICENOW",
    "SHOPIFY",
    "SLACK_ACCESS_AND_INTEGRATION_LOGS",
    "SMARTSHEET",
    "SNAPCHAT_ADS",
    "SNOWFLAKE",
    "SPLUNK",
    "SQLDW",
    "SQLSERVER",
    "SQUARE",
    "TERADATA",
    "VERKADA",
    "WORKDAY_RAAS",
    "YOUTUBE_ANALYTICS",
    "ZENDESK",
    "ZIP",
    "ZOHO_BOOKS",
    "ZOOM",
    "ZOOM_LOGS",
];
/// Database connectors whose options must name a host.
const DB_TYPES: &[&str] = &[
    "SQLSERVER",
    "MYSQL",
    "POSTGRESQL",
    "ORACLE",
    "REDSHIFT",
    "SQLDW",
    "TERADATA",
];
/// Options accepted on write and never returned on read. The service withholds the user
/// name too (the Terraform provider keeps `user` from prior state for that reason).
pub const SECRET_OPTIONS: &[&str] = &[
    "user",
    "password",
    "client_secret",
    "access_token",
    "bearer_token",
    "refresh_token",
    "pem_private_key",
    "private_key",
];
const PREDICTIVE: &[&str] = &["ENABLE", "DISABLE", "INHERIT"];

/// A connection as stored: the public info plus the secret options kept apart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Connection {
    pub info: Map<String, Value>,
    pub secret_options: Map<String, Value>,
}

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            &format!("{UC}/catalogs"),
            get(list_catalogs).post(create_catalog),
        )
        .route(
            &format!("{UC}/catalogs/{{name}}"),
            get(get_catalog)
                .patch(update_catalog)
                .delete(delete_catalog),
        )
        .route(
            &format!("{UC}/schemas"),
            get(list_schemas).post(create_schema),
        )
        .route(
            &format!("{UC}/schemas/{{name}}"),
            get(get_schema).patch(update_schema).delete(delete_schema),
        )
        .route(
            &format!("{UC}/volumes"),
            get(list_volumes).post(create_volume),
        )
        .route(
            &format!("{UC}/volumes/{{name}}"),
            get(get_volume).patch(update_volume).delete(delete_volume),
        )
        .route(&format!("{UC}/tables"), get(list_tables))
        .route(
            &format!("{UC}/tables/{{name}}"),
            get(get_table).delete(delete_table),
        )
        .route(
            &format!("{UC}/connections"),
            get(list_connections).post(create_connection),
        )
        .route(
            &format!("{UC}/connections/{{name}}"),
            get(get_connection)
                .patch(update_connection)
                .delete(delete_connection),
        )
}

type Reply = ApiResult<Json<Value>>;

/// The metastore's storage root. The service's managed volumes without a catalog or schema
/// root live at `s3://BUCKET/metastore/METASTORE_ID/volumes/VOLUME_ID` (the Databricks CLI's
/// cloud-recorded acceptance outputs), tables beside them under `tables/`.
fn metastore_root(st: &State) -> String {
    format!(
        "s3://brickform-local-metastore/metastore/{}",
        st.metastore_id
    )
}

/// Where a managed volume or table of this schema lives: under the managed location of the
/// nearest container with its own storage root (`…/__unitystorage/catalogs/CID/volumes/VID`
/// or `…/__unitystorage/schemas/SID/tables/TID`, as object paths on the service show), else
/// under the metastore's root.
fn managed_base(st: &State, catalog: &str, schema: &Map<String, Value>) -> String {
    let own = |m: &Map<String, Value>| {
        m.get("storage_root")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
            .and_then(|_| m.get("storage_location").and_then(Value::as_str))
            .map(str::to_string)
    };
    own(schema)
        .or_else(|| st.catalogs.get(catalog).and_then(own))
        .unwrap_or_else(|| metastore_root(st))
}

fn catalog_missing(name: &str) -> ApiError {
    ApiError::not_found(
        "CATALOG_DOES_NOT_EXIST",
        format!("Catalog '{name}' does not exist."),
    )
}
fn schema_missing(full: &str) -> ApiError {
    ApiError::not_found(
        "SCHEMA_DOES_NOT_EXIST",
        format!("Schema '{full}' does not exist."),
    )
}
fn volume_missing(full: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Volume '{full}' does not exist."),
    )
}
fn table_missing(full: &str) -> ApiError {
    ApiError::not_found(
        "TABLE_DOES_NOT_EXIST",
        format!("Table '{full}' does not exist."),
    )
}
fn connection_missing(name: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Connection '{name}' does not exist."),
    )
}

/// Lower-cases a dotted full name from a path, checking it has `parts` segments.
fn full_name(raw: &str, parts: usize, what: &str) -> ApiResult<String> {
    let lower = raw.to_lowercase();
    if lower.split('.').count() != parts || lower.split('.').any(str::is_empty) {
        return Err(ApiError::invalid(format!(
            "Invalid {what} full name '{raw}'"
        )));
    }
    Ok(lower)
}

fn audit(m: &mut Map<String, Value>, ctx: &Ctx, created: bool) {
    if created {
        m.insert("owner".into(), json!(ctx.user));
        m.insert("created_at".into(), json!(ctx.now));
        m.insert("created_by".into(), json!(ctx.user));
    }
    m.insert("updated_at".into(), json!(ctx.now));
    m.insert("updated_by".into(), json!(ctx.user));
}

fn effective_po(
    own: Option<&str>,
    parent: Option<&Value>,
    parent_name: &str,
    parent_type: &str,
) -> Value {
    match own {
        Some(v @ ("ENABLE" | "DISABLE")) => json!({"value": v}),
        _ => {
            let value = parent
                .and_then(|p| p.get("value"))
                .and_then(Value::as_str)
                .unwrap_or("DISABLE");
            json!({"value": value, "inherited_from_type": parent_type, "inherited_from_name": parent_name})
        }
    }
}

/// The page of a BTreeMap after the token, restricted to keys with `prefix`.
fn page_prefixed<'a, V>(
    map: &'a std::collections::BTreeMap<String, V>,
    prefix: &str,
    page: &Page,
) -> (Vec<&'a V>, Option<String>) {
    let start = match &page.after {
        Some(a) if a.as_str() >= prefix => Bound::Excluded(a.clone()),
        _ => Bound::Included(prefix.to_string()),
    };
    let prefix = prefix.to_string();
    page.collect(
        map.range((start, Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| (k.clone(), v)),
    )
}

fn uc_page(q: &Params, default: usize) -> ApiResult<Page> {
    Page::new(
        q.str("page_token"),
        q.int("max_results")?,
        default,
        10_000,
        "max_results",
    )
}

/// One page of the objects under `prefix` (a parent's full name and a dot), as a list reply.
fn children_page(
    key: &str,
    map: &std::collections::BTreeMap<String, Map<String, Value>>,
    prefix: &str,
    page: &Page,
) -> Json<Value> {
    let (items, next) = page_prefixed(map, prefix, page);
    list_reply(
        key,
        items
            .into_iter()
            .map(|m| Value::Object(m.clone()))
            .collect(),
        next,
    )
}

fn list_reply(key: &str, items: Vec<Value>, next: Option<String>) -> Json<Value> {
    let mut m = Map::new();
    m.insert(key.into(), Value::Array(items));
    if let Some(t) = next {
        m.insert("next_page_token".into(), Value::String(t));
    }
    Json(Value::Object(m))
}

// ---------- catalogs ----------

async fn create_catalog(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let name = uc_name(o.req_str("name")?, "name")?;
    let comment = o.str("comment")?;
    let properties = o.str_map("properties")?;
    let options = o.str_map("options")?;
    let storage_root = o.str("storage_root")?;
    let connection_name = o.str("connection_name")?.map(str::to_lowercase);
    let provider_name = o.str("provider_name")?;
    let share_name = o.str("share_name")?;
    let retention = o.int("custom_max_retention_hours")?;
    let encryption = o.obj("managed_encryption_settings")?;
    if provider_name.is_some() != share_name.is_some() {
        return Err(ApiError::invalid(
            "provider_name and share_name must be set together",
        ));
    }
    app.mutate(|st, ctx| {
        if st.catalogs.contains_key(&name) {
            return Err(ApiError::conflict("CATALOG_ALREADY_EXISTS", format!("Catalog '{name}' already exists.")));
        }
        if let Some(c) = &connection_name
            && !st.connections.contains_key(c)
        {
            return Err(connection_missing(c));
        }
        let catalog_type = if connection_name.is_some() {
            "FOREIGN_CATALOG"
        } else if provider_name.is_some() {
            "DELTASHARING_CATALOG"
        } else {
            "MANAGED_CATALOG"
        };
        let managed = catalog_type == "MANAGED_CATALOG";
        let root = storage_root.map_or_else(|| metastore_root(st), |r| r.trim_end_matches('/').to_string());
        let location = managed.then(|| format!("{root}/__unitystorage/catalogs/{}", uuid::Uuid::new_v4()));
        let mut m = compact(json!({
            "name": name, "full_name": name, "comment": comment, "properties": properties, "options": options,
            "storage_root": storage_root, "storage_location": location, "connection_name": connection_name,
            "provider_name": provider_name, "share_name": share_name, "custom_max_retention_hours": retention,
            "managed_encryption_settings": encryption, "catalog_type": catalog_type, "isolation_mode": "OPEN",
            "metastore_id": st.metastore_id, "securable_type": "CATALOG", "browse_only": false,
            "provisioning_info": {"state": "ACTIVE"},
        }));
        m.insert("effective_predictive_optimization_flag".into(), effective_po(None, None, &st.metastore_id, "METASTORE"));
        audit(&mut m, ctx, true);
        st.catalogs.insert(name.clone(), m.clone());
        if managed {
            for schema in ["default", INFO_SCHEMA] {
                let mut sm = new_schema(st, ctx, &name, schema, None, None, None, None)?;
                if schema == INFO_SCHEMA {
                    sm.insert("comment".into(), json!("Information schema (auto-created)"));
                    sm.insert("owner".into(), json!("System user"));
                } else {
                    sm.insert("comment".into(), json!("Default schema (auto-created)"));
                }
                st.schemas.insert(format!("{name}.{schema}"), sm);
            }
        }
        Ok(Json(Value::Object(m)))
    })
}

async fn get_catalog(AxState(app): AxState<Arc<App>>, PathParam(name): PathParam<String>) -> Reply {
    let name = name.to_lowercase();
    app.view(|st, _| {
        st.catalogs
            .get(&name)
            .map(|c| Json(Value::Object(c.clone())))
            .ok_or_else(|| catalog_missing(&name))
    })
}

async fn list_catalogs(AxState(app): AxState<Arc<App>>, q: Params) -> Reply {
    let page = uc_page(&q, DEFAULT_PAGE)?;
    app.view(|st, _| Ok(children_page("catalogs", &st.catalogs, "", &page)))
}

async fn update_catalog(
    AxState(app): AxState<Arc<App>>,
    PathParam(name): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let name = name.to_lowercase();
    let o = Obj::root(&b);
    let new_name = o
        .str("new_name")?
        .map(|n| uc_name(n, "new_name"))
        .transpose()?;
    let mut set = Map::new();
    for k in ["comment", "owner"] {
        if let Some(v) = o.str(k)? {
            set.insert(k.into(), json!(v));
        }
    }
    for k in ["properties", "options"] {
        if let Some(v) = o.str_map(k)? {
            set.insert(k.into(), Value::Object(v.clone()));
        }
    }
    if let Some(v) = o.enum_str("isolation_mode", &["OPEN", "ISOLATED", "OPEN_IN_ACCOUNT"])? {
        set.insert("isolation_mode".into(), json!(v));
    }
    let po = o.enum_str("enable_predictive_optimization", PREDICTIVE)?;
    if let Some(v) = po {
        set.insert("enable_predictive_optimization".into(), json!(v));
    }
    if let Some(v) = o.int("custom_max_retention_hours")? {
        set.insert("custom_max_retention_hours".into(), json!(v));
    }
    if let Some(v) = o.obj("managed_encryption_settings")? {
        set.insert(
            "managed_encryption_settings".into(),
            Value::Object(v.clone()),
        );
    }
    app.mutate(|st, ctx| {
        let Some(current) = st.catalogs.get(&name) else {
            return Err(catalog_missing(&name));
        };
        // A foreign catalog's options name the source (its database); only the paths it
        // may read (`authorized_paths`) change in place.
        if s(current, "catalog_type") == "FOREIGN_CATALOG"
            && ctx.behaviours.on(Behaviour::ForeignCatalogOptionsFixed)
            && let Some(Value::Object(new)) = set.get("options")
        {
            let old = current.get("options").and_then(Value::as_object).cloned().unwrap_or_default();
            let source = |m: &Map<String, Value>| {
                m.iter().filter(|(k, _)| *k != "authorized_paths").map(|(k, v)| (k.clone(), v.clone())).collect::<Map<String, Value>>()
            };
            if source(&old) != source(new) {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field 'options': the options of foreign catalog '{name}' cannot be changed (only authorized_paths)"
                )));
            }
        }
        let target = new_name.clone().filter(|n| *n != name);
        if let Some(n) = &target
            && st.catalogs.contains_key(n)
        {
            return Err(ApiError::conflict(
                "CATALOG_ALREADY_EXISTS",
                format!("Catalog '{n}' already exists."),
            ));
        }
        let metastore = st.metastore_id.clone();
        let Some(c) = st.catalogs.get_mut(&name) else {
            return Err(catalog_missing(&name));
        };
        c.extend(set);
        if po.is_some() {
            let own = c
                .get("enable_predictive_optimization")
                .and_then(Value::as_str)
                .map(str::to_string);
            c.insert(
                "effective_predictive_optimization_flag".into(),
                effective_po(own.as_deref(), None, &metastore, "METASTORE"),
            );
        }
        audit(c, ctx, false);
        let key = match target {
            Some(n) => {
                rename_catalog(st, &name, &n);
                n
            }
            None => name,
        };
        st.catalogs
            .get(&key)
            .map(|c| Json(Value::Object(c.clone())))
            .ok_or_else(|| catalog_missing(&key))
    })
}

fn rename_catalog(st: &mut State, old: &str, new: &str) {
    if let Some(mut c) = st.catalogs.remove(old) {
        c.insert("name".into(), json!(new));
        c.insert("full_name".into(), json!(new));
        st.catalogs.insert(new.to_string(), c);
    }
    rename_prefix(
        &mut st.schemas,
        &format!("{old}."),
        &format!("{new}."),
        |k, m| {
            m.insert("catalog_name".into(), json!(new));
            m.insert("full_name".into(), json!(k));
        },
    );
    rename_prefix(
        &mut st.volumes,
        &format!("{old}."),
        &format!("{new}."),
        |k, m| {
            m.insert("catalog_name".into(), json!(new));
            m.insert("full_name".into(), json!(k));
        },
    );
    rename_prefix(
        &mut st.tables,
        &format!("{old}."),
        &format!("{new}."),
        |k, m| {
            m.insert("catalog_name".into(), json!(new));
            m.insert("full_name".into(), json!(k));
        },
    );
    crate::files::rename_tree(st, &format!("/Volumes/{old}/"), &format!("/Volumes/{new}/"));
}

async fn delete_catalog(
    AxState(app): AxState<Arc<App>>,
    PathParam(name): PathParam<String>,
    q: Params,
) -> ApiResult<Json<Value>> {
    let name = name.to_lowercase();
    let force = q.bool("force")?.unwrap_or(false);
    app.mutate(|st, _| {
        if !st.catalogs.contains_key(&name) {
            return Err(catalog_missing(&name));
        }
        let prefix = format!("{name}.");
        let content: Vec<String> = with_prefix(&st.schemas, &prefix)
            .map(|(k, _)| k[prefix.len()..].to_string())
            .filter(|s| s != INFO_SCHEMA)
            .collect();
        if !content.is_empty() && !force {
            return Err(ApiError::not_empty(
                "CATALOG_NOT_EMPTY",
                format!(
                    "Catalog '{name}' is not empty. The catalog has {} schemas(s): {}",
                    content.len(),
                    content.join(", ")
                ),
            ));
        }
        remove_prefix(&mut st.schemas, &prefix);
        remove_prefix(&mut st.volumes, &prefix);
        remove_prefix(&mut st.tables, &prefix);
        crate::files::remove_tree(st, &format!("/Volumes/{name}/"));
        st.catalogs.remove(&name);
        Ok(Json(json!({})))
    })
}

// ---------- schemas ----------

#[allow(clippy::too_many_arguments)]
fn new_schema(
    st: &State,
    ctx: &Ctx,
    catalog: &str,
    name: &str,
    comment: Option<&str>,
    properties: Option<&Map<String, Value>>,
    storage_root: Option<&str>,
    retention: Option<i64>,
) -> ApiResult<Map<String, Value>> {
    let cat = st
        .catalogs
        .get(catalog)
        .ok_or_else(|| catalog_missing(catalog))?;
    let id = uuid::Uuid::new_v4().to_string();
    let base = storage_root
        .map(|r| r.trim_end_matches('/').to_string())
        .or_else(|| {
            cat.get("storage_location")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let full = format!("{catalog}.{name}");
    let mut m = compact(json!({
        "name": name, "catalog_name": catalog, "full_name": full, "comment": comment, "properties": properties,
        // A schema with its own root has its own managed location; one without uses its
        // catalog's.
        "storage_root": storage_root, "storage_location": match storage_root {
            Some(_) => base.map(|b| format!("{b}/__unitystorage/schemas/{id}")),
            None => base,
        },
        "custom_max_retention_hours": retention, "schema_id": id, "metastore_id": st.metastore_id,
        "catalog_type": cat.get("catalog_type"), "securable_type": "SCHEMA", "browse_only": false,
    }));
    m.insert(
        "effective_predictive_optimization_flag".into(),
        effective_po(
            None,
            cat.get("effective_predictive_optimization_flag"),
            catalog,
            "CATALOG",
        ),
    );
    audit(&mut m, ctx, true);
    Ok(m)
}

async fn create_schema(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let name = uc_name(o.req_str("name")?, "name")?;
    let catalog = uc_name(o.req_str("catalog_name")?, "catalog_name")?;
    let comment = o.str("comment")?;
    let properties = o.str_map("properties")?;
    let storage_root = o.str("storage_root")?;
    let retention = o.int("custom_max_retention_hours")?;
    let po = o.enum_str("enable_predictive_optimization", PREDICTIVE)?;
    app.mutate(|st, ctx| {
        let full = format!("{catalog}.{name}");
        if !st.catalogs.contains_key(&catalog) {
            return Err(catalog_missing(&catalog));
        }
        if st.schemas.contains_key(&full) {
            return Err(ApiError::conflict(
                "SCHEMA_ALREADY_EXISTS",
                format!("Schema '{full}' already exists."),
            ));
        }
        let mut m = new_schema(
            st,
            ctx,
            &catalog,
            &name,
            comment,
            properties,
            storage_root,
            retention,
        )?;
        if let Some(p) = po {
            m.insert("enable_predictive_optimization".into(), json!(p));
        }
        st.schemas.insert(full, m.clone());
        Ok(Json(Value::Object(m)))
    })
}

async fn get_schema(AxState(app): AxState<Arc<App>>, PathParam(raw): PathParam<String>) -> Reply {
    let full = full_name(&raw, 2, "schema")?;
    app.view(|st, _| {
        st.schemas
            .get(&full)
            .map(|m| Json(Value::Object(m.clone())))
            .ok_or_else(|| schema_missing(&full))
    })
}

async fn list_schemas(AxState(app): AxState<Arc<App>>, q: Params) -> Reply {
    let catalog = q.req_str("catalog_name")?.to_lowercase();
    let page = uc_page(&q, DEFAULT_PAGE)?;
    app.view(|st, _| {
        if !st.catalogs.contains_key(&catalog) {
            return Err(catalog_missing(&catalog));
        }
        Ok(children_page(
            "schemas",
            &st.schemas,
            &format!("{catalog}."),
            &page,
        ))
    })
}

async fn update_schema(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let full = full_name(&raw, 2, "schema")?;
    let o = Obj::root(&b);
    let new_name = o
        .str("new_name")?
        .map(|n| uc_name(n, "new_name"))
        .transpose()?;
    let mut set = Map::new();
    for k in ["comment", "owner"] {
        if let Some(v) = o.str(k)? {
            set.insert(k.into(), json!(v));
        }
    }
    if let Some(v) = o.str_map("properties")? {
        set.insert("properties".into(), Value::Object(v.clone()));
    }
    let po = o.enum_str("enable_predictive_optimization", PREDICTIVE)?;
    if let Some(v) = po {
        set.insert("enable_predictive_optimization".into(), json!(v));
    }
    if let Some(v) = o.int("custom_max_retention_hours")? {
        set.insert("custom_max_retention_hours".into(), json!(v));
    }
    app.mutate(|st, ctx| {
        let (catalog, _) = full.split_once('.').unwrap_or((&full, ""));
        let catalog = catalog.to_string();
        if !st.schemas.contains_key(&full) {
            return Err(schema_missing(&full));
        }
        let target = new_name
            .as_ref()
            .map(|n| format!("{catalog}.{n}"))
            .filter(|n| *n != full);
        if let Some(t) = &target
            && st.schemas.contains_key(t)
        {
            return Err(ApiError::conflict(
                "SCHEMA_ALREADY_EXISTS",
                format!("Schema '{t}' already exists."),
            ));
        }
        let parent_po = st
            .catalogs
            .get(&catalog)
            .and_then(|c| c.get("effective_predictive_optimization_flag"))
            .cloned();
        let Some(m) = st.schemas.get_mut(&full) else {
            return Err(schema_missing(&full));
        };
        m.extend(set);
        if po.is_some() {
            let own = m
                .get("enable_predictive_optimization")
                .and_then(Value::as_str)
                .map(str::to_string);
            m.insert(
                "effective_predictive_optimization_flag".into(),
                effective_po(own.as_deref(), parent_po.as_ref(), &catalog, "CATALOG"),
            );
        }
        audit(m, ctx, false);
        let key = match (target, &new_name) {
            (Some(t), Some(n)) => {
                rename_schema(st, &full, &t, n);
                t
            }
            _ => full.clone(),
        };
        st.schemas
            .get(&key)
            .map(|m| Json(Value::Object(m.clone())))
            .ok_or_else(|| schema_missing(&key))
    })
}

fn rename_schema(st: &mut State, old: &str, new: &str, leaf: &str) {
    if let Some(mut m) = st.schemas.remove(old) {
        m.insert("name".into(), json!(leaf));
        m.insert("full_name".into(), json!(new));
        st.schemas.insert(new.to_string(), m);
    }
    rename_prefix(
        &mut st.volumes,
        &format!("{old}."),
        &format!("{new}."),
        |k, m| {
            m.insert("schema_name".into(), json!(leaf));
            m.insert("full_name".into(), json!(k));
        },
    );
    rename_prefix(
        &mut st.tables,
        &format!("{old}."),
        &format!("{new}."),
        |k, m| {
            m.insert("schema_name".into(), json!(leaf));
            m.insert("full_name".into(), json!(k));
        },
    );
    crate::files::rename_tree(
        st,
        &format!("/Volumes/{}/", old.replace('.', "/")),
        &format!("/Volumes/{}/", new.replace('.', "/")),
    );
}

async fn delete_schema(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
    q: Params,
) -> Reply {
    let full = full_name(&raw, 2, "schema")?;
    let force = q.bool("force")?.unwrap_or(false);
    app.mutate(|st, _| {
        if !st.schemas.contains_key(&full) {
            return Err(schema_missing(&full));
        }
        let prefix = format!("{full}.");
        let tables: Vec<String> = with_prefix(&st.tables, &prefix).map(|(k, _)| k.clone()).collect();
        let volumes: Vec<String> = with_prefix(&st.volumes, &prefix).map(|(k, _)| k.clone()).collect();
        if !force && (!tables.is_empty() || !volumes.is_empty()) {
            return Err(ApiError::not_empty(
                "SCHEMA_NOT_EMPTY",
                format!(
                    "Schema '{full}' is not empty. The schema has {} tables(s), 0 functions(s), {} volumes(s): {}",
                    tables.len(),
                    volumes.len(),
                    tables.iter().chain(&volumes).cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        remove_prefix(&mut st.tables, &prefix);
        remove_prefix(&mut st.volumes, &prefix);
        crate::files::remove_tree(st, &format!("/Volumes/{}/", full.replace('.', "/")));
        st.schemas.remove(&full);
        Ok(Json(json!({})))
    })
}

// ---------- volumes ----------

async fn create_volume(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let catalog = uc_name(o.req_str("catalog_name")?, "catalog_name")?;
    let schema = uc_name(o.req_str("schema_name")?, "schema_name")?;
    let name = uc_name(o.req_str("name")?, "name")?;
    let vtype = o
        .enum_str("volume_type", &["MANAGED", "EXTERNAL"])?
        .ok_or_else(|| crate::body::missing("volume_type"))?;
    let comment = o.str("comment")?;
    let location = o.str("storage_location")?;
    match (vtype, location) {
        ("EXTERNAL", None) => {
            return Err(ApiError::invalid(
                "Missing required field: storage_location (required for EXTERNAL volumes)",
            ));
        }
        ("MANAGED", Some(_)) => {
            return Err(ApiError::invalid(
                "Invalid value for field 'storage_location': must not be set for MANAGED volumes",
            ));
        }
        _ => {}
    }
    app.mutate(|st, ctx| {
        if !st.catalogs.contains_key(&catalog) {
            return Err(catalog_missing(&catalog));
        }
        let schema_full = format!("{catalog}.{schema}");
        let Some(parent) = st.schemas.get(&schema_full) else {
            return Err(schema_missing(&schema_full));
        };
        let full = format!("{schema_full}.{name}");
        if st.volumes.contains_key(&full) {
            return Err(ApiError::conflict(
                "RESOURCE_ALREADY_EXISTS",
                format!("Volume '{full}' already exists."),
            ));
        }
        let _ = parent;
        let m = put_volume(st, ctx, &catalog, &schema, &name, vtype, location, comment);
        Ok(Json(Value::Object(m)))
    })
}

/// Creates a volume in an existing schema (the caller checked the names): a managed one at
/// its schema's managed location.
#[allow(clippy::too_many_arguments)]
fn put_volume(
    st: &mut State,
    ctx: &Ctx,
    catalog: &str,
    schema: &str,
    name: &str,
    vtype: &str,
    location: Option<&str>,
    comment: Option<&str>,
) -> Map<String, Value> {
    let full = format!("{catalog}.{schema}.{name}");
    let id = uuid::Uuid::new_v4().to_string();
    let loc = match location {
        Some(l) => l.trim_end_matches('/').to_string(),
        None => {
            let base = st
                .schemas
                .get(&format!("{catalog}.{schema}"))
                .map_or_else(|| metastore_root(st), |s| managed_base(st, catalog, s));
            format!("{base}/volumes/{id}")
        }
    };
    let mut m = compact(json!({
        "name": name, "catalog_name": catalog, "schema_name": schema, "full_name": full,
        "volume_type": vtype, "comment": comment, "storage_location": loc, "volume_id": id,
        "metastore_id": st.metastore_id, "browse_only": false,
    }));
    audit(&mut m, ctx, true);
    st.volumes.insert(full, m.clone());
    m
}

/// The staging volume an ingestion gateway creates in its storage schema, named by its
/// `gateway_storage_name`: a managed volume (the SDK's DataStagingOptions: "the system will
/// automatically create the volume under the catalog and schema"). Nothing if the schema is
/// gone or the volume is already there (an edit keeps it).
pub fn put_staging_volume(st: &mut State, ctx: &Ctx, catalog: &str, schema: &str, name: &str) {
    let (catalog, schema, name) = (
        catalog.to_lowercase(),
        schema.to_lowercase(),
        name.to_lowercase(),
    );
    if !st.schemas.contains_key(&format!("{catalog}.{schema}"))
        || st
            .volumes
            .contains_key(&format!("{catalog}.{schema}.{name}"))
    {
        return;
    }
    put_volume(st, ctx, &catalog, &schema, &name, "MANAGED", None, None);
}

async fn get_volume(AxState(app): AxState<Arc<App>>, PathParam(raw): PathParam<String>) -> Reply {
    let full = full_name(&raw, 3, "volume")?;
    app.view(|st, _| {
        st.volumes
            .get(&full)
            .map(|m| Json(Value::Object(m.clone())))
            .ok_or_else(|| volume_missing(&full))
    })
}

async fn list_volumes(AxState(app): AxState<Arc<App>>, q: Params) -> Reply {
    let catalog = q.req_str("catalog_name")?.to_lowercase();
    let schema = q.req_str("schema_name")?.to_lowercase();
    let page = uc_page(&q, 10_000)?;
    app.view(|st, _| {
        let full = format!("{catalog}.{schema}");
        if !st.schemas.contains_key(&full) {
            return Err(schema_missing(&full));
        }
        Ok(children_page(
            "volumes",
            &st.volumes,
            &format!("{full}."),
            &page,
        ))
    })
}

async fn update_volume(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let full = full_name(&raw, 3, "volume")?;
    let o = Obj::root(&b);
    let new_name = o
        .str("new_name")?
        .map(|n| uc_name(n, "new_name"))
        .transpose()?;
    let mut set = Map::new();
    for k in ["comment", "owner"] {
        if let Some(v) = o.str(k)? {
            set.insert(k.into(), json!(v));
        }
    }
    app.mutate(|st, ctx| {
        if !st.volumes.contains_key(&full) {
            return Err(volume_missing(&full));
        }
        let schema_full = full
            .rsplit_once('.')
            .map_or(full.as_str(), |(a, _)| a)
            .to_string();
        let target = new_name
            .as_ref()
            .map(|n| format!("{schema_full}.{n}"))
            .filter(|t| *t != full);
        if let Some(t) = &target
            && st.volumes.contains_key(t)
        {
            return Err(ApiError::conflict(
                "RESOURCE_ALREADY_EXISTS",
                format!("Volume '{t}' already exists."),
            ));
        }
        let Some(m) = st.volumes.get_mut(&full) else {
            return Err(volume_missing(&full));
        };
        m.extend(set);
        audit(m, ctx, false);
        let key = match (target, &new_name) {
            (Some(t), Some(n)) => {
                if let Some(mut m) = st.volumes.remove(&full) {
                    m.insert("name".into(), json!(n));
                    m.insert("full_name".into(), json!(t));
                    st.volumes.insert(t.clone(), m);
                }
                crate::files::rename_tree(
                    st,
                    &format!("/Volumes/{}/", full.replace('.', "/")),
                    &format!("/Volumes/{}/", t.replace('.', "/")),
                );
                t
            }
            _ => full.clone(),
        };
        st.volumes
            .get(&key)
            .map(|m| Json(Value::Object(m.clone())))
            .ok_or_else(|| volume_missing(&key))
    })
}

async fn delete_volume(
    AxState(app): AxState<Arc<App>>,
    PathParam(raw): PathParam<String>,
) -> Reply {
    let full = full_name(&raw, 3, "volume")?;
    app.mutate(|st, _| {
        if st.volumes.remove(&full).is_none() {
            return Err(volume_missing(&full));
        }
        crate::files::remove_tree(st, &format!("/Volumes/{}/", full.replace('.', "/")));
        Ok(Json(json!({})))
    })
}

/// Whether `/Volumes/c/s/v/...` lies in an existing volume; returns the volume's root path.
pub fn volume_root(st: &State, path: &str) -> Option<String> {
    let rest = path.strip_prefix("/Volumes/")?;
    let mut parts = rest.splitn(4, '/');
    let (c, s, v) = (parts.next()?, parts.next()?, parts.next()?);
    let full = format!("{c}.{s}.{v}").to_lowercase();
    st.volumes
        .contains_key(&full)
        .then(|| format!("/Volumes/{c}/{s}/{v}"))
}

// ---------- tables ----------

/// Creates or refreshes a table a pipeline defines (`TableInfo` of the SDK). An existing
/// table keeps its id and creation; it is (again) the pipeline's. Nothing if the schema is
/// gone: the update would fail there.
pub fn put_pipeline_table(
    st: &mut State,
    ctx: &Ctx,
    full: &str,
    table_type: &str,
    pipeline_id: &str,
) {
    let full = full.to_lowercase();
    let mut parts = full.splitn(3, '.');
    let (Some(catalog), Some(schema), Some(name)) = (parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let Some(parent) = st.schemas.get(&format!("{catalog}.{schema}")) else {
        return;
    };
    let base = managed_base(st, catalog, parent);
    let metastore = st.metastore_id.clone();
    let mut m = match st.tables.get(&full) {
        Some(t) => t.clone(),
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            let mut m = compact(json!({
                "name": name, "catalog_name": catalog, "schema_name": schema, "full_name": full,
                "table_id": id, "storage_location": format!("{base}/tables/{id}"),
                "data_source_format": "DELTA", "metastore_id": metastore, "securable_type": "TABLE",
                "browse_only": false,
            }));
            audit(&mut m, ctx, true);
            m
        }
    };
    m.insert("table_type".into(), json!(table_type));
    m.insert("pipeline_id".into(), json!(pipeline_id));
    audit(&mut m, ctx, false);
    st.tables.insert(full, m);
}

/// The tables a pipeline defined, when it is gone: dropped (a delete cascades to them), or
/// kept as nobody's (`cascade=false`).
pub fn end_pipeline_tables(st: &mut State, pipeline_id: &str, keep: bool) {
    let owned: Vec<String> = st
        .tables
        .iter()
        .filter(|(_, t)| t.get("pipeline_id").and_then(Value::as_str) == Some(pipeline_id))
        .map(|(k, _)| k.clone())
        .collect();
    for k in owned {
        if !keep {
            st.tables.remove(&k);
        } else if let Some(t) = st.tables.get_mut(&k) {
            t.remove("pipeline_id");
        }
    }
}

async fn get_table(AxState(app): AxState<Arc<App>>, PathParam(raw): PathParam<String>) -> Reply {
    let full = full_name(&raw, 3, "table")?;
    app.view(|st, _| {
        st.tables
            .get(&full)
            .map(|m| Json(Value::Object(m.clone())))
            .ok_or_else(|| table_missing(&full))
    })
}

async fn list_tables(AxState(app): AxState<Arc<App>>, q: Params) -> Reply {
    let catalog = q.req_str("catalog_name")?.to_lowercase();
    let schema = q.req_str("schema_name")?.to_lowercase();
    let page = uc_page(&q, DEFAULT_PAGE)?;
    app.view(|st, _| {
        let full = format!("{catalog}.{schema}");
        if !st.schemas.contains_key(&full) {
            return Err(schema_missing(&full));
        }
        Ok(children_page(
            "tables",
            &st.tables,
            &format!("{full}."),
            &page,
        ))
    })
}

async fn delete_table(AxState(app): AxState<Arc<App>>, PathParam(raw): PathParam<String>) -> Reply {
    let full = full_name(&raw, 3, "table")?;
    app.mutate(|st, _| {
        st.tables
            .remove(&full)
            .ok_or_else(|| table_missing(&full))?;
        Ok(Json(json!({})))
    })
}

// ---------- connections ----------

/// Whether a connection option is write-only (stored apart, never returned).
fn is_secret_option(key: &str) -> bool {
    SECRET_OPTIONS.contains(&key.to_ascii_lowercase().as_str())
}

/// The options returned on read, and those withheld. The user name is withheld only while
/// `withhold_connection_user` is modelled.
fn split_options(
    options: &Map<String, Value>,
    ctx: &Ctx,
) -> (Map<String, Value>, Map<String, Value>) {
    let show_user = !ctx.behaviours.on(Behaviour::WithholdConnectionUser);
    options
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .partition(|(k, _)| !is_secret_option(k) || (show_user && k.eq_ignore_ascii_case("user")))
}

/// Request paths whose bodies may carry write-only connection options.
pub const CONNECTIONS_PATH: &str = "/api/2.1/unity-catalog/connections";

/// Replaces the write-only options of a connection create or update body, for the request
/// log: the same options the service withholds on read.
pub fn redact_write_only(body: &mut Value) {
    if let Some(Value::Object(options)) = body.get_mut("options") {
        for (k, v) in options.iter_mut() {
            if is_secret_option(k) {
                *v = Value::String(crate::control::REDACTED.into());
            }
        }
    }
}

fn derived_connection_fields(
    m: &mut Map<String, Value>,
    ctype: &str,
    public: &Map<String, Value>,
    secret: &Map<String, Value>,
) {
    if let Some(host) = public.get("host").and_then(Value::as_str) {
        let port = public
            .get("port")
            .and_then(Value::as_str)
            .map(|p| format!(":{p}"))
            .unwrap_or_default();
        m.insert("url".into(), json!(format!("jdbc://{host}{port}/")));
    }
    if secret.contains_key("user") || secret.contains_key("password") {
        m.insert("credential_type".into(), json!("USERNAME_PASSWORD"));
    } else if secret.contains_key("client_secret") {
        m.insert("credential_type".into(), json!("OAUTH_M2M"));
    }
    let _ = ctype;
}

fn connection_view(c: &Connection) -> Json<Value> {
    Json(Value::Object(c.info.clone()))
}

async fn create_connection(AxState(app): AxState<Arc<App>>, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let name = uc_name(o.req_str("name")?, "name")?;
    let ctype = o
        .enum_str("connection_type", CONNECTION_TYPES)?
        .ok_or_else(|| crate::body::missing("connection_type"))?;
    let options = o
        .str_map("options")?
        .ok_or_else(|| crate::body::missing("options"))?;
    if DB_TYPES.contains(&ctype) && !options.contains_key("host") {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'options': connection type {ctype} requires the option 'host'"
        )));
    }
    let comment = o.str("comment")?;
    let properties = o.str_map("properties")?;
    let read_only = o.bool("read_only")?;
    let secrets = o.str_map("secrets")?;
    let env = o.obj("environment_settings")?;
    let parent = o.str("parent")?;
    app.mutate(|st, ctx| {
        if st.connections.contains_key(&name) {
            return Err(ApiError::conflict("RESOURCE_ALREADY_EXISTS", format!("Connection '{name}' already exists.")));
        }
        if let Some(p) = parent {
            let schema = p.strip_prefix("schemas/").map(str::to_lowercase);
            if !schema.as_ref().is_some_and(|s| st.schemas.contains_key(s)) {
                return Err(ApiError::invalid(format!("Invalid value for field 'parent': '{p}' is not an existing schema (schemas/<catalog>.<schema>)")));
            }
        }
        let (public, secret) = split_options(options, ctx);
        let mut m = compact(json!({
            "name": name, "full_name": name, "connection_type": ctype, "options": public, "comment": comment,
            "properties": properties, "read_only": read_only.unwrap_or(true), "secrets": secrets,
            "environment_settings": env, "parent": parent, "connection_id": uuid::Uuid::new_v4().to_string(),
            "metastore_id": st.metastore_id, "securable_type": "CONNECTION", "provisioning_info": {"state": "ACTIVE"},
        }));
        derived_connection_fields(&mut m, ctype, &public, &secret);
        audit(&mut m, ctx, true);
        let c = Connection { info: m, secret_options: secret };
        let out = connection_view(&c);
        st.connections.insert(name.clone(), c);
        Ok(out)
    })
}

async fn get_connection(
    AxState(app): AxState<Arc<App>>,
    PathParam(name): PathParam<String>,
) -> Reply {
    let name = name.to_lowercase();
    app.view(|st, _| {
        st.connections
            .get(&name)
            .map(connection_view)
            .ok_or_else(|| connection_missing(&name))
    })
}

async fn list_connections(AxState(app): AxState<Arc<App>>, q: Params) -> Reply {
    let page = uc_page(&q, DEFAULT_PAGE)?;
    let parent = q.str("parent").map(str::to_string);
    app.view(|st, _| {
        let start = match &page.after {
            Some(a) => Bound::Excluded(a.clone()),
            None => Bound::Unbounded,
        };
        let iter = st
            .connections
            .range::<String, _>((start, Bound::Unbounded))
            .filter(|(_, c)| {
                parent
                    .as_deref()
                    .is_none_or(|p| c.info.get("parent").and_then(Value::as_str) == Some(p))
            })
            .map(|(k, c)| (k.clone(), Value::Object(c.info.clone())));
        let (items, next) = page.collect(iter);
        Ok(list_reply("connections", items, next))
    })
}

async fn update_connection(
    AxState(app): AxState<Arc<App>>,
    PathParam(name): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let name = name.to_lowercase();
    let o = Obj::root(&b);
    let options = o
        .str_map("options")?
        .ok_or_else(|| crate::body::missing("options"))?;
    let new_name = o
        .str("new_name")?
        .map(|n| uc_name(n, "new_name"))
        .transpose()?;
    let owner = o.str("owner")?;
    let secrets = o.str_map("secrets")?;
    let env = o.obj("environment_settings")?;
    app.mutate(|st, ctx| {
        let Some(c) = st.connections.get(&name) else { return Err(connection_missing(&name)) };
        let ctype = s(&c.info, "connection_type");
        if DB_TYPES.contains(&ctype.as_str()) && !options.contains_key("host") {
            return Err(ApiError::invalid(format!("Invalid value for field 'options': connection type {ctype} requires the option 'host'")));
        }
        let target = new_name.clone().filter(|n| *n != name);
        if let Some(t) = &target
            && st.connections.contains_key(t)
        {
            return Err(ApiError::conflict("RESOURCE_ALREADY_EXISTS", format!("Connection '{t}' already exists.")));
        }
        let Some(mut c) = st.connections.remove(&name) else { return Err(connection_missing(&name)) };
        let (public, secret) = split_options(options, ctx);
        c.info.insert("options".into(), Value::Object(public.clone()));
        c.info.remove("url");
        c.info.remove("credential_type");
        derived_connection_fields(&mut c.info, &ctype, &public, &secret);
        c.secret_options = secret;
        if let Some(v) = owner {
            c.info.insert("owner".into(), json!(v));
        }
        if let Some(v) = secrets {
            c.info.insert("secrets".into(), Value::Object(v.clone()));
        }
        if let Some(v) = env {
            c.info.insert("environment_settings".into(), Value::Object(v.clone()));
        }
        let key = target.unwrap_or(name.clone());
        // Foreign catalogs refer to the connection by name and follow its rename.
        if key != name {
            let followers: Vec<String> = st
                .catalogs
                .iter()
                .filter(|(_, cat)| cat.get("connection_name").and_then(Value::as_str) == Some(name.as_str()))
                .map(|(k, _)| k.clone())
                .collect();
            for k in followers {
                if let Some(cat) = st.catalogs.get_mut(&k) {
                    cat.insert("connection_name".into(), json!(key));
                }
            }
        }
        c.info.insert("name".into(), json!(key));
        c.info.insert("full_name".into(), json!(key));
        audit(&mut c.info, ctx, false);
        let out = connection_view(&c);
        st.connections.insert(key, c);
        Ok(out)
    })
}

async fn delete_connection(
    AxState(app): AxState<Arc<App>>,
    PathParam(name): PathParam<String>,
) -> Reply {
    let name = name.to_lowercase();
    app.mutate(|st, _| {
        st.connections
            .remove(&name)
            .ok_or_else(|| connection_missing(&name))?;
        Ok(Json(json!({})))
    })
}
