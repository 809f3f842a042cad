//! The life cycle of the workspace's identities (`databricks_group`, `databricks_user`,
//! `databricks_service_principal`) through the SCIM API, as the Terraform provider runs it
//! (terraform-provider-databricks scim/resource_group.go, resource_user.go,
//! resource_service_principal.go, groups.go, users.go, scim.go): a create POSTs the
//! principal; an update reads it and PUTs it whole, with the memberships it read, so a
//! rename or a changed flag keeps its groups and members; `force` adopts a principal of the
//! same name when the create answers that the name is taken; a user or service principal
//! with `disable_as_user_deletion` is deactivated rather than deleted.
//!
//! Each kind's file holds its schema and rules; what differs between the three here is the
//! data of a [`Flavor`].
//!
//! Under an account-level configuration the same calls go to the account's SCIM API
//! ([`crate::Shared::scim`]), with what the account has otherwise, as the provider's
//! `IsAccountLevel` branches have it: no workspace entitlements (docs/resources/user.md:
//! "applicable only for workspace-level users"; `databricks_entitlements` in a workspace
//! grants them), a user or service principal deactivated rather than deleted unless
//! `disable_as_user_deletion = false` (resource_user.go:152-162), and no home folder or
//! repos to delete (resource_user.go:181).

use super::{bool_attr, err, gone_ok, none_if_missing, str_attr};
use super::{created_id, read_back};
use crate::Shared;
use crate::client::{ApiError, Client};
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, ErrorKind, Existing, Finding, OpContext, ProviderError, ProviderResult,
    Remote, ResourceKind, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

/// The path of a SCIM collection (`Users`, `Groups/42`) where `shared`'s configuration has
/// its SCIM API: the workspace's, or the account's.
pub fn path(shared: &Shared, collection: &str) -> String {
    format!("{}/{collection}", shared.scim())
}

/// A SCIM PATCH request body with one operation (RFC 7644, section 3.5.2); `value` is left out when
/// it is null, as a `remove` by path has none.
pub fn patch_op(op: &str, path: &str, value: Json) -> Json {
    let mut operation = json!({ "op": op, "path": path });
    if !value.is_null() {
        operation["value"] = value;
    }
    json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [operation],
    })
}

/// The entitlement flags and the SCIM values they stand for, in the provider's order
/// (scim/scim.go:41-56).
pub const ENTITLEMENTS: [(&str, &str); 5] = [
    ("allow_cluster_create", "allow-cluster-create"),
    ("allow_instance_pool_create", "allow-instance-pool-create"),
    ("databricks_sql_access", "databricks-sql-access"),
    ("workspace_access", "workspace-access"),
    ("workspace_consume", "workspace-consume"),
];

/// The five entitlement flags, `false` unless set (scim/scim.go:96-106).
pub fn with_entitlements(mut schema: Schema) -> Schema {
    for (flag, value) in ENTITLEMENTS {
        schema = schema.attr(
            Attribute::optional(flag, AttrType::Bool)
                .server_default(false)
                .describe(match value {
                    "allow-cluster-create" => "Entitlement: may create clusters.",
                    "allow-instance-pool-create" => "Entitlement: may create instance pools.",
                    "databricks-sql-access" => "Entitlement: may use Databricks SQL.",
                    "workspace-access" => "Entitlement: may use the workspace.",
                    _ => "Entitlement: may use the workspace as a consumer only (not with workspace_access or databricks_sql_access).",
                }),
        );
    }
    schema
}

/// `workspace_consume` conflicts with `workspace_access` and `databricks_sql_access`
/// (scim/scim.go:105).
pub fn check_entitlements(config: &Object) -> Vec<Finding> {
    if !bool_attr(config, "workspace_consume") {
        return Vec::new();
    }
    ["workspace_access", "databricks_sql_access"]
        .into_iter()
        .filter(|f| bool_attr(config, f))
        .map(|f| {
            Finding::error(&[f], format!("workspace_consume and {f} both set"))
                .hint("workspace_consume is the consumer-only access: set it or the others")
        })
        .collect()
}

/// The `entitlements` of a request: the flags set, or `[{"value": ""}]` for none, as the
/// provider sends it so a PUT clears them (scim/scim.go:77-94).
pub fn entitlements_body(config: &Object) -> Json {
    let set: Vec<Json> = ENTITLEMENTS
        .iter()
        .filter(|(flag, _)| bool_attr(config, flag))
        .map(|(_, v)| json!({ "value": v }))
        .collect();
    if set.is_empty() {
        json!([{ "value": "" }])
    } else {
        Json::Array(set)
    }
}

/// The flags a SCIM answer holds, every one set.
pub fn read_entitlements(answer: &Json, attrs: &mut Object) {
    let held: Vec<&str> = answer
        .get("entitlements")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("value").and_then(Json::as_str))
        .collect();
    for (flag, v) in ENTITLEMENTS {
        attrs.insert(flag.into(), Value::Bool(held.contains(&v)));
    }
}

/// A SCIM create's answer that the name is taken: `Group with name X already exists.`,
/// `User with username X already exists.`, `Service principal with application ID X
/// already exists.` (the messages `force` matches: resource_group.go:113,
/// resource_user.go:14-20, resource_service_principal.go:275-278), with status 409.
pub fn is_taken(e: &ApiError) -> bool {
    e.kind == ErrorKind::AlreadyExists
        || (e.status == 409 && e.message.to_ascii_lowercase().contains("already exists"))
}

/// The principals of a SCIM collection an `attr eq "value"` filter keeps.
pub async fn filter(
    shared: &Shared,
    collection: &str,
    attr: &str,
    value: &str,
) -> ProviderResult<Vec<Json>> {
    let answer = shared
        .any_client()?
        .get(
            &path(shared, collection),
            &[(
                "filter",
                format!("{attr} eq \"{}\"", value.replace('"', "")),
            )],
        )
        .await
        .map_err(err)?;
    Ok(answer
        .get("Resources")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default())
}

/// One principal by SCIM id; `None` when it is gone.
pub async fn get(shared: &Shared, collection: &str, id: &str) -> ProviderResult<Option<Json>> {
    let client = shared.any_client()?;
    none_if_missing(
        client
            .get(&path(shared, &format!("{collection}/{id}")), &[])
            .await,
    )
}

/// Entitlements are a workspace's: an account-level configuration that sets one is refused,
/// when the plan prepares it and again before anything is sent (docs/resources/group.md,
/// user.md, service_principal.md: "applicable only for workspace-level" principals).
fn account_entitlements(config: &Object, account: &str, what: &str) -> Option<String> {
    let set: Vec<&str> = ENTITLEMENTS
        .iter()
        .filter(|(flag, _)| bool_attr(config, flag))
        .map(|(flag, _)| *flag)
        .collect();
    (!set.is_empty()).then(|| {
        format!(
            "{} set on an account {what} (account {account}): entitlements are granted in a workspace; leave them out here, and grant them with databricks_entitlements under a workspace-level provider",
            set.join(", ")
        )
    })
}

/// [`account_entitlements`] as an error of a call.
fn refuse_account_entitlements(shared: &Shared, config: &Object, what: &str) -> ProviderResult<()> {
    match shared
        .account()
        .and_then(|account| account_entitlements(config, &account, what))
    {
        Some(why) => Err(ProviderError::invalid(why)),
        None => Ok(()),
    }
}

/// What tells one identity kind from another.
pub struct Flavor {
    pub type_name: &'static str,
    /// How messages name one: `group`, `user`, `service principal`.
    pub what: &'static str,
    /// The SCIM collection: `Groups`, `Users`, `ServicePrincipals`.
    pub collection: &'static str,
    /// The schema URN its requests carry (scim/scim.go:11-17).
    pub urn: &'static str,
    /// The attribute that names it and its SCIM field: `display_name`/`displayName`,
    /// `user_name`/`userName`, `application_id`/`applicationId`.
    pub name: (&'static str, &'static str),
    /// `acl_principal_id`'s prefix: `groups`, `users`, `servicePrincipals`.
    pub acl: &'static str,
    /// A user or a service principal: `active`, `home`, `repos`, and deactivation.
    pub person: bool,
}

/// Attributes only the configuration holds: the service never reports them.
const LOCAL: [&str; 4] = [
    "force",
    "disable_as_user_deletion",
    "force_delete_repos",
    "force_delete_home_dir",
];

/// A local-only flag (see [`LOCAL`]).
pub fn local_flag(name: &'static str, describe: &'static str) -> Attribute {
    Attribute::optional(name, AttrType::Bool)
        .unanswered()
        .describe(describe)
}

pub struct Identity {
    pub flavor: Flavor,
    pub schema: Schema,
    pub shared: Arc<Shared>,
    pub check: fn(&Object) -> Vec<Finding>,
}

impl Identity {
    /// The computed attributes that follow from the name.
    fn derived(&self, name: &str) -> Object {
        let mut o = Object::default();
        o.insert(
            "acl_principal_id".into(),
            Value::from(format!("{}/{name}", self.flavor.acl)),
        );
        if self.flavor.person {
            o.insert("home".into(), Value::from(format!("/Users/{name}")));
            o.insert("repos".into(), Value::from(format!("/Repos/{name}")));
        }
        o
    }

    fn remote(&self, id: &str, answer: &Json, prior: &Object) -> Remote {
        let s = |k: &str| answer.get(k).and_then(Json::as_str);
        let mut attrs = Object::default();
        attrs.insert("id".into(), Value::from(id));
        let name = s(self.flavor.name.1).unwrap_or("").to_string();
        attrs.insert(self.flavor.name.0.into(), Value::from(name.as_str()));
        attrs.insert(
            "display_name".into(),
            s("displayName").map_or(Value::Null, Value::from),
        );
        attrs.insert(
            "external_id".into(),
            s("externalId").map_or(Value::Null, Value::from),
        );
        if self.flavor.person {
            attrs.insert(
                "active".into(),
                Value::Bool(answer.get("active").and_then(Json::as_bool).unwrap_or(true)),
            );
        }
        read_entitlements(answer, &mut attrs);
        attrs.extend(self.derived(&name));
        for k in LOCAL {
            if self.schema.attribute(k).is_some() {
                attrs.insert(k.into(), prior.get(k).cloned().unwrap_or(Value::Null));
            }
        }
        Remote {
            id: id.to_string(),
            attrs,
        }
    }

    /// The request body of a create or an update: what the provider sends
    /// (resource_group.go:51-55, resource_user.go:84-94, resource_service_principal.go:150-160).
    fn body(&self, config: &Object, prior: &Object) -> Json {
        let mut b = json!({ "schemas": [self.flavor.urn] });
        if self.shared.account().is_none() {
            b["entitlements"] = entitlements_body(config);
        }
        let either = |k: &str| str_attr(config, k).or_else(|| str_attr(prior, k));
        let (name, field) = self.flavor.name;
        if let Some(n) = either(name) {
            b[field] = json!(n);
        }
        if let Some(d) = either("display_name") {
            b["displayName"] = json!(d);
        }
        if let Some(x) = str_attr(config, "external_id").filter(|x| !x.is_empty()) {
            b["externalId"] = json!(x);
        }
        if self.flavor.person {
            b["active"] = json!(
                config
                    .get("active")
                    .and_then(Value::as_bool)
                    .unwrap_or(true)
            );
        }
        b
    }

    /// PUTs the whole principal, with the memberships SCIM holds for it: the PUT replaces
    /// them (groups.go:75-91 sends a group's members back, users.go:73-86 a user's groups).
    async fn put(
        &self,
        client: &Client,
        id: &str,
        config: &Object,
        prior: &Object,
    ) -> ProviderResult<()> {
        refuse_account_entitlements(&self.shared, config, self.flavor.what)?;
        let path = path(&self.shared, &format!("{}/{id}", self.flavor.collection));
        let held = client.get(&path, &[]).await.map_err(err)?;
        let mut body = self.body(config, prior);
        for k in ["members", "groups", "roles"] {
            if let Some(v) = held.get(k) {
                body[k] = v.clone();
            }
        }
        client.put(&path, &body).await.map_err(err)?;
        Ok(())
    }

    async fn read_id(&self, id: &str, prior: &Object) -> ProviderResult<Option<Remote>> {
        Ok(get(&self.shared, self.flavor.collection, id)
            .await?
            .map(|a| self.remote(id, &a, prior)))
    }

    /// The principal of the configured name, for `force` and for finding it again.
    async fn by_name(&self, name: &str) -> ProviderResult<Option<(String, Json)>> {
        let found = filter(
            &self.shared,
            self.flavor.collection,
            self.flavor.name.1,
            name,
        )
        .await?;
        Ok(found.into_iter().find_map(|p| {
            let id = p.get("id").and_then(Json::as_str)?.to_string();
            Some((id, p))
        }))
    }
}

#[async_trait]
impl ResourceKind for Identity {
    fn type_name(&self) -> &'static str {
        self.flavor.type_name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = (self.check)(config);
        out.extend(check_entitlements(config));
        out
    }
    /// Under an account-level configuration (known once the provider is configured, so at
    /// plan and apply, not at `validate`), entitlements are refused at the block.
    fn prepare_config(
        &self,
        config: &mut Object,
        _: &std::path::Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        match self
            .shared
            .account()
            .and_then(|account| account_entitlements(config, &account, self.flavor.what))
        {
            Some(why) => Err(why.into()),
            None => Ok(()),
        }
    }
    fn plan_computed(&self, config: &Object) -> Object {
        str_attr(config, self.flavor.name.0)
            .map(|n| self.derived(n))
            .unwrap_or_default()
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.any_client()?;
        refuse_account_entitlements(&self.shared, config, self.flavor.what)?;
        let body = self.body(config, &Object::default());
        let path = path(&self.shared, self.flavor.collection);
        let id = match client.post(&path, &body).await {
            Ok(made) => created_id(&made, "id", self.flavor.what)?,
            // `force`: the principal of that name is taken over and written as configured
            // (createForceOverrides… in resource_group.go:106-123, resource_user.go:200-222,
            // resource_service_principal.go:269-292).
            Err(e) if is_taken(&e) && (bool_attr(config, "force") || e.after_retry) => {
                let name = str_attr(config, self.flavor.name.0).unwrap_or("");
                let Some((id, _)) = self.by_name(name).await? else {
                    return Err(ProviderError::not_found(format!(
                        "cannot find {} {name} for force import",
                        self.flavor.what
                    )));
                };
                self.put(&client, &id, config, &Object::default()).await?;
                id
            }
            Err(e) if is_taken(&e) => {
                return Err(
                    ProviderError::new(ErrorKind::AlreadyExists, e.message.clone())
                        .with_detail("set force = true to manage the existing one, or import it"),
                );
            }
            Err(e) => return Err(err(e)),
        };
        read_back(self.read_id(&id, config).await?, self.flavor.what, &id)
    }

    async fn read(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        self.read_id(id, prior).await
    }

    async fn update(
        &self,
        _: &OpContext,
        id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.any_client()?;
        self.put(&client, id, config, prior).await?;
        self.read_id(id, config).await?.ok_or_else(|| {
            ProviderError::not_found(format!("{} {id} no longer exists", self.flavor.what))
        })
    }

    /// Deleted, or deactivated (`disable_as_user_deletion`: PATCH `active` false,
    /// resource_user.go:171-176; unset, it is true in an account and false in a workspace,
    /// resource_user.go:155-162); then, on delete in a workspace, the user's repos and home
    /// folder when `force_delete_repos` / `force_delete_home_dir` ask
    /// (resource_user.go:181-194): an account has none.
    async fn delete(&self, _: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.any_client()?;
        let account = self.shared.account().is_some();
        let path = path(&self.shared, &format!("{}/{id}", self.flavor.collection));
        let disable = prior
            .get("disable_as_user_deletion")
            .and_then(Value::as_bool)
            .unwrap_or(account);
        if self.flavor.person && disable {
            let patch = patch_op("replace", "active", json!([{"value": "false"}]));
            return gone_ok(client.patch(&path, &patch).await);
        }
        gone_ok(client.idempotent().delete(&path, &[]).await)?;
        let name = str_attr(prior, self.flavor.name.0).unwrap_or("");
        for (flag, root) in [
            ("force_delete_repos", "/Repos"),
            ("force_delete_home_dir", "/Users"),
        ] {
            if self.flavor.person && !account && bool_attr(prior, flag) && !name.is_empty() {
                gone_ok(
                    client
                        .idempotent()
                        .post(
                            "/api/2.0/workspace/delete",
                            &json!({ "path": format!("{root}/{name}"), "recursive": true }),
                        )
                        .await,
                )
                .map_err(|e| ProviderError::new(e.kind, format!("{flag}: {}", e.message)))?;
            }
        }
        Ok(())
    }

    fn natural_key(&self, _: &OpContext, config: &Object) -> Option<String> {
        str_attr(config, self.flavor.name.0).map(str::to_string)
    }

    async fn find_by_key(&self, _: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        Ok(self
            .by_name(key)
            .await?
            .map(|(id, p)| self.remote(&id, &p, &Object::default())))
    }

    /// The principal holding the configured name, unless `force` says to take it over
    /// (the create does, as the provider's does).
    async fn find_existing(
        &self,
        ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<Existing>> {
        if bool_attr(config, "force") {
            return Ok(Vec::new());
        }
        let Some(key) = self.natural_key(ctx, config) else {
            return Ok(Vec::new());
        };
        Ok(self
            .find_by_key(ctx, &key)
            .await?
            .map(|remote| Existing {
                what: format!("{} {key} (id {})", self.flavor.what, remote.id),
                tag: None,
                owner: None,
                exclusive: true,
                remote,
            })
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_names_its_schema_and_leaves_out_a_missing_value() {
        let remove = patch_op("remove", "members[value eq \"7\"]", Json::Null);
        assert_eq!(
            remove,
            json!({
                "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                "Operations": [{"op": "remove", "path": "members[value eq \"7\"]"}],
            })
        );
        let add = patch_op("add", "members", json!([{"value": "7"}]));
        assert_eq!(add["Operations"][0]["value"], json!([{"value": "7"}]));
    }
}
