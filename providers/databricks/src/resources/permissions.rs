//! `databricks_permissions`: every permission on one workspace object (a job, pipeline,
//! notebook, directory, workspace file, Git folder, SQL warehouse, cluster policy, instance
//! pool, cluster, query, alert, dashboard, MLflow experiment or registered model; the
//! workspace's tokens or passwords; or an object brickform does not create, such as an app
//! or a serving endpoint, named by the Terraform provider's ids), through the
//! Permissions API
//! (`/api/2.0/permissions/{object_type}/{object_id}`). Authoritative, as in the Terraform
//! provider: a write replaces the object's direct entries (PUT), so an entry added in the
//! UI is planned back, and a destroy resets the object to what it has alone.
//!
//! What the object has without any configuration is not the resource's, and is neither
//! drift nor written: inherited entries (the `admins` group manages everything; a notebook
//! takes its folders' entries), and the owner (IS_OWNER) of jobs, pipelines and warehouses
//! while the configuration names none, which a write keeps. Levels are data per object
//! type, checked by `validate`.

use super::{OneTarget, err, exactly_one, first_set, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::diagnostics::did_you_mean_value;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, ErrorKind, Finding, Normalize, OpContext, ProviderError,
    ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, PathStep, Value, quote};
use serde_json::{Value as Json, json};
use std::sync::Arc;

/// An attribute that names the object the permissions are on.
#[derive(Debug)]
pub struct Target {
    /// `notebook_path`.
    pub attr: &'static str,
    /// It names the object by its workspace path, which is resolved to its id.
    pub by_path: bool,
    /// The `request_object_type` of the API's path: `notebooks`.
    pub request: &'static str,
    /// The `object_type` the service answers with, the computed `object_type`.
    pub object_type: &'static str,
    /// The `object_type` of the workspace object a path names (`NOTEBOOK`).
    pub workspace_type: &'static str,
    /// How messages name the object.
    pub label: &'static str,
    /// The levels it takes.
    pub levels: &'static [&'static str],
    /// Those that let a principal manage it (a caller may not give itself less).
    pub managing: &'static [&'static str],
    /// It has exactly one owner (IS_OWNER), a user or a service principal.
    pub owned: bool,
    /// The objects of its type, when the type has a fixed few that always exist (the
    /// workspace's token and password settings), each with its own levels; empty when the
    /// attribute names any object of the type by its id.
    pub fixed: &'static [Fixed],
}

/// An object that always exists, named by its fixed id.
#[derive(Debug)]
pub struct Fixed {
    /// Its id, the attribute's value (`tokens`).
    pub id: &'static str,
    /// The levels it takes.
    pub levels: &'static [&'static str],
    /// The `admins` group's entry is configured like any other (passwords), instead of
    /// being the service's to keep.
    pub admins_configurable: bool,
    /// Every write must keep the `admins` group's CAN_MANAGE (tokens): the service answers
    /// "Cannot change permissions for group 'admins' to None." otherwise.
    pub admins_kept: bool,
}

impl Target {
    /// The fixed object `value` names, when the type has fixed objects.
    pub fn fixed_object(&self, value: &str) -> Option<&'static Fixed> {
        self.fixed.iter().find(|f| f.id == value)
    }

    /// The levels the object `value` names takes.
    pub fn levels_of(&self, value: Option<&str>) -> &'static [&'static str] {
        value
            .and_then(|v| self.fixed_object(v))
            .map_or(self.levels, |f| f.levels)
    }

    /// The `object_type` the service answers for the object `value` names: a fixed
    /// object's is its id (`passwords`).
    pub fn object_type_of(&self, value: &str) -> &'static str {
        self.fixed_object(value).map_or(self.object_type, |f| f.id)
    }

    /// Whether the `admins` group's entries on the object `value` names are configured
    /// like any other principal's.
    fn admins_configurable(&self, value: &str) -> bool {
        self.fixed_object(value)
            .is_some_and(|f| f.admins_configurable)
    }
}

const JOB: &[&str] = &["CAN_VIEW", "CAN_MANAGE_RUN", "IS_OWNER", "CAN_MANAGE"];
const PIPELINE: &[&str] = &["CAN_VIEW", "CAN_RUN", "CAN_MANAGE", "IS_OWNER"];
const WORKSPACE: &[&str] = &["CAN_READ", "CAN_RUN", "CAN_EDIT", "CAN_MANAGE"];
const WAREHOUSE: &[&str] = &[
    "CAN_USE",
    "CAN_MANAGE",
    "CAN_MONITOR",
    "CAN_VIEW",
    "IS_OWNER",
];
/// terraform-provider-databricks permissions/permission_definitions.go:349-366: CAN_USE is
/// a policy's one level (a managing one); a pool's are CAN_ATTACH_TO and CAN_MANAGE.
const CLUSTER_POLICY: &[&str] = &["CAN_USE"];
const INSTANCE_POOL: &[&str] = &["CAN_ATTACH_TO", "CAN_MANAGE"];
/// permissions/permission_definitions.go, field cluster_id: CAN_ATTACH_TO, CAN_RESTART and
/// CAN_MANAGE (the managing one).
const CLUSTER: &[&str] = &["CAN_ATTACH_TO", "CAN_RESTART", "CAN_MANAGE"];
/// permissions/permission_definitions.go, fields sql_query_id and sql_alert_id: the GA
/// levels, and CAN_VIEW of the legacy SQL permissions API ("replaced by CAN_READ in the GA
/// API", deprecated: written as CAN_READ, see [`WRITTEN_AS`]).
const SQL_OBJECT: &[&str] = &["CAN_READ", "CAN_RUN", "CAN_EDIT", "CAN_MANAGE", "CAN_VIEW"];
/// permissions/permission_definitions.go, fields experiment_id and registered_model_id.
const EXPERIMENT: &[&str] = &["CAN_READ", "CAN_EDIT", "CAN_MANAGE"];
const REGISTERED_MODEL: &[&str] = &[
    "CAN_READ",
    "CAN_EDIT",
    "CAN_MANAGE_STAGING_VERSIONS",
    "CAN_MANAGE_PRODUCTION_VERSIONS",
    "CAN_MANAGE",
];
/// Levels a configuration may name that the service holds as another:
/// `(request object type, declared, written)`. The Terraform provider rewrites them on
/// write and reads the held level back as the declared one for a principal that declared
/// it (permission_definitions.go:341-346, rewriteCanViewToCanRead, rewriteCanReadToCanView).
const WRITTEN_AS: &[(&str, &str, &str)] = &[
    ("sql/queries", "CAN_VIEW", "CAN_READ"),
    ("sql/alerts", "CAN_VIEW", "CAN_READ"),
    ("dbsql-dashboards", "CAN_VIEW", "CAN_READ"),
];
/// permission_definitions.go, field authorization: tokens take CAN_USE and CAN_MANAGE and
/// every write keeps the `admins` group's CAN_MANAGE (update.AddAdmin); passwords take
/// CAN_USE alone, the `admins` group's included (allowConfiguringAdmins).
const TOKENS: &[&str] = &["CAN_USE", "CAN_MANAGE"];
const PASSWORDS: &[&str] = &["CAN_USE"];
const AUTHORIZATION: &[Fixed] = &[
    Fixed {
        id: "tokens",
        levels: TOKENS,
        admins_configurable: false,
        admins_kept: true,
    },
    Fixed {
        id: "passwords",
        levels: PASSWORDS,
        admins_configurable: true,
        admins_kept: false,
    },
];
/// permission_definitions.go, fields serving_endpoint_id, knowledge_assistant_id and
/// supervisor_agent_id (CAN_QUERY; a serving endpoint also CAN_VIEW).
const SERVING_ENDPOINT: &[&str] = &["CAN_VIEW", "CAN_QUERY", "CAN_MANAGE"];
const AGENT: &[&str] = &["CAN_QUERY", "CAN_MANAGE"];
/// permission_definitions.go, fields vector_search_endpoint_id, app_name,
/// database_instance_name and database_project_name.
const USE_OR_MANAGE: &[&str] = &["CAN_USE", "CAN_MANAGE"];
/// permission_definitions.go, field alert_v2_id.
const ALERT_V2: &[&str] = &["CAN_READ", "CAN_RUN", "CAN_EDIT", "CAN_MANAGE"];
const OWNING: &[&str] = &["CAN_MANAGE", "IS_OWNER"];
const MANAGING: &[&str] = &["CAN_MANAGE"];

const fn workspace(
    attr: &'static str,
    by_path: bool,
    request: &'static str,
    object_type: &'static str,
    workspace_type: &'static str,
) -> Target {
    Target {
        attr,
        by_path,
        request,
        object_type,
        workspace_type,
        label: object_type,
        levels: WORKSPACE,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    }
}

/// An object named by its id, with no owner, CAN_MANAGE its managing level.
const fn other(
    attr: &'static str,
    request: &'static str,
    object_type: &'static str,
    label: &'static str,
    levels: &'static [&'static str],
) -> Target {
    Target {
        attr,
        by_path: false,
        request,
        object_type,
        workspace_type: "",
        label,
        levels,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    }
}

/// The objects brickform manages permissions of, as the Terraform provider's permission
/// definitions name and level them.
pub const TARGETS: &[Target] = &[
    Target {
        attr: "job_id",
        by_path: false,
        request: "jobs",
        object_type: "job",
        workspace_type: "",
        label: "job",
        levels: JOB,
        managing: OWNING,
        owned: true,
        fixed: &[],
    },
    Target {
        attr: "pipeline_id",
        by_path: false,
        request: "pipelines",
        object_type: "pipelines",
        workspace_type: "",
        label: "pipeline",
        levels: PIPELINE,
        managing: OWNING,
        owned: true,
        fixed: &[],
    },
    workspace("notebook_id", false, "notebooks", "notebook", "NOTEBOOK"),
    workspace("notebook_path", true, "notebooks", "notebook", "NOTEBOOK"),
    workspace(
        "directory_id",
        false,
        "directories",
        "directory",
        "DIRECTORY",
    ),
    workspace(
        "directory_path",
        true,
        "directories",
        "directory",
        "DIRECTORY",
    ),
    workspace("workspace_file_id", false, "files", "file", "FILE"),
    workspace("workspace_file_path", true, "files", "file", "FILE"),
    // permission_definitions.go, fields repo_id and repo_path: the workspace levels. A Git
    // folder's id is its object id in the workspace tree, where it is a REPO.
    workspace("repo_id", false, "repos", "repo", "REPO"),
    workspace("repo_path", true, "repos", "repo", "REPO"),
    Target {
        attr: "sql_endpoint_id",
        by_path: false,
        request: "sql/warehouses",
        object_type: "warehouses",
        workspace_type: "",
        label: "SQL warehouse",
        levels: WAREHOUSE,
        managing: OWNING,
        owned: true,
        fixed: &[],
    },
    Target {
        attr: "cluster_policy_id",
        by_path: false,
        request: "cluster-policies",
        object_type: "cluster-policy",
        workspace_type: "",
        label: "cluster policy",
        levels: CLUSTER_POLICY,
        managing: CLUSTER_POLICY,
        owned: false,
        fixed: &[],
    },
    Target {
        attr: "instance_pool_id",
        by_path: false,
        request: "instance-pools",
        object_type: "instance-pool",
        workspace_type: "",
        label: "instance pool",
        levels: INSTANCE_POOL,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    },
    Target {
        attr: "cluster_id",
        by_path: false,
        request: "clusters",
        object_type: "cluster",
        workspace_type: "",
        label: "cluster",
        levels: CLUSTER,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    },
    Target {
        attr: "sql_query_id",
        by_path: false,
        request: "sql/queries",
        object_type: "query",
        workspace_type: "",
        label: "query",
        levels: SQL_OBJECT,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    },
    Target {
        attr: "sql_alert_id",
        by_path: false,
        request: "sql/alerts",
        object_type: "alert",
        workspace_type: "",
        label: "alert",
        levels: SQL_OBJECT,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    },
    // permission_definitions.go, field experiment_id: object type mlflowExperiment; an
    // experiment is a workspace object, but named by its id (databricks_mlflow_experiment's).
    Target {
        attr: "experiment_id",
        by_path: false,
        request: "experiments",
        object_type: "mlflowExperiment",
        workspace_type: "",
        label: "experiment",
        levels: EXPERIMENT,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    },
    // permission_definitions.go, field registered_model_id: by the model's id
    // (databricks_mlflow_model's registered_model_id), not its name.
    Target {
        attr: "registered_model_id",
        by_path: false,
        request: "registered-models",
        object_type: "registered-model",
        workspace_type: "",
        label: "registered model",
        levels: REGISTERED_MODEL,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    },
    // permission_definitions.go, field dashboard_id: the workspace levels.
    Target {
        attr: "dashboard_id",
        by_path: false,
        request: "dashboards",
        object_type: "dashboard",
        workspace_type: "",
        label: "dashboard",
        levels: WORKSPACE,
        managing: MANAGING,
        owned: false,
        fixed: &[],
    },
    // permission_definitions.go, field authorization: `/authorization/tokens` and
    // `/authorization/passwords`, which every workspace has.
    Target {
        attr: "authorization",
        by_path: false,
        request: "authorization",
        object_type: "tokens",
        workspace_type: "",
        label: "authorization",
        levels: TOKENS,
        managing: TOKENS,
        owned: false,
        fixed: AUTHORIZATION,
    },
    // permission_definitions.go, field sql_dashboard_id: a legacy Databricks SQL dashboard,
    // with the SQL objects' levels (CAN_VIEW written as CAN_READ).
    other(
        "sql_dashboard_id",
        "dbsql-dashboards",
        "dashboard",
        "legacy SQL dashboard",
        SQL_OBJECT,
    ),
    // The objects below are made where brickform does not look (by the Terraform
    // provider's own kinds, bundles, the UI); their permissions are kept here all the same.
    // permission_definitions.go, one field each: request object type, object type, levels.
    other(
        "serving_endpoint_id",
        "serving-endpoints",
        "serving-endpoint",
        "serving endpoint",
        SERVING_ENDPOINT,
    ),
    other(
        "vector_search_endpoint_id",
        "vector-search-endpoints",
        "vector-search-endpoints",
        "vector search endpoint",
        USE_OR_MANAGE,
    ),
    other("app_name", "apps", "apps", "app", USE_OR_MANAGE),
    other(
        "database_instance_name",
        "database-instances",
        "database-instances",
        "database instance",
        USE_OR_MANAGE,
    ),
    other(
        "database_project_name",
        "database-projects",
        "database-projects",
        "database project",
        USE_OR_MANAGE,
    ),
    other("alert_v2_id", "alertsv2", "alertv2", "alert", ALERT_V2),
    other(
        "knowledge_assistant_id",
        "knowledge-assistants",
        "knowledge-assistants",
        "knowledge assistant",
        AGENT,
    ),
    other(
        "supervisor_agent_id",
        "supervisor-agents",
        "supervisor-agents",
        "supervisor agent",
        AGENT,
    ),
];

/// The attributes that name an entry's principal, as the API names them.
pub const PRINCIPALS: &[&str] = &["user_name", "group_name", "service_principal_name"];

/// The group every workspace's administrators are in: it manages every object and the
/// service refuses to lower that, so the Terraform provider refuses to configure it.
const ADMINS: &str = "admins";

/// One direct entry: the attribute naming its principal, the principal, the level.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub field: &'static str,
    pub name: String,
    pub level: String,
}

impl Entry {
    /// Users and service principals are named in any case; groups exactly.
    fn same_principal(&self, other: &Entry) -> bool {
        self.field == other.field
            && if self.field == "group_name" {
                self.name == other.name
            } else {
                self.name.eq_ignore_ascii_case(&other.name)
            }
    }
    fn json(&self) -> Json {
        json!({ self.field: self.name, "permission_level": self.level })
    }
    fn value(&self) -> Value {
        let mut o = Object::default();
        for f in PRINCIPALS {
            o.insert(
                f.to_string(),
                if *f == self.field {
                    Value::from(self.name.as_str())
                } else {
                    Value::Null
                },
            );
        }
        o.insert("permission_level".into(), Value::from(self.level.as_str()));
        Value::object(o)
    }
}

/// The kind's schema: one object attribute, the entries, what the service computes.
fn schema() -> Schema {
    let entry = Schema::new()
        .attr(
            Attribute::optional("user_name", AttrType::String)
                .normalize(Normalize::LowerCase)
                .describe("A user, by user name (e-mail)."),
        )
        .attr(
            Attribute::optional("group_name", AttrType::String)
                .describe("A group, by display name (`users` for every user of the workspace)."),
        )
        .attr(
            Attribute::optional("service_principal_name", AttrType::String)
                .normalize(Normalize::LowerCase)
                .describe("A service principal, by application id."),
        )
        .attr(
            Attribute::required("permission_level", AttrType::String)
                .describe("The level, one the object's type takes (validate lists them)."),
        );
    let mut s = Schema::new().describe(
        "Every permission on one job, pipeline, notebook, directory, workspace file, Git folder, SQL warehouse, cluster policy, instance pool, cluster, query, alert, dashboard, MLflow experiment or registered model, or on the workspace's tokens or passwords, or on an object made outside brickform (serving endpoint, vector search endpoint, app, database instance or project, alert v2, knowledge assistant, supervisor agent, legacy SQL dashboard): what it does not declare is removed. Set exactly one of job_id, pipeline_id, notebook_id, notebook_path, directory_id, directory_path, workspace_file_id, workspace_file_path, repo_id, repo_path, sql_endpoint_id, cluster_policy_id, instance_pool_id, cluster_id, sql_query_id, sql_alert_id, dashboard_id, experiment_id, registered_model_id, authorization, sql_dashboard_id, serving_endpoint_id, vector_search_endpoint_id, app_name, database_instance_name, database_project_name, alert_v2_id, knowledge_assistant_id, supervisor_agent_id.",
    );
    for t in TARGETS {
        s = s.attr(
            Attribute::optional(t.attr, AttrType::String)
                .force_new()
                .normalize(if t.by_path {
                    Normalize::TrimTrailingSlash
                } else {
                    Normalize::None
                })
                .describe(match t.attr {
                    "job_id" => "The job the permissions are on (set exactly one object).",
                    "pipeline_id" => "The pipeline the permissions are on.",
                    "notebook_id" => {
                        "The notebook, by object id (databricks_notebook's object_id)."
                    }
                    "notebook_path" => "The notebook, by workspace path.",
                    "directory_id" => {
                        "The directory, by object id (databricks_directory's object_id)."
                    }
                    "directory_path" => "The directory, by workspace path.",
                    "workspace_file_id" => {
                        "The workspace file, by object id (databricks_workspace_file's object_id)."
                    }
                    "workspace_file_path" => "The workspace file, by workspace path.",
                    "repo_id" => "The Git folder, by id (databricks_repo's id).",
                    "repo_path" => "The Git folder, by workspace path.",
                    "cluster_policy_id" => {
                        "The cluster policy the permissions are on (databricks_cluster_policy's id); its one level is CAN_USE."
                    }
                    "instance_pool_id" => {
                        "The instance pool the permissions are on (databricks_instance_pool's id)."
                    }
                    "cluster_id" => {
                        "The cluster the permissions are on (databricks_cluster's id): CAN_ATTACH_TO, CAN_RESTART or CAN_MANAGE."
                    }
                    "sql_query_id" => {
                        "The query the permissions are on (databricks_query's id): CAN_READ, CAN_RUN, CAN_EDIT or CAN_MANAGE (CAN_VIEW, deprecated, is CAN_READ)."
                    }
                    "sql_alert_id" => {
                        "The alert the permissions are on (databricks_alert's id): CAN_READ, CAN_RUN, CAN_EDIT or CAN_MANAGE (CAN_VIEW, deprecated, is CAN_READ)."
                    }
                    "experiment_id" => {
                        "The MLflow experiment the permissions are on (databricks_mlflow_experiment's id): CAN_READ, CAN_EDIT or CAN_MANAGE."
                    }
                    "registered_model_id" => {
                        "The registered model the permissions are on (databricks_mlflow_model's registered_model_id, not its name): CAN_READ, CAN_EDIT, CAN_MANAGE_STAGING_VERSIONS, CAN_MANAGE_PRODUCTION_VERSIONS or CAN_MANAGE."
                    }
                    "dashboard_id" => {
                        "The dashboard the permissions are on (databricks_dashboard's id): CAN_READ, CAN_RUN, CAN_EDIT or CAN_MANAGE."
                    }
                    "authorization" => {
                        "\"tokens\" (who may create personal access tokens: CAN_USE or CAN_MANAGE) or \"passwords\" (who may sign in with a password: CAN_USE)."
                    }
                    "sql_dashboard_id" => {
                        "The legacy Databricks SQL dashboard the permissions are on, by id: CAN_READ, CAN_RUN, CAN_EDIT or CAN_MANAGE (CAN_VIEW, deprecated, is CAN_READ)."
                    }
                    "serving_endpoint_id" => {
                        "The model serving endpoint the permissions are on, by id: CAN_VIEW, CAN_QUERY or CAN_MANAGE."
                    }
                    "vector_search_endpoint_id" => {
                        "The vector search endpoint the permissions are on, by id: CAN_USE or CAN_MANAGE."
                    }
                    "app_name" => "The app the permissions are on, by name: CAN_USE or CAN_MANAGE.",
                    "database_instance_name" => {
                        "The Lakebase database instance the permissions are on, by name: CAN_USE or CAN_MANAGE."
                    }
                    "database_project_name" => {
                        "The Lakebase database project the permissions are on, by name: CAN_USE or CAN_MANAGE."
                    }
                    "alert_v2_id" => {
                        "The alert (v2) the permissions are on, by id: CAN_READ, CAN_RUN, CAN_EDIT or CAN_MANAGE."
                    }
                    "knowledge_assistant_id" => {
                        "The knowledge assistant the permissions are on, by id: CAN_QUERY or CAN_MANAGE."
                    }
                    "supervisor_agent_id" => {
                        "The supervisor agent the permissions are on, by id: CAN_QUERY or CAN_MANAGE."
                    }
                    _ => "The SQL warehouse the permissions are on (databricks_sql_endpoint's id).",
                }),
        );
    }
    s.block(
        BlockType::list("access_control", entry)
            .unordered()
            .min(1)
            .describe("One principal's level; set one of user_name, group_name, service_principal_name."),
    )
    .attr(
        Attribute::computed("object_type", AttrType::String)
            .derived_from(&[
                "job_id",
                "pipeline_id",
                "notebook_id",
                "notebook_path",
                "directory_id",
                "directory_path",
                "workspace_file_id",
                "workspace_file_path",
                "repo_id",
                "repo_path",
                "sql_endpoint_id",
                "cluster_policy_id",
                "instance_pool_id",
                "cluster_id",
                "sql_query_id",
                "sql_alert_id",
                "dashboard_id",
                "experiment_id",
                "registered_model_id",
                "authorization",
                "sql_dashboard_id",
                "serving_endpoint_id",
                "vector_search_endpoint_id",
                "app_name",
                "database_instance_name",
                "database_project_name",
                "alert_v2_id",
                "knowledge_assistant_id",
                "supervisor_agent_id",
            ])
            .describe("The object's type as the service names it (job, pipelines, notebook, directory, file, repo, warehouses, cluster-policy, instance-pool, cluster, query, alert, dashboard, mlflowExperiment, registered-model, tokens, passwords, serving-endpoint, apps, …)."),
    )
    .attr(
        Attribute::computed("id", AttrType::String)
            .describe("/TYPE/OBJECT_ID, e.g. /jobs/123, /notebooks/456, /sql/warehouses/abc."),
    )
}

/// The object a configuration names and the value naming it (`None` while unknown).
pub fn target_of(config: &Object) -> Option<(&'static Target, Option<&str>)> {
    first_set(config, TARGETS, |t| t.attr)
}

/// The entries a configuration declares (those whose values are known).
pub fn declared(config: &Object) -> Vec<Entry> {
    config
        .get("access_control")
        .and_then(Value::as_list)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(|o| {
            let field = PRINCIPALS
                .iter()
                .find(|f| o.get(**f).is_some_and(|v| !v.is_null()))?;
            Some(Entry {
                field,
                name: str_attr(o, field)?.to_string(),
                level: str_attr(o, "permission_level")?.to_string(),
            })
        })
        .collect()
}

fn key(k: &str) -> PathStep {
    PathStep::Key(k.to_string())
}

/// Exactly one object, a path that is absolute.
pub fn check_target(config: &Object) -> Vec<Finding> {
    let words = OneTarget {
        none: "no object: the permissions are on nothing",
        many: "permissions are on one object",
        many_hint: "declare one databricks_permissions per object",
    };
    let (one, mut out) = exactly_one(config, TARGETS, |t| t.attr, &words);
    if let Some(t) = one {
        match str_attr(config, t.attr) {
            Some(p) if t.by_path && !p.starts_with('/') => out.push(
                Finding::error(&[t.attr], format!("{} is not a workspace path", quote(p)))
                    .hint("a workspace path is absolute: /Users/…, /Shared/…"),
            ),
            Some("") => out.push(Finding::error(&[t.attr], format!("{} is empty", t.attr))),
            Some(v) if !t.fixed.is_empty() && t.fixed_object(v).is_none() => {
                let ids: Vec<String> = t.fixed.iter().map(|f| quote(f.id)).collect();
                out.push(
                    Finding::error(
                        &[t.attr],
                        format!("{} is not one of {}", quote(v), ids.join(" or ")),
                    )
                    .hint(
                        did_you_mean_value(v, t.fixed.iter().map(|f| f.id)).unwrap_or_else(|| {
                            format!(
                                "{} names one of the workspace's settings: {}",
                                t.attr,
                                ids.join(", ")
                            )
                        }),
                    ),
                );
            }
            _ => {}
        }
    }
    out
}

/// Each entry names one principal with a level the object takes; one owner at most, never
/// a group; no principal twice; not the `admins` group.
pub fn check_entries(target: &Target, config: &Object) -> Vec<Finding> {
    let mut out = Vec::new();
    let value = str_attr(config, target.attr);
    let levels = target.levels_of(value);
    let admins_configurable = value.is_some_and(|v| target.admins_configurable(v));
    let mut owners = 0;
    let mut seen: Vec<Entry> = Vec::new();
    let items = config
        .get("access_control")
        .and_then(Value::as_list)
        .unwrap_or(&[]);
    for (i, item) in items.iter().enumerate() {
        let Some(o) = item.as_object() else { continue };
        let at = vec![key("access_control"), PathStep::Index(i)];
        let named: Vec<&str> = PRINCIPALS
            .iter()
            .copied()
            .filter(|f| o.get(*f).is_some_and(|v| !v.is_null()))
            .collect();
        match named.as_slice() {
            [] => out.push(
                Finding::error(&[], "no principal: whose level is this?")
                    .at(at.clone())
                    .hint("set one of user_name, group_name, service_principal_name"),
            ),
            [_] => {}
            [first, second, ..] => out.push(
                Finding::error(
                    &[],
                    format!("{first} and {second} both set: an entry is one principal's"),
                )
                .at(at.clone())
                .hint("write one access_control block per principal"),
            ),
        }
        let level = str_attr(o, "permission_level");
        let mut at_level = at.clone();
        at_level.push(key("permission_level"));
        if let Some(l) = level
            && !levels.contains(&l)
        {
            let mut allowed = levels.to_vec();
            allowed.sort_unstable();
            let hint = did_you_mean_value(l, levels.iter().copied())
                .unwrap_or_else(|| format!("allowed levels: {}", allowed.join(", ")));
            out.push(
                Finding::error(
                    &[],
                    match value.filter(|v| target.fixed_object(v).is_some()) {
                        Some(v) => format!(
                            "permission_level {} is not supported with {} = {}",
                            quote(l),
                            target.attr,
                            quote(v)
                        ),
                        None => format!(
                            "permission_level {} is not supported with {} objects",
                            quote(l),
                            target.attr
                        ),
                    },
                )
                .at(at_level.clone())
                .hint(hint),
            );
        }
        let Some(field) = named.first().copied() else {
            continue;
        };
        let Some(name) = str_attr(o, field) else {
            continue;
        };
        if field == "group_name" && name == ADMINS && !admins_configurable {
            out.push(
                Finding::error(
                    &[],
                    format!(
                        "it is not possible to modify admin permissions for {} resources",
                        target.label
                    ),
                )
                .at(at.clone())
                .hint("the admins group manages every object and the service does not lower that; remove this block"),
            );
        }
        if level == Some("IS_OWNER") {
            owners += 1;
            if field == "group_name" {
                out.push(
                    Finding::error(&[], format!("a group cannot own a {}", target.label))
                        .at(at_level.clone())
                        .hint("give IS_OWNER to a user or a service principal, and the group CAN_MANAGE"),
                );
            } else if owners > 1 {
                out.push(
                    Finding::error(
                        &[],
                        format!("two owners: a {} has exactly one IS_OWNER", target.label),
                    )
                    .at(at_level.clone())
                    .hint("keep one IS_OWNER and give the other principal CAN_MANAGE"),
                );
            }
        }
        let entry = Entry {
            field,
            name: name.to_string(),
            level: level.unwrap_or_default().to_string(),
        };
        if seen.iter().any(|e| e.same_principal(&entry)) {
            out.push(
                Finding::error(
                    &[],
                    format!(
                        "{} has two entries: the service keeps one level per principal",
                        quote(name)
                    ),
                )
                .at(at)
                .hint("keep one access_control block for it, with the level it needs"),
            );
        }
        seen.push(entry);
    }
    out
}

/// The entries as the service is to hold them: a level it holds as another ([`WRITTEN_AS`])
/// written as that one.
pub fn written(target: &Target, entries: Vec<Entry>) -> Vec<Entry> {
    entries
        .into_iter()
        .map(|mut e| {
            if let Some((_, _, w)) = WRITTEN_AS
                .iter()
                .find(|(r, d, _)| *r == target.request && *d == e.level)
            {
                e.level = (*w).to_string();
            }
            e
        })
        .collect()
}

/// The held entries as `prior` declared them: a level held for one the principal declared
/// ([`WRITTEN_AS`]) reads as the declared one, so it is not drift.
pub fn as_declared(target: &Target, held: Vec<Entry>, prior: &Object) -> Vec<Entry> {
    let declared = declared(prior);
    held.into_iter()
        .map(|mut e| {
            let alias = WRITTEN_AS.iter().find(|(r, d, w)| {
                *r == target.request
                    && *w == e.level
                    && declared
                        .iter()
                        .any(|x| x.same_principal(&e) && x.level == *d)
            });
            if let Some((_, d, _)) = alias {
                e.level = (*d).to_string();
            }
            e
        })
        .collect()
}

/// A warning for each deprecated level the configuration names.
fn deprecated_levels(target: &Target, config: &Object) -> Vec<Finding> {
    declared(config)
        .iter()
        .filter_map(|e| {
            let (_, d, w) = WRITTEN_AS
                .iter()
                .find(|(r, d, _)| *r == target.request && *d == e.level)?;
            Some(
                Finding::warning(
                    &["access_control"],
                    format!(
                        "permission_level {d} of {} is deprecated: the service holds it as {w}",
                        target.attr
                    ),
                )
                .hint(format!("use {w} instead")),
            )
        })
        .collect()
}

/// The id of an object's permissions, `/jobs/123` (the Terraform provider's form).
pub fn id_of(target: &Target, object_id: &str) -> String {
    format!("/{}/{object_id}", target.request)
}

/// The object an id names: its target (the id attribute of its type) and object id. The
/// Terraform provider's older `/warehouses/ID` is read as `/sql/warehouses/ID`.
pub fn parse_id(id: &str) -> ProviderResult<(&'static Target, &str)> {
    let bad = || {
        ProviderError::invalid(format!(
            "permissions are imported as /TYPE/OBJECT_ID, where TYPE is jobs, pipelines, notebooks, directories, files, repos, sql/warehouses, cluster-policies, instance-pools, clusters, experiments, registered-models, sql/queries, sql/alerts, dashboards, dbsql-dashboards, serving-endpoints, vector-search-endpoints, apps, database-instances, database-projects, alertsv2, knowledge-assistants or supervisor-agents (for example /jobs/123), or /authorization/tokens or /authorization/passwords; got {id:?}"
        ))
    };
    let rest = id.strip_prefix('/').ok_or_else(bad)?;
    let (request, object) = if let Some(o) = rest.strip_prefix("sql/dashboards/") {
        // The Terraform provider reads a legacy dashboard's older id as its current one.
        ("dbsql-dashboards", o)
    } else if let Some(sub) = rest.strip_prefix("sql/") {
        // `sql/warehouses`, `sql/queries`, `sql/alerts`: two segments.
        let (kind, o) = sub.split_once('/').ok_or_else(bad)?;
        (&rest[..4 + kind.len()], o)
    } else if let Some(o) = rest.strip_prefix("warehouses/") {
        ("sql/warehouses", o)
    } else {
        rest.split_once('/').ok_or_else(bad)?
    };
    if object.is_empty() || object.contains('/') {
        return Err(bad());
    }
    let target = TARGETS
        .iter()
        .find(|t| t.request == request && !t.by_path)
        .ok_or_else(bad)?;
    if !target.fixed.is_empty() && target.fixed_object(object).is_none() {
        return Err(bad());
    }
    Ok((target, object))
}

/// What the service answers for an object: its direct entries, the inherited ones left
/// out (they are its folders' and the type's, not this object's).
pub fn direct_entries(answer: &Json) -> Vec<Entry> {
    let mut out = Vec::new();
    for e in answer
        .get("access_control_list")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let Some((field, name)) = PRINCIPALS
            .iter()
            .find_map(|f| e.get(*f).and_then(Json::as_str).map(|n| (*f, n)))
        else {
            continue;
        };
        for p in e
            .get("all_permissions")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if p.get("inherited").and_then(Json::as_bool).unwrap_or(false) {
                continue;
            }
            if let Some(level) = p.get("permission_level").and_then(Json::as_str) {
                out.push(Entry {
                    field,
                    name: name.to_string(),
                    level: level.to_string(),
                });
            }
        }
    }
    out
}

/// The entries a resource speaks for among those held: all but the `admins` group's, and
/// but the owner's while the configuration names no owner (the object keeps the one it has).
pub fn spoken_for(
    target: &Target,
    object_id: &str,
    held: &[Entry],
    declares_owner: bool,
) -> Vec<Entry> {
    let admins_ours = target.admins_configurable(object_id);
    let mut out: Vec<Entry> = held
        .iter()
        .filter(|e| admins_ours || !(e.field == "group_name" && e.name == ADMINS))
        .filter(|e| declares_owner || !(target.owned && e.level == "IS_OWNER"))
        .cloned()
        .collect();
    out.sort();
    out
}

/// The entries to write for `want`: the declared ones, with the object's owner kept when
/// none is declared (its types have exactly one), and the `admins` group's CAN_MANAGE on
/// the root folder, which the service refuses to drop.
pub fn to_write(
    target: &Target,
    object_id: &str,
    held: &[Entry],
    want: &[Entry],
) -> ProviderResult<Vec<Entry>> {
    let mut out = want.to_vec();
    if target.owned
        && !want.iter().any(|e| e.level == "IS_OWNER")
        && let Some(owner) = held.iter().find(|e| e.level == "IS_OWNER")
    {
        if let Some(clash) = want.iter().find(|e| e.same_principal(owner)) {
            return Err(ProviderError::invalid(format!(
                "{} owns {} {object_id}; declaring it {} with no IS_OWNER leaves the {} without an owner",
                owner.name, target.label, clash.level, target.label
            ))
            .with_detail("Declare the owner with permission_level = \"IS_OWNER\", or give the object another owner first."));
        }
        out.push(owner.clone());
    }
    let admins_kept = target
        .fixed_object(object_id)
        .is_some_and(|f| f.admins_kept);
    // Once: a destroy writes back the admins entry it read.
    let has_admins = out
        .iter()
        .any(|e| e.field == "group_name" && e.name == ADMINS);
    if ((target.request == "directories" && object_id == "0") || admins_kept) && !has_admins {
        out.push(Entry {
            field: "group_name",
            name: ADMINS.into(),
            level: "CAN_MANAGE".into(),
        });
    }
    Ok(out)
}

pub struct Permissions {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Permissions {
    pub fn new(shared: Arc<Shared>) -> Self {
        Permissions {
            schema: schema(),
            shared,
        }
    }

    /// The object id a configured value names: itself, or for a path the id of the object
    /// there (which must be of the target's type).
    async fn object_id(
        &self,
        client: &crate::client::Client,
        target: &Target,
        value: &str,
    ) -> ProviderResult<Option<String>> {
        if !target.by_path {
            return Ok(Some(value.to_string()));
        }
        let status = match client
            .get(
                "/api/2.0/workspace/get-status",
                &[("path", value.to_string())],
            )
            .await
        {
            Ok(s) => s,
            Err(e) if e.kind == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(err(e)),
        };
        let kind = status.get("object_type").and_then(Json::as_str);
        if kind != Some(target.workspace_type) {
            return Err(ProviderError::invalid(format!(
                "{value} is a {}, not a {}: set {} instead of {}",
                kind.unwrap_or("workspace object").to_lowercase(),
                target.label,
                TARGETS
                    .iter()
                    .find(|t| t.by_path && Some(t.workspace_type) == kind)
                    .map_or("the attribute of its type", |t| t.attr),
                target.attr
            )));
        }
        Ok(status
            .get("object_id")
            .and_then(Json::as_i64)
            .map(|n| n.to_string()))
    }

    /// The object's permissions as the service answers; `None` when the object is gone.
    async fn get(&self, client: &crate::client::Client, id: &str) -> ProviderResult<Option<Json>> {
        match client.get(&format!("/api/2.0/permissions{id}"), &[]).await {
            Ok(a) => Ok(Some(a)),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    async fn put(
        &self,
        client: &crate::client::Client,
        id: &str,
        entries: &[Entry],
    ) -> ProviderResult<Json> {
        let body =
            json!({ "access_control_list": entries.iter().map(Entry::json).collect::<Vec<_>>() });
        client
            .idempotent()
            .put(&format!("/api/2.0/permissions{id}"), &body)
            .await
            .map_err(err)
    }

    /// The resource as the service holds it, for a configuration (or state) `prior`: the
    /// attribute naming the object as `prior` names it (the id attribute when it names
    /// none, as after an import); `None` when it speaks for no entry.
    fn remote(&self, target: &Target, id: &str, answer: &Json, prior: &Object) -> Option<Remote> {
        let declares_owner = declared(prior).iter().any(|e| e.level == "IS_OWNER");
        let object = id.rsplit('/').next().unwrap_or_default();
        let entries = as_declared(
            target,
            spoken_for(target, object, &direct_entries(answer), declares_owner),
            prior,
        );
        if entries.is_empty() {
            return None;
        }
        let mut attrs = Object::default();
        match target_of(prior) {
            Some((t, Some(v))) => {
                attrs.insert(t.attr.into(), Value::from(v));
            }
            _ => {
                let object = id.rsplit('/').next().unwrap_or_default();
                attrs.insert(target.attr.into(), Value::from(object));
            }
        }
        attrs.insert(
            "access_control".into(),
            Value::List(
                entries
                    .iter()
                    .map(|e| {
                        let mut e = e.clone();
                        if e.field != "group_name" {
                            e.name = e.name.to_lowercase();
                        }
                        e.value()
                    })
                    .collect(),
            ),
        );
        attrs.insert(
            "object_type".into(),
            Value::from(target.object_type_of(object)),
        );
        attrs.insert("id".into(), Value::from(id));
        Some(Remote {
            id: id.to_string(),
            attrs,
        })
    }

    /// The target and permissions id of a configuration, resolving a path.
    async fn located(
        &self,
        client: &crate::client::Client,
        config: &Object,
    ) -> ProviderResult<(&'static Target, String)> {
        let (target, value) = target_of(config)
            .and_then(|(t, v)| Some((t, v?)))
            .ok_or_else(|| ProviderError::invalid("the object of the permissions is not known"))?;
        let object = self
            .object_id(client, target, value)
            .await?
            .ok_or_else(|| {
                ProviderError::not_found(format!("{} {value} does not exist", target.label))
            })?;
        Ok((target, id_of(target, &object)))
    }

    /// Writes what the configuration declares in place of the object's direct entries.
    async fn converge(&self, config: &Object, creating: bool) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let (target, id) = self.located(&client, config).await?;
        let object = id.rsplit('/').next().unwrap_or_default().to_string();
        let want = written(target, declared(config));
        let answer = self.get(&client, &id).await?.ok_or_else(|| {
            ProviderError::not_found(format!("{} {object} does not exist", target.label))
        })?;
        let held = direct_entries(&answer);
        if let Some(me) = self.shared.current_user().await? {
            // As the Terraform provider: the caller does not take away its own management.
            let mine = want
                .iter()
                .find(|e| e.field != "group_name" && e.name.eq_ignore_ascii_case(&me));
            if let Some(e) = mine
                && !target.managing.contains(&e.level.as_str())
            {
                return Err(ProviderError::invalid(format!(
                    "cannot remove management permissions for the current user for {}, allowed levels: {}",
                    target.label,
                    target.managing.join(", ")
                )));
            }
        }
        if creating {
            let taken: Vec<String> = spoken_for(target, &object, &held, true)
                .into_iter()
                .filter(|e| !(target.owned && e.level == "IS_OWNER"))
                .filter(|e| {
                    !want
                        .iter()
                        .any(|w| w.same_principal(e) && w.level == e.level)
                })
                .map(|e| format!("{} {}", e.name, e.level))
                .collect();
            if !taken.is_empty() {
                return Err(ProviderError::new(
                    ErrorKind::Conflict,
                    format!(
                        "{} {object} now has permissions this configuration does not declare ({}); creating databricks_permissions would remove them, which the plan did not show",
                        target.label,
                        taken.join("; ")
                    ),
                )
                .with_detail(format!(
                    "Plan again: the plan then asks to import them (brickform import databricks_permissions {id})."
                )));
            }
        }
        let written = to_write(target, &object, &held, &want)?;
        let answer = self.put(&client, &id, &written).await?;
        self.remote(target, &id, &answer, config).ok_or_else(|| {
            ProviderError::other(format!(
                "the permissions on {} {object} were written but are not listed",
                target.label
            ))
        })
    }

    /// The object's creator, who owns it again when the permissions are destroyed.
    async fn creator(
        &self,
        client: &crate::client::Client,
        target: &Target,
        object: &str,
    ) -> Option<String> {
        let (path, query, field) = match target.request {
            "jobs" => (
                "/api/2.2/jobs/get".to_string(),
                vec![("job_id", object.to_string())],
                "creator_user_name",
            ),
            "pipelines" => (
                format!("/api/2.0/pipelines/{object}"),
                Vec::new(),
                "creator_user_name",
            ),
            "sql/warehouses" => (
                format!("/api/2.0/sql/warehouses/{object}"),
                Vec::new(),
                "creator_name",
            ),
            _ => return None,
        };
        let got = client.get(&path, &query).await.ok()?;
        got.get(field).and_then(Json::as_str).map(str::to_string)
    }
}

#[async_trait]
impl ResourceKind for Permissions {
    fn type_name(&self) -> &'static str {
        "databricks_permissions"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = check_target(config);
        if let Some((target, _)) = target_of(config) {
            out.extend(check_entries(target, config));
            out.extend(deprecated_levels(target, config));
        }
        out
    }
    /// The object type follows from the attribute set; the id from an id attribute.
    fn plan_computed(&self, config: &Object) -> Object {
        let mut out = Object::default();
        if let Some((target, value)) = target_of(config) {
            out.insert(
                "object_type".into(),
                Value::from(value.map_or(target.object_type, |v| target.object_type_of(v))),
            );
            if let (false, Some(v)) = (target.by_path, value) {
                out.insert("id".into(), Value::from(id_of(target, v)));
            }
        }
        out
    }
    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.converge(config, true).await
    }
    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let (target, object) = parse_id(id)?;
        let id = id_of(target, object);
        // Named by path: the permissions are those of the object at the path now, which
        // must be the one they were written on.
        if let Some((t, Some(path))) = target_of(prior)
            && t.by_path
            && self.object_id(&client, t, path).await?.as_deref() != Some(object)
        {
            return Ok(None);
        }
        let Some(answer) = self.get(&client, &id).await? else {
            return Ok(None);
        };
        Ok(self.remote(target, &id, &answer, prior))
    }
    async fn update(
        &self,
        _: &OpContext,
        _id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.converge(config, false).await
    }
    /// Resets the object to what it has alone: no direct entry but the `admins` group's
    /// and the owner — its creator again if the state made someone else owner, as the
    /// Terraform provider does, or else the owner it has.
    async fn delete(&self, _: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let (target, object) = parse_id(id)?;
        let id = id_of(target, object);
        let Some(answer) = self.get(&client, &id).await? else {
            return Ok(());
        };
        let held = direct_entries(&answer);
        // The admins group's entries stay, unless they are the resource's own (passwords).
        let admins_ours = target.admins_configurable(object);
        let mut keep: Vec<Entry> = held
            .iter()
            .filter(|e| !admins_ours && e.field == "group_name" && e.name == ADMINS)
            .cloned()
            .collect();
        if target.owned {
            let state_named_owner = declared(prior).iter().any(|e| e.level == "IS_OWNER");
            let creator = if state_named_owner {
                self.creator(&client, target, object).await
            } else {
                None
            };
            let owner = match creator {
                Some(c) => Some(Entry {
                    field: "user_name",
                    name: c,
                    level: "IS_OWNER".into(),
                }),
                None => held.iter().find(|e| e.level == "IS_OWNER").cloned(),
            };
            keep.extend(owner);
        }
        let written = to_write(target, object, &keep, &keep)?;
        match self.put(&client, &id, &written).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
    async fn import(&self, ctx: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        let (target, object) = parse_id(id)?;
        self.read(ctx, &id_of(target, object), &Object::default())
            .await
    }
    /// The object the configuration names: permissions found there where a create would
    /// write are found by it (the plan asks for an import rather than replace them
    /// unseen), and so is a create whose answer was lost.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        let (target, value) = target_of(config)?;
        let value = value?;
        Some(if target.by_path {
            format!("{}={value}", target.attr)
        } else {
            id_of(target, value)
        })
    }
    /// Found only when the object has entries the resource would speak for: an object
    /// with its owner alone has no permissions of this kind's.
    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let mut prior = Object::default();
        let id = match key.split_once('=') {
            Some((attr, path)) => {
                let Some(target) = TARGETS.iter().find(|t| t.attr == attr) else {
                    return Ok(None);
                };
                let Some(object) = self.object_id(&client, target, path).await? else {
                    return Ok(None);
                };
                prior.insert(attr.to_string(), Value::from(path));
                id_of(target, &object)
            }
            None => key.to_string(),
        };
        self.read(ctx, &id, &prior).await
    }
    fn describe_existing(&self, key: &str, remote: &Remote) -> String {
        let what = match key.split_once('=') {
            Some((_, path)) => path.to_string(),
            None => remote.id.clone(),
        };
        format!("permissions on {what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)], entries: &[(&str, &str, &str)]) -> Object {
        let mut o: Object = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect();
        let list = entries
            .iter()
            .map(|(f, n, l)| {
                let mut e = Object::default();
                e.insert(f.to_string(), Value::from(*n));
                e.insert("permission_level".into(), Value::from(*l));
                Value::object(e)
            })
            .collect();
        o.insert("access_control".into(), Value::List(list));
        o
    }

    fn job() -> &'static Target {
        &TARGETS[0]
    }

    #[test]
    fn ids_round_trip_and_bad_ones_say_the_form() {
        let (t, o) = parse_id("/jobs/123").unwrap();
        assert_eq!((t.attr, o), ("job_id", "123"));
        let (t, o) = parse_id("/sql/warehouses/abc").unwrap();
        assert_eq!((t.attr, o), ("sql_endpoint_id", "abc"));
        let (t, o) = parse_id("/warehouses/abc").unwrap();
        assert_eq!(id_of(t, o), "/sql/warehouses/abc");
        let (t, o) = parse_id("/notebooks/42").unwrap();
        assert_eq!((t.attr, o), ("notebook_id", "42"));
        assert_eq!(parse_id("/files/7").unwrap().0.attr, "workspace_file_id");
        assert_eq!(parse_id("/directories/0").unwrap().0.attr, "directory_id");
        assert_eq!(parse_id("/repos/12").unwrap().0.attr, "repo_id");
        let (t, o) = parse_id("/clusters/0101-000000-abcd1234").unwrap();
        assert_eq!((t.attr, o), ("cluster_id", "0101-000000-abcd1234"));
        assert_eq!(parse_id("/experiments/1").unwrap().0.attr, "experiment_id");
        for bad in ["jobs/1", "/genie/1", "/jobs/", "/jobs/1/2", "/", ""] {
            let e = parse_id(bad).unwrap_err();
            assert!(
                e.message.contains("/TYPE/OBJECT_ID"),
                "{bad}: {}",
                e.message
            );
        }
    }

    #[test]
    fn levels_are_checked_per_object_type_with_a_hint() {
        let f = check_entries(
            job(),
            &config(&[("job_id", "1")], &[("group_name", "eng", "CAN_RUN")]),
        );
        assert_eq!(
            f[0].message,
            "permission_level \"CAN_RUN\" is not supported with job_id objects"
        );
        assert_eq!(
            f[0].hint.as_deref(),
            Some("allowed levels: CAN_MANAGE, CAN_MANAGE_RUN, CAN_VIEW, IS_OWNER")
        );
        assert_eq!(
            brickform_core::value::path_string(&f[0].path),
            "access_control[0].permission_level"
        );
        let f = check_entries(
            &TARGETS[3],
            &config(
                &[("notebook_path", "/x")],
                &[("group_name", "eng", "can_read")],
            ),
        );
        assert_eq!(f[0].hint.as_deref(), Some("did you mean \"CAN_READ\"?"));
        let warehouse = TARGETS
            .iter()
            .find(|t| t.attr == "sql_endpoint_id")
            .unwrap();
        let f = check_entries(
            warehouse,
            &config(
                &[("sql_endpoint_id", "w")],
                &[("group_name", "eng", "CAN_USE")],
            ),
        );
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn one_owner_never_a_group_never_admins_no_principal_twice() {
        let f = check_entries(
            job(),
            &config(
                &[("job_id", "1")],
                &[
                    ("user_name", "a@x", "IS_OWNER"),
                    ("service_principal_name", "sp", "IS_OWNER"),
                    ("group_name", "eng", "IS_OWNER"),
                    ("group_name", "admins", "CAN_MANAGE"),
                    ("user_name", "A@x", "CAN_VIEW"),
                ],
            ),
        );
        let messages: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "two owners: a job has exactly one IS_OWNER",
                "a group cannot own a job",
                "it is not possible to modify admin permissions for job resources",
                "\"A@x\" has two entries: the service keeps one level per principal",
            ]
        );
        let mut none = config(&[("job_id", "1")], &[]);
        none.insert(
            "access_control".into(),
            Value::List(vec![Value::object(Object::from_iter([(
                "permission_level".to_string(),
                Value::from("CAN_VIEW"),
            )]))]),
        );
        assert_eq!(
            check_entries(job(), &none)[0].message,
            "no principal: whose level is this?"
        );
    }

    #[test]
    fn one_object_named_by_an_absolute_path() {
        assert_eq!(
            check_target(&config(&[], &[]))[0].message,
            "no object: the permissions are on nothing"
        );
        let f = check_target(&config(&[("job_id", "1"), ("pipeline_id", "p")], &[]));
        assert_eq!(
            f[0].message,
            "job_id and pipeline_id both set: permissions are on one object"
        );
        assert_eq!(
            brickform_core::value::path_string(&f[0].path),
            "pipeline_id"
        );
        let f = check_target(&config(&[("notebook_path", "Shared/x")], &[]));
        assert_eq!(f[0].message, "\"Shared/x\" is not a workspace path");
        assert!(check_target(&config(&[("directory_path", "/Shared")], &[])).is_empty());
    }

    fn e(field: &'static str, name: &str, level: &str) -> Entry {
        Entry {
            field,
            name: name.into(),
            level: level.into(),
        }
    }

    #[test]
    fn inherited_entries_and_the_kept_owner_are_not_the_resources() {
        let answer = json!({"access_control_list": [
            {"user_name": "Me@X", "all_permissions": [{"permission_level": "IS_OWNER", "inherited": false}]},
            {"group_name": "users", "all_permissions": [
                {"permission_level": "CAN_VIEW", "inherited": false},
                {"permission_level": "CAN_MANAGE_RUN", "inherited": true, "inherited_from_object": ["/directories/1"]},
            ]},
            {"group_name": "admins", "all_permissions": [{"permission_level": "CAN_MANAGE", "inherited": true, "inherited_from_object": ["/jobs/"]}]},
        ]});
        let held = direct_entries(&answer);
        assert_eq!(
            held,
            [
                e("user_name", "Me@X", "IS_OWNER"),
                e("group_name", "users", "CAN_VIEW")
            ]
        );
        assert_eq!(
            spoken_for(job(), "1", &held, false),
            [e("group_name", "users", "CAN_VIEW")]
        );
        assert_eq!(spoken_for(job(), "1", &held, true).len(), 2);
        // A notebook has no owner to keep: every direct entry is the resource's.
        assert_eq!(spoken_for(&TARGETS[2], "1", &held, false).len(), 2);
    }

    #[test]
    fn a_write_keeps_the_owner_unless_one_is_declared() {
        let held = [
            e("user_name", "me@x", "IS_OWNER"),
            e("group_name", "users", "CAN_VIEW"),
        ];
        let want = [e("group_name", "eng", "CAN_MANAGE")];
        assert_eq!(
            to_write(job(), "1", &held, &want).unwrap(),
            [
                e("group_name", "eng", "CAN_MANAGE"),
                e("user_name", "me@x", "IS_OWNER")
            ]
        );
        let want = [e("service_principal_name", "sp", "IS_OWNER")];
        assert_eq!(to_write(job(), "1", &held, &want).unwrap(), want);
        let want = [e("user_name", "ME@x", "CAN_MANAGE")];
        let err = to_write(job(), "1", &held, &want).unwrap_err();
        assert!(
            err.message.contains("leaves the job without an owner"),
            "{}",
            err.message
        );
        // The root folder keeps the admins group's CAN_MANAGE.
        let dir = &TARGETS[4];
        assert_eq!(
            to_write(dir, "0", &[], &[]).unwrap(),
            [e("group_name", "admins", "CAN_MANAGE")]
        );
        assert!(to_write(dir, "5", &held, &[]).unwrap().is_empty());
    }

    #[test]
    fn sql_objects_are_imported_by_their_ids_and_can_view_is_held_as_can_read() {
        let (t, o) = parse_id("/sql/queries/ab-12").unwrap();
        assert_eq!((t.attr, o), ("sql_query_id", "ab-12"));
        assert_eq!(id_of(t, o), "/sql/queries/ab-12");
        assert_eq!(parse_id("/sql/alerts/x").unwrap().0.attr, "sql_alert_id");
        assert_eq!(parse_id("/dashboards/x").unwrap().0.attr, "dashboard_id");
        assert!(parse_id("/sql/queries/").is_err());
        assert!(parse_id("/sql/nothing/1").is_err());
        let query = parse_id("/sql/queries/q").unwrap().0;
        let config = super::super::decoded(
            &schema(),
            json!({"sql_query_id": "q", "access_control": [
                {"group_name": "users", "permission_level": "CAN_VIEW"},
                {"group_name": "bi", "permission_level": "CAN_READ"}]}),
        );
        assert!(check_entries(query, &config).is_empty());
        let warned = deprecated_levels(query, &config);
        assert_eq!(warned.len(), 1, "{warned:?}");
        let sent = written(query, declared(&config));
        assert!(sent.iter().all(|e| e.level == "CAN_READ"), "{sent:?}");
        // Read back: CAN_VIEW for the principal that declared it, CAN_READ for the other.
        let back = as_declared(query, sent, &config);
        assert_eq!(back, declared(&config));
        // Dashboards take no CAN_VIEW.
        let dashboard = parse_id("/dashboards/d").unwrap().0;
        let config = super::super::decoded(
            &schema(),
            json!({"dashboard_id": "d", "access_control": [{"group_name": "users", "permission_level": "CAN_VIEW"}]}),
        );
        assert_eq!(check_entries(dashboard, &config).len(), 1);
    }

    #[test]
    fn tokens_and_passwords_are_fixed_objects_with_their_own_levels() {
        let (t, o) = parse_id("/authorization/tokens").unwrap();
        assert_eq!((t.attr, o), ("authorization", "tokens"));
        assert_eq!(id_of(t, o), "/authorization/tokens");
        assert_eq!(parse_id("/authorization/passwords").unwrap().1, "passwords");
        // Only the two objects the workspace has.
        assert!(parse_id("/authorization/keys").is_err());
        let f = check_target(&config(&[("authorization", "token")], &[]));
        assert_eq!(
            f[0].message,
            "\"token\" is not one of \"tokens\" or \"passwords\""
        );
        assert!(check_target(&config(&[("authorization", "passwords")], &[])).is_empty());

        // Tokens take CAN_MANAGE; passwords CAN_USE alone, named for the object.
        let tokens = config(
            &[("authorization", "tokens")],
            &[("group_name", "eng", "CAN_MANAGE")],
        );
        assert!(check_entries(t, &tokens).is_empty());
        let passwords = config(
            &[("authorization", "passwords")],
            &[("group_name", "eng", "CAN_MANAGE")],
        );
        let f = check_entries(t, &passwords);
        assert_eq!(
            f[0].message,
            "permission_level \"CAN_MANAGE\" is not supported with authorization = \"passwords\""
        );
        assert_eq!(f[0].hint.as_deref(), Some("allowed levels: CAN_USE"));

        // The admins group is configured on passwords, refused on tokens, whose every write
        // keeps its CAN_MANAGE.
        let admins = |on: &str| {
            config(
                &[("authorization", on)],
                &[("group_name", "admins", "CAN_USE")],
            )
        };
        assert!(check_entries(t, &admins("passwords")).is_empty());
        assert_eq!(check_entries(t, &admins("tokens")).len(), 1);
        let want = [e("group_name", "eng", "CAN_USE")];
        assert_eq!(
            to_write(t, "tokens", &[], &want).unwrap(),
            [
                e("group_name", "eng", "CAN_USE"),
                e("group_name", "admins", "CAN_MANAGE")
            ]
        );
        assert_eq!(to_write(t, "passwords", &[], &want).unwrap(), want);
        // A destroy writes back the admins entry it holds, once.
        let admins = [e("group_name", "admins", "CAN_MANAGE")];
        assert_eq!(to_write(t, "tokens", &admins, &admins).unwrap(), admins);
        let held = [
            e("group_name", "admins", "CAN_USE"),
            e("group_name", "eng", "CAN_USE"),
        ];
        assert_eq!(spoken_for(t, "passwords", &held, false).len(), 2);
        assert_eq!(spoken_for(t, "tokens", &held, false).len(), 1);
        assert_eq!(t.object_type_of("passwords"), "passwords");
    }

    #[test]
    fn objects_made_elsewhere_are_named_by_the_providers_ids() {
        for (id, attr) in [
            ("/serving-endpoints/e1", "serving_endpoint_id"),
            ("/vector-search-endpoints/v", "vector_search_endpoint_id"),
            ("/apps/my-app", "app_name"),
            ("/database-instances/db", "database_instance_name"),
            ("/database-projects/p", "database_project_name"),
            ("/alertsv2/a", "alert_v2_id"),
            ("/knowledge-assistants/k", "knowledge_assistant_id"),
            ("/supervisor-agents/s", "supervisor_agent_id"),
            ("/dbsql-dashboards/d", "sql_dashboard_id"),
        ] {
            let (t, o) = parse_id(id).unwrap();
            assert_eq!(t.attr, attr, "{id}");
            assert_eq!(id_of(t, o), id);
        }
        // A legacy dashboard's older id is read as its current one.
        let (t, o) = parse_id("/sql/dashboards/d").unwrap();
        assert_eq!(id_of(t, o), "/dbsql-dashboards/d");
        let serving = parse_id("/serving-endpoints/e").unwrap().0;
        let f = check_entries(
            serving,
            &config(
                &[("serving_endpoint_id", "e")],
                &[("group_name", "eng", "CAN_USE")],
            ),
        );
        assert_eq!(
            f[0].message,
            "permission_level \"CAN_USE\" is not supported with serving_endpoint_id objects"
        );
    }
}
