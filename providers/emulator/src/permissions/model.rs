//! What the Permissions API does to the workspace state, apart from HTTP.

use super::Acl;
use crate::errors::{ApiError, ApiResult};
use crate::scim::{PrincipalKind, workspace_principal};
use crate::store::State;
use serde_json::{Value, json};

/// Who owns the objects of a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// No owner: IS_OWNER is not one of its levels.
    None,
    /// Exactly one IS_OWNER in every write: a write without one, or with two, is refused
    /// ("The job must have exactly one owner.").
    Exactly,
    /// At most one IS_OWNER in a write; a write that names none keeps the owner it has.
    Kept,
}

/// Where the objects of a type live in the workspace state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holder {
    Job,
    Pipeline,
    Warehouse,
    ClusterPolicy,
    InstancePool,
    Cluster,
    /// A workspace object of this `object_type` (NOTEBOOK, DIRECTORY, FILE, REPO).
    Workspace(&'static str),
    /// A Databricks SQL object of this collection (`queries`, `alerts`, `dashboards`).
    Sql(&'static str),
    /// A registered model of the workspace model registry, by its `id`.
    RegisteredModel,
    /// The one object of this id every workspace has (`tokens`, `passwords` under
    /// `authorization`).
    Fixed(&'static str),
    /// Objects of a service the local workspace does not serve (serving endpoints, apps,
    /// Lakebase instances…): none exists, so each is answered as a missing object.
    Elsewhere,
}

/// An object type of the Permissions API.
#[derive(Debug)]
pub struct ObjectType {
    /// Its `request_object_type`, the path segment(s) before the id.
    pub request: &'static str,
    /// The `object_type` of its answers.
    pub object_type: &'static str,
    /// How messages name one.
    noun: &'static str,
    holder: Holder,
    owner: Owner,
    /// The levels it takes, with the service's description of each.
    levels: &'static [(&'static str, &'static str)],
}

impl ObjectType {
    /// Whether CAN_MANAGE is one of its levels: the `admins` group holds it on every such
    /// object; on the others (passwords) the group is configured like any other.
    fn manages(&self) -> bool {
        self.levels.iter().any(|(l, _)| *l == "CAN_MANAGE")
    }
}

const WORKSPACE_LEVELS: &[(&str, &str)] = &[
    ("CAN_READ", "Can view and comment"),
    ("CAN_RUN", "Can view, comment, attach and run"),
    ("CAN_EDIT", "Can view, comment, attach, run and edit"),
    (
        "CAN_MANAGE",
        "Can view, comment, attach, run, edit and change permissions",
    ),
];

/// The object types the local workspace keeps permissions for, with the levels each takes
/// (as the Terraform provider's permission definitions and the API reference list them).
pub const TYPES: &[ObjectType] = &[
    ObjectType {
        request: "jobs",
        object_type: "job",
        noun: "job",
        holder: Holder::Job,
        owner: Owner::Exactly,
        levels: &[
            ("CAN_VIEW", "Can view the job"),
            ("CAN_MANAGE_RUN", "Can view the job and manage its runs"),
            ("IS_OWNER", "Owns the job"),
            ("CAN_MANAGE", "Can manage the job"),
        ],
    },
    ObjectType {
        request: "pipelines",
        object_type: "pipelines",
        noun: "pipeline",
        holder: Holder::Pipeline,
        owner: Owner::Exactly,
        levels: &[
            ("CAN_VIEW", "Can view the pipeline"),
            ("CAN_RUN", "Can view and run the pipeline"),
            ("CAN_MANAGE", "Can manage the pipeline"),
            ("IS_OWNER", "Owns the pipeline"),
        ],
    },
    ObjectType {
        request: "notebooks",
        object_type: "notebook",
        noun: "notebook",
        holder: Holder::Workspace("NOTEBOOK"),
        owner: Owner::None,
        levels: WORKSPACE_LEVELS,
    },
    ObjectType {
        request: "directories",
        object_type: "directory",
        noun: "directory",
        holder: Holder::Workspace("DIRECTORY"),
        owner: Owner::None,
        levels: WORKSPACE_LEVELS,
    },
    ObjectType {
        request: "files",
        object_type: "file",
        noun: "file",
        holder: Holder::Workspace("FILE"),
        owner: Owner::None,
        levels: WORKSPACE_LEVELS,
    },
    // A Git folder takes the workspace levels (terraform-provider-databricks
    // permissions/permission_definitions.go, fields repo_id and repo_path) and is the node
    // of type REPO in the workspace tree whose object id is the repo's id.
    ObjectType {
        request: "repos",
        object_type: "repo",
        noun: "repo",
        holder: Holder::Workspace("REPO"),
        owner: Owner::None,
        levels: WORKSPACE_LEVELS,
    },
    ObjectType {
        request: "sql/warehouses",
        object_type: "warehouses",
        noun: "warehouse",
        holder: Holder::Warehouse,
        owner: Owner::Kept,
        levels: &[
            ("CAN_USE", "Can use the warehouse"),
            ("CAN_MANAGE", "Can manage the warehouse"),
            ("CAN_MONITOR", "Can monitor the warehouse"),
            ("CAN_VIEW", "Can view the warehouse"),
            ("IS_OWNER", "Owns the warehouse"),
        ],
    },
    // Cluster policies and instance pools have no owner; their levels are the Terraform
    // provider's (permissions/permission_definitions.go:349-366) and their answers' object
    // types databricks/cli's (libs/testserver/permissions.go:16-17).
    ObjectType {
        request: "cluster-policies",
        object_type: "cluster-policy",
        noun: "cluster policy",
        holder: Holder::ClusterPolicy,
        owner: Owner::None,
        levels: &[("CAN_USE", "Can use the cluster policy")],
    },
    ObjectType {
        request: "instance-pools",
        object_type: "instance-pool",
        noun: "instance pool",
        holder: Holder::InstancePool,
        owner: Owner::None,
        levels: &[
            ("CAN_ATTACH_TO", "Can attach clusters to the instance pool"),
            ("CAN_MANAGE", "Can manage the instance pool"),
        ],
    },
    // A cluster's levels are the Terraform provider's (permissions/permission_definitions.go,
    // field cluster_id) and its answers' object type databricks/cli's
    // (libs/testserver/permissions.go: clusters -> cluster).
    ObjectType {
        request: "clusters",
        object_type: "cluster",
        noun: "cluster",
        holder: Holder::Cluster,
        owner: Owner::None,
        levels: &[
            ("CAN_ATTACH_TO", "Can attach to the cluster"),
            ("CAN_RESTART", "Can restart the cluster"),
            ("CAN_MANAGE", "Can manage the cluster"),
        ],
    },
    // An experiment is a workspace object (MLFLOW_EXPERIMENT) and inherits from its folders
    // as one; its levels and answers' object type are the Terraform provider's
    // (permissions/permission_definitions.go, field experiment_id: mlflowExperiment).
    ObjectType {
        request: "experiments",
        object_type: "mlflowExperiment",
        noun: "experiment",
        holder: Holder::Workspace("MLFLOW_EXPERIMENT"),
        owner: Owner::None,
        levels: &[
            ("CAN_READ", "Can read the experiment"),
            ("CAN_EDIT", "Can edit the experiment"),
            ("CAN_MANAGE", "Can manage the experiment"),
        ],
    },
    // permission_definitions.go, field registered_model_id: object type registered-model.
    ObjectType {
        request: "registered-models",
        object_type: "registered-model",
        noun: "registered model",
        holder: Holder::RegisteredModel,
        owner: Owner::None,
        levels: &[
            ("CAN_READ", "Can read the model"),
            ("CAN_EDIT", "Can edit the model"),
            (
                "CAN_MANAGE_STAGING_VERSIONS",
                "Can manage the model's staging versions",
            ),
            (
                "CAN_MANAGE_PRODUCTION_VERSIONS",
                "Can manage the model's production versions",
            ),
            ("CAN_MANAGE", "Can manage the model"),
        ],
    },
];

/// The objects every workspace has under `authorization`: who may create personal access
/// tokens (CAN_USE, CAN_MANAGE) and who may sign in with a password (CAN_USE alone)
/// (terraform-provider-databricks permissions/permission_definitions.go, field
/// authorization; databricks/cli libs/testserver/permissions.go maps `authorization` to both).
const AUTHORIZATION_TYPES: &[ObjectType] = &[
    ObjectType {
        request: "authorization",
        object_type: "tokens",
        noun: "tokens",
        holder: Holder::Fixed("tokens"),
        owner: Owner::None,
        levels: &[
            ("CAN_USE", "Can create and use personal access tokens"),
            ("CAN_MANAGE", "Can manage token usage"),
        ],
    },
    ObjectType {
        request: "authorization",
        object_type: "passwords",
        noun: "passwords",
        holder: Holder::Fixed("passwords"),
        owner: Owner::None,
        levels: &[("CAN_USE", "Can sign in with a password")],
    },
];

const USE_OR_MANAGE: &[(&str, &str)] = &[
    ("CAN_USE", "Can use the object"),
    ("CAN_MANAGE", "Can manage the object"),
];
const QUERY_OR_MANAGE: &[(&str, &str)] = &[
    ("CAN_QUERY", "Can query the object"),
    ("CAN_MANAGE", "Can manage the object"),
];

/// The object types of services the local workspace does not serve, with their request
/// object types, answers' object types and levels as permission_definitions.go lists them
/// (and databricks/cli libs/testserver/permissions.go maps them): their objects are made
/// outside it, so none exists here and each answers 404.
const ELSEWHERE_TYPES: &[ObjectType] = &[
    elsewhere(
        "dbsql-dashboards",
        "dashboard",
        "legacy dashboard",
        WORKSPACE_LEVELS,
    ),
    elsewhere(
        "serving-endpoints",
        "serving-endpoint",
        "serving endpoint",
        &[
            ("CAN_VIEW", "Can view the serving endpoint"),
            ("CAN_QUERY", "Can query the serving endpoint"),
            ("CAN_MANAGE", "Can manage the serving endpoint"),
        ],
    ),
    elsewhere(
        "vector-search-endpoints",
        "vector-search-endpoints",
        "vector search endpoint",
        USE_OR_MANAGE,
    ),
    elsewhere("apps", "apps", "app", USE_OR_MANAGE),
    elsewhere(
        "database-instances",
        "database-instances",
        "database instance",
        USE_OR_MANAGE,
    ),
    elsewhere(
        "database-projects",
        "database-projects",
        "database project",
        USE_OR_MANAGE,
    ),
    elsewhere("alertsv2", "alertv2", "alert", WORKSPACE_LEVELS),
    elsewhere(
        "knowledge-assistants",
        "knowledge-assistants",
        "knowledge assistant",
        QUERY_OR_MANAGE,
    ),
    elsewhere(
        "supervisor-agents",
        "supervisor-agents",
        "supervisor agent",
        QUERY_OR_MANAGE,
    ),
];

const fn elsewhere(
    request: &'static str,
    object_type: &'static str,
    noun: &'static str,
    levels: &'static [(&'static str, &'static str)],
) -> ObjectType {
    ObjectType {
        request,
        object_type,
        noun,
        holder: Holder::Elsewhere,
        owner: Owner::None,
        levels,
    }
}

/// Queries, alerts and dashboards take the workspace levels: terraform-provider-databricks
/// permissions/permission_definitions.go, fields sql_query_id, sql_alert_id and dashboard_id
/// (CAN_VIEW, the levels of the legacy SQL permissions API, is "replaced by CAN_READ in the
/// GA API": the provider writes it as CAN_READ).
const SQL_TYPES: &[ObjectType] = &[
    ObjectType {
        request: "sql/queries",
        object_type: "query",
        noun: "query",
        holder: Holder::Sql("queries"),
        owner: Owner::None,
        levels: WORKSPACE_LEVELS,
    },
    ObjectType {
        request: "sql/alerts",
        object_type: "alert",
        noun: "alert",
        holder: Holder::Sql("alerts"),
        owner: Owner::None,
        levels: WORKSPACE_LEVELS,
    },
    ObjectType {
        request: "dashboards",
        object_type: "dashboard",
        noun: "dashboard",
        holder: Holder::Sql("dashboards"),
        owner: Owner::None,
        levels: WORKSPACE_LEVELS,
    },
];

/// The type a `request_object_type` names, for the object `id`: under `authorization`, each
/// fixed object is a type of its own. The SDK's warehouse calls use `warehouses`, the
/// Terraform provider `sql/warehouses`: both reach the same objects.
pub fn object_type(request: &str, id: &str) -> ApiResult<&'static ObjectType> {
    let request = if request == "warehouses" {
        "sql/warehouses"
    } else {
        request
    };
    let mut of_request = TYPES
        .iter()
        .chain(SQL_TYPES)
        .chain(AUTHORIZATION_TYPES)
        .chain(ELSEWHERE_TYPES)
        .filter(|t| t.request == request)
        .peekable();
    let first = *of_request.peek().ok_or_else(|| {
        ApiError::invalid(format!(
            "request_object_type is not recognized: {request} (the local workspace keeps permissions of jobs, pipelines, notebooks, directories, files, repos, sql/warehouses, cluster-policies, instance-pools, clusters, experiments, registered-models, sql/queries, sql/alerts, dashboards and authorization)"
        ))
    })?;
    // A fixed object of another id is missing, as the first type's object.
    Ok(of_request
        .find(|t| matches!(t.holder, Holder::Fixed(f) if f == id))
        .unwrap_or(first))
}

/// The object a request names, as far as its permissions go.
struct Target {
    /// Its key in the state's permissions: `jobs/123`.
    key: String,
    /// Its `object_id` in answers: `/jobs/123`.
    object_id: String,
    /// Who made it (the first owner of objects that have one).
    creator: Option<String>,
    /// Workspace objects: the ids of the folders above it, nearest first, the root left out.
    folders: Vec<i64>,
    /// Workspace objects in a home folder: its user and the folder's id.
    home: Option<(String, i64)>,
    /// The root folder or the token settings, whose `admins` entry every write must keep.
    root: bool,
}

fn missing(ty: &ObjectType, id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("{} {id} does not exist", ty.object_type),
    )
}

fn target(st: &State, ty: &ObjectType, id: &str) -> ApiResult<Target> {
    let key = format!("{}/{id}", ty.request);
    let object_id = format!("/{key}");
    let mut t = Target {
        key,
        object_id,
        creator: None,
        folders: Vec::new(),
        home: None,
        root: false,
    };
    match ty.holder {
        Holder::Job => {
            let job = id
                .parse::<i64>()
                .ok()
                .and_then(|n| st.jobs.jobs.get(&n))
                .ok_or_else(|| missing(ty, id))?;
            t.creator = Some(job.creator.clone());
        }
        Holder::Pipeline => {
            let p = st
                .pipelines
                .pipelines
                .get(id)
                .ok_or_else(|| missing(ty, id))?;
            t.creator = Some(p.creator.clone());
        }
        Holder::Warehouse => {
            // A warehouse being deleted has no permissions any more.
            let w = st
                .warehouses
                .warehouses
                .get(id)
                .filter(|w| !crate::warehouses::is_deleted(w))
                .ok_or_else(|| missing(ty, id))?;
            t.creator = Some(w.creator_name.clone());
        }
        Holder::ClusterPolicy => {
            st.policies
                .cluster_policies
                .get(id)
                .ok_or_else(|| missing(ty, id))?;
        }
        Holder::InstancePool => {
            st.pools
                .instance_pools
                .get(id)
                .ok_or_else(|| missing(ty, id))?;
        }
        Holder::Cluster => {
            st.clusters
                .clusters
                .get(id)
                .ok_or_else(|| missing(ty, id))?;
        }
        Holder::RegisteredModel => {
            crate::mlflow::model_with_id(st, id).ok_or_else(|| missing(ty, id))?;
        }
        // Like the root folder, the token settings keep the `admins` group's CAN_MANAGE
        // through every write (the Terraform provider adds it to each: update.AddAdmin,
        // "Prevent \"Cannot change permissions for group 'admins' to None.\"").
        Holder::Fixed(fixed) if fixed == id => t.root = ty.manages(),
        Holder::Fixed(_) | Holder::Elsewhere => return Err(missing(ty, id)),
        Holder::Sql(collection) => {
            // A trashed object is gone for its permissions too.
            st.sql
                .sql_objects
                .get(&format!("{collection}/{id}"))
                .filter(|o| o.get("lifecycle_state") != Some(&json!("TRASHED")))
                .ok_or_else(|| missing(ty, id))?;
        }
        Holder::Workspace(kind) => {
            let n = id.parse::<i64>().map_err(|_| missing(ty, id))?;
            if kind == "DIRECTORY" && n == 0 {
                t.root = true;
                return Ok(t);
            }
            let path = st
                .workspace
                .workspace
                .iter()
                .find(|(_, o)| o.object_id == n && o.object_type == kind)
                .map(|(p, _)| p.clone())
                .ok_or_else(|| missing(ty, id))?;
            let mut at = crate::workspace::parent(&path);
            while at != "/" {
                if let Some(o) = st.workspace.workspace.get(at) {
                    t.folders.push(o.object_id);
                }
                at = crate::workspace::parent(at);
            }
            t.home = path.strip_prefix("/Users/").and_then(|rest| {
                let user = rest.split('/').next().filter(|u| !u.is_empty())?;
                let folder = st.workspace.workspace.get(&format!("/Users/{user}"))?;
                Some((user.to_string(), folder.object_id))
            });
        }
    }
    Ok(t)
}

/// The object's direct entries: what was last written, or what a new object has (its
/// creator as owner, for types with owners).
fn direct(st: &State, ty: &ObjectType, t: &Target) -> Acl {
    if let Some(acl) = st.permissions.permissions.get(&t.key) {
        return acl.clone();
    }
    match (ty.owner, &t.creator) {
        (Owner::None, _) | (_, None) => Acl::new(),
        (_, Some(c)) => Acl::from([(format!("user_name:{c}"), "IS_OWNER".to_string())]),
    }
}

/// How the service names a principal that does not exist: `UserName(x)`.
fn principal_word(field: &str) -> &'static str {
    match field {
        "user_name" => "UserName",
        "group_name" => "GroupName",
        _ => "ServicePrincipalName",
    }
}

fn kind_of(field: &str) -> PrincipalKind {
    match field {
        "user_name" => PrincipalKind::User,
        "group_name" => PrincipalKind::Group,
        _ => PrincipalKind::ServicePrincipal,
    }
}

/// One entry of an answer: its principal (with its display name, for users and service
/// principals) and every permission it holds, direct first.
fn entry(st: &State, principal: &str, permissions: Vec<Value>) -> Value {
    let (field, name) = principal
        .split_once(':')
        .unwrap_or(("group_name", principal));
    let mut e = json!({ field: name, "all_permissions": permissions });
    if field != "group_name"
        && let Some(p) = workspace_principal(st, kind_of(field), name)
    {
        e["display_name"] = json!(p.display_name);
    }
    e
}

/// The answer of every call: the direct entries, then what is inherited (the `admins`
/// group's CAN_MANAGE from the type's root, the folders' entries, the home folder's user).
fn render(st: &State, ty: &ObjectType, t: &Target, acl: &Acl) -> Value {
    let mut held: std::collections::BTreeMap<String, Vec<Value>> = acl
        .iter()
        .map(|(p, level)| {
            (
                p.clone(),
                vec![json!({"permission_level": level, "inherited": false})],
            )
        })
        .collect();
    let mut inherit = |principal: String, level: &str, from: String| {
        held.entry(principal).or_default().push(json!({
            "permission_level": level, "inherited": true, "inherited_from_object": [from],
        }));
    };
    for folder in &t.folders {
        if let Some(up) = st
            .permissions
            .permissions
            .get(&format!("directories/{folder}"))
        {
            for (p, level) in up {
                inherit(p.clone(), level, format!("/directories/{folder}"));
            }
        }
    }
    if let Some((user, folder)) = &t.home {
        inherit(
            format!("user_name:{user}"),
            "CAN_MANAGE",
            format!("/directories/{folder}"),
        );
    }
    let root = match ty.holder {
        Holder::Workspace(_) => "/directories/".to_string(),
        _ => format!("/{}/", ty.request),
    };
    if ty.manages() {
        inherit("group_name:admins".into(), "CAN_MANAGE", root);
    }
    let list: Vec<Value> = held
        .into_iter()
        .map(|(p, permissions)| entry(st, &p, permissions))
        .collect();
    json!({
        "object_id": t.object_id,
        "object_type": ty.object_type,
        "access_control_list": list,
    })
}

pub fn get(st: &State, request: &str, id: &str) -> ApiResult<Value> {
    let ty = object_type(request, id)?;
    let t = target(st, ty, id)?;
    Ok(render(st, ty, &t, &direct(st, ty, &t)))
}

/// The levels an object's type takes.
pub fn levels(st: &State, request: &str, id: &str) -> ApiResult<Value> {
    let ty = object_type(request, id)?;
    target(st, ty, id)?;
    let levels: Vec<Value> = ty
        .levels
        .iter()
        .map(|(level, description)| json!({"permission_level": level, "description": description}))
        .collect();
    Ok(json!({ "permission_levels": levels }))
}

/// One entry of a request: the field that names its principal, the name, the level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    pub field: &'static str,
    pub name: String,
    pub level: String,
}

/// The entries as the workspace keeps them: with `principals_as_scim_holds`, a user or
/// service principal named in any case under the spelling SCIM holds for it (groups as
/// given), so one user written two ways is one entry.
pub fn as_held(st: &State, b: crate::behaviours::Behaviours, entries: &mut [Requested]) {
    for e in entries {
        if e.field != "group_name" {
            e.name = crate::scim::held_name(st, b, &[kind_of(e.field)], &e.name);
        }
    }
}

/// Writes entries: all of them (`replace`, a PUT: what is not named loses its direct
/// entry) or on top of what the object has (a PATCH). A principal named twice takes the
/// later level, as the service does.
pub fn write(
    st: &mut State,
    request: &str,
    id: &str,
    entries: &[Requested],
    replace: bool,
) -> ApiResult<Value> {
    let ty = object_type(request, id)?;
    let t = target(st, ty, id)?;
    for e in entries {
        if !ty.levels.iter().any(|(l, _)| *l == e.level) {
            let allowed: Vec<&str> = ty.levels.iter().map(|(l, _)| *l).collect();
            return Err(ApiError::invalid(format!(
                "Permission level {} is not supported for a {}; it takes {}",
                e.level,
                ty.noun,
                allowed.join(", ")
            )));
        }
        if e.field == "group_name" && e.name == "admins" && ty.manages() && e.level != "CAN_MANAGE"
        {
            return Err(ApiError::invalid(format!(
                "Cannot change permissions for group 'admins' to {}.",
                e.level
            )));
        }
        if e.field == "group_name" && e.level == "IS_OWNER" {
            return Err(ApiError::invalid(format!(
                "A group cannot own a {}: IS_OWNER goes to a user or a service principal.",
                ty.noun
            )));
        }
        if workspace_principal(st, kind_of(e.field), &e.name).is_none() {
            return Err(ApiError::not_found(
                "RESOURCE_DOES_NOT_EXIST",
                format!(
                    "Principal: {}({}) does not exist",
                    principal_word(e.field),
                    e.name
                ),
            ));
        }
    }
    let before = direct(st, ty, &t);
    let mut acl = if replace { Acl::new() } else { before.clone() };
    let names_owner = entries.iter().any(|e| e.level == "IS_OWNER");
    if !replace && names_owner {
        // A new owner takes the object over: the old one's IS_OWNER goes.
        acl.retain(|_, level| level != "IS_OWNER");
    }
    for e in entries {
        // Users and service principals are matched in any case; the first spelling stays.
        let key = format!("{}:{}", e.field, e.name);
        let existing = acl
            .keys()
            .find(|k| k.eq_ignore_ascii_case(&key) && e.field != "group_name")
            .cloned();
        acl.insert(existing.unwrap_or(key), e.level.clone());
    }
    let owners = acl.values().filter(|l| *l == "IS_OWNER").count();
    match ty.owner {
        Owner::Exactly if owners != 1 => {
            return Err(ApiError::invalid(format!(
                "The {} must have exactly one owner.",
                ty.noun
            )));
        }
        Owner::Kept if owners > 1 => {
            return Err(ApiError::invalid(format!(
                "The {} must have exactly one owner.",
                ty.noun
            )));
        }
        Owner::Kept if owners == 0 => {
            let Some((who, _)) = before.iter().find(|(_, l)| *l == "IS_OWNER") else {
                return Err(ApiError::invalid(format!(
                    "{} with no existing owner must provide a new owner.",
                    capitalized(ty.noun)
                )));
            };
            acl.insert(who.clone(), "IS_OWNER".into());
        }
        _ => {}
    }
    if t.root && replace && acl.get("group_name:admins").map(String::as_str) != Some("CAN_MANAGE") {
        return Err(ApiError::invalid(
            "Cannot change permissions for group 'admins' to None.",
        ));
    }
    if acl.is_empty() {
        st.permissions.permissions.remove(&t.key);
    } else {
        st.permissions.permissions.insert(t.key.clone(), acl);
    }
    Ok(render(st, ty, &t, &direct(st, ty, &t)))
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The object is gone: its permissions go with it. `request` is its type's
/// `request_object_type`, `id` its id.
pub fn forget(st: &mut State, request: &str, id: &str) {
    st.permissions
        .permissions
        .remove(&format!("{request}/{id}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(field: &'static str, name: &str, level: &str) -> Requested {
        Requested {
            field,
            name: name.into(),
            level: level.into(),
        }
    }

    fn levels_of(answer: &Value, principal: &str) -> Vec<(String, bool)> {
        answer["access_control_list"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                ["user_name", "group_name", "service_principal_name"]
                    .iter()
                    .any(|f| e[*f] == principal)
            })
            .flat_map(|e| e["all_permissions"].as_array().unwrap().clone())
            .map(|p| {
                (
                    p["permission_level"].as_str().unwrap().to_string(),
                    p["inherited"].as_bool().unwrap(),
                )
            })
            .collect()
    }

    fn job(st: &mut State) -> String {
        let id = st.next_id();
        st.jobs.jobs.insert(
            id,
            crate::jobs::Job {
                job_id: id,
                created_time: 0,
                creator: "u@x".into(),
                settings: serde_json::Map::new(),
                task_values: Default::default(),
            },
        );
        id.to_string()
    }

    fn group(st: &mut State, name: &str) {
        let id = st.next_id().to_string();
        st.scim.principals.insert(
            id,
            crate::scim::Principal {
                kind: PrincipalKind::Group,
                name: name.into(),
                display_name: name.into(),
                workspace_local: false,
            },
        );
    }

    fn ws(st: &mut State, path: &str, object_type: &str) -> i64 {
        let id = st.next_id();
        st.workspace.workspace.insert(
            path.to_string(),
            crate::workspace::WsObject {
                object_type: object_type.into(),
                object_id: id,
                language: None,
                content: Vec::new(),
                created_at: 0,
                modified_at: 0,
            },
        );
        id
    }

    #[test]
    fn a_job_has_one_owner_and_admins_manage_it() {
        let mut st = State::new("u@x", 0);
        group(&mut st, "eng");
        let id = job(&mut st);
        let got = get(&st, "jobs", &id).unwrap();
        assert_eq!(got["object_id"], format!("/jobs/{id}"));
        assert_eq!(got["object_type"], "job");
        assert_eq!(levels_of(&got, "u@x"), [("IS_OWNER".to_string(), false)]);
        assert_eq!(
            levels_of(&got, "admins"),
            [("CAN_MANAGE".to_string(), true)]
        );

        // What the service refuses, and how it words it (`put`: a PUT replaces the list,
        // else a PATCH adds to it).
        type Entry<'a> = (&'a str, &'a str, &'a str);
        type Refusal<'a> = (&'a str, &'a [Entry<'a>], bool, u16, &'a str, &'a str);
        let refused: &[Refusal] = &[
            (
                "no owner",
                &[("group_name", "eng", "CAN_VIEW")],
                true,
                400,
                "INVALID_PARAMETER_VALUE",
                "The job must have exactly one owner.",
            ),
            (
                "the later level of a principal wins",
                &[
                    ("user_name", "u@x", "IS_OWNER"),
                    ("user_name", "u@x", "CAN_MANAGE"),
                ],
                true,
                400,
                "INVALID_PARAMETER_VALUE",
                "The job must have exactly one owner.",
            ),
            (
                "a level of another object type",
                &[("group_name", "eng", "CAN_RUN")],
                true,
                400,
                "INVALID_PARAMETER_VALUE",
                "Permission level CAN_RUN is not supported for a job",
            ),
            (
                "a group as owner",
                &[("group_name", "eng", "IS_OWNER")],
                true,
                400,
                "INVALID_PARAMETER_VALUE",
                "A group cannot own a job",
            ),
            (
                "an unknown principal",
                &[("group_name", "account users", "CAN_VIEW")],
                false,
                404,
                "RESOURCE_DOES_NOT_EXIST",
                "Principal: GroupName(account users) does not exist",
            ),
        ];
        for (what, entries, put, status, code, message) in refused {
            let entries: Vec<Requested> = entries.iter().map(|(k, p, l)| req(k, p, l)).collect();
            let e = write(&mut st, "jobs", &id, &entries, *put).unwrap_err();
            assert_eq!(
                (e.status.as_u16(), e.code.as_str()),
                (*status, *code),
                "{what}: {}",
                e.message
            );
            assert!(e.message.starts_with(message), "{what}: {}", e.message);
        }
        let e = write(&mut st, "jobs", "999", &[], true).unwrap_err();
        assert_eq!(e.message, "job 999 does not exist");

        let got = write(
            &mut st,
            "jobs",
            &id,
            &[
                req("group_name", "eng", "CAN_MANAGE_RUN"),
                req("user_name", "U@x", "IS_OWNER"),
            ],
            true,
        )
        .unwrap();
        assert_eq!(
            levels_of(&got, "eng"),
            [("CAN_MANAGE_RUN".to_string(), false)]
        );
        // A PATCH adds on top.
        let got = write(
            &mut st,
            "jobs",
            &id,
            &[req("group_name", "users", "CAN_VIEW")],
            false,
        )
        .unwrap();
        assert_eq!(levels_of(&got, "users"), [("CAN_VIEW".to_string(), false)]);
        assert_eq!(
            levels_of(&got, "eng"),
            [("CAN_MANAGE_RUN".to_string(), false)]
        );
        assert_eq!(get(&st, "jobs", &id).unwrap(), got);

        forget(&mut st, "jobs", &id);
        assert!(st.permissions.permissions.is_empty());
    }

    #[test]
    fn a_user_in_another_case_is_written_as_scim_holds_it_with_the_behaviour() {
        use crate::behaviours::{Behaviour, Behaviours};
        let st = State::new("Me@X.com", 0);
        let mut entries = vec![
            req("user_name", "me@x.com", "CAN_MANAGE"),
            req("group_name", "USERS", "CAN_VIEW"),
        ];
        as_held(
            &st,
            Behaviours::default().without(Behaviour::PrincipalsAsScimHolds),
            &mut entries,
        );
        assert_eq!(entries[0].name, "me@x.com", "off: as sent");
        as_held(&st, Behaviours::default(), &mut entries);
        assert_eq!(entries[0].name, "Me@X.com");
        assert_eq!(entries[1].name, "USERS", "groups as given");
    }

    #[test]
    fn a_warehouse_keeps_its_owner_when_a_write_names_none() {
        let mut st = State::new("u@x", 0);
        let id = "w1".to_string();
        let raw = json!({"id": "w1", "spec": {}, "creator_name": "u@x", "data_source_id": "d1", "state": "STOPPED", "until": 0, "idle_since": 0});
        st.warehouses
            .warehouses
            .insert(id.clone(), serde_json::from_value(raw).unwrap());
        let got = write(
            &mut st,
            "warehouses",
            &id,
            &[req("group_name", "users", "CAN_USE")],
            true,
        )
        .unwrap();
        assert_eq!(got["object_id"], format!("/sql/warehouses/{id}"));
        assert_eq!(got["object_type"], "warehouses");
        assert_eq!(levels_of(&got, "u@x"), [("IS_OWNER".to_string(), false)]);
        assert_eq!(levels_of(&got, "users"), [("CAN_USE".to_string(), false)]);
        let e = write(
            &mut st,
            "sql/warehouses",
            &id,
            &[
                req("user_name", "u@x", "IS_OWNER"),
                req("service_principal_name", "nope", "IS_OWNER"),
            ],
            true,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Principal: ServicePrincipalName(nope) does not exist"
        );
    }

    #[test]
    fn workspace_objects_inherit_from_their_folders_and_home() {
        let mut st = State::new("u@x", 0);
        let team = ws(&mut st, "/Shared/team", "DIRECTORY");
        let nb = ws(&mut st, "/Shared/team/nb", "NOTEBOOK");
        let home = st.workspace.workspace["/Users/u@x"].object_id;
        write(
            &mut st,
            "directories",
            &team.to_string(),
            &[req("group_name", "users", "CAN_RUN")],
            true,
        )
        .unwrap();
        let got = write(
            &mut st,
            "notebooks",
            &nb.to_string(),
            &[req("group_name", "users", "CAN_READ")],
            true,
        )
        .unwrap();
        let users: Vec<&Value> = got["access_control_list"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["group_name"] == "users")
            .collect();
        assert_eq!(
            users[0]["all_permissions"],
            json!([
                {"permission_level": "CAN_READ", "inherited": false},
                {"permission_level": "CAN_RUN", "inherited": true, "inherited_from_object": [format!("/directories/{team}")]},
            ])
        );
        assert_eq!(
            levels_of(&got, "admins"),
            [("CAN_MANAGE".to_string(), true)]
        );
        // A notebook elsewhere than a home folder has no home user.
        assert!(levels_of(&got, "u@x").is_empty());
        let got = get(&st, "directories", &home.to_string()).unwrap();
        assert_eq!(levels_of(&got, "u@x"), [("CAN_MANAGE".to_string(), true)]);
        // The notebook's entries are its own: the folder's are not written with it.
        let got = write(&mut st, "notebooks", &nb.to_string(), &[], true).unwrap();
        assert_eq!(levels_of(&got, "users"), [("CAN_RUN".to_string(), true)]);
        let e = get(&st, "files", &nb.to_string()).unwrap_err();
        assert_eq!(e.message, format!("file {nb} does not exist"));
        let e = write(&mut st, "directories", "0", &[], true).unwrap_err();
        assert_eq!(
            e.message,
            "Cannot change permissions for group 'admins' to None."
        );
        let e = get(&st, "genie", "1").unwrap_err();
        assert!(
            e.message
                .starts_with("request_object_type is not recognized: genie")
        );
        let e = get(&st, "repos", &nb.to_string()).unwrap_err();
        assert_eq!(e.message, format!("repo {nb} does not exist"));
        let e = get(&st, "clusters", "0101-000000-nothere").unwrap_err();
        assert_eq!(e.message, "cluster 0101-000000-nothere does not exist");
        assert_eq!(
            levels(&st, "notebooks", &nb.to_string()).unwrap()["permission_levels"][0],
            json!({"permission_level": "CAN_READ", "description": "Can view and comment"})
        );
    }
}
