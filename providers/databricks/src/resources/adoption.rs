//! Adoption as a capability of the kinds (`brickform adopt`): what a kind's listing is given
//! and returns, what it writes for an object it adopts, and the listing helpers the kinds
//! share. The types live with the kinds; the adopt command's module chooses among what they list.

use crate::client::Client;
use brickform_core::provider::{ProviderError, ProviderResult};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A live object as a listing shows it, with what the rules look at.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    pub id: String,
    /// Its name; a workspace object's path.
    pub name: String,
    /// The catalog it is in or publishes into.
    pub catalog: Option<String>,
    pub creator: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// Its attributes when the listing holds them (jobs, pipelines): what it uses is then
    /// known without reading it again.
    pub attrs: Option<Object>,
}

/// What a kind's listing is given: what the rules choose of workspace folders, the Unity
/// Catalog parents found so far, and listings several kinds share (every pipeline, read
/// once for the three pipeline kinds).
pub struct Scope<'a> {
    /// The workspace folders (and path prefixes) whose notebooks and files to list.
    pub workspace_prefixes: Vec<String>,
    /// Catalogs whose schemas to list.
    pub catalogs: Vec<String>,
    /// Schemas (`catalog.schema`) whose volumes to list.
    pub schemas: Vec<String>,
    pub shared_lists: &'a tokio::sync::Mutex<HashMap<&'static str, Arc<Vec<Json>>>>,
}

impl Scope<'_> {
    /// The listing `key`, made by `list` the first time it is asked for.
    pub async fn shared_list<F, Fut>(
        &self,
        key: &'static str,
        list: F,
    ) -> ProviderResult<Arc<Vec<Json>>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = ProviderResult<Vec<Json>>>,
    {
        let mut lists = self.shared_lists.lock().await;
        if let Some(l) = lists.get(key) {
            return Ok(l.clone());
        }
        let l = Arc::new(list().await?);
        lists.insert(key, l.clone());
        Ok(l)
    }
}

/// A local file written for an adopted object's content, and the attribute naming it.
pub struct AdoptedFile {
    pub name: String,
    pub bytes: Vec<u8>,
    pub attr: &'static str,
}

/// What is written for an adopted object.
pub struct Adoption {
    /// Its attributes, shaped as a configuration.
    pub values: Object,
    pub file: Option<AdoptedFile>,
}

/// A kind's attributes as adopt writes them, leaving out the optional and computed ones
/// whose value `chosen_by_the_service` says nobody chose (an owner that is whoever made it, a
/// managed volume's storage): left out, they keep their value, so that is no change.
pub fn as_configured(
    schema: &brickform_core::provider::Schema,
    attrs: &Object,
    chosen_by_the_service: impl Fn(&str, &Value) -> bool,
) -> Object {
    let mut values = attrs.clone();
    for a in &schema.attributes {
        if a.presence == brickform_core::provider::Presence::OptionalComputed
            && values
                .get(a.name)
                .is_some_and(|v| chosen_by_the_service(a.name, v))
        {
            values.insert(a.name.to_string(), Value::Null);
        }
    }
    values
}

/// A listing failed: what was being listed, and why.
pub fn listing_error(what: &str, e: crate::client::ApiError) -> ProviderError {
    ProviderError::other(format!("listing {what}: {e}"))
}

/// The objects a Unity Catalog list call returns, as listed objects.
pub fn uc_listed(objects: &[Json], is_catalog: bool, skip: impl Fn(&str) -> bool) -> Vec<Listed> {
    objects
        .iter()
        .filter_map(|o| {
            let id = o
                .get("full_name")
                .or_else(|| o.get("name"))
                .and_then(Json::as_str)?;
            if skip(id) {
                return None;
            }
            let text = |k: &str| o.get(k).and_then(Json::as_str).map(str::to_string);
            Some(Listed {
                id: id.to_lowercase(),
                name: text("name").unwrap_or_else(|| id.to_string()),
                // A catalog is in itself.
                catalog: if is_catalog {
                    Some(id.to_lowercase())
                } else {
                    text("catalog_name")
                },
                creator: text("created_by").or_else(|| text("owner")),
                ..Listed::default()
            })
        })
        .collect()
}

/// Lists `path` (paging as the collection pages) or fails saying what was listed.
pub async fn list(
    client: &Client,
    path: &str,
    query: &[(&str, String)],
    items: &str,
    page: Option<crate::client::PageSize>,
) -> ProviderResult<Vec<Json>> {
    client
        .list_all(path, query, items, page)
        .await
        .map_err(|e| listing_error(path, e))
}
