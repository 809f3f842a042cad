//! Unity Catalog securables (catalogs, schemas, volumes, connections) share one life cycle:
//! create with POST, read with GET by full name, update with PATCH (renames through
//! `new_name`), delete with DELETE. Each kind supplies only what differs, as data.

use super::place::Place;
use super::{attrs_from, body_of, err, gone_ok, json_of, none_if_missing, str_attr};
use crate::Shared;
use crate::volume_path::VolumePath;
use async_trait::async_trait;
use brickform_core::fan_out;
use brickform_core::location::Location;
use brickform_core::provider::{
    ErrorKind, Existing, Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Map, Value as Json};
use std::sync::Arc;

/// What distinguishes one securable from another.
pub struct UcSpec {
    pub type_name: &'static str,
    /// The REST collection: `catalogs`, `schemas`, `volumes`, `connections`.
    pub collection: &'static str,
    /// The name parts that make the full name, in order (`catalog_name`, `name`).
    pub name_parts: &'static [&'static str],
    /// Fields sent on create.
    pub create_fields: &'static [&'static str],
    /// Fields that may be changed with PATCH.
    pub update_fields: &'static [&'static str],
    /// Fields PATCH needs every time (a connection's `options`).
    pub always_send: &'static [&'static str],
    /// Update fields that are cleared when the configuration stops setting them: a PATCH
    /// leaves out what it does not name, so the removal is sent as the empty value of the
    /// field's type (an empty comment, an empty map). Fields not listed (an enum, an owner:
    /// optional+computed) keep their live value when left out.
    pub clear_when_unset: &'static [&'static str],
    /// Whether a `protect = true` environment guards the objects against delete and
    /// replace (data lives in them).
    pub protected: bool,
    /// The page size of the collection's list call (`None`: the API has no useful one).
    pub list_page: Option<crate::client::PageSize>,
    /// Whether delete takes `force` (from the `force_destroy` attribute).
    pub force_delete: bool,
    /// What a delete takes with it.
    pub holds: Holds,
    /// Adds computed attributes derived from the response (`volume_path`).
    pub derive: fn(&mut Object),
    /// Runs after a create (the catalog removes its auto-created `default` schema).
    pub after_create: Option<AfterCreate>,
    /// Checks a configuration against the service before it is written (create and
    /// update): the catalog's `metastore_id` must be the workspace's.
    pub before_write: Option<BeforeWrite>,
    /// The service's own id of the object (`schema_id`, `volume_id`, `connection_id`),
    /// which a rename keeps: an object renamed outside brickform is found by it under its
    /// new name, so the plan renames it back instead of making a second one (and replacing
    /// what depends on it, such as a foreign catalog reading through a connection).
    pub stable_id: Option<&'static str>,
    /// The import id may be qualified by the metastore, `METASTORE_ID|NAME`, as the
    /// Terraform provider writes a connection's; the object must then be in that metastore.
    pub metastore_qualified_import: bool,
    /// The namespace level its objects are, if they hold others' (catalogs, schemas): what
    /// `brickform adopt` lists narrows what it lists inside them.
    pub namespace: Option<super::Namespace>,
    /// Whether development presets prefix its name (`schema_prefix`), so a developer's
    /// copy lives beside the others.
    pub prefixed_in_development: bool,
    /// Where its values name other objects (a schema's catalog).
    pub references: &'static [brickform_core::provider::Reference],
    /// Static checks of a configuration beyond its schema (a storage credential holds
    /// exactly one cloud identity).
    pub check: Option<fn(&Object) -> Vec<Finding>>,
    /// Attributes a PATCH sends under another name, acting on that call only and never
    /// answered: `(attribute, field)`, as a storage credential's `force_update` is `force`.
    pub patch_as: &'static [(&'static str, &'static str)],
    /// Where the object stands in cloud storage, for the order of creates and deletes.
    pub storage: InStorage,
}

/// Collections whose list answers name their items otherwise than their path: `models`
/// answers `registered_models` (ListRegisteredModelsResponse of the SDKs).
const ITEMS_KEYS: &[(&str, &str)] = &[("models", "registered_models")];

/// The key of a collection's list answers: its path segment in snake case
/// (`storage-credentials` answers `storage_credentials`), unless [`ITEMS_KEYS`] says.
pub fn items_key(collection: &str) -> String {
    ITEMS_KEYS
        .iter()
        .find(|(c, _)| *c == collection)
        .map_or_else(|| collection.replace('-', "_"), |(_, k)| (*k).to_string())
}

/// What a securable's delete takes with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Nothing brickform tracks (a connection).
    Nothing,
    /// A catalog's schemas, a schema's volumes — with `force_destroy`; without it the
    /// service refuses to delete a container that is not empty.
    WhenForced,
    /// A volume's files: always.
    Always,
}

/// A step run after a securable is created, given the client and the new object as read.
pub type AfterCreate = for<'a> fn(
    &'a crate::client::Client,
    &'a Remote,
) -> futures_util_box::BoxFuture<'a, ProviderResult<()>>;

pub type BeforeWrite = for<'a> fn(
    &'a crate::client::Client,
    &'a Object,
) -> futures_util_box::BoxFuture<'a, ProviderResult<()>>;

/// A boxed future type without pulling in the futures crate.
pub mod futures_util_box {
    pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
}

/// The value that clears a field of this type, for the types that have one.
fn empty_value(ty: &brickform_core::provider::AttrType) -> Option<Json> {
    use brickform_core::provider::AttrType;
    match ty {
        AttrType::String => Some(Json::String(String::new())),
        AttrType::Map(_) => Some(Json::Object(Map::new())),
        _ => None,
    }
}

pub struct UcKind {
    pub spec: UcSpec,
    pub schema: Schema,
    pub shared: Arc<Shared>,
}

/// Where a securable stands in cloud storage. An external location is at its `url`, and a
/// catalog or schema whose managed storage root lies under that url is created after it
/// and deleted before it, though nothing in either configuration refers to the other: Unity
/// Catalog refuses a storage root no external location covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InStorage {
    /// Nowhere the order depends on.
    Nowhere,
    /// At the path the attribute holds.
    At(&'static str),
    /// Under the path the attribute holds.
    Under(&'static str),
}

impl UcKind {
    /// The error for a name that is already taken by an object this state does not manage.
    fn taken(&self, ctx: &OpContext, name: &str, owner: Option<&str>) -> ProviderError {
        let what = self.spec.type_name.trim_start_matches("databricks_");
        let by = owner.map(|o| format!(" (owner {o})")).unwrap_or_default();
        ProviderError::new(
            ErrorKind::AlreadyExists,
            format!(
                "{what} {name} already exists{by} and this state does not manage it; brickform does not take over objects it did not create"
            ),
        )
        .with_detail(format!(
            "Another state or another developer owns it. Give yours another name (for example through a variable per environment or developer), or, if it should be managed here, import it: brickform import {} {name}",
            ctx.address
        ))
    }

    /// The value that clears an updatable field the kind declares cleared when unset, by its
    /// type: an empty comment, an empty map. `None` for the others.
    fn cleared(&self, field: &str) -> Option<Json> {
        if !self.spec.clear_when_unset.contains(&field) {
            return None;
        }
        empty_value(&self.schema.attribute(field)?.ty)
    }

    /// The field a PATCH sends an update field as (see [`UcSpec::patch_as`]).
    fn patched_as<'a>(&self, field: &'a str) -> &'a str {
        self.spec
            .patch_as
            .iter()
            .find(|(a, _)| *a == field)
            .map_or(field, |(_, w)| w)
    }

    fn path(&self, full_name: &str) -> String {
        format!(
            "/api/2.1/unity-catalog/{}/{}",
            self.spec.collection, full_name
        )
    }

    /// The full name's form, from the name parts: `CATALOG.SCHEMA.NAME`.
    fn import_format(&self) -> String {
        self.spec
            .name_parts
            .iter()
            .map(|p| p.trim_end_matches("_name").to_uppercase())
            .collect::<Vec<_>>()
            .join(".")
    }

    fn full_name(&self, config: &Object) -> String {
        self.spec
            .name_parts
            .iter()
            .map(|p| str_attr(config, p).unwrap_or("").to_lowercase())
            .collect::<Vec<_>>()
            .join(".")
    }

    /// A response read back, with what only brickform knows kept from the prior state:
    /// `force_destroy` has no counterpart in the service.
    fn remote_with_prior(&self, resp: &Json, prior: &Object) -> Remote {
        let mut remote = self.remote(resp);
        if let Some(v) = prior.get("force_destroy") {
            remote.attrs.insert("force_destroy".into(), v.clone());
        }
        remote
    }

    /// The query of the list call for the objects under `parent` (a catalog's or a
    /// schema's full name; nothing for top-level securables).
    fn list_query(&self, parent: &str) -> Vec<(&'static str, String)> {
        match self.spec.name_parts.len() {
            2 => vec![("catalog_name", parent.to_string())],
            3 => {
                let (c, s) = parent.split_once('.').unwrap_or((parent, ""));
                vec![
                    ("catalog_name", c.to_string()),
                    ("schema_name", s.to_string()),
                ]
            }
            _ => Vec::new(),
        }
    }

    /// Whether a listed object is the one `prior` recorded, by the service's own id.
    fn same_object(&self, listed: &Json, prior: &Object) -> bool {
        let Some(field) = self.spec.stable_id else {
            return false;
        };
        matches!(
            (service_id(listed, field), str_attr(prior, field)),
            (Some(a), Some(b)) if a == b
        )
    }

    /// An object no longer under the name `id` may have been renamed outside brickform:
    /// the listing of its parent holds it under its new name, with the same service id.
    async fn renamed_outside(&self, id: &str, prior: &Object) -> ProviderResult<Option<Json>> {
        if self
            .spec
            .stable_id
            .is_none_or(|f| str_attr(prior, f).is_none())
        {
            return Ok(None);
        }
        let client = self.shared.client()?;
        let parent = id.rsplit_once('.').map(|(p, _)| p).unwrap_or_default();
        let query = self.list_query(parent);
        let path = format!("/api/2.1/unity-catalog/{}", self.spec.collection);
        let listed = match client
            .list_all(
                &path,
                &query,
                &items_key(self.spec.collection),
                self.spec.list_page,
            )
            .await
        {
            Ok(l) => l,
            // The parent is gone as well: so is the object.
            Err(e) if e.status == 404 => return Ok(None),
            Err(e) => return Err(err(e)),
        };
        Ok(listed.into_iter().find(|o| self.same_object(o, prior)))
    }

    /// The response as attributes: schema fields, `id` (the full name) and derived ones.
    fn remote(&self, resp: &Json) -> Remote {
        let mut attrs = attrs_from(&self.schema, resp);
        // A storage credential answers its own id as `id`, which brickform's `id` (the
        // name) takes: it is kept under the kind's name for it.
        if let Some(field) = self.spec.stable_id
            && !attrs.contains_key(field)
            && let Some(v) = service_id(resp, field)
        {
            attrs.insert(field.to_string(), Value::from(v));
        }
        // A GET answers the whole object: a comment it leaves out is no comment.
        super::wire::absent_is_unset(&self.schema, &mut attrs);
        let id = resp
            .get("full_name")
            .and_then(Json::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| self.full_name(&attrs));
        attrs.insert("id".into(), Value::from(id.as_str()));
        (self.spec.derive)(&mut attrs);
        Remote { id, attrs }
    }
}

/// The service's own id of an answered object: under its own field (`volume_id`), or as
/// `id` where the service names it so (`StorageCredentialInfo.id`).
fn service_id<'a>(resp: &'a Json, field: &str) -> Option<&'a str> {
    resp.get(field)
        .or_else(|| resp.get("id"))
        .and_then(Json::as_str)
}

/// Catalogs the service keeps for itself: never adopted.
const SERVICE_CATALOGS: &[&str] = &[
    "system",
    "hive_metastore",
    "samples",
    "__databricks_internal",
];

/// Objects the service makes and removes with something else: a catalog's
/// `information_schema`, a gateway's staging volume.
fn made_by_the_service(full_name: &str) -> bool {
    let last = full_name.rsplit('.').next().unwrap_or(full_name);
    SERVICE_CATALOGS.contains(&full_name)
        || last == "information_schema"
        || last.starts_with("__databricks_ingestion_gateway_staging_data")
}

#[async_trait]
impl super::DatabricksKind for UcKind {
    /// Others' schemas, tables and pipelines live in them.
    fn shared_by_others(&self) -> bool {
        true
    }

    fn namespace(&self) -> Option<super::Namespace> {
        self.spec.namespace
    }

    async fn listing(
        &self,
        client: &crate::client::Client,
        scope: &crate::resources::adoption::Scope<'_>,
    ) -> Option<ProviderResult<Vec<crate::resources::adoption::Listed>>> {
        let parents = match self.spec.name_parts.len() {
            1 => vec![String::new()],
            2 => scope.catalogs.clone(),
            _ => scope.schemas.clone(),
        };
        let path = format!("/api/2.1/unity-catalog/{}", self.spec.collection);
        let mut out = Vec::new();
        for parent in parents {
            let query = self.list_query(&parent);
            match client
                .list_all(
                    &path,
                    &query,
                    &items_key(self.spec.collection),
                    self.spec.list_page,
                )
                .await
            {
                Ok(objects) => out.extend(crate::resources::adoption::uc_listed(
                    &objects,
                    self.spec.namespace == Some(super::Namespace::Catalog),
                    made_by_the_service,
                )),
                // The parent went while it was being listed.
                Err(e) if e.status == 404 => {}
                Err(e) => return Some(Err(crate::resources::adoption::listing_error(&path, e))),
            }
        }
        Some(Ok(out))
    }

    /// A container holding what is not adopted with it (tables, another's schema) is written
    /// with `force_destroy = true`, so a destroy can delete it (the plan names what goes
    /// with it); one holding only adopted objects is not.
    async fn adoption(
        &self,
        client: &crate::client::Client,
        remote: &Remote,
        adopted: &[Location],
    ) -> ProviderResult<crate::resources::adoption::Adoption> {
        // What differs from what the service chooses is somebody's choice: an owner other
        // than the user who made it (the one adopting, as the service says).
        let attrs = &remote.attrs;
        let text = |k: &str| attrs.get(k).and_then(Value::as_str);
        let me = self.shared.current_user().await?;
        let mut values = crate::resources::adoption::as_configured(&self.schema, attrs, |k, v| {
            let v = v.as_str();
            match k {
                "owner" => v
                    .zip(me.as_deref())
                    .is_some_and(|(o, me)| o.eq_ignore_ascii_case(me)),
                "isolation_mode" => v == Some("OPEN"),
                "enable_predictive_optimization" => v == Some("INHERIT"),
                "metastore_id" => true,
                "storage_location" => text("volume_type") != Some("EXTERNAL"),
                _ => false,
            }
        });
        // A write-only value (a connection's options, read back without the credentials)
        // is the user's to give: a sensitive variable.
        for a in self.schema.attributes.iter().filter(|a| a.sensitive) {
            values.insert(a.name.to_string(), Value::Null);
        }
        if self.spec.force_delete && self.spec.holds == Holds::WhenForced {
            let holds = match self.spec.collection {
                "catalogs" => super::locations::catalog_contents(client, &remote.id).await?,
                _ => super::locations::schema_contents(client, &remote.id).await?,
            };
            if holds.iter().any(|l| !adopted.contains(l)) {
                values.insert("force_destroy".into(), Value::Bool(true));
            }
        }
        Ok(crate::resources::adoption::Adoption { values, file: None })
    }
}

#[async_trait]
impl ResourceKind for UcKind {
    fn type_name(&self) -> &'static str {
        self.spec.type_name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn apply_presets(
        &self,
        p: &brickform_core::provider::Presets,
        config: &mut Object,
    ) -> Vec<brickform_core::provider::PresetChange> {
        if self.spec.prefixed_in_development && super::presets::prefixes_schemas(p) {
            super::presets::prefix(config, "name", &super::presets::schema_prefix(p))
                .into_iter()
                .map(|mut c| {
                    c.note = format!("schema {}", c.note);
                    c
                })
                .collect()
        } else {
            Vec::new()
        }
    }

    async fn name_taken(
        &self,
        ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Option<Existing>> {
        Ok(self.find_existing(ctx, config).await?.into_iter().next())
    }

    /// The securable of the configured full name, with its owner. Unity Catalog objects
    /// carry no ownership tag: the owner is all the service says about whose it is.
    async fn find_existing(
        &self,
        ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<Existing>> {
        let name = self.full_name(config);
        if name.split('.').any(str::is_empty) {
            return Ok(Vec::new());
        }
        let found = match self.read(ctx, &name, &Object::default()).await {
            Ok(r) => r,
            Err(e) if e.kind == ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let what = self.spec.type_name.trim_start_matches("databricks_");
        Ok(found
            .map(|remote| {
                let owner = str_attr(&remote.attrs, "owner").map(str::to_string);
                Existing {
                    what: match &owner {
                        Some(o) => format!("{what} {name} (owner {o})"),
                        None => format!("{what} {name}"),
                    },
                    tag: None,
                    owner,
                    exclusive: true,
                    remote,
                }
            })
            .into_iter()
            .collect())
    }

    fn references(&self) -> &'static [brickform_core::provider::Reference] {
        self.spec.references
    }

    fn protected(&self) -> bool {
        self.spec.protected
    }

    fn check(&self, config: &Object) -> Vec<Finding> {
        self.spec.check.map(|c| c(config)).unwrap_or_default()
    }

    fn plan_computed(&self, config: &Object) -> Object {
        let parts: Option<Vec<String>> = self
            .spec
            .name_parts
            .iter()
            .map(|k| {
                config
                    .get(*k)
                    .and_then(Value::as_str)
                    .map(str::to_lowercase)
            })
            .collect();
        let Some(parts) = parts else {
            return Object::default();
        };
        let mut derived = config.clone();
        derived.insert("full_name".into(), Value::from(parts.join(".")));
        (self.spec.derive)(&mut derived);
        self.schema
            .attributes
            .iter()
            .filter(|a| a.is_computed_only() && !a.derived_from.is_empty())
            .filter_map(|a| derived.get(a.name).map(|v| (a.name.to_string(), v.clone())))
            .collect()
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        if let Some(check) = self.spec.before_write {
            check(&client, config).await?;
        }
        let body = body_of(config, self.spec.create_fields);
        let path = format!("/api/2.1/unity-catalog/{}", self.spec.collection);
        let mut remote = match client.post(&path, &body).await {
            Ok(resp) => self.remote(&resp),
            // The first attempt made it and its answer was lost; the repeat hears "already
            // exists". The object with this full name is the one this create made.
            Err(e) if e.kind == ErrorKind::AlreadyExists && e.after_retry => {
                let name = self.full_name(config);
                self.find_by_key(ctx, &name).await?.ok_or_else(|| err(e))?
            }
            // Somebody else's (another state's, another developer's): never shared silently.
            Err(e) if e.kind == ErrorKind::AlreadyExists => {
                let name = self.full_name(config);
                let owner = self
                    .read(ctx, &name, &Object::default())
                    .await
                    .ok()
                    .flatten()
                    .and_then(|r| {
                        r.attrs
                            .get("owner")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    });
                return Err(self.taken(ctx, &name, owner.as_deref()));
            }
            Err(e) => return Err(err(e)),
        };
        // From here the object exists: a failure says so, and the engine finds it again.
        remote = self
            .complete_create(ctx, remote.clone())
            .await
            .map_err(|e| e.uncertain(true))?;
        // Fields create does not take (owner, isolation mode, …) are set right after.
        let mut patch = Map::new();
        for f in self.spec.update_fields {
            if self.spec.create_fields.contains(f) || self.patched_as(f) != *f {
                continue;
            }
            if let Some(j) = config.get(*f).and_then(json_of)
                && remote.attrs.get(*f).map(Value::to_json).as_ref() != Some(&j)
            {
                patch.insert(f.to_string(), j);
            }
        }
        if !patch.is_empty() {
            // A PATCH that needs some fields every time (a connection's options) needs
            // them here too.
            for f in self.spec.always_send {
                if let Some(j) = config.get(*f).and_then(json_of) {
                    patch.entry(f.to_string()).or_insert(j);
                }
            }
            let resp = client
                .patch(&self.path(&remote.id), &Json::Object(patch))
                .await
                .map_err(|e| err(e).made(remote.clone()))?;
            remote = self.remote(&resp);
        }
        Ok(remote)
    }

    /// The step after the create call (a catalog's `default` schema goes); it tolerates
    /// having run already.
    async fn complete_create(&self, _ctx: &OpContext, remote: Remote) -> ProviderResult<Remote> {
        if let Some(after) = self.spec.after_create {
            let client = self.shared.client()?;
            after(&client, &remote).await?;
        }
        Ok(remote)
    }

    async fn read(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let resp = match none_if_missing(client.get(&self.path(id), &[]).await)? {
            Some(r) => Some(r),
            None => self.renamed_outside(id, prior).await?,
        };
        Ok(resp.map(|r| self.remote_with_prior(&r, prior)))
    }

    /// One list call per parent (catalog, schema) for parents holding several of the
    /// objects asked for; a single GET otherwise. A no-op plan of many volumes in a few
    /// schemas then costs a few calls instead of one per volume.
    async fn read_many(
        &self,
        ctx: &OpContext,
        items: &[(String, Object)],
    ) -> Option<Vec<ProviderResult<Option<Remote>>>> {
        let client = match self.shared.client() {
            Ok(c) => c,
            Err(e) => return Some(items.iter().map(|_| Err(e.clone())).collect()),
        };
        let parent_of = |id: &str| {
            id.rsplit_once('.')
                .map(|(p, _)| p.to_string())
                .unwrap_or_default()
        };
        let mut by_parent: std::collections::BTreeMap<String, usize> = Default::default();
        for (id, _) in items {
            *by_parent.entry(parent_of(id)).or_default() += 1;
        }
        // Listings of parents with several objects, all at once (the client's limiter paces
        // them).
        let parents: Vec<&String> = by_parent
            .iter()
            .filter(|(_, count)| **count >= 2)
            .map(|(p, _)| p)
            .collect();
        let path = format!("/api/2.1/unity-catalog/{}", self.spec.collection);
        let (key, page) = (items_key(self.spec.collection), self.spec.list_page);
        let lists = fan_out::bounded(
            "listing parents",
            parents.iter().copied(),
            parents.len(),
            |parent| {
                let (client, path, key) = (client.clone(), path.clone(), key.clone());
                let (parent, query) = (parent.clone(), self.list_query(parent));
                async move {
                    let listed = client.list_all(&path, &query, &key, page).await;
                    (parent, listed)
                }
            },
        );
        let mut listed: std::collections::HashMap<
            String,
            Result<std::collections::HashMap<String, Json>, ProviderError>,
        > = Default::default();
        // A listing whose task did not finish falls back to single reads, as a failed one.
        for (parent, result) in lists.await.into_iter().flatten() {
            let result = result.map_err(err).map(|objs| {
                objs.into_iter()
                    .filter_map(|o| {
                        o.get("full_name")
                            .and_then(Json::as_str)
                            .map(|n| (n.to_string(), o.clone()))
                    })
                    .collect()
            });
            // A parent that is gone (or cannot be listed) falls back to single reads.
            listed.insert(parent, result);
        }
        let mut out = Vec::with_capacity(items.len());
        for (id, prior) in items {
            match listed.get(&parent_of(id)) {
                Some(Ok(objs)) => out.push(Ok(objs
                    .get(id)
                    .or_else(|| objs.values().find(|o| self.same_object(o, prior)))
                    .map(|o| self.remote_with_prior(o, prior)))),
                _ => out.push(self.read(ctx, id, prior).await),
            }
        }
        Some(out)
    }

    async fn update(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        if let Some(check) = self.spec.before_write {
            check(&client, config).await?;
        }
        // A parent renamed in this apply moved this object with it: address it under the
        // parent's new name (the plan lets such a change follow the rename).
        let moved;
        let id = match self.spec.name_parts.split_last() {
            Some((_, parents)) if !parents.is_empty() => {
                // The object's name now: the id's last part (it is the name the object was
                // last seen under, which a rename outside brickform changed).
                let leaf = id.rsplit('.').next().unwrap_or(id).to_lowercase();
                let parent: Vec<String> = parents
                    .iter()
                    .map(|p| str_attr(config, p).unwrap_or("").to_lowercase())
                    .collect();
                moved = format!("{}.{leaf}", parent.join("."));
                moved.as_str()
            }
            _ => id,
        };
        let mut patch = Map::new();
        let new_name = str_attr(config, "name").map(str::to_lowercase);
        let current = id.rsplit('.').next().unwrap_or(id).to_lowercase();
        if let Some(n) = &new_name
            && current != *n
        {
            patch.insert("new_name".into(), Json::String(n.clone()));
        }
        // `prior` is the last-applied configuration, not the live object: a field changed
        // outside brickform looks unchanged against it. So every configured field is sent
        // (PATCH with the current value is harmless), which also puts drift back.
        for f in self.spec.update_fields {
            let want = config.get(*f).and_then(json_of);
            let have = prior.get(*f).and_then(json_of);
            if self.spec.always_send.contains(f) || want.is_some() {
                if let Some(j) = want {
                    patch.insert(self.patched_as(f).to_string(), j);
                }
            } else if want.is_none()
                && have.is_some()
                && let Some(empty) = self.cleared(f)
            {
                // A field removed from the configuration is cleared: a PATCH leaves out
                // what it does not name, so the removal must be sent.
                patch.insert(f.to_string(), empty);
            }
        }
        if patch.is_empty() {
            return self.read(_ctx, id, prior).await?.ok_or_else(|| {
                brickform_core::provider::ProviderError::not_found(format!(
                    "{} {id} no longer exists",
                    self.spec.type_name
                ))
            });
        }
        let resp = client
            .patch(&self.path(id), &Json::Object(patch))
            .await
            .map_err(err)?;
        Ok(self.remote(&resp))
    }

    async fn delete(&self, _ctx: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let mut query = Vec::new();
        if self.spec.force_delete {
            let force = prior
                .get("force_destroy")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            query.push(("force", force.to_string()));
        }
        // "Not empty" may be about objects that are on their way out (a deleted
        // pipeline's tables): ask again for a while before giving up.
        let what = format!("{} {id} cannot be deleted", self.spec.type_name);
        let refusal = std::sync::Mutex::new(None);
        let waited = super::wait_until(super::NOT_EMPTY_WAIT, &what, || {
            let (client, query, path) = (&client, &query, self.path(id));
            let refusal = &refusal;
            async move {
                match client.idempotent().delete(&path, query).await {
                    Err(e) if e.error_code.ends_with("_NOT_EMPTY") => {
                        let status = format!("not empty ({})", e.message);
                        if let Ok(mut r) = refusal.lock() {
                            *r = Some(e);
                        }
                        Ok(Some(status))
                    }
                    r => gone_ok(r).map(|()| None),
                }
            }
        })
        .await;
        match (waited, refusal.into_inner().ok().flatten()) {
            // The service's own words say what is in it.
            (Err(_), Some(e)) => Err(err(e)),
            (r, _) => r,
        }
    }

    /// `force_destroy` is brickform's, not the service's: an imported object holds what
    /// the configuration says.
    fn held_as_configured(&self, _remote: &Remote, config: &Object) -> Object {
        config
            .get("force_destroy")
            .filter(|v| !v.is_null())
            .map(|v| Object::from_iter([("force_destroy".to_string(), v.clone())]))
            .unwrap_or_default()
    }

    async fn import(&self, ctx: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        let (metastore, name) = match id.split_once('|') {
            Some((m, n)) if self.spec.metastore_qualified_import => (Some(m), n),
            _ => (None, id),
        };
        let parts: Vec<&str> = name.split('.').collect();
        if parts.len() != self.spec.name_parts.len() || parts.iter().any(|p| p.trim().is_empty()) {
            return Err(ProviderError::invalid(format!(
                "a {} is imported by its full name, {}{}; got {id:?}",
                self.spec.type_name,
                self.import_format(),
                if self.spec.metastore_qualified_import {
                    format!(" (or METASTORE_ID|{})", self.import_format())
                } else {
                    String::new()
                }
            )));
        }
        let found = self
            .read(ctx, &name.to_lowercase(), &Object::default())
            .await?;
        if let (Some(wanted), Some(remote)) = (metastore, &found)
            && let Some(actual) = str_attr(&remote.attrs, "metastore_id")
            && !actual.eq_ignore_ascii_case(wanted)
        {
            return Err(ProviderError::invalid(format!(
                "{name} is in metastore {actual}, not {wanted} as the import id says"
            )));
        }
        Ok(found)
    }

    /// A securable is found by its full name, which the configuration determines.
    fn natural_key(&self, _ctx: &OpContext, config: &Object) -> Option<String> {
        Some(self.full_name(config))
    }

    fn location(&self, attrs: &Object) -> Option<Location> {
        let known = self
            .spec
            .name_parts
            .iter()
            .all(|p| str_attr(attrs, p).is_some());
        if !known {
            return None;
        }
        match (self.spec.holds, self.spec.storage) {
            (Holds::Nothing, InStorage::At(attr)) => {
                str_attr(attrs, attr).map(|url| Place::storage(url).into())
            }
            // A securable inside a schema (a registered model) lies at its full name, where
            // the schema's listing of what it holds finds it.
            (Holds::Nothing, _) if self.spec.name_parts.len() > 1 => {
                Some(Place::unity_catalog(&self.full_name(attrs)).into())
            }
            (Holds::Nothing, _) => None,
            _ => Some(Place::unity_catalog(&self.full_name(attrs)).into()),
        }
    }

    fn lies_under(&self, attrs: &Object) -> Vec<Location> {
        match self.spec.storage {
            InStorage::Under(attr) => str_attr(attrs, attr)
                .map(|url| Place::storage(url).into())
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    fn deletes_contents(&self, attrs: &Object) -> bool {
        match self.spec.holds {
            Holds::Nothing => false,
            Holds::WhenForced => attrs
                .get("force_destroy")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            Holds::Always => true,
        }
    }

    fn show_location(&self, location: &Location) -> String {
        Place::shown(location)
    }

    async fn contents(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Vec<Location>> {
        let client = self.shared.client()?;
        match self.spec.collection {
            "catalogs" => super::locations::catalog_contents(&client, id).await,
            "schemas" => super::locations::schema_contents(&client, id).await,
            _ => match VolumePath::of_volume(id) {
                Some(volume) => super::locations::volume_files(&client, &volume).await,
                // Not a volume's full name: nothing the service could list.
                None => Ok(Vec::new()),
            },
        }
    }

    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let found = match self.read(ctx, key, &Object::default()).await {
            Ok(r) => r,
            Err(e) if e.kind == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        // Unity Catalog objects carry no ownership tag: the object a lost create made is
        // owned by whoever made it. One owned by somebody else is not ours to adopt.
        if let Some(r) = &found {
            let owner = r.attrs.get("owner").and_then(Value::as_str);
            let me = self.shared.current_user().await?;
            if let (Some(owner), Some(me)) = (owner, me.as_deref())
                && !owner.eq_ignore_ascii_case(me)
            {
                return Err(self.taken(ctx, key, Some(owner)));
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn what_the_answer_leaves_out_is_unset() {
        let k = super::super::catalog::kind(Arc::new(Shared::default()));
        let r = k.remote(&json!({"name": "c", "full_name": "c", "owner": "me"}));
        assert_eq!(r.attrs["comment"], Value::Null);
        assert_eq!(r.attrs["properties"], Value::Null);
        assert_eq!(r.attrs["owner"], Value::from("me"));
        assert_eq!(r.id, "c");
    }

    /// What a securable declares cleared when unset must be an optional field it updates
    /// whose type has an empty value; otherwise the declaration would do nothing.
    #[test]
    fn fields_cleared_when_unset_can_be_cleared() {
        use brickform_core::provider::Presence;
        let shared = Arc::new(Shared::default());
        for kind in [
            super::super::catalog::kind(shared.clone()),
            super::super::schema::kind(shared.clone()),
            super::super::volume::kind(shared.clone()),
            super::super::connection::kind(shared.clone()),
        ] {
            for f in kind.spec.clear_when_unset {
                let a = kind.schema.attribute(f).unwrap();
                assert_eq!(
                    a.presence,
                    Presence::Optional,
                    "{} {f}",
                    kind.spec.type_name
                );
                assert!(kind.spec.update_fields.contains(f), "{f}");
                assert!(!kind.spec.always_send.contains(f), "{f}");
                assert!(kind.cleared(f).is_some(), "{} {f}", kind.spec.type_name);
            }
        }
    }
}
