//! The Unity Catalog API over HTTP: one set of routes per row of the securables table, the
//! create bodies read into each securable's typed request, answers rendered as JSON.

use super::CONNECTION_TYPES;
use super::model::{self, NewCatalog, NewConnection, NewModel, NewSchema, NewVolume};
use super::securables::{Kind, SECURABLES, Securable};
use crate::app::{App, AppState};
use crate::body::{JsonBody, Obj, Params, PathParam};
use crate::errors::ApiResult;
use crate::pages::Page;
use crate::util::uc_name;
use axum::extract::State as AxState;
use axum::routing::{MethodRouter, get};
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const UC: &str = "/api/2.1/unity-catalog";

/// Request paths whose bodies may carry write-only connection options.
pub const CONNECTIONS_PATH: &str = "/api/2.1/unity-catalog/connections";

type Reply = ApiResult<Json<Value>>;

pub fn routes() -> Router<Arc<App>> {
    let base = super::metastore::routes()
        .route(
            &format!("{UC}/permissions/{{securable_type}}/{{full_name}}"),
            get(get_grants).patch(update_grants),
        )
        // A share's grants have a path of their own (the Shares API's, which the Terraform
        // provider calls for `share`: catalog/permissions/permissions.go); they are the
        // grants of the securable type `share`.
        .route(
            &format!("{UC}/shares/{{name}}/permissions"),
            get(
                |app: AppState, PathParam(name): PathParam<String>, q: Params| {
                    get_grants(app, axum::extract::Path(("share".to_string(), name)), q)
                },
            )
            .patch(
                |app: AppState, PathParam(name): PathParam<String>, b: JsonBody| {
                    update_grants(app, axum::extract::Path(("share".to_string(), name)), b)
                },
            ),
        );
    SECURABLES.iter().fold(base, |r, sec| {
        let list = get(move |app: AppState, q: Params| list(sec, app, q));
        let collection: MethodRouter<Arc<App>> = match sec.kind {
            Kind::Catalog => list.post(create_catalog),
            Kind::Schema => list.post(create_schema),
            Kind::Volume => list.post(create_volume),
            Kind::Connection => list.post(create_connection),
            Kind::StorageCredential => list.post(create_storage_credential),
            Kind::ExternalLocation => list.post(create_external_location),
            Kind::Credential => list.post(create_credential),
            Kind::RegisteredModel => list.post(create_model),
            Kind::Function => list.post(create_function),
            Kind::Table => list,
        };
        let mut item = get(move |app: AppState, p: PathParam<String>| get_one(sec, app, p));
        item = if sec.not_empty.is_some() {
            item.delete(move |app: AppState, p: PathParam<String>, q: Params| {
                delete(sec, app, p, Some(q))
            })
        } else {
            item.delete(move |app: AppState, p: PathParam<String>| delete(sec, app, p, None))
        };
        if sec.update.is_some() {
            item = item.patch(move |app: AppState, p: PathParam<String>, b: JsonBody| {
                update(sec, app, p, b)
            });
        }
        r.route(&format!("{UC}/{}", sec.path), collection)
            .route(&format!("{UC}/{}/{{name}}", sec.path), item)
    })
}

/// `GET permissions/{securable_type}/{full_name}[?principal=P]`: who holds which privileges
/// on it (only `P`, when given).
async fn get_grants(
    AxState(app): AppState,
    axum::extract::Path((securable_type, full_name)): axum::extract::Path<(String, String)>,
    q: Params,
) -> Reply {
    app.view(|st, ctx| {
        super::grants::get(
            st,
            ctx.behaviours,
            &securable_type,
            &full_name,
            q.str("principal"),
        )
        .map(Json)
    })
}

/// `PATCH permissions/{securable_type}/{full_name}` `{changes: [{principal, add, remove}]}`.
async fn update_grants(
    AxState(app): AppState,
    axum::extract::Path((securable_type, full_name)): axum::extract::Path<(String, String)>,
    JsonBody(b): JsonBody,
) -> Reply {
    let changes = Obj::root(&b).arr("changes")?.to_vec();
    app.mutate(|st, ctx| {
        super::grants::update(st, ctx.behaviours, &securable_type, &full_name, &changes).map(Json)
    })
}

fn reply(m: Map<String, Value>) -> Json<Value> {
    Json(Value::Object(m))
}

async fn get_one(
    sec: &'static Securable,
    AxState(app): AppState,
    PathParam(raw): PathParam<String>,
) -> Reply {
    let key = sec.key(&raw)?;
    app.view(|st, _| sec.get(st, &key).map(reply))
}

async fn list(sec: &'static Securable, AxState(app): AppState, q: Params) -> Reply {
    let mut parent = Vec::new();
    for p in sec.parent_params() {
        parent.push(q.req_str(p)?.to_lowercase());
    }
    let parent = parent.join(".");
    let page = Page::new(
        q.str("page_token"),
        q.int("max_results")?,
        sec.default_page,
        10_000,
        "max_results",
    )?;
    let filter = sec.list_filter.and_then(|f| q.str(f)).map(str::to_string);
    app.view(|st, _| {
        let (items, next) = sec.list(st, &parent, filter.as_deref(), &page)?;
        let mut m = Map::new();
        m.insert(sec.list_key.into(), Value::Array(items));
        if let Some(t) = next {
            m.insert("next_page_token".into(), Value::String(t));
        }
        Ok(reply(m))
    })
}

async fn update(
    sec: &'static Securable,
    AxState(app): AppState,
    PathParam(raw): PathParam<String>,
    JsonBody(b): JsonBody,
) -> Reply {
    let key = sec.key(&raw)?;
    let changes = sec.changes(Obj::root(&b))?;
    app.mutate(|st, ctx| sec.update(st, ctx, &key, changes).map(reply))
}

async fn delete(
    sec: &'static Securable,
    AxState(app): AppState,
    PathParam(raw): PathParam<String>,
    q: Option<Params>,
) -> Reply {
    let key = sec.key(&raw)?;
    let force = match q {
        Some(q) => q.bool("force")?.unwrap_or(false),
        None => false,
    };
    app.mutate(|st, _| {
        sec.delete(st, &key, force)?;
        Ok(Json(json!({})))
    })
}

async fn create_catalog(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let c = NewCatalog {
        name: uc_name(o.req_str("name")?, "name")?,
        comment: o.str("comment")?,
        properties: o.str_map("properties")?,
        options: o.str_map("options")?,
        storage_root: o.str("storage_root")?,
        connection_name: o.str("connection_name")?.map(str::to_lowercase),
        provider_name: o.str("provider_name")?,
        share_name: o.str("share_name")?,
        custom_max_retention_hours: o.int("custom_max_retention_hours")?,
        managed_encryption_settings: o.obj("managed_encryption_settings")?,
    };
    c.check()?;
    app.mutate(|st, ctx| model::create_catalog(st, ctx, c).map(reply))
}

async fn create_schema(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let n = NewSchema {
        name: uc_name(o.req_str("name")?, "name")?,
        catalog: uc_name(o.req_str("catalog_name")?, "catalog_name")?,
        comment: o.str("comment")?,
        properties: o.str_map("properties")?,
        storage_root: o.str("storage_root")?,
        custom_max_retention_hours: o.int("custom_max_retention_hours")?,
        enable_predictive_optimization: o.enum_str(
            "enable_predictive_optimization",
            &["ENABLE", "DISABLE", "INHERIT"],
        )?,
    };
    app.mutate(|st, ctx| model::create_schema(st, ctx, n).map(reply))
}

async fn create_volume(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let v = NewVolume {
        catalog: uc_name(o.req_str("catalog_name")?, "catalog_name")?,
        schema: uc_name(o.req_str("schema_name")?, "schema_name")?,
        name: uc_name(o.req_str("name")?, "name")?,
        volume_type: o
            .enum_str("volume_type", &["MANAGED", "EXTERNAL"])?
            .ok_or_else(|| crate::body::missing("volume_type"))?,
        comment: o.str("comment")?,
        storage_location: o.str("storage_location")?,
    };
    v.check()?;
    app.mutate(|st, ctx| model::create_volume(st, ctx, v).map(reply))
}

async fn create_connection(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let name = uc_name(o.req_str("name")?, "name")?;
    let connection_type = o
        .enum_str("connection_type", CONNECTION_TYPES)?
        .ok_or_else(|| crate::body::missing("connection_type"))?;
    let options = o
        .str_map("options")?
        .ok_or_else(|| crate::body::missing("options"))?;
    model::check_connection_options(connection_type, options)?;
    let n = NewConnection {
        name,
        connection_type,
        options,
        comment: o.str("comment")?,
        properties: o.str_map("properties")?,
        read_only: o.bool("read_only")?,
        secrets: o.str_map("secrets")?,
        environment_settings: o.obj("environment_settings")?,
        parent: o.str("parent")?,
    };
    app.mutate(|st, ctx| model::create_connection(st, ctx, n).map(reply))
}

async fn create_storage_credential(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, ctx| super::storage::create_storage_credential(st, ctx, &b).map(reply))
}

async fn create_credential(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, ctx| super::storage::create_credential(st, ctx, &b).map(reply))
}

async fn create_external_location(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    app.mutate(|st, ctx| super::storage::create_external_location(st, ctx, &b).map(reply))
}

async fn create_model(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let o = Obj::root(&b);
    let m = NewModel {
        catalog: uc_name(o.req_str("catalog_name")?, "catalog_name")?,
        schema: uc_name(o.req_str("schema_name")?, "schema_name")?,
        name: uc_name(o.req_str("name")?, "name")?,
        comment: o.str("comment")?,
        storage_location: o.str("storage_location")?,
    };
    app.mutate(|st, ctx| model::create_model(st, ctx, m).map(reply))
}

async fn create_function(AxState(app): AppState, JsonBody(b): JsonBody) -> Reply {
    let info = Obj::root(&b).req_obj("function_info")?;
    let o = Obj::root(info);
    let catalog = uc_name(o.req_str("catalog_name")?, "function_info.catalog_name")?;
    let schema = uc_name(o.req_str("schema_name")?, "function_info.schema_name")?;
    let name = uc_name(o.req_str("name")?, "function_info.name")?;
    app.mutate(|st, ctx| model::create_function(st, ctx, &catalog, &schema, &name, info).map(reply))
}
