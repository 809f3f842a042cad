//! `data "databricks_group"`: a group by display name, with its members, as the Terraform
//! provider reads it (terraform-provider-databricks scim/data_group.go): members split by
//! kind from their `$ref`, child groups' members too when `recursive` (the default).

use crate::Shared;
use crate::resources::scim::{ENTITLEMENTS, filter, get, read_entitlements};
use crate::resources::str_attr;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::sync::Arc;

pub struct Group {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Group {
    pub fn new(shared: Arc<Shared>) -> Self {
        let set = || AttrType::Set(Box::new(AttrType::String));
        let mut schema = Schema::new()
            .describe("A group by display name (the built-in `users` and `admins` too), with its members by SCIM id.")
            .attr(Attribute::required("display_name", AttrType::String))
            .attr(
                Attribute::optional("recursive", AttrType::Bool)
                    .describe("Also list the members of member groups (default true)."),
            )
            .attr(Attribute::computed("id", AttrType::String))
            .attr(Attribute::computed("members", set()).describe("Every member's SCIM id."))
            .attr(Attribute::computed("users", set()))
            .attr(Attribute::computed("service_principals", set()))
            .attr(Attribute::computed("child_groups", set()))
            .attr(Attribute::computed("groups", set()).describe("The groups this group is in."))
            .attr(Attribute::computed("external_id", AttrType::String))
            .attr(Attribute::computed("acl_principal_id", AttrType::String));
        for (flag, _) in ENTITLEMENTS {
            schema = schema.attr(Attribute::computed(flag, AttrType::Bool));
        }
        Group { schema, shared }
    }
}

fn ids(v: impl IntoIterator<Item = String>) -> Value {
    let set: BTreeSet<String> = v.into_iter().collect();
    Value::List(set.into_iter().map(Value::from).collect())
}

fn refs(g: &Json, key: &str) -> Vec<(String, String)> {
    g.get(key)
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let value = m.get("value").and_then(Json::as_str)?.to_string();
            let r = m
                .get("$ref")
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string();
            Some((value, r))
        })
        .collect()
}

#[async_trait]
impl DataSource for Group {
    fn type_name(&self) -> &'static str {
        "databricks_group"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let name = str_attr(config, "display_name").unwrap_or("");
        let recursive = config
            .get("recursive")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let Some(group) = filter(&self.shared, "Groups", "displayName", name)
            .await?
            .into_iter()
            .next()
        else {
            return Err(ProviderError::not_found(format!(
                "cannot find group: {name}"
            )));
        };
        let id = group
            .get("id")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let (mut members, mut users, mut sps, mut children) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut queue = vec![group.clone()];
        let mut seen = BTreeSet::from([id.clone()]);
        while let Some(g) = queue.pop() {
            for (m, r) in refs(&g, "members") {
                members.push(m.clone());
                if r.starts_with("Users/") {
                    users.push(m);
                } else if r.starts_with("ServicePrincipals/") {
                    sps.push(m);
                } else if r.starts_with("Groups/") {
                    children.push(m.clone());
                    if recursive
                        && seen.insert(m.clone())
                        && let Some(child) = get(&self.shared, "Groups", &m).await?
                    {
                        queue.push(child);
                    }
                }
            }
        }
        let mut out = config.clone();
        out.insert("id".into(), Value::from(id));
        out.insert("members".into(), ids(members));
        out.insert("users".into(), ids(users));
        out.insert("service_principals".into(), ids(sps));
        out.insert("child_groups".into(), ids(children));
        out.insert(
            "groups".into(),
            ids(refs(&group, "groups").into_iter().map(|(v, _)| v)),
        );
        out.insert(
            "external_id".into(),
            group
                .get("externalId")
                .and_then(Json::as_str)
                .map_or(Value::Null, Value::from),
        );
        out.insert(
            "acl_principal_id".into(),
            Value::from(format!("groups/{name}")),
        );
        read_entitlements(&group, &mut out);
        Ok(out)
    }
}
