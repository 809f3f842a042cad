//! `databricks_cluster`: an all-purpose (classic) cluster. The service assigns its id
//! (`cluster_id`, also the resource's id); names need not be unique, so a create carries an
//! idempotency token (a repeated create answers the cluster the first one made), and every
//! create and edit puts brickform's ownership tag in the cluster's `custom_tags`, which
//! finds it again by name and tag after `state rm` or a lost state (`ownership.rs`; cluster
//! tags take the tag's characters). The tag is stripped on read: it is never drift.
//!
//! As in the Terraform provider (terraform-provider-databricks clusters/resource_cluster.go):
//! - a create starts the cluster (PENDING, then RUNNING) and waits for it to run unless
//!   `no_wait`; a cluster that does not start is deleted and the create fails;
//! - nothing but `idempotency_token` forces a replacement: an update edits the cluster
//!   (`clusters/edit`, the whole settings), which restarts a running one ("If a cluster is
//!   updated while in a RUNNING state, it will be restarted so that the new attributes can
//!   take effect. If a cluster is updated while in a TERMINATED state, it will remain
//!   TERMINATED": databricks-sdk-py databricks/sdk/service/compute.py, ClustersAPI.edit).
//!   The plan says so: `state` is known only after an apply that edits the cluster. An edit
//!   refused with INVALID_STATE (the cluster is starting or resizing) is repeated;
//! - a change of only `library`, `is_pinned` or `no_wait` edits nothing
//!   (clusterConfigFieldsToIgnore); a change of only the size (`num_workers`, `autoscale`)
//!   of a running cluster resizes it (clusters/resize), without a restart;
//! - libraries are installed and uninstalled with the Libraries API; a cluster that is not
//!   running is started for it and terminated again after (resourceClusterUpdate). An
//!   uninstalled library goes at the next restart (UNINSTALL_ON_RESTART), and is read as
//!   gone at once. Unlike the provider, which reads libraries only when the configuration
//!   has some, every library of the cluster is read, so one added outside brickform is
//!   drift, removed by the next apply;
//! - `is_pinned` is read from the list of pinned clusters and set with clusters/pin and
//!   clusters/unpin; a delete is a permanent delete (clusters/permanent-delete), which the
//!   service refuses for a pinned cluster until it is unpinned;
//! - the service answers a cluster it does not have with "Cluster ID does not exist", not
//!   a 404 (clusters/clusters_api.go, wrapMissingClusterError): that is a deleted cluster.
//!
//! Fields the service fills in when left out (the node types, the driver's pool, the disks,
//! the access mode, the cloud attributes) are its own, as in the provider where they are
//! Computed. An edit sends the configuration alone: what it leaves out goes back to the
//! service's default.

use super::ownership::{self, Tagged};
use super::wire::{self, Renames};
use super::{created_id, read_back};
use super::{err, str_attr};
use crate::Shared;
use crate::client::{ApiError, Client, PageSize};
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, ErrorKind, Finding, OpContext, Presence, ProviderError, ProviderResult,
    Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;
use std::time::Duration;

const BASE: &str = "/api/2.1/clusters";
const LIBRARIES: &str = "/api/2.0/libraries";
/// The pinned clusters are listed in one page of at most 100 (the provider's
/// setPinnedStatus: "pinned cluster limit - just get all of them").
pub const LIST_PAGE: PageSize = PageSize::new("page_size", "100");
const RENAMES: Renames = &[
    ("", "library", "libraries"),
    ("", "cluster_mount_info", "cluster_mount_infos"),
];
/// How long a create or update waits for the cluster: the provider's
/// DefaultProvisionTimeout.
const WAIT: Duration = Duration::from_secs(30 * 60);
/// How long an edit refused because the cluster is busy is repeated (the provider's
/// retry.RetryContext of 15 minutes).
const EDIT_WAIT: Duration = Duration::from_secs(15 * 60);
/// What is not a setting of the cluster: never sent in a create or edit body.
const NOT_SENT: &[&str] = &[
    "no_wait",
    "is_pinned",
    "libraries",
    "cluster_id",
    "id",
    "state",
    "url",
    "default_tags",
];
/// Attributes whose change alone edits nothing (the provider's
/// clusterConfigFieldsToIgnore).
const NOT_EDITED: &[&str] = &["library", "is_pinned", "no_wait"];
/// Every setting an edit writes: a change of one of them edits, so restarts, a running
/// cluster, and the cluster's `state` is known only after apply. (Checked against the
/// schema by a test.)
const EDITED: &[&str] = &[
    "num_workers",
    "policy_id",
    "apply_policy_default_values",
    "instance_pool_id",
    "driver_instance_pool_id",
    "spark_conf",
    "spark_env_vars",
    "custom_tags",
    "ssh_public_keys",
    "spark_version",
    "node_type_id",
    "driver_node_type_id",
    "autotermination_minutes",
    "cluster_name",
    "data_security_mode",
    "enable_elastic_disk",
    "enable_local_disk_encryption",
    "single_user_name",
    "runtime_engine",
    "kind",
    "is_single_node",
    "use_ml_runtime",
    "remote_disk_throughput",
    "total_initial_remote_disk_size",
    "dependency_mode",
    "idempotency_token",
    "aws_attributes",
    "azure_attributes",
    "gcp_attributes",
    "init_scripts",
    "cluster_log_conf",
    "autoscale",
    "docker_image",
    "workload_type",
    "driver_node_type_flexibility",
    "worker_node_type_flexibility",
    "cluster_mount_info",
];
const CLOUD_BLOCKS: &[&str] = &["aws_attributes", "azure_attributes", "gcp_attributes"];
/// The settings a resize changes.
const SIZE: &[&str] = &["num_workers", "autoscale"];
/// At most 10 SSH keys and 10 init scripts (the provider's SetMaxItems(10)).
const MAX_KEYS: usize = 10;
const MAX_INIT_SCRIPTS: usize = 10;
/// Library statuses still on their way (the Go SDK's ClusterLibraryStatuses.IsRetryNeeded).
const LIBRARY_PENDING: &[&str] = &["PENDING", "RESOLVING", "INSTALLING"];

pub struct Cluster {
    schema: Schema,
    shared: Arc<Shared>,
}

fn s() -> AttrType {
    AttrType::String
}

/// The kind's schema: the cluster fields jobs have (`cluster_fields.rs`), and what only an
/// all-purpose cluster has.
pub fn schema() -> Schema {
    super::cluster_fields::all_purpose(
        Schema::new()
            .describe("An all-purpose cluster. A change edits it in place, which restarts a running cluster (the plan shows its state as known after apply); a terminated one stays terminated. Libraries are installed and uninstalled without a restart. Destroy deletes it permanently.")
            .whole_writes()
            .unsupported(
                "clear_cloud_attributes_on_remove",
                "brickform always clears a cloud attributes block removed from the configuration (the service then fills in its own), as the Terraform provider does with this set to true: remove the attribute.",
            ),
    )
    .attr(
        Attribute::optional("is_pinned", AttrType::Bool)
            .server_default(false)
            .describe("Pinned: always listed, and kept from permanent deletion until unpinned (destroy unpins it)."),
    )
    .attr(
        Attribute::optional("no_wait", AttrType::Bool)
            .server_default(false)
            .describe("Do not wait for the cluster to run after a create or a restart (brickform only, as in the Terraform provider)."),
    )
    .attr(
        Attribute::optional("idempotency_token", s())
            .force_new()
            .unanswered()
            .describe("A token that makes the create safe to repeat (at most 64 characters); brickform sends its own when left out. A change replaces the cluster."),
    )
    .block(super::cluster_fields::library())
    .attr(Attribute::computed("cluster_id", s()))
    .attr(Attribute::computed("id", s()).describe("The cluster_id."))
    .attr(
        Attribute::computed("state", s())
            .derived_from(EDITED)
            .describe("PENDING, RUNNING, RESTARTING, RESIZING, TERMINATING, TERMINATED or ERROR. An update that edits a running cluster restarts it: the plan shows the state as known after apply."),
    )
    .attr(Attribute::computed("url", s()).describe("The cluster's page in the workspace."))
    .attr(
        Attribute::computed("default_tags", AttrType::Map(Box::new(s())))
            .describe("The tags the service puts on the cluster's cloud resources (Vendor, Creator, ClusterName, ClusterId)."),
    )
}

impl Cluster {
    pub fn new(shared: Arc<Shared>) -> Self {
        Cluster {
            schema: schema(),
            shared,
        }
    }
}

/// Whether an error says the cluster does not exist: a 404, or the service's own 400
/// (see the module comment).
pub fn missing(e: &ApiError, id: &str) -> bool {
    e.kind == ErrorKind::NotFound || e.message.contains(&format!("Cluster {id} does not exist"))
}

/// A cluster read, `None` when it does not exist.
pub async fn get_cluster(client: &Client, id: &str) -> ProviderResult<Option<Json>> {
    match client
        .get(&format!("{BASE}/get"), &[("cluster_id", id.to_string())])
        .await
    {
        Ok(c) => Ok(Some(c)),
        Err(e) if missing(&e, id) => Ok(None),
        Err(e) => Err(err(e)),
    }
}

/// Every cluster of the workspace (the pinned ones only with `pinned`).
pub async fn list(client: &Client, pinned: bool) -> Result<Vec<Json>, ApiError> {
    let query: Vec<(&str, String)> = if pinned {
        vec![("filter_by.is_pinned", "true".to_string())]
    } else {
        Vec::new()
    };
    client
        .list_all(&format!("{BASE}/list"), &query, "clusters", Some(LIST_PAGE))
        .await
}

/// The request body of a create or an edit: the configuration's settings, with what the
/// provider always sends (`num_workers` without `autoscale`, `autotermination_minutes`).
fn body(schema: &Schema, config: &Object) -> Json {
    let mut b = wire::to_wire(schema, config, RENAMES, "");
    if let Json::Object(m) = &mut b {
        for k in NOT_SENT {
            m.remove(*k);
        }
        if !m.contains_key("autoscale") {
            m.entry("num_workers").or_insert(json!(0));
        }
        m.entry("autotermination_minutes").or_insert(json!(60));
        // With a pool, the pool decides the node types (the provider's
        // ModifyRequestOnInstancePool).
        if m.contains_key("instance_pool_id") {
            m.remove("node_type_id");
            m.remove("driver_node_type_id");
        } else {
            m.remove("driver_instance_pool_id");
        }
    }
    b
}

/// Adds the ownership tag to a body's `custom_tags` (see the module comment).
fn tag(body: &mut Json, ctx: &OpContext) {
    if let Json::Object(m) = body {
        let tags = m
            .entry("custom_tags")
            .or_insert_with(|| Json::Object(serde_json::Map::new()));
        if let Json::Object(t) = tags {
            t.insert(ownership::OWNER_TAG.into(), json!(ownership::value(ctx)));
        }
    }
}

/// Removes the ownership tag from the attributes read: brickform's bookkeeping, not the
/// user's tags; `custom_tags` holding nothing else is unset.
fn strip(attrs: &mut Object) {
    if let Some(Value::Object(tags)) = attrs.get_mut("custom_tags") {
        Arc::make_mut(tags).shift_remove(ownership::OWNER_TAG);
        if tags.is_empty() {
            attrs.insert("custom_tags".into(), Value::Null);
        }
    }
}

/// The libraries a configuration asks for, as the Libraries API names them.
fn wanted_libraries(schema: &Schema, config: &Object) -> Vec<Json> {
    match wire::to_wire(schema, config, RENAMES, "").get("libraries") {
        Some(Json::Array(libs)) => libs.clone(),
        _ => Vec::new(),
    }
}

/// The libraries of a `libraries/cluster-status` answer that are the cluster's own and not
/// on their way out (UNINSTALL_ON_RESTART: gone at the next restart), with their status.
fn held_libraries(statuses: &Json) -> Vec<(Json, String)> {
    statuses
        .get("library_statuses")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|s| s.get("is_library_for_all_clusters") != Some(&json!(true)))
        .filter(|s| s.get("status").and_then(Json::as_str) != Some("UNINSTALL_ON_RESTART"))
        .filter_map(|s| {
            let lib = s.get("library")?.clone();
            let status = s.get("status").and_then(Json::as_str).unwrap_or_default();
            Some((lib, status.to_string()))
        })
        .collect()
}

/// The cluster as the configuration names it: the settings read, its libraries, whether it
/// is pinned, and `no_wait` as last applied (it is brickform's alone).
fn remote(
    schema: &Schema,
    cluster: &Json,
    libraries: Vec<Json>,
    pinned: bool,
    prior: &Object,
    url: String,
) -> Remote {
    let mut c = cluster.clone();
    if let Json::Object(m) = &mut c {
        m.insert("libraries".into(), Json::Array(libraries));
    }
    let mut attrs = wire::from_wire(schema, &c, RENAMES, "");
    wire::absent_is_unset(schema, &mut attrs);
    strip(&mut attrs);
    let id = cluster
        .get("cluster_id")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    attrs.insert("id".into(), Value::from(id.as_str()));
    attrs.insert("is_pinned".into(), Value::Bool(pinned));
    attrs.insert(
        "no_wait".into(),
        prior
            .get("no_wait")
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or(Value::Bool(false)),
    );
    if let Some(t) = prior.get("idempotency_token").filter(|v| !v.is_null()) {
        attrs.insert("idempotency_token".into(), t.clone());
    }
    attrs.insert("url".into(), Value::from(url));
    // Cloud attributes the configuration never set are the service's choice (it fills them
    // in for every cluster: databricks/cli libs/testserver/clusters.go, clusterFixUps), not
    // drift: the Terraform provider suppresses their diff unless the block is configured
    // (clusters/resource_cluster.go, suppressUnlessBlockDeleted).
    for k in CLOUD_BLOCKS {
        if prior.get(*k).is_none_or(Value::is_null) {
            attrs.insert((*k).to_string(), Value::Null);
        }
    }
    Remote { id, attrs }
}

fn state_of(cluster: &Json) -> &str {
    cluster.get("state").and_then(Json::as_str).unwrap_or("")
}

/// Whether a configuration's settings are those last applied: every setting an edit writes,
/// through nested blocks, with what the service fills in (optional and computed) left to it
/// where the configuration is silent, and write-only values (a Docker password, which the
/// service never answers) left out; and, at the top, the settings `skip` names.
fn same_settings(
    schema: &Schema,
    config: &Object,
    prior: &Object,
    top: bool,
    skip: &[&str],
) -> bool {
    let unset = |v: Option<&Value>| match v {
        None | Some(Value::Null) => true,
        Some(Value::List(l)) => l.is_empty(),
        _ => false,
    };
    let wanted = |name: &str| !top || !(NOT_EDITED.contains(&name) || skip.contains(&name));
    for a in schema
        .attributes
        .iter()
        .filter(|a| a.can_configure() && !a.sensitive && !a.unanswered && wanted(a.name))
    {
        let (c, p) = (config.get(a.name), prior.get(a.name));
        if unset(c) {
            let defaulted = a.server_default.as_ref().is_some_and(|d| p == Some(d));
            if a.presence != Presence::OptionalComputed && !unset(p) && !defaulted {
                return false;
            }
        } else if c != p {
            return false;
        }
    }
    for b in schema.blocks.iter().filter(|b| wanted(b.name)) {
        let items = |v: Option<&Value>| -> Vec<Object> {
            match v {
                Some(Value::Object(o)) => vec![Object::clone(o)],
                Some(Value::List(l)) => l.iter().filter_map(Value::as_object).cloned().collect(),
                _ => Vec::new(),
            }
        };
        let (c, p) = (items(config.get(b.name)), items(prior.get(b.name)));
        if c.len() != p.len() {
            return false;
        }
        if !c
            .iter()
            .zip(&p)
            .all(|(c, p)| same_settings(&b.schema, c, p, false, &[]))
        {
            return false;
        }
    }
    true
}

impl Cluster {
    fn url(&self, id: &str) -> String {
        self.shared
            .web_url(&format!("#setting/clusters/{id}/configuration"))
    }

    /// Reads the cluster with its libraries and its pin; `None` when it does not exist.
    async fn get(&self, id: &str, prior: &Object) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let Some(c) = get_cluster(&client, id).await? else {
            return Ok(None);
        };
        let libraries = self
            .library_statuses(&client, id)
            .await?
            .map(|s| held_libraries(&s).into_iter().map(|(l, _)| l).collect())
            .unwrap_or_default();
        let pinned = self.pinned(&client, id).await?;
        Ok(Some(remote(
            &self.schema,
            &c,
            libraries,
            pinned,
            prior,
            self.url(id),
        )))
    }

    async fn library_statuses(&self, client: &Client, id: &str) -> ProviderResult<Option<Json>> {
        match client
            .get(
                &format!("{LIBRARIES}/cluster-status"),
                &[("cluster_id", id.to_string())],
            )
            .await
        {
            Ok(s) => Ok(Some(s)),
            Err(e) if missing(&e, id) => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    async fn pinned(&self, client: &Client, id: &str) -> ProviderResult<bool> {
        Ok(list(client, true)
            .await
            .map_err(err)?
            .iter()
            .any(|c| c.get("cluster_id").and_then(Json::as_str) == Some(id)))
    }

    async fn set_pinned(&self, client: &Client, id: &str, pinned: bool) -> ProviderResult<()> {
        let call = if pinned { "pin" } else { "unpin" };
        client
            .idempotent()
            .post(&format!("{BASE}/{call}"), &json!({ "cluster_id": id }))
            .await
            .map_err(err)?;
        Ok(())
    }

    /// Waits for the cluster to run. One that terminates or fails instead will not run:
    /// that is an error, with the service's reason.
    async fn wait_running(&self, client: &Client, id: &str) -> ProviderResult<()> {
        super::wait_until(WAIT, &format!("cluster {id}"), || async {
            let c = get_cluster(client, id)
                .await?
                .ok_or_else(|| ProviderError::not_found(format!("cluster {id} is gone")))?;
            match state_of(&c) {
                "RUNNING" => Ok(None),
                s @ ("TERMINATED" | "TERMINATING" | "ERROR" | "UNKNOWN") => {
                    let why = c
                        .get("state_message")
                        .and_then(Json::as_str)
                        .unwrap_or_default();
                    Err(ProviderError::new(
                        ErrorKind::Conflict,
                        format!("cluster {id} failed to reach RUNNING, got {s}: {why}"),
                    ))
                }
                other => Ok(Some(other.to_string())),
            }
        })
        .await
    }

    async fn wait_terminated(&self, client: &Client, id: &str) -> ProviderResult<()> {
        super::wait_until(WAIT, &format!("cluster {id}"), || async {
            let c = get_cluster(client, id)
                .await?
                .ok_or_else(|| ProviderError::not_found(format!("cluster {id} is gone")))?;
            match state_of(&c) {
                "TERMINATED" => Ok(None),
                other => Ok(Some(other.to_string())),
            }
        })
        .await
    }

    /// Waits for the libraries asked for to be installed on a running cluster; one that
    /// failed to install fails the apply, with the service's messages.
    async fn wait_libraries(&self, client: &Client, id: &str) -> ProviderResult<()> {
        super::wait_until(WAIT, &format!("libraries of cluster {id}"), || async {
            let statuses = self.library_statuses(client, id).await?.unwrap_or_default();
            let all = statuses
                .get("library_statuses")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default();
            let failed: Vec<String> = all
                .iter()
                .filter(|s| s.get("status").and_then(Json::as_str) == Some("FAILED"))
                .map(|s| {
                    format!(
                        "{} failed: {}",
                        s.get("library").unwrap_or(&Json::Null),
                        s.get("messages").unwrap_or(&Json::Null)
                    )
                })
                .collect();
            if !failed.is_empty() {
                return Err(ProviderError::other(failed.join("\n")));
            }
            let pending = all
                .iter()
                .filter(|s| {
                    s.get("status")
                        .and_then(Json::as_str)
                        .is_some_and(|st| LIBRARY_PENDING.contains(&st))
                })
                .count();
            Ok((pending > 0).then(|| format!("{pending} libraries pending")))
        })
        .await
    }

    /// Edits the cluster, repeating an edit refused because the cluster is busy (starting,
    /// restarting, resizing), as the provider does.
    async fn edit(
        &self,
        client: &Client,
        ctx: &OpContext,
        id: &str,
        config: &Object,
    ) -> ProviderResult<()> {
        let mut sent = body(&self.schema, config);
        tag(&mut sent, ctx);
        if let Json::Object(m) = &mut sent {
            m.remove("idempotency_token");
            m.insert("cluster_id".into(), json!(id));
        }
        super::wait_until(EDIT_WAIT, &format!("edit of cluster {id}"), || async {
            match client.post(&format!("{BASE}/edit"), &sent).await {
                Ok(_) => Ok(None),
                Err(e) if e.error_code == "INVALID_STATE" => Ok(Some(e.message)),
                Err(e) if missing(&e, id) => Err(ProviderError::not_found(format!(
                    "cluster {id} no longer exists"
                ))),
                Err(e) => Err(err(e)),
            }
        })
        .await
    }

    /// Resizes a running cluster to the configured size: `autoscale`, or `num_workers`.
    async fn resize(&self, client: &Client, id: &str, config: &Object) -> ProviderResult<()> {
        let sent = body(&self.schema, config);
        let size = match sent.get("autoscale") {
            Some(a) => json!({ "cluster_id": id, "autoscale": a }),
            None => json!({
                "cluster_id": id,
                "num_workers": sent.get("num_workers").cloned().unwrap_or(json!(0)),
            }),
        };
        client
            .post(&format!("{BASE}/resize"), &size)
            .await
            .map_err(err)?;
        Ok(())
    }

    /// Makes the cluster's libraries those configured. A cluster that is not running is
    /// started for it and, if it was terminated, terminated again after (the provider's
    /// resourceClusterUpdate).
    async fn sync_libraries(
        &self,
        client: &Client,
        id: &str,
        config: &Object,
    ) -> ProviderResult<()> {
        let want = wanted_libraries(&self.schema, config);
        let have: Vec<Json> = self
            .library_statuses(client, id)
            .await?
            .map(|s| held_libraries(&s).into_iter().map(|(l, _)| l).collect())
            .unwrap_or_default();
        let install: Vec<Json> = want.iter().filter(|l| !have.contains(l)).cloned().collect();
        let uninstall: Vec<Json> = have.iter().filter(|l| !want.contains(l)).cloned().collect();
        if install.is_empty() && uninstall.is_empty() {
            return Ok(());
        }
        let c = get_cluster(client, id)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("cluster {id} no longer exists")))?;
        let was_terminated = matches!(state_of(&c), "TERMINATED" | "TERMINATING");
        if was_terminated {
            self.wait_terminated(client, id).await?;
            client
                .post(&format!("{BASE}/start"), &json!({ "cluster_id": id }))
                .await
                .map_err(err)?;
        }
        if state_of(&c) != "RUNNING" {
            self.wait_running(client, id).await?;
        }
        if !uninstall.is_empty() {
            client
                .idempotent()
                .post(
                    &format!("{LIBRARIES}/uninstall"),
                    &json!({ "cluster_id": id, "libraries": uninstall }),
                )
                .await
                .map_err(err)?;
        }
        if !install.is_empty() {
            client
                .idempotent()
                .post(
                    &format!("{LIBRARIES}/install"),
                    &json!({ "cluster_id": id, "libraries": install }),
                )
                .await
                .map_err(err)?;
        }
        self.wait_libraries(client, id).await?;
        if was_terminated {
            client
                .idempotent()
                .post(&format!("{BASE}/delete"), &json!({ "cluster_id": id }))
                .await
                .map_err(err)?;
        }
        Ok(())
    }

    async fn permanent_delete(&self, client: &Client, id: &str) -> Result<(), ApiError> {
        match client
            .idempotent()
            .post(
                &format!("{BASE}/permanent-delete"),
                &json!({ "cluster_id": id }),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if missing(&e, id) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn no_wait(config: &Object) -> bool {
    config
        .get("no_wait")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

#[async_trait]
impl ResourceKind for Cluster {
    fn type_name(&self) -> &'static str {
        "databricks_cluster"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The service's limits and the provider's conflicts.
    fn check(&self, config: &Object) -> Vec<Finding> {
        let set = |k: &str| {
            config.get(k).is_some_and(|v| match v {
                Value::Null => false,
                Value::List(l) => !l.is_empty(),
                _ => true,
            })
        };
        let mut out = Vec::new();
        if let Some(m) = config
            .get("autotermination_minutes")
            .and_then(Value::as_f64)
            && m != 0.0
            && !(10.0..=10_000.0).contains(&m)
        {
            out.push(
                Finding::error(
                    &["autotermination_minutes"],
                    format!(
                        "autotermination_minutes is 0 (never) or between 10 and 10000, not {m}"
                    ),
                )
                .hint("set 0 to keep the cluster running, or 10 minutes or more"),
            );
        }
        if let Some(n) = config.get("num_workers").and_then(Value::as_f64)
            && n < 0.0
        {
            out.push(Finding::error(
                &["num_workers"],
                format!("num_workers is not negative, not {n}"),
            ));
        }
        if set("autoscale")
            && config
                .get("num_workers")
                .and_then(Value::as_f64)
                .is_some_and(|n| n > 0.0)
        {
            out.push(
                Finding::error(
                    &["num_workers"],
                    "num_workers and autoscale both set: a cluster has a fixed size or scales",
                )
                .hint("remove num_workers, or the autoscale block"),
            );
        }
        if set("instance_pool_id") {
            for k in ["node_type_id", "driver_node_type_id"] {
                if set(k) {
                    out.push(
                        Finding::error(
                            &[k],
                            format!(
                                "{k} and instance_pool_id both set: the pool decides the node types"
                            ),
                        )
                        .hint(format!("remove {k}, or instance_pool_id")),
                    );
                }
            }
        }
        if set("driver_instance_pool_id") && !set("instance_pool_id") {
            out.push(Finding::error(
                &["driver_instance_pool_id"],
                "driver_instance_pool_id needs instance_pool_id: the workers use a pool when the driver does",
            ));
        }
        let clouds: Vec<&str> = CLOUD_BLOCKS.iter().copied().filter(|k| set(k)).collect();
        if clouds.len() > 1 {
            out.push(Finding::error(
                &[clouds[1]],
                format!(
                    "set at most one of aws_attributes, azure_attributes, gcp_attributes; this sets {}",
                    clouds.join(" and ")
                ),
            ));
        }
        for (k, max) in [
            ("ssh_public_keys", MAX_KEYS),
            ("init_scripts", MAX_INIT_SCRIPTS),
        ] {
            if let Some(Value::List(l)) = config.get(k)
                && l.len() > max
            {
                out.push(Finding::error(
                    &[k],
                    format!("a cluster has at most {max} {k}, not {}", l.len()),
                ));
            }
        }
        if config
            .get("custom_tags")
            .and_then(Value::as_object)
            .is_some_and(|t| t.contains_key(ownership::OWNER_TAG))
        {
            out.push(Finding::error(
                &["custom_tags"],
                format!(
                    "custom_tags: the key {:?} is reserved for brickform's ownership tag",
                    ownership::OWNER_TAG
                ),
            ));
        }
        if let Some(t) = config.get("idempotency_token").and_then(Value::as_str)
            && t.chars().count() > 64
        {
            out.push(Finding::error(
                &["idempotency_token"],
                "idempotency_token is at most 64 characters",
            ));
        }
        if let Some(Value::List(libs)) = config.get("library") {
            for (i, lib) in libs.iter().enumerate() {
                let Some(o) = lib.as_object() else { continue };
                let kinds = o.values().filter(|v| !v.is_null()).count();
                if kinds != 1 {
                    out.push(
                        Finding::error(
                            &[],
                            format!("a library block names exactly one of jar, egg, whl, requirements, pypi, maven, cran; this one names {kinds}"),
                        )
                        .at(vec![
                            brickform_core::value::PathStep::Key("library".into()),
                            brickform_core::value::PathStep::Index(i),
                        ]),
                    );
                }
            }
        }
        out
    }

    /// The create carries the engine's token as its idempotency token, so a create repeated
    /// after a lost answer answers the cluster the first one made.
    fn create_token(&self) -> bool {
        true
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let mut sent = body(&self.schema, config);
        tag(&mut sent, ctx);
        if let (Json::Object(m), Some(t)) = (&mut sent, ctx.create_token.as_deref())
            && !m.contains_key("idempotency_token")
        {
            // The service takes at most 64 characters.
            m.insert(
                "idempotency_token".into(),
                json!(t.chars().take(64).collect::<String>()),
            );
        }
        let (answer, _) = client
            .post_create(&format!("{BASE}/create"), &sent)
            .await
            .map_err(err)?;
        let id = created_id(&answer, "cluster_id", "cluster")?;
        let made = |e: ProviderError| async {
            match self.get(&id, config).await {
                Ok(Some(r)) => e.made(r),
                _ => e,
            }
        };
        if config.get("is_pinned").and_then(Value::as_bool) == Some(true)
            && let Err(e) = self.set_pinned(&client, &id, true).await
        {
            return Err(made(e).await);
        }
        let libraries = wanted_libraries(&self.schema, config);
        if !libraries.is_empty()
            && let Err(e) = client
                .idempotent()
                .post(
                    &format!("{LIBRARIES}/install"),
                    &json!({ "cluster_id": id, "libraries": libraries }),
                )
                .await
        {
            return Err(made(err(e)).await);
        }
        if !no_wait(config) {
            if let Err(e) = self.wait_running(&client, &id).await {
                // As the provider does: a cluster that does not start is not kept.
                let _ = self.set_pinned(&client, &id, false).await;
                let _ = self.permanent_delete(&client, &id).await;
                return Err(e);
            }
            if !libraries.is_empty()
                && let Err(e) = self.wait_libraries(&client, &id).await
            {
                return Err(made(e).await);
            }
        }
        read_back(self.get(&id, config).await?, "cluster", &id)
    }

    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        self.get(id, prior).await
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let live = get_cluster(&client, id)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("cluster {id} no longer exists")))?;
        let mut restarting = false;
        let size_only = same_settings(&self.schema, config, prior, true, SIZE);
        if size_only
            && state_of(&live) == "RUNNING"
            && !same_settings(&self.schema, config, prior, true, &[])
        {
            // Only the size changed on a running cluster: a resize, which can still serve
            // queries, instead of an edit's restart (the provider's resourceClusterUpdate).
            self.resize(&client, id, config).await?;
            restarting = true;
        } else if !same_settings(&self.schema, config, prior, true, &[]) {
            self.edit(&client, ctx, id, config).await?;
            // The edit restarted a running cluster (it may be running again already); a
            // terminated one stays so. (An edit refused while the cluster was busy was
            // repeated until it was running or terminated.)
            let after = get_cluster(&client, id).await?.ok_or_else(|| {
                ProviderError::not_found(format!("cluster {id} no longer exists"))
            })?;
            restarting = !matches!(state_of(&after), "TERMINATED" | "TERMINATING");
        }
        let pinned = config
            .get("is_pinned")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if self.pinned(&client, id).await? != pinned {
            self.set_pinned(&client, id, pinned).await?;
        }
        if restarting && !no_wait(config) {
            self.wait_running(&client, id).await?;
        }
        self.sync_libraries(&client, id, config).await?;
        self.get(id, config)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("cluster {id} no longer exists")))
    }

    /// Names need not be unique: the name narrows the lookup, the ownership tag decides. A
    /// cluster without a name is found by its token only (after a lost create answer).
    fn natural_key(&self, ctx: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, "cluster_name").map(|n| ownership::key(n, ctx))
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let Some((name, tag)) = ownership::split_key(key) else {
            return Ok(None);
        };
        let client = self.shared.client()?;
        match ownership::find_by_key(self, &client, name, tag).await? {
            // Read again with its libraries and its pin.
            Some(found) => self.get(&found.id, &Object::default()).await,
            None => Ok(None),
        }
    }

    /// Every cluster of the configured name, with the ownership tag it carries: a name need
    /// not be unique, so another's cluster of the name is not in the way.
    async fn find_existing(
        &self,
        _: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<brickform_core::provider::Existing>> {
        let Some(name) = str_attr(config, "cluster_name") else {
            return Ok(Vec::new());
        };
        let client = self.shared.client()?;
        let mut found = ownership::find_existing(self, &client, name, false).await?;
        // Read again with their libraries and their pins, which the listing does not hold.
        for e in &mut found {
            if let Some(r) = self.get(&e.remote.id, &Object::default()).await? {
                e.remote = r;
            }
        }
        Ok(found)
    }

    /// A permanent delete; a pinned cluster is unpinned first when the service refuses it
    /// ("unpin the cluster first": the provider's resourceClusterDelete).
    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        match self.permanent_delete(&client, id).await {
            Ok(()) => Ok(()),
            Err(e) if e.message.contains("unpin the cluster first") => {
                self.set_pinned(&client, id, false).await?;
                self.permanent_delete(&client, id).await.map_err(err)
            }
            Err(e) => Err(err(e)),
        }
    }
}

#[async_trait]
impl Tagged for Cluster {
    const TAGS: &'static str = "/custom_tags";
    /// The list answers each cluster's details, tags included.
    const LISTED_WITH_TAGS: bool = true;

    async fn listed(&self, client: &Client, name: &str) -> ProviderResult<Vec<Json>> {
        Ok(list(client, false)
            .await
            .map_err(err)?
            .into_iter()
            .filter(|c| c.get("cluster_name").and_then(Json::as_str) == Some(name))
            .collect())
    }
    async fn full(&self, client: &Client, listed: &Json) -> ProviderResult<Option<Json>> {
        match listed.get("cluster_id").and_then(Json::as_str) {
            Some(id) => get_cluster(client, id).await,
            None => Ok(None),
        }
    }
    fn remote(&self, full: &Json) -> Option<Remote> {
        let id = full.get("cluster_id").and_then(Json::as_str)?;
        Some(remote(
            &self.schema,
            full,
            Vec::new(),
            false,
            &Object::default(),
            self.url(id),
        ))
    }
    fn what(&self, full: &Json) -> String {
        format!(
            "cluster {} {:?}",
            full.get("cluster_id").and_then(Json::as_str).unwrap_or(""),
            full.get("cluster_name")
                .and_then(Json::as_str)
                .unwrap_or("")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind() -> Cluster {
        Cluster::new(Arc::new(Shared::default()))
    }

    fn config(v: Json) -> Object {
        super::super::decoded(kind().schema(), v)
    }

    fn base() -> Json {
        json!({"cluster_name": "c", "spark_version": "16.4.x-scala2.12", "node_type_id": "i3.xlarge"})
    }

    #[test]
    fn edited_names_every_setting_an_edit_writes() {
        let k = kind();
        let mut settings: Vec<&str> = k
            .schema()
            .attributes
            .iter()
            .filter(|a| a.can_configure())
            .map(|a| a.name)
            .chain(k.schema().blocks.iter().map(|b| b.name))
            .filter(|n| !NOT_EDITED.contains(n))
            .collect();
        let mut edited = EDITED.to_vec();
        settings.sort_unstable();
        edited.sort_unstable();
        assert_eq!(settings, edited);
    }

    #[test]
    fn a_body_sends_what_the_provider_always_sends_and_no_local_settings() {
        let k = kind();
        let mut c = base();
        c["no_wait"] = json!(true);
        c["is_pinned"] = json!(true);
        c["library"] = json!([{"jar": "/a.jar"}]);
        let b = body(k.schema(), &config(c));
        assert_eq!(b["num_workers"], 0);
        assert_eq!(b["autotermination_minutes"], 60);
        for k in ["no_wait", "is_pinned", "libraries", "library"] {
            assert!(b.get(k).is_none(), "{k}: {b}");
        }
        let mut scaled = base();
        scaled["autoscale"] = json!({"min_workers": 1, "max_workers": 4});
        scaled["autotermination_minutes"] = json!(0);
        let b = body(k.schema(), &config(scaled));
        assert!(b.get("num_workers").is_none(), "{b}");
        assert_eq!(b["autotermination_minutes"], 0);
        let mut pooled = base();
        pooled["instance_pool_id"] = json!("p");
        let b = body(k.schema(), &config(pooled));
        assert!(b.get("node_type_id").is_none(), "{b}");
        assert_eq!(
            wanted_libraries(
                k.schema(),
                &config(json!({"spark_version": "x", "library": [{"pypi": {"package": "a"}}]}))
            ),
            vec![json!({"pypi": {"package": "a"}})]
        );
    }

    #[test]
    fn mounts_go_out_and_come_back_under_their_wire_name() {
        let k = kind();
        let mut c = base();
        c["cluster_mount_info"] = json!([{
            "network_filesystem_info": {"server_address": "acct.blob.core.windows.net", "mount_options": "sec=sys"},
            "remote_mount_dir_path": "acct/test",
            "local_mount_dir_path": "/mnt/nfs-test",
        }]);
        let b = body(k.schema(), &config(c.clone()));
        assert!(b.get("cluster_mount_info").is_none(), "{b}");
        assert_eq!(
            b["cluster_mount_infos"][0]["network_filesystem_info"]["server_address"],
            "acct.blob.core.windows.net"
        );
        let mut answered = b.clone();
        answered["cluster_id"] = json!("0101-x");
        let read = remote(
            k.schema(),
            &answered,
            Vec::new(),
            false,
            &Object::default(),
            String::new(),
        );
        assert_eq!(
            read.attrs.get("cluster_mount_info"),
            config(c).get("cluster_mount_info")
        );
    }

    #[test]
    fn only_a_settings_change_edits() {
        let k = kind();
        let prior = {
            let mut p = config(base());
            p.insert("driver_node_type_id".into(), Value::from("i3.xlarge"));
            p.insert("num_workers".into(), Value::from(0i64));
            p.insert("autotermination_minutes".into(), Value::from(60i64));
            p
        };
        let same = |v: Json| same_settings(k.schema(), &config(v), &prior, true, &[]);
        assert!(
            same(base()),
            "defaults and what the service filled in are no change"
        );
        let mut pinned = base();
        pinned["is_pinned"] = json!(true);
        pinned["library"] = json!([{"jar": "/a.jar"}]);
        pinned["no_wait"] = json!(true);
        assert!(same(pinned), "pins, libraries and no_wait edit nothing");
        let mut resized = base();
        resized["num_workers"] = json!(2);
        assert!(!same(resized));
        let mut tagged = base();
        tagged["custom_tags"] = json!({"a": "b"});
        assert!(!same(tagged));
        let mut cloud = base();
        cloud["aws_attributes"] = json!({"availability": "SPOT"});
        assert!(!same(cloud));
    }

    #[test]
    fn the_ownership_tag_is_written_in_custom_tags_and_never_read() {
        let ctx = OpContext {
            address: "databricks_cluster.c".into(),
            lineage: "L".into(),
            environment: "dev".into(),
            ..OpContext::default()
        };
        let mut b = json!({"cluster_name": "c"});
        tag(&mut b, &ctx);
        assert_eq!(
            b["custom_tags"],
            json!({"brickform": "L/dev/databricks_cluster.c"})
        );
        let mut attrs = Object::default();
        attrs.insert(
            "custom_tags".into(),
            Value::from_json(&json!({"brickform": "L/dev/databricks_cluster.c"})),
        );
        strip(&mut attrs);
        assert_eq!(attrs.get("custom_tags"), Some(&Value::Null));
        let k = kind();
        let mut reserved = base();
        reserved["custom_tags"] = json!({"brickform": "x"});
        assert!(
            k.check(&config(reserved))
                .iter()
                .any(|f| f.message.contains("reserved"))
        );
    }

    #[test]
    fn libraries_on_their_way_out_are_not_the_clusters() {
        let held = held_libraries(&json!({"library_statuses": [
            {"library": {"jar": "/a.jar"}, "status": "INSTALLED"},
            {"library": {"jar": "/b.jar"}, "status": "UNINSTALL_ON_RESTART"},
            {"library": {"jar": "/c.jar"}, "status": "INSTALLED", "is_library_for_all_clusters": true},
        ]}));
        assert_eq!(
            held,
            vec![(json!({"jar": "/a.jar"}), "INSTALLED".to_string())]
        );
    }

    #[test]
    fn checks_follow_the_service_and_the_provider() {
        let k = kind();
        let msgs = |extra: Json| -> Vec<String> {
            let mut c = base();
            for (key, v) in extra.as_object().unwrap() {
                c[key] = v.clone();
            }
            k.check(&config(c)).into_iter().map(|f| f.message).collect()
        };
        assert!(msgs(json!({"autotermination_minutes": 0})).is_empty());
        assert!(msgs(json!({"autotermination_minutes": 5}))[0].contains("between 10 and 10000"));
        assert!(msgs(json!({"instance_pool_id": "p"}))[0].contains("the pool decides"));
        assert!(
            msgs(json!({"aws_attributes": {"availability": "SPOT"}, "gcp_attributes": {"availability": "ON_DEMAND_GCP"}}))[0]
                .contains("at most one of")
        );
        assert!(
            msgs(json!({"num_workers": 2, "autoscale": {"min_workers": 1, "max_workers": 2}}))[0]
                .contains("fixed size or scales")
        );
        assert!(
            msgs(json!({"library": [{"jar": "/a.jar", "whl": "/b.whl"}]}))[0]
                .contains("exactly one")
        );
        assert!(missing(
            &ApiError {
                status: 400,
                error_code: "INVALID_PARAMETER_VALUE".into(),
                message: "Cluster 0101-x does not exist".into(),
                kind: ErrorKind::InvalidInput,
                after_retry: false,
                maybe_sent: false,
                etag: None,
            },
            "0101-x"
        ));
    }
}
