//! The SCIM API over HTTP: users, groups and service principals, created, listed (with an
//! `eq` filter), read and deleted.

use super::model;
use super::{Principal, PrincipalKind};
use crate::app::{App, AppState};
use crate::body::{JsonBody, Obj, Params, PathParam};
use crate::errors::ApiResult;
use axum::extract::State as AxState;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

const SCIM: &str = "/api/2.0/preview/scim/v2";

const KINDS: &[(&str, PrincipalKind)] = &[
    ("Users", PrincipalKind::User),
    ("Groups", PrincipalKind::Group),
    ("ServicePrincipals", PrincipalKind::ServicePrincipal),
];

pub fn routes() -> Router<Arc<App>> {
    KINDS.iter().fold(Router::new(), |r, (path, kind)| {
        let kind = *kind;
        r.route(
            &format!("{SCIM}/{path}"),
            get(move |app: AppState, q: Params| list(kind, app, q))
                .post(move |app: AppState, b: JsonBody| create(kind, app, b)),
        )
        .route(
            &format!("{SCIM}/{path}/{{id}}"),
            get(move |app: AppState, p: PathParam<String>| get_one(kind, app, p))
                .delete(move |app: AppState, p: PathParam<String>| delete(kind, app, p)),
        )
    })
}

fn render(id: &str, p: &Principal) -> Value {
    match p.kind {
        PrincipalKind::User => json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "id": id, "userName": p.name, "displayName": p.display_name, "active": true,
            "emails": [{"value": p.name, "type": "work", "primary": true}],
        }),
        PrincipalKind::Group => json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
            "id": id, "displayName": p.display_name, "members": [],
        }),
        PrincipalKind::ServicePrincipal => json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServicePrincipal"],
            "id": id, "applicationId": p.name, "displayName": p.display_name, "active": true,
        }),
    }
}

async fn list(kind: PrincipalKind, AxState(app): AppState, q: Params) -> ApiResult<Json<Value>> {
    let filter = q.str("filter").map(str::to_string);
    app.view(|st, _| {
        let found = model::list(st, kind, filter.as_deref())?;
        let resources: Vec<Value> = found.iter().map(|(id, p)| render(id, p)).collect();
        Ok(Json(json!({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
            "totalResults": resources.len(),
            "startIndex": 1,
            "itemsPerPage": resources.len(),
            "Resources": resources,
        })))
    })
}

async fn create(
    kind: PrincipalKind,
    AxState(app): AppState,
    JsonBody(b): JsonBody,
) -> ApiResult<Json<Value>> {
    let o = Obj::root(&b);
    let (name, display) = match kind {
        PrincipalKind::User => {
            let n = o.str("userName")?.unwrap_or_default().to_string();
            let d = o
                .str("displayName")?
                .map_or_else(|| n.clone(), str::to_string);
            (n, d)
        }
        PrincipalKind::Group => {
            let n = o.str("displayName")?.unwrap_or_default().to_string();
            (n.clone(), n)
        }
        PrincipalKind::ServicePrincipal => {
            let d = o.str("displayName")?.unwrap_or_default().to_string();
            let n = o
                .str("applicationId")?
                .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_string);
            (n, d)
        }
    };
    app.mutate(|st, _| {
        let id = model::create(st, kind, &name, &display)?;
        let p = st.principals.get(&id).ok_or_else(|| model::missing(&id))?;
        Ok(Json(render(&id, p)))
    })
}

async fn get_one(
    kind: PrincipalKind,
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
) -> ApiResult<Json<Value>> {
    app.view(|st, _| match st.principals.get(&id) {
        Some(p) if p.kind == kind => Ok(Json(render(&id, p))),
        _ => Err(model::missing(&id)),
    })
}

async fn delete(
    kind: PrincipalKind,
    AxState(app): AppState,
    PathParam(id): PathParam<String>,
) -> ApiResult<Json<Value>> {
    app.mutate(|st, _| model::delete(st, kind, &id).map(|()| Json(json!({}))))
}
