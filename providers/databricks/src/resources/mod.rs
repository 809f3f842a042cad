//! The resource kinds, one file each, and what they share.

pub mod adoption;
pub mod alert;
pub mod artifact;
pub mod catalog;
pub mod cluster;
pub mod cluster_fields;
pub mod cluster_policy;
pub mod connection;
pub mod content;
pub mod credential;
pub mod dashboard;
pub mod datasets;
pub mod default_namespace_setting;
pub mod directory;
pub mod entitlements;
pub mod external_location;
pub mod file;
pub mod grant;
pub mod grants;
pub mod group;
pub mod group_member;
pub mod ingestion_gateway;
pub mod ingestion_pipeline;
pub mod instance_pool;
pub mod ip_access_list;
pub mod job;
pub mod job_run;
pub mod locations;
pub mod metastore_assignment;
pub mod mlflow_experiment;
pub mod mlflow_model;
pub mod notebook;
pub mod ownership;
pub mod permissions;
pub mod pipeline;
pub mod pipeline_spec;
pub mod place;
pub mod presets;
pub mod privileges;
pub mod query;
pub mod registered_model;
pub mod repo;
pub mod schema;
pub mod scim;
pub mod sdp_meta_flow;
pub mod sdp_meta_onboarding;
pub mod secret;
pub mod secret_acl;
pub mod secret_scope;
pub mod service_principal;
pub mod sql_endpoint;
pub mod sql_object;
pub mod storage_credential;
pub mod successor;
pub mod uc;
pub mod user;
pub mod values;
pub mod volume;
pub mod volume_files;
pub mod wire;
pub mod workspace_conf;
pub mod workspace_file;
pub mod workspace_folders;

use crate::Shared;
use crate::client::ApiError;
use brickform_core::provider::{
    ErrorKind, ProviderError, ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Map, Value as Json};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A level of Unity Catalog's namespace whose objects hold others'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    Catalog,
    Schema,
}

/// A resource kind of this provider: what the engine asks of it ([`ResourceKind`]), and what
/// only this provider's commands ask of it.
#[async_trait::async_trait]
pub trait DatabricksKind: ResourceKind {
    /// How `brickform run` starts the kind's objects and follows them to their end; `None`
    /// for kinds whose objects cannot be run.
    fn runner(&self) -> Option<Arc<dyn crate::run::Runner>> {
        None
    }

    /// The namespace level the kind's objects are, if others' objects live in them
    /// (catalogs, schemas): `brickform adopt` narrows what it lists inside them to those it
    /// listed of these.
    fn namespace(&self) -> Option<Namespace> {
        None
    }

    /// The live objects `brickform adopt` chooses among, with what its rules look at
    /// (`adopt.rs`); `None` for kinds it does not look for.
    async fn listing(
        &self,
        _client: &crate::client::Client,
        _scope: &crate::resources::adoption::Scope<'_>,
    ) -> Option<ProviderResult<Vec<crate::resources::adoption::Listed>>> {
        None
    }

    /// Whether others' work lives in or runs on the kind's objects (a catalog, a connection,
    /// a warehouse): `brickform adopt` takes one only when a rule chooses it, never because
    /// something it adopts uses it.
    fn shared_by_others(&self) -> bool {
        false
    }

    /// What `brickform adopt` writes for an object it read with `import`: by default its
    /// attributes as read. `adopted` holds the locations (see [`ResourceKind::location`]) of
    /// everything adopted with it, and of what their deletes take along.
    async fn adoption(
        &self,
        _client: &crate::client::Client,
        remote: &Remote,
        _adopted: &[brickform_core::location::Location],
    ) -> ProviderResult<crate::resources::adoption::Adoption> {
        Ok(crate::resources::adoption::Adoption {
            values: remote.attrs.clone(),
            file: None,
        })
    }
}

// The kinds that cannot be run. Runnable ones implement the trait in their own file.
impl DatabricksKind for artifact::Artifact {}
impl DatabricksKind for directory::Directory {}
impl DatabricksKind for repo::Repo {}
impl DatabricksKind for secret_scope::SecretScope {}
impl DatabricksKind for secret::Secret {}
impl DatabricksKind for secret_acl::SecretAcl {}
impl DatabricksKind for sql_endpoint::SqlEndpoint {
    fn shared_by_others(&self) -> bool {
        true
    }
}
impl DatabricksKind for privileges::GrantsKind {}
impl DatabricksKind for permissions::Permissions {}
impl DatabricksKind for job_run::JobRun {}
impl DatabricksKind for sdp_meta_flow::Flow {}
impl DatabricksKind for sdp_meta_onboarding::Onboarding {}
impl DatabricksKind for scim::Identity {}
impl DatabricksKind for group_member::GroupMember {}
impl DatabricksKind for entitlements::Entitlements {}
impl DatabricksKind for metastore_assignment::MetastoreAssignment {}
impl DatabricksKind for default_namespace_setting::DefaultNamespaceSetting {}
impl DatabricksKind for cluster_policy::ClusterPolicy {
    fn shared_by_others(&self) -> bool {
        true
    }
}
impl DatabricksKind for sql_object::SqlObject {}
impl DatabricksKind for dashboard::Dashboard {}
impl DatabricksKind for instance_pool::InstancePool {
    fn shared_by_others(&self) -> bool {
        true
    }
}
impl DatabricksKind for mlflow_experiment::MlflowExperiment {}
impl DatabricksKind for ip_access_list::IpAccessList {}
impl DatabricksKind for workspace_conf::WorkspaceConf {}
impl DatabricksKind for mlflow_model::MlflowModel {}
impl DatabricksKind for cluster::Cluster {
    fn shared_by_others(&self) -> bool {
        true
    }
}

/// Every resource kind of the provider.
pub fn all(shared: &Arc<Shared>) -> Vec<Arc<dyn DatabricksKind>> {
    vec![
        Arc::new(catalog::kind(shared.clone())),
        Arc::new(schema::kind(shared.clone())),
        Arc::new(volume::kind(shared.clone())),
        Arc::new(registered_model::kind(shared.clone())),
        Arc::new(connection::kind(shared.clone())),
        Arc::new(storage_credential::kind(shared.clone())),
        Arc::new(credential::kind(shared.clone())),
        Arc::new(external_location::kind(shared.clone())),
        Arc::new(metastore_assignment::MetastoreAssignment::new(
            shared.clone(),
        )),
        Arc::new(default_namespace_setting::DefaultNamespaceSetting::new(
            shared.clone(),
        )),
        Arc::new(workspace_conf::WorkspaceConf::new(shared.clone())),
        Arc::new(ip_access_list::IpAccessList::new(shared.clone())),
        Arc::new(grants::kind(shared.clone())),
        Arc::new(grant::kind(shared.clone())),
        Arc::new(permissions::Permissions::new(shared.clone())),
        Arc::new(notebook::kind(shared.clone())),
        Arc::new(workspace_file::kind(shared.clone())),
        Arc::new(file::kind(shared.clone())),
        Arc::new(artifact::Artifact::new(shared.clone())),
        Arc::new(directory::Directory::new(shared.clone())),
        Arc::new(repo::Repo::new(shared.clone())),
        Arc::new(secret_scope::SecretScope::new(shared.clone())),
        Arc::new(secret::Secret::new(shared.clone())),
        Arc::new(secret_acl::SecretAcl::new(shared.clone())),
        Arc::new(sql_endpoint::SqlEndpoint::new(shared.clone())),
        Arc::new(cluster_policy::ClusterPolicy::new(shared.clone())),
        Arc::new(instance_pool::InstancePool::new(shared.clone())),
        Arc::new(query::kind(shared.clone())),
        Arc::new(alert::kind(shared.clone())),
        Arc::new(dashboard::Dashboard::new(shared.clone())),
        Arc::new(cluster::Cluster::new(shared.clone())),
        Arc::new(mlflow_experiment::MlflowExperiment::new(shared.clone())),
        Arc::new(mlflow_model::MlflowModel::new(shared.clone())),
        Arc::new(pipeline::kind(shared.clone())),
        Arc::new(ingestion_gateway::kind(shared.clone())),
        Arc::new(ingestion_pipeline::kind(shared.clone())),
        Arc::new(job::Job::new(shared.clone())),
        Arc::new(job_run::JobRun::new(shared.clone())),
        Arc::new(sdp_meta_flow::Flow::new()),
        Arc::new(sdp_meta_onboarding::Onboarding::new(shared.clone())),
        Arc::new(group::kind(shared.clone())),
        Arc::new(user::kind(shared.clone())),
        Arc::new(service_principal::kind(shared.clone())),
        Arc::new(group_member::GroupMember::new(shared.clone())),
        Arc::new(entitlements::Entitlements::new(shared.clone())),
    ]
}

/// A configuration value as JSON for a request body; `None` when unset.
pub fn json_of(v: &Value) -> Option<Json> {
    match v {
        Value::Null | Value::Unknown => None,
        Value::Object(o) => {
            let m: Map<String, Json> = o
                .iter()
                .filter_map(|(k, v)| json_of(v).map(|j| (k.clone(), j)))
                .collect();
            Some(Json::Object(m))
        }
        Value::List(l) => Some(Json::Array(l.iter().filter_map(json_of).collect())),
        other => Some(other.to_json()),
    }
}

/// A request body of the given configuration attributes, leaving out unset ones.
pub fn body_of(config: &Object, fields: &[&str]) -> Json {
    let mut m = Map::new();
    for f in fields {
        if let Some(j) = config.get(*f).and_then(json_of) {
            m.insert(f.to_string(), j);
        }
    }
    Json::Object(m)
}

/// The attributes of a schema found in an API response. A sensitive attribute is read too
/// (a connection's options come back without their secrets): the engine never stores or
/// shows it, and compares the entries the service echoes with the configured ones, so a
/// host changed outside brickform is drift.
pub fn attrs_from(schema: &Schema, resp: &Json) -> Object {
    let mut out = Object::default();
    let Some(m) = resp.as_object() else {
        return out;
    };
    for a in &schema.attributes {
        if let Some(v) = m.get(a.name) {
            out.insert(a.name.to_string(), Value::from_json(v));
        }
    }
    for b in &schema.blocks {
        if let Some(v) = m.get(b.name) {
            out.insert(b.name.to_string(), Value::from_json(v));
        }
    }
    out
}

/// The prefix under which workspace paths are mounted: the service takes and answers a
/// path with or without it.
pub const WORKSPACE_MOUNT: &str = "/Workspace";

/// A workspace path as the service keeps and answers it: without the mount prefix (only a
/// whole first step: `/WorkspaceX/a` is not under it) and without a trailing slash; the
/// root is `/`.
pub fn unmounted(path: &str) -> String {
    let rest = match path.strip_prefix(WORKSPACE_MOUNT) {
        Some(r) if r.is_empty() || r.starts_with('/') => r,
        _ => path,
    };
    let trimmed = rest.trim_end_matches('/');
    if trimmed.is_empty() {
        "/".to_string()
    } else {
        trimmed.to_string()
    }
}

/// A string attribute the configuration sets to something other than the empty string (an
/// empty name or id names nothing, so a lookup takes the other one given).
pub(crate) fn given<'a>(config: &'a Object, k: &str) -> Option<&'a str> {
    str_attr(config, k).filter(|s| !s.is_empty())
}

/// The user whose home folder holds a workspace path (`/Users/<user>/…`, also under
/// `/Workspace`): the owner of what lies there.
pub fn home_owner(path: &str) -> Option<String> {
    let rest = path.strip_prefix(WORKSPACE_MOUNT).unwrap_or(path);
    let (user, _) = rest.strip_prefix("/Users/")?.split_once('/')?;
    (!user.is_empty()).then(|| user.to_string())
}

/// A workspace object found at its path (a path holds one object): owned by the user whose
/// home folder it is in, if it is in one.
pub fn existing_at(
    what: &str,
    remote: brickform_core::provider::Remote,
) -> brickform_core::provider::Existing {
    brickform_core::provider::Existing {
        what: format!("{what} {}", remote.id),
        tag: None,
        owner: home_owner(&remote.id),
        exclusive: true,
        remote,
    }
}

/// How messages word a kind's rule that exactly one of several attributes names what it is
/// on (grants on one securable, permissions on one object).
pub struct OneTarget {
    /// No attribute set: `no securable: the grants are on nothing`.
    pub none: &'static str,
    /// Two set, after `A and B both set: `: `grants are on one securable`.
    pub many: &'static str,
    /// How to fix two: `declare one resource per securable`.
    pub many_hint: &'static str,
}

/// The first of `items` whose attribute (`attr`) a configuration sets, with its value
/// (`None` while it is not known).
pub fn first_set<'a, 'c, T>(
    config: &'c Object,
    items: &'a [T],
    attr: impl Fn(&T) -> &'static str,
) -> Option<(&'a T, Option<&'c str>)> {
    items.iter().find_map(|t| match config.get(attr(t)) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some((t, Some(s.as_str()))),
        Some(_) => Some((t, None)),
    })
}

/// Exactly one of `items`' attributes set: a finding for none, and one at each attribute
/// set after the first; the one set, when it is alone.
pub fn exactly_one<'a, T>(
    config: &Object,
    items: &'a [T],
    attr: impl Fn(&T) -> &'static str,
    words: &OneTarget,
) -> (Option<&'a T>, Vec<brickform_core::provider::Finding>) {
    use brickform_core::provider::Finding;
    let set: Vec<&T> = items
        .iter()
        .filter(|t| config.get(attr(t)).is_some_and(|v| !v.is_null()))
        .collect();
    match set.as_slice() {
        [] => {
            let names: Vec<&str> = items.iter().map(&attr).collect();
            (
                None,
                vec![
                    Finding::error(&[], words.none)
                        .hint(format!("set one of {}", names.join(", "))),
                ],
            )
        }
        [one] => (Some(*one), Vec::new()),
        [first, rest @ ..] => (
            None,
            rest.iter()
                .map(|t| {
                    Finding::error(
                        &[attr(t)],
                        format!("{} and {} both set: {}", attr(first), attr(t), words.many),
                    )
                    .hint(words.many_hint)
                })
                .collect(),
        ),
    }
}

pub fn str_attr<'a>(o: &'a Object, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

pub fn bool_attr(o: &Object, k: &str) -> bool {
    o.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// Converts a client error, keeping its class.
pub fn err(e: ApiError) -> ProviderError {
    e.into()
}

/// `Ok(None)` for a not-found answer, so reads report a deleted object.
pub fn none_if_missing<T>(r: Result<T, ApiError>) -> Result<Option<T>, ProviderError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// How long a pipeline's delete waits for it to disappear: like the Terraform provider, so
/// a destroy does not go on to the schema while the pipeline's tables are still in it.
pub const PIPELINE_GONE_WAIT: Duration = Duration::from_secs(20 * 60);
/// How long a schema's or catalog's delete repeats "not empty": what was in it (a deleted
/// pipeline's tables) can take a moment to go; what someone else keeps there does not.
pub const NOT_EMPTY_WAIT: Duration = Duration::from_secs(30);

/// Repeats `probe` until it reports done (`None`), within `budget`; `Some(status)` says why
/// it is not done yet, for the error when the budget runs out. Quick at first, then once a
/// second.
pub async fn wait_until<F, Fut>(budget: Duration, what: &str, mut probe: F) -> ProviderResult<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ProviderResult<Option<String>>>,
{
    let deadline = Instant::now() + budget;
    let mut attempt: u32 = 0;
    loop {
        let Some(status) = probe().await? else {
            return Ok(());
        };
        let pause = Duration::from_millis((100u64 << attempt.min(4)).min(1_000));
        if Instant::now() + pause > deadline {
            return Err(ProviderError::new(
                ErrorKind::Conflict,
                format!("{what}: still {status} after {}s", budget.as_secs()),
            ));
        }
        attempt += 1;
        tokio::time::sleep(pause).await;
    }
}

/// The one object of a listing (`GET path`, every page, `items` holding them) whose `field`
/// is `value`: how a kind whose names are unique in a workspace finds its object by name.
pub async fn listed_by(
    client: &crate::client::Client,
    path: &str,
    items: &str,
    field: &str,
    value: &str,
) -> Result<Option<Json>, ProviderError> {
    Ok(client
        .list_all(path, &[], items, None)
        .await
        .map_err(err)?
        .into_iter()
        .find(|o| o.get(field).and_then(Json::as_str) == Some(value)))
}

/// Deletion treats not-found as success (the object is gone either way).
pub fn gone_ok(r: Result<Json, ApiError>) -> Result<(), ProviderError> {
    match r {
        Ok(_) => Ok(()),
        Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The id a create's answer gives in `field`: a string, or a number (as jobs' ids are). An
/// answer without one is an error naming the field; taken as an empty id, it would be read
/// back as if it named an object, and reported as vanished.
pub fn created_id(answer: &Json, field: &str, what: &str) -> ProviderResult<String> {
    match answer.get(field) {
        Some(Json::String(id)) if !id.is_empty() => Ok(id.clone()),
        Some(Json::Number(id)) => Ok(id.to_string()),
        _ => Err(ProviderError::other(format!(
            "the {what} create answered without {field}"
        ))),
    }
}

/// What the read right after a create found: the object, or the error that it is gone (the
/// service said it made it, so that is not a not-found to shrug off).
pub fn read_back(found: Option<Remote>, what: &str, id: &str) -> ProviderResult<Remote> {
    found.ok_or_else(|| ProviderError::not_found(format!("{what} {id} vanished after its create")))
}

/// The messages of a kind's static checks of a configuration given as JSON.
#[cfg(test)]
pub(crate) fn check_messages(kind: &dyn ResourceKind, config: Json) -> Vec<String> {
    kind.check(&decoded(kind.schema(), config))
        .into_iter()
        .map(|f| f.message)
        .collect()
}

/// A configuration as the engine decodes it: every attribute present, null when unset.
#[cfg(test)]
pub(crate) fn decoded(schema: &Schema, set: Json) -> Object {
    fn fill(schema: &Schema, set: &Map<String, Json>) -> Object {
        let mut o = Object::default();
        for a in schema.attributes.iter().filter(|a| a.can_configure()) {
            o.insert(
                a.name.into(),
                set.get(a.name).map(Value::from_json).unwrap_or(Value::Null),
            );
        }
        for b in &schema.blocks {
            let v = match (set.get(b.name), &b.nesting) {
                (Some(Json::Object(m)), _) => Value::object(fill(&b.schema, m)),
                (Some(Json::Array(a)), _) => Value::List(
                    a.iter()
                        .filter_map(Json::as_object)
                        .map(|m| Value::object(fill(&b.schema, m)))
                        .collect(),
                ),
                (_, brickform_core::provider::Nesting::Single) => Value::Null,
                _ => Value::List(Vec::new()),
            };
            o.insert(b.name.into(), v);
        }
        o
    }
    fill(schema, set.as_object().expect("an object"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A create's answer without its id (or with an empty one) is an error naming the field;
    /// a number is an id as well as a string.
    #[test]
    fn a_created_id_is_the_answers_or_an_error_naming_the_field() {
        let id = |answer: Json| created_id(&answer, "policy_id", "cluster policy");
        assert_eq!(id(json!({"policy_id": "ABC"})).unwrap(), "ABC");
        assert_eq!(id(json!({"policy_id": 42})).unwrap(), "42");
        for answer in [
            json!({}),
            json!({"policy_id": ""}),
            json!({"policy_id": null}),
        ] {
            let e = id(answer).unwrap_err();
            assert_eq!(
                e.message,
                "the cluster policy create answered without policy_id"
            );
        }
        let gone = read_back(None, "cluster policy", "ABC").unwrap_err();
        assert_eq!(gone.kind, ErrorKind::NotFound);
        assert!(gone.message.contains("ABC vanished"), "{}", gone.message);
    }

    /// Each kind declares itself protected or runnable; these are the kinds that do.
    #[test]
    fn kinds_declare_protection_and_runners() {
        let kinds = all(&Arc::new(Shared::default()));
        let names = |f: &dyn Fn(&dyn DatabricksKind) -> bool| -> Vec<&'static str> {
            let mut v: Vec<_> = kinds
                .iter()
                .filter(|k| f(k.as_ref()))
                .map(|k| k.type_name())
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            names(&|k| k.protected()),
            [
                "databricks_catalog",
                "databricks_ingestion_gateway",
                "databricks_ingestion_pipeline",
                "databricks_pipeline",
                "databricks_registered_model",
                "databricks_schema",
                "databricks_volume",
            ]
        );
        assert_eq!(
            names(&|k| k.runner().is_some()),
            [
                "databricks_ingestion_gateway",
                "databricks_ingestion_pipeline",
                "databricks_job",
                "databricks_pipeline",
            ]
        );
    }
}
