//! What the Queries, Alerts and Lakeview dashboards APIs do to the workspace state, apart
//! from HTTP.
//!
//! The shapes are the SDK's (databricks-sdk-go service/sql/model.go `Query`, `Alert`,
//! `UpdateQueryRequest`; service/dashboards/model.go `Dashboard`, `PublishedDashboard`).

use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::store::{Ctx, State};
use crate::util::iso_date;
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

/// A query or an alert: the collection it lives in, the request field wrapping it and the
/// fields a create or an update mask may name.
pub struct Spec {
    /// `queries`: its key prefix in the state and the last segment of its API path.
    pub collection: &'static str,
    /// `query`: the object in request bodies, and in messages.
    pub noun: &'static str,
    pub fields: &'static [&'static str],
    pub required: &'static [&'static str],
    /// Fields the list answer leaves out (the SDK's `ListQueryObjectsResponseQuery` and
    /// `ListAlertsResponseAlert` have no `parent_path`).
    pub unlisted: &'static [&'static str],
}

pub const QUERY: Spec = Spec {
    collection: "queries",
    noun: "query",
    fields: &[
        "apply_auto_limit",
        "catalog",
        "description",
        "display_name",
        "owner_user_name",
        "parameters",
        "parent_path",
        "query_text",
        "run_as_mode",
        "schema",
        "tags",
        "warehouse_id",
    ],
    // terraform-provider-databricks sql/resource_query.go:33-35 makes these required.
    required: &["display_name", "query_text", "warehouse_id"],
    unlisted: &["parent_path"],
};

pub const ALERT: Spec = Spec {
    collection: "alerts",
    noun: "alert",
    fields: &[
        "condition",
        "custom_body",
        "custom_subject",
        "display_name",
        "notify_on_ok",
        "owner_user_name",
        "parent_path",
        "query_id",
        "seconds_to_retrigger",
    ],
    // terraform-provider-databricks sql/resource_alert.go:22-24.
    required: &["display_name", "query_id", "condition"],
    unlisted: &["parent_path"],
};

/// terraform-provider-databricks sql/resource_alert.go:26-27 (the SDK's `AlertOperator`).
const ALERT_OPS: &[&str] = &[
    "GREATER_THAN",
    "GREATER_THAN_OR_EQUAL",
    "LESS_THAN",
    "LESS_THAN_OR_EQUAL",
    "EQUAL",
    "NOT_EQUAL",
    "IS_NULL",
];
const ALERT_STATES: &[&str] = &["UNKNOWN", "OK", "TRIGGERED"];
const RUN_AS_MODES: &[&str] = &["OWNER", "VIEWER"];

const ACTIVE: &str = "ACTIVE";
const TRASHED: &str = "TRASHED";
/// The etag of a new dashboard: the service's is an opaque number it bumps at every write
/// (databricks/cli libs/testserver/dashboards.go: DashboardCreate, DashboardUpdate).
const FIRST_ETAG: i64 = 80_611_980;

fn key(collection: &str, id: &str) -> String {
    format!("{collection}/{id}")
}

fn missing(noun: &str, id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Unable to find {noun} [{id}]"),
    )
}

fn str_of<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn trashed(m: &Map<String, Value>) -> bool {
    str_of(m, "lifecycle_state") == TRASHED
}

/// A folder given with or without the `/Workspace` mount prefix, as the workspace keeps it;
/// the caller's home folder when none is given (databricks/cli
/// libs/testserver/dashboards.go: "Default to user's home directory if parent_path is not
/// provided (matches cloud behavior)"). It must exist (ibid.: "Path (%s) doesn't exist.").
fn folder(st: &State, ctx: &Ctx, given: Option<&str>) -> ApiResult<String> {
    let path = match given.filter(|p| !p.is_empty()) {
        Some(p) => crate::workspace::normalize(p)?,
        None => format!("/Users/{}", ctx.user),
    };
    let exists = path == "/"
        || st
            .workspace
            .workspace
            .get(&path)
            .is_some_and(|o| o.object_type == "DIRECTORY");
    if !exists {
        return Err(ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("Path ({path}) doesn't exist."),
        ));
    }
    Ok(path)
}

/// The display name is unique among the folder's objects of its type: a workspace node
/// (terraform-provider-databricks sql/resource_query_test.go, TestQueryCreate_Error:
/// "Node named 'TF new query' already exists").
fn name_free(
    st: &State,
    collection: &str,
    folder: &str,
    name: &str,
    except: Option<&str>,
) -> ApiResult<()> {
    let prefix = format!("{collection}/");
    let taken = st.sql.sql_objects.iter().any(|(k, o)| {
        k.starts_with(&prefix)
            && Some(&k[prefix.len()..]) != except
            && !trashed(o)
            && crate::workspace::normalize(str_of(o, "parent_path"))
                .ok()
                .as_deref()
                == Some(folder)
            && str_of(o, "display_name") == name
    });
    if taken {
        return Err(ApiError::invalid(format!(
            "Node named '{name}' already exists"
        )));
    }
    Ok(())
}

/// The fields of a query or alert a request sets, checked.
fn checked(st: &State, spec: &Spec, o: &Map<String, Value>) -> ApiResult<()> {
    let obj = Obj::at(o, spec.noun);
    if let Some(name) = obj.str("display_name")?
        && name.trim().is_empty()
    {
        return Err(ApiError::invalid("display_name must not be empty"));
    }
    if spec.noun == QUERY.noun {
        obj.enum_str("run_as_mode", RUN_AS_MODES)?;
        obj.str("query_text")?;
        obj.str("warehouse_id")?;
        obj.strs("tags")?;
        for (path, p) in obj.objs("parameters")? {
            Obj::at(p, &path).req_str("name")?;
        }
    } else {
        if let Some(q) = obj.str("query_id")? {
            // A trashed query "cannot be used for alerts" (databricks-sdk-go
            // service/sql/api.go, Queries.Delete).
            let usable = st
                .sql
                .sql_objects
                .get(&key(QUERY.collection, q))
                .is_some_and(|m| !trashed(m));
            if !usable {
                return Err(missing("query", q));
            }
        }
        if let Some(c) = obj.obj("condition")? {
            let c = Obj::at(c, "alert.condition");
            c.enum_str("op", ALERT_OPS)?;
            if c.str("op")?.is_none() {
                return Err(crate::body::missing("alert.condition.op"));
            }
            c.enum_str("empty_result_state", ALERT_STATES)?;
            let operand = c.req_obj("operand")?;
            let column = Obj::at(operand, "alert.condition.operand").req_obj("column")?;
            Obj::at(column, "alert.condition.operand.column").req_str("name")?;
        }
        if let Some(n) = obj.int("seconds_to_retrigger")?
            && n < 0
        {
            return Err(ApiError::invalid(
                "seconds_to_retrigger must not be negative",
            ));
        }
    }
    Ok(())
}

/// The parent path as these APIs answer it: with the `/Workspace` mount prefix
/// (terraform-provider-databricks sql/resource_query_test.go: created under
/// "/Shared/Querys", answered "/Workspace/Shared/Querys"; the provider's read keeps the
/// configured spelling, sql/resource_query.go:128-131).
fn mounted(folder: &str) -> String {
    format!("/Workspace{folder}")
}

/// Makes a query or an alert from a create body (`{"query": {...}}`); the answer.
pub fn create(
    st: &mut State,
    ctx: &Ctx,
    spec: &Spec,
    body: &Map<String, Value>,
) -> ApiResult<Value> {
    let o = Obj::root(body).req_obj(spec.noun)?;
    for f in spec.required {
        if o.get(*f).is_none_or(Value::is_null) {
            return Err(crate::body::missing(&format!("{}.{f}", spec.noun)));
        }
    }
    checked(st, spec, o)?;
    let dir = folder(st, ctx, o.get("parent_path").and_then(Value::as_str))?;
    let name = str_of(o, "display_name").to_string();
    name_free(st, spec.collection, &dir, &name, None)?;
    // The create request has no owner (databricks-sdk-go service/sql/model.go
    // `CreateQueryRequestQuery`, `CreateAlertRequestAlert`): the caller owns what it makes,
    // and the Terraform provider sets another owner with an update after the create
    // (sql/resource_query.go:109-118).
    let mut m: Map<String, Value> = spec
        .fields
        .iter()
        .filter(|f| **f != "owner_user_name")
        .filter_map(|f| Some((f.to_string(), o.get(*f).filter(|v| !v.is_null())?.clone())))
        .collect();
    let id = uuid::Uuid::new_v4().to_string();
    let now = iso_date(ctx.now);
    m.insert("id".into(), json!(id));
    m.insert("parent_path".into(), json!(mounted(&dir)));
    m.insert("lifecycle_state".into(), json!(ACTIVE));
    m.insert("create_time".into(), json!(now));
    m.insert("update_time".into(), json!(now));
    m.insert("owner_user_name".into(), json!(ctx.user));
    if spec.noun == QUERY.noun {
        m.insert("last_modifier_user_name".into(), json!(ctx.user));
    } else {
        // Not evaluated yet (terraform-provider-databricks docs/resources/alert.md: "set to
        // UNKNOWN if the alert has not yet been evaluated").
        m.insert("state".into(), json!("UNKNOWN"));
    }
    st.sql
        .sql_objects
        .insert(key(spec.collection, &id), m.clone());
    Ok(Value::Object(m))
}

/// Changes the fields the update mask names (a comma-separated list): to the value the
/// request carries, or cleared when it carries none (databricks-sdk-go
/// service/sql/model.go `UpdateQueryRequest.UpdateMask`).
pub fn update(
    st: &mut State,
    ctx: &Ctx,
    spec: &Spec,
    id: &str,
    body: &Map<String, Value>,
) -> ApiResult<Value> {
    let root = Obj::root(body);
    let mask = root.req_str("update_mask")?;
    let o = root.obj(spec.noun)?.cloned().unwrap_or_default();
    let current = get(st, spec, id)?.clone();
    if trashed(&current) {
        return Err(missing(spec.noun, id));
    }
    let fields: Vec<&str> = mask
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    if fields.is_empty() {
        return Err(ApiError::invalid(
            "update_mask must name at least one field",
        ));
    }
    if let Some(bad) = fields.iter().find(|f| !spec.fields.contains(f)) {
        return Err(ApiError::invalid(format!(
            "Invalid update_mask: {bad} is not a field of a {}",
            spec.noun
        )));
    }
    for f in spec.required {
        if fields.contains(f) && o.get(*f).is_none_or(Value::is_null) {
            return Err(crate::body::missing(&format!("{}.{f}", spec.noun)));
        }
    }
    checked(st, spec, &o)?;
    let mut next = current.clone();
    for f in &fields {
        match o.get(*f).filter(|v| !v.is_null()) {
            Some(v) => next.insert(f.to_string(), v.clone()),
            None => next.remove(*f),
        };
    }
    let dir = if fields.contains(&"parent_path") {
        folder(st, ctx, o.get("parent_path").and_then(Value::as_str))?
    } else {
        crate::workspace::normalize(str_of(&current, "parent_path"))?
    };
    next.insert("parent_path".into(), json!(mounted(&dir)));
    name_free(
        st,
        spec.collection,
        &dir,
        str_of(&next, "display_name"),
        Some(id),
    )?;
    next.insert("update_time".into(), json!(iso_date(ctx.now)));
    if spec.noun == QUERY.noun {
        next.insert("last_modifier_user_name".into(), json!(ctx.user));
    }
    // Cleared from the mask, the owner stays who it was: an object always has one.
    if next.get("owner_user_name").is_none() {
        next.insert(
            "owner_user_name".into(),
            current
                .get("owner_user_name")
                .cloned()
                .unwrap_or_else(|| json!(ctx.user)),
        );
    }
    st.sql
        .sql_objects
        .insert(key(spec.collection, id), next.clone());
    Ok(Value::Object(next))
}

/// The object, trashed ones too (they are read with `lifecycle_state` TRASHED).
pub fn get<'a>(st: &'a State, spec: &Spec, id: &str) -> ApiResult<&'a Map<String, Value>> {
    st.sql
        .sql_objects
        .get(&key(spec.collection, id))
        .ok_or_else(|| missing(spec.noun, id))
}

/// Moves the object to the trash. Trashing it again changes nothing.
pub fn trash(st: &mut State, spec: &Spec, id: &str) -> ApiResult<()> {
    let o = st
        .sql
        .sql_objects
        .get_mut(&key(spec.collection, id))
        .ok_or_else(|| missing(spec.noun, id))?;
    o.insert("lifecycle_state".into(), json!(TRASHED));
    Ok(())
}

/// The objects not in the trash, a page at a time (`page_size`, `page_token`), without the
/// fields lists leave out.
pub fn list(
    st: &State,
    spec: &Spec,
    items: &str,
    token: Option<&str>,
    size: Option<i64>,
) -> ApiResult<Value> {
    let page = Page::new(token, size, 20, 100, "page_size")?;
    let prefix = format!("{}/", spec.collection);
    let after = page.after.clone();
    let iter = st
        .sql
        .sql_objects
        .iter()
        .filter(|(k, o)| k.starts_with(&prefix) && !trashed(o))
        .filter(|(k, _)| after.as_ref().is_none_or(|a| k.as_str() > a.as_str()))
        .map(|(k, o)| {
            let mut o = o.clone();
            for f in spec.unlisted {
                o.remove(*f);
            }
            (k.clone(), Value::Object(o))
        });
    let (all, next) = page.collect(iter);
    let mut out = json!({ items: all });
    if let Some(t) = next {
        out["next_page_token"] = json!(t);
    }
    Ok(out)
}

// Dashboards.

const DASHBOARDS: &str = "dashboards";
const PUBLISHED: &str = "published";

fn missing_dashboard(id: &str) -> ApiError {
    missing("dashboard", id)
}

/// The serialized dashboard as the service keeps it (databricks/cli
/// libs/testserver/dashboards.go, transformSerializedDashboard, "verified against cloud"):
/// every page gets `pageType` PAGE_TYPE_CANVAS, every dataset the `catalog` and `schema`
/// the request's `dataset_catalog` / `dataset_schema` name; the document is written again
/// when it changed (or is empty), else kept verbatim; it ends in one newline.
fn serialized(text: &str, catalog: Option<&str>, schema: Option<&str>) -> String {
    let Ok(Value::Object(mut doc)) = serde_json::from_str::<Value>(text) else {
        return ensure_newline(text.to_string());
    };
    let mut mutated = false;
    if let Some(Value::Array(pages)) = doc.get_mut("pages") {
        for p in pages.iter_mut().filter_map(Value::as_object_mut) {
            p.insert("pageType".into(), json!("PAGE_TYPE_CANVAS"));
            mutated = true;
        }
    }
    if let Some(Value::Array(sets)) = doc.get_mut("datasets") {
        for d in sets.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(c) = catalog.filter(|c| !c.is_empty()) {
                d.insert("catalog".into(), json!(c));
                mutated = true;
            }
            if let Some(s) = schema.filter(|s| !s.is_empty()) {
                d.insert("schema".into(), json!(s));
                mutated = true;
            }
        }
    }
    let out = if mutated || doc.is_empty() {
        serde_json::to_string(&Value::Object(doc)).unwrap_or_else(|_| text.to_string())
    } else {
        text.to_string()
    };
    ensure_newline(out)
}

fn ensure_newline(mut s: String) -> String {
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// The workspace path of a dashboard: its folder and `NAME.lvdash.json`.
fn dashboard_path(folder: &str, name: &str) -> String {
    format!("{}/{name}.lvdash.json", folder.trim_end_matches('/'))
}

fn dashboard_name_free(
    st: &State,
    folder: &str,
    name: &str,
    except: Option<&str>,
) -> ApiResult<()> {
    let prefix = format!("{DASHBOARDS}/");
    let taken = st.sql.sql_objects.iter().any(|(k, o)| {
        k.starts_with(&prefix)
            && Some(&k[prefix.len()..]) != except
            && !trashed(o)
            && str_of(o, "parent_path") == folder
            && str_of(o, "display_name") == name
    });
    if taken {
        return Err(ApiError::invalid(format!(
            "Node named '{name}.lvdash.json' already exists"
        )));
    }
    Ok(())
}

/// Makes a dashboard from a create body (the SDK's `Dashboard`); `catalog` and `schema`
/// are the `dataset_catalog` / `dataset_schema` query parameters.
pub fn create_dashboard(
    st: &mut State,
    ctx: &Ctx,
    body: &Map<String, Value>,
    catalog: Option<&str>,
    schema: Option<&str>,
) -> ApiResult<Value> {
    let o = Obj::root(body);
    let name = o.req_str("display_name")?.to_string();
    if name.trim().is_empty() {
        return Err(ApiError::invalid("display_name must not be empty"));
    }
    // The service answers the folder without the `/Workspace` prefix (databricks/cli
    // libs/testserver/dashboards.go: "This matches the remote behavior").
    let dir = folder(st, ctx, o.str("parent_path")?)?;
    dashboard_name_free(st, &dir, &name, None)?;
    let id = uuid::Uuid::new_v4().simple().to_string();
    let now = iso_date(ctx.now);
    let mut m = Map::new();
    m.insert("dashboard_id".into(), json!(id));
    m.insert("display_name".into(), json!(name));
    m.insert("parent_path".into(), json!(dir));
    m.insert("path".into(), json!(dashboard_path(&dir, &name)));
    if let Some(w) = o.str("warehouse_id")? {
        m.insert("warehouse_id".into(), json!(w));
    }
    if let Some(text) = o.str("serialized_dashboard")?.filter(|t| !t.is_empty()) {
        m.insert(
            "serialized_dashboard".into(),
            json!(serialized(text, catalog, schema)),
        );
    }
    m.insert("etag".into(), json!(FIRST_ETAG.to_string()));
    m.insert("lifecycle_state".into(), json!(ACTIVE));
    m.insert("create_time".into(), json!(now));
    m.insert("update_time".into(), json!(now));
    st.sql.sql_objects.insert(key(DASHBOARDS, &id), m.clone());
    Ok(Value::Object(m))
}

/// Updates a dashboard (PATCH): a new display name moves its path; the warehouse is the
/// request's (databricks/cli libs/testserver/dashboards.go, DashboardUpdate); the etag is
/// bumped at every write.
pub fn update_dashboard(
    st: &mut State,
    ctx: &Ctx,
    id: &str,
    body: &Map<String, Value>,
    catalog: Option<&str>,
    schema: Option<&str>,
) -> ApiResult<Value> {
    let o = Obj::root(body);
    let current = get_dashboard(st, id)?.clone();
    if trashed(&current) {
        // A trashed dashboard "cannot be updated unless it is untrashed"
        // (terraform-provider-databricks dashboards/resource_dashboard.go, Read).
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            format!("Dashboard {id} is in the trash."),
        ));
    }
    if let Some(e) = o.str("etag")?
        && !e.is_empty()
        && e != str_of(&current, "etag")
    {
        return Err(ApiError::conflict(
            "ABORTED",
            format!("The etag {e} does not match the dashboard's current etag."),
        ));
    }
    let mut next = current.clone();
    let dir = str_of(&current, "parent_path").to_string();
    if let Some(name) = o.str("display_name")?.filter(|n| !n.is_empty()) {
        dashboard_name_free(st, &dir, name, Some(id))?;
        next.insert("display_name".into(), json!(name));
        next.insert("path".into(), json!(dashboard_path(&dir, name)));
    }
    if let Some(text) = o.str("serialized_dashboard")?.filter(|t| !t.is_empty()) {
        next.insert(
            "serialized_dashboard".into(),
            json!(serialized(text, catalog, schema)),
        );
    }
    match o.str("warehouse_id")? {
        Some(w) => next.insert("warehouse_id".into(), json!(w)),
        None => next.remove("warehouse_id"),
    };
    let etag = str_of(&current, "etag")
        .parse::<i64>()
        .unwrap_or(FIRST_ETAG)
        + 1;
    next.insert("etag".into(), json!(etag.to_string()));
    next.insert("update_time".into(), json!(iso_date(ctx.now)));
    st.sql.sql_objects.insert(key(DASHBOARDS, id), next.clone());
    Ok(Value::Object(next))
}

pub fn get_dashboard<'a>(st: &'a State, id: &str) -> ApiResult<&'a Map<String, Value>> {
    st.sql
        .sql_objects
        .get(&key(DASHBOARDS, id))
        .ok_or_else(|| missing_dashboard(id))
}

/// Moves a dashboard to the trash and unpublishes it. Trashing it again is refused with
/// 403 (terraform-provider-databricks dashboards/resource_dashboard.go, Delete: "If the
/// dashboard was already trashed, we'll get a 403 (Permission Denied) error").
pub fn trash_dashboard(st: &mut State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    let d = st
        .sql
        .sql_objects
        .get_mut(&key(DASHBOARDS, id))
        .ok_or_else(|| missing_dashboard(id))?;
    if trashed(d) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "PERMISSION_DENIED",
            format!("Dashboard {id} is already in the trash."),
        ));
    }
    d.insert("lifecycle_state".into(), json!(TRASHED));
    // databricks/cli libs/testserver/dashboards.go, DashboardTrash: moved to the caller's trash.
    d.insert(
        "parent_path".into(),
        json!(format!("/Users/{}/Trash", ctx.user)),
    );
    st.sql.sql_objects.remove(&key(PUBLISHED, id));
    Ok(())
}

/// Publishes the dashboard's current version (`warehouse_id` defaults to the dashboard's;
/// `embed_credentials` to false, as the SDK leaves it out when false).
pub fn publish(st: &mut State, ctx: &Ctx, id: &str, body: &Map<String, Value>) -> ApiResult<Value> {
    let o = Obj::root(body);
    let d = get_dashboard(st, id)?;
    if trashed(d) {
        return Err(missing_dashboard(id));
    }
    let warehouse = match o.str("warehouse_id")?.filter(|w| !w.is_empty()) {
        Some(w) => w.to_string(),
        None => str_of(d, "warehouse_id").to_string(),
    };
    let mut p = Map::new();
    p.insert("display_name".into(), json!(str_of(d, "display_name")));
    p.insert("warehouse_id".into(), json!(warehouse));
    p.insert(
        "embed_credentials".into(),
        json!(o.bool("embed_credentials")?.unwrap_or(false)),
    );
    p.insert("revision_create_time".into(), json!(iso_date(ctx.now)));
    st.sql.sql_objects.insert(key(PUBLISHED, id), p.clone());
    Ok(Value::Object(p))
}

/// The published version; 404 when the dashboard is not published (databricks/cli
/// libs/testserver/dashboards.go, DashboardGetPublished).
pub fn published<'a>(st: &'a State, id: &str) -> ApiResult<&'a Map<String, Value>> {
    st.sql.sql_objects.get(&key(PUBLISHED, id)).ok_or_else(|| {
        ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("Unable to find published dashboard [{id}]"),
        )
    })
}

pub fn unpublish(st: &mut State, id: &str) -> ApiResult<()> {
    get_dashboard(st, id)?;
    st.sql.sql_objects.remove(&key(PUBLISHED, id));
    Ok(())
}

/// The dashboards not in the trash, a page at a time, without their serialized content
/// (the list answer is a summary).
pub fn list_dashboards(st: &State, token: Option<&str>, size: Option<i64>) -> ApiResult<Value> {
    let page = Page::new(token, size, 100, 1000, "page_size")?;
    let prefix = format!("{DASHBOARDS}/");
    let after = page.after.clone();
    let iter = st
        .sql
        .sql_objects
        .iter()
        .filter(|(k, o)| k.starts_with(&prefix) && !trashed(o))
        .filter(|(k, _)| after.as_ref().is_none_or(|a| k.as_str() > a.as_str()))
        .map(|(k, o)| {
            let mut o = o.clone();
            o.remove("serialized_dashboard");
            (k.clone(), Value::Object(o))
        });
    let (all, next) = page.collect(iter);
    let mut out = json!({ "dashboards": all });
    if let Some(t) = next {
        out["next_page_token"] = json!(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    fn state() -> State {
        // A new workspace has /Users/u@x and /Shared.
        State::new("u@x", 0)
    }

    #[test]
    fn a_query_is_made_updated_by_mask_and_trashed() {
        let mut st = state();
        let ctx = Ctx::for_test(5, 0);
        let made = create(
            &mut st,
            &ctx,
            &QUERY,
            &body(json!({"query": {"display_name": "q", "query_text": "select 1", "warehouse_id": "w", "description": "d", "parent_path": "/Shared"}})),
        )
        .unwrap();
        let id = made["id"].as_str().unwrap().to_string();
        assert_eq!(made["parent_path"], "/Workspace/Shared");
        assert_eq!(made["owner_user_name"], "u@x");
        assert_eq!(made["lifecycle_state"], "ACTIVE");
        let again = create(
            &mut st,
            &ctx,
            &QUERY,
            &body(json!({"query": {"display_name": "q", "query_text": "x", "warehouse_id": "w", "parent_path": "/Workspace/Shared"}})),
        )
        .unwrap_err();
        assert!(
            again.message.contains("already exists"),
            "{}",
            again.message
        );
        // A masked field the request leaves out is cleared; one not masked stays.
        let upd = update(
            &mut st,
            &ctx,
            &QUERY,
            &id,
            &body(json!({"update_mask": "query_text,description", "query": {"query_text": "select 2"}})),
        )
        .unwrap();
        assert_eq!(upd["query_text"], "select 2");
        assert!(upd.get("description").is_none());
        assert_eq!(upd["display_name"], "q");
        let listed = list(&st, &QUERY, "results", None, None).unwrap();
        assert_eq!(listed["results"].as_array().unwrap().len(), 1);
        assert!(listed["results"][0].get("parent_path").is_none());
        trash(&mut st, &QUERY, &id).unwrap();
        assert_eq!(get(&st, &QUERY, &id).unwrap()["lifecycle_state"], "TRASHED");
        assert!(
            list(&st, &QUERY, "results", None, None).unwrap()["results"]
                .as_array()
                .unwrap()
                .is_empty()
        );
        // A trashed query cannot be used for alerts.
        let e = create(
            &mut st,
            &ctx,
            &ALERT,
            &body(json!({"alert": {"display_name": "a", "query_id": id, "condition": {"op": "EQUAL", "operand": {"column": {"name": "c"}}}}})),
        )
        .unwrap_err();
        assert_eq!(e.code, "RESOURCE_DOES_NOT_EXIST");
    }

    #[test]
    fn what_the_service_refuses() {
        let mut st = state();
        let ctx = Ctx::for_test(5, 0);
        let q = create(
            &mut st,
            &ctx,
            &QUERY,
            &body(json!({"query": {"display_name": "q", "query_text": "x", "warehouse_id": "w"}})),
        )
        .unwrap();
        let qid = q["id"].as_str().unwrap();
        for (spec, b, says) in [
            (
                &QUERY,
                json!({"query": {"query_text": "x", "warehouse_id": "w"}}),
                "display_name",
            ),
            (
                &QUERY,
                json!({"query": {"display_name": "n", "query_text": "x", "warehouse_id": "w", "parent_path": "/nope"}}),
                "doesn't exist",
            ),
            (
                &QUERY,
                json!({"query": {"display_name": "n", "query_text": "x", "warehouse_id": "w", "run_as_mode": "ME"}}),
                "run_as_mode",
            ),
            (
                &ALERT,
                json!({"alert": {"display_name": "a", "query_id": qid, "condition": {"op": "BIGGER", "operand": {"column": {"name": "c"}}}}}),
                "op",
            ),
            (
                &ALERT,
                json!({"alert": {"display_name": "a", "query_id": qid, "condition": {"op": "EQUAL"}}}),
                "operand",
            ),
        ] {
            let e = create(&mut st, &ctx, spec, &body(b)).unwrap_err();
            assert!(e.message.contains(says), "{says}: {}", e.message);
        }
        let e = update(
            &mut st,
            &ctx,
            &QUERY,
            qid,
            &body(json!({"update_mask": "id", "query": {}})),
        )
        .unwrap_err();
        assert!(e.message.contains("update_mask"), "{}", e.message);
    }

    #[test]
    fn a_dashboard_is_reformatted_published_and_trashed() {
        let mut st = state();
        let ctx = Ctx::for_test(5, 0);
        let d = create_dashboard(
            &mut st,
            &ctx,
            &body(json!({"display_name": "d", "warehouse_id": "w", "parent_path": "/Workspace/Shared",
                "serialized_dashboard": "{\"pages\":[{\"name\":\"p\"}],\"datasets\":[{\"name\":\"x\"}]}"})),
            Some("cat"),
            None,
        )
        .unwrap();
        let id = d["dashboard_id"].as_str().unwrap().to_string();
        assert_eq!(d["parent_path"], "/Shared");
        assert_eq!(d["path"], "/Shared/d.lvdash.json");
        let text = d["serialized_dashboard"].as_str().unwrap();
        assert!(text.ends_with('\n'));
        let doc: Value = serde_json::from_str(text).unwrap();
        assert_eq!(doc["pages"][0]["pageType"], "PAGE_TYPE_CANVAS");
        assert_eq!(doc["datasets"][0]["catalog"], "cat");
        // Kept verbatim when nothing is injected.
        assert_eq!(serialized("{ \"a\": 1 }", None, None), "{ \"a\": 1 }\n");
        let u = update_dashboard(
            &mut st,
            &ctx,
            &id,
            &body(json!({"display_name": "e", "warehouse_id": "w2"})),
            None,
            None,
        )
        .unwrap();
        assert_eq!(u["path"], "/Shared/e.lvdash.json");
        assert_ne!(u["etag"], d["etag"]);
        assert!(published(&st, &id).is_err());
        let p = publish(
            &mut st,
            &ctx,
            &id,
            &body(json!({"embed_credentials": true})),
        )
        .unwrap();
        assert_eq!(p["warehouse_id"], "w2");
        assert_eq!(p["embed_credentials"], true);
        trash_dashboard(&mut st, &ctx, &id).unwrap();
        assert_eq!(
            get_dashboard(&st, &id).unwrap()["lifecycle_state"],
            "TRASHED"
        );
        assert!(published(&st, &id).is_err());
        assert_eq!(
            trash_dashboard(&mut st, &ctx, &id).unwrap_err().code,
            "PERMISSION_DENIED"
        );
        assert!(
            list_dashboards(&st, None, None).unwrap()["dashboards"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
}
