//! The SCIM API over HTTP: users, groups and service principals, created, listed (with an
//! `eq` filter), read, replaced (PUT), patched (PATCH `Operations`) and deleted; the
//! workspace's at `/api/2.0/preview/scim/v2`, its account's at
//! `/api/2.0/accounts/{account_id}/scim/v2` (the path the SDKs address the account's Groups,
//! Users and ServicePrincipals by), the same handlers over the account's tables.
//!
//! Errors have SCIM's shape, `{schemas: [...Error], detail, status}` (with `scimType`
//! where the service gives one), as the provider's fixtures show the service answering
//! (terraform-provider-databricks scim/resource_entitlement_test.go:783-790); the message
//! is the `detail`, which the provider matches (`Group with name X already exists.`,
//! scim/resource_group.go:113).

use super::model;
use super::{ACCOUNT_ID, Attributes, Level, Principal, PrincipalKind};
use crate::app::{App, AppState};
use crate::body::{JsonBody, Obj, Params, PathParam};
use crate::errors::ApiError;
use crate::store::State;
use axum::extract::State as AxState;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SCIM: &str = "/api/2.0/preview/scim/v2";
const ACCOUNT_SCIM: &str = "/api/2.0/accounts/{account_id}/scim/v2";
const ERROR: &str = "urn:ietf:params:scim:api:messages:2.0:Error";

const KINDS: &[(&str, PrincipalKind)] = &[
    ("Users", PrincipalKind::User),
    ("Groups", PrincipalKind::Group),
    ("ServicePrincipals", PrincipalKind::ServicePrincipal),
];

/// An error in SCIM's shape.
pub struct ScimError(ApiError);

impl From<ApiError> for ScimError {
    fn from(e: ApiError) -> Self {
        ScimError(e)
    }
}

impl IntoResponse for ScimError {
    fn into_response(self) -> Response {
        let e = self.0;
        let mut body = json!({
            "schemas": [ERROR],
            "detail": e.message,
            "status": e.status.as_u16().to_string(),
        });
        let scim_type = match e.code.as_str() {
            "RESOURCE_ALREADY_EXISTS" | "uniqueness" => Some("uniqueness"),
            t @ ("invalidPath" | "invalidValue" | "invalidSyntax" | "invalidFilter"
            | "mutability") => Some(t),
            _ => None,
        };
        if let Some(t) = scim_type {
            body["scimType"] = json!(t);
        }
        (e.status, Json(body)).into_response()
    }
}

type ScimResult<T> = Result<T, ScimError>;

pub fn routes() -> Router<Arc<App>> {
    KINDS.iter().fold(Router::new(), |r, (path, kind)| {
        let kind = *kind;
        let ws = Level::Workspace;
        let acc = Level::Account;
        r.route(
            &format!("{SCIM}/{path}"),
            get(move |app: AppState, q: Params| list(kind, ws, app, q))
                .post(move |app: AppState, b: JsonBody| create(kind, ws, app, b)),
        )
        .route(
            &format!("{SCIM}/{path}/{{id}}"),
            get(move |app: AppState, PathParam(id): PathParam<String>| get_one(kind, ws, app, id))
                .put(
                    move |app: AppState, PathParam(id): PathParam<String>, b: JsonBody| {
                        replace(kind, ws, app, id, b)
                    },
                )
                .patch(
                    move |app: AppState, PathParam(id): PathParam<String>, b: JsonBody| {
                        patch(kind, ws, app, id, b)
                    },
                )
                .delete(move |app: AppState, PathParam(id): PathParam<String>| {
                    delete(kind, ws, app, id)
                }),
        )
        .route(
            &format!("{ACCOUNT_SCIM}/{path}"),
            get(
                move |app: AppState, PathParam(a): PathParam<String>, q: Params| async move {
                    in_account(&a)?;
                    list(kind, acc, app, q).await
                },
            )
            .post(
                move |app: AppState, PathParam(a): PathParam<String>, b: JsonBody| async move {
                    in_account(&a)?;
                    create(kind, acc, app, b).await
                },
            ),
        )
        .route(
            &format!("{ACCOUNT_SCIM}/{path}/{{id}}"),
            get(
                move |app: AppState, PathParam((a, id)): PathParam<(String, String)>| async move {
                    in_account(&a)?;
                    get_one(kind, acc, app, id).await
                },
            )
            .put(
                move |app: AppState,
                      PathParam((a, id)): PathParam<(String, String)>,
                      b: JsonBody| async move {
                    in_account(&a)?;
                    replace(kind, acc, app, id, b).await
                },
            )
            .patch(
                move |app: AppState,
                      PathParam((a, id)): PathParam<(String, String)>,
                      b: JsonBody| async move {
                    in_account(&a)?;
                    patch(kind, acc, app, id, b).await
                },
            )
            .delete(
                move |app: AppState, PathParam((a, id)): PathParam<(String, String)>| async move {
                    in_account(&a)?;
                    delete(kind, acc, app, id).await
                },
            ),
        )
    })
}

/// The local workspace answers for its own account only. Another account's id is one this
/// workspace's credentials reach nothing in: answered 404, as a host answers a path it does
/// not serve (no public source shows the accounts host's own words for it).
fn in_account(account_id: &str) -> ScimResult<()> {
    if account_id == ACCOUNT_ID {
        return Ok(());
    }
    Err(ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Account {account_id} does not exist."),
    )
    .into())
}

fn path_of(kind: PrincipalKind) -> &'static str {
    KINDS
        .iter()
        .find(|(_, k)| *k == kind)
        .map_or("Users", |(p, _)| p)
}

/// `[{value, display, $ref}]` of principals by id.
fn refs(st: &State, level: Level, ids: &[String]) -> Vec<Value> {
    ids.iter()
        .filter_map(|id| {
            st.scim.principals(level).get(id).map(|p| {
                json!({
                    "value": id,
                    "display": p.display_name,
                    "$ref": format!("{}/{id}", path_of(p.kind)),
                })
            })
        })
        .collect()
}

fn render(st: &State, level: Level, id: &str, p: &Principal) -> Value {
    let a = model::attributes(st, level, id);
    let mut v = match p.kind {
        PrincipalKind::User => json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "id": id, "userName": p.name, "displayName": p.display_name, "active": a.active,
            "emails": [{"value": p.name, "type": "work", "primary": true}],
        }),
        PrincipalKind::Group => json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
            "id": id, "displayName": p.display_name, "members": refs(st, level, &a.members),
            "meta": {"resourceType": if p.workspace_local { "WorkspaceGroup" } else { "Group" }},
        }),
        PrincipalKind::ServicePrincipal => json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServicePrincipal"],
            "id": id, "applicationId": p.name, "displayName": p.display_name, "active": a.active,
        }),
    };
    let groups = refs(st, level, &model::groups_of(st, level, id));
    if !groups.is_empty() {
        v["groups"] = json!(groups);
    }
    if !a.entitlements.is_empty() {
        v["entitlements"] = json!(
            a.entitlements
                .iter()
                .map(|e| json!({ "value": e }))
                .collect::<Vec<_>>()
        );
    }
    if let Some(x) = &a.external_id {
        v["externalId"] = json!(x);
    }
    v
}

async fn list(
    kind: PrincipalKind,
    level: Level,
    AxState(app): AppState,
    q: Params,
) -> ScimResult<Json<Value>> {
    let filter = q.str("filter").map(str::to_string);
    Ok(app.view(|st, _| {
        let found = model::list(st, level, kind, filter.as_deref())
            .map_err(|e| e.with_code("invalidFilter"))?;
        let resources: Vec<Value> = found
            .iter()
            .map(|(id, p)| render(st, level, id, p))
            .collect();
        Ok(Json(json!({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
            "totalResults": resources.len(),
            "startIndex": 1,
            "itemsPerPage": resources.len(),
            "Resources": resources,
        })))
    })?)
}

/// What a create or a PUT body says beyond the principal's name.
fn attributes_of(o: &Obj<'_>) -> Result<Attributes, ApiError> {
    let list = |k: &str| o.get(k).map(model::values_of).unwrap_or_default();
    Ok(Attributes {
        active: o.bool("active")?.unwrap_or(true),
        external_id: o
            .str("externalId")?
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        entitlements: list("entitlements"),
        members: list("members"),
    })
}

async fn create(
    kind: PrincipalKind,
    level: Level,
    AxState(app): AppState,
    JsonBody(b): JsonBody,
) -> ScimResult<Json<Value>> {
    let o = Obj::root(&b);
    let (name, display) = match kind {
        PrincipalKind::User => {
            let n = o.str("userName")?.unwrap_or_default().to_string();
            let d = o
                .str("displayName")?
                .filter(|d| !d.is_empty())
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
                .filter(|n| !n.is_empty())
                .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_string);
            (n, d)
        }
    };
    let attrs = attributes_of(&o)?;
    Ok(app.mutate(|st, _| {
        let id = model::create_with(st, level, kind, &name, &display, attrs)?;
        let p = st
            .scim
            .principals(level)
            .get(&id)
            .ok_or_else(|| model::missing(&id))?;
        Ok(Json(render(st, level, &id, p)))
    })?)
}

async fn get_one(
    kind: PrincipalKind,
    level: Level,
    AxState(app): AppState,
    id: String,
) -> ScimResult<Json<Value>> {
    Ok(app.view(|st, _| match st.scim.principals(level).get(&id) {
        Some(p) if p.kind == kind => Ok(Json(render(st, level, &id, p))),
        _ => Err(model::missing(&id)),
    })?)
}

async fn replace(
    kind: PrincipalKind,
    level: Level,
    AxState(app): AppState,
    id: String,
    JsonBody(b): JsonBody,
) -> ScimResult<Json<Value>> {
    let o = Obj::root(&b);
    let display = o.str("displayName")?.map(str::to_string);
    let attrs = attributes_of(&o)?;
    Ok(app.mutate(|st, _| {
        model::replace(st, level, kind, &id, display.as_deref(), attrs)?;
        let p = st
            .scim
            .principals(level)
            .get(&id)
            .ok_or_else(|| model::missing(&id))?;
        Ok(Json(render(st, level, &id, p)))
    })?)
}

async fn patch(
    kind: PrincipalKind,
    level: Level,
    AxState(app): AppState,
    id: String,
    JsonBody(b): JsonBody,
) -> ScimResult<Json<Value>> {
    let ops = match b.get("Operations") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let m = item.as_object().cloned().unwrap_or_else(Map::new);
                Ok(model::Op {
                    op: m
                        .get("op")
                        .and_then(Value::as_str)
                        .ok_or_else(|| {
                            ApiError::invalid("Operations: every operation needs an op")
                                .with_code("invalidSyntax")
                        })?
                        .to_string(),
                    path: m.get("path").and_then(Value::as_str).map(str::to_string),
                    value: m.get("value").cloned(),
                })
            })
            .collect::<Result<Vec<_>, ApiError>>()?,
        _ => {
            return Err(
                ApiError::invalid("Request is missing the Operations attribute.")
                    .with_code("invalidSyntax")
                    .into(),
            );
        }
    };
    Ok(app.mutate(|st, _| {
        model::patch(st, level, kind, &id, &ops)?;
        Ok(Json(json!({})))
    })?)
}

async fn delete(
    kind: PrincipalKind,
    level: Level,
    AxState(app): AppState,
    id: String,
) -> ScimResult<Json<Value>> {
    Ok(app.mutate(|st, _| model::delete(st, level, kind, &id).map(|()| Json(json!({}))))?)
}
