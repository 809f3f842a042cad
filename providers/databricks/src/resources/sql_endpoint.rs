//! `databricks_sql_endpoint`: a Databricks SQL warehouse (the Terraform provider keeps the
//! name it had when warehouses were called endpoints). The service assigns its id; its name
//! is unique in the workspace, which finds a warehouse again after a lost create answer.
//!
//! As in the Terraform provider, a create waits for the warehouse to run (unless `no_wait`),
//! and an update sends the whole object: the edit endpoint resets what it is not sent.
//!
//! What the service decides when the configuration is silent is left to it, as the Terraform
//! provider does (terraform-provider-databricks sql/resource_sql_endpoint.go):
//! `enable_serverless_compute` defaults per workspace (true on some, and `warehouse_type`
//! then defaults to PRO: docs/resources/sql_endpoint.md; the resource makes it Computed,
//! :69, and suppresses the diff of `warehouse_type`, :85-87, and of `channel`, :62;
//! databricks/cli bundle/direct/dresources/resources.yml:682-719 does the same). A create
//! sends none of them unset; an update sends back what the service holds, so the whole
//! write does not flip them to the workspace's default.
//!
//! A delete is not immediate: the warehouse reads DELETING, then DELETED, and is still
//! listed (databricks/cli libs/databrickscfg/cfgpickers/warehouses.go:75-80 filters both
//! states out of the list). Either is gone for read, import and the name lookups; and a
//! create that meets its name still held by a warehouse being deleted waits for it to go
//! (terraform-provider-databricks issue #3379: destroy then apply at once fails with "already
//! exists").

use super::wire::{self, Renames};
use super::{created_id, read_back};
use super::{err, gone_ok, none_if_missing, str_attr};
use crate::Shared;
use crate::client::{ApiError, Client};
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, ErrorKind, Finding, OpContext, ProviderError, ProviderResult,
    Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sizes the service offers.
pub const CLUSTER_SIZES: &[&str] = &[
    "2X-Small", "X-Small", "Small", "Medium", "Large", "X-Large", "2X-Large", "3X-Large",
    "4X-Large", "5X-Large",
];
const BASE: &str = "/api/2.0/sql/warehouses";
/// How long a create waits for the warehouse to run: the SDKs' wait (the Terraform
/// provider's create timeout is 30 minutes; provisioning usually takes 10 to 20).
const START_WAIT: Duration = Duration::from_secs(20 * 60);
/// How long a create waits for a warehouse being deleted to give up its name.
const NAME_RELEASE_WAIT: Duration = Duration::from_secs(10 * 60);
const RENAMES: Renames = &[];
/// Settings the service decides when the configuration is silent (see the module comment).
const SERVICE_DECIDES: &[&str] = &["enable_serverless_compute", "warehouse_type", "channel"];
/// Attributes of this provider only, never sent.
const LOCAL: &[&str] = &["no_wait"];

pub struct SqlEndpoint {
    schema: Schema,
    shared: Arc<Shared>,
}

/// The schema, shared with the `databricks_sql_warehouse` data source.
pub fn schema() -> Schema {
    Schema::new()
        .describe("A Databricks SQL warehouse (the Terraform provider's name for it). A delete is not immediate: a warehouse reading DELETING or DELETED is gone, and a create whose name one being deleted still holds waits for it (up to 10 minutes).")
        .whole_writes()
        .attr(Attribute::required("name", AttrType::String).describe("Unique in the workspace, shorter than 100 characters."))
        .attr(Attribute::required("cluster_size", AttrType::String).one_of(CLUSTER_SIZES))
        .attr(
            Attribute::optional("min_num_clusters", AttrType::Number)
                .server_default(1)
                .describe("Clusters kept running, 1 to 30."),
        )
        .attr(
            Attribute::optional("max_num_clusters", AttrType::Number)
                .describe("At most 40, at least min_num_clusters; min_num_clusters when left out, as the service defaults it."),
        )
        .attr(
            Attribute::optional("auto_stop_mins", AttrType::Number)
                .server_default(120)
                .describe("Idle minutes before the warehouse stops: 0 (never) or at least 10 (5 for serverless)."),
        )
        .attr(Attribute::optional("enable_photon", AttrType::Bool).server_default(true))
        .attr(
            Attribute::optional_computed("enable_serverless_compute", AttrType::Bool)
                .describe("Serverless compute; needs warehouse_type PRO. When left out, the workspace's default (true on some workspaces), kept as the service has it: not drift, and not sent by a create."),
        )
        .attr(
            Attribute::optional_computed("warehouse_type", AttrType::String)
                .one_of(&["PRO", "CLASSIC"])
                .describe("PRO or CLASSIC; when left out, PRO for a serverless warehouse and CLASSIC otherwise, as the service defaults it, and kept as the service has it."),
        )
        .attr(
            Attribute::optional("spot_instance_policy", AttrType::String)
                .one_of(&["COST_OPTIMIZED", "RELIABILITY_OPTIMIZED"])
                .server_default("COST_OPTIMIZED"),
        )
        .attr(Attribute::optional("instance_profile_arn", AttrType::String))
        .attr(
            Attribute::optional("no_wait", AttrType::Bool)
                .server_default(false)
                .describe("Do not wait for the warehouse to run after it is created (brickform only, as in the Terraform provider)."),
        )
        .block(
            BlockType::single(
                "channel",
                Schema::new()
                    .attr(
                        Attribute::optional_computed("name", AttrType::String).one_of(&[
                            "CHANNEL_NAME_CURRENT",
                            "CHANNEL_NAME_PREVIEW",
                            "CHANNEL_NAME_PREVIOUS",
                            "CHANNEL_NAME_CUSTOM",
                        ]),
                    )
                    .attr(Attribute::optional_computed("dbsql_version", AttrType::String)),
            )
            .describe("The Databricks SQL release channel. Left out, the service manages it (the current one for a new warehouse): what it holds is not drift, and an update keeps it."),
        )
        .block(
            BlockType::single(
                "tags",
                Schema::new().block(BlockType::list(
                    "custom_tags",
                    Schema::new()
                        .attr(Attribute::required("key", AttrType::String))
                        .attr(Attribute::required("value", AttrType::String)),
                )),
            )
            .describe("Tags put on every cloud resource of the warehouse (fewer than 45)."),
        )
        .attr(Attribute::computed("id", AttrType::String))
        .attr(Attribute::computed("state", AttrType::String).describe("STARTING, RUNNING, STOPPING, STOPPED, DELETING or DELETED."))
        .attr(Attribute::computed("num_clusters", AttrType::Number))
        .attr(Attribute::computed("num_active_sessions", AttrType::Number))
        .attr(Attribute::computed("creator_name", AttrType::String))
        .attr(Attribute::computed("jdbc_url", AttrType::String))
        .attr(
            Attribute::computed("odbc_params", AttrType::Map(Box::new(AttrType::Any)))
                .describe("hostname, path, protocol and port."),
        )
        .attr(Attribute::computed("health", AttrType::Map(Box::new(AttrType::Any))))
        .attr(
            Attribute::computed("data_source_id", AttrType::String)
                .describe("The id of the Databricks SQL data source of the warehouse (deprecated by the service)."),
        )
}

impl SqlEndpoint {
    pub fn new(shared: Arc<Shared>) -> Self {
        SqlEndpoint {
            schema: schema(),
            shared,
        }
    }
}

/// The defaults the service gives settings that depend on others, filled in where the
/// configuration leaves them out: an edit writes the whole object, so an unset one goes
/// back to this default, and a live value other than it is drift. Inputs not known yet
/// leave what depends on them unknown. (Not `warehouse_type`: it follows
/// `enable_serverless_compute`, whose default is the workspace's, and is left to the
/// service.)
fn derived_defaults(config: &Object) -> Object {
    let mut out = Object::default();
    let unset = |k: &str| config.get(k).is_none_or(Value::is_null);
    if unset("max_num_clusters") {
        let min = config
            .get("min_num_clusters")
            .cloned()
            .unwrap_or(Value::Null);
        out.insert(
            "max_num_clusters".into(),
            if min.is_null() {
                Value::from(1i64)
            } else {
                min
            },
        );
    }
    out
}

/// What an update sends: the configuration, and where it leaves a setting to the service,
/// what the service holds (`held`: read just before), so that the whole write does not put it back to the
/// workspace's default (the Terraform provider sends its state's value: the attribute is
/// Computed). Not a value the configuration now contradicts: a serverless warehouse is a
/// PRO one, so configured CLASSIC drops a held serverless and configured serverless a
/// held CLASSIC (the service then decides again).
fn with_held(config: &Object, held: &Object) -> Object {
    let mut out = config.clone();
    let unset = |k: &str| config.get(k).is_none_or(Value::is_null);
    for k in SERVICE_DECIDES {
        if unset(k)
            && let Some(v) = held.get(*k).filter(|v| !v.is_null() && v.is_wholly_known())
        {
            out.insert((*k).to_string(), v.clone());
        }
    }
    if unset("enable_serverless_compute") && str_attr(config, "warehouse_type") == Some("CLASSIC") {
        out.insert("enable_serverless_compute".into(), Value::Null);
    }
    if unset("warehouse_type")
        && config.get("enable_serverless_compute") == Some(&Value::Bool(true))
        && str_attr(&out, "warehouse_type") == Some("CLASSIC")
    {
        out.insert("warehouse_type".into(), Value::Null);
    }
    out
}

/// Whether the service is deleting the warehouse, or has deleted it: gone for brickform.
pub fn deleted(w: &Json) -> bool {
    matches!(
        w.get("state").and_then(Json::as_str),
        Some("DELETING" | "DELETED")
    )
}

/// The request body of a create or an edit: the whole configuration, without what only
/// brickform reads.
fn body(schema: &Schema, config: &Object) -> Json {
    let mut b = wire::to_wire(schema, config, RENAMES, "");
    if let Json::Object(m) = &mut b {
        for k in LOCAL {
            m.remove(*k);
        }
        // An empty tags block is no tags.
        if m.get("tags")
            .is_some_and(|t| t.get("custom_tags").is_none())
        {
            m.remove("tags");
        }
    }
    b
}

/// The warehouse as the service reports it, with its data source's id.
async fn get(
    client: &Client,
    schema: &Schema,
    id: &str,
    prior: &Object,
) -> ProviderResult<Option<Remote>> {
    let Some(w) = none_if_missing(client.get(&format!("{BASE}/{id}"), &[]).await)? else {
        return Ok(None);
    };
    // Still read while it is being deleted, and for a while after: gone all the same.
    if deleted(&w) {
        return Ok(None);
    }
    Ok(Some(remote(
        schema,
        &w,
        data_source_id(client, id).await,
        prior,
    )))
}

/// The Databricks SQL data source of a warehouse. Like the Terraform provider, a failed
/// listing leaves it unknown rather than failing the read.
pub async fn data_source_id(client: &Client, warehouse: &str) -> Option<String> {
    let list = client
        .get("/api/2.0/preview/sql/data_sources", &[])
        .await
        .ok()?;
    list.as_array()?
        .iter()
        .find(|d| d.get("warehouse_id").and_then(Json::as_str) == Some(warehouse))
        .and_then(|d| d.get("id").and_then(Json::as_str))
        .map(str::to_string)
}

pub fn remote(schema: &Schema, w: &Json, data_source: Option<String>, prior: &Object) -> Remote {
    let mut attrs = wire::from_wire(schema, w, RENAMES, "");
    // The service reports no tags as an empty object: that is no tags block.
    if matches!(attrs.get("tags"), Some(Value::Object(t)) if matches!(t.get("custom_tags"), None | Some(Value::Null)))
        || matches!(attrs.get("tags"), Some(Value::Object(t)) if matches!(t.get("custom_tags"), Some(Value::List(l)) if l.is_empty()))
    {
        attrs.insert("tags".into(), Value::Null);
    }
    if let Some(ds) = data_source {
        attrs.insert("data_source_id".into(), Value::from(ds));
    }
    if let Some(v) = prior.get("no_wait") {
        attrs.insert("no_wait".into(), v.clone());
    }
    let id = w
        .get("id")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    Remote { id, attrs }
}

/// Every warehouse of the workspace, those being deleted or deleted left out.
pub async fn list(client: &Client) -> Result<Vec<Json>, ApiError> {
    Ok(list_all(client)
        .await?
        .into_iter()
        .filter(|w| !deleted(w))
        .collect())
}

/// Every warehouse the service lists: deleted ones too.
async fn list_all(client: &Client) -> Result<Vec<Json>, ApiError> {
    client.list_all(BASE, &[], "warehouses", None).await
}

/// Whether the create error says the name is taken.
fn name_taken(e: &ApiError) -> bool {
    e.kind == ErrorKind::AlreadyExists || e.status == 409
}

impl SqlEndpoint {
    /// Waits for a new warehouse to run. A warehouse that stops or goes away instead will not
    /// run: that fails the create, as in the SDKs.
    async fn wait_running(&self, client: &Client, id: &str) -> ProviderResult<()> {
        super::wait_until(START_WAIT, &format!("SQL warehouse {id}"), || async {
            let w = client
                .get(&format!("{BASE}/{id}"), &[])
                .await
                .map_err(err)?;
            let state = w.get("state").and_then(Json::as_str).unwrap_or("");
            match state {
                "RUNNING" => Ok(None),
                "STOPPED" | "DELETED" | "DELETING" => Err(ProviderError::new(
                    ErrorKind::Conflict,
                    format!("SQL warehouse {id} failed to reach RUNNING, got {state}"),
                )),
                other => Ok(Some(other.to_string())),
            }
        })
        .await
    }

    /// Creates the warehouse; its id. A name still held by a warehouse being deleted
    /// (DELETING) is waited for, within [`NAME_RELEASE_WAIT`], and the create sent again;
    /// a name a live warehouse holds fails the create.
    async fn create_call(
        &self,
        client: &Client,
        name: &str,
        body: &Json,
    ) -> ProviderResult<String> {
        let deadline = Instant::now() + NAME_RELEASE_WAIT;
        let mut attempt: u32 = 0;
        loop {
            let e = match client.post_create(BASE, body).await {
                Ok((resp, _)) => {
                    return created_id(&resp, "id", "SQL warehouse");
                }
                Err(e) => e,
            };
            // A repeat after a lost answer finds the name taken by the warehouse the first
            // attempt made: names are unique, so it is that one.
            if e.after_retry
                && let Some(w) = self.by_name(client, name).await?
            {
                return Ok(w
                    .get("id")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string());
            }
            if !name_taken(&e) {
                return Err(err(e));
            }
            let named: Vec<Json> = list_all(client)
                .await
                .map_err(err)?
                .into_iter()
                .filter(|w| w.get("name").and_then(Json::as_str) == Some(name))
                .collect();
            let held_by_deleting = !named.is_empty() && named.iter().all(deleted);
            let pause = Duration::from_millis((250u64 << attempt.min(3)).min(2_000));
            if !held_by_deleting || Instant::now() + pause > deadline {
                let mut e = err(e);
                if held_by_deleting {
                    e = e.with_detail(format!(
                        "a SQL warehouse of that name is still being deleted after {}s",
                        NAME_RELEASE_WAIT.as_secs()
                    ));
                }
                return Err(e);
            }
            attempt += 1;
            tokio::time::sleep(pause).await;
        }
    }

    async fn by_name(&self, client: &Client, name: &str) -> ProviderResult<Option<Json>> {
        Ok(list(client)
            .await
            .map_err(err)?
            .into_iter()
            .find(|w| w.get("name").and_then(Json::as_str) == Some(name)))
    }
}

#[async_trait]
impl ResourceKind for SqlEndpoint {
    fn type_name(&self) -> &'static str {
        "databricks_sql_endpoint"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn prepare_config(
        &self,
        config: &mut Object,
        _base_dir: &std::path::Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        for (k, v) in derived_defaults(config) {
            config.insert(k, v);
        }
        Ok(())
    }

    fn plan_computed(&self, config: &Object) -> Object {
        derived_defaults(config)
    }

    /// The service's limits, where the configuration knows them.
    fn check(&self, config: &Object) -> Vec<Finding> {
        let num = |k: &str| config.get(k).and_then(Value::as_f64);
        let mut out = Vec::new();
        // Left out, serverless is the workspace's default: not known here.
        let serverless_set = config
            .get("enable_serverless_compute")
            .and_then(Value::as_bool);
        let serverless = serverless_set.unwrap_or(false);
        if let Some(name) = config.get("name").and_then(Value::as_str)
            && name.chars().count() >= 100
        {
            out.push(Finding::error(
                &["name"],
                format!(
                    "a warehouse name is shorter than 100 characters; this one has {}",
                    name.chars().count()
                ),
            ));
        }
        if let Some(mins) = num("auto_stop_mins") {
            // A CLASSIC warehouse is never serverless.
            let not_serverless = serverless_set == Some(false)
                || str_attr(config, "warehouse_type") == Some("CLASSIC");
            let least = if not_serverless { 10.0 } else { 5.0 };
            if serverless_set.is_none() && !not_serverless && (5.0..10.0).contains(&mins) {
                out.push(
                    Finding::warning(
                        &["auto_stop_mins"],
                        format!("auto_stop_mins below 10 ({mins}) is for a serverless warehouse only, and enable_serverless_compute is left to the workspace's default"),
                    )
                    .hint("set enable_serverless_compute = true, or auto_stop_mins = 10 or more"),
                );
            }
            if mins < 0.0 || (mins > 0.0 && mins < least) {
                out.push(
                    Finding::error(
                        &["auto_stop_mins"],
                        format!(
                            "auto_stop_mins is 0 (no auto-stop) or at least {least} minutes{}, not {mins}",
                            if serverless { " for a serverless warehouse" } else if not_serverless { "" } else { " for a serverless warehouse (10 for others)" }
                        ),
                    )
                    .hint(format!("set auto_stop_mins = {least} or more, or 0 to keep the warehouse running")),
                );
            }
        }
        if let Some(min) = num("min_num_clusters")
            && !(1.0..=30.0).contains(&min)
        {
            out.push(Finding::error(
                &["min_num_clusters"],
                format!("min_num_clusters is between 1 and 30, not {min}"),
            ));
        }
        if let Some(max) = num("max_num_clusters") {
            if !(1.0..=40.0).contains(&max) {
                out.push(Finding::error(
                    &["max_num_clusters"],
                    format!("max_num_clusters is between 1 and 40, not {max}"),
                ));
            } else if let Some(min) = num("min_num_clusters")
                && max < min
            {
                out.push(Finding::error(
                    &["max_num_clusters"],
                    format!("max_num_clusters ({max}) is less than min_num_clusters ({min})"),
                ));
            }
        }
        if serverless && str_attr(config, "warehouse_type") == Some("CLASSIC") {
            out.push(
                Finding::error(
                    &["warehouse_type"],
                    "a serverless warehouse (enable_serverless_compute = true) is a PRO one",
                )
                .hint("set warehouse_type = \"PRO\", or leave it out"),
            );
        }
        if let Some(Value::Object(c)) = config.get("channel")
            && str_attr(c, "name") == Some("CHANNEL_NAME_CUSTOM")
            && c.get("dbsql_version").is_none_or(Value::is_null)
        {
            out.push(Finding::error(
                &["channel", "dbsql_version"],
                "a CHANNEL_NAME_CUSTOM channel names its dbsql_version",
            ));
        }
        out
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let name = str_attr(config, "name").unwrap_or_default();
        let id = self
            .create_call(&client, name, &body(&self.schema, config))
            .await?;
        if !config
            .get("no_wait")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            && let Err(e) = self.wait_running(&client, &id).await
        {
            // As the Terraform provider does: a warehouse that does not start is not kept.
            let _ = client
                .idempotent()
                .delete(&format!("{BASE}/{id}"), &[])
                .await;
            return Err(e);
        }
        read_back(self.read(ctx, &id, config).await?, "SQL warehouse", &id)
    }

    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        get(&client, &self.schema, id, prior).await
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        // What the service holds now: the last recorded values may be older than a change
        // it made since (a channel it moved), which the plan keeps.
        let unset = SERVICE_DECIDES
            .iter()
            .any(|k| config.get(*k).is_none_or(Value::is_null));
        let live = match unset {
            true => none_if_missing(client.get(&format!("{BASE}/{id}"), &[]).await)?
                .map(|w| wire::from_wire(&self.schema, &w, RENAMES, "")),
            false => None,
        };
        let sent = with_held(config, live.as_ref().unwrap_or(prior));
        client
            .idempotent()
            .post(&format!("{BASE}/{id}/edit"), &body(&self.schema, &sent))
            .await
            .map_err(err)?;
        self.read(ctx, id, config)
            .await?
            .ok_or_else(|| ProviderError::not_found(format!("SQL warehouse {id} no longer exists")))
    }

    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        gone_ok(
            client
                .idempotent()
                .delete(&format!("{BASE}/{id}"), &[])
                .await,
        )
    }

    /// Names are unique in a workspace: the name finds the warehouse.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, "name").map(str::to_string)
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let Some(w) = self.by_name(&client, key).await? else {
            return Ok(None);
        };
        let id = w.get("id").and_then(Json::as_str).unwrap_or_default();
        let ds = data_source_id(&client, id).await;
        Ok(Some(remote(&self.schema, &w, ds, &Object::default())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind() -> SqlEndpoint {
        SqlEndpoint::new(Arc::new(Shared::default()))
    }

    fn messages(config: Json) -> Vec<String> {
        super::super::check_messages(&kind(), config)
    }

    #[test]
    fn checks_follow_the_services_limits() {
        assert!(
            messages(json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 10}))
                .is_empty()
        );
        assert!(messages(json!({"name": "w".repeat(99), "cluster_size": "Small"})).is_empty());
        assert!(
            messages(json!({"name": "w".repeat(100), "cluster_size": "Small"}))
                .iter()
                .any(|m| m.contains("shorter than 100 characters; this one has 100"))
        );
        assert!(
            messages(json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 0})).is_empty()
        );
        assert!(messages(json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 5, "enable_serverless_compute": true})).is_empty());
        assert_eq!(
            messages(
                json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 5, "enable_serverless_compute": false})
            ),
            ["auto_stop_mins is 0 (no auto-stop) or at least 10 minutes, not 5"]
        );
        assert_eq!(
            messages(
                json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 5, "warehouse_type": "CLASSIC"})
            ),
            ["auto_stop_mins is 0 (no auto-stop) or at least 10 minutes, not 5"]
        );
        // Left out, serverless is the workspace's default: 5 may do, with a warning.
        let k = kind();
        let found = k.check(&super::super::decoded(
            k.schema(),
            json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 5}),
        ));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].message.contains("left to the workspace's default"));
        assert_eq!(
            messages(json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 4})),
            [
                "auto_stop_mins is 0 (no auto-stop) or at least 5 minutes for a serverless warehouse (10 for others), not 4"
            ]
        );
        assert_eq!(
            messages(
                json!({"name": "w", "cluster_size": "Small", "min_num_clusters": 3, "max_num_clusters": 2})
            ),
            ["max_num_clusters (2) is less than min_num_clusters (3)"]
        );
        assert_eq!(
            messages(json!({"name": "w", "cluster_size": "Small", "max_num_clusters": 41})),
            ["max_num_clusters is between 1 and 40, not 41"]
        );
        assert_eq!(
            messages(
                json!({"name": "w", "cluster_size": "Small", "enable_serverless_compute": true, "warehouse_type": "CLASSIC"})
            ),
            ["a serverless warehouse (enable_serverless_compute = true) is a PRO one"]
        );
    }

    #[test]
    fn dependent_defaults_follow_the_service() {
        let k = kind();
        let d = |v: Json| derived_defaults(&super::super::decoded(k.schema(), v));
        let plain = d(json!({"name": "w", "cluster_size": "Small"}));
        assert_eq!(plain.get("max_num_clusters"), Some(&Value::from(1i64)));
        // The type follows serverless, which defaults per workspace: the service's.
        assert_eq!(plain.get("warehouse_type"), None);
        let scaled = d(
            json!({"name": "w", "cluster_size": "Small", "min_num_clusters": 3, "enable_serverless_compute": true}),
        );
        assert_eq!(scaled.get("max_num_clusters"), Some(&Value::from(3i64)));
        assert_eq!(scaled.get("warehouse_type"), None);
        let set = d(
            json!({"name": "w", "cluster_size": "Small", "max_num_clusters": 2, "warehouse_type": "PRO"}),
        );
        assert!(set.is_empty(), "{set:?}");
    }

    #[test]
    fn a_create_sends_no_setting_the_service_decides_and_an_update_sends_back_what_it_holds() {
        let k = kind();
        let mut config =
            super::super::decoded(k.schema(), json!({"name": "w", "cluster_size": "Small"}));
        k.prepare_config(&mut config, std::path::Path::new("."))
            .unwrap();
        assert_eq!(
            body(k.schema(), &config),
            json!({"name": "w", "cluster_size": "Small", "max_num_clusters": 1})
        );
        let held = super::super::decoded(
            k.schema(),
            json!({"name": "w", "cluster_size": "Small", "enable_serverless_compute": true,
                   "warehouse_type": "PRO", "channel": {"name": "CHANNEL_NAME_PREVIEW"}}),
        );
        assert_eq!(
            body(k.schema(), &with_held(&config, &held)),
            json!({"name": "w", "cluster_size": "Small", "max_num_clusters": 1,
                   "enable_serverless_compute": true, "warehouse_type": "PRO",
                   "channel": {"name": "CHANNEL_NAME_PREVIEW"}})
        );
        // A configured CLASSIC type is not sent with a held serverless, nor configured
        // serverless with a held CLASSIC type.
        let mut classic = config.clone();
        classic.insert("warehouse_type".into(), Value::from("CLASSIC"));
        let sent = with_held(&classic, &held);
        assert_eq!(sent.get("enable_serverless_compute"), Some(&Value::Null));
        let mut serverless = config.clone();
        serverless.insert("enable_serverless_compute".into(), Value::from(true));
        let mut held_classic = held.clone();
        held_classic.insert("warehouse_type".into(), Value::from("CLASSIC"));
        let sent = with_held(&serverless, &held_classic);
        assert_eq!(sent.get("warehouse_type"), Some(&Value::Null));
    }

    #[test]
    fn a_warehouse_being_deleted_is_gone() {
        for state in ["DELETING", "DELETED"] {
            assert!(deleted(&json!({"id": "a", "state": state})));
        }
        assert!(!deleted(&json!({"id": "a", "state": "STOPPED"})));
    }

    #[test]
    fn the_body_is_the_whole_configuration_without_no_wait() {
        let k = kind();
        let config = super::super::decoded(
            k.schema(),
            json!({"name": "w", "cluster_size": "Small", "no_wait": true, "tags": {"custom_tags": [{"key": "a", "value": "b"}]}}),
        );
        assert_eq!(
            body(k.schema(), &config),
            json!({"name": "w", "cluster_size": "Small", "tags": {"custom_tags": [{"key": "a", "value": "b"}]}})
        );
    }

    #[test]
    fn empty_tags_read_as_no_block_and_no_wait_is_kept() {
        let k = kind();
        let mut prior = Object::default();
        prior.insert("no_wait".into(), Value::from(true));
        let r = remote(
            k.schema(),
            &json!({"id": "abc", "name": "w", "tags": {}, "state": "RUNNING"}),
            Some("ds".into()),
            &prior,
        );
        assert_eq!(r.id, "abc");
        assert_eq!(r.attrs.get("tags"), Some(&Value::Null));
        assert_eq!(r.attrs.get("data_source_id"), Some(&Value::from("ds")));
        assert_eq!(r.attrs.get("no_wait"), Some(&Value::from(true)));
    }
}
