//! `databricks_dashboard`: an AI/BI (Lakeview) dashboard, through the Lakeview API
//! (`/api/2.0/lakeview/dashboards`), as the Terraform provider manages it
//! (terraform-provider-databricks dashboards/resource_dashboard.go, docs/resources/dashboard.md):
//!
//! - its content is `serialized_dashboard` (a JSON document) or the local file `file_path`
//!   names, never both; `md5` is the hash of that content, derived before planning, so an
//!   edit of the file shows as a change though the path did not change (the provider's
//!   `md5`, resource_dashboard.go:18, :29-44);
//! - the service rewrites the content it keeps (every page gets a `pageType`, the dataset
//!   overrides are written in, it ends in a newline: databricks/cli
//!   libs/testserver/dashboards.go, transformSerializedDashboard, "verified against cloud"),
//!   so what it answers is not compared with what was sent. Its `etag` changes at every
//!   write: while it is the one recorded after the last apply, the service holds what was
//!   applied; another etag means an edit outside brickform, read as the content it holds,
//!   which the plan writes back (the provider's `dashboard_change_detected`,
//!   resource_dashboard.go:184, :41-44);
//! - every create and update publishes the dashboard with `embed_credentials` (true when
//!   left out, resource_dashboard.go:74), and a read reads the published version: an
//!   unpublished dashboard, or other embedded credentials, is drift that the next apply
//!   publishes again (POST/GET `…/{id}/published`);
//! - `dataset_catalog` and `dataset_schema` are query parameters of the create and the
//!   update, which the service applies to the content and never answers;
//! - a create in a folder that does not exist makes the folder and tries again
//!   (resource_dashboard.go:104-117); a publish that fails trashes the dashboard it made
//!   (:125-134);
//! - a delete moves the dashboard to the trash (DELETE `…/{id}`), where it is still read
//!   with `lifecycle_state` TRASHED: gone (:170-175); trashing it again is refused with 403,
//!   which counts as deleted when the dashboard reads trashed (:249-270);
//! - `parent_path` is answered without the `/Workspace` prefix; a change replaces the
//!   dashboard (ForceNew, compared without the prefix, :59).

use super::WORKSPACE_MOUNT;
use super::created_id;
use super::unmounted;
use super::{err, none_if_missing, str_attr};
use crate::Shared;
use crate::client::{ApiError, Client};
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, ErrorKind, Finding, Normalize, OpContext, ProviderError, ProviderResult,
    Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use md5::Digest as _;
use reqwest::Method;
use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const BASE: &str = "/api/2.0/lakeview/dashboards";

/// The legacy Databricks SQL kinds `brickform convert` does not carry over, and why: a
/// legacy dashboard and its widgets and visualizations are no AI/BI dashboard (the service
/// migrates one into a new dashboard with its own id and content), and a legacy alert's
/// options are not the current condition one for one (terraform-provider-databricks
/// docs/resources/alert.md, "Migrating from `databricks_sql_alert` resource": operators
/// renamed, values typed).
pub const LEGACY_NOT_CONVERTED: &[(&str, &str)] = &[
    (
        "databricks_sql_dashboard",
        "a legacy Databricks SQL dashboard has no counterpart: migrate it to an AI/BI dashboard in the workspace, export its .lvdash.json and manage it as databricks_dashboard (file_path)",
    ),
    (
        "databricks_sql_widget",
        "a widget of a legacy Databricks SQL dashboard: an AI/BI dashboard holds its widgets in its serialized_dashboard (databricks_dashboard)",
    ),
    (
        "databricks_sql_visualization",
        "a visualization of a legacy Databricks SQL query: an AI/BI dashboard holds its visualizations in its serialized_dashboard (databricks_dashboard)",
    ),
    (
        "databricks_sql_alert",
        "a legacy Databricks SQL alert: write it as databricks_alert (options become condition { op, operand { column { name } }, threshold { value { ... } } }, rearm is seconds_to_retrigger) and import it by its id",
    ),
];

fn s() -> AttrType {
    AttrType::String
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("An AI/BI (Lakeview) dashboard, published on every apply. Its content is serialized_dashboard or the file file_path names; a change of either (or of the file) is written and published again, and an edit made outside brickform is written back. A destroy moves it to the trash.")
        .attr(Attribute::required("display_name", s()))
        .attr(Attribute::required("warehouse_id", s()).describe("The SQL warehouse that runs the dashboard's queries (databricks_sql_endpoint's id)."))
        .attr(
            Attribute::optional("serialized_dashboard", s())
                .normalize(Normalize::Json)
                .describe("The dashboard as JSON (an exported .lvdash.json; jsonencode works). Cannot be used with file_path."),
        )
        .attr(
            Attribute::optional("file_path", s())
                .describe("A local .lvdash.json file holding the dashboard, relative to the configuration directory. Cannot be used with serialized_dashboard."),
        )
        .attr(
            Attribute::optional("embed_credentials", AttrType::Bool)
                .describe("Publish with the publisher's credentials embedded (viewers run its queries as the publisher); true when left out, as in the Terraform provider."),
        )
        .attr(
            Attribute::required("parent_path", s())
                .force_new()
                .normalize(Normalize::MountedPath(WORKSPACE_MOUNT))
                .describe("The workspace folder holding the dashboard (with or without /Workspace), made when it does not exist. A change replaces the dashboard."),
        )
        .attr(
            Attribute::optional("dataset_catalog", s())
                .unanswered()
                .describe("The default catalog of the dashboard's datasets (names that are not fully qualified)."),
        )
        .attr(
            Attribute::optional("dataset_schema", s())
                .unanswered()
                .describe("The default schema of the dashboard's datasets."),
        )
        .attr(
            Attribute::optional_computed("md5", s())
                .derived_from(&["serialized_dashboard", "file_path"])
                .describe("MD5 of the content; derived from serialized_dashboard or file_path."),
        )
        .attr(Attribute::computed("id", s()).describe("The dashboard_id."))
        .attr(Attribute::computed("dashboard_id", s()))
        .attr(
            Attribute::computed("path", s())
                .derived_from(&["display_name", "parent_path"])
                .describe("The dashboard's workspace path: parent_path/display_name.lvdash.json."),
        )
        .attr(Attribute::computed("lifecycle_state", s()))
        .attr(Attribute::computed("create_time", s()))
        .attr(Attribute::computed("update_time", s()).changes_on_write())
        .attr(
            Attribute::computed("etag", s())
                .changes_on_write()
                .describe("The service's version of the dashboard, new at every write."),
        )
}

pub struct Dashboard {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Dashboard {
    pub fn new(shared: Arc<Shared>) -> Self {
        Dashboard {
            schema: schema(),
            shared,
        }
    }
}

fn set(config: &Object, k: &str) -> bool {
    config.get(k).is_some_and(|v| !v.is_null())
}

fn md5_hex(text: &str) -> String {
    format!("{:x}", md5::Md5::digest(text.as_bytes()))
}

/// Why a configuration names no dashboard content.
#[derive(Debug, thiserror::Error)]
enum ContentError {
    #[error("set serialized_dashboard or file_path, not both")]
    Both,
    #[error("one of serialized_dashboard or file_path is required")]
    Neither,
    #[error("cannot read file_path {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: brickform_core::limits::ReadError,
    },
    #[error("file_path {} is not UTF-8 text", path.display())]
    NotUtf8 {
        path: PathBuf,
        #[source]
        source: std::string::FromUtf8Error,
    },
}

// The engine reports a kind's prepare errors by their text, against the resource block.
impl From<ContentError> for brickform_core::provider::PrepareError {
    fn from(e: ContentError) -> Self {
        Self::Invalid(e.to_string())
    }
}

/// The content a configuration names: the serialized dashboard, or the file's text.
fn content(config: &Object, base_dir: &Path) -> Result<String, ContentError> {
    match (
        str_attr(config, "serialized_dashboard"),
        str_attr(config, "file_path"),
    ) {
        (Some(_), Some(_)) => Err(ContentError::Both),
        (None, None) => Err(ContentError::Neither),
        (Some(text), None) => Ok(text.to_string()),
        (None, Some(file)) => {
            let path = base_dir.join(file);
            // Only a regular file of bounded size: a named pipe would block the plan.
            let bytes = match brickform_core::limits::read_file(&path) {
                Ok(bytes) => bytes,
                Err(source) => return Err(ContentError::Read { path, source }),
            };
            String::from_utf8(bytes).map_err(|source| ContentError::NotUtf8 { path, source })
        }
    }
}

/// The query parameters of a create or an update.
fn dataset_overrides(config: &Object) -> Vec<(&'static str, String)> {
    ["dataset_catalog", "dataset_schema"]
        .into_iter()
        .filter_map(|k| Some((k, str_attr(config, k)?.to_string())))
        .collect()
}

/// The create or update body: the dashboard's settings and its content.
fn body(config: &Object, content: &str) -> Json {
    let mut b = json!({ "serialized_dashboard": content });
    for k in ["display_name", "warehouse_id", "parent_path"] {
        if let Some(v) = str_attr(config, k) {
            b[k] = json!(v);
        }
    }
    b
}

/// The attributes of a dashboard as the service answers it, with its published version
/// (`None`: not published), against what was last applied (`prior`; empty for an import).
pub fn remote(schema: &Schema, d: &Json, published: Option<&Json>, prior: &Object) -> Remote {
    let mut attrs = super::wire::from_wire(schema, d, &[], "");
    let id = d
        .get("dashboard_id")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    attrs.insert("id".into(), Value::from(id.as_str()));
    // What only the configuration knows: the service answers neither the file nor the
    // dataset overrides.
    for k in ["file_path", "dataset_catalog", "dataset_schema"] {
        attrs.insert(k.into(), prior.get(k).cloned().unwrap_or(Value::Null));
    }
    let answered = d.get("serialized_dashboard").and_then(Json::as_str);
    let unchanged =
        str_attr(prior, "etag").is_some() && str_attr(prior, "etag") == str_attr(&attrs, "etag");
    if unchanged {
        // The service holds what was applied (in its own layout).
        for k in ["serialized_dashboard", "md5"] {
            attrs.insert(k.into(), prior.get(k).cloned().unwrap_or(Value::Null));
        }
    } else {
        attrs.insert(
            "md5".into(),
            answered.map_or(Value::Null, |t| Value::from(md5_hex(t))),
        );
        // Shown where the configuration writes its content inline (or nowhere yet).
        let inline = !set(prior, "file_path");
        attrs.insert(
            "serialized_dashboard".into(),
            match answered {
                Some(t) if inline => Value::from(t),
                _ => Value::Null,
            },
        );
    }
    if let (Some(was), Some(now)) = (
        str_attr(prior, "parent_path"),
        str_attr(&attrs, "parent_path"),
    ) && unmounted(was) == unmounted(now)
    {
        attrs.insert("parent_path".into(), Value::from(was));
    }
    attrs.insert(
        "embed_credentials".into(),
        published
            .and_then(|p| p.get("embed_credentials"))
            .map_or(Value::Null, |v| Value::Bool(v.as_bool().unwrap_or(false))),
    );
    Remote { id, attrs }
}

fn trashed(d: &Json) -> bool {
    d.get("lifecycle_state").and_then(Json::as_str) == Some("TRASHED")
}

impl Dashboard {
    async fn get(
        &self,
        client: &Client,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let Some(d) = none_if_missing(client.get(&format!("{BASE}/{id}"), &[]).await)? else {
            return Ok(None);
        };
        if trashed(&d) {
            return Ok(None);
        }
        let published = none_if_missing(client.get(&format!("{BASE}/{id}/published"), &[]).await)?;
        Ok(Some(remote(&self.schema, &d, published.as_ref(), prior)))
    }

    /// Publishes the dashboard with the configured warehouse and credentials.
    async fn publish(&self, client: &Client, id: &str, config: &Object) -> Result<Json, ApiError> {
        let embed = config
            .get("embed_credentials")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        client
            .idempotent()
            .post(
                &format!("{BASE}/{id}/published"),
                &json!({
                    "warehouse_id": str_attr(config, "warehouse_id"),
                    "embed_credentials": embed,
                }),
            )
            .await
    }

    /// Publishes; a publish that fails trashes the dashboard, as the provider does.
    async fn publish_or_trash(
        &self,
        client: &Client,
        id: &str,
        config: &Object,
    ) -> ProviderResult<()> {
        if let Err(e) = self.publish(client, id, config).await {
            let _ = client
                .idempotent()
                .delete(&format!("{BASE}/{id}"), &[])
                .await;
            return Err(err(e));
        }
        Ok(())
    }

    async fn read_back(
        &self,
        client: &Client,
        id: &str,
        config: &Object,
        etag: Option<&str>,
    ) -> ProviderResult<Remote> {
        // What was just written is what the configuration says: recorded with the etag of
        // the write, so the next read compares against it.
        let mut prior = config.clone();
        if let Some(e) = etag {
            prior.insert("etag".into(), Value::from(e));
        }
        self.get(client, id, &prior).await?.ok_or_else(|| {
            ProviderError::not_found(format!("dashboard {id} vanished after it was written"))
        })
    }
}

#[async_trait]
impl ResourceKind for Dashboard {
    fn type_name(&self) -> &'static str {
        "databricks_dashboard"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The content's hash, and the provider's default of `embed_credentials`.
    fn prepare_config(
        &self,
        config: &mut Object,
        base_dir: &Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        let text = content(config, base_dir)?;
        config.insert("md5".into(), Value::from(md5_hex(&text)));
        if !set(config, "embed_credentials") {
            config.insert("embed_credentials".into(), Value::Bool(true));
        }
        Ok(())
    }

    fn plan_computed(&self, config: &Object) -> Object {
        let mut out = Object::default();
        if !set(config, "embed_credentials") {
            out.insert("embed_credentials".into(), Value::Bool(true));
        }
        if let Some(text) = str_attr(config, "serialized_dashboard")
            && !set(config, "file_path")
        {
            out.insert("md5".into(), Value::from(md5_hex(text)));
        }
        out
    }

    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = Vec::new();
        let inline = config.get("serialized_dashboard");
        let file = config.get("file_path");
        let given = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
        if given(inline) && given(file) {
            out.push(Finding::error(
                &["file_path"],
                "set serialized_dashboard or file_path, not both",
            ));
        } else if !given(inline) && !given(file) {
            out.push(
                Finding::error(&["serialized_dashboard"], "a dashboard needs its content")
                    .hint("set serialized_dashboard (jsonencode works) or file_path (a .lvdash.json file)"),
            );
        }
        if let Some(text) = str_attr(config, "serialized_dashboard") {
            match serde_json::from_str::<Json>(text) {
                Ok(Json::Object(_)) => {}
                Ok(_) => out.push(Finding::error(
                    &["serialized_dashboard"],
                    "serialized_dashboard is a JSON object (a .lvdash.json document), not another JSON value",
                )),
                Err(e) => out.push(
                    Finding::error(&["serialized_dashboard"], format!("serialized_dashboard is not valid JSON: {e}"))
                        .hint("write it with jsonencode({ ... }) or file(\"dashboard.lvdash.json\")"),
                ),
            }
        }
        if let Some(p) = str_attr(config, "parent_path")
            && !p.starts_with('/')
        {
            out.push(
                Finding::error(
                    &["parent_path"],
                    format!("parent_path {p:?} is not a workspace path"),
                )
                .hint("a workspace path is absolute: /Users/…, /Shared/…"),
            );
        }
        out
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let text =
            content(config, &ctx.base_dir).map_err(|e| ProviderError::invalid(e.to_string()))?;
        let b = body(config, &text);
        let query = dataset_overrides(config);
        let made = match client
            .write_with_query(Method::POST, BASE, &query, &b)
            .await
        {
            Ok(d) => d,
            Err(e) if e.kind == ErrorKind::NotFound => {
                // The folder does not exist: made, and the create tried again.
                let folder = str_attr(config, "parent_path").unwrap_or_default();
                client
                    .idempotent()
                    .post("/api/2.0/workspace/mkdirs", &json!({ "path": folder }))
                    .await
                    .map_err(err)?;
                client
                    .write_with_query(Method::POST, BASE, &query, &b)
                    .await
                    .map_err(err)?
            }
            Err(e) => return Err(err(e)),
        };
        let id = created_id(&made, "dashboard_id", "dashboard")?;
        self.publish_or_trash(&client, &id, config).await?;
        let etag = made.get("etag").and_then(Json::as_str);
        self.read_back(&client, &id, config, etag).await
    }

    /// A dashboard found after a create whose answer was lost may not be published yet, and
    /// publishing takes the configuration's `embed_credentials`, which is not known here: its
    /// published state is left unreported, so the next plan compares what it reads with the
    /// configuration and publishes it.
    async fn complete_create(&self, _: &OpContext, mut remote: Remote) -> ProviderResult<Remote> {
        if remote
            .attrs
            .get("embed_credentials")
            .is_none_or(Value::is_null)
        {
            remote.attrs.shift_remove("embed_credentials");
        }
        Ok(remote)
    }

    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        self.get(&client, id, prior).await
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let text =
            content(config, &ctx.base_dir).map_err(|e| ProviderError::invalid(e.to_string()))?;
        let mut b = body(config, &text);
        if let Json::Object(m) = &mut b {
            // The folder is not changed in place (a change replaces the dashboard).
            m.remove("parent_path");
        }
        let updated = client
            .write_with_query(
                Method::PATCH,
                &format!("{BASE}/{id}"),
                &dataset_overrides(config),
                &b,
            )
            .await
            .map_err(err)?;
        self.publish_or_trash(&client, id, config).await?;
        let etag = updated.get("etag").and_then(Json::as_str);
        self.read_back(&client, id, config, etag).await
    }

    /// Trashes the dashboard; one already trashed (403) is deleted.
    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        match client
            .idempotent()
            .delete(&format!("{BASE}/{id}"), &[])
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
            Err(e) if e.status == 403 => {
                let again = none_if_missing(client.get(&format!("{BASE}/{id}"), &[]).await)?;
                match again {
                    None => Ok(()),
                    Some(d) if trashed(&d) => Ok(()),
                    Some(_) => Err(err(e)),
                }
            }
            Err(e) => Err(err(e)),
        }
    }

    /// A dashboard's path is unique: its folder and display name find it.
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        let folder = unmounted(str_attr(config, "parent_path")?);
        let name = str_attr(config, "display_name")?;
        Some(format!("{folder}/{name}"))
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let Some((folder, name)) = key.rsplit_once('/') else {
            return Ok(None);
        };
        let client = self.shared.client()?;
        let listed = client
            .list_all(BASE, &[], "dashboards", Some(LIST_PAGE))
            .await
            .map_err(err)?;
        let found = listed.into_iter().find(|d| {
            d.get("display_name").and_then(Json::as_str) == Some(name)
                && d.get("parent_path")
                    .and_then(Json::as_str)
                    .map(unmounted)
                    .as_deref()
                    == Some(unmounted(folder).as_str())
        });
        let Some(id) = found
            .as_ref()
            .and_then(|d| d.get("dashboard_id").and_then(Json::as_str))
        else {
            return Ok(None);
        };
        self.get(&client, id, &Object::default()).await
    }
}

/// The page size of the dashboards list (`page_size`; the service's most is 1000).
pub const LIST_PAGE: crate::client::PageSize = crate::client::PageSize::new("page_size", "1000");

#[cfg(test)]
mod tests {
    use super::*;

    fn kind() -> Dashboard {
        Dashboard::new(Arc::new(Shared::default()))
    }

    fn config(v: Json) -> Object {
        super::super::decoded(&schema(), v)
    }

    #[test]
    fn checks_follow_the_provider() {
        let k = kind();
        let ok = config(
            json!({"display_name": "d", "warehouse_id": "w", "parent_path": "/Shared", "serialized_dashboard": "{\"pages\":[]}"}),
        );
        assert!(k.check(&ok).is_empty());
        let both = config(
            json!({"display_name": "d", "warehouse_id": "w", "parent_path": "/Shared", "serialized_dashboard": "{}", "file_path": "d.json"}),
        );
        assert!(
            k.check(&both)
                .iter()
                .any(|f| f.message.contains("not both"))
        );
        let none =
            config(json!({"display_name": "d", "warehouse_id": "w", "parent_path": "/Shared"}));
        assert!(
            k.check(&none)
                .iter()
                .any(|f| f.message.contains("needs its content"))
        );
        let bad = config(
            json!({"display_name": "d", "warehouse_id": "w", "parent_path": "/Shared", "serialized_dashboard": "[1]"}),
        );
        assert!(
            k.check(&bad)
                .iter()
                .any(|f| f.message.contains("JSON object"))
        );
    }

    #[test]
    fn a_file_is_hashed_and_embed_credentials_defaults_to_true() {
        let dir = std::env::temp_dir().join(format!("bf-dash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("d.lvdash.json"), "{\"pages\":[]}").unwrap();
        let mut c = config(
            json!({"display_name": "d", "warehouse_id": "w", "parent_path": "/Shared", "file_path": "d.lvdash.json"}),
        );
        kind().prepare_config(&mut c, &dir).unwrap();
        assert_eq!(c["md5"], Value::from(md5_hex("{\"pages\":[]}")));
        assert_eq!(c["embed_credentials"], Value::Bool(true));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_content_is_what_was_applied_while_the_etag_is_the_same() {
        let s = schema();
        let mut prior = config(
            json!({"display_name": "d", "warehouse_id": "w", "parent_path": "/Workspace/Shared",
            "serialized_dashboard": "{\"pages\":[{\"name\":\"p\"}]}", "md5": "m"}),
        );
        // As recorded after the last apply (computed: not part of a decoded configuration).
        prior.insert("etag".into(), Value::from("1"));
        let answer = json!({"dashboard_id": "x", "display_name": "d", "warehouse_id": "w", "parent_path": "/Shared",
            "etag": "1", "serialized_dashboard": "{\"pages\":[{\"name\":\"p\",\"pageType\":\"PAGE_TYPE_CANVAS\"}]}\n"});
        let published = json!({"embed_credentials": false});
        let r = remote(&s, &answer, Some(&published), &prior);
        assert_eq!(r.id, "x");
        assert_eq!(r.attrs["md5"], Value::from("m"));
        assert_eq!(
            r.attrs["serialized_dashboard"],
            prior["serialized_dashboard"]
        );
        assert_eq!(r.attrs["parent_path"], Value::from("/Workspace/Shared"));
        assert_eq!(r.attrs["embed_credentials"], Value::Bool(false));
        // Another etag: an edit outside brickform, read as what the service holds.
        prior.insert("etag".into(), Value::from("0"));
        let r = remote(&s, &answer, None, &prior);
        assert_ne!(r.attrs["md5"], Value::from("m"));
        assert_eq!(r.attrs["embed_credentials"], Value::Null);
    }
}
