//! What `databricks_pipeline`, `databricks_ingestion_gateway` and
//! `databricks_ingestion_pipeline` share: all three are the same REST object (a pipeline at
//! `/api/2.0/pipelines`), so they share one life cycle and one translation between HCL and
//! the wire.
//!
//! - Create is `POST /api/2.0/pipelines` with the whole spec; update is a full-spec
//!   `PUT /api/2.0/pipelines/{id}` (an edit replaces the spec, so every configured field is
//!   sent every time, and a field left out is a field cleared); delete is
//!   `DELETE …?cascade=` and treats not-found as success.
//! - Set versus unset: a configured `false`, `0` or `""` is sent (terraform-provider-databricks
//!   PR #5964: `serverless = false` must reach the service); only null means "not set".
//! - Reads are shaped exactly like the configuration the engine decodes (every attribute of a
//!   nested block present, null when unset; list blocks as lists), so equal means equal.
//!   Inside nested blocks, a value equal to its server default is masked to null when the
//!   user left it unset, and an empty list the service drops keeps the user's `[]`. The diff
//!   now understands both at every depth; the masking stays because states written since
//!   hold the masked reads as the service's last answer, and reading differently would show
//!   those fields as drift once.
//! - Lakeflow Connect kinds take their definition's fields at the top level; the kind says
//!   which HCL names live inside `gateway_definition` / `ingestion_definition` on the wire.
//! - Ownership: every pipeline carries the tag `brickform = "<lineage>/<environment>/<address>"`
//!   (see `ownership`), added on create and update and stripped on read, so an interrupted
//!   create or a lost state entry can be found again.

use super::created_id;
use super::place::Place;
use super::{err, gone_ok, json_of, none_if_missing, str_attr};
use crate::Shared;
use crate::client::{Client, PageSize};
use async_trait::async_trait;
use brickform_core::fan_out;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, BlockType, ErrorKind, Existing, Nesting, Normalize, OpContext,
    PrepareError, ProviderError, ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::values_equal;
use brickform_core::value::{Object, Value};
use serde_json::{Map, Value as Json};
use std::sync::Arc;

pub use super::ownership::OWNER_TAG;
use super::ownership::{self, Tagged};

/// The page size of the pipelines list: its largest page.
pub const LIST_PAGE: PageSize = PageSize::new("max_results", "100");

/// Attributes only brickform knows: never sent in the spec, kept from the prior state on read.
const LOCAL: &[&str] = &["cascade"];
/// Attributes sent but never returned by the service: kept from the prior state on read.
const INPUT_ONLY: &[&str] = &["allow_duplicate_names"];

// ---------- schema building blocks ----------

pub fn string() -> AttrType {
    AttrType::String
}
pub fn strings() -> AttrType {
    AttrType::strings()
}
pub fn string_map() -> AttrType {
    AttrType::string_map()
}

/// `notifications[]` on the wire.
fn notification_block() -> BlockType {
    BlockType::list(
        "notification",
        Schema::new()
            .attr(Attribute::optional("email_recipients", strings()))
            .attr(Attribute::optional("alerts", strings()).one_of(&[
                "on-update-success",
                "on-update-failure",
                "on-update-fatal-failure",
                "on-flow-failure",
            ])),
    )
}

fn run_as_block() -> BlockType {
    BlockType::single(
        "run_as",
        Schema::new()
            .attr(Attribute::optional("user_name", string()))
            .attr(Attribute::optional("service_principal_name", string()))
            .attr(Attribute::optional("group_name", string())),
    )
    .describe("Identity the pipeline runs as: exactly one of the three.")
}

/// The attributes and blocks every pipeline kind has: the pipeline fields that apply to
/// Lakeflow Connect gateways and ingestion pipelines too.
/// `name_required`: Lakeflow Connect kinds are found by their name; a
/// `databricks_pipeline`'s is optional, as in the Terraform provider.
pub fn common_schema(description: &'static str, name_required: bool) -> Schema {
    let name = if name_required {
        Attribute::required("name", string()).describe("Display name.")
    } else {
        // Whatever the service names a pipeline created without one is its own choice,
        // not drift.
        Attribute::optional_computed("name", string())
            .describe("Display name; optional, as in the Terraform provider.")
    };
    Schema::new()
        .describe(description)
        // Every update is a full-spec PUT: what the configuration leaves out is reset.
        .whole_writes()
        .attr(name)
        .attr(
            Attribute::optional("catalog", string())
                .normalize(Normalize::LowerCase)
                .describe("Unity Catalog catalog to publish into; changed in place."),
        )
        .attr(
            Attribute::optional("schema", string())
                .normalize(Normalize::LowerCase)
                .describe("Default schema; changed in place."),
        )
        .attr(
            Attribute::optional("serverless", AttrType::Bool)
                .describe("Serverless compute. `false` is sent when set (not the same as unset)."),
        )
        .attr(Attribute::optional("continuous", AttrType::Bool).server_default(false))
        .attr(Attribute::optional("development", AttrType::Bool).server_default(false))
        .attr(Attribute::optional("photon", AttrType::Bool).server_default(false))
        .attr(
            // The service takes these in any case and reports them upper-case (the Terraform
            // provider validates them case-insensitively and suppresses case-only diffs).
            Attribute::optional("channel", string())
                .server_default("CURRENT")
                .one_of_any_case(&["CURRENT", "PREVIEW"])
                .normalize(Normalize::UpperCase)
                .describe("The runtime release channel."),
        )
        .attr(
            Attribute::optional("edition", string())
                .server_default("ADVANCED")
                .one_of_any_case(&["CORE", "PRO", "ADVANCED"])
                .normalize(Normalize::UpperCase)
                .describe("The product edition."),
        )
        .attr(Attribute::optional("configuration", string_map()))
        .attr(Attribute::optional("tags", string_map()).describe(
            "Tags (at most 24: brickform adds its `brickform` ownership tag, and hides it).",
        ))
        .attr(Attribute::optional("budget_policy_id", string()))
        .attr(
            Attribute::optional("allow_duplicate_names", AttrType::Bool)
                .describe("Allow another pipeline with the same name (sent, never read back)."),
        )
        .attr(
            Attribute::optional("cascade", AttrType::Bool)
                .server_default(true)
                .describe("On destroy, also drop the pipeline's materialized views and streaming tables (the API's `cascade`; default true, as on the service). brickform-only: changing it changes nothing remotely."),
        )
        .block(super::cluster_fields::pipeline_cluster())
        .block(notification_block())
        .block(run_as_block())
        .attr(Attribute::computed("id", string()).describe("The pipeline_id."))
        // Turning `continuous` on starts the pipeline, off stops it; every edit moves
        // last_modified.
        .attr(
            Attribute::computed("state", string())
                .one_of(&[
                    "DEPLOYING",
                    "STARTING",
                    "RUNNING",
                    "STOPPING",
                    "DELETED",
                    "RECOVERING",
                    "FAILED",
                    "RESETTING",
                    "IDLE",
                ])
                .derived_from(&["continuous"]),
        )
        .attr(Attribute::computed("health", string()).one_of(&["HEALTHY", "UNHEALTHY"]))
        .attr(Attribute::computed("url", string()))
        .attr(Attribute::computed("last_modified", AttrType::Number).changes_on_write())
        .attr(Attribute::computed("creator_user_name", string()))
        .attr(Attribute::computed("run_as_user_name", string()))
}

// ---------- the kind ----------

/// What distinguishes one pipeline kind from another, as data.
pub struct Flavor {
    pub type_name: &'static str,
    pub schema: Schema,
    /// The definition object (`gateway_definition`, `ingestion_definition`) and the HCL
    /// names that live inside it on the wire.
    pub definition: Option<(&'static str, &'static [&'static str])>,
    /// Fields the service may leave out of its answer although they were sent (Lakeflow
    /// Connect `catalog`/`schema`: terraform-provider-databricks#4418/#4419, where reading
    /// them back as null forced a replacement on every plan). When absent they keep their
    /// prior value rather than showing as drift.
    pub keep_when_absent: &'static [&'static str],
    /// Fields of the definition the service fills when the user leaves them out (a
    /// gateway's staging volume name and connection id, an ingestion pipeline's connector
    /// type). Left out, they are read as unset (a whole-spec kind would otherwise show the
    /// filled value as drift on every plan) and an update sends the live value back, so a
    /// full-spec PUT keeps what the service chose.
    pub server_filled: &'static [&'static str],
    /// Checks beyond what the schema expresses (exactly-one rules).
    pub check: fn(&Object) -> Result<(), PrepareError>,
    /// Adds attributes derived from the HCL-shaped object (the ingestion pipeline's
    /// destination tables), to configuration and reads alike.
    pub derive: fn(&mut Object),
    /// Attributes `derive` fills in; configuring them is an error.
    pub derived: &'static [&'static str],
    /// Volumes the service creates for the pipeline and leaves behind when it is deleted
    /// (a gateway's staging volume), as `catalog.schema.volume`: the delete removes them
    /// after the pipeline has gone, so the schema they are in can be deleted. `None` for
    /// a kind whose delete leaves nothing behind.
    pub leaves_volumes: Option<fn(&str, &Object) -> Vec<String>>,
    /// Where its values name other objects (its catalog and schema, a notebook, a gateway).
    pub references: &'static [brickform_core::provider::Reference],
    /// What its delete (with `cascade`) and its replacement do to the tables it publishes.
    pub publishes: Publishes,
}

/// The tables a pipeline kind publishes, as its plans name what a delete takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publishes {
    /// None (a gateway stages changes; it publishes no table).
    Nothing,
    /// Its datasets: a delete with cascade drops them with their data.
    Tables,
    /// Tables it ingests from a source: dropped too, and a replacement loads them again
    /// from the start (the first load of a source takes hours on the service).
    Ingested,
}

/// The schemas (`catalog.schema`) a pipeline writes to, as last applied: its own target,
/// and the destinations of what it ingests.
fn target_schemas(attrs: &Object) -> Vec<String> {
    let text = |o: &Object, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    if let Some(c) = text(attrs, "catalog")
        && let Some(s) = text(attrs, "schema").or_else(|| text(attrs, "target"))
    {
        out.push(format!("{c}.{s}"));
    }
    let items = |k: &str| -> Vec<Object> {
        attrs
            .get(k)
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_object().cloned())
            .collect()
    };
    for t in items("tables") {
        if let Some((schema, _)) = text(&t, "destination_table")
            .as_deref()
            .and_then(|n| n.rsplit_once('.'))
        {
            out.push(schema.to_string());
        }
    }
    out.extend(
        items("schemas")
            .iter()
            .filter_map(|s| text(s, "destination_schema")),
    );
    out.sort();
    out.dedup();
    out
}

impl PipelineKind {
    /// What a delete or replacement of the pipeline does to the tables it publishes (see
    /// [`Publishes`]): nothing when it keeps them (`cascade = false`) or has published none.
    async fn tables_impact(
        &self,
        change: &brickform_core::provider::PlannedChange<'_>,
    ) -> Option<brickform_core::plan::DataEffect> {
        use brickform_core::plan::{Action, DataEffect, DataImpactKind};
        let (Some(id), Some(before)) = (change.id, change.before) else {
            return None;
        };
        let deleting = change.action == Action::Delete || change.action.is_replace();
        let cascade = before
            .get("cascade")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        if self.flavor.publishes == Publishes::Nothing || !deleting || !cascade {
            return None;
        }
        let schemas = target_schemas(before);
        // A pipeline publishing to the Hive metastore (a target schema and no catalog) has
        // tables no Unity Catalog listing shows: which ones cannot be told, but they go.
        let unlisted = schemas.is_empty()
            && before.get("catalog").and_then(Value::as_str).is_none()
            && ["target", "schema"]
                .iter()
                .any(|k| before.get(*k).and_then(Value::as_str).is_some());
        let tables = if change.offline || unlisted {
            None
        } else {
            match self.shared.client() {
                Ok(client) => {
                    let tables = (&self.shared.tables, self.shared.plan());
                    super::locations::pipeline_tables(&client, tables, &schemas, id)
                        .await
                        .ok()
                }
                Err(_) => None,
            }
        };
        if tables.as_ref().is_some_and(Vec::is_empty) {
            return None;
        }
        let reload = self.flavor.publishes == Publishes::Ingested && change.action.is_replace();
        let which = if tables.is_some() {
            "the tables it published"
        } else {
            "every table it publishes"
        };
        let message = if reload {
            format!(
                "its replacement drops {which}, with their data, and ingests them again from the start of the source (a first load can take hours)"
            )
        } else if change.action.is_replace() {
            format!("its replacement drops {which}, with their data")
        } else {
            format!("its destroy drops {which}, with their data")
        };
        Some(DataEffect {
            kind: if reload {
                DataImpactKind::TablesReloaded
            } else {
                DataImpactKind::TablesDropped
            },
            tables,
            details: Default::default(),
            message,
            hint: Some(
                "to keep the tables, set cascade = false and apply that first; a replacement is avoided by changing only what can change in place"
                    .into(),
            ),
        })
    }
}

pub struct PipelineKind {
    pub flavor: Flavor,
    pub shared: Arc<Shared>,
    /// The plan's lookups of pipelines, answered from one listing (see `listed_for_plan`).
    pub listing: Arc<ownership::SharedListing>,
}

/// The listing of every pipeline that a plan's lookups share.
const PIPELINES_LIST: ownership::ListCall = ownership::ListCall {
    path: "/api/2.0/pipelines",
    items_key: "statuses",
    page: LIST_PAGE,
};

/// The wire name of an HCL name: repeated blocks are singular in HCL (as in the Terraform
/// provider), plural arrays on the wire.
pub(crate) fn wire_name(hcl: &str) -> &str {
    match hcl {
        "cluster" => "clusters",
        "library" => "libraries",
        "notification" => "notifications",
        "object" => "objects",
        other => other,
    }
}

// ---------- HCL → wire ----------

/// A nested block's object as JSON: configured attributes only, nested blocks recursively,
/// empty list blocks left out (the API treats absent and empty alike).
fn wire_object(schema: &Schema, obj: &Object) -> Map<String, Json> {
    let mut m = Map::new();
    for a in schema.attributes.iter().filter(|a| a.can_configure()) {
        if let Some(j) = obj.get(a.name).and_then(json_of) {
            m.insert(a.name.to_string(), j);
        }
    }
    for b in &schema.blocks {
        if let Some(j) = obj.get(b.name).and_then(|v| wire_block(b, v)) {
            m.insert(wire_name(b.name).to_string(), j);
        }
    }
    m
}

fn wire_block(b: &BlockType, v: &Value) -> Option<Json> {
    match v {
        Value::Object(o) => Some(Json::Object(wire_object(&b.schema, o))),
        Value::List(items) if !items.is_empty() => Some(Json::Array(
            items
                .iter()
                .filter_map(Value::as_object)
                .map(|o| Json::Object(wire_object(&b.schema, o)))
                .collect(),
        )),
        _ => None,
    }
}

// ---------- wire → HCL ----------

fn is_empty_collection(v: &Value) -> bool {
    match v {
        Value::List(l) => l.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// A nested attribute's live value as the diff should see it, given what the user set.
/// What the service fills in where the user set nothing (a cluster's node type) stays: the
/// diff leaves optional+computed values to the service, and the plan's after shows them.
fn mask_nested(a: &Attribute, live: Value, prior: Option<&Value>) -> Value {
    let unset = prior.is_none_or(Value::is_null);
    if unset
        && a.server_default
            .as_ref()
            .is_some_and(|d| values_equal(d, &live))
    {
        return Value::Null;
    }
    // The service drops empty lists and maps; the user's `[]` is still what they set.
    if live.is_null()
        && let Some(p) = prior
        && is_empty_collection(p)
    {
        return p.clone();
    }
    live
}

/// A nested block object read back, shaped like the decoded configuration.
fn shape_object(schema: &Schema, wire: &Map<String, Json>, prior: Option<&Object>) -> Object {
    let mut out = Object::default();
    for a in schema.attributes.iter().filter(|a| a.can_configure()) {
        let live = wire
            .get(a.name)
            .map(Value::from_json)
            .unwrap_or(Value::Null);
        out.insert(
            a.name.to_string(),
            mask_nested(a, live, prior.and_then(|p| p.get(a.name))),
        );
    }
    for b in &schema.blocks {
        out.insert(
            b.name.to_string(),
            shape_block(
                b,
                wire.get(wire_name(b.name)),
                prior.and_then(|p| p.get(b.name)),
            ),
        );
    }
    out
}

fn shape_block(b: &BlockType, wire: Option<&Json>, prior: Option<&Value>) -> Value {
    match b.nesting {
        Nesting::Single => match wire {
            Some(Json::Object(m)) => {
                Value::object(shape_object(&b.schema, m, prior.and_then(Value::as_object)))
            }
            _ => Value::Null,
        },
        Nesting::List | Nesting::Keyed(_) => {
            let prior_items = prior.and_then(Value::as_list).unwrap_or(&[]);
            let items = wire
                .and_then(Json::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            Value::List(
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| {
                        let m = item.as_object()?;
                        let p = match b.nesting {
                            Nesting::Keyed(k) => {
                                let key = m.get(k).and_then(Json::as_str);
                                prior_items.iter().filter_map(Value::as_object).find(|o| {
                                    key.is_some() && o.get(k).and_then(Value::as_str) == key
                                })
                            }
                            _ => prior_items.get(i).and_then(Value::as_object),
                        };
                        Some(Value::object(shape_object(&b.schema, m, p)))
                    })
                    .collect(),
            )
        }
    }
}

impl PipelineKind {
    fn path(id: &str) -> String {
        format!("/api/2.0/pipelines/{id}")
    }

    fn in_definition(&self, hcl: &str) -> bool {
        self.flavor
            .definition
            .is_some_and(|(_, names)| names.contains(&hcl))
    }

    fn is_sent(&self, name: &str) -> bool {
        !LOCAL.contains(&name) && !self.flavor.derived.contains(&name)
    }

    /// The full spec for create and edit: every configured field, the definition object for
    /// Lakeflow Connect kinds, and the ownership tag.
    pub fn spec_body(&self, ctx: &OpContext, config: &Object) -> Json {
        let schema = &self.flavor.schema;
        let mut top = Map::new();
        let mut def = Map::new();
        for a in schema.attributes.iter().filter(|a| a.can_configure()) {
            if !self.is_sent(a.name) {
                continue;
            }
            if let Some(j) = config.get(a.name).and_then(json_of) {
                let target = if self.in_definition(a.name) {
                    &mut def
                } else {
                    &mut top
                };
                target.insert(wire_name(a.name).to_string(), j);
            }
        }
        for b in &schema.blocks {
            if let Some(j) = config.get(b.name).and_then(|v| wire_block(b, v)) {
                let target = if self.in_definition(b.name) {
                    &mut def
                } else {
                    &mut top
                };
                target.insert(wire_name(b.name).to_string(), j);
            }
        }
        ownership::tag_body(&mut top, ctx);
        if let Some((key, _)) = self.flavor.definition {
            top.insert(key.into(), Json::Object(def));
        }
        Json::Object(top)
    }

    /// A GET answer as attributes shaped like the configuration, with the computed ones.
    /// `prior` is what the engine last applied (empty on import and recovery); `pages` is
    /// where the workspace shows pipelines (`https://HOST/pipelines`).
    fn remote(&self, pages: &str, resp: &Json, prior: &Object) -> Option<Remote> {
        let id = resp.get("pipeline_id").and_then(Json::as_str)?.to_string();
        let empty = Map::new();
        let spec = resp.get("spec").and_then(Json::as_object).unwrap_or(&empty);
        // `parameters` and `run_as` come back at the top level, not inside `spec`
        // (docs/architecture.md, Wire facts).
        let mut view = spec.clone();
        for k in ["parameters", "run_as"] {
            if let Some(v) = resp.get(k) {
                view.insert(k.into(), v.clone());
            }
        }
        let def = self
            .flavor
            .definition
            .and_then(|(k, _)| spec.get(k))
            .and_then(Json::as_object)
            .unwrap_or(&empty);
        let schema = &self.flavor.schema;
        let mut attrs = Object::default();
        for a in schema.attributes.iter().filter(|a| a.can_configure()) {
            let src = if self.in_definition(a.name) {
                def
            } else {
                &view
            };
            let live = src
                .get(wire_name(a.name))
                .map(Value::from_json)
                .unwrap_or(Value::Null);
            attrs.insert(a.name.to_string(), live);
        }
        for b in &schema.blocks {
            let src = if self.in_definition(b.name) {
                def
            } else {
                &view
            };
            attrs.insert(
                b.name.to_string(),
                shape_block(b, src.get(wire_name(b.name)), prior.get(b.name)),
            );
        }

        ownership::strip(&mut attrs);
        // The service stores a Hive-metastore pipeline under `dbfs:/pipelines/<id>` when no
        // storage was given; that is its default, not a configured value.
        if attrs.get("storage").and_then(Value::as_str) == Some(&format!("dbfs:/pipelines/{id}")) {
            attrs.insert("storage".into(), Value::Null);
        }
        // Booleans the service may leave out mean false: a configured `false` then matches,
        // and a `true` turned off outside brickform still shows as drift.
        for k in ["continuous", "development", "photon"] {
            if schema.attribute(k).is_some() && attrs.get(k).is_none_or(Value::is_null) {
                attrs.insert(k.into(), Value::Bool(false));
            }
        }
        for k in self
            .flavor
            .keep_when_absent
            .iter()
            .chain(INPUT_ONLY)
            .chain(["run_as"].iter())
        {
            if attrs.get(*k).is_none_or(Value::is_null)
                && let Some(p) = prior.get(*k)
            {
                attrs.insert(k.to_string(), p.clone());
            }
        }
        for k in LOCAL {
            attrs.insert(k.to_string(), prior.get(*k).cloned().unwrap_or(Value::Null));
        }
        for k in self.flavor.server_filled {
            if attrs.contains_key(*k) && prior.get(*k).is_none_or(Value::is_null) {
                attrs.insert(k.to_string(), Value::Null);
            }
        }
        (self.flavor.derive)(&mut attrs);

        let text = |k: &str| {
            resp.get(k)
                .and_then(Json::as_str)
                .map(Value::from)
                .unwrap_or(Value::Null)
        };
        attrs.insert("id".into(), Value::from(id.as_str()));
        attrs.insert("state".into(), text("state"));
        attrs.insert("health".into(), text("health"));
        attrs.insert("url".into(), Value::from(format!("{pages}/{id}")));
        attrs.insert(
            "last_modified".into(),
            resp.get("last_modified")
                .map(Value::from_json)
                .unwrap_or(Value::Null),
        );
        attrs.insert("creator_user_name".into(), text("creator_user_name"));
        attrs.insert("run_as_user_name".into(), text("run_as_user_name"));
        if schema.attribute("source_type").is_some() {
            attrs.insert(
                "source_type".into(),
                def.get("source_type")
                    .map(Value::from_json)
                    .unwrap_or(Value::Null),
            );
        }
        Some(Remote { id, attrs })
    }

    /// The pipeline as the service holds it, `None` once it is gone or going: a pipeline
    /// whose delete was accepted answers for a while with state DELETING, then DELETED
    /// (docs/architecture.md, Wire facts). Going counts as gone for everything but the
    /// delete's own wait, so a plan never builds on a pipeline that is disappearing.
    async fn get(&self, client: &Client, id: &str) -> ProviderResult<Option<Json>> {
        Ok(self
            .get_any(client, id)
            .await?
            .filter(|r| !matches!(state(r), Some("DELETING" | "DELETED"))))
    }

    /// The pipeline while the service still answers for it, in whatever state.
    async fn get_any(&self, client: &Client, id: &str) -> ProviderResult<Option<Json>> {
        none_if_missing(client.get(&Self::path(id), &[]).await)
    }

    async fn read_with(
        &self,
        client: &Client,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let Some(resp) = self.get(client, id).await? else {
            return Ok(None);
        };
        self.remote(&self.shared.web_url("pipelines"), &resp, prior)
            .map(Some)
            .ok_or_else(|| {
                ProviderError::other(format!("pipeline {id}: answer without pipeline_id"))
            })
    }

    async fn read_back(
        &self,
        client: &Client,
        id: &str,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.read_with(client, id, config).await?.ok_or_else(|| {
            ProviderError::not_found(format!(
                "{} {id} was written but cannot be read back",
                self.flavor.type_name
            ))
        })
    }
}

/// A pipeline's state as a GET answers it.
fn state(resp: &Json) -> Option<&str> {
    resp.get("state").and_then(Json::as_str)
}

/// Every pipeline kind (a Lakeflow Connect gateway and ingestion pipeline are pipelines too)
/// is run with `brickform run`: an update, a full refresh or a validation.
impl PipelineKind {
    /// Whether a GET answer is a pipeline of this kind: a gateway has a gateway definition,
    /// an ingestion pipeline an ingestion definition, any other pipeline neither.
    fn holds(&self, resp: &Json) -> bool {
        let has = |def: &str| {
            resp.pointer(&format!("/spec/{def}"))
                .is_some_and(|d| !d.is_null())
        };
        match self.flavor.definition {
            Some((def, _)) => has(def),
            None => !FLAVORS.iter().any(|(def, _)| has(def)),
        }
    }

    /// A GET answer read with no configuration behind it (see `import`).
    fn imported(&self, resp: &Json) -> Option<Remote> {
        let mut prior = Object::default();
        if let Some((def, _)) = self.flavor.definition {
            for k in self.flavor.server_filled {
                if let Some(v) = resp
                    .pointer(&format!("/spec/{def}/{k}"))
                    .filter(|v| !v.is_null())
                {
                    prior.insert(k.to_string(), Value::from_json(v));
                }
            }
        }
        self.remote(&self.shared.web_url("pipelines"), resp, &prior)
    }
}

/// The definitions that make a pipeline a Lakeflow Connect one, and the kinds they make it,
/// as those kinds declare them.
const FLAVORS: &[(&str, &str)] = &[
    super::ingestion_gateway::MADE_BY,
    super::ingestion_pipeline::MADE_BY,
];

#[async_trait]
impl super::DatabricksKind for PipelineKind {
    fn runner(&self) -> Option<Arc<dyn crate::run::Runner>> {
        Some(Arc::new(crate::run::PipelineRunner))
    }

    /// The pipelines of this kind. The list call returns no specs, so every pipeline is
    /// read once (and the reads shared by the three pipeline kinds).
    async fn listing(
        &self,
        client: &Client,
        scope: &crate::resources::adoption::Scope<'_>,
    ) -> Option<ProviderResult<Vec<crate::resources::adoption::Listed>>> {
        let all = scope
            .shared_list("pipelines", || async {
                let statuses = crate::resources::adoption::list(
                    client,
                    "/api/2.0/pipelines",
                    &[],
                    "statuses",
                    Some(LIST_PAGE),
                )
                .await?;
                let ids = statuses.iter().filter_map(|s| {
                    s.get("pipeline_id")
                        .and_then(Json::as_str)
                        .map(str::to_string)
                });
                let reads = fan_out::bounded("reading pipelines", ids, GETS_IN_FLIGHT, |id| {
                    let client = client.clone();
                    async move { none_if_missing(client.get(&Self::path(&id), &[]).await) }
                });
                let mut out = Vec::new();
                for read in reads.await {
                    if let Some(p) = read?? {
                        out.push(p);
                    }
                }
                Ok(out)
            })
            .await;
        let all = match all {
            Ok(a) => a,
            Err(e) => return Some(Err(e)),
        };
        let mut out = Vec::new();
        for resp in all.iter().filter(|r| self.holds(r)) {
            let Some(remote) = self.imported(resp) else {
                continue;
            };
            let text = |p: &str| resp.pointer(p).and_then(Json::as_str).map(str::to_string);
            out.push(crate::resources::adoption::Listed {
                id: remote.id.clone(),
                name: text("/spec/name").unwrap_or_default(),
                catalog: text("/spec/catalog")
                    .or_else(|| text("/spec/gateway_definition/gateway_storage_catalog")),
                creator: text("/creator_user_name"),
                tags: super::job::string_map(resp.pointer("/spec/tags")),
                attrs: Some(remote.attrs),
            });
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Some(Ok(out))
    }

    /// What the kind derives from the configuration (an ingestion pipeline's tables) is
    /// not written.
    async fn adoption(
        &self,
        _client: &Client,
        remote: &Remote,
        _adopted: &[Location],
    ) -> ProviderResult<crate::resources::adoption::Adoption> {
        let mut values = remote.attrs.clone();
        for k in self.flavor.derived {
            values.shift_remove(*k);
        }
        Ok(crate::resources::adoption::Adoption { values, file: None })
    }
}

/// Pipelines read at once when listing them all.
const GETS_IN_FLIGHT: usize = 10;

#[async_trait]
impl ResourceKind for PipelineKind {
    async fn data_impact(
        &self,
        _ctx: &OpContext,
        change: &brickform_core::provider::PlannedChange<'_>,
    ) -> Vec<brickform_core::plan::DataEffect> {
        self.tables_impact(change).await.into_iter().collect()
    }

    fn type_name(&self) -> &'static str {
        self.flavor.type_name
    }
    fn schema(&self) -> &Schema {
        &self.flavor.schema
    }

    fn prepare_config(
        &self,
        config: &mut Object,
        _base_dir: &std::path::Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        for d in self.flavor.derived {
            if config.get(*d).is_some_and(|v| !v.is_null()) {
                return Err(PrepareError::Derived {
                    attribute: d.to_string(),
                });
            }
        }
        (self.flavor.check)(config)?;
        (self.flavor.derive)(config);
        Ok(())
    }

    fn apply_presets(
        &self,
        p: &brickform_core::provider::Presets,
        config: &mut Object,
    ) -> Vec<brickform_core::provider::PresetChange> {
        let mut changes: Vec<_> = super::presets::name(p, config).into_iter().collect();
        if config.get("development").and_then(Value::as_bool) != Some(true) {
            config.insert("development".into(), Value::Bool(true));
            changes.push(brickform_core::provider::PresetChange::new(
                "development",
                "pipelines in development mode",
            ));
        }
        changes
    }

    fn production_findings(&self, config: &Object) -> Vec<brickform_core::provider::Finding> {
        super::presets::no_development(config)
    }

    fn references(&self) -> &'static [brickform_core::provider::Reference] {
        self.flavor.references
    }

    fn protected(&self) -> bool {
        true
    }

    fn plan_computed(&self, config: &Object) -> Object {
        // The derived attributes read only the replicated objects: they are known before,
        // say, the gateway's id is.
        let inputs_known = ["object", "table_configuration"]
            .iter()
            .all(|k| config.get(*k).is_none_or(Value::is_wholly_known));
        if self.flavor.derived.is_empty() || !inputs_known {
            return Object::default();
        }
        let mut derived = config.clone();
        (self.flavor.derive)(&mut derived);
        self.flavor
            .derived
            .iter()
            .filter_map(|d| derived.get(*d).map(|v| (d.to_string(), v.clone())))
            .collect()
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let body = self.spec_body(ctx, config);
        let resp = client
            .post("/api/2.0/pipelines", &body)
            .await
            .map_err(err)?;
        let id = created_id(&resp, "pipeline_id", "pipeline")?;
        self.read_back(&client, &id, config).await
    }

    async fn read(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        self.read_with(&client, id, prior).await
    }

    /// As [`ResourceKind::import_existing`] reads it, without what it tells of its owner.
    async fn import(&self, ctx: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        Ok(self.import_existing(ctx, id).await?.map(|e| e.remote))
    }

    /// A read with no configuration behind it: the definition's server-filled fields (a
    /// gateway's staging volume name) are read as the service holds them rather than as
    /// unset, since nothing says the user left them to the service. Read as unset, a
    /// configured `gateway_storage_name` would plan the adopted gateway's replacement.
    /// With the ownership tag the pipeline carries.
    async fn import_existing(
        &self,
        _ctx: &OpContext,
        id: &str,
    ) -> ProviderResult<Option<Existing>> {
        let client = self.shared.client()?;
        let Some(resp) = self.get(&client, id).await? else {
            return Ok(None);
        };
        if !self.holds(&resp) {
            return Err(ProviderError::invalid(format!(
                "pipeline {id} is not a {}: its spec {}",
                self.flavor.type_name,
                match FLAVORS.iter().find(|(def, _)| {
                    resp.pointer(&format!("/spec/{def}"))
                        .is_some_and(|d| !d.is_null())
                }) {
                    Some((def, kind)) => format!("has a {def}, so it is a {kind}"),
                    None => format!(
                        "has no gateway or ingestion definition, so it is a {}",
                        super::pipeline::TYPE_NAME
                    ),
                }
            )));
        }
        let remote = self.imported(&resp).ok_or_else(|| {
            ProviderError::other(format!("pipeline {id}: answer without pipeline_id"))
        })?;
        Ok(Some(ownership::existing(self, &resp, remote, false)))
    }

    /// A full-spec PUT. `expected_last_modified` comes from a GET made just before: the plan
    /// already showed (and the user approved) any change made outside brickform since the
    /// last apply, so the lock guards only against an edit racing this one; the state's
    /// older value would make every planned drift correction fail with a conflict.
    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let current = self.get(&client, id).await?.ok_or_else(|| {
            ProviderError::not_found(format!("{} {id} no longer exists", self.flavor.type_name))
        })?;
        let mut body = self.spec_body(ctx, config);
        if let (Json::Object(m), Some(lm)) = (&mut body, current.get("last_modified")) {
            m.insert("expected_last_modified".into(), lm.clone());
        }
        if let (Some((key, _)), Json::Object(m)) = (self.flavor.definition, &mut body) {
            let live = current.pointer(&format!("/spec/{key}"));
            if let (Some(Json::Object(def)), Some(Json::Object(live))) = (m.get_mut(key), live) {
                for k in self.flavor.server_filled {
                    if let (false, Some(v)) = (def.contains_key(*k), live.get(*k)) {
                        def.insert(k.to_string(), v.clone());
                    }
                }
            }
        }
        client
            .idempotent()
            .put(&Self::path(id), &body)
            .await
            .map_err(err)?;
        self.read_back(&client, id, config).await
    }

    async fn delete(&self, ctx: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let mut query = Vec::new();
        if let Some(c) = prior.get("cascade").and_then(Value::as_bool) {
            query.push(("cascade", c.to_string()));
        }
        if let Err(e) = gone_ok(client.idempotent().delete(&Self::path(id), &query).await) {
            // A delete whose answer was lost may have been carried out: a pipeline that now
            // reads DELETING (or is gone) was deleted, and is waited for like any other.
            let deleting = e.uncertain && matches!(self.get(&client, id).await, Ok(None));
            if !deleting {
                return Err(e);
            }
        }
        self.complete_delete(ctx, id, prior).await
    }

    /// The service deletes asynchronously (the pipeline reads DELETING, and its tables are
    /// still in their schemas until it is gone): waits, so what depends on it (the schema)
    /// is deleted after it, then removes the volumes the pipeline leaves behind (a
    /// gateway's staging volume). Also run for a delete an interrupted run sent.
    async fn complete_delete(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let what = format!(
            "{} {id} was deleted but has not gone",
            self.flavor.type_name
        );
        super::wait_until(super::PIPELINE_GONE_WAIT, &what, || async {
            Ok(self
                .get_any(&client, id)
                .await?
                .filter(|p| state(p) != Some("DELETED"))
                .map(|p| format!("in state {}", state(&p).unwrap_or("present"))))
        })
        .await?;
        let left = self.flavor.leaves_volumes.map(|f| f(id, prior));
        for volume in left.unwrap_or_default() {
            gone_ok(
                client
                    .idempotent()
                    .delete(&format!("/api/2.1/unity-catalog/volumes/{volume}"), &[])
                    .await,
            )?;
        }
        Ok(())
    }

    fn may_take_along(&self) -> bool {
        self.flavor.leaves_volumes.is_some()
    }

    fn takes_along(&self, id: &str, attrs: &Object) -> Vec<Location> {
        let Some(leaves) = self.flavor.leaves_volumes else {
            return Vec::new();
        };
        leaves(id, attrs)
            .iter()
            .map(|v| Place::unity_catalog(v).into())
            .collect()
    }

    /// The name and the ownership tag. The list call returns statuses without specs or
    /// tags, so finding the tag means one GET per candidate; filtering the list by the
    /// name first keeps that to the pipelines of that name (usually one).
    /// A pipeline without a name is looked for among the pipelines without one.
    fn natural_key(&self, ctx: &OpContext, config: &Object) -> Option<String> {
        Some(ownership::key(str_attr(config, "name").unwrap_or(""), ctx))
    }

    /// The tables' listings of the schemas a pipeline that is deleted published into, which
    /// its data impact reads (see [`PipelineKind::tables_impact`]).
    fn impact_ahead(
        &self,
        _ctx: &OpContext,
        applied: &serde_json::Map<String, Json>,
    ) -> Option<brickform_core::provider::Ahead> {
        if self.flavor.publishes == Publishes::Nothing
            || applied.get("cascade").and_then(Json::as_bool) == Some(false)
        {
            return None;
        }
        let applied: Object = applied
            .iter()
            .map(|(k, v)| (k.clone(), Value::from_json(v)))
            .collect();
        let client = self.shared.client().ok()?;
        let plan = self.shared.plan();
        self.shared
            .tables
            .ahead(plan, client, &target_schemas(&applied))
    }

    /// The pipelines' listing its creates' lookups share, started before their turn.
    fn lookups_ahead(&self, _ctx: &OpContext) -> Option<brickform_core::provider::Ahead> {
        let client = self.shared.client().ok()?;
        Some(
            self.listing
                .ahead(self.shared.plan(), client, &PIPELINES_LIST),
        )
    }

    async fn find_by_key(&self, _ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let Some((name, tag)) = ownership::split_key(key) else {
            return Ok(None);
        };
        let client = self.shared.client()?;
        ownership::find_by_key(self, &client, name, tag).await
    }

    /// Every pipeline of the configured name with the ownership tag it carries and its
    /// creator. A name is taken unless the configuration allows duplicate names.
    async fn find_existing(
        &self,
        _ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<Existing>> {
        // No name, no name taken: a nameless pipeline is found by its ownership tag among
        // the pipelines without a name.
        let name = str_attr(config, "name").unwrap_or("");
        let client = self.shared.client()?;
        let exclusive = !name.is_empty()
            && config.get("allow_duplicate_names").and_then(Value::as_bool) != Some(true);
        ownership::find_existing(self, &client, name, exclusive).await
    }
}

/// Pipelines are found by name and ownership tag; the list answers statuses without tags,
/// so each candidate is read in full.
#[async_trait]
impl Tagged for PipelineKind {
    const TAGS: &'static str = "/spec/tags";
    const LISTED_WITH_TAGS: bool = false;

    async fn listed(&self, client: &Client, name: &str) -> ProviderResult<Vec<Json>> {
        self.named(client, name).await
    }
    /// From a listing of every pipeline shared by the plan's lookups; by name in a
    /// workspace of many pipelines.
    async fn listed_for_plan(&self, client: &Client, name: &str) -> ProviderResult<Vec<Json>> {
        // As `named` compares: exactly.
        let named = |p: &Json| p.get("name").and_then(Json::as_str).unwrap_or("") == name;
        self.listing
            .find_or(self.shared.plan(), client, &PIPELINES_LIST, named, || {
                self.named(client, name)
            })
            .await
    }
    async fn full(&self, client: &Client, listed: &Json) -> ProviderResult<Option<Json>> {
        let Some(id) = listed.get("pipeline_id").and_then(Json::as_str) else {
            return Ok(None);
        };
        match self.get(client, id).await {
            Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
            r => r,
        }
    }
    fn remote(&self, full: &Json) -> Option<Remote> {
        PipelineKind::remote(
            self,
            &self.shared.web_url("pipelines"),
            full,
            &Object::default(),
        )
    }
    fn what(&self, full: &Json) -> String {
        let noun = self
            .flavor
            .type_name
            .trim_start_matches("databricks_")
            .replace('_', " ");
        let id = full.get("pipeline_id").and_then(Json::as_str).unwrap_or("");
        let name = full
            .pointer("/spec/name")
            .or_else(|| full.get("name"))
            .and_then(Json::as_str)
            .unwrap_or("");
        format!("{noun} {id} \"{name}\"")
    }
}

impl PipelineKind {
    /// The pipelines named exactly `name`, as the list answers them: statuses, without
    /// specs or tags.
    async fn named(&self, client: &Client, name: &str) -> ProviderResult<Vec<Json>> {
        // `%` and `_` are LIKE wildcards: they only widen the candidates, which the exact
        // comparison narrows again. A quote cannot be written inside the filter, so such a
        // name lists every pipeline instead.
        let query = if name.contains('\'') || name.is_empty() {
            Vec::new()
        } else {
            vec![("filter", format!("name LIKE '{name}'"))]
        };
        let statuses = client
            .list_all("/api/2.0/pipelines", &query, "statuses", Some(LIST_PAGE))
            .await
            .map_err(err)?;
        Ok(statuses
            .into_iter()
            .filter(|s| s.get("name").and_then(Json::as_str).unwrap_or("") == name)
            .collect())
    }
}

// ---------- checks shared by the kinds ----------

/// Exactly one of `names` is set (non-null) in `o`; `what` names the object in errors.
pub fn exactly_one(o: &Object, names: &[&str], what: &str) -> Result<(), PrepareError> {
    if set_of(o, names).is_empty() {
        return Err(PrepareError::NoneOf {
            what: what.to_string(),
            names: owned(names),
        });
    }
    at_most_one(o, names, what)
}

/// At most one of `names` is set.
pub fn at_most_one(o: &Object, names: &[&str], what: &str) -> Result<(), PrepareError> {
    let set = set_of(o, names);
    if set.len() > 1 {
        return Err(PrepareError::SeveralOf {
            what: what.to_string(),
            names: owned(names),
            set: owned(&set),
        });
    }
    Ok(())
}

/// Which of `names` are set (non-null) in `o`.
fn set_of<'a>(o: &Object, names: &[&'a str]) -> Vec<&'a str> {
    names
        .iter()
        .copied()
        .filter(|n| o.get(*n).is_some_and(|v| !v.is_null()))
        .collect()
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// The objects of a list block in a configuration.
pub fn items<'a>(o: &'a Object, block: &str) -> impl Iterator<Item = &'a Object> {
    o.get(block)
        .and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(Value::as_object)
}

/// Checks every pipeline kind shares: `run_as` names one identity, and the ownership tag
/// is brickform's (a user value would be overwritten, then stripped on read: endless drift).
pub fn check_common(o: &Object) -> Result<(), PrepareError> {
    ownership::check_not_reserved(o)?;
    if let Some(r) = o.get("run_as").and_then(Value::as_object) {
        exactly_one(
            r,
            &["user_name", "service_principal_name", "group_name"],
            "run_as",
        )?;
    }
    Ok(())
}

pub fn no_derive(_: &mut Object) {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::decoded;
    use super::*;
    use serde_json::json;

    fn ctx() -> OpContext {
        OpContext {
            address: "databricks_ingestion_pipeline.p".into(),
            lineage: "L".into(),
            environment: "default".into(),
            base_dir: std::path::PathBuf::new(),
            create_token: None,
            output: None,
            planned: None,
        }
    }

    fn ingestion() -> PipelineKind {
        super::super::ingestion_pipeline::kind(Arc::new(Shared::default()))
    }

    #[test]
    fn body_nests_the_definition_sends_false_and_tags_the_owner() {
        let k = ingestion();
        let config = decoded(
            &k.flavor.schema,
            json!({"name": "p", "catalog": "main", "serverless": false, "cascade": false,
                   "connection_name": "sf", "tags": {"team": "x"},
                   "cluster": [{"num_workers": 0}],
                   "object": [{"table": {"destination_catalog": "main", "destination_schema": "s",
                                          "source_table": "t"}}]}),
        );
        let body = k.spec_body(&ctx(), &config);
        assert_eq!(body["serverless"], json!(false));
        assert_eq!(body["clusters"], json!([{"num_workers": 0}]));
        assert_eq!(
            body["tags"],
            json!({"team": "x", "brickform": "L/default/databricks_ingestion_pipeline.p"})
        );
        assert_eq!(body["ingestion_definition"]["connection_name"], "sf");
        assert_eq!(
            body["ingestion_definition"]["objects"][0]["table"]["source_table"],
            "t"
        );
        for absent in ["cascade", "connection_name", "objects", "tables", "schemas"] {
            assert!(body.get(absent).is_none(), "{absent} in {body}");
        }
    }

    #[test]
    fn reads_match_the_configuration_despite_server_values() {
        let k = ingestion();
        let prior = decoded(
            &k.flavor.schema,
            json!({"name": "p", "catalog": "main", "schema": "s", "connection_name": "sf",
                   "tags": {"team": "x"}, "cascade": false,
                   "cluster": [{"num_workers": 1, "node_type_id": "m5.large"}, {"label": "maintenance"}],
                   "notification": [{"email_recipients": [], "alerts": ["on-update-failure"]}],
                   "object": [{"table": {"destination_catalog": "main", "destination_schema": "s",
                                          "source_table": "t"}}]}),
        );
        // The service left out catalog and schema (#4418), added defaults and the owner tag.
        let resp = json!({
            "pipeline_id": "P1", "state": "IDLE", "last_modified": 5,
            "spec": {"id": "P1", "name": "p", "channel": "CURRENT", "edition": "ADVANCED",
                     "tags": {"team": "x", "brickform": "L/a"},
                     "clusters": [
                        {"label": "default", "num_workers": 1, "node_type_id": "m5.large",
                         "driver_node_type_id": "m5.xlarge", "enable_local_disk_encryption": false},
                        {"label": "maintenance", "node_type_id": "m5.large"}],
                     "notifications": [{"alerts": ["on-update-failure"]}],
                     "ingestion_definition": {"connection_name": "sf", "source_type": "SALESFORCE",
                        "objects": [{"table": {"destination_catalog": "main", "destination_schema": "s",
                                                "source_table": "t"}}]}}
        });
        let r = k.remote("https://h/pipelines", &resp, &prior).unwrap();
        assert_eq!(r.id, "P1");
        for name in [
            "name",
            "catalog",
            "schema",
            "connection_name",
            "tags",
            "cascade",
            "notification",
            "object",
        ] {
            assert!(
                values_equal(&r.attrs[name], &prior[name]),
                "{name}: live {:?} vs configured {:?}",
                r.attrs[name],
                prior[name]
            );
        }
        // Node types the service filled in are read as they are (the plan's after shows
        // them), and the diff leaves them to the service: no change.
        let cluster = r.attrs["cluster"].to_json();
        assert_eq!(cluster[0]["driver_node_type_id"], "m5.xlarge");
        let ignore = |_: &str| false;
        let fp = |_: &Value, _: &str| true;
        let applied = brickform_core::plan::diff::Prior {
            config: prior.clone(),
            ..Default::default()
        };
        let d = brickform_core::plan::diff::diff(&brickform_core::plan::diff::DiffInput {
            schema: &k.flavor.schema,
            config: &prior,
            prior: Some(&applied),
            live: Some(&r.attrs),
            ignore: &ignore,
            fingerprint_matches: &fp,
        });
        assert!(
            d.fields
                .iter()
                .all(|f| f.path != vec![brickform_core::value::PathStep::Key("cluster".into())]),
            "{:?}",
            d.fields
        );
        assert_eq!(r.attrs["source_type"], Value::from("SALESFORCE"));
        assert_eq!(r.attrs["url"], Value::from("https://h/pipelines/P1"));
        let tables = r.attrs["tables"].to_json();
        assert_eq!(tables[0]["destination_table"], "main.s.t");
        assert_eq!(tables[0]["scd_type"], "SCD_TYPE_1");

        // A value the user did set is compared, not masked.
        let mut changed = resp.clone();
        changed["spec"]["clusters"][0]["node_type_id"] = json!("m5.2xlarge");
        let r = k.remote("https://h/pipelines", &changed, &prior).unwrap();
        assert!(!values_equal(&r.attrs["cluster"], &prior["cluster"]));
    }

    #[test]
    fn default_storage_is_not_a_configured_value() {
        let k = super::super::pipeline::kind(Arc::new(Shared::default()));
        let resp = json!({"pipeline_id": "P2",
                          "spec": {"name": "x", "storage": "dbfs:/pipelines/P2"}});
        let r = k.remote("h", &resp, &Object::default()).unwrap();
        assert_eq!(r.attrs["storage"], Value::Null);
        assert_eq!(r.attrs["continuous"], Value::Bool(false));
        let resp = json!({"pipeline_id": "P2", "spec": {"name": "x", "storage": "dbfs:/mine"}});
        let r = k.remote("h", &resp, &Object::default()).unwrap();
        assert_eq!(r.attrs["storage"], Value::from("dbfs:/mine"));
    }
}
