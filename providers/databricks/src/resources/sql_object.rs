//! The life cycle `databricks_query` and `databricks_alert` share: the current Databricks
//! SQL Queries and Alerts APIs (`/api/2.0/sql/queries`, `/api/2.0/sql/alerts`; not the
//! legacy `/api/2.0/preview/sql` ones), as the Terraform provider drives them
//! (terraform-provider-databricks sql/resource_query.go, sql/resource_alert.go):
//!
//! - a create sends `{"<noun>": {...}, "auto_resolve_display_name": false}` (a name taken
//!   in the folder fails instead of being renamed); the request has no owner, so a
//!   configured `owner_user_name` is set by an update right after (resource_query.go:109-118);
//! - an update is a PATCH naming its fields in `update_mask`: the fields every update
//!   names, and the others when they differ from what the service holds
//!   (resource_query.go:144-150, resource_alert.go:99-107, which compare with the state), so
//!   an owner or run-as mode left to the service is not cleared;
//! - a delete moves the object to the trash, where it is still read with
//!   `lifecycle_state` TRASHED: such an object is gone for brickform;
//! - the service answers `parent_path` with the `/Workspace` prefix; a configuration that
//!   leaves it out is compared in its own spelling (resource_query.go:128-131); moving an
//!   object replaces it (`parent_path` is ForceNew there).
//!
//! The display name is unique in its folder (a workspace node: resource_query_test.go,
//! "Node named 'TF new query' already exists"), which finds an object again after a lost
//! create answer: the natural key is `FOLDER/NAME`, the folder `~` when the configuration
//! leaves it to the service (the caller's home folder).

use super::wire::{self, Renames};
use super::{created_id, read_back};
use super::{err, none_if_missing, str_attr, unmounted};
use crate::Shared;
use crate::client::PageSize;
use async_trait::async_trait;
use brickform_core::provider::{
    Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

/// What tells a query from an alert: data.
pub struct SqlSpec {
    pub type_name: &'static str,
    /// `/api/2.0/sql/queries`.
    pub base: &'static str,
    /// The object in request bodies (`query`), and in messages.
    pub noun: &'static str,
    pub renames: Renames,
    /// Fields every update names in its mask.
    pub always_masked: &'static [&'static str],
    /// Fields an update names when the configuration changes them.
    pub masked_when_changed: &'static [&'static str],
    /// Those of `masked_when_changed` the service decides when left out: named only when
    /// configured.
    pub service_decides: &'static [&'static str],
    /// Booleans the service leaves out of its answers when false.
    pub false_omitted: &'static [&'static str],
    /// The Terraform provider's checks of a configuration.
    pub check: fn(&Object) -> Vec<Finding>,
    /// The Terraform provider's defaults, filled where the configuration leaves them out.
    pub defaults: fn(&Object) -> Object,
}

/// The page size of the list calls (the APIs' `page_size`).
pub const LIST_PAGE: PageSize = PageSize::new("page_size", "100");

/// Attributes the service computes, never sent.
const COMPUTED: &[&str] = &[
    "id",
    "create_time",
    "update_time",
    "lifecycle_state",
    "last_modifier_user_name",
    "state",
    "trigger_time",
];

pub struct SqlObject {
    pub spec: &'static SqlSpec,
    pub schema: Schema,
    pub shared: Arc<Shared>,
}

/// The object fields of a configuration, as the API names them, without what the service
/// computes.
pub fn body(spec: &SqlSpec, schema: &Schema, config: &Object) -> Json {
    let mut b = wire::to_wire(schema, config, spec.renames, "");
    if let Json::Object(m) = &mut b {
        for k in COMPUTED {
            m.remove(*k);
        }
    }
    b
}

/// The update mask of a change from `prior` to `config`.
pub fn update_mask(spec: &SqlSpec, prior: &Object, config: &Object) -> String {
    // A boolean the service leaves out when false is false when unset.
    let value = |o: &Object, f: &str| -> Value {
        match o.get(f) {
            None | Some(Value::Null) if spec.false_omitted.contains(&f) => Value::Bool(false),
            Some(v) => v.clone(),
            None => Value::Null,
        }
    };
    let mut mask: Vec<&str> = spec.always_masked.to_vec();
    for f in spec.masked_when_changed {
        let now = value(config, f);
        if spec.service_decides.contains(f) && now.is_null() {
            continue;
        }
        if value(prior, f) != now {
            mask.push(f);
        }
    }
    mask.join(",")
}

/// The attributes of an answer. `parent_path` keeps the spelling `prior` gave it when it
/// names the same folder; booleans the service leaves out when false read false.
pub fn remote(spec: &SqlSpec, schema: &Schema, answer: &Json, prior: &Object) -> Remote {
    let mut attrs = wire::from_wire(schema, answer, spec.renames, "");
    wire::absent_is_unset(schema, &mut attrs);
    if let (Some(was), Some(now)) = (
        str_attr(prior, "parent_path"),
        str_attr(&attrs, "parent_path"),
    ) && unmounted(was) == unmounted(now)
    {
        attrs.insert("parent_path".into(), Value::from(was));
    }
    for f in spec.false_omitted {
        if attrs.get(*f).is_none_or(Value::is_null) {
            attrs.insert((*f).to_string(), Value::Bool(false));
        }
    }
    let id = answer
        .get("id")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    attrs.insert("id".into(), Value::from(id.as_str()));
    Remote { id, attrs }
}

/// Whether an answer is of an object in the trash: gone.
pub fn trashed(answer: &Json) -> bool {
    answer.get("lifecycle_state").and_then(Json::as_str) == Some("TRASHED")
}

impl SqlObject {
    pub async fn get(&self, id: &str, prior: &Object) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let got = none_if_missing(client.get(&format!("{}/{id}", self.spec.base), &[]).await)?;
        Ok(got
            .filter(|a| !trashed(a))
            .map(|a| remote(self.spec, &self.schema, &a, prior)))
    }

    async fn patch(&self, id: &str, mask: &str, fields: Json) -> ProviderResult<()> {
        let client = self.shared.client()?;
        client
            .idempotent()
            .patch(
                &format!("{}/{id}", self.spec.base),
                &json!({
                    "update_mask": mask,
                    self.spec.noun: fields,
                    "auto_resolve_display_name": false,
                }),
            )
            .await
            .map_err(err)?;
        Ok(())
    }

    pub async fn create(&self, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let mut fields = body(self.spec, &self.schema, config);
        let owner = fields
            .as_object_mut()
            .and_then(|m| m.remove("owner_user_name"));
        let answer = client
            .post(
                self.spec.base,
                &json!({ self.spec.noun: fields, "auto_resolve_display_name": false }),
            )
            .await
            .map_err(err)?;
        let id = created_id(&answer, "id", self.spec.noun)?;
        if let Some(owner) = owner {
            let made = remote(self.spec, &self.schema, &answer, config);
            self.patch(&id, "owner_user_name", json!({ "owner_user_name": owner }))
                .await
                .map_err(|e| e.made(made))?;
        }
        read_back(self.get(&id, config).await?, self.spec.noun, &id)
    }

    /// The fields that change are those the object as the plan read it (`ctx.planned`)
    /// holds otherwise, so a change made outside brickform is written back too; the last
    /// applied values when the plan's reading is not given.
    pub async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let held = ctx.planned.as_deref().unwrap_or(prior);
        let mask = update_mask(self.spec, held, config);
        self.patch(id, &mask, body(self.spec, &self.schema, config))
            .await?;
        self.get(id, config).await?.ok_or_else(|| {
            ProviderError::not_found(format!("{} {id} no longer exists", self.spec.noun))
        })
    }

    pub async fn delete(&self, id: &str) -> ProviderResult<()> {
        let client = self.shared.client()?;
        super::gone_ok(
            client
                .idempotent()
                .delete(&format!("{}/{id}", self.spec.base), &[])
                .await,
        )
    }

    /// An object found after a create whose answer was lost may not have the configured
    /// owner yet (set by the update after the create): its owner is left unreported, so the
    /// next plan compares what it reads with the configuration and sets it.
    pub fn complete_create(mut remote: Remote) -> Remote {
        remote.attrs.shift_remove("owner_user_name");
        remote
    }

    /// `FOLDER/NAME`; `~/NAME` when the service chooses the folder.
    pub fn natural_key(&self, config: &Object) -> Option<String> {
        let name = str_attr(config, "display_name")?;
        let folder = str_attr(config, "parent_path").map_or("~".to_string(), unmounted);
        Some(format!("{folder}/{name}"))
    }

    /// The object a natural key names: listed by display name (the list answers no folder),
    /// each read to compare its folder.
    pub async fn find_by_key(&self, key: &str) -> ProviderResult<Option<Remote>> {
        let Some((folder, name)) = key.rsplit_once('/') else {
            return Ok(None);
        };
        let folder = match folder.strip_prefix('~') {
            Some(rest) => {
                let Some(me) = self.shared.current_user().await? else {
                    return Ok(None);
                };
                format!("/Users/{me}{rest}")
            }
            None => unmounted(folder),
        };
        let client = self.shared.client()?;
        let listed = client
            .list_all(self.spec.base, &[], "results", Some(LIST_PAGE))
            .await
            .map_err(err)?;
        for o in listed
            .iter()
            .filter(|o| o.get("display_name").and_then(Json::as_str) == Some(name))
        {
            let Some(id) = o.get("id").and_then(Json::as_str) else {
                continue;
            };
            if let Some(r) = self.get(id, &Object::default()).await?
                && str_attr(&r.attrs, "parent_path").map(unmounted).as_deref()
                    == Some(folder.as_str())
            {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    pub async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        self.get(id, prior).await
    }
}

/// A query and an alert are the same kind of object to the engine: their specs say how they
/// differ.
#[async_trait]
impl ResourceKind for SqlObject {
    fn type_name(&self) -> &'static str {
        self.spec.type_name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn prepare_config(
        &self,
        config: &mut Object,
        _: &std::path::Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        for (k, v) in (self.spec.defaults)(config) {
            config.insert(k, v);
        }
        Ok(())
    }
    fn plan_computed(&self, config: &Object) -> Object {
        (self.spec.defaults)(config)
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        (self.spec.check)(config)
    }
    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        SqlObject::create(self, config).await
    }
    async fn read(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        SqlObject::read(self, ctx, id, prior).await
    }
    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        SqlObject::update(self, ctx, id, prior, config).await
    }
    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        SqlObject::delete(self, id).await
    }
    async fn complete_create(&self, _: &OpContext, remote: Remote) -> ProviderResult<Remote> {
        Ok(SqlObject::complete_create(remote))
    }
    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        SqlObject::natural_key(self, config)
    }
    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        SqlObject::find_by_key(self, key).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: SqlSpec = SqlSpec {
        type_name: "test_thing",
        base: "/x",
        noun: "thing",
        renames: &[],
        always_masked: &["display_name"],
        masked_when_changed: &["description", "owner_user_name", "flag"],
        service_decides: &["owner_user_name"],
        false_omitted: &["flag"],
        check: |_| Vec::new(),
        defaults: |_| Object::default(),
    };

    fn obj(v: Json) -> Object {
        match Value::from_json(&v) {
            Value::Object(o) => Arc::unwrap_or_clone(o),
            _ => Object::default(),
        }
    }

    #[test]
    fn the_mask_names_what_changed_and_not_what_the_service_decides() {
        let prior =
            obj(json!({"display_name": "a", "description": "d", "owner_user_name": "me@x"}));
        assert_eq!(
            update_mask(
                &SPEC,
                &prior,
                &obj(json!({"display_name": "b", "description": "d"}))
            ),
            "display_name"
        );
        assert_eq!(
            update_mask(&SPEC, &prior, &obj(json!({"display_name": "a"}))),
            "display_name,description"
        );
        // Unset and false are one for a boolean the service leaves out when false.
        let flagged = obj(json!({"display_name": "a", "description": "d", "flag": false}));
        assert_eq!(
            update_mask(
                &SPEC,
                &flagged,
                &obj(json!({"display_name": "a", "description": "d"}))
            ),
            "display_name"
        );
        assert_eq!(
            update_mask(
                &SPEC,
                &prior,
                &obj(json!({"display_name": "a", "description": "d", "owner_user_name": "you@x"}))
            ),
            "display_name,owner_user_name"
        );
    }

    #[test]
    fn folders_compare_without_the_workspace_prefix() {
        assert_eq!(unmounted("/Workspace/Shared/q/"), "/Shared/q");
        assert_eq!(unmounted("/Shared/q"), "/Shared/q");
        assert_eq!(unmounted("/Workspace"), "/");
        let schema = Schema::new()
            .attr(brickform_core::provider::Attribute::optional(
                "parent_path",
                brickform_core::provider::AttrType::String,
            ))
            .attr(brickform_core::provider::Attribute::optional(
                "flag",
                brickform_core::provider::AttrType::Bool,
            ))
            .attr(brickform_core::provider::Attribute::computed(
                "id",
                brickform_core::provider::AttrType::String,
            ));
        let r = remote(
            &SPEC,
            &schema,
            &json!({"id": "i", "parent_path": "/Workspace/Shared"}),
            &obj(json!({"parent_path": "/Shared/"})),
        );
        assert_eq!(r.attrs["parent_path"], Value::from("/Shared/"));
        assert_eq!(r.attrs["flag"], Value::Bool(false));
        assert_eq!(r.id, "i");
        assert!(trashed(&json!({"lifecycle_state": "TRASHED"})));
    }
}
